"""Issue 42, point 5: Config effect says when a rule's observed split is not its percentage
(sample ratio mismatch), and that the split is as configured when it is."""
import datetime
import os
import re
import urllib.parse
import uuid

from playwright.sync_api import expect

from conftest import APP, api

INGEST = os.environ["WATCHDOG_INGEST_KEY"]
# Older than every demo release (semantic version), so no view's default changes; deleted after.
VERSION, BUILD = "1.0.1", "srm"
RELEASE = f"{VERSION} ({BUILD})"


def matched(install):
    """Whether the `split` rule switches this install: the server's own answer (GET /v1/config)."""
    query = urllib.parse.urlencode({"app": APP, "version": VERSION, "build": BUILD, "channel": "beta", "install_id": install})
    return api("GET", f"/v1/config?{query}", token=INGEST)[0]["auto_fix"] is True


def forged_installs(matched_count, unmatched_count):
    """Install ids chosen, as a forger holding the public ingest key could, to land 300/200."""
    chosen, inside, outside, index = [], 0, 0, 0
    while inside < matched_count or outside < unmatched_count:
        install = f"srm-{index}"
        index += 1
        if matched(install):
            if inside < matched_count:
                inside += 1
                chosen.append(install)
        elif outside < unmatched_count:
            outside += 1
            chosen.append(install)
    return chosen


def test_config_effect_names_a_sample_ratio_mismatch(admin):
    api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": [{"id": "split", "match": {"percent": 50}, "set": {"auto_fix": True}}]})
    declared = api("POST", f"/v1/admin/apps/{APP}/releases", {"version": VERSION, "build": BUILD})[0]
    # Everything comes from one address here: the app's limit of 20 new installs per network
    # and hour (which keeps a one-address forger from making a split at all) is raised for it.
    admission = api("GET", f"/v1/admin/apps/{APP}/admission")[0]
    api("PUT", f"/v1/admin/apps/{APP}/admission", {**admission, "new_installs_per_network_per_hour": 100000})
    try:
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        sessions = [{"id": str(uuid.uuid4()), "install_id": install, "started_at": now, "app": APP,
                     "release": {"version": VERSION, "build": BUILD, "channel": "beta"},
                     "device": {"model": "iPhone15,2", "os": "iOS", "os_version": "18.1", "idiom": "phone"}}
                    for install in forged_installs(300, 200)]
        api("POST", "/v1/sessions", {"sessions": sessions}, token=INGEST)

        page = admin.open("cohort", release=declared["id"], rule="split")
        warning = page.locator('[data-role="sample-ratio-warning"]')
        expect(warning).to_contain_text("Sample ratio mismatch")
        expect(warning).to_contain_text("60.0 % of installs matched (300 of 500) where the rule picks 50.0 %")
        expect(warning).to_contain_text("does not advance")

        # The demo's installs: random ids, split about evenly by the rule's hash.
        demo = admin.open("cohort", release="14.2.0 (31245)", rule="split")
        expect(demo.locator('[data-role="sample-ratio"]')).to_contain_text("Split as configured")
        expect(demo.locator('[data-role="sample-ratio-warning"]')).to_have_count(0)
        # Compare names the rule that switches part of both releases (issue 44).
        compare = admin.open("compare")
        note = compare.locator('[data-role="partial-rules"]')
        expect(note).to_contain_text("rule split (auto_fix on for 50 % of installs) in the base and target")
        expect(note.get_by_role("link", name="rule split")).to_have_attribute("href", re.compile(r"#/cohort\?app=.*&rule=split"))
        demo = admin.open("cohort", release="14.2.0 (31245)", rule="split")
        # A rule that changes nothing: an interval holding 1 says both ends and "no change", not "1.1× fewer".
        expect(demo.locator("#cohort .sentence")).to_contain_text(re.compile(r"between [0-9.]+× more and [0-9.]+× fewer sessions with [a-z ]+: no change"))
    finally:
        api("PUT", f"/v1/admin/apps/{APP}/admission", admission)
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": []})
        api("DELETE", f"/v1/admin/apps/{APP}/releases/{declared['id']}?" + urllib.parse.urlencode({"confirm": RELEASE}))
