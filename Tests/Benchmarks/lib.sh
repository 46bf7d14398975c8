# Sourced by run.sh and stats.sh: the binary, daemons, wrk runs and the stats endpoints.
# Expects $repo and $work (a temp dir the caller removes) to be set.
. "$repo/Tests/lib/listening.sh"

# watchdogd_binary: prints the watchdogd to benchmark. $WATCHDOGD (a prebuilt binary) is used as
# it is; otherwise the release build that ships (deploy/release-build.sh: the Swift runtime
# linked statically as in the .deb and the container, the code laid out by lld), in
# $SCRATCH_PATH when set (swift build --scratch-path). Its memory is what is measured.
watchdogd_binary() {
  if [ -n "${WATCHDOGD:-}" ]; then
    [ -x "$WATCHDOGD" ] || { echo "WATCHDOGD=$WATCHDOGD is not an executable" >&2; return 1; }
    echo "$WATCHDOGD"
    return
  fi
  local args=()
  [ -n "${SCRATCH_PATH:-}" ] && args+=(--scratch-path "$SCRATCH_PATH")
  "$repo/deploy/release-build.sh" "${args[@]}"
}

# commit_label: the commit measured, with -dirty when the work tree has changes.
commit_label() {
  local commit
  commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null) || { echo unknown; return; }
  [ -n "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ] && commit+=-dirty
  echo "$commit"
}

# dated_payloads: copies payloads/*.json into $work/payloads (once) with each "occurred_at"
# moved by whole days, as the tests' fixtures are (Sources/WatchdogTesting/FixtureDay.swift):
# 2026-11-20 becomes three days before today (UTC), and so the payloads' times (2026-11-21,
# 22:26 to 23:28) land two days before today. Dates keep their length, so
# the bodies keep their bytes but for the date; a daemon never sees a week-old or year-old
# payload (admission marks sessions that started more than 192 h before they arrived). Prints
# the folder.
dated_payloads() {
  local dir=$work/payloads
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    python3 - "$repo/Tests/Benchmarks/payloads" "$dir" <<'PY'
import datetime, os, re, sys
source, target = sys.argv[1:3]
days = datetime.datetime.now(datetime.timezone.utc).date() - datetime.timedelta(days=3) - datetime.date(2026, 11, 20)
def move(match):
    return match.group(1) + (datetime.date.fromisoformat(match.group(2)) + days).isoformat()
for name in sorted(os.listdir(source)):
    if name.endswith(".json"):
        text = open(os.path.join(source, name)).read()
        open(os.path.join(target, name), "w").write(re.sub(r'("occurred_at": ")(\d{4}-\d{2}-\d{2})', move, text))
PY
  fi
  echo "$dir"
}

# start_daemon NAME DATA_DIR [serve options...]: starts `watchdogd serve` on a free port; sets
# daemon_pid and daemon_url. Rate limits stay on (their cost is part of the figure) but far above
# what one benchmark address sends; the per-address connection limit allows wrk -c256 plus curl;
# retention is off so nothing a run stores is pruned while it runs.
start_daemon() {
  local name=$1 dir=$2; shift 2
  : > "$work/$name.out"
  "$bin" serve --listen 127.0.0.1:0 --data-dir "$dir" --log-level warning --retention-days 0 \
    --rate-per-key "${RATE:-1000000}" --rate-per-address "${RATE:-1000000}" \
    --connection-limit 4096 --per-ip-connection-limit 1024 "$@" > "$work/$name.out" 2> "$work/$name.err" &
  daemon_pid=$!
  local tries=0
  daemon_url=
  # listening_url waits 10 s; a loaded machine (or a migration of a big data dir) may need more.
  while [ -z "$daemon_url" ] && [ "$tries" -lt 12 ] && kill -0 "$daemon_pid" 2>/dev/null; do
    daemon_url=$(listening_url "$work/$name.out"); tries=$((tries + 1))
  done
  if [ -z "$daemon_url" ]; then
    echo "watchdogd ($name) did not start:" >&2; cat "$work/$name.err" >&2; return 1
  fi
}

# stop_daemon: SIGTERM and wait (a clean close checkpoints the WAL).
stop_daemon() {
  [ -n "${daemon_pid:-}" ] || return 0
  kill "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=
}

# idle_rss_kb BINARY STATE: VmRSS of `watchdogd serve` on a fresh data dir with an app, 1 s after
# it listens, started from a copy of BINARY whose pages are in the page cache as STATE says:
#   disk     evicted first (sync, then posix_fadvise DONTNEED): read from disk, as at boot;
#   written  the fresh copy as cp left it: cached by being written, as a file just installed
#            or just built is.
# The kernel maps a binary's code around each page touched (64 KiB windows, more where it holds
# the file in larger folios), and measured here the same binary idles 1-1.5 MiB higher in the
# second state than in the first: run.sh prints both.
idle_rss_kb() {
  local binary=$1 state=$2 dir="$work/idle-$2-$RANDOM" pid url kb
  mkdir -p "$dir"
  "$binary" apps add com.example.mail --data-dir "$dir/data" > /dev/null 2>&1
  cp "$binary" "$dir/watchdogd"
  if [ "$state" = disk ]; then
    sync "$dir/watchdogd"
    python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$dir/watchdogd"
  fi
  "$dir/watchdogd" serve --listen 127.0.0.1:0 --data-dir "$dir/data" --log-level warning > "$dir/serve.out" 2> "$dir/serve.err" &
  pid=$!
  url=; for _ in 1 2 3; do [ -z "$url" ] && url=$(listening_url "$dir/serve.out"); done
  [ -n "$url" ] || { echo "watchdogd ($state) did not start:" >&2; cat "$dir/serve.err" >&2; kill "$pid"; rm -rf "$dir"; return 1; }
  sleep 1
  kb=$(rss_kb "$pid" VmRSS)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
  echo "$kb"
}

# rss_kb PID FIELD: VmRSS (now) or VmHWM (peak) of a process, in kB.
rss_kb() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }

# run_wrk NAME CONNECTIONS wrk-args...: runs wrk -t2 for $duration seconds (a response may take up
# to 60 s: a slow one is counted late, not dropped as a timeout), keeps its output in
# $work/wrk-NAME.txt and sets w_requests, w_seconds, w_rps (all responses), w_bad (non-2xx/3xx
# responses), w_errors (socket errors, or empty) and w_cpu (wrk's own CPU seconds: it shares
# the cores with the daemon). Prints any non-2xx and socket errors.
run_wrk() {
  local name=$1 connections=$2; shift 2
  local TIMEFORMAT='%U %S'   # bash's `time`: wrk's own CPU seconds, user and system
  { time wrk -t2 -c"$connections" -d"${duration}s" --timeout 60s "$@" > "$work/wrk-$name.txt" 2>&1; } 2> "$work/wrk-$name.cpu" \
    || { cat "$work/wrk-$name.txt" >&2; return 1; }
  w_cpu=$(awk '{print $1 + $2}' "$work/wrk-$name.cpu")
  read -r w_requests w_seconds < <(awk '/requests in/ {
      t = $4; sub(/,$/, "", t); s = t + 0
      if (t ~ /ms$/) s /= 1000; else if (t ~ /m$/) s *= 60; else if (t ~ /h$/) s *= 3600
      print $1, s }' "$work/wrk-$name.txt")
  w_bad=$(awk -F': *' '/Non-2xx or 3xx responses/ {print $2}' "$work/wrk-$name.txt")
  w_bad=${w_bad:-0}
  w_errors=$(sed -n 's/^ *Socket errors: *//p' "$work/wrk-$name.txt")
  w_rps=$(awk -v r="$w_requests" -v s="$w_seconds" 'BEGIN {printf "%.0f", r / s}')
  if [ "$w_bad" != 0 ] || [ -n "$w_errors" ]; then
    echo "  !! $name: $w_bad non-2xx/3xx responses of $w_requests${w_errors:+; socket errors: $w_errors}"
    sed -n 's/^\(status [0-9]*: [0-9]*\|first non-2xx: .*\)$/  !!   \1/p' "$work/wrk-$name.txt"
  fi
  if [ "$w_requests" -lt $((2 * connections)) ]; then
    echo "  !! $name: only $w_requests responses on $connections connections in ${duration}s: too short to measure, raise DURATION"
  fi
}

# The release-health endpoints, as NAME:PATH under /v1/apps/com.example.mail, for data made by
# `watchdogd demo --releases 50` (releases 13.x.y).
stats_endpoints=(
  "releases:/releases"
  "compare:/compare?base=13.2.0&target=13.4.9"
  "issues:/issues?release=13.4.9"
  "timeseries:/timeseries?release=13.4.9&bucket=hour"
  "keyboard:/keyboard"
  "keyboard-r:/keyboard?release=13.4.9"
  "reports:/reports?release=13.4.9&limit=50"
  "reports-k:/reports?release=13.4.9&kind=interaction_lock&limit=50"
)

# first_request_ms URL TOKEN: time of one GET in ms (curl's total), with its status; prints
# "MS STATUS".
first_request_ms() {
  curl -s -o /dev/null -w '%{time_total} %{http_code}\n' -H "Authorization: Bearer $2" "$1" \
    | awk '{printf "%.1f %s\n", $1 * 1000, $2}'
}

# latency URL TOKEN: wrk over one connection for $duration s; prints "P50_MS P95_MS REQUESTS ERRORS".
latency() {
  cat > "$work/latency.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $2"
done = function(summary, latency, requests)
  io.write(string.format("%.2f %.2f %d %d\n", latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.timeout))
end
LUA
  wrk -t1 -c1 -d"${duration}s" -s "$work/latency.lua" "$1" | tail -1
}

# stats_latencies DATA_DIR TOKEN: for each endpoint, restarts watchdogd on DATA_DIR and times the
# first request after the restart, then p50/p95 over $duration s. Prints a table and sets
# stats_p50s (comma list), stats_max_p95, stats_max_first (ms) and stats_errors.
stats_latencies() {
  local dir=$1 token=$2 endpoint name path first status p50 p95 count errors
  stats_p50s=; stats_max_p95=0; stats_max_first=0; stats_errors=0
  printf '  %-12s %12s %10s %10s %10s\n' endpoint "first ms" "p50 ms" "p95 ms" requests
  for endpoint in "${stats_endpoints[@]}"; do
    name=${endpoint%%:*}; path=${endpoint#*:}
    start_daemon stats "$dir"
    read -r first status < <(first_request_ms "$daemon_url/v1/apps/com.example.mail$path" "$token")
    read -r p50 p95 count errors < <(latency "$daemon_url/v1/apps/com.example.mail$path" "$token")
    stop_daemon
    [ "$status" = 200 ] || errors=$((errors + 1))
    printf '  %-12s %12s %10s %10s %10s%s\n' "$name" "$first" "$p50" "$p95" "$count" \
      "$([ "$status" != 200 ] && echo "  (first request: HTTP $status)")$([ "$errors" != 0 ] && echo "  ($errors errors)")"
    stats_p50s+="${stats_p50s:+, }$p50"
    stats_max_p95=$(awk -v a="$stats_max_p95" -v b="$p95" 'BEGIN {print (b > a ? b : a)}')
    stats_max_first=$(awk -v a="$stats_max_first" -v b="$first" 'BEGIN {print (b > a ? b : a)}')
    stats_errors=$((stats_errors + errors))
  done
}

# instructions_per_report BINARY [REQUESTS]: instructions watchdogd executes per stored report,
# counted by valgrind's callgrind (the figure does not move with the neighbours' load, unlike
# reports/s; perf's hardware counters are not available in this VM). The daemon runs on a fresh
# data dir under callgrind with instrumentation off; after two warm-up requests (statements
# prepared, type metadata loaded) it is switched on for REQUESTS (default 20) POSTs of
# payloads/batch100.json with fresh time-ordered ids, sent one after another with curl, and
# the count of all its threads is divided by the reports stored meanwhile. A binary with
# DWARF 5 debug info is copied without it first (valgrind 3.19 cannot read Swift's).
# Prints "INSTRUCTIONS_PER_REPORT REPORTS".
instructions_per_report() {
  local binary=$1 requests=${2:-20} dir="$work/callgrind-$RANDOM" pid url key before after total
  strip -g -o "$work/watchdogd-callgrind" "$binary"
  key=$("$work/watchdogd-callgrind" apps add com.example.mail --data-dir "$dir" 2>/dev/null)
  python3 - "$(dated_payloads)/batch100.json" "$dir/bodies" "$((requests + 2))" <<'PY'
import os, re, sys, time
template = open(sys.argv[1]).read()
os.makedirs(sys.argv[2])
ms = int(time.time() * 1000)
for request in range(int(sys.argv[3])):
    n = [0]
    def fresh(match):
        n[0] += 1
        t = ms + request
        return '"id": "%08x-%04x-7%03x-%04x-%012x"' % (t >> 16, t & 0xffff, n[0], 0x8000 + request, request * 512 + n[0])
    open("%s/%03d.json" % (sys.argv[2], request), "w").write(re.sub(r'"id": "[0-9a-f-]+"', fresh, template))
PY
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$dir/callgrind.out" \
    "$work/watchdogd-callgrind" serve --listen 127.0.0.1:0 --data-dir "$dir" --log-level warning --retention-days 0 \
    > "$dir/serve.out" 2> "$dir/serve.err" &
  pid=$!
  url=; for _ in 1 2 3 4 5 6; do [ -z "$url" ] && url=$(listening_url "$dir/serve.out"); done
  [ -n "$url" ] || { echo "watchdogd under callgrind did not start:" >&2; tail -5 "$dir/serve.err" >&2; kill "$pid"; return 1; }
  post() { curl -sf -o /dev/null -H "Authorization: Bearer $key" -H 'Content-Type: application/json' --data-binary @"$1" "$url/v1/reports"; }
  post "$dir/bodies/000.json"; post "$dir/bodies/001.json"
  before=$(sqlite3 "$dir/watchdog.sqlite3" "SELECT count(*) FROM reports")
  callgrind_control -i on "$pid" > /dev/null 2>&1
  for body in $(ls "$dir"/bodies/*.json | tail -n +3); do post "$body"; done
  callgrind_control -i off "$pid" > /dev/null 2>&1
  after=$(sqlite3 "$dir/watchdog.sqlite3" "SELECT count(*) FROM reports")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  total=$(awk '/^totals:/ {print $2; exit}' "$dir/callgrind.out")
  awk -v t="$total" -v n="$((after - before))" 'BEGIN {if (n > 0) printf "%.0f %d\n", t / n, n; else print "n/a 0"}'
}
