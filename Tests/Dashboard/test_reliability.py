"""Issue 23: a comparison whose sessions are too concentrated reads "unreliable", with the
reasons, and each side's session concentration is shown beside its report concentration."""
from playwright.sync_api import expect

from conftest import APP, api


def test_compare_shows_session_concentration_and_an_unreliable_verdict_with_its_reasons(admin):
    page = admin.open("compare")
    badge = page.locator("#main .sentence .verdict")
    expect(badge).to_have_text("improved")
    expect(page.locator('#main [data-role="session-concentration"]').first).to_contain_text("busiest hour")
    expect(page.locator('#main [data-role="unreliable-warning"]')).to_have_count(0)
    settings = api("GET", f"/v1/admin/apps/{APP}/admission")[0]
    try:
        # The demo's busiest hour holds 1 % of a release's sessions: say that is too many.
        api("PUT", f"/v1/admin/apps/{APP}/admission", {**settings, "maximum_hour_share": 0.001})
        page = admin.open("compare")
        expect(page.locator("#main .sentence .verdict")).to_have_text("unreliable")
        warning = page.locator('#main [data-role="unreliable-warning"]')
        expect(warning).to_contain_text("started in one hour")
        expect(page.locator("#main .sentence")).to_contain_text("fewer sessions")  # what the interval alone says, in words
    finally:
        api("PUT", f"/v1/admin/apps/{APP}/admission", settings)
    expect(admin.open("compare").locator("#main .sentence .verdict")).to_have_text("improved")


def test_releases_show_the_sessions_held_apart_and_the_reports_of_unknown_sessions(admin):
    page = admin.open("releases")
    releases = {r["release"]: r for r in api("GET", f"/v1/apps/{APP}/releases")[0]["releases"]}
    rows = page.locator("#main table").first.locator("tbody tr")  # the listed releases (admins also see the unlisted ones' table)
    expect(rows.first).to_be_visible()
    for index in range(rows.count()):
        row = rows.nth(index)
        name = row.locator("td").first.inner_text()
        release = next((r for text, r in releases.items() if text.startswith(name.rstrip("…"))), None)
        assert release is not None, name
        expect(row.locator('[data-role="implausible-sessions"]')).to_have_text(f"{release['implausible_sessions']:,}")
        expect(row.locator('[data-role="unknown-session-reports"]')).to_have_text(f"{release['unknown_session_reports']:,}")
    # The long-text fixture's reports name a session nobody started: at least one such report is shown.
    assert any(r["unknown_session_reports"] > 0 for r in releases.values())
    expect(page.locator("#main")).to_contain_text("Reports of unknown sessions: reports whose session never had a counted start")
