"""Four eyes (issue 41, point 3) in the Config view: a change proposed through the API (the app
requires approval for test_crash) is listed as pending with its diff; a second person approves
it by clicking (asked first) and it is applied; the proposer's own Approve is refused with the
server's message, and Refuse leaves the change unapplied."""
import os
import urllib.error

from playwright.sync_api import expect

from conftest import OTHER_APP, api

OPERATOR = os.environ["WATCHDOG_OPERATOR_TOKEN"]
BASE = f"/v1/admin/apps/{OTHER_APP}"


def propose(body):
    answer, _ = api("PATCH", f"{BASE}/config", body)
    assert answer["applied"] is False, answer
    return answer["proposal"]["id"]


def test_a_second_person_approves_by_clicking_and_the_proposer_cannot(signed, admin):
    api("PUT", f"{BASE}/approvals", {"require": ["test_crash"]})
    try:
        first = propose({"test_crash": True})
        assert api("GET", f"{BASE}/config")[0]["defaults"].get("test_crash") is not True, "a proposal is not applied"

        # The proposer (the demo's admin) sees it, with its diff, and cannot approve it.
        page = admin.open("config", app=OTHER_APP)
        item = page.locator(f'[data-role="proposal"][data-id="{first}"]')
        expect(item).to_contain_text("config.update")
        expect(item.locator('[data-role="diff"] .diff-add')).to_contain_text("+ defaults.test_crash: true")
        item.get_by_role("button", name=f"Approve {first}").click()
        dialog = page.locator('dialog[data-role="proposal-approve"]')
        expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
        dialog.get_by_role("button", name="Approve and apply").click()
        message = page.locator('[data-role="proposals-message"]')
        expect(message).to_contain_text("another person must approve it")
        assert api("GET", f"{BASE}/config")[0]["defaults"].get("test_crash") is not True
        assert api("GET", f"{BASE}/proposals?status=pending")[0]["proposals"][0]["id"] == first

        # A second person: Cancel first (nothing happens), then approve.
        oscar = signed(OPERATOR)
        page = oscar.open("config", app=OTHER_APP)
        item = page.locator(f'[data-role="proposal"][data-id="{first}"]')
        approve = item.get_by_role("button", name=f"Approve {first}")
        approve.click()
        page.keyboard.press("Escape")
        expect(page.locator("dialog[open]")).to_have_count(0)
        expect(approve).to_be_focused()
        assert api("GET", f"{BASE}/config")[0]["defaults"].get("test_crash") is not True
        approve.click()
        page.locator('dialog[data-role="proposal-approve"]').get_by_role("button", name="Approve and apply").click()
        expect(page.locator('[data-role="proposals-message"]')).to_have_text("Approved and applied.")
        expect(page.locator('[data-role="no-proposals"]')).to_be_visible()
        assert api("GET", f"{BASE}/config")[0]["defaults"]["test_crash"] is True
        proposal = api("GET", f"{BASE}/proposals?status=approved")[0]["proposals"][0]
        assert proposal["id"] == first and proposal["decided_by"] == "oscar", proposal

        # Refused: never applied (every config change needs approval now).
        api("PUT", f"{BASE}/approvals", {"require": ["config"]})
        second = propose({"watchdog_interval_s": 7})
        page.reload()
        page.locator(f'[data-role="proposal"][data-id="{second}"]').get_by_role("button", name=f"Refuse {second}").click()
        page.locator('dialog[data-role="proposal-refuse"]').get_by_role("button", name="Refuse").click()
        expect(page.locator('[data-role="proposals-message"]')).to_have_text("Refused.")
        assert "watchdog_interval_s" not in api("GET", f"{BASE}/config")[0]["defaults"]
        assert not admin.uncaught and not oscar.uncaught
    finally:
        api("PUT", f"{BASE}/approvals", {"require": []})
        api("PATCH", f"{BASE}/config", {"test_crash": None})
