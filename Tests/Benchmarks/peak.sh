#!/usr/bin/env bash
# Peak memory of watchdogd under the ingest loads of run.sh, one fresh daemon per load, binaries
# alternating: prints per binary and load VmHWM, reports/s acknowledged and non-2xx answers.
#   Tests/Benchmarks/peak.sh BINARY_A [BINARY_B ...]   (ROUNDS=2 DURATION=3 by default)
#   LOADS="100:256" SERVE_FLAGS="--body-memory 16" Tests/Benchmarks/peak.sh BINARY
# LOADS: reports per request and connections (default "100:32 100:256 1:256", run.sh's
# payloads and unique-ids.lua); SERVE_FLAGS: extra `watchdogd serve` flags for every daemon.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
work=$(mktemp -d)
daemon_pid=
trap 'stop_daemon; rm -rf "$work"' EXIT
payloads=$(dated_payloads)
duration=${DURATION:-3}
rounds=${ROUNDS:-2}
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge 1024 ] || ulimit -n 4096
read -r -a loads <<< "${LOADS:-100:32 100:256 1:256}"   # PER:CONNECTIONS
printf '%-10s %-34s %-12s %12s %14s %8s\n' round binary load "peak MiB" "reports/s" non-2xx
for round in $(seq "$rounds"); do
  for bin in "$@"; do
    for load in "${loads[@]}"; do
      per=${load%%:*}; connections=${load#*:}
      payload=report1; [ "$per" = 100 ] && payload=batch100
      dir="$work/data-$RANDOM"
      key=$("$bin" apps add com.example.mail --data-dir "$dir" 2>/dev/null)
      # shellcheck disable=SC2086
      start_daemon peak "$dir" ${SERVE_FLAGS:-}
      BODY_FILE="$payloads/$payload.json" INGEST_KEY=$key \
        run_wrk peak "$connections" -s "$here/unique-ids.lua" "$daemon_url/v1/reports" > "$work/notes" || true
      peak=$(rss_kb "$daemon_pid" VmHWM)
      reports=$(awk -v r="$w_requests" -v b="$w_bad" -v p="$per" -v s="$w_seconds" 'BEGIN {printf "%.0f", (r - b) * p / s}')
      printf '%-10s %-34s %-12s %12.1f %14s %8s\n' "$round" "$(basename "$(dirname "$bin")")/$(basename "$bin")" "POST $per c$connections" \
        "$(awk -v k="$peak" 'BEGIN {print k / 1024}')" "$reports" "$w_bad${w_errors:+ (errors: $w_errors)}"
      stop_daemon
      rm -rf "$dir"
    done
  done
done
