"""The audit log's view (issue 41, point 4): admins page through every change, filter by action
and actor (typed, kept in the URL), and what clients and people typed is text, never markup;
viewers get no such view."""
from urllib.parse import quote_plus

from playwright.sync_api import expect

from conftest import OTHER_APP, URL, api

BASE = f"/v1/admin/apps/{OTHER_APP}"
MARKUP = '<img src=x onerror="window.pwned=1"><b>bold</b>'


def test_an_admin_pages_and_filters_the_audit_log_and_client_text_stays_text(admin):
    name = api("GET", "/v1/auth/session")[0]["name"]
    # 55 config changes by the admin: more than a page of 50. One rule's name is markup.
    api("PATCH", f"{BASE}/config", {"rules": [{"id": "markup", "name": MARKUP, "match": {"percent": 0}, "set": {"auto_fix": True}}]})
    for seconds in range(1, 55):
        api("PATCH", f"{BASE}/config", {"watchdog_interval_s": seconds})
    try:
        page = admin.open("audit")
        expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
        expect(page.locator("#nav a[data-view=audit]")).to_have_attribute("aria-current", "page")
        page.get_by_label("Action").fill("config.update")
        page.get_by_label("Actor").fill(name)
        page.get_by_role("button", name="Filter", exact=True).click()
        rows = page.locator("#main table tbody tr")
        expect(rows).to_have_count(50)
        expect(page.locator('#main [data-role="action"]', has_text="config.update")).to_have_count(50)
        assert "action=config.update" in page.url and f"actor={quote_plus(name)}" in page.url
        # The newest first: the last change (54) on top; the next page has the older ones.
        expect(rows.first).to_contain_text('"watchdog_interval_s":54')
        page.get_by_role("button", name="Older").click()
        expect(page.locator("#main table tbody tr").first).not_to_contain_text('"watchdog_interval_s":54')
        # The rule named with markup, further back: text, never an element.
        for _ in range(5):
            if page.locator("#main table", has_text="bold</b>").count() or not page.get_by_role("button", name="Older").count():
                break
            page.get_by_role("button", name="Older").click()
            page.wait_for_load_state("networkidle")
        expect(page.locator("#main table", has_text="<b>bold</b>")).to_have_count(1)
        assert page.locator("#main table b, #main table img").count() == 0
        assert page.evaluate("window.pwned") is None
        # Another action: no rows of config.update.
        page.get_by_label("Action").fill("proposal.approve")
        page.get_by_role("button", name="Filter", exact=True).click()
        expect(page.locator('#main [data-role="action"]', has_text="config.update")).to_have_count(0)
        assert not admin.uncaught
    finally:
        api("PATCH", f"{BASE}/config", {"rules": [], "watchdog_interval_s": None})


def test_a_viewer_has_no_audit_view(viewer):
    page = viewer.open("releases")
    expect(page.locator("#nav a[data-view=config]")).to_be_visible()
    expect(page.locator("#nav a[data-view=audit]")).to_have_count(0)
    page.goto(f"{URL}/#/audit?app={OTHER_APP}")
    expect(page.locator("#main .error")).to_contain_text("needs an admin token")
