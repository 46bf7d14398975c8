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
