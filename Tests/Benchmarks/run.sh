#!/usr/bin/env bash
# Benchmark of watchdogd beside the bare-library limits, in one run.
#
#   Tests/Benchmarks/run.sh            # DURATION=5 seconds per load by default
#
# Builds release, starts watchdogd on a temp data dir, then for each load prints the bare
# limit (libmicrohttpd answering a constant, raw SQLite inserts: ../shared/bench/limits.sh),
# watchdogd's figure, and the ratio. Ingest loads give every report a fresh id, so every
# request really stores rows; every 202 means committed (synchronous=FULL unless SYNC=normal).
# At FULL, ingest is compared with raw SQLite at FULL too (limits.sh measures NORMAL).
# Needs: wrk, libmicrohttpd-dev, libsqlite3-dev, bc (deploy/setup.sh --bench installs them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/Tests/lib/listening.sh"
shared=${WATCHDOG_SHARED_BENCH:-$repo/../shared/bench}
duration=${DURATION:-5}
sync=${SYNC:-full}
work=$(mktemp -d)
trap 'kill "${daemon_pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

[ -f "$shared/limits.sh" ] || { echo "no $shared/limits.sh: set WATCHDOG_SHARED_BENCH to the shared bench folder" >&2; exit 1; }
swift build -c release --package-path "$repo" --product watchdogd >&2
bin=$(swift build -c release --package-path "$repo" --show-bin-path)/watchdogd

key=$("$bin" apps add com.example.mail --data-dir "$work/data" 2>/dev/null)
admin=$("$bin" tokens add --role admin bench --data-dir "$work/data" 2>/dev/null)
# Rate limits on (their cost is measured) but high enough never to refuse the benchmark's one address.
"$bin" serve --listen 127.0.0.1:0 --data-dir "$work/data" --synchronous "$sync" --log-level warning \
  --rate-per-key "${RATE:-1000000}" --rate-per-address "${RATE:-1000000}" > "$work/out" &
daemon_pid=$!
url=$(listening_url "$work/out")
port=${url##*:}
echo "watchdogd $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?') on port $port, synchronous=$sync, ${duration}s per load, wrk -t2 -c32"
echo

rps() { wrk -t2 -c32 -d"${duration}s" "$@" | awk '/Requests\/sec/ {print $2}'; }
# The bare limits (and watchdogd on the shared payloads, whose fixed ids make every ingest
# after the first a duplicate).
# Ten rules, as a real app might have: version ranges, channels, idioms and percentages.
rules='{"rules": ['
for i in $(seq 0 9); do
  [ "$i" -gt 0 ] && rules+=','
  rules+="{\"id\": \"rule$i\", \"match\": {\"versions\": \">=14.$i.0 <15\", \"channels\": [\"beta\"], \"idioms\": [\"phone\", \"pad\"], \"percent\": $(( (i + 1) * 9 ))}, \"set\": {\"frame_tolerance_pt\": $i}}"
done
rules+=']}'
curl -s -o /dev/null -w '' -X PATCH -H "Authorization: Bearer $admin" -d "$rules" "http://127.0.0.1:$port/v1/admin/apps/com.example.mail/config"
config_path="/v1/config?app=com.example.mail&version=14.2.0&build=31245&channel=beta&idiom=phone&install_id=I-42"
echo "config: ten rules defined; config loads use $config_path"
echo

echo "== ../shared/bench/limits.sh (fixed-id payloads) =="
DURATION=$duration bash "$shared/limits.sh" "$port" "$key" | tee "$work/limits.txt"
echo
limit_get=$(awk '/^GET config/ {print $4}' "$work/limits.txt")
sqlite_1=$(awk -F'rows_per_s=' '/batch=1 / {print $2}' "$work/limits.txt")
sqlite_100=$(awk -F'rows_per_s=' '/batch=100 / {print $2}' "$work/limits.txt")
# limits.sh measures SQLite at synchronous=NORMAL; a watchdogd at FULL fsyncs every commit, so
# its own limit is raw SQLite at FULL too (same program, sync=2), measured here.
if [ "$sync" = full ]; then
  cc -O2 -o "$work/sqlite_limit" "$shared/sqlite_limit.c" -lsqlite3
  for b in 1 100; do "$work/sqlite_limit" "$work/limit-full.db" $((b == 1 ? 30000 : 200000)) $b 2; rm -f "$work"/limit-full.db*; done | tee "$work/limits-full.txt"
  sqlite_1=$(awk -F'rows_per_s=' '/batch=1 / {print $2}' "$work/limits-full.txt")
  sqlite_100=$(awk -F'rows_per_s=' '/batch=100 / {print $2}' "$work/limits-full.txt")
  echo
fi

echo "== watchdogd with a fresh id per report (rows really stored) =="
count_before=$(sqlite3 "$work/data/watchdog.sqlite3" "SELECT count(*) FROM reports")
for load in report1:1 batch100:100; do
  name=${load%%:*}; per=${load##*:}
  start=$(date +%s.%N)
  req=$(BODY_FILE="$shared/$name.json" INGEST_KEY=$key rps -s "$here/unique-ids.lua" "http://127.0.0.1:$port/v1/reports")
  end=$(date +%s.%N)
  count_after=$(sqlite3 "$work/data/watchdog.sqlite3" "SELECT count(*) FROM reports")
  stored=$((count_after - count_before)); count_before=$count_after
  limit=$([ "$per" = 1 ] && echo "$sqlite_1" || echo "$sqlite_100")
  printf '%-28s %10.0f req/s  %10.0f reports/s acknowledged  %10.0f rows/s stored  ratio %.2f to raw SQLite (synchronous=%s) at %s row(s)/transaction\n' \
    "POST $per report(s), unique" "$req" "$(echo "$req * $per" | bc -l)" "$(echo "$stored / ($end - $start)" | bc -l)" "$(echo "$req * $per / $limit" | bc -l)" "$sync" "$per"
done
printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$key" > "$work/get.lua"
r200=$(rps -s "$work/get.lua" "http://127.0.0.1:$port$config_path")
printf '%-28s %10.0f req/s  ratio %.2f to the bare GET limit\n' "GET config 200, 10 rules" "$r200" "$(echo "$r200 / $limit_get" | bc -l)"
cat > "$work/get304.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $key"
wrk.headers["If-None-Match"] = '$(curl -s -D - -o /dev/null -H "Authorization: Bearer $key" "http://127.0.0.1:$port$config_path" | awk -F': ' 'tolower($1)=="etag" {print $2}' | tr -d '\r')'
LUA
r304=$(rps -s "$work/get304.lua" "http://127.0.0.1:$port$config_path")
printf '%-28s %10.0f req/s  ratio %.2f to the bare GET limit\n' "GET config 304, 10 rules" "$r304" "$(echo "$r304 / $limit_get" | bc -l)"
echo
echo "data dir: $(du -sh "$work/data" | cut -f1) for $(sqlite3 "$work/data/watchdog.sqlite3" "SELECT count(*) FROM reports") reports; peak RSS of watchdogd: $(awk '/VmHWM/ {print $2 " " $3}' /proc/$daemon_pid/status)"
