#!/usr/bin/env bash
# run.sh for two watchdogd binaries, alternating (before, after, before, after: a neighbour's
# load hits both alike), each run with its own bare limits; prints every run's table, then the
# rows that differ between the binaries side by side, one column per run.
#
#   BEFORE=/path/to/old/watchdogd AFTER=/path/to/new/watchdogd Tests/Benchmarks/before-after.sh
#   ROUNDS=2 DURATION=4 ...                 # the defaults; other run.sh settings pass through
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
before=${BEFORE:?set BEFORE=/path/to/watchdogd}
after=${AFTER:?set AFTER=/path/to/watchdogd}
rounds=${ROUNDS:-2}
export DURATION=${DURATION:-4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=()
for round in $(seq "$rounds"); do
  for side in before after; do
    binary=$before; [ "$side" = after ] && binary=$after
    echo "== round $round, $side: $binary (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    WATCHDOGD=$binary "$here/run.sh" > "$work/$round-$side.txt"
    sed -n '/^| load /,$p' "$work/$round-$side.txt"
    runs+=("$round-$side")
    echo
  done
done
echo "== side by side (first cell of each row: watchdogd's figure; then the ratio column)"
for row in "POST 100 reports, unique ids, full, c32" "POST 100 reports, unique ids, full, c256" "POST 1 report, unique ids, full, c32" \
           "instructions per stored report" "disk per report, this run" "idle RSS" "peak RSS"; do
  echo "$row"
  for run in "${runs[@]}"; do
    grep -F "| $row" "$work/$run.txt" | awk -F' [|] ' -v run="$run" '{printf "  %-9s %s | %s\n", run, $2, $4}'
  done
done
