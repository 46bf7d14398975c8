#!/usr/bin/env bash
# A real peer in the same run: Bugsink (PyPI: a self-hosted, Sentry-compatible error tracker on
# Django and SQLite) and watchdogd, sent the same glitches by the same load generator, A B A B.
#
#   WATCHDOGD=/path/to/watchdogd Tests/Benchmarks/peer.sh     # default: a release build of this checkout
#   DURATION=20 ROUNDS=2 CONNECTIONS=32 ...                  # the defaults (about 4 minutes in all)
#
# Bugsink is installed once with pip into a virtualenv under $BENCH_DATA (default
# /tmp/watchdog-bench/bugsink-venv) and run as its single-server guide says: its
# `bugsink-create-conf --template=singleserver` settings (SQLite, events digested by the
# snappea worker), gunicorn with as many workers as Bugsink's own gunicorn.docker.conf.py
# starts (min(cores, 4)), and `bugsink-runsnappea`; its event quotas
# are raised so they do not cap the load, and BASE_URL is plain http on loopback (no proxy).
# Each glitch of payloads/batch100.json goes to Bugsink as a Sentry envelope (one event, the
# report under `extra`, its kind, screen, release and device as tags) and to watchdogd as
# itself, one per request, with wrk -t2 (a fresh id per request either way). After the load,
# each store is counted once nothing has moved for 5 s (Bugsink's digest included): events or
# reports stored per second from the load's start until the count last moved, CPU seconds per 1,000 stored (utime + stime of every
# process of the server, gunicorn workers and snappea included), idle and peak RSS (summed
# over those processes), bytes per stored event on disk. Not run in CI.
# Needs: python3-venv, wrk, sqlite3, curl, and what run.sh needs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
duration=${DURATION:-20}
rounds=${ROUNDS:-2}
connections=${CONNECTIONS:-32}
data_root=${BENCH_DATA:-/tmp/watchdog-bench}
venv=$data_root/bugsink-venv
work=$(mktemp -d)
pids=()
daemon_pid=
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; stop_daemon; wait 2>/dev/null; rm -rf "$work"' EXIT
. "$here/lib.sh"
{

if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 1024 ]; then ulimit -n 4096; fi
bin=$(watchdogd_binary)
if [ ! -x "$venv/bin/bugsink-manage" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q bugsink gunicorn
fi
echo "peer benchmark ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "Bugsink $("$venv/bin/bugsink-show-version" 2>/dev/null || echo '?'), watchdogd $bin"
echo "${duration}s per load, wrk -t2 -c$connections, $rounds rounds of Bugsink then watchdogd"
echo

# One glitch a request: the payload's reports, and as Sentry envelopes.
python3 - "$(dated_payloads)/batch100.json" "$work" <<'PY'
import json, sys
reports = json.load(open(sys.argv[1]))["reports"]
with open(sys.argv[2] + "/glitches.lua", "w") as out:
    out.write("reports = {\n")
    for r in reports:
        out.write("  %s,\n" % json.dumps(json.dumps(r, separators=(", ", ": "))))
    out.write("}\n")
PY
cat >> "$work/glitches.lua" <<'LUA'
-- MODE=bugsink: a Sentry envelope (header, item header, event) to /api/ID/envelope/;
-- MODE=watchdogd: the report itself in {"reports": [...]}. Either way a fresh id per request.
local mode = os.getenv("MODE")
local key = os.getenv("KEY")
local counter = 0
function init(args)
  -- Each thread its own seed (a fresh Lua state's math.random would give both threads the same ids).
  local seed = os.time() * 16 + tid
  local urandom = io.open("/dev/urandom", "rb")
  if urandom then local a, b, c = urandom:read(3):byte(1, 3); urandom:close(); seed = seed + a * 65536 + b * 256 + c end
  math.randomseed(seed)
  wrk.method = "POST"
  if mode == "bugsink" then
    wrk.headers["Content-Type"] = "application/x-sentry-envelope"
    wrk.headers["X-Sentry-Auth"] = "Sentry sentry_key=" .. key .. ", sentry_version=7, sentry_client=peer.sh/1"
  else
    wrk.headers["Content-Type"] = "application/json"
    wrk.headers["Authorization"] = "Bearer " .. key
  end
end
local function hex(n) local s = "" for _ = 1, n do s = s .. string.format("%x", math.random(0, 15)) end return s end
function request()
  counter = counter + 1
  local report = reports[(counter % #reports) + 1]
  local id = hex(8) .. "-" .. hex(4) .. "-7" .. hex(3) .. "-8" .. hex(3) .. "-" .. hex(12)
  report = report:gsub('"id": "[%x%-]+"', '"id": "' .. id .. '"', 1)
  if mode == "bugsink" then
    local kind = report:match('"kind": "([^"]*)"') or "glitch"
    local screen = report:match('"screen": "([^"]*)"') or ""
    local version = report:match('"version": "([^"]*)"') or ""
    local model = report:match('"model": "([^"]*)"') or ""
    local event_id = id:gsub("-", "")
    local event = string.format('{"event_id": "%s", "timestamp": %d, "platform": "cocoa", "level": "warning", '
      .. '"message": {"formatted": "%s on %s"}, "release": "%s", "tags": {"kind": "%s", "screen": "%s", "model": "%s"}, '
      .. '"extra": {"report": %s}}', event_id, os.time(), kind, screen, version, kind, screen, model, report)
    local body = string.format('{"event_id": "%s"}\n{"type": "event", "length": %d}\n%s\n', event_id, #event, event)
    return wrk.format(nil, nil, nil, body)
  end
  return wrk.format(nil, nil, nil, '{"reports": [' .. report .. ']}')
end
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end
bad = 0
function response(status, headers, body) if status >= 300 then bad = bad + 1 end end
function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + (thread:get("bad") or 0) end
  io.write(string.format("non-2xx: %d\n", total))
end
LUA

tree_pids() { # PID: it and its descendants
  local pid=$1 child
  echo "$pid"
  for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do tree_pids "$child"; done
}
tree_sum() { # FIELD PIDS...: sum of a /proc/PID/status field (kB) or, for cpu, utime + stime ticks
  local field=$1 total=0 pid value; shift
  for pid in "$@"; do
    if [ "$field" = cpu ]; then value=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)
    else value=$(awk -v f="$field:" '$1 == f {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0); fi
    total=$((total + ${value:-0}))
  done
  echo "$total"
}
ticks_per_second=$(getconf CLK_TCK)

# settle_count DATABASE TABLE: counts TABLE every second until the count has not moved for
# 5 s (at most 10 minutes); sets settled (the count) and settled_at (when it last moved, epoch s).
settle_count() {
  local previous=-1 current still=0 waited=0
  settled_at=$(date +%s.%N)
  while [ "$still" -lt 5 ] && [ "$waited" -lt 600 ]; do
    current=$(sqlite3 -cmd ".timeout 10000" "$1" "SELECT count(*) FROM $2" 2>/dev/null || echo busy)
    if [ "$current" = "$previous" ]; then still=$((still + 1)); else still=0; settled_at=$(date +%s.%N); fi
    previous=$current; sleep 1; waited=$((waited + 1))
  done
  settled=$current
}

# report NAME STORED SECONDS TICKS IDLE_KB PEAK_KB BYTES: one line of the table (SECONDS: from
# the load's start until the store's count last moved).
report() {
  awk -v name="$1" -v n="$2" -v s="$3" -v t="$4" -v hz="$ticks_per_second" -v idle="$5" -v peak="$6" -v b="$7" 'BEGIN {
    printf "| %s | %.0f | %.2f | %.0f MiB | %.0f MiB | %.0f B |\n", name, n / s, (n > 0 ? t / hz / n * 1000 : 0), idle / 1024, peak / 1024, (n > 0 ? b / n : 0) }'
}

bugsink_round() {
  local dir=$work/bugsink-$1 port
  mkdir -p "$dir"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$venv/bin/bugsink-create-conf" --template=singleserver --host=127.0.0.1 --port="$port" --base-dir="$dir" -o "$dir/bugsink_conf.py" > /dev/null
  cat >> "$dir/bugsink_conf.py" <<PY

# peer.sh: plain http on loopback, and quotas far above the benchmark's load.
BUGSINK["BASE_URL"] = "http://127.0.0.1:$port"
ALLOWED_HOSTS = ["127.0.0.1"]
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
BUGSINK.update({"MAX_EVENTS_PER_PROJECT_PER_5_MINUTES": 10**9, "MAX_EVENTS_PER_PROJECT_PER_HOUR": 10**9,
                "MAX_EVENTS_PER_PROJECT_PER_MONTH": 10**9, "MAX_EVENTS_PER_5_MINUTES": 10**9,
                "MAX_EVENTS_PER_HOUR": 10**9, "MAX_EVENTS_PER_MONTH": 10**9})
PY
  export PYTHONPATH=$dir DJANGO_SETTINGS_MODULE=bugsink_conf
  "$venv/bin/bugsink-manage" migrate -v0
  "$venv/bin/bugsink-manage" migrate snappea --database=snappea -v0
  local ids
  ids=$("$venv/bin/bugsink-manage" shell -c '
from teams.models import Team
from projects.models import Project
team = Team.objects.create(name="bench")
project = Project.objects.create(name="glitches", team=team)
print("project", project.id, project.sentry_key.hex)' | awk '$1 == "project" {print $2, $3}')
  local project=${ids%% *} key=${ids#* }
  (cd "$dir" && exec "$venv/bin/gunicorn" --bind="127.0.0.1:$port" --workers="$(( $(nproc) < 4 ? $(nproc) : 4 ))" \
    bugsink.wsgi > "$dir/gunicorn.log" 2>&1) &
  local gunicorn=$!; pids+=("$gunicorn")
  (cd "$dir" && exec "$venv/bin/bugsink-runsnappea" > "$dir/snappea.log" 2>&1) &
  local snappea=$!; pids+=("$snappea")
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.2; done
  sleep 2
  local all idle ticks before_ticks events start
  mapfile -t all < <(tree_pids "$gunicorn"; tree_pids "$snappea")
  idle=$(tree_sum VmRSS "${all[@]}")
  before_ticks=$(tree_sum cpu "${all[@]}")
  start=$(date +%s.%N)
  MODE=bugsink KEY=$key wrk -t2 -c"$connections" -d"${duration}s" --timeout 30s -s "$work/glitches.lua" \
    "http://127.0.0.1:$port/api/$project/envelope/" > "$work/wrk-bugsink-$1.txt"
  settle_count "$dir/db.sqlite3" events_event; events=$settled
  mapfile -t all < <(tree_pids "$gunicorn"; tree_pids "$snappea")
  ticks=$(( $(tree_sum cpu "${all[@]}") - before_ticks ))
  report "Bugsink, round $1" "$events" "$(awk -v a="$start" -v b="$settled_at" 'BEGIN {print b - a}')" "$ticks" "$idle" \
    "$(tree_sum VmHWM "${all[@]}")" "$(du -sb "$dir" 2>/dev/null | cut -f1)"
  echo "  (wrk: $(awk '/requests in/ {print $1}' "$work/wrk-bugsink-$1.txt") requests answered, $(sed -n 's/^non-2xx: //p' "$work/wrk-bugsink-$1.txt") not 2xx; $events events stored after the digest)" >&2
  kill "$gunicorn" "$snappea"; wait "$gunicorn" "$snappea" 2>/dev/null || true
  unset PYTHONPATH DJANGO_SETTINGS_MODULE
}

watchdogd_round() {
  local dir=$work/watchdogd-$1 key idle ticks stored start
  key=$("$bin" apps add com.example.mail --data-dir "$dir" 2>/dev/null)
  start_daemon "peer-$1" "$dir"
  sleep 1
  idle=$(rss_kb "$daemon_pid" VmRSS)
  ticks=$(awk '{print $14 + $15}' "/proc/$daemon_pid/stat")
  start=$(date +%s.%N)
  MODE=watchdogd KEY=$key wrk -t2 -c"$connections" -d"${duration}s" --timeout 30s -s "$work/glitches.lua" \
    "$daemon_url/v1/reports" > "$work/wrk-watchdogd-$1.txt"
  settle_count "$dir/watchdog.sqlite3" reports; stored=$settled
  echo "  (wrk: $(awk '/requests in/ {print $1}' "$work/wrk-watchdogd-$1.txt") requests answered, $(sed -n 's/^non-2xx: //p' "$work/wrk-watchdogd-$1.txt") not 2xx; $stored reports stored)" >&2
  ticks=$(( $(awk '{print $14 + $15}' "/proc/$daemon_pid/stat") - ticks ))
  local peak; peak=$(rss_kb "$daemon_pid" VmHWM)
  stop_daemon
  report "watchdogd, round $1" "$stored" "$(awk -v a="$start" -v b="$settled_at" 'BEGIN {print b - a}')" "$ticks" "$idle" "$peak" "$(du -sb "$dir" | cut -f1)"
}

echo "| server | stored per second (digest included) | CPU s per 1,000 stored | idle RSS | peak RSS | disk per stored |"
echo "|---|---|---|---|---|---|"
for round in $(seq "$rounds"); do
  bugsink_round "$round"
  watchdogd_round "$round"
done
exit
}
