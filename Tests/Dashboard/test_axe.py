"""axe-core (axe-playwright-python) on every view, as admin and as viewer — with the charts'
tables open, with a rule in Config effect, the longest client text — and with each kind of
config dialog open. Prints the violation count per view; asserts zero for the views in ZERO."""
import os
import urllib.error

import pytest
from axe_playwright_python.sync_playwright import Axe

from conftest import ADMIN, APP, LONG_SCREEN, VIEWER, api

VIEWS = ["releases", "compare", "compare-tables-open", "timeline", "timeline-tables-open", "issues", "reports", "reports-of-an-issue", "report",
         "report-long-text", "keyboard", "cohort", "cohort-with-a-rule", "config", "login",
         "audit", "config-with-a-proposal", "compare-attested", "cohort-attested", "config-with-refusals"]
DIALOGS = ["config-dialog", "config-dialog-test-crash", "config-dialog-restore", "config-dialog-rule", "config-dialog-rule-test-crash",
           "config-dialog-rule-under-rollout", "rollout-start-dialog", "release-delete-dialog", "proposal-approve-dialog",
           "attestation-require-dialog"]
ZERO = set(VIEWS) | set(DIALOGS)
axe = Axe()


def violations(page):
    results = axe.run(page)
    return [(v["id"], len(v["nodes"])) for v in results.response["violations"]]


@pytest.mark.parametrize("role", ["admin", "viewer"])
@pytest.mark.parametrize("view", VIEWS + DIALOGS)
def test_axe(signed, request, role, view):
    if view in DIALOGS and role == "viewer":
        pytest.skip("viewers get no dialog")
    if view == "audit" and role == "viewer":
        pytest.skip("the audit log is for admins (test_audit_view.py)")
    s = signed(None if view == "login" else ADMIN if role == "admin" else VIEWER)
    page = s.page
    if view == "login":
        page.goto(s_url())
        page.get_by_role("heading", name="Sign in").wait_for()
    elif view == "report":
        s.open("reports").locator("#main table tbody tr td:first-child a").first.click()
        page.locator("#main svg, #main .error").first.wait_for()
    elif view.endswith("-tables-open"):  # the charts' tables too
        for summary in s.open(view.removesuffix("-tables-open")).locator("#main details > summary").all():
            summary.click()
    elif view == "cohort-with-a-rule":
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": [{"name": "half auto-fix", "match": {"percent": 50}, "set": {"auto_fix": True}}]})
        request.addfinalizer(lambda: api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": []}))
        s.open("cohort").locator("#cohort .sentence").wait_for()
    elif view == "compare-attested":
        s.open("compare", installs="attested").locator('[data-role="installs-shown"]').wait_for()
    elif view == "cohort-attested":
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": [{"name": "half auto-fix", "match": {"percent": 50}, "set": {"auto_fix": True}}]})
        request.addfinalizer(lambda: api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": []}))
        s.open("cohort", installs="attested").locator('[data-role="installs-shown"]').wait_for()
    elif view == "config-with-refusals":
        # A refusal counted for the app: a challenge while its App Attest is off (409 attestation_off).
        with pytest.raises(urllib.error.HTTPError) as refused:
            api("POST", "/v1/attest/challenge", {}, token=os.environ["WATCHDOG_INGEST_KEY"])
        assert refused.value.code == 409
        s.open("config").locator('[data-role="attestation-refusals"] table').wait_for()
    elif view == "attestation-require-dialog":
        page = s.open("config")
        page.select_option("#attestation-mode", "require")
        page.get_by_role("button", name="Save attestation settings").click()
        page.locator('dialog[open][data-role="attestation-require"]').wait_for()
    elif view == "reports-of-an-issue":
        s.open("issues").locator("#main table tbody tr td:first-child a").first.click()
        page.locator("#main table").wait_for()
    elif view == "report-long-text":
        s.open("issues").locator("#main table a", has_text=LONG_SCREEN).click()
        page.locator("#main table tbody tr td:first-child a").first.click()
        page.locator("#main svg").wait_for()
    elif view == "config-dialog":
        s.open("config").locator('input[data-key="auto_fix"]').click()
        page.locator("dialog[open]").wait_for()
    elif view == "config-dialog-test-crash":
        s.open("config").locator('input[data-key="test_crash"]').click()
        page.locator("dialog[open] [data-role=budget]").wait_for()
    elif view == "config-dialog-restore":
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"watchdog_interval_s": 3})  # a history to restore from
        request.addfinalizer(lambda: api("PATCH", f"/v1/admin/apps/{APP}/config", {"watchdog_interval_s": None}))
        s.open("config").get_by_role("button", name="Restore version 0 (built-in)").click()
        page.locator("dialog[open] [data-role=diff]").wait_for()
    elif view == "config-dialog-rule":
        page = s.open("config")
        page.get_by_label("Name").fill("axe rule")
        page.get_by_label("Sets auto_fix").select_option("on")
        page.get_by_role("button", name="Review new rule").click()
        page.locator("dialog[open] [data-role=diff]").wait_for()
    elif view == "config-dialog-rule-test-crash":  # issue 44: test_crash by a rule, through its guarded path
        page = s.open("config")
        page.get_by_label("Name").fill("axe crash rule")
        page.get_by_label("Channels").fill("beta")
        page.locator("#rule-set-test_crash").select_option("on")
        page.get_by_label("Sets test_crash_budget").fill("2")
        page.get_by_role("button", name="Review new rule").click()
        page.locator("dialog[open] [data-role=budget]").wait_for()
    elif view == "config-dialog-rule-under-rollout":  # issue 44: the change says it ends the rollout
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": [{"id": "axe-moving", "match": {"percent": 0}, "set": {"auto_fix": True}}]})
        request.addfinalizer(lambda: api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": []}))
        api("POST", f"/v1/admin/apps/{APP}/rollouts", {"rule": "axe-moving", "steps": [10, 100], "minimum_sessions": 1000000})
        page = s.open("config")
        page.get_by_role("button", name="Delete rule axe-moving").click()
        page.locator("dialog[open] [data-role=rollout-ends]").wait_for()
    elif view == "rollout-start-dialog":  # issue 44: a guarded rollout started from Config effect
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": [{"id": "axe-start", "match": {"percent": 0}, "set": {"auto_fix": True}}]})
        request.addfinalizer(lambda: api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": []}))
        s.open("cohort", rule="axe-start").get_by_role("button", name="Start guarded rollout").click()
        page.locator("dialog[open] [data-role=rollout-start-impact]").wait_for()
    elif view == "release-delete-dialog":
        from test_release_admission import unlisted_release
        release = unlisted_release("0.0.3-axe")
        s.open("releases").locator('[data-role="unlisted"]').get_by_role("button", name=f"Delete {release}").click()
        page.locator("dialog[open] [data-role=what]").wait_for()
    elif view in ("config-with-a-proposal", "proposal-approve-dialog"):
        # Four eyes: a pending change (with its diff) in the Config view.
        api("PUT", f"/v1/admin/apps/{APP}/approvals", {"require": ["config"]})
        request.addfinalizer(lambda: api("PUT", f"/v1/admin/apps/{APP}/approvals", {"require": []}))
        proposal = api("PATCH", f"/v1/admin/apps/{APP}/config", {"watchdog_interval_s": 9})[0]["proposal"]["id"]
        request.addfinalizer(lambda: api("POST", f"/v1/admin/apps/{APP}/proposals/{proposal}/refuse"))
        s.open("config").locator('[data-role="proposal"] [data-role="diff"]').wait_for()
        if view == "proposal-approve-dialog":
            page.get_by_role("button", name=f"Approve {proposal}").click()
            page.locator("dialog[open]").wait_for()
    else:
        s.open(view)
    page.wait_for_load_state("networkidle")
    found = violations(page)
    print(f"axe {role} {view}: {sum(n for _, n in found)} nodes, {found}")
    if view in DIALOGS:
        page.keyboard.press("Escape")  # nothing applied: the dialogs leave the config (and the releases) as they were
        page.locator("dialog[open]").wait_for(state="detached")
    if view in ZERO:
        assert not found, found


def s_url():
    from conftest import URL
    return URL + "/"
