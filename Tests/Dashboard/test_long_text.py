"""Point 6 of issue 16: the longest text a client may send (128-character screen and view names,
a 64-character attribute key, a 64 + 64-character release) keeps every view's layout: in tables
and lines it is cut to one line with its full value on hover (title) and in the DOM; the report
view shows it in full."""
import re
import urllib.parse

import pytest
from playwright.sync_api import expect

from conftest import APP, LONG_KEY, LONG_RELEASE, LONG_SCREEN, LONG_VALUE, LONG_VIEW, api

# The widest a cut client string may be: 28em of the 14 px body text, and a little slack.
CUT_WIDTH = 28 * 14 + 8


def releases():
    return api("GET", f"/v1/apps/{APP}/releases")[0]["releases"]


def long_issue():
    """The issue of the long report in the newest release, and that release's id."""
    newest = releases()[0]["id"]
    issues = api("GET", f"/v1/apps/{APP}/issues?release={urllib.parse.quote(newest)}&limit=200")[0]["issues"]
    [issue] = [i for i in issues if LONG_SCREEN in (i.get("title") or "")]
    return issue, newest


def assert_cut_with_the_full_value(locator, full=None, contains=None):
    """One line no wider than CUT_WIDTH, the full value in its title and its text."""
    expect(locator).to_be_visible()
    title = locator.get_attribute("title")
    text = locator.evaluate("e => e.textContent")
    if full is not None:
        assert title == full and text == full, (title, text)
    else:
        assert contains in title and title == text, (title, text)
    box = locator.bounding_box()
    assert box["width"] <= CUT_WIDTH, f"{box['width']} px wide"
    line = locator.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)")
    assert box["height"] <= 1.5 * line, f"{box['height']} px tall: wraps instead of being cut"


def no_sideways_scroll(page):
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page scrolls {overflow} px sideways"


def test_issues_cut_a_long_issue_title_and_keep_the_page_width(admin):
    page = admin.open("issues")
    assert_cut_with_the_full_value(page.locator("#main table a.client", has_text=LONG_SCREEN), contains=LONG_SCREEN)
    no_sideways_scroll(page)


def test_reports_cut_long_screen_view_and_release_names(admin):
    issue, release = long_issue()
    page = admin.open("reports", fingerprint=issue["fingerprint"], release=release)
    row = page.locator("#main table tbody tr").first
    assert_cut_with_the_full_value(row.locator(f'.client[title="{LONG_SCREEN}"]'), LONG_SCREEN)
    assert_cut_with_the_full_value(row.locator(f'.client[title="{LONG_VIEW}"]'), LONG_VIEW)
    no_sideways_scroll(page)
    # The release with the longest name: its reports' release cells.
    long_release = next(r["id"] for r in releases() if r["release"] == LONG_RELEASE)
    page = admin.open("reports", release=urllib.parse.quote(long_release))
    assert_cut_with_the_full_value(page.locator(f'#main td .client[title="{LONG_RELEASE}"]').first, LONG_RELEASE)
    expect(page.locator("#main h1")).to_contain_text(LONG_RELEASE)  # a heading wraps: all of it shows
    no_sideways_scroll(page)


def test_compare_cuts_a_long_screen_name(admin):
    page = admin.open("compare")
    table = page.locator("#main table").filter(has=page.locator("th", has_text="Screen")).filter(has=page.locator("th", has_text="Change"))
    assert_cut_with_the_full_value(table.locator(f'.client[title="{LONG_SCREEN}"]'), LONG_SCREEN)
    no_sideways_scroll(page)


def test_releases_cut_a_long_release_name_and_pickers_have_it_on_hover(admin):
    page = admin.open("releases")
    assert_cut_with_the_full_value(page.locator(f'#main table a.client[title="{LONG_RELEASE}"]'), LONG_RELEASE)
    no_sideways_scroll(page)
    page = admin.open("issues")
    option = page.locator("select[name=release] option", has_text=LONG_RELEASE)
    expect(option).to_have_attribute("title", LONG_RELEASE)
    # A picker is as wide as its longest option, unless capped.
    assert page.locator("select[name=release]").bounding_box()["width"] <= CUT_WIDTH
    no_sideways_scroll(page)


@pytest.mark.parametrize("width", [1300, 390])
def test_report_view_shows_long_fields_in_full_without_squeezing_them(signed, width):
    issue, release = long_issue()
    s = signed(width=width, height=900)
    page = s.open("reports", fingerprint=issue["fingerprint"], release=release)
    page.locator("#main table tbody tr td:first-child a").first.click()
    expect(page.locator("#main h1")).to_contain_text(LONG_SCREEN)
    fields = page.locator("#main dl.fields")
    key = fields.locator("dt", has_text=LONG_KEY)
    expect(key).to_have_text(f"attributes.{LONG_KEY}")
    value = key.locator("xpath=following-sibling::dd[1]")
    expect(value).to_have_text(LONG_VALUE)
    expect(fields.locator("dt", has_text=re.compile("^screen$")).locator("xpath=following-sibling::dd[1]")).to_have_text(LONG_SCREEN)
    # Neither column squeezed to a sliver (the 64-character key made the values 35 px wide).
    for part in (key, value):
        assert part.bounding_box()["width"] >= min(150, width / 3), part.bounding_box()
    no_sideways_scroll(page)
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 4000, f"the report is {height} px tall"
