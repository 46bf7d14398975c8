"""Issue 44, "Evidence on screen": the Require dialog states per release the attested share of
its sessions and how many unattested sessions' uploads `require` would have refused; Compare and
Config effect offer "every install / attested installs" (kept in the URL, named on the page);
Compare names a guarded rollout that switches part of a release. Clicks only: the API only sets
up data (an attested fleet of watchdog-simulator's devices, as test_attestation_panel.py)."""
import datetime
import json
import os
import subprocess
import urllib.error
import uuid

import pytest
from playwright.sync_api import expect

from conftest import URL, api

EVIDENCE_APP = "com.example.evidence"
ROLLOUT_APP = "com.example.evidence-rollout"
RELEASES = [("14.1.0", "31102"), ("14.2.0", "31245")]


def new_app(app):
    try:
        api("POST", "/v1/admin/apps", {"app": app})
    except urllib.error.HTTPError as error:
        assert error.code == 409
    key = api("POST", f"/v1/admin/apps/{app}/keys", {"name": "evidence"})[0]["ingest_key"]
    for version, build in RELEASES:
        api("POST", f"/v1/admin/apps/{app}/releases", {"version": version, "build": build})
    return key


def sessions(app, key, version, build, installs, prefix, started=None):
    now = (started or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    batch = [{"id": str(uuid.uuid4()), "install_id": f"{prefix}-{index}", "app": app, "started_at": now,
              "release": {"version": version, "build": build, "channel": "beta"}} for index in range(installs)]
    answer = api("POST", "/v1/sessions", {"sessions": batch}, token=key)[0]
    assert answer["accepted"] == installs, answer


@pytest.fixture(scope="module")
def attested_fleet():
    """An app in `observe` whose releases hold attested sessions (8 simulated devices) and, in
    14.2.0, 10 unattested ones from invented installs. Yields its releases as the API lists them."""
    key = new_app(EVIDENCE_APP)
    api("PUT", f"/v1/admin/apps/{EVIDENCE_APP}/attestation", {"mode": "observe", "team_id": "ABCDE12345", "bundle_id": EVIDENCE_APP})
    run = subprocess.run([os.environ["WATCHDOG_SIMULATOR"], "--url", URL, "--ingest-key", key, "--app", EVIDENCE_APP, "--devices", "8",
                          "--sessions", "40", "--attest-ca", os.environ["WATCHDOG_ATTEST_CA"]], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["undelivered"] == 0
    sessions(EVIDENCE_APP, key, "14.2.0", "31245", 10, "forged")
    # And 5 unattested sessions of 14.1.0 started two days ago: not in the Require dialog's 24 hours.
    sessions(EVIDENCE_APP, key, "14.1.0", "31102", 5, "earlier", started=datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=2))
    releases = {r["release"]: r for r in api("GET", f"/v1/apps/{EVIDENCE_APP}/releases")[0]["releases"]}
    assert releases["14.2.0 (31245)"]["sessions"] == 30 and 1 <= releases["14.2.0 (31245)"]["attested_sessions"] <= 20, releases
    yield releases
    api("PUT", f"/v1/admin/apps/{EVIDENCE_APP}/attestation", {"mode": "off"})


def test_the_require_dialog_shows_the_attested_share_and_what_it_would_refuse(admin, attested_fleet):
    page = admin.open("config", app=EVIDENCE_APP)
    card = page.locator('[data-role="attestation"]')
    page.select_option("#attestation-mode", "require")
    card.get_by_role("button", name="Save attestation settings").click()
    dialog = page.locator('dialog[data-role="attestation-require"]')
    expect(dialog).to_contain_text("Attested share of the last 24 hours’ sessions, the 2 listed releases with the most")
    # The uploads stored under observe without an assertion (the invented installs' one, and
    # the simulated devices' before their keys were attested) are what require would refuse.
    unasserted = sum(r["count"] for r in api("GET", f"/v1/admin/apps/{EVIDENCE_APP}/attestation/refusals")[0]["refusals"] if r["kind"] == "would_refuse")
    assert unasserted >= 1
    expect(dialog.locator('[data-role="require-last-day"]')).to_have_text(
        f"In the last 24 hours {unasserted} {'upload' if unasserted == 1 else 'uploads'} (requests of reports or sessions) came without an assertion: require would refuse them. ")
    last_day = {r["release"]: r for r in api("GET", f"/v1/admin/apps/{EVIDENCE_APP}/attestation/refusals")[0]["sessions_by_release"]}
    assert set(last_day) == set(attested_fleet)
    # The sessions of two days ago (those the session limiter counted) are not in it.
    assert last_day["14.1.0 (31102)"]["sessions"] == 20 < attested_fleet["14.1.0 (31102)"]["sessions"], (last_day, attested_fleet)
    assert last_day["14.2.0 (31245)"] == {k: attested_fleet["14.2.0 (31245)"][k] for k in ("release", "id", "sessions", "attested_sessions")}
    for name, release in last_day.items():
        attested, total = release["attested_sessions"], release["sessions"]
        line = dialog.locator(f'[data-role="require-release"][data-release="{release["id"]}"]')
        # sessions 20 or 30: the share is never a tie to round, so toFixed and Python agree.
        expect(line).to_have_text(f"{name} {100 * attested / total:.1f} % ({attested} of {total} sessions attested), "
                                  f"{total - attested} unattested sessions whose uploads would have been refused")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert api("GET", f"/v1/admin/apps/{EVIDENCE_APP}/attestation")[0]["mode"] == "observe"
    assert not admin.uncaught


def side_sessions(page, role):
    return page.locator("#comparison tr", has=page.get_by_role("cell", name=role, exact=True)).locator("td").nth(2)


def test_compare_offers_attested_installs_and_says_which_are_shown(admin, attested_fleet):
    base, target = attested_fleet["14.1.0 (31102)"], attested_fleet["14.2.0 (31245)"]
    page = admin.open("compare", app=EVIDENCE_APP, base=base["id"], target=target["id"])
    shown = page.locator('[data-role="installs-shown"]')
    expect(shown).to_have_text("Shown: every install, attested or not.")
    expect(side_sessions(page, "Target")).to_have_text(str(target["sessions"]))
    page.get_by_label("installs", exact=True).select_option("attested")
    expect(shown).to_contain_text("Shown: attested installs only")
    assert "installs=attested" in page.url
    # The numbers are the attested sessions alone: 30 of 14.2.0's are not.
    attested = api("GET", f"/v1/apps/{EVIDENCE_APP}/compare?base={base['id']}&target={target['id']}&installs=attested")[0]
    assert attested["target"]["sessions"] == target["attested_sessions"] < target["sessions"], attested["target"]
    expect(side_sessions(page, "Target")).to_have_text(str(target["attested_sessions"]))
    expect(side_sessions(page, "Base")).to_have_text(str(attested["base"]["sessions"]))
    # Kept in the URL: a reload shows the attested installs again.
    page.reload()
    expect(page.locator('[data-role="installs-shown"]')).to_contain_text("Shown: attested installs only")
    expect(page.get_by_label("installs", exact=True)).to_have_value("attested")
    assert not admin.uncaught


def test_config_effect_offers_attested_installs_and_says_which_are_shown(admin, attested_fleet):
    api("PUT", f"/v1/admin/apps/{EVIDENCE_APP}/config",
        {"rules": [{"id": "half", "match": {"versions": ">=14.2.0", "percent": 50}, "set": {"auto_fix": True}}]})
    target = attested_fleet["14.2.0 (31245)"]
    page = admin.open("cohort", app=EVIDENCE_APP, release=target["id"], rule="half")
    shown = page.locator('[data-role="installs-shown"]')
    expect(shown).to_have_text("Shown: every install, attested or not.")
    cohorts = page.locator('[data-role="cohorts"]')
    everyone = api("GET", f"/v1/apps/{EVIDENCE_APP}/cohorts?release={target['id']}&rule=half")[0]["cohort"]
    expect(cohorts).to_contain_text(f"target = the {everyone['installs_matched']} installs the rule matched")
    page.get_by_label("installs", exact=True).select_option("attested")
    expect(shown).to_contain_text("Shown: attested installs only")
    assert "installs=attested" in page.url
    attested = api("GET", f"/v1/apps/{EVIDENCE_APP}/cohorts?release={target['id']}&rule=half&installs=attested")[0]["cohort"]
    # The invented installs are left out.
    assert attested["installs_matched"] + attested["installs_not_matched"] <= everyone["installs_matched"] + everyone["installs_not_matched"] - 10
    expect(cohorts).to_contain_text(f"target = the {attested['installs_matched']} installs the rule matched")
    expect(cohorts).to_contain_text(f"base = the {attested['installs_not_matched']} it did not")
    assert not admin.uncaught


def test_compare_names_the_rollout_switching_part_of_a_release(viewer):
    key = new_app(ROLLOUT_APP)
    for version, build in RELEASES:
        sessions(ROLLOUT_APP, key, version, build, 20, f"install-{version}")
    api("PUT", f"/v1/admin/apps/{ROLLOUT_APP}/config",
        {"rules": [{"id": "fix", "match": {"versions": ">=14.2.0", "percent": 0}, "set": {"auto_fix": True}}]})
    api("POST", f"/v1/admin/apps/{ROLLOUT_APP}/rollouts", {"rule": "fix", "steps": [50, 100], "minimum_sessions": 1000000, "minimum_hours": 1})
    ids = {r["release"]: r["id"] for r in api("GET", f"/v1/apps/{ROLLOUT_APP}/releases")[0]["releases"]}
    try:
        page = viewer.open("compare", app=ROLLOUT_APP, base=ids["14.1.0 (31102)"], target=ids["14.2.0 (31245)"])
        note = page.locator('[data-role="partial-rules"]')
        expect(note).to_contain_text("rule fix")
        expect(note).to_contain_text("in the target")
        expect(note.locator('[data-role="partial-rollout"]')).to_have_text(", moved by a guarded rollout at step 1 of 2 (50 %)")
        # Config effect opens on the installs and interval Compare showed.
        page.locator("select[name=installs]").select_option("attested")
        expect(page.locator('[data-role="installs-shown"]')).to_contain_text("attested")
        note.get_by_role("link", name="rule fix").click()
        expect(page.locator("#main h1")).to_contain_text("Config effect")
        expect(page.locator("select[name=installs]")).to_have_value("attested")
        expect(page.locator("select[name=rule]")).to_have_value("fix")
        assert not viewer.uncaught
    finally:
        api("POST", f"/v1/admin/apps/{ROLLOUT_APP}/rollouts/fix/abort")


REFUSALS_APP = "com.example.evidence-refusals"


def test_the_attestation_card_shows_the_last_days_refusals_by_code(viewer):
    key = new_app(REFUSALS_APP)
    page = viewer.open("config", app=REFUSALS_APP)
    card = page.locator('[data-role="attestation-refusals"]')
    expect(card.locator('[data-role="no-refusals"]')).to_be_visible()
    # Provoked through the API (the data this test reads): unattested uploads under require, a
    # malformed assertion, an attestation with a challenge never issued.
    api("PUT", f"/v1/admin/apps/{REFUSALS_APP}/attestation", {"mode": "require", "team_id": "ABCDE12345", "bundle_id": REFUSALS_APP})
    upload = {"sessions": [{"id": str(uuid.uuid4()), "install_id": "i-1", "app": REFUSALS_APP, "started_at": "2026-11-20T10:00:00.000Z",
                            "release": {"version": "14.2.0", "build": "31245"}}]}
    for headers, status in [({}, 401)] * 3 + [({"Watchdog-Assertion": "not base64"}, 400)]:
        with pytest.raises(urllib.error.HTTPError) as refused:
            api("POST", "/v1/sessions", upload, token=key, headers=headers)
        assert refused.value.code == status
    with pytest.raises(urllib.error.HTTPError) as refused:
        api("POST", "/v1/attest", {"install_id": "i-1", "key_id": "AQ" * 21 + "A=", "challenge": "Ag" * 21 + "A=", "attestation": "Aw" * 40}, token=key)
    assert refused.value.code == 403
    try:
        page.reload()
        rows = card.locator("tbody tr")
        expect(rows).to_have_count(3)
        expect(rows.nth(0)).to_have_text("Upload (reports, sessions)assertion_required3")
        expect(card.locator("tr", has_text="assertion_malformed")).to_have_text("Upload (reports, sessions)assertion_malformed1")
        expect(card.locator("tr", has_text="challenge_unknown")).to_have_text("Attestation (POST /v1/attest)challenge_unknown1")
        assert not viewer.uncaught
    finally:
        api("PUT", f"/v1/admin/apps/{REFUSALS_APP}/attestation", {"mode": "off"})
