#!/usr/bin/env bash
# Peak memory of watchdogd while it streams the whole report export as CSV (and as NDJSON, for
# comparison) at two sizes, 20 k and 200 k reports by default: the export is read a page at a
# time as the client downloads (ReportCSVExport), so the daemon's peak above its resident size
# before the export must not grow with the number of reports. No timing is judged.
#
#   Tests/Benchmarks/csv-export.sh                      # SIZES="20000 200000"
#   WATCHDOGD=.build/debug/watchdogd Tests/Benchmarks/csv-export.sh
#
# Data dirs come from `watchdogd demo --reports N` (no HTTP) in a temp dir. Before each export
# the kernel's peak (VmHWM) is reset (`echo 5 > /proc/PID/clear_refs`), so the peak read after
# it is the export's own. Exits 1 when the larger size's growth is more than 2× the smaller's
# plus 8 MiB (ten times the reports would be ten times the growth if the export were buffered).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
daemon_pid=
trap 'stop_daemon; wait 2>/dev/null; rm -rf "$work"' EXIT
. "$here/lib.sh"
{
bin=$(watchdogd_binary)
echo "watchdogd $(commit_label) ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-9s %-7s %10s %12s %12s %12s\n' reports format lines "RSS MiB" "peak MiB" "growth MiB"
declare -A growth
for size in ${SIZES:-20000 200000}; do
  dir="$work/data-$size"
  "$bin" demo --reports "$size" --releases 10 --data-dir "$dir" > /dev/null 2>&1
  token=$("$bin" tokens add --role viewer "bench-$$" --data-dir "$dir" 2>/dev/null)
  start_daemon "export-$size" "$dir"
  app="$daemon_url/v1/apps/com.example.mail"
  for format in csv ndjson; do
    # Warm: the first export maps the code and the store's pages; the second is measured.
    curl -sf -H "Authorization: Bearer $token" "$app/reports.$format" > /dev/null
    before=$(rss_kb "$daemon_pid" VmRSS)
    echo 5 > "/proc/$daemon_pid/clear_refs"
    lines=$(curl -sf -H "Authorization: Bearer $token" "$app/reports.$format" | wc -l)
    peak=$(rss_kb "$daemon_pid" VmHWM)
    growth[$size-$format]=$(( peak - before ))
    printf '%-9s %-7s %10s %12.1f %12.1f %12.1f\n' "$size" "$format" "$lines" "$(awk -v k="$before" 'BEGIN {print k / 1024}')" \
      "$(awk -v k="$peak" 'BEGIN {print k / 1024}')" "$(awk -v k="$(( peak - before ))" 'BEGIN {print k / 1024}')"
  done
  stop_daemon
  rm -rf "$dir"
done
read -r -a sizes <<< "${SIZES:-20000 200000}"
small=${sizes[0]} large=${sizes[${#sizes[@]} - 1]}
status=0
for format in csv ndjson; do
  if [ "${growth[$large-$format]}" -gt $(( 2 * ${growth[$small-$format]} + 8192 )) ]; then
    echo "$format: the export's peak grew with the reports ($small: ${growth[$small-$format]} kB, $large: ${growth[$large-$format]} kB)" >&2
    status=1
  fi
done
exit $status
}
