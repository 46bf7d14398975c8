#!/usr/bin/env bash
# Disk full, for real: watchdogd's data dir on a 16 MiB tmpfs.
#   1. the file system is filled to the last byte → ingest answers 503 + Retry-After, never 202;
#   2. space returns → the same batches are accepted without restarting watchdogd;
#   3. kill -9 and restart: every report that ever got 202 is in the database.
# (Read-only storage is Tests/ReadOnlyStore/run.sh: an ext4 that aborted its journal.)
# Needs root (mount); .ci/run runs it. Exits non-zero on any broken expectation.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/Tests/lib/listening.sh"
bin=${WATCHDOGD:-$(swift build --package-path "$repo" --show-bin-path)/watchdogd}
work=$(mktemp -d)
mnt="$work/mnt"
mkdir -p "$mnt"
cleanup() {
  kill -9 "${daemon_pid:-}" 2>/dev/null || true
  wait 2>/dev/null || true
  umount "$mnt" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mount -t tmpfs -o size=16m tmpfs "$mnt" || { echo "FAIL: cannot mount a tmpfs (run as root)" >&2; exit 1; }
data="$mnt/data"
key=$("$bin" apps add com.example.mail --data-dir "$data" 2>/dev/null)

start() {
  : > "$work/out"
  "$bin" serve --listen 127.0.0.1:0 --data-dir "$data" --rate-per-key 0 --rate-per-address 0 \
    --resources-dir "$repo/Resources" --log-level critical > "$work/out" 2>&1 &
  daemon_pid=$!
  url=$(listening_url "$work/out")
}
start

WATCHDOG_URL=$url WATCHDOG_INGEST_KEY=$key DATA="$data" MNT="$mnt" FIXTURE="$repo/Tests/Fixtures/reports/valid-batch.json" \
python3 - <<'PY'
import copy, json, os, sqlite3, subprocess, sys, time, urllib.request, uuid, datetime

url, key, mnt = os.environ["WATCHDOG_URL"], os.environ["WATCHDOG_INGEST_KEY"], os.environ["MNT"]
template = json.load(open(os.environ["FIXTURE"]))["reports"][0]
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
acknowledged = set()

def batch(n=100):
    items = []
    for _ in range(n):
        r = copy.deepcopy(template)
        r["id"], r["occurred_at"] = str(uuid.uuid4()), now
        r["logs"] = [f"[keyboard][tracker] line {i} " + "x" * 150 for i in range(8)]
        items.append(r)
    return items

def post(items):
    req = urllib.request.Request(url + "/v1/reports", data=json.dumps({"reports": items}).encode(),
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = json.load(resp)
            status, retry = resp.status, None
    except urllib.error.HTTPError as e:
        body, status, retry = json.load(e), e.code, e.headers.get("Retry-After")
    if status == 202:
        if body["rejected"]: sys.exit(f"FAIL: items rejected: {body['rejected'][:2]}")
        acknowledged.update(r["id"] for r in items)
    return status, retry, body

def check(what, ok):
    if not ok: sys.exit("FAIL: " + what)
    print("ok:", what)

def fill():
    fd = os.open(os.path.join(mnt, "filler"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    for size in (1 << 20, 4096, 1):
        try:
            while os.write(fd, b"\0" * size): pass
        except OSError:
            pass
    os.close(fd)

def refused_until_full(label):
    statuses = []
    for _ in range(400):
        items = batch()
        status, retry, body = post(items)
        statuses.append(status)
        if status != 202:
            return items, status, retry, body, statuses
    sys.exit(f"FAIL: {label}: 400 batches accepted, never refused; statuses {statuses[-5:]}")

for _ in range(5): check("ingest with space", post(batch())[0] == 202)

# 1. Disk full.
fill()
pending, status, retry, body, statuses = refused_until_full("disk full")
check(f"disk full → 503 store_unavailable with Retry-After (after {statuses.count(202)} more accepted batches, got {status} {body.get('error', {}).get('code')})",
      status == 503 and retry is not None and body["error"]["code"] == "store_unavailable")
for _ in range(3): check("still full → 503", post(batch())[0] == 503)

# 2. Space returns: the refused batch goes in, no restart.
os.remove(os.path.join(mnt, "filler"))
for attempt in range(30):
    status = post(pending)[0]
    if status == 202: break
    time.sleep(1)
check(f"space back → the refused batch is accepted (attempt {attempt + 1})", status == 202)
for _ in range(5): check("ingest after recovery", post(batch())[0] == 202)

json.dump(sorted(acknowledged), open(os.path.join(os.path.dirname(mnt), "acknowledged.json"), "w"))
print(f"acknowledged {len(acknowledged)} reports")
PY

# 3. kill -9, restart on the same data: every acknowledged report is there.
kill -9 "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true
start
python3 - "$data/watchdog.sqlite3" "$work/acknowledged.json" <<'PY'
import json, sqlite3, sys
acknowledged = set(json.load(open(sys.argv[2])))
stored = {row[0] for row in sqlite3.connect(sys.argv[1]).execute("SELECT id FROM report_ids")}
missing = acknowledged - stored
if missing: sys.exit(f"FAIL: {len(missing)} of {len(acknowledged)} acknowledged reports lost, e.g. {sorted(missing)[:3]}")
print(f"ok: after kill -9 and restart all {len(acknowledged)} acknowledged reports are stored ({len(stored)} rows)")
PY
