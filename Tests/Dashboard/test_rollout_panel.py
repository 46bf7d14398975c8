"""Issue 24, point 5: the Config effect view shows a rule's guarded rollout — its steps, the
current percentage, the evidence at each step and the guard's decision — and its controls,
each confirmed in a dialog that starts on Cancel."""
import re

from playwright.sync_api import expect

from conftest import APP, api

RULE = "<i>fix</i>"  # rule ids are A-Z a-z 0-9 _ -; the name is free text, shown as text


def rollout():
    return api("GET", f"/v1/admin/apps/{APP}/rollouts/fix")[0]


def test_a_rollout_its_evidence_and_its_controls_each_confirmed(admin):
    api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": [{"id": "fix", "name": RULE, "match": {"percent": 0}, "set": {"auto_fix": True}}]})
    try:
        api("POST", f"/v1/admin/apps/{APP}/rollouts", {"rule": "fix", "steps": [10, 50, 100], "minimum_sessions": 1000000, "minimum_hours": 1,
                                                        "guard": {"overall": True, "kinds": ["view_frame_mismatch"]}})
        page = admin.open("cohort", rule="fix")
        card = page.locator('[data-role="rollout"]')
        expect(card.locator('[data-role="rollout-state"]')).to_contain_text("is at 10 % of installs (step 1 of 3: 10 % → 50 % → 100 %)")
        expect(card.locator('[data-role="rollout-status"]')).to_have_text("active")
        # What a step needs to advance, on the card (issue 44).
        needs = card.locator('[data-role="rollout-needs"]')
        expect(needs).to_contain_text("To advance, a step needs 1.0 hours and 1,000,000 sessions on each side")
        expect(needs).to_contain_text("reliable evidence")
        expect(needs).to_contain_text("sample ratio mismatch holds it")
        steps = card.locator("table").first
        expect(steps.locator("tbody tr")).to_have_count(1)
        expect(steps.locator("tbody tr").first).to_contain_text("started")
        # The guard looks every second here: its decision (too few sessions) and the evidence
        # it rests on, per release, in a table.
        # The view draws what the server holds when it opens: reopen it until the guard's first
        # look is there (bounded; a loaded CI run took longer than one reload's wait).
        for _ in range(60):
            page.reload()
            page.wait_for_selector('[data-role="rollout-state"]')
            if page.locator('[data-role="rollout-decision"] strong').count():
                break
            page.wait_for_timeout(500)
        page.wait_for_selector('[data-role="rollout-decision"] strong', timeout=15_000)
        expect(card.locator('[data-role="rollout-decision"]')).to_contain_text(re.compile(r"wait — .*(hours|sessions)"))
        evidence = card.locator("table").nth(1)
        expect(evidence.locator("th", has_text="Always-valid 95 % interval")).to_be_visible()
        # Issue 44: what the guard decides on comes first — verdict, reliability (and why not),
        # the interval — and the counts after, so a long reason does not push them off screen.
        headers = [h.strip() for h in evidence.locator("thead th").all_inner_texts()]
        assert headers[3:6] == ["Verdict", "Reliable", "Always-valid 95 % interval"], headers
        expect(evidence.locator("tbody tr", has_text="latest look").first).to_contain_text("14.2.0")

        # Pause: the dialog starts on Cancel; Escape changes nothing and gives focus back.
        pause = card.locator('[data-action="pause"]')
        pause.click()
        dialog = page.locator('dialog[data-role="rollout-confirm"]')
        expect(dialog).to_be_visible()
        expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
        page.keyboard.press("Escape")
        expect(dialog).to_have_count(0)
        expect(pause).to_be_focused()
        assert rollout()["status"] == "active"
        pause.click()
        dialog.get_by_role("button", name="Pause").click()
        expect(card.locator('[data-role="rollout-status"]')).to_have_text("paused")
        assert rollout()["status"] == "paused"
        card.locator('[data-action="resume"]').click()
        dialog.get_by_role("button", name="Resume").click()
        expect(card.locator('[data-role="rollout-status"]')).to_have_text("active")

        # Advance one step, then abort: each a config version by the signed-in admin.
        card.locator('[data-action="advance"]').click()
        dialog.get_by_role("button", name="Advance one step").click()
        expect(card.locator('[data-role="rollout-state"]')).to_contain_text("is at 50 % of installs (step 2 of 3")
        card.locator('[data-action="abort"]').click()
        expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
        dialog.get_by_role("button", name="Abort").click()
        expect(card.locator('[data-role="rollout-status"]')).to_have_text("aborted")
        expect(card.locator('[data-role="rollout-controls"]')).to_have_count(0)
        done = rollout()
        assert [e["action"] for e in done["history"]][-2:] == ["advanced", "aborted"] and done["percent"] == 0
        rules = api("GET", f"/v1/admin/apps/{APP}/config")[0]["rules"]
        assert rules[0]["match"]["percent"] == 0
        # The rule's name is client text: never markup.
        assert page.locator("#main i").count() == 0
    finally:
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": []})


def test_a_rule_without_a_rollout_says_so(admin):
    api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": [{"id": "plain", "match": {"percent": 50}, "set": {"auto_fix": True}}]})
    try:
        page = admin.open("cohort", rule="plain")
        expect(page.locator('[data-role="rollout-none"]')).to_contain_text("has no guarded rollout")
    finally:
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": []})


def test_the_rollout_card_fits_a_phone_and_200_percent_zoom(signed):
    api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": [{"id": "fix", "name": RULE, "match": {"percent": 0}, "set": {"auto_fix": True}}]})
    try:
        listed = api("GET", f"/v1/admin/apps/{APP}/rollouts")[0]["rollouts"]
        if any(r["rule"] == "fix" and r["status"] in ("active", "paused") for r in listed):
            api("POST", f"/v1/admin/apps/{APP}/rollouts/fix/abort")
        api("POST", f"/v1/admin/apps/{APP}/rollouts", {"rule": "fix", "steps": [10, 100], "minimum_sessions": 1000000})
        for width, scale in [(360, 1), (650, 2)]:
            page = signed(width=width, height=844, scale=scale).open("cohort", rule="fix")
            expect(page.locator('[data-role="rollout-state"]')).to_contain_text("is at 10 % of installs")
            expect(page.locator('[data-role="rollout"] table').first.locator("tbody tr").first).to_be_visible()
            overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 0, f"the rollout card at {width} px scrolls {overflow} px sideways"
            from test_axe import violations
            found = violations(page)
            assert not found, found
        api("POST", f"/v1/admin/apps/{APP}/rollouts/fix/abort")
    finally:
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": []})
