"""Issue 28: the App Attest card of the config area — settings changed by clicking (a wrong team
id refused with the server's message, `require` asked for first), read-only for viewers."""
from playwright.sync_api import expect

from conftest import OTHER_APP, api


def settings(app=OTHER_APP):
    return api("GET", f"/v1/admin/apps/{app}/attestation")[0]


def test_an_admin_sets_attestation_by_clicking_and_require_is_asked_for(admin):
    try:
        page = admin.open("config", app=OTHER_APP)
        card = page.locator('[data-role="attestation"]')
        expect(card.get_by_role("heading", name="Attested installs (App Attest)")).to_be_visible()
        expect(card.locator('[data-field="mode"]')).to_have_text("Off — assertions are ignored")
        message = card.locator('[data-role="attestation-message"]')

        # A team id that is not one: the server's own message, nothing saved.
        page.select_option("#attestation-mode", "observe")
        page.fill("#attestation-team-id", "short")
        page.fill("#attestation-bundle-id", OTHER_APP)
        card.get_by_role("button", name="Save attestation settings").click()
        expect(message).to_contain_text("team_id must be the 10-character Apple Developer team id")
        assert settings()["mode"] == "off"

        page.select_option("#attestation-mode", "observe")
        page.fill("#attestation-team-id", "ABCDE12345")
        page.select_option("#attestation-environment", "development")
        card.get_by_role("button", name="Save attestation settings").click()
        expect(message).to_have_text("Saved.")
        expect(card.locator('[data-field="app-id"]')).to_have_text(f"ABCDE12345.{OTHER_APP}")
        assert settings() == {"mode": "observe", "team_id": "ABCDE12345", "bundle_id": OTHER_APP, "environment": "development"}

        # Require refuses unattested uploads: asked first; Cancel keeps observe.
        page.select_option("#attestation-mode", "require")
        save = card.get_by_role("button", name="Save attestation settings")
        save.click()
        dialog = page.locator('dialog[data-role="attestation-require"]')
        expect(dialog).to_contain_text("will be refused")
        expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
        page.keyboard.press("Escape")
        expect(dialog).to_have_count(0)
        assert settings()["mode"] == "observe"
        page.select_option("#attestation-mode", "require")
        save.click()
        dialog.get_by_role("button", name="Require").click()
        expect(card.locator('[data-field="mode"]')).to_have_text("Require — uploads without a valid assertion are refused")
        assert settings()["mode"] == "require"
        assert not admin.uncaught
    finally:
        api("PUT", f"/v1/admin/apps/{OTHER_APP}/attestation", {"mode": "off"})


def test_a_viewer_sees_the_attestation_settings_without_a_form(viewer):
    page = viewer.open("config", app=OTHER_APP)
    card = page.locator('[data-role="attestation"]')
    expect(card.locator('[data-field="mode"]')).to_have_text("Off — assertions are ignored")
    expect(card.get_by_text("Admins change these settings.")).to_be_visible()
    assert card.locator("form").count() == 0
