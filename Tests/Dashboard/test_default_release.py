"""Issue 44, point 4: a release listed without counted sessions (declared by CI, admitted by
hand, its reports in but no session start) is not the default of Compare, Issues, Over time or
Config effect: they open on the newest release with sessions, as the gate does."""
import datetime
import os
import urllib.parse
import uuid

from playwright.sync_api import expect

from conftest import APP, api

VERSION, BUILD = "99.0.0", "empty"
INGEST = os.environ["WATCHDOG_INGEST_KEY"]


def report():
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    frame = {"x": 0, "y": 228, "width": 390, "height": 44}
    return {"id": str(uuid.uuid4()), "kind": "view_frame_mismatch", "occurred_at": now, "app": APP,
            "release": {"version": VERSION, "build": BUILD, "channel": "beta"},
            "device": {"model": "iPhone15,2", "os": "iOS", "os_version": "18.1", "idiom": "phone"},
            "session_id": "S-no-start", "install_id": "I-no-start", "app_state": "active", "screen": "Compose",
            "view": {"name": "toolbar", "expected": frame, "actual": {**frame, "y": 264}, "tolerance": 1.0}}


def test_a_release_without_counted_sessions_is_not_the_default_target(admin):
    declared = api("POST", f"/v1/admin/apps/{APP}/releases", {"version": VERSION, "build": BUILD})[0]
    try:
        api("POST", "/v1/reports", {"reports": [report()]}, token=INGEST)
        listed = api("GET", f"/v1/apps/{APP}/releases")[0]["releases"]
        assert listed[0]["release"] == f"{VERSION} ({BUILD})" and listed[0]["sessions"] == 0, listed[0]
        page = admin.open("compare")
        expect(page.locator('select[name="target"] option:checked')).to_have_text("14.2.0 (31245)")
        expect(page.locator('select[name="base"] option:checked')).to_have_text("14.1.0 (31102)")
        expect(page.locator("#comparison")).to_contain_text("fewer sessions with keyboard glitches")
        for view, name in [("issues", "release"), ("timeline", "target"), ("cohort", "release")]:
            opened = admin.open(view)
            expect(opened.locator(f'select[name="{name}"] option:checked')).to_have_text("14.2.0 (31245)")
        # Chosen by hand, the empty release still opens.
        chosen = admin.open("compare", target=declared["id"])
        expect(chosen.locator('select[name="target"] option:checked')).to_have_text(f"{VERSION} ({BUILD})")
        # A side with no sessions has no bar and no 0 %: its cells say so.
        first = chosen.locator('[data-role="chart-table"]').first
        chosen.locator("details summary", has_text="Table").first.click()
        expect(first.locator("tbody tr").first).to_contain_text("no sessions")
        assert "0.0 %" not in first.locator("tbody tr").first.locator("td").nth(2).inner_text()
    finally:
        api("DELETE", f"/v1/admin/apps/{APP}/releases/{declared['id']}?" + urllib.parse.urlencode({"confirm": f"{VERSION} ({BUILD})"}))
