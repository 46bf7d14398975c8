"""Point 10 of issue 16: the pages of a one-time sign-in link — used up, or incomplete — look
like the dashboard (its stylesheet, brand and card), pass axe, and lead on to signing in."""
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from conftest import URL, api


def assert_dashboard_look(page):
    expect(page.locator("header .brand")).to_have_text("watchdogd")
    # The dashboard's stylesheet applies: its background, its card.
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(248, 250, 252)"
    assert page.evaluate("getComputedStyle(document.querySelector('main .card')).borderTopLeftRadius") == "6px"
    found = [(v["id"], len(v["nodes"])) for v in Axe().run(page).response["violations"]]
    assert not found, found


@pytest.mark.parametrize("case", ["used", "incomplete"])
def test_a_sign_in_link_that_cannot_sign_in_says_why_in_the_dashboards_look(browser, case):
    path = api("POST", "/v1/auth/links")[0]["path"]
    if case == "used":
        first = browser.new_context()
        first.new_page().goto(URL + path)
        expect(first.pages[0].locator("#who")).to_contain_text("admin")
        first.close()
    else:
        path = "/login?code=short"
    context = browser.new_context()
    page = context.new_page()
    page.goto(URL + path)
    expect(page.get_by_role("heading", name="Sign-in link")).to_be_visible()
    expect(page.locator("main .error")).to_contain_text("already used" if case == "used" else "incomplete")
    assert_dashboard_look(page)
    page.get_by_role("link", name="Sign in with a token").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_label("Token")).to_be_visible()
    context.close()


def test_a_sign_in_links_own_page_looks_like_the_dashboard_without_scripts(browser):
    """A link preview runs no script: it gets the page with its button, styled, and the code stays unused."""
    path = api("POST", "/v1/auth/links")[0]["path"]
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(URL + path)
    expect(page.get_by_role("button", name="Sign in to watchdogd")).to_be_visible()
    expect(page.locator("header .brand")).to_have_text("watchdogd")
    button = page.get_by_role("button", name="Sign in to watchdogd")
    assert button.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(37, 99, 235)", "the dashboard's primary button"
    context.close()
    # Still unused: a browser with scripts signs in with it.
    context = browser.new_context()
    page = context.new_page()
    page.goto(URL + path)
    expect(page.locator("#who")).to_contain_text("admin")
    context.close()
