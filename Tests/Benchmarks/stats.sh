#!/usr/bin/env bash
# Latency of the release-health endpoints at 1 M and 10 M stored reports, the data dir's size
# per report, and the peak memory of a full NDJSON export.
#
#   Tests/Benchmarks/stats.sh                 # SIZES="1000000 10000000" by default
#   SIZES=1000000 Tests/Benchmarks/stats.sh   # just 1 M
#
# Data dirs are generated once with `watchdogd demo --reports N --releases 50` (no HTTP) and
# kept in $BENCH_DATA (default /tmp/watchdog-bench) for later runs. Each endpoint is requested
# by wrk over one connection for $DURATION seconds (default 5); p50 and p95 are printed.
# Needs wrk and curl (./deploy/setup.sh --bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/Tests/lib/listening.sh"
data_root=${BENCH_DATA:-/tmp/watchdog-bench}
duration=${DURATION:-5}
work=$(mktemp -d)
trap 'kill "${daemon_pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

swift build -c release --package-path "$repo" --product watchdogd >&2
bin=$(swift build -c release --package-path "$repo" --show-bin-path)/watchdogd

cat > "$work/latency.lua" <<'LUA'
done = function(summary, latency, requests)
  io.write(string.format("%.2f %.2f %d %d\n", latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.timeout))
end
LUA

for size in ${SIZES:-1000000 10000000}; do
  dir="$data_root/$size"
  if [ ! -f "$dir/watchdog.sqlite3" ]; then
    echo "generating $size reports in $dir ..." >&2
    start=$(date +%s)
    "$bin" demo --reports "$size" --releases 50 --data-dir "$dir" > /dev/null
    echo "generated in $(( $(date +%s) - start )) s" >&2
  fi
  token=$("$bin" tokens add --role viewer "bench-$$" --data-dir "$dir" 2>/dev/null)
  "$bin" serve --listen 127.0.0.1:0 --data-dir "$dir" --log-level warning > "$work/out" &
  daemon_pid=$!
  url=$(listening_url "$work/out")
  app="$url/v1/apps/com.example.mail"
  reports=$(sqlite3 "$dir/watchdog.sqlite3" "SELECT count(*) FROM reports")
  bytes=$(du -sb "$dir" | cut -f1)
  echo
  echo "== $reports reports, data dir $(( bytes / 1048576 )) MiB = $(( bytes / reports )) bytes per report (sessions, indexes and roll-ups included)"
  printf '%-12s %10s %10s %10s\n' endpoint "p50 ms" "p95 ms" requests
  wrk_header="$work/auth.lua"
  for endpoint in \
      "releases:/releases" \
      "compare:/compare?base=13.2.0&target=13.4.9" \
      "issues:/issues?release=13.4.9" \
      "timeseries:/timeseries?release=13.4.9&bucket=hour" \
      "keyboard:/keyboard" \
      "keyboard-r:/keyboard?release=13.4.9" \
      "reports:/reports?release=13.4.9&limit=50" \
      "reports-k:/reports?release=13.4.9&kind=interaction_lock&limit=50"; do
    name=${endpoint%%:*}; path=${endpoint#*:}
    { cat "$work/latency.lua"; printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$token"; } > "$wrk_header"
    read -r p50 p95 count errors < <(wrk -t1 -c1 -d"${duration}s" -s "$wrk_header" "$app$path" | tail -1)
    printf '%-12s %10s %10s %10s%s\n' "$name" "$p50" "$p95" "$count" "$([ "$errors" != 0 ] && echo "  ($errors errors)")"
  done
  if [ "$size" -le 1000000 ]; then
    before=$(awk '/VmRSS/ {print $2}' /proc/$daemon_pid/status)
    start=$(date +%s.%N)
    lines=$(curl -s -H "Authorization: Bearer $token" "$app/reports.ndjson" | wc -l)
    end=$(date +%s.%N)
    echo "NDJSON export: $lines reports in $(printf '%.1f' "$(echo "$end - $start" | bc -l)") s; watchdogd RSS $(( before / 1024 )) MiB before, peak $(( $(awk '/VmHWM/ {print $2}' /proc/$daemon_pid/status) / 1024 )) MiB"
  fi
  kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true
done
