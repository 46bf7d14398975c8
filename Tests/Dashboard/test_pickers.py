"""Point 9 of issue 16: no picker navigates on every arrow key — the App selector, the release
pickers, Kind, Bucket and Rule all wait for Enter (or leaving the picker), and the focus stays on
the picker in the new view."""
import pytest
from playwright.sync_api import expect

from conftest import APP, api

PICKERS = [
    ("releases", "#app-select", "app"),
    ("compare", "select[name=base]", "base"),
    ("compare", "select[name=target]", "target"),
    ("compare", "select[name=interval]", "interval"),
    ("timeline", "select[name=target]", "target"),
    ("timeline", "select[name=kind]", "kind"),
    ("timeline", "select[name=bucket]", "bucket"),
    ("issues", "select[name=release]", "release"),
    ("keyboard", "select[name=release]", "release"),
    ("cohort", "select[name=release]", "release"),
    ("cohort", "select[name=rule]", "rule"),
    ("cohort", "select[name=interval]", "interval"),
]
TWO_RULES = [{"name": "half auto-fix", "match": {"percent": 50}, "set": {"auto_fix": True}},
             {"name": "quarter auto-fix", "match": {"percent": 25}, "set": {"auto_fix": True}}]


def parameter(page, name):
    return page.evaluate(f"new URLSearchParams(location.hash.split('?')[1] ?? '').get({name!r}) ?? ''")


@pytest.mark.parametrize("view,selector,name", PICKERS, ids=[f"{v}-{n}" for v, _, n in PICKERS])
def test_arrow_keys_move_a_picker_without_navigating_until_enter(admin, view, selector, name):
    if view == "cohort":
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": TWO_RULES})
    try:
        page = admin.open(view)
        page.wait_for_load_state("networkidle")
        picker = page.locator(selector)
        heading, before, url = page.locator("#main h1").inner_text(), picker.input_value(), page.url
        picker.focus()
        down = picker.evaluate("s => s.selectedIndex < s.options.length - 1")
        there, back = ("ArrowDown", "ArrowUp") if down else ("ArrowUp", "ArrowDown")
        for key in (there, back, there):  # three moves, no view load for any
            page.keyboard.press(key)
        chosen = picker.input_value()
        assert chosen != before, "the arrow keys did not move the picker"
        page.wait_for_timeout(300)  # a navigation would have started by now
        assert page.url == url, f"an arrow key navigated to {page.url}"
        expect(page.locator("#main h1")).to_have_text(heading)
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => new URLSearchParams(location.hash.split('?')[1]).get({name!r}) === {chosen!r}")
        expect(page.locator(selector)).to_have_value(chosen)
        expect(page.locator(selector)).to_be_focused()
    finally:
        if view == "cohort":
            api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": []})


def test_leaving_a_moved_picker_opens_its_choice(admin):
    page = admin.open("issues")
    page.wait_for_load_state("networkidle")
    picker = page.locator("select[name=release]")
    before = picker.input_value()
    picker.focus()
    page.keyboard.press("ArrowDown")
    chosen = picker.input_value()
    assert chosen != before
    page.keyboard.press("Tab")
    page.wait_for_function(f"() => new URLSearchParams(location.hash.split('?')[1]).get('release') === {chosen!r}")
    assert parameter(page, "release") == chosen
