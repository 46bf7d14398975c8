"""Issue 18: the alerts card of the config area — a webhook and a rule created by clicking, and
"Send test" delivering a signed test to a loopback receiver this test runs, shown in the
delivery log."""
import hashlib
import hmac
import http.server
import json
import re
import threading

import pytest
from playwright.sync_api import expect

from conftest import APP, api


class Receiver(http.server.BaseHTTPRequestHandler):
    received = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Receiver.received.append((dict((k.lower(), v) for k, v in self.headers.items()), body))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver():
    Receiver.received = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


def alerts(kind):
    return api("GET", f"/v1/admin/apps/{APP}/alerts/{kind}")[0][kind]


def test_a_webhook_and_a_rule_made_by_clicking_and_send_test_reaches_the_receiver(admin, receiver):
    page = admin.open("config")
    card = page.locator('[data-role="alerts"]')
    expect(card.get_by_role("heading", name="Alerts")).to_be_visible()
    name = "<b>release</b> channel"  # text, never markup
    page.fill("#hook-name", name)
    page.fill("#hook-url", receiver)
    page.get_by_role("button", name="Add webhook").click()
    secret = page.locator('[data-role="secret-value"]')
    expect(secret).to_have_text(re.compile(r"^whsec_[0-9a-f]{64}$"))
    hooks = alerts("hooks")
    assert [h["name"] for h in hooks] == [name] and "secret" not in hooks[0]
    expect(card.locator("td", has_text=name).first).to_be_visible()
    assert card.locator("b").count() == 0

    page.select_option("#rule-alert-condition", "glitch_free_rate_below")
    expect(page.locator("#rule-alert-threshold")).to_be_visible()
    expect(page.locator("#rule-alert-kind")).to_be_hidden()
    page.fill("#rule-alert-name", "crash-free 14.x")
    page.fill("#rule-alert-threshold", "1")  # 1 % glitch-free: the demo data never fires it
    page.select_option("#rule-alert-installs", "attested")
    page.get_by_role("button", name="Add rule").click()
    expect(card.locator("td", has_text="crash-free 14.x")).to_be_visible()
    expect(card.locator("td", has_text="attested installs only")).to_be_visible()
    rules = alerts("rules")
    assert [(r["name"], r["condition"], r["threshold"], r["hook"], r["installs"]) for r in rules] == [
        ("crash-free 14.x", "glitch_free_rate_below", 0.01, hooks[0]["id"], "attested")]

    page.get_by_role("button", name=f"Send a test to webhook {name}").click()
    expect(page.locator('[data-role="alerts-message"]')).to_contain_text("Test delivered (HTTP 200")
    log = card.locator(f'[data-hook-log="{hooks[0]["id"]}"]')
    expect(log.locator("td", has_text="delivered")).to_be_visible()
    assert len(Receiver.received) == 1
    headers, body = Receiver.received[0]
    assert headers["watchdog-event"] == "test"
    expected = "sha256=" + hmac.new(secret.inner_text().encode(), headers["watchdog-timestamp"].encode() + b"." + body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["watchdog-signature"], expected)
    assert json.loads(body)["alert"]["id"] == headers["watchdog-delivery"]

    # Deleting asks first: Cancel has the focus, Escape keeps the rule and gives the focus back.
    dialog = page.locator('dialog[data-role="alerts-delete"]')
    delete_rule = page.get_by_role("button", name="Delete alert rule crash-free 14.x")
    delete_rule.click()
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(delete_rule).to_be_focused()
    assert len(alerts("rules")) == 1
    # Then by clicking Delete in the dialog: the rule, then its (now unused) hook.
    delete_rule.click()
    dialog.get_by_role("button", name="Delete", exact=True).click()
    expect(card.get_by_text("No alert rules.")).to_be_visible()
    # The rule's row is gone: focus is on the status line that says so (issue 44), not lost.
    expect(page.locator('[data-role="alerts-message"]')).to_have_text("Deleted.")
    expect(page.locator('[data-role="alerts-message"]')).to_be_focused()
    page.get_by_role("button", name=f"Delete webhook {name}").click()
    expect(dialog).to_contain_text("its secret cannot be shown again")
    dialog.get_by_role("button", name="Delete", exact=True).click()
    expect(card.get_by_text("No webhooks yet.")).to_be_visible()
    assert alerts("hooks") == [] and alerts("rules") == []
    assert not admin.uncaught


def test_a_viewer_is_told_alerts_are_for_admins(viewer):
    page = viewer.open("config")
    expect(page.get_by_text("Alert rules and webhooks are managed by admins.")).to_be_visible()
    expect(page.locator("#hook-url")).to_have_count(0)


def test_hooks_of_each_kind_made_by_choosing_it_and_a_teams_test_arrives_as_a_card(admin, receiver):
    """Issue 42: the hook form's kind selector shows each kind's fields; a Teams hook's test is an Adaptive Card."""
    page = admin.open("config")
    card = page.locator('[data-role="alerts"]')
    page.select_option("#hook-kind", "email")
    expect(page.locator("#hook-recipients")).to_be_visible()
    expect(page.locator("#hook-url")).to_be_hidden()
    expect(page.locator("#hook-routing-key")).to_be_hidden()
    page.fill("#hook-name", "ios team mail")
    page.fill("#hook-recipients", "oncall@example.com, ios@example.com")
    page.check("#hook-digest")
    page.get_by_role("button", name="Add webhook").click()
    expect(card.locator("td", has_text="oncall@example.com, ios@example.com")).to_be_visible()
    page.select_option("#hook-kind", "pagerduty")
    expect(page.locator("#hook-routing-key")).to_be_visible()
    expect(page.locator("#hook-digest")).to_be_hidden()
    page.select_option("#hook-kind", "teams")
    expect(page.locator("#hook-url")).to_be_visible()
    expect(page.locator("#hook-routing-key")).to_be_hidden()
    page.fill("#hook-name", "teams channel")
    page.fill("#hook-url", receiver)
    page.uncheck("#hook-digest")
    page.get_by_role("button", name="Add webhook").click()
    expect(page.locator('[data-role="secret-value"]')).to_have_text(re.compile(r"^whsec_[0-9a-f]{64}$"))
    hooks = {h["name"]: h for h in alerts("hooks")}
    mail, teams = hooks["ios team mail"], hooks["teams channel"]
    assert (mail["kind"], mail["recipients"], mail["digest"], mail["url"]) == ("email", ["oncall@example.com", "ios@example.com"], True, "")
    assert (teams["kind"], teams["digest"], teams["url"]) == ("teams", False, receiver)
    expect(card.locator("td", has_text="Microsoft Teams workflow")).to_be_visible()

    page.get_by_role("button", name="Send a test to webhook teams channel").click()
    expect(page.locator('[data-role="alerts-message"]')).to_contain_text("Test delivered (HTTP 200")
    headers, body = Receiver.received[0]
    message = json.loads(body)
    assert message["type"] == "message" and message["attachments"][0]["contentType"] == "application/vnd.microsoft.card.adaptive"
    content = message["attachments"][0]["content"]
    assert content["type"] == "AdaptiveCard" and content["version"] == "1.4" and content["body"]
    for hook in hooks.values():
        api("DELETE", f"/v1/admin/apps/{APP}/alerts/hooks/{hook['id']}")
    assert alerts("hooks") == []
    assert not admin.uncaught
