"""Points 1–3 of issue 16: the config panel's dialog is bound to the server's state, starts on
Cancel, makes test_crash hard to switch on by accident, and restores versions with their diff."""
import re

from playwright.sync_api import expect

from conftest import APP, api, config


def switch(page, key):
    return page.locator(f'#main input[data-key="{key}"]')


def applied(page, version):
    """Waits until the panel shows `version` (the dialog closes before the change is sent)."""
    expect(page.locator("#main h2", has_text="Switches")).to_contain_text(f"(version {version})")


def open_dialog(page):
    dialog = page.locator("dialog[open]")
    dialog.wait_for()
    return dialog


def test_escape_cancels_and_the_switch_shows_the_servers_state(admin):
    page = admin.open("config")
    server = config()["defaults"].get("auto_fix", False)
    expect(switch(page, "auto_fix")).to_be_checked(checked=server)
    switch(page, "auto_fix").click()
    open_dialog(page)
    page.keyboard.press("Escape")
    expect(page.locator("dialog[open]")).to_have_count(0)
    expect(switch(page, "auto_fix")).to_be_checked(checked=server)
    assert config()["defaults"].get("auto_fix", False) == server
    # Clicking again offers the real change, not the one already in place.
    switch(page, "auto_fix").click()
    expect(open_dialog(page).locator("h2")).to_contain_text("Turn off" if server else "Turn on")
    page.keyboard.press("Escape")
    expect(switch(page, "auto_fix")).to_be_checked(checked=server)


def test_dialog_starts_on_cancel_has_a_name_and_gives_focus_back(admin):
    page = admin.open("config")
    version = config()["version"]
    switch(page, "auto_fix").focus()
    page.keyboard.press("Space")          # keyboard only: Space flips the switch, Enter answers
    expect(page.get_by_role("dialog", name=re.compile("auto_fix"))).to_be_visible()
    expect(page.locator("dialog[open] button", has_text="Cancel")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("dialog[open]")).to_have_count(0)
    expect(switch(page, "auto_fix")).to_be_focused()
    assert config()["version"] == version, "Space then Enter must not apply anything"


def test_test_crash_shows_budget_expiry_impact_and_needs_the_apps_name(admin):
    page = admin.open("config")
    assert not config()["defaults"].get("test_crash", False)
    dry, _ = api("PATCH", f"/v1/admin/apps/{APP}/config?dry_run=true", {"test_crash": True})
    switched = sum(r["switched"] for r in dry["impact"])
    switch(page, "test_crash").click()
    dialog = open_dialog(page)
    expect(dialog.locator('[data-role="impact"]')).to_contain_text(f"{switched:,}")
    # Which switch and which way (issue 44), and the installs per release in the table under it.
    expect(dialog.locator('[data-role="impact"]')).to_contain_text("test_crash off → on for every install: this switches")
    expect(dialog.locator('[data-role="budget"]')).to_contain_text(re.compile(r"\d+ test crash"))
    expect(dialog.locator('[data-role="expiry"]')).to_contain_text("Expires")
    apply = dialog.get_by_role("button", name="Apply")
    typed = dialog.get_by_role("textbox", name=re.compile("app's name"))
    if switched > 10:
        expect(apply).to_be_disabled()
        typed.fill("com.example")
        expect(apply).to_be_disabled()
        typed.fill(APP)
    expect(apply).to_be_enabled()
    version = config()["version"]
    apply.click()
    expect(page.locator("dialog[open]")).to_have_count(0)
    applied(page, version + 1)
    expect(switch(page, "test_crash")).to_be_checked()
    document = config()
    assert document["defaults"]["test_crash"] is True
    assert document["defaults"].get("test_crash_expires_at"), "test_crash goes on with an expiry"
    api("PATCH", f"/v1/admin/apps/{APP}/config", {"test_crash": None, "test_crash_expires_at": None})


def test_restore_version_shows_the_diff_and_the_built_in_state_is_version_0(admin):
    api("PATCH", f"/v1/admin/apps/{APP}/config", {"watchdog_interval_s": 2.5})
    wanted = config()["version"]
    api("PATCH", f"/v1/admin/apps/{APP}/config", {"watchdog_interval_s": 4})
    page = admin.open("config")
    page.get_by_role("button", name=f"Restore version {wanted}").click()
    dialog = open_dialog(page)
    expect(dialog).to_contain_text("watchdog_interval_s")
    expect(dialog.locator(".diff-del")).to_contain_text("4")
    expect(dialog.locator(".diff-add")).to_contain_text("2.5")
    dialog.get_by_role("button", name="Apply").click()
    expect(page.locator("dialog[open]")).to_have_count(0)
    expect(page.locator("#main h2", has_text="Switches")).to_contain_text(f"version {wanted + 2}")
    assert config()["defaults"]["watchdog_interval_s"] == 2.5
    # The built-in state is the first version: restoring it empties the document.
    page.get_by_role("button", name="Restore version 0 (built-in)").click()
    dialog = open_dialog(page)
    expect(dialog.locator(".diff-del")).to_contain_text("watchdog_interval_s")
    dialog.get_by_role("button", name="Apply").click()
    expect(page.locator("#main h2", has_text="Switches")).to_contain_text(f"version {wanted + 3}")
    assert config()["defaults"] == {} and config()["rules"] == []


def test_viewer_sees_the_config_read_only(viewer):
    page = viewer.open("config")
    expect(page.locator('[data-role="read-only"]')).to_be_visible()
    expect(switch(page, "auto_fix")).to_be_disabled()
    expect(page.get_by_role("button", name=re.compile("Restore"))).to_have_count(0)


def test_rule_editor_creates_edits_reorders_and_deletes(admin):
    page = admin.open("config")
    rules = lambda: config()["rules"]  # noqa: E731
    assert rules() == []

    def review_and_apply(button, shows):
        version = config()["version"]
        page.get_by_role("button", name=button).click()
        dialog = open_dialog(page)
        expect(dialog.locator('[data-role="impact"]')).to_be_visible()
        expect(dialog.locator('[data-role="diff"]')).to_contain_text(shows)
        dialog.get_by_role("button", name="Apply").click()
        applied(page, version + 1)

    def confirm(button):
        version = config()["version"]
        page.get_by_role("button", name=button).click()
        open_dialog(page).get_by_role("button", name="Apply").click()
        applied(page, version + 1)

    page.get_by_label("Name").fill("beta auto-fix")
    page.get_by_label("Versions").fill(">=14.2.0")
    page.get_by_label("Channels").fill("beta")
    page.locator("#rule-percent").fill("50")
    page.get_by_label("Sets auto_fix").select_option("on")
    review_and_apply("Review new rule", "beta auto-fix")
    expect(page.locator("#main table", has=page.locator("th", has_text="Sets")).locator("tbody tr")).to_have_count(1)
    [rule] = rules()
    assert rule["name"] == "beta auto-fix" and rule["match"]["percent"] == 50 and rule["match"]["channels"] == ["beta"] and rule["set"] == {"auto_fix": True}

    page.get_by_role("button", name="Edit rule beta auto-fix").click()
    expect(page.locator("#rule-percent")).to_have_value("50")
    page.locator("#rule-percent").fill("25")
    expect(page.locator("#rule-percent")).to_have_value("25")
    review_and_apply("Review change", '"percent":25')
    assert rules()[0]["match"]["percent"] == 25 and rules()[0]["id"] == rule["id"]

    page.get_by_label("Name").fill("kill on pads")
    page.get_by_label("Idioms").fill("pad")
    page.get_by_label("Sets enabled").select_option("off")
    review_and_apply("Review new rule", "kill on pads")
    assert [r["name"] for r in rules()] == ["beta auto-fix", "kill on pads"]

    confirm("Move rule kill on pads up")
    assert [r["name"] for r in rules()] == ["kill on pads", "beta auto-fix"]

    for name in ["kill on pads", "beta auto-fix"]:
        confirm(f"Delete rule {name}")
    assert rules() == []
    expect(page.locator("#main")).to_contain_text("No rules")


def test_history_lists_a_page_of_versions_and_opens_one_with_its_diff(admin):
    """Issue 23, point 6: versions without documents, 20 at a time; a version's diff is fetched
    when it is opened."""
    for seconds in range(2, 25):
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"watchdog_interval_s": seconds})
    newest = config()["version"]
    page = admin.open("config")
    shown = page.locator("#main [data-open-version]")
    expect(shown).to_have_count(20)
    expect(page.get_by_role("button", name="Restore version 0 (built-in)")).to_be_visible()
    page.get_by_role("button", name="More versions").click()
    expect(shown).to_have_count(min(40, newest))
    expect(page.locator('#main [data-role="change"] .diff-add')).to_have_count(0)

    page.get_by_role("button", name=f"Show version {newest}").click()
    change = page.locator(f'#main [data-role="change"][data-version="{newest}"]')
    expect(change.locator(".diff-del")).to_contain_text("defaults.watchdog_interval_s: 23")
    expect(change.locator(".diff-add")).to_contain_text("defaults.watchdog_interval_s: 24")
    hide = page.get_by_role("button", name=f"Hide version {newest}")
    expect(hide).to_be_focused()
    expect(hide).to_have_attribute("aria-expanded", "true")
    expect(shown).to_have_count(min(40, newest)), "opening a version keeps the pages shown"
    hide.click()
    expect(change.locator(".diff-add")).to_have_count(0)
