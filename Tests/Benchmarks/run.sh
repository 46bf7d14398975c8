#!/usr/bin/env bash
# Benchmark of watchdogd beside the bare-library limits, all measured in one run, ending in one
# markdown table: ingest, config, disk, growth, memory and stats rows, each with watchdogd's figure,
# the bare limit, the ratio and the goal.
#
#   Tests/Benchmarks/run.sh                       # DURATION=5 seconds per load
#   DURATION=2 Tests/Benchmarks/run.sh            # shorter
#   GROWTH=1 Tests/Benchmarks/run.sh              # also ingest into 1 M stored reports, and the
#   GROWTH=1 GROWTH_REPORTS=10000000 ...          #   stats endpoints' latency on that data
#   WATCHDOGD=/path/to/watchdogd ...              # a prebuilt binary instead of building
#   SCRATCH_PATH=.build-bench ...                 # build there (swift build --scratch-path)
#
# Yardsticks (Tests/Benchmarks/limits, built here with cc -O2): http_limit is libmicrohttpd
# set up as watchdogd sets it up, answering constants. foundation_floor.swift (swiftc, static
# like the .deb's build) is the idle memory of a Swift program that links Foundation and uses
# it as watchdogd's start does (JSON, dates, UUIDs; no ICU): a floor for the idle RSS row. Two storage limits, WAL, at synchronous
# NORMAL or FULL, in transactions of 1 or 100 rows:
# - minimal (sqlite_limit.c): report-sized rows (a UUID v7 key as 16 bytes, in the order
#   watchdogd keys WatchdogKit's ids; one secondary index; a ~1 KB body as text) and an hourly
#   roll-up upsert — fewer rows, columns and indexes than watchdogd writes, but more body bytes
#   (watchdogd stores a body compressed to about a quarter);
# - same work (sqlite_same_work.c): exactly the rows watchdogd wrote for the POST 100 load
#   (copied from its database after that load: the same ids in the same order, the same stored
#   body bytes, every roll-up row it upserts per transaction) into a database with watchdogd's
#   own schema (its tables and indexes).
# Per load: watchdogd's CPU (utime + stime from /proc) per stored report, in µs. Instructions
# per stored report: callgrind on a fixed load (lib.sh, instructions_per_report; CALLGRIND=0
# skips it), a figure that does not move with the neighbours' load. Payloads: Tests/Benchmarks/payloads
# (unique-ids.lua gives every report a fresh id on every request, so each 202 stores new rows;
# time-ordered like WatchdogKit's, or random with IDS=random).
#
# Ingest runs at 32 and at 256 connections, against a daemon at synchronous=full (the default)
# and one at normal, each on a fresh data dir. Rows stored are counted with sqlite3 before and
# after each load, then the script waits until the daemon has committed what wrk left queued.
# A load whose responses take longer than DURATION is flagged ("raise DURATION"); any answer
# other than 2xx is printed with its status. Memory: VmRSS a second after start (idle) and
# VmHWM after the loads (peak), of a build with the Swift runtime linked statically, as shipped.
# GROWTH=1 makes (once, kept in $BENCH_DATA/N like stats.sh; default /tmp/watchdog-bench) a data
# dir of N reports with `watchdogd demo`, copies it and measures the same ingest load there.
# Needs: wrk, curl, sqlite3, cc, valgrind, libmicrohttpd-dev, libsqlite3-dev (./deploy/setup.sh --bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
duration=${DURATION:-5}
growth=${GROWTH:-0}
growth_reports=${GROWTH_REPORTS:-1000000}
data_root=${BENCH_DATA:-/tmp/watchdog-bench}
work=$(mktemp -d)
daemon_pid=; limit_pid=
trap 'stop_daemon; [ -n "$limit_pid" ] && kill "$limit_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
. "$here/lib.sh"
{ # the whole script is read before it runs, so editing it meanwhile cannot break a run
payloads=$(dated_payloads)

# wrk -c256 needs 256 sockets here and as many in the daemon.
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 1024 ]; then
  ulimit -n 4096 2>/dev/null || { echo "ulimit -n is $(ulimit -n); wrk -c256 needs more (ulimit -n 4096)" >&2; exit 1; }
fi
bin=$(watchdogd_binary)
cc -O2 -o "$work/http_limit" "$here/limits/http_limit.c" $(pkg-config --cflags --libs libmicrohttpd)
cc -O2 -o "$work/sqlite_limit" "$here/limits/sqlite_limit.c" -lsqlite3
cc -O2 -o "$work/sqlite_same_work" "$here/limits/sqlite_same_work.c" -lsqlite3
swiftc -O -static-stdlib -o "$work/foundation_floor" "$here/limits/foundation_floor.swift" > "$work/foundation_floor.build" 2>&1 \
  || { cat "$work/foundation_floor.build" >&2; exit 1; }

commit=$(commit_label)   # once: a commit made during the run must not relabel it
echo "watchdogd $commit ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "${duration}s per load, wrk -t2 at 32 and 256 connections; GROWTH=$growth"
echo

count_reports() { sqlite3 "$1/watchdog.sqlite3" "SELECT count(*) FROM reports"; }
fmt() { awk -v v="$1" 'BEGIN {printf "%.0f", v}' | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta'; }   # 12,345
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b + 0 == 0) print "n/a"; else printf "%.2f", a / b}'; }
report_bytes() { awk -v b="$(wc -c < "$1")" -v n="$2" 'BEGIN {printf "%.0f", b / n}'; }

post_lua() { # FILE BODY: a wrk script posting BODY as it is (the bare limit ignores ids)
  printf 'local f = io.open("%s", "r"); wrk.body = f:read("*a"); f:close()\nwrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer bench"\n' "$2" > "$1"
}

# ---------------------------------------------------------------- bare limits
echo "== bare limits"
"$work/http_limit" 0 2 > "$work/http_limit.out" & limit_pid=$!
limit_url=$(listening_url "$work/http_limit.out")
sleep 1
limit_idle_kb=$(rss_kb "$limit_pid" VmRSS)
printf 'wrk.headers["Authorization"] = "Bearer bench"\n' > "$work/limit-get.lua"
run_wrk limit-get 32 -s "$work/limit-get.lua" "$limit_url/v1/config"
limit_get=$w_rps
limit_etag=$(curl -s -D - -o /dev/null "$limit_url/v1/config" | awk -F': ' 'tolower($1) == "etag" {print $2}' | tr -d '\r')
printf "wrk.headers[\"If-None-Match\"] = '%s'\n" "$limit_etag" > "$work/limit-304.lua"
run_wrk limit-304 32 -s "$work/limit-304.lua" "$limit_url/v1/config"
limit_304=$w_rps
post_lua "$work/limit-post1.lua" "$payloads/report1.json"; post_lua "$work/limit-post100.lua" "$payloads/batch100.json"
run_wrk limit-post1 32 -s "$work/limit-post1.lua" "$limit_url/v1/reports"; limit_post1=$w_rps
run_wrk limit-post100 32 -s "$work/limit-post100.lua" "$limit_url/v1/reports"; limit_post100=$w_rps
limit_peak_kb=$(rss_kb "$limit_pid" VmHWM)
kill "$limit_pid"; wait "$limit_pid" 2>/dev/null || true; limit_pid=
printf '%-44s %10s req/s\n' "libmicrohttpd constant: GET 200" "$(fmt "$limit_get")" \
  "libmicrohttpd constant: GET 304" "$(fmt "$limit_304")" \
  "libmicrohttpd: POST 1 report, body read" "$(fmt "$limit_post1")" \
  "libmicrohttpd: POST 100 reports, body read" "$(fmt "$limit_post100")"
printf '%-44s %10s reports/s of transport (c32)\n' "" "$(fmt $((limit_post100 * 100)))"
echo "libmicrohttpd constant: RSS idle $((limit_idle_kb / 1024)) MiB, peak $((limit_peak_kb / 1024)) MiB"
"$work/foundation_floor" 5 > "$work/foundation_floor.out" & floor_pid=$!
for _ in $(seq 50); do grep -q ready "$work/foundation_floor.out" 2>/dev/null && break; sleep 0.1; done
sleep 1
floor_idle_kb=$(rss_kb "$floor_pid" VmRSS)
kill "$floor_pid"; wait "$floor_pid" 2>/dev/null || true
echo "Swift + Foundation floor (static, as watchdogd links and starts them): RSS $((floor_idle_kb / 1024)) MiB"
for load in 100:full 100:normal 1:full; do
  rows=${load%%:*}; sync=${load#*:}
  line=$("$work/sqlite_limit" "$work/limit.db" "$duration" "$rows" "$sync")
  rate=$(sed 's/.*rows_per_s=\([0-9]*\).*/\1/' <<<"$line")
  printf -v "sqlite_${rows}_$sync" '%s' "$rate"
  printf '%-44s %10s rows/s  (%s)\n' "raw SQLite minimal, $rows row(s)/txn, $sync" "$(fmt "$rate")" "$line"
done
rm -f "$work"/limit.db*
echo

# ---------------------------------------------------------------- watchdogd
# Ten rules, as a real app might have: version ranges, channels, idioms and percentages.
rules='{"rules": ['
for i in $(seq 0 9); do
  [ "$i" -gt 0 ] && rules+=','
  rules+="{\"id\": \"rule$i\", \"match\": {\"versions\": \">=14.$i.0 <15\", \"channels\": [\"beta\"], \"idioms\": [\"phone\", \"pad\"], \"percent\": $(( (i + 1) * 9 ))}, \"set\": {\"frame_tolerance_pt\": $i}}"
done
rules+=']}'
config_path="/v1/config?app=com.example.mail&version=14.2.0&build=31245&channel=beta&idiom=phone&install_id=I-42"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # utime + stime
ticks_per_second=$(getconf CLK_TCK)

# ingest NAME DATA_DIR PER CONNECTIONS: POSTs report1 (PER=1) or batch100 (PER=100) with fresh
# ids; sets acked (reports/s acknowledged by 2xx), stored (rows/s counted in the database), cpu
# (µs of the daemon's CPU per row stored, the queue wrk left included) and prints a line.
ingest() {
  local name=$1 dir=$2 per=$3 connections=$4 before after payload=report1 ticks settled
  [ "$per" = 100 ] && payload=batch100
  before=$(count_reports "$dir")
  ticks=$(cpu_ticks "$daemon_pid")
  BODY_FILE="$payloads/$payload.json" INGEST_KEY=$key \
    run_wrk "$name" "$connections" -s "$here/unique-ids.lua" "$daemon_url/v1/reports"
  after=$(count_reports "$dir")
  acked=$(awk -v r="$w_requests" -v b="$w_bad" -v p="$per" -v s="$w_seconds" 'BEGIN {printf "%.0f", (r - b) * p / s}')
  stored=$(awk -v n="$((after - before))" -v s="$w_seconds" 'BEGIN {printf "%.0f", n / s}')
  short=; [ "$w_requests" -lt $((2 * connections)) ] && short=" (only $w_requests responses: raise DURATION)"
  printf '%-44s %8s req/s %10s reports/s acknowledged %10s rows/s stored (%s rows)\n' \
    "$name" "$(fmt "$w_rps")" "$(fmt "$acked")" "$(fmt "$stored")" "$(fmt $((after - before)))"
  if [ $((after - before)) -lt $(( (w_requests - w_bad) * per )) ]; then
    echo "  !! $name: fewer rows stored than acknowledged ($((after - before)) < $(( (w_requests - w_bad) * per )))"
  fi
  settle "$dir" "$after"
  settled=$(count_reports "$dir")
  cpu=$(awk -v t="$(( $(cpu_ticks "$daemon_pid") - ticks ))" -v hz="$ticks_per_second" -v n="$((settled - before))" \
    'BEGIN {if (n > 0) printf "%.1f", t / hz * 1e6 / n; else print "n/a"}')
  wrk_cpu=$(awk -v t="$w_cpu" -v n="$((after - before))" 'BEGIN {if (n > 0) printf "%.1f", t * 1e6 / n; else print "n/a"}')
  echo "  watchdogd CPU: $cpu µs per stored report; wrk (the load, on the same cores): $wrk_cpu µs"
}

# settle DATA_DIR AFTER: waits (at most 120 s) until the count of stored reports has not moved
# for 2 s, so that requests still queued when wrk stopped do not weigh on the next load; prints
# how many rows were committed after wrk stopped, if any.
settle() {
  local dir=$1 after=$2 current previous still=0 waited=0
  previous=$(count_reports "$dir")
  while [ "$still" -lt 4 ] && [ "$waited" -lt 240 ]; do
    sleep 0.5; waited=$((waited + 1))
    current=$(count_reports "$dir")
    if [ "$current" = "$previous" ]; then still=$((still + 1)); else still=0; fi
    previous=$current
  done
  [ "$current" = "$after" ] || echo "  ($(fmt $((current - after))) more rows committed after wrk stopped: the queue it left)"
}

# setup_app DATA_DIR: creates the app (or another key for it) and an admin token; sets key, admin.
setup_app() {
  key=$("$bin" apps add com.example.mail --data-dir "$1" 2>/dev/null) \
    || key=$("$bin" apps add com.example.mail --another-key --data-dir "$1" 2>/dev/null)
  admin=$("$bin" tokens add --role admin "bench-$$-$RANDOM" --data-dir "$1" 2>/dev/null)
}

# Idle memory, in both states of the binary's pages (lib.sh, idle_rss_kb), two samples each.
idle_disk_kb=$(idle_rss_kb "$bin" disk); idle_written_kb=$(idle_rss_kb "$bin" written)
idle_disk_kb=$(( (idle_disk_kb + $(idle_rss_kb "$bin" disk)) / 2 ))
idle_written_kb=$(( (idle_written_kb + $(idle_rss_kb "$bin" written)) / 2 ))
echo "idle RSS 1 s after start: $((idle_disk_kb / 1024)) MiB read from disk, $((idle_written_kb / 1024)) MiB just written"

echo "== watchdogd, synchronous=full (the default), fresh data dir"
full_dir=$work/full
setup_app "$full_dir"
start_daemon full "$full_dir" --synchronous full
status=$(curl -s -o "$work/patch.out" -w '%{http_code}' -X PATCH -H "Authorization: Bearer $admin" \
  -H 'Content-Type: application/json' -d "$rules" "$daemon_url/v1/admin/apps/com.example.mail/config")
[ "$status" = 200 ] || { echo "setting the ten rules answered HTTP $status: $(cat "$work/patch.out")" >&2; exit 1; }
printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$key" > "$work/get.lua"
etag=$(curl -s -D - -o /dev/null -H "Authorization: Bearer $key" "$daemon_url$config_path" | awk -F': ' 'tolower($1) == "etag" {print $2}' | tr -d '\r')
status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" -H "If-None-Match: $etag" "$daemon_url$config_path")
[ "$status" = 304 ] || { echo "GET config with If-None-Match $etag answered HTTP $status, not 304" >&2; exit 1; }
{ cat "$work/get.lua"; printf "wrk.headers[\"If-None-Match\"] = '%s'\n" "$etag"; } > "$work/get304.lua"
run_wrk get200 32 -s "$work/get.lua" "$daemon_url$config_path"; get200=$w_rps
run_wrk get304 32 -s "$work/get304.lua" "$daemon_url$config_path"; get304=$w_rps
printf '%-44s %8s req/s\n' "GET config 200, 10 rules" "$(fmt "$get200")" "GET config 304, 10 rules" "$(fmt "$get304")"
for load in 100:32 100:256 1:32 1:256; do
  per=${load%%:*}; c=${load#*:}
  ingest "POST $per, unique ids, full, c$c" "$full_dir" "$per" "$c"
  printf -v "acked_${per}_full_$c" '%s' "$acked"; printf -v "stored_${per}_full_$c" '%s' "$stored"; printf -v "short_${per}_full_$c" '%s' "$short"
  printf -v "cpu_${per}_full_$c" '%s' "$cpu"; printf -v "wrkcpu_${per}_full_$c" '%s' "$wrk_cpu"
  # The same-work limit writes what this load wrote: its database as it is now.
  [ "$load" = 100:32 ] && sqlite3 "$full_dir/watchdog.sqlite3" ".backup '$work/same-work-source.sqlite3'"
done
peak_full_kb=$(rss_kb "$daemon_pid" VmHWM)
stop_daemon
full_reports=$(count_reports "$full_dir")
full_bytes=$(du -sb "$full_dir" | cut -f1)
disk_per_report=$(awk -v b="$full_bytes" -v n="$full_reports" 'BEGIN {printf "%.0f", b / n}')
echo "data dir after stop: $(fmt "$full_bytes") bytes for $(fmt "$full_reports") reports = $disk_per_report bytes per report"
echo "RSS: peak $((peak_full_kb / 1024)) MiB (VmHWM after the loads)"
echo

echo "== watchdogd, synchronous=normal, fresh data dir"
normal_dir=$work/normal
setup_app "$normal_dir"
start_daemon normal "$normal_dir" --synchronous normal
for c in 32 256; do
  ingest "POST 100, unique ids, normal, c$c" "$normal_dir" 100 "$c"
  printf -v "acked_100_normal_$c" '%s' "$acked"; printf -v "stored_100_normal_$c" '%s' "$stored"; printf -v "short_100_normal_$c" '%s' "$short"
done
peak_normal_kb=$(rss_kb "$daemon_pid" VmHWM)
stop_daemon
echo "RSS: peak $((peak_normal_kb / 1024)) MiB"
peak_kb=$(( peak_full_kb > peak_normal_kb ? peak_full_kb : peak_normal_kb ))
echo

# ---------------------------------------------------------------- same-work limit
echo "== raw SQLite, same work: the rows watchdogd wrote for POST 100 (c32), into its own schema"
for sync in full normal; do
  rm -rf "$work/same-work"
  "$bin" apps add com.example.mail --data-dir "$work/same-work" > /dev/null 2>&1
  line=$("$work/sqlite_same_work" "$work/same-work-source.sqlite3" "$work/same-work/watchdog.sqlite3" "$duration" 100 "$sync")
  rate=$(sed 's/.*rows_per_s=\([0-9]*\).*/\1/' <<<"$line")
  printf -v "same_100_$sync" '%s' "$rate"
  printf '%-44s %10s rows/s  (%s)\n' "raw SQLite same work, 100 rows/txn, $sync" "$(fmt "$rate")" "$line"
done
rm -rf "$work/same-work" "$work/same-work-source.sqlite3"
echo

# ---------------------------------------------------------------- instructions
instructions_cell="not run (CALLGRIND=0)"
if [ "${CALLGRIND:-1}" != 0 ]; then
  echo "== instructions per stored report (callgrind, 20 sequential POSTs of 100 after 2 warm-up ones)"
  read -r instructions counted < <(instructions_per_report "$bin" 20)
  instructions_cell="$(fmt "$instructions") ($(fmt "$counted") reports counted)"
  echo "$instructions_cell"
  echo
fi

# ---------------------------------------------------------------- growth
growth_cell="not run (GROWTH=1)"; growth_limit="not run"; growth_ratio="n/a"
stats_cell="not run (GROWTH=1; at 10 M: stats.sh)"
if [ "$growth" = 1 ]; then
  echo "== growth: the same ingest into a data dir already holding $(fmt "$growth_reports") reports"
  source_dir=$data_root/$growth_reports
  if [ ! -f "$source_dir/watchdog.sqlite3" ]; then
    start=$(date +%s.%N)
    "$bin" demo --reports "$growth_reports" --releases 50 --data-dir "$source_dir" > /dev/null 2> "$work/demo.err" \
      || { cat "$work/demo.err" >&2; exit 1; }
    end=$(date +%s.%N)
    echo "watchdogd demo made $source_dir: $(fmt "$(awk -v n="$growth_reports" -v a="$start" -v b="$end" 'BEGIN {print n / (b - a)}')") reports/s ($(fmt "$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')") s)"
  else
    echo "using $source_dir (made earlier by watchdogd demo; remove it to remake)"
  fi
  growth_dir=$work/growth
  cp -a --reflink=auto "$source_dir" "$growth_dir"
  rm -f "$growth_dir"/*.lock
  setup_app "$growth_dir"
  start_daemon growth "$growth_dir" --synchronous full
  ingest "POST 100, unique ids, full, c32, $(fmt "$(count_reports "$growth_dir")") stored" "$growth_dir" 100 32
  growth_acked=$acked
  export IDS=random   # a client whose ids are random (UUID v4), not time-ordered like WatchdogKit's
  ingest "POST 100, random ids, full, c32, $(fmt "$(count_reports "$growth_dir")") stored" "$growth_dir" 100 32
  unset IDS
  growth_random_acked=$acked
  stop_daemon
  growth_cell="$(fmt "$growth_acked") reports/s at $(fmt "$growth_reports") stored ($(fmt "$growth_random_acked") with random UUID v4 ids, ratio $(ratio "$growth_random_acked" "$acked_100_full_32"))"
  growth_limit="$(fmt "$acked_100_full_32") reports/s into an empty one"
  growth_ratio=$(ratio "$growth_acked" "$acked_100_full_32")
  echo "ratio to the empty data dir: $growth_ratio"
  echo
  echo "== stats endpoints at $(fmt "$(count_reports "$growth_dir")") reports (watchdogd restarted before each; first request, then ${duration}s of wrk -c1)"
  viewer=$("$bin" tokens add --role viewer "bench-viewer-$$" --data-dir "$growth_dir" 2>/dev/null)
  stats_latencies "$growth_dir" "$viewer"
  stats_cell="p50 $stats_p50s ms; p95 ≤ $stats_max_p95 ms; first after restart ≤ $stats_max_first ms (at $(fmt "$growth_reports"))"
  [ "$stats_errors" = 0 ] || stats_cell+="; $stats_errors errors"
  echo
fi

# Disk per report at 1 M (stats.sh's data, incl. sessions), else at the growth data's size.
big_cell="no demo data dir (run stats.sh or GROWTH=1)"; big_ratio="n/a"
for candidate in "$data_root/1000000" "${source_dir:-}"; do
  if [ -n "$candidate" ] && [ -f "$candidate/watchdog.sqlite3" ]; then
    n=$(count_reports "$candidate"); b=$(du -sb "$candidate" | cut -f1)
    big_per=$(awk -v b="$b" -v n="$n" 'BEGIN {printf "%.0f", b / n}')
    big_cell="$(fmt "$big_per") B at $(fmt "$n") reports (demo data, sessions incl.)"
    break
  fi
done

# ---------------------------------------------------------------- table
json_bytes=$(report_bytes "$payloads/batch100.json" 100)
[ -n "${big_per:-}" ] && big_ratio=$(ratio "$big_per" "$json_bytes")
kib() { awk -v k="$1" 'BEGIN {printf "%.1f MiB", k / 1024}'; }
row() { printf '| %s | %s | %s | %s | %s |\n' "$@"; }
echo "== watchdogd $commit, ${duration}s per load, one run"
echo
row load watchdogd "bare limit, same run" ratio goal
row --- --- --- --- ---
for c in 32 256; do
  v=acked_100_full_$c; s=stored_100_full_$c; sh=short_100_full_$c; u=cpu_100_full_$c; w=wrkcpu_100_full_$c
  row "POST 100 reports, unique ids, full, c$c" "$(fmt "${!v}") reports/s ($(fmt "${!s}") rows/s stored; ${!u} µs CPU per report, wrk ${!w} µs)${!sh}" \
    "minimal raw SQLite 100/txn full $(fmt "$sqlite_100_full") rows/s (one index, ~1 KB text bodies); same work $(fmt "$same_100_full") rows/s" \
    "$(ratio "${!v}" "$sqlite_100_full") of minimal, $(ratio "${!v}" "$same_100_full") of same work" "≥ 0.7× minimal; ≤ 35 µs CPU per report"
done
for c in 32 256; do
  v=acked_100_normal_$c; s=stored_100_normal_$c; sh=short_100_normal_$c
  row "POST 100 reports, unique ids, normal, c$c" "$(fmt "${!v}") reports/s ($(fmt "${!s}") rows/s stored)${!sh}" \
    "minimal raw SQLite 100/txn normal $(fmt "$sqlite_100_normal") rows/s; same work $(fmt "$same_100_normal") rows/s" \
    "$(ratio "${!v}" "$sqlite_100_normal") of minimal, $(ratio "${!v}" "$same_100_normal") of same work" "≥ 0.8×"
done
for c in 32 256; do
  v=acked_1_full_$c; s=stored_1_full_$c; sh=short_1_full_$c; u=cpu_1_full_$c
  row "POST 1 report, unique ids, full, c$c" "$(fmt "${!v}") reports/s ($(fmt "${!s}") rows/s stored; ${!u} µs CPU per report)${!sh}" \
    "minimal raw SQLite 1/txn full $(fmt "$sqlite_1_full") rows/s" "$(ratio "${!v}" "$sqlite_1_full")" "≥ 25,000 reports/s"
done
row "instructions per stored report (POST 100, callgrind)" "$instructions_cell" "no bare limit" "n/a" "a regression shows here, whatever the load"
row "GET config 200, 10 rules, c32" "$(fmt "$get200") req/s" "libmicrohttpd constant $(fmt "$limit_get") req/s" "$(ratio "$get200" "$limit_get")" "≥ 0.7×"
row "GET config 304, c32" "$(fmt "$get304") req/s ($(ratio "$get304" "$get200")× its 200)" "libmicrohttpd constant 304 $(fmt "$limit_304") req/s" "$(ratio "$get304" "$limit_304")" "≥ 0.8×, and not below the 200"
row "disk per report, this run" "$(fmt "$disk_per_report") B ($(fmt "$full_reports") reports)" "report JSON $(fmt "$json_bytes") B" "$(ratio "$disk_per_report" "$json_bytes")" "≤ 500 B all in, client bytes recoverable"
row "disk per report, demo data" "$big_cell" "report JSON $(fmt "$json_bytes") B" "$big_ratio" "≤ 800 B all in"
row "ingest with N stored (POST 100, full, c32)" "$growth_cell" "$growth_limit" "$growth_ratio" "≥ 0.8× at 10 M"
row "idle RSS, binary read from disk (as at boot)" "$(kib "$idle_disk_kb")" "libmicrohttpd constant $(kib "$limit_idle_kb"); a Swift program using Foundation as watchdogd's start does $(kib "$floor_idle_kb") (a floor)" "$(ratio "$idle_disk_kb" "$limit_idle_kb"); $(ratio "$idle_disk_kb" "$floor_idle_kb") of the floor" "≤ 20 MB"
row "idle RSS, binary just written (as just installed)" "$(kib "$idle_written_kb")" "the same" "$(ratio "$idle_written_kb" "$limit_idle_kb"); $(ratio "$idle_written_kb" "$floor_idle_kb") of the floor" "≤ 20 MB"
row "peak RSS (VmHWM after the ingest and config loads)" "$(kib "$peak_kb")" "libmicrohttpd constant $(kib "$limit_peak_kb")" "$(ratio "$peak_kb" "$limit_peak_kb")" "≤ 64 MB"
row "stats endpoints (releases, compare, issues, timeseries, keyboard, keyboard-r, reports, reports-k)" "$stats_cell" "no bare limit" "n/a" "p50 ≤ 5 ms, p95 ≤ 10 ms, first after restart too"
exit
}
