"""Tests/Grafana/run.sh's checks.

  check.py seed          declare a release with a hostile name in the demo app and post sessions for it
  check.py queries FILE  wait for Prometheus to have scraped watchdogd, then run every query of the
                         Grafana dashboard FILE (panel targets and query variables) and require data
"""
import json, os, re, sys, time, urllib.parse, urllib.request, uuid
from datetime import datetime, timezone

APP = "com.example.mail"
# Quotes, a backslash, braces and a newline-free label breaker: a release name is client text.
# Its version sorts newest, so it is no other release's predecessor: a declared release older
# than the demo's would become their base (the gate's rule), and with no glitches of its own
# it would leave them no ratio to chart.
HOSTILE = ('99.9.9"} evil{x="1', '7\\')


def call(method, url, token, body=None):
    request = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


def seed():
    base, admin, key = os.environ["WATCHDOG_URL"], os.environ["WATCHDOG_ADMIN_TOKEN"], os.environ["WATCHDOG_INGEST_KEY"]
    version, build = HOSTILE
    status, _ = call("POST", f"{base}/v1/admin/apps/{APP}/releases", admin, {"version": version, "build": build})
    assert status in (200, 201), status
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    sessions = [{"id": str(uuid.uuid4()), "install_id": f"I-hostile-{i}", "started_at": now, "app": APP,
                 "release": {"version": version, "build": build, "channel": "beta"},
                 "device": {"model": "iPhone15,2", "os": "iOS", "os_version": "18.1", "idiom": "phone"}} for i in range(20)]
    status, _ = call("POST", f"{base}/v1/sessions", key, {"sessions": sessions})
    assert status == 202, status


def prometheus(path, **params):
    url = os.environ["PROMETHEUS_URL"] + path + "?" + urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(url, timeout=10) as response:
        answer = json.load(response)
    assert answer["status"] == "success", answer
    return answer["data"]


def substitute(expr, app, release):
    return expr.replace("$app", app).replace("${release}", release).replace("$release", release)


def queries(path):
    dashboard = json.load(open(path))
    # Until the first scrape is in (Prometheus starts, then scrapes every second).
    deadline = time.time() + 60
    while True:
        try:
            if prometheus("/api/v1/query", query='up{job="watchdog-releases"} == 1')["result"] and \
               prometheus("/api/v1/query", query="watchdog_release_sessions")["result"]:
                break
        except OSError:
            pass
        assert time.time() < deadline, "Prometheus never scraped /v1/metrics/releases"
        time.sleep(0.5)

    hostile = '%s (%s)' % HOSTILE
    releases = prometheus("/api/v1/label/release/values")
    assert hostile in releases, f"the hostile release is not one label value: {releases}"

    checked = 0
    for variable in dashboard["templating"]["list"]:
        if variable["type"] != "query":
            continue
        match = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", variable["query"]["query"])
        assert match, variable
        selector, label = substitute(match.group(1), APP, ".*"), match.group(2)
        values = {series.get(label) for series in prometheus("/api/v1/series", **{"match[]": selector})} - {None}
        assert values, f"variable {variable['name']}: {selector} has no {label}"
        checked += 1

    def panels(items):
        for panel in items:
            yield panel
            yield from panels(panel.get("panels", []))

    metrics = set()
    for panel in panels(dashboard["panels"]):
        for target in panel.get("targets", []):
            expr = substitute(target["expr"], APP, ".*")
            result = prometheus("/api/v1/query", query=expr)["result"]
            assert result, f'panel "{panel["title"]}" query {target["refId"]}: {expr} returned nothing'
            metrics |= set(re.findall(r"\b(watchdog_[a-z_]+)\b", target["expr"]))
            checked += 1
    # Each metric the dashboard reads is one the endpoint serves (not only "some query returned").
    for metric in sorted(metrics):
        assert prometheus("/api/v1/query", query=f"count({metric})")["result"], f"{metric} is not served"
    print(f"grafana: {checked} queries of {os.path.basename(path)} answered by a real Prometheus, "
          f"{len(metrics)} metrics resolved: {', '.join(sorted(metrics))}")


if __name__ == "__main__":
    if sys.argv[1] == "seed":
        seed()
    else:
        queries(sys.argv[2])
