"""axe-core (axe-playwright-python) on every view, as admin and as viewer, and with the config
dialog open. Prints the violation count per view; asserts zero for the views in ZERO."""
import pytest
from axe_playwright_python.sync_playwright import Axe

from conftest import ADMIN, VIEWER

VIEWS = ["releases", "compare", "timeline", "issues", "reports", "report", "keyboard", "cohort", "config", "login"]
ZERO = set(VIEWS) | {"config-dialog"}
axe = Axe()


def violations(page):
    results = axe.run(page)
    return [(v["id"], len(v["nodes"])) for v in results.response["violations"]]


@pytest.mark.parametrize("role", ["admin", "viewer"])
@pytest.mark.parametrize("view", VIEWS + ["config-dialog"])
def test_axe(signed, role, view):
    if view == "config-dialog" and role == "viewer":
        pytest.skip("viewers get no dialog")
    s = signed(None if view == "login" else ADMIN if role == "admin" else VIEWER)
    page = s.page
    if view == "login":
        page.goto(s_url())
        page.get_by_role("heading", name="Sign in").wait_for()
    elif view == "report":
        s.open("reports").locator("#main table tbody tr td:first-child a").first.click()
        page.locator("#main svg, #main .error").first.wait_for()
    elif view == "config-dialog":
        s.open("config").locator('input[data-key="auto_fix"]').click()
        page.locator("dialog[open]").wait_for()
    else:
        s.open(view)
    page.wait_for_load_state("networkidle")
    found = violations(page)
    print(f"axe {role} {view}: {sum(n for _, n in found)} nodes, {found}")
    if view in ZERO:
        assert not found, found


def s_url():
    from conftest import URL
    return URL + "/"
