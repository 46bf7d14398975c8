#!/usr/bin/env bash
# Read-only storage, for real: watchdogd's data dir on an ext4 loop device mounted with
# errors=remount-ro (Debian's default for /), while clients keep posting.
#   1. ext4 is made to hit an error (its own sysfs trigger_fs_error) and turns itself read-only
#      under the running daemon: ingest answers 503 store_unavailable + Retry-After, never 202;
#      /readyz says not ready, /healthz and the stats reads keep answering;
#   2. SIGTERM still stops watchdogd in bounded time (its final checkpoint cannot be written);
#   3. the operator's repair (umount, e2fsck, mount) and a restart: every report that ever got
#      202 is in the database, it passes integrity_check, and the refused batch now goes in.
#      (Without JournalProbe, 1 or 2 batches acknowledged as the journal died were lost in about
#      1 run of 6 under load: Linux had reported their fdatasync as done.)
# An ext4 that aborted its journal cannot be remounted read-write while files are open on it, so
# step 3 needs the restart; recovery without one is what Tests/DiskFull/run.sh checks.
# Needs root (mount, losetup); .ci/run runs it. Exits non-zero on any broken expectation.
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
  # Lazily, so the loop device is let go even if something still holds a file; and rm stays off
  # a file system that is somehow still mounted.
  if mountpoint -q "$mnt"; then umount -l "$mnt" || true; fi
  rm -rf --one-file-system "$work" || true
}
trap cleanup EXIT
truncate -s 256M "$work/ext4.img"
mkfs.ext4 -q -F "$work/ext4.img"
mount_store() {
  mount -o loop,errors=remount-ro "$work/ext4.img" "$mnt" || { echo "FAIL: cannot loop-mount ext4 (run as root)" >&2; exit 1; }
}
mount_store
device=$(basename "$(findmnt -no SOURCE "$mnt")")
trigger="/sys/fs/ext4/$device/trigger_fs_error"
[ -w "$trigger" ] || { echo "FAIL: $trigger is missing; this kernel cannot fail an ext4 on demand" >&2; exit 1; }
data="$mnt/data"
# Its test clients all post from 127.0.0.1: every release listed on sight (docs/security.md, "What a holder of the ingest key can do").
key=$("$bin" apps add com.example.mail --admission open --data-dir "$data" 2>/dev/null)
viewer=$("$bin" tokens add --role viewer ci --data-dir "$data" 2>/dev/null)

# not_started: says whether the daemon died (and how) or hangs (and where), then fails.
not_started() {
  if kill -0 "$daemon_pid" 2>/dev/null; then
    echo "watchdogd $daemon_pid is running but did not say it listens within 30 s; its threads:" >&2
    for task in /proc/"$daemon_pid"/task/*; do echo "  $(cat "$task/comm" 2>/dev/null) $(cat "$task/wchan" 2>/dev/null) $(cut -d' ' -f3 "$task/stat" 2>/dev/null)" >&2; done
    command -v gdb > /dev/null && gdb -p "$daemon_pid" -batch -ex 'thread apply all bt 15' 2>/dev/null | grep -E '^Thread|^#' | head -80 >&2
  else
    set +e; wait "$daemon_pid"; status=$?; set -e
    echo "watchdogd exited with status $status before listening ($( [ "$status" -gt 128 ] && kill -l $((status - 128)) ))" >&2
  fi
  echo "FAIL: watchdogd did not start" >&2
  exit 1
}

start() {
  : > "$work/out"
  "$bin" serve --listen 127.0.0.1:0 --data-dir "$data" --rate-per-key 0 --rate-per-address 0 \
    --resources-dir "$repo/Resources" --log-level error > "$work/out" 2>&1 &
  daemon_pid=$!
  url=$(listening_url "$work/out")
  [ -n "$url" ] || { cat "$work/out"; not_started; }
}
start

WATCHDOG_URL=$url WATCHDOG_INGEST_KEY=$key VIEWER=$viewer TRIGGER=$trigger WORK=$work \
FIXTURE="$repo/Tests/Fixtures/reports/valid-batch.json" python3 - <<'PY'
import copy, json, os, sys, threading, time, urllib.request, uuid, datetime

url, key, viewer, work = os.environ["WATCHDOG_URL"], os.environ["WATCHDOG_INGEST_KEY"], os.environ["VIEWER"], os.environ["WORK"]
template = json.load(open(os.environ["FIXTURE"]))["reports"][0]
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
acknowledged, lock = set(), threading.Lock()

def batch(n=50):
    items = []
    for _ in range(n):
        r = copy.deepcopy(template)
        r["id"], r["occurred_at"] = str(uuid.uuid4()), now
        items.append(r)
    return items

def request(path, token, body=None):
    req = urllib.request.Request(url + path, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"},
        method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.headers, json.load(resp)
    except urllib.error.HTTPError as e:
        return e.code, e.headers, json.load(e)

failures = []  # from the client threads, where sys.exit would only end the thread

def post(items):
    status, headers, body = request("/v1/reports", key, {"reports": items})
    if status == 202:
        with lock:
            if body["rejected"]: failures.append(f"items rejected: {body['rejected'][:2]}")
            acknowledged.update(r["id"] for r in items)
    return status, headers.get("Retry-After"), body

def check(what, ok):
    if not ok: sys.exit("FAIL: " + what)
    print("ok:", what)

for _ in range(5): check("ingest on a writable ext4", post(batch())[0] == 202)

# 1. The file system turns read-only while four clients post without pause.
read_only_at = None
after = []  # (status, retry) of posts sent after the file system was read-only
stop = threading.Event()
def client():
    try:
        while not stop.is_set():
            sent = time.monotonic()
            status, retry, body = post(batch())
            if read_only_at is not None and sent > read_only_at:
                with lock: after.append((status, retry, body.get("error", {}).get("code")))
    except Exception as error:
        with lock: failures.append(f"client: {error!r}")
clients = [threading.Thread(target=client) for _ in range(4)]
for c in clients: c.start()
time.sleep(1.0)
with open(os.environ["TRIGGER"], "w") as f: f.write("watchdogd read-only storage test\n")
read_only_at = time.monotonic()
mounts = open("/proc/mounts").read()
time.sleep(3.0)
stop.set()
for c in clients: c.join()
check(f"the clients saw nothing wrong ({failures[:2]})", not failures)
check(f"{len(after)} posts after the file system went read-only, none acknowledged",
      len(after) >= 4 and all(s != 202 for s, _, _ in after))
check("every one of them is 503 store_unavailable with Retry-After",
      all(s == 503 and r is not None and c == "store_unavailable" for s, r, c in after))
pending = batch()
check("a fresh batch on the read-only store → 503", post(pending)[0] == 503)
status, _, body = request("/readyz", viewer)
check(f"/readyz → 503 ({body.get('error', {}).get('message', '')[:70]})", status == 503)
check("/healthz still answers 200 (the process is alive)", request("/healthz", viewer)[0] == 200)
status, _, body = request("/v1/apps/com.example.mail/releases", viewer)
check(f"stats reads keep working on the read-only store ({status})", status == 200 and body["releases"])
json.dump({"acknowledged": sorted(acknowledged), "pending": pending}, open(os.path.join(work, "state.json"), "w"))
print(f"acknowledged {len(acknowledged)} reports before and around the failure")
PY

# 2. SIGTERM: the final checkpoint fails, watchdogd still exits.
kill -TERM "$daemon_pid"
for _ in $(seq 150); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$daemon_pid" 2>/dev/null; then echo "FAIL: watchdogd still running 15 s after SIGTERM on a read-only store" >&2; exit 1; fi
set +e; wait "$daemon_pid"; code=$?; set -e
echo "ok: SIGTERM on the read-only store stopped watchdogd (exit $code)"
# Linux can report an fdatasync as done for a write its aborted ext4 journal threw away; the
# commit after which JournalProbe saw the journal dead was answered 503 instead of 202.
echo "info: $(grep -c 'stopped journaling' "$work/out" || true) commit(s) answered 503 because the journal died right after them"

# 3. Repair as an operator would, restart, and count.
umount "$mnt"
set +e; e2fsck -fy "$work/ext4.img" > "$work/fsck" 2>&1; fsck=$?; set -e
[ "$fsck" -le 1 ] || { cat "$work/fsck"; echo "FAIL: e2fsck exit $fsck" >&2; exit 1; }
echo "ok: e2fsck repaired the file system (exit $fsck)"
mount_store
start
WATCHDOG_URL=$url WATCHDOG_INGEST_KEY=$key DB="$data/watchdog.sqlite3" STATE="$work/state.json" python3 - <<'PY'
import json, os, sqlite3, sys, urllib.request
state = json.load(open(os.environ["STATE"]))
acknowledged = set(state["acknowledged"])
db = sqlite3.connect(os.environ["DB"])
stored = {row[0] for row in db.execute("SELECT id FROM report_ids")}
missing = acknowledged - stored
if missing: sys.exit(f"FAIL: {len(missing)} of {len(acknowledged)} acknowledged reports lost, e.g. {sorted(missing)[:3]}")
print(f"ok: after repair and restart all {len(acknowledged)} acknowledged reports are stored ({len(stored)} rows)")
integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
if integrity != "ok": sys.exit(f"FAIL: integrity_check: {integrity}")
print("ok: integrity_check")
req = urllib.request.Request(os.environ["WATCHDOG_URL"] + "/v1/reports", data=json.dumps({"reports": state["pending"]}).encode(),
    headers={"Authorization": "Bearer " + os.environ["WATCHDOG_INGEST_KEY"], "Content-Type": "application/json"}, method="POST")
with urllib.request.urlopen(req, timeout=30) as resp:
    body = json.load(resp)
    if resp.status != 202 or body["accepted"] != len(state["pending"]): sys.exit(f"FAIL: the refused batch after repair: {resp.status} {body}")
print(f"ok: the batch refused while read-only is accepted after repair ({body['accepted']} reports)")
PY
