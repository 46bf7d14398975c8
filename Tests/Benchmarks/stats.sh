#!/usr/bin/env bash
# Latency of the release-health endpoints at 1 M and 10 M stored reports (the first request
# after a restart, then p50/p95), the data dir's size per report, and the peak memory of a full
# NDJSON export.
#
#   Tests/Benchmarks/stats.sh                 # SIZES="1000000 10000000" by default
#   SIZES=1000000 Tests/Benchmarks/stats.sh   # just 1 M
#   WATCHDOGD=/path/to/watchdogd ...          # a prebuilt binary instead of building
#   SCRATCH_PATH=.build-bench ...             # build there (swift build --scratch-path)
#
# Data dirs are generated once with `watchdogd demo --reports N --releases 50` (no HTTP) and
# kept in $BENCH_DATA (default /tmp/watchdog-bench) for later runs (run.sh's GROWTH=1 uses the
# same ones). For each endpoint watchdogd is restarted and the first request timed (the page
# cache of the OS stays warm: this is a restart, not a cold boot); then wrk requests it over one
# connection for $DURATION seconds (default 5) and p50 and p95 are printed.
# Needs wrk, curl and sqlite3 (./deploy/setup.sh --bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
data_root=${BENCH_DATA:-/tmp/watchdog-bench}
duration=${DURATION:-5}
work=$(mktemp -d)
daemon_pid=
trap 'stop_daemon; wait 2>/dev/null; rm -rf "$work"' EXIT
. "$here/lib.sh"
{ # the whole script is read before it runs, so editing it meanwhile cannot break a run

bin=$(watchdogd_binary)
echo "watchdogd $(commit_label) ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"

for size in ${SIZES:-1000000 10000000}; do
  dir="$data_root/$size"
  if [ ! -f "$dir/watchdog.sqlite3" ]; then
    echo "generating $size reports in $dir ..." >&2
    start=$(date +%s)
    "$bin" demo --reports "$size" --releases 50 --data-dir "$dir" > /dev/null
    echo "generated in $(( $(date +%s) - start )) s" >&2
  fi
  token=$("$bin" tokens add --role viewer "bench-$$" --data-dir "$dir" 2>/dev/null)
  reports=$(sqlite3 "$dir/watchdog.sqlite3" "SELECT count(*) FROM reports")
  bytes=$(du -sb "$dir" | cut -f1)
  echo
  echo "== $reports reports, data dir $(( bytes / 1048576 )) MiB = $(( bytes / reports )) bytes per report (sessions, indexes and roll-ups included)"
  stats_latencies "$dir" "$token"
  echo "max p95 $stats_max_p95 ms, max first request after restart $stats_max_first ms$([ "$stats_errors" != 0 ] && echo ", $stats_errors errors")"
  if [ "$size" -le 1000000 ]; then
    start_daemon export "$dir"
    app="$daemon_url/v1/apps/com.example.mail"
    before=$(rss_kb "$daemon_pid" VmRSS)
    start=$(date +%s.%N)
    lines=$(curl -s -H "Authorization: Bearer $token" "$app/reports.ndjson" | wc -l)
    end=$(date +%s.%N)
    echo "NDJSON export: $lines reports in $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s; watchdogd RSS $(( before / 1024 )) MiB before, peak $(( $(rss_kb "$daemon_pid" VmHWM) / 1024 )) MiB"
    stop_daemon
  fi
done
exit
}
