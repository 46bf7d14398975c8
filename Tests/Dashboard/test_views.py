"""Points 4, 5, 7, 9 and 10 of issue 16, by clicking and typing in a real Chromium."""
import re

import pytest
from playwright.sync_api import expect

from conftest import ADMIN, APP, URL


def test_issue_links_name_their_issue(admin):
    page = admin.open("issues")
    links = page.locator("#main table tbody tr td:first-child a")
    expect(links.first).to_be_visible()
    texts = links.all_inner_texts()
    assert len(texts) > 1 and len(set(texts)) == len(texts), f"issue links that say the same: {texts}"
    for text in texts:
        assert " on " in text, f"{text!r} does not say where (the screen)"


def test_reports_page_says_which_issue_and_release_and_leads_back(admin):
    page = admin.open("issues")
    release = page.locator('#main [data-role="release"]').inner_text()
    first = page.locator("#main table tbody tr td:first-child a").first
    title = first.inner_text()
    first.click()
    heading = page.locator("#main h1")
    expect(heading).to_contain_text(title)
    expect(heading).to_contain_text(release)
    expect(page.locator("#nav a[data-view=issues]")).to_have_attribute("aria-current", "page")
    back = page.get_by_role("link", name=re.compile("Back to the issues"))
    back.click()
    expect(page.locator("#main h1")).to_contain_text("Top issues")
    expect(page).to_have_title(re.compile("Top issues"))


def test_report_page_names_the_report_and_leads_back_to_its_issue(admin):
    page = admin.open("issues")
    page.locator("#main table tbody tr td:first-child a").first.click()
    page.locator("#main table tbody tr td:first-child a").first.click()
    expect(page.locator("#nav a[data-view=issues]")).to_have_attribute("aria-current", "page")
    page.get_by_role("link", name=re.compile("Back to the reports")).click()
    expect(page.locator("#main h1")).to_contain_text("Reports of")


# Phones down to 360 px, and a 1300 px window at 200 % zoom (650 CSS px at scale 2).
SIZES = [(360, 1), (390, 1), (650, 2)]


@pytest.mark.parametrize("width,scale", SIZES, ids=["360px", "390px", "1300px-zoom-200"])
@pytest.mark.parametrize("view", ["releases", "issues", "compare", "timeline", "config", "keyboard", "cohort", "reports"])
def test_phone_and_zoom_have_no_sideways_page_scroll(signed, view, width, scale):
    from conftest import api
    if view == "cohort":  # with a rule, so the rule picker and the cohort tables are there
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": [{"name": "beta auto-fix", "match": {"percent": 50, "channels": ["beta"]}, "set": {"auto_fix": True}}]})
    try:
        check_phone(signed, view, width, scale)
    finally:
        if view == "cohort":
            api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": []})


def check_phone(signed, view, width, scale):
    s = signed(ADMIN, width, 844, scale)
    page = s.open(view)
    page.wait_for_load_state("networkidle")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{view} at {width} px scrolls {overflow} px sideways"
    # The nav keeps each label on one line.
    for label in page.locator("#nav a").all():
        assert label.evaluate("a => a.getClientRects().length") == 1, label.inner_text()


def test_skip_link_is_first_and_moves_focus_to_the_content(admin):
    page = admin.open("releases")
    hash_before = page.evaluate("location.hash")
    page.keyboard.press("Tab")
    skip = page.locator(":focus")
    expect(skip).to_have_text("Skip to content")
    page.keyboard.press("Enter")
    expect(page.locator("#main")).to_be_focused()
    assert page.evaluate("location.hash") == hash_before


def test_icon_and_footer_in_utc(admin):
    page = admin.open("releases")
    expect(page.locator("#status")).to_have_text(re.compile(r"^Updated \d\d:\d\d:\d\d UTC$"))
    icon = page.locator('link[rel="icon"]')
    expect(icon).to_have_count(1)
    response = page.request.get(URL + icon.get_attribute("href"))
    assert response.ok and response.headers["content-type"].startswith("image/")
    page.wait_for_load_state("networkidle")
    assert not admin.failed, admin.failed
    assert not admin.errors, admin.errors


def test_sign_in_by_link_and_sign_out(browser):
    import os
    context = browser.new_context()
    page = context.new_page()
    # Before signing in: the sign-in form, no empty App picker.
    page.goto(URL + "/")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.locator("#app-select")).to_be_hidden()
    page.goto(os.environ["WATCHDOG_SIGN_IN_LINK"])
    expect(page.locator("#who")).to_contain_text("admin")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.locator("#app-select")).to_be_hidden()
    expect(page.locator("#status")).to_have_text("")
    # A wrong token gets words for people, not the API's advice about headers.
    page.get_by_label("Token").fill("wda_nope")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#main .error")).to_have_text(re.compile("not valid", re.I))
    page.get_by_label("Token").fill(ADMIN)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#who")).to_contain_text("admin")
    context.close()


def test_report_drawing_labels_do_not_overlap(admin):
    page = admin.open("issues")
    page.locator("#main table tbody tr td:first-child a", has_text="View frame mismatch").first.click()
    page.locator("#main table tbody tr td:first-child a").first.click()
    labels = page.locator('svg[data-role="glitch-drawing"] text')
    expect(labels.first).to_be_visible()
    boxes = [(t.inner_html(), t.bounding_box()) for t in labels.all()]
    for i, (a, p) in enumerate(boxes):
        for b, r in boxes[i + 1:]:
            apart = p["x"] + p["width"] <= r["x"] or r["x"] + r["width"] <= p["x"] or p["y"] + p["height"] <= r["y"] or r["y"] + r["height"] <= p["y"]
            assert apart, f"labels {a!r} and {b!r} overlap"


@pytest.mark.parametrize("view", ["releases", "issues", "compare", "timeline", "keyboard", "cohort", "reports", "config"])
def test_axe_on_a_phone(signed, view):
    from test_axe import violations
    page = signed(ADMIN, 390, 844).open(view)
    page.wait_for_load_state("networkidle")
    found = violations(page)
    print(f"axe admin {view} at 390 px: {found}")
    assert not found, found


def test_compare_tables_use_the_sentences_scale_and_charts_have_units(admin):
    page = admin.open("compare")
    sentence = page.locator("#main li.kind-sentence").first
    expect(sentence).to_contain_text("×")
    words = re.search(r"([0-9.]+)× (fewer|more)", sentence.inner_text())
    assert words, sentence.inner_text()
    # The by-kind table's first row says the same ratio, the same way round.
    row = page.locator("#main table").filter(has=page.locator("th", has_text="Kind")).filter(has=page.locator("th", has_text="Change")).locator("tbody tr").first
    expect(row).to_contain_text(f"{words.group(1)}× {words.group(2)}")
    for heading in ["By screen", "By keyboard mode"]:
        expect(page.locator("#main .card h2", has_text=heading)).to_contain_text("%")
    expect(page.locator("#main")).not_to_contain_text("(none)")
    # "(not reported)", where it appears, is explained.
    expect(page.locator("#main p", has_text=re.compile(r"^\(not reported\):"))).to_be_visible()


def test_compare_refuses_the_same_release_on_both_sides(admin):
    page = admin.open("compare")
    page.wait_for_url(re.compile("target="))
    target = page.locator("select[name=target]").input_value()
    page.locator("select[name=base]").select_option(target)
    page.wait_for_url(re.compile(f"base={re.escape(target)}"))
    expect(page.locator('#main [data-role="same-release"]')).to_contain_text("same release")
    expect(page.locator("#main")).not_to_contain_text("1.0×")
    expect(page.locator("#main .sentence")).to_have_count(0)


def test_view_changes_are_announced_and_titled(admin):
    page = admin.open("releases")
    for label, heading in [("Compare", "Compare releases"), ("Over time", "Glitches over time"), ("Issues", "Top issues")]:
        page.locator("#nav").get_by_role("link", name=label).click()
        expect(page.locator("#main h1")).to_contain_text(heading)
        expect(page.locator("#announcer")).to_have_attribute("aria-live", "polite")
        expect(page.locator("#announcer")).to_contain_text(heading)
        expect(page).to_have_title(re.compile(f"^{heading}.* · watchdogd$"))
        expect(page.locator("#nav").get_by_role("link", name=label)).to_have_attribute("aria-current", "page")


@pytest.mark.parametrize("width,height", [(1300, 900), (390, 844)])
def test_screenshots_of_the_main_views(signed, width, height):
    """Saved to $WATCHDOG_ARTIFACTS (as CI sets it for the Swift browser tests), for review; the
    first screens are README's (docs/screenshots)."""
    import os
    folder = os.environ.get("WATCHDOG_ARTIFACTS")
    if not folder:
        pytest.skip("WATCHDOG_ARTIFACTS not set")
    s = signed(ADMIN, width, height)
    for view in ["releases", "compare", "timeline", "issues", "config"]:
        page = s.open(view)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=os.path.join(folder, f"dashboard-{view}-{width}.png"), full_page=True)
        # The first screen, as README shows it (docs/screenshots).
        page.screenshot(path=os.path.join(folder, f"dashboard-{view}-{width}-first-screen.png"))


@pytest.mark.parametrize("view", ["timeline", "compare", "issues"])
def test_the_30_second_refresh_redraws_nothing_when_nothing_changed(signed, view):
    """The page's own clock is moved on (the data stays the server's): the tables are the same
    elements, the focus stays where it was, so nothing jumps under a reader every 30 seconds."""
    s = signed()
    s.page.clock.install()
    page = s.open(view)
    page.wait_for_load_state("networkidle")
    tables = page.locator("#main table")
    count = tables.count()
    assert count > 0
    page.evaluate("document.querySelectorAll('#main table').forEach((t) => { t.dataset.seen = 'before the refresh'; })")
    focused = page.locator("#main table a, #main .scroll").first
    focused.focus()
    refreshes = []
    page.on("request", lambda r: refreshes.append(r.url) if "/v1/apps/" in r.url else None)
    page.clock.run_for(31_000)
    page.wait_for_load_state("networkidle")
    assert refreshes, "no refresh ran"
    expect(page.locator("#status")).to_have_text(re.compile("^Updated"))
    expect(page.locator("#main table[data-seen='before the refresh']")).to_have_count(count)
    expect(focused).to_be_focused()
