"""Issue 41, point 1: the dashboard's sign-in with a real OpenID provider (django-oidc-provider,
started by run.sh), through the whole browser flow in Chromium: the button, the provider's own
login page, the code with PKCE back to watchdogd, a session with the mapped role. And each refusal:
wrong issuer, wrong audience, expired token, bad signature (the provider made to misbehave through
its mode file: its real key signs the first three; a key it does not publish signs the fourth),
a replayed code (the provider itself refuses it), a missing or foreign state, nobody's role."""
import json
import os
import subprocess
import urllib.parse
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect, sync_playwright

expect.set_options(timeout=15_000)

URL = os.environ["WATCHDOG_URL"].rstrip("/")
ADMIN = os.environ["WATCHDOG_ADMIN_TOKEN"]
MODE_FILE = os.environ["OP_MODE_FILE"]


def api(path):
    request = urllib.request.Request(URL + path, headers={"Authorization": f"Bearer {ADMIN}"})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


def create_app(app):
    request = urllib.request.Request(URL + "/v1/admin/apps", data=json.dumps({"app": app}).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(request).read()
    except urllib.error.HTTPError as error:
        assert error.code == 409, error


def audit(action):
    return api(f"/v1/admin/audit?action={action}&limit=1000")["entries"]


def set_mode(mode):
    with open(MODE_FILE, "w") as file:
        file.write(mode)


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def context(browser):
    set_mode("")
    context = browser.new_context()
    context.set_default_timeout(15_000)
    yield context
    context.close()
    set_mode("")


def log_in_at_provider(page, user):
    """The provider's own login form (only the first time in a browser context)."""
    expect(page.get_by_role("heading", name="Test IdP")).to_be_visible()
    page.get_by_label("Username").fill(user)
    page.get_by_label("Password").fill("pw-" + user)
    page.get_by_role("button", name="Log in").click()


def start_from_dashboard(page, user):
    page.goto(URL + "/")
    page.get_by_role("button", name="Sign in with Test IdP").click()
    log_in_at_provider(page, user)


def session_of(page):
    return page.evaluate("fetch('/v1/auth/session').then(r => r.status === 200 ? r.json() : r.status)")


def record_callbacks(page):
    """The callback URLs the provider sent the browser back to (its redirect, seen as it passes)."""
    seen = []
    page.on("request", lambda request: seen.append(request.url) if "/auth/oidc/callback" in request.url else None)
    return seen


def fresh_state(context):
    """Starts a sign-in in this browser context (its wd_oidc cookie set) without going to the
    provider: the state the provider would have sent back."""
    response = context.request.get(URL + "/auth/oidc/start", max_redirects=0)
    assert response.status == 302, response.status
    location = urllib.parse.urlparse(response.headers["location"])
    return urllib.parse.parse_qs(location.query)["state"][0]


def test_an_admin_of_the_provider_signs_in_through_the_button_and_is_audited(context):
    page = context.new_page()
    before = len(audit("signin"))
    start_from_dashboard(page, "alice")
    expect(page.locator("#who")).to_contain_text("alice@example.com")
    session = session_of(page)
    assert session["role"] == "admin" and session["apps"] is None, session
    rows = [row for row in audit("signin") if "alice@example.com" in row["actor"]]
    assert len(audit("signin")) == before + 1 and rows, rows
    after = rows[0]["after"]
    assert after["method"] == "oidc" and after["role"] == "admin" and after["email"] == "alice@example.com"
    assert after["subject"] and after["subject"] in rows[0]["actor"]
    assert rows[0]["address"] == "127.0.0.1"
    # The session is a dashboard session like a token's: an admin route answers.
    assert page.evaluate("fetch('/v1/admin/audit').then(r => r.status)") == 200


def test_a_group_mapped_to_one_app_gets_that_role_for_that_app_only(context):
    create_app("com.example.notes")
    page = context.new_page()
    start_from_dashboard(page, "carol")
    expect(page.locator("#who")).to_contain_text("carol@example.com")
    session = session_of(page)
    assert session["role"] == "operator" and session["apps"] == ["com.example.mail"], session
    # Route scope checks apply to the person: an admin route is refused, another app is not there.
    assert page.evaluate("fetch('/v1/apps/com.example.mail/releases').then(r => r.status)") == 200
    assert page.evaluate("fetch('/v1/admin/audit').then(r => r.status)") == 403
    assert page.evaluate("fetch('/v1/apps/com.example.notes/releases').then(r => r.status)") == 404
    assert api("/v1/apps/com.example.notes/releases") is not None  # it is there, for others


def test_a_person_no_rule_maps_is_refused_with_a_clear_page(context):
    page = context.new_page()
    start_from_dashboard(page, "bob")
    expect(page.locator("main .error")).to_contain_text("no role in watchdogd is given to your groups or e-mail domain")
    assert session_of(page) == 401
    assert any("bob@elsewhere.org" in row["actor"] and "no role" in row["after"]["reason"] for row in audit("signin.failed"))


@pytest.mark.parametrize("mode, reason", [
    ("issuer", "not the configured one"),
    ("audience", "not meant for this client"),
    ("expired", "has expired"),
    ("rogue-key", "signature does not verify"),
])
def test_a_token_the_provider_got_wrong_is_refused(context, mode, reason):
    page = context.new_page()
    set_mode(mode)
    start_from_dashboard(page, "alice")
    expect(page.locator("main .error")).to_contain_text(reason)
    assert session_of(page) == 401
    assert any(reason in row["after"]["reason"] for row in audit("signin.failed"))
    # The same browser signs in once the provider behaves.
    set_mode("")
    page.goto(URL + "/auth/oidc/start")
    expect(page.locator("#who")).to_contain_text("alice@example.com")


def test_a_replayed_code_is_refused(context):
    page = context.new_page()
    held = record_callbacks(page)
    start_from_dashboard(page, "alice")
    expect(page.locator("#who")).to_contain_text("alice@example.com")
    assert len(held) == 1, held
    first = held[0]
    # The same answer again: this browser's sign-in was used up.
    page.goto(first)
    expect(page.locator("main .error")).to_contain_text("started no sign-in")
    # The used code with a fresh sign-in's state and cookie: watchdogd trades it, the provider refuses.
    state = fresh_state(context)
    code = urllib.parse.parse_qs(urllib.parse.urlparse(first).query)["code"][0]
    page.goto(f"{URL}/auth/oidc/callback?code={code}&state={state}")
    expect(page.locator("main .error")).to_contain_text("the provider refused the code: invalid_grant")
    assert any("invalid_grant" in row["after"]["reason"] for row in audit("signin.failed"))


def test_an_answer_without_state_or_with_another_browsers_state_is_refused(context, browser):
    page = context.new_page()
    state = fresh_state(context)
    page.goto(f"{URL}/auth/oidc/callback?code=0123456789abcdef")
    expect(page.locator("main .error")).to_contain_text("carries no state")
    assert session_of(page) == 401
    # A state this browser was not sent with (a refusal ends a sign-in: a new one first).
    fresh_state(context)
    page.goto(f"{URL}/auth/oidc/callback?code=0123456789abcdef&state={'0' * 64}")
    expect(page.locator("main .error")).to_contain_text("not the one this browser was sent with")
    # Another browser (no sign-in of its own) with this one's state: refused.
    other = browser.new_context()
    stranger = other.new_page()
    stranger.goto(f"{URL}/auth/oidc/callback?code=0123456789abcdef&state={state}")
    expect(stranger.locator("main .error")).to_contain_text("this browser started no sign-in")
    other.close()
    assert any("no state" in row["after"]["reason"] for row in audit("signin.failed"))


def test_a_flood_of_forged_callbacks_gets_429_and_leaves_a_bounded_trail():
    """Refusals spend the address's budget of failed sign-ins (--failed-auth-per-address, 10 a
    second in bursts of 100): 400 forged callbacks are mostly 429, without an audit row each."""
    before = len(audit("signin.failed"))
    statuses = []
    for n in range(400):
        try:
            urllib.request.urlopen(f"{URL}/auth/oidc/callback?code=forged{n}")
            statuses.append(200)
        except urllib.error.HTTPError as error:
            statuses.append(error.code)
            if error.code == 429:
                assert error.headers["Retry-After"]
    assert 429 in statuses and set(statuses) == {400, 429}, sorted(set(statuses))
    written = len(audit("signin.failed")) - before
    assert written == statuses.count(400) and written < 400, (written, statuses.count(400))


def test_a_rotated_key_is_fetched_again_and_signs_in(context, browser):
    page = context.new_page()
    start_from_dashboard(page, "alice")
    expect(page.locator("#who")).to_contain_text("alice@example.com")
    kid = subprocess.run(["python3", "manage.py", "setup_op", "--rotate"], cwd=os.environ["OP_DIR"], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()[-1]
    jwks = json.loads(urllib.request.urlopen(os.environ["OIDC_ISSUER"] + "/jwks").read())
    assert [key["kid"] for key in jwks["keys"]] == [kid]
    # A new browser: a new sign-in, whose token is signed with the new key.
    later = browser.new_context()
    again = later.new_page()
    start_from_dashboard(again, "alice")
    expect(again.locator("#who")).to_contain_text("alice@example.com")
    later.close()
