"""Fixtures: one Chromium for the run, a fresh signed-in context per test, the demo's tokens."""
import json
import os
import urllib.request

import pytest
from playwright.sync_api import expect, sync_playwright

# How long a failing wait takes to give up (a bound on failure, not a pass condition).
expect.set_options(timeout=10_000)

URL = os.environ["WATCHDOG_URL"].rstrip("/")
ADMIN = os.environ["WATCHDOG_ADMIN_TOKEN"]
VIEWER = os.environ["WATCHDOG_VIEWER_TOKEN"]
APP = "com.example.mail"


def api(method, path, body=None, token=ADMIN, headers=None):
    """Calls the API with a bearer token (to set up and to read the server's truth)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(URL + path, data=data, method=method,
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request) as response:
        text = response.read()
        return json.loads(text) if text else None, response.headers


def config():
    return api("GET", f"/v1/admin/apps/{APP}/config")[0]


# The longest text a client may send: 128-character screen and view names, a 64-character
# attribute key, a release whose version and build are 64 characters each.
LONG_SCREEN = "S" * 128
LONG_VIEW = "V" * 128
LONG_KEY = "K" * 64
LONG_VALUE = "W" * 256
LONG_VERSION = "1.0.0-" + "r" * 58  # the oldest release (semver), so the default views keep the demo's two
LONG_BUILD = "b" * 64
LONG_RELEASE = f"{LONG_VERSION} ({LONG_BUILD})"


@pytest.fixture(scope="session", autouse=True)
def long_client_text():
    """Reports with the longest text a client may send — in the newest release, and in a release
    with the longest name: layouts must survive it (points 6 and 7)."""
    import datetime
    import uuid
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    frame = {"x": 0, "y": 228, "width": 390, "height": 44}

    def report(version, build):
        return {"id": str(uuid.uuid4()), "kind": "view_frame_mismatch", "occurred_at": now, "app": APP,
                "release": {"version": version, "build": build, "channel": "beta"},
                "device": {"model": "iPhone15,2", "os": "iOS", "os_version": "18.1", "idiom": "phone", "locale": "en_US"},
                "session_id": "S-long", "install_id": "I-long", "app_state": "active",
                "screen": LONG_SCREEN, "view": {"name": LONG_VIEW, "expected": frame, "actual": {**frame, "y": 264}, "tolerance": 1.0},
                "attributes": {LONG_KEY: LONG_VALUE}, "logs": ["[keyboard][tracker] " + "x" * 200]}
    # Declared, as a CI job would: under the default `auto` admission a release whose only
    # data is two reports from one install stays unlisted.
    api("POST", f"/v1/admin/apps/{APP}/releases", {"version": LONG_VERSION, "build": LONG_BUILD})
    api("POST", "/v1/reports", {"reports": [report("14.2.0", "31245"), report(LONG_VERSION, LONG_BUILD)]}, token=os.environ["WATCHDOG_INGEST_KEY"])


OTHER_APP = "com.example.notes"


@pytest.fixture(scope="session", autouse=True)
def second_app():
    """A second app, so the App picker has somewhere to go (created before any page loads the list)."""
    import urllib.error
    try:
        api("POST", "/v1/admin/apps", {"app": OTHER_APP})
    except urllib.error.HTTPError as error:
        if error.code != 409:
            raise


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), args=["--no-sandbox"])
        yield browser
        browser.close()


class Signed:
    """A signed-in page plus what went wrong in it (console errors, failed requests)."""

    def __init__(self, browser, token, viewport, scale=1):
        self.context = browser.new_context(viewport=viewport, device_scale_factor=scale)
        self.context.set_default_timeout(15_000)
        self.page = self.context.new_page()
        self.errors = []
        self.uncaught = []  # exceptions and unhandled promise rejections of the page's own code
        self.failed = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: (self.errors.append(str(e)), self.uncaught.append(str(e))))
        self.page.on("response", lambda r: self.failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        if token:
            response = self.context.request.post(URL + "/v1/auth/login", data={"token": token})
            assert response.ok, response.text()

    def open(self, view, **params):
        query = "&".join(f"{k}={v}" for k, v in {"app": APP, **params}.items())
        self.page.goto(f"{URL}/#/{view}?{query}")
        # A view is shown once its own container replaced "Loading…".
        self.page.wait_for_selector("#main h1")
        return self.page


@pytest.fixture
def admin(browser):
    s = Signed(browser, ADMIN, {"width": 1300, "height": 900})
    yield s
    s.context.close()


@pytest.fixture
def viewer(browser):
    s = Signed(browser, VIEWER, {"width": 1300, "height": 900})
    yield s
    s.context.close()


@pytest.fixture
def signed(browser):
    """Factory: signed(token, width, height, scale) — scale 2 is a 200 % zoom of twice the width."""
    made = []

    def make(token=ADMIN, width=1300, height=900, scale=1):
        s = Signed(browser, token, {"width": width, "height": height}, scale)
        made.append(s)
        return s
    yield make
    for s in made:
        s.context.close()
