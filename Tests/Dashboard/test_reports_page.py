"""Point 4 of issue 16 (the reports of an issue: sorted by when they occurred, the ones kept out
of the rates marked) and issue 15's "More" (every outcome answered on the page: the end, a
failed request, a session that ended — never an unhandled rejection)."""
import re
import urllib.parse

from playwright.sync_api import expect

from conftest import APP, URL, api


def issue_with_suspect_reports():
    newest = api("GET", f"/v1/apps/{APP}/releases")[0]["releases"][0]["id"]
    issues = api("GET", f"/v1/apps/{APP}/issues?release={urllib.parse.quote(newest)}&limit=200")[0]["issues"]
    return max((i for i in issues if i.get("suspect_reports")), key=lambda i: i["reports"]), newest


def occurred(page):
    return [t.strip() for t in page.locator("#main table tbody tr td:first-child").all_inner_texts()]


def test_reports_sort_by_occurred_both_ways_by_click_and_key(admin):
    issue, release = issue_with_suspect_reports()
    page = admin.open("reports", fingerprint=issue["fingerprint"], release=release)
    header = page.locator("#main th", has_text="Occurred")
    expect(header).to_have_attribute("aria-sort", "descending")
    times = occurred(page)
    assert len(times) > 2 and times == sorted(times, reverse=True), times
    page.get_by_role("button", name=re.compile("^Occurred")).click()
    expect(header).to_have_attribute("aria-sort", "ascending")
    assert occurred(page) == sorted(times)
    # By keyboard: the button keeps the focus through the redraw.
    expect(page.get_by_role("button", name=re.compile("^Occurred"))).to_be_focused()
    page.keyboard.press("Enter")
    expect(header).to_have_attribute("aria-sort", "descending")
    assert occurred(page) == sorted(times, reverse=True)


def test_reports_kept_out_of_the_rates_are_marked_and_the_rest_match_the_count(admin):
    issue, release = issue_with_suspect_reports()
    page = admin.open("reports", fingerprint=issue["fingerprint"], release=release)
    rows = page.locator("#main table tbody tr")
    expect(rows.first).to_be_visible()
    apart = page.locator("#main table tbody tr.counted-apart")
    counted = rows.count() - apart.count()
    assert counted == issue["reports"], f"{counted} unmarked rows for an issue counted as {issue['reports']}"
    assert apart.count() == issue["suspect_reports"] + issue.get("flooded_reports", 0)
    for row in apart.all():
        expect(row.locator(".badge")).to_have_text(re.compile("suspect|flooded"))
    expect(page.locator('#main [data-role="counts"]')).to_contain_text(f"{issue['reports']} reports counted")


def two_pages(admin):
    """Reports of one kind in the older demo release: 57, so one "More" reaches the end."""
    older = api("GET", f"/v1/apps/{APP}/releases")[0]["releases"][1]["id"]
    total = sum(1 for r in api_ndjson(f"/v1/apps/{APP}/reports.ndjson?release={urllib.parse.quote(older)}&kind=keyboard_without_input"))
    assert 50 < total <= 100, total
    page = admin.open("reports", release=older, kind="keyboard_without_input")
    expect(page.locator("#main table tbody tr")).to_have_count(50)
    return page, total


def api_ndjson(path):
    import json
    import urllib.request
    from conftest import ADMIN
    request = urllib.request.Request(URL + path, headers={"Authorization": f"Bearer {ADMIN}"})
    with urllib.request.urlopen(request) as response:
        return [json.loads(line) for line in response.read().splitlines() if line.strip()]


def own_errors(signed):
    """Console errors of the page's code: not the browser's own line for a failed request."""
    return [e for e in signed.errors if not e.startswith("Failed to load resource")]


def test_more_reaches_the_end_and_says_so(admin):
    page, total = two_pages(admin)
    more = page.get_by_role("button", name="More")
    more.click()
    expect(page.locator("#main table tbody tr")).to_have_count(total)
    expect(more).to_be_hidden()
    expect(page.locator('[data-role="more-status"]')).to_have_text(f"All {total} reports shown.")
    assert not admin.uncaught and not own_errors(admin), admin.errors


def test_more_when_the_server_cannot_be_reached_says_so_and_can_try_again(admin):
    page, total = two_pages(admin)
    more = page.get_by_role("button", name="More")
    admin.context.set_offline(True)
    more.click()
    expect(page.locator('[data-role="more-status"]')).to_contain_text("Could not load more reports")
    expect(more).to_be_enabled()
    expect(page.locator("#main table tbody tr")).to_have_count(50)
    admin.context.set_offline(False)
    more.click()
    expect(page.locator("#main table tbody tr")).to_have_count(total)
    assert not admin.uncaught, admin.uncaught
    assert not own_errors(admin), admin.errors


def test_more_after_the_session_ended_offers_to_sign_in_again(admin):
    page, _ = two_pages(admin)
    csrf = page.request.get(URL + "/v1/auth/session").json()["csrf_token"]
    assert page.request.post(URL + "/v1/auth/logout", headers={"X-CSRF-Token": csrf}).ok  # signed out elsewhere
    page.get_by_role("button", name="More").click()
    status = page.locator('[data-role="more-status"]')
    expect(status).to_contain_text("signed out")
    status.get_by_role("button", name="Sign in again").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert not admin.uncaught, admin.uncaught
    assert not own_errors(admin), admin.errors
