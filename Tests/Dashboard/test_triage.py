"""Issue 42, point 1: the Issues view shows each issue's triage state, filters by it, and an
operator or admin resolves, mutes and reopens an issue with a note — each change asked first in
the confirm-first dialog (Cancel has the focus and changes nothing) — all by clicks in Chromium;
axe-clean with the dialog open. Every issue this test touches is reopened before it ends."""
import re

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from conftest import APP, api

axe = Axe()


def first_row(page):
    return page.locator("#main table tbody tr").first


def test_resolve_filter_mute_and_reopen_an_issue_each_confirmed(admin):
    page = admin.open("issues")
    row = first_row(page)
    title = row.locator("td:first-child a").inner_text()
    fingerprint = None
    expect(row.locator('[data-role="state"]')).to_have_text("open")

    # Asked first; Cancel (focused) changes nothing.
    row.locator('button[data-action="resolve"]').click()
    dialog = page.locator('dialog[data-role="triage-confirm"]')
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    violations = [(v["id"], len(v["nodes"])) for v in axe.run(page).response["violations"]]
    assert violations == [], violations
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    expect(first_row(page).locator('[data-role="state"]')).to_have_text("open")

    # Resolved with a note, after confirming.
    page.locator('[data-role="triage-note"]').fill("fixed by the <b>new</b> layout")
    first_row(page).locator('button[data-action="resolve"]').click()
    page.locator('dialog[data-role="triage-confirm"]').get_by_role("button", name="Resolve").click()
    row = page.locator("#main table tbody tr", has_text=title).first
    expect(row.locator('[data-role="state"]')).to_have_text("resolved")
    expect(page.locator('[data-role="triage-message"]')).to_contain_text("resolved")
    try:
        issues = api("GET", f"/v1/apps/{APP}/issues?state=resolved")[0]["issues"]
        resolved = [i for i in issues if i["title"] == title]
        assert resolved and resolved[0]["triage"]["note"] == "fixed by the <b>new</b> layout", issues
        fingerprint = resolved[0]["fingerprint"]
        # The note is text: the tooltip holds it as typed, no element was made of it.
        expect(row.locator('[data-role="state"]')).to_have_attribute("title", re.compile(r"note: fixed by the <b>new</b> layout"))
        assert page.locator("#main table b").count() == 0

        # The state filter: resolved issues only.
        page.locator('select[data-role="state-filter"]').select_option("resolved")
        expect(page).to_have_url(re.compile(r"state=resolved"))
        states = page.locator('#main table tbody [data-role="state"]')
        expect(states.first).to_have_text("resolved")
        assert set(states.all_inner_texts()) == {"resolved"}

        # Muted, confirmed: the row says so.
        page.locator("#main table tbody tr", has_text=title).first.locator('button[data-action="mute"]').click()
        page.locator('dialog[data-role="triage-confirm"]').get_by_role("button", name="Mute").click()
        page.locator('select[data-role="state-filter"]').select_option("muted")
        expect(page.locator("#main table tbody tr", has_text=title).first.locator('[data-role="state"]')).to_have_text("muted")

        # Reopened, confirmed: open again, in the "Open" filter.
        page.locator("#main table tbody tr", has_text=title).first.locator('button[data-action="reopen"]').click()
        page.locator('dialog[data-role="triage-confirm"]').get_by_role("button", name="Reopen").click()
        page.locator('select[data-role="state-filter"]').select_option("open")
        expect(page.locator("#main table tbody tr", has_text=title).first.locator('[data-role="state"]')).to_have_text("open")
        audit = api("GET", "/v1/admin/audit?action=issue.mute")[0]["entries"]
        assert audit and audit[0]["app"] == APP, audit
    finally:
        if fingerprint:
            api("POST", f"/v1/apps/{APP}/issues/{fingerprint}/reopen", {})
    assert not admin.uncaught, admin.uncaught


def test_viewers_see_states_but_no_triage_buttons(viewer):
    page = viewer.open("issues")
    expect(first_row(page).locator('[data-role="state"]')).to_be_visible()
    assert page.locator("#main button[data-action]").count() == 0
    assert page.locator('[data-role="triage-note"]').count() == 0
