"""Issue 23, point 1: the releases view says how many releases are held apart, and admins
admit and delete them (and listed ones) by clicks, each confirmed in a dialog that starts on
Cancel; deleting asks for the release's text typed."""
import datetime
import os
import re
import time
import uuid

from playwright.sync_api import expect

from conftest import APP, VIEWER, api


def unlisted_release(version, build="1", sessions=2):
    """Session starts of a release no one declared, from one install: auto leaves it unlisted."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    starts = [{"id": str(uuid.uuid4()), "install_id": f"I-{version}", "started_at": now, "app": APP,
               "release": {"version": version, "build": build, "channel": "beta"},
               "device": {"model": "iPhone15,2", "os": "iOS", "os_version": "18.1", "idiom": "phone"}} for _ in range(sessions)]
    api("POST", "/v1/sessions", {"sessions": starts}, token=os.environ["WATCHDOG_INGEST_KEY"])
    return f"{version} ({build})"


def admin_listing():
    return api("GET", f"/v1/admin/apps/{APP}/releases?limit=500")[0]


def listed():
    return [r["release"] for r in api("GET", f"/v1/apps/{APP}/releases?limit=1000")[0]["releases"]]


def unlisted():
    return [r["release"] for r in admin_listing()["unlisted"]["releases"]]


def test_admins_admit_then_delete_a_release_and_delete_an_unlisted_one_by_typing_its_name(admin):
    # Oldest versions of all (semver), so no other view's defaults move while they exist.
    admitted = unlisted_release("0.0.1-admit", sessions=3)
    doomed = unlisted_release("0.0.2-delete")
    page = admin.open("releases")
    # /releases' totals may be up to 5 s old; the admins' card reads them afresh.
    expect(page.locator('[data-role="unlisted-summary"]')).to_contain_text(re.compile(r"[\d,]+ unlisted releases? held apart — sessions"))
    count = admin_listing()["unlisted"]["count"]
    expect(page.locator('[data-role="unlisted-page"]')).to_contain_text(f"of {count:,}")
    card = page.locator('[data-role="unlisted"]')
    expect(card).to_contain_text(admitted)
    assert admitted not in listed()

    # Admit: the dialog starts on Cancel; Escape admits nothing; then Admit.
    card.get_by_role("button", name=f"Admit {admitted}").click()
    dialog = page.locator("dialog[open]")
    expect(dialog.get_by_role("heading")).to_contain_text(f"Admit {admitted}")
    # What it holds, before it is listed (issue 44).
    expect(dialog.locator('[data-role="holds"]')).to_contain_text("It holds 3 counted session starts and 0 reports.")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("dialog[open]")).to_have_count(0)
    assert admitted in unlisted()
    card.get_by_role("button", name=f"Admit {admitted}").click()
    page.locator("dialog[open]").get_by_role("button", name="Admit").click()
    expect(page.locator("#main table").first).to_contain_text(admitted)
    assert admitted in listed() and admitted not in unlisted()
    assert next(r for r in admin_listing()["listed"] if r["release"] == admitted)["reason"] == "admitted by an admin"

    # Delete an unlisted release: nothing until its text is typed exactly.
    card.get_by_role("button", name=f"Delete {doomed}").click()
    dialog = page.locator("dialog[open]")
    expect(dialog.locator('[data-role="what"]')).to_contain_text("2 session starts and 0 reports")
    delete = dialog.get_by_role("button", name="Delete")
    typed = dialog.get_by_role("textbox", name=re.compile("Type the release"))
    expect(delete).to_be_disabled()
    typed.fill("0.0.2-delete")
    expect(delete).to_be_disabled()
    typed.fill(doomed)
    delete.click()
    expect(card).not_to_contain_text(doomed)
    assert doomed not in unlisted() and doomed not in listed()

    # Delete the admitted one from the releases table: gone with its data.
    page.locator("#main table").first.get_by_role("button", name=f"Delete {admitted}").click()
    dialog = page.locator("dialog[open]")
    expect(dialog.locator('[data-role="what"]')).to_contain_text("3 session starts")
    dialog.get_by_role("textbox").fill(admitted)
    dialog.get_by_role("button", name="Delete").click()
    expect(page.locator("#main table").first).not_to_contain_text(admitted)
    assert admitted not in listed() and admitted not in unlisted()
    assert not [e for e in admin.errors if "0.0." in e], admin.errors


def test_viewers_see_the_unlisted_count_but_no_admin_actions(signed):
    unlisted_release("0.0.4-seen")
    # /releases keeps the unlisted totals up to 5 s: wait until they include this one.
    deadline = time.monotonic() + 30
    while not api("GET", f"/v1/apps/{APP}/releases")[0]["unlisted"]["count"] and time.monotonic() < deadline:
        time.sleep(0.2)
    s = signed(VIEWER)
    page = s.open("releases")
    expect(page.locator('[data-role="unlisted-summary"]')).to_contain_text("held apart")
    expect(page.locator('[data-role="unlisted"]')).to_have_count(0)
    expect(page.get_by_role("button", name=re.compile("^(Delete|Admit) "))).to_have_count(0)
