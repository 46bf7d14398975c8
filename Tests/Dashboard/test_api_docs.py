"""Issue 43: the API reference at /docs/api — served offline (every request to the daemon
itself), under the dashboard's Content-Security-Policy, with axe finding nothing."""
import urllib.parse

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from conftest import URL


def test_the_api_reference_is_offline_under_the_csp_and_axe_clean(browser):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    violations = []
    page.on("console", lambda message: violations.append(message.text) if "Content Security Policy" in message.text else None)
    response = page.goto(URL + "/docs/api")
    assert response.status == 200
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "style-src 'self'" in csp and "unsafe-inline" not in csp
    expect(page.locator("h1")).to_contain_text("API reference")
    expect(page.locator("#post-v1-reports")).to_contain_text("POST /v1/reports")
    # The stylesheet applied (no inline style could have been).
    assert page.evaluate("getComputedStyle(document.body).display") == "grid"
    page.locator('nav a[href="#get-v1-apps-app-compare"]').click()
    expect(page.locator("#get-v1-apps-app-compare")).to_be_in_viewport()
    origin = urllib.parse.urlsplit(URL).netloc
    assert requested and all(urllib.parse.urlsplit(url).netloc == origin for url in requested), requested
    assert not violations, violations
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    context.close()
