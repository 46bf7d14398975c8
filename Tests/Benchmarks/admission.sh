#!/usr/bin/env bash
# What release admission and the session checks cost on ingest: two watchdogd binaries, the one
# before them and the one after, measured in one run on the same payloads, alternating
# (before, after, before, after: a neighbour's load hits both alike), each round on a fresh
# data dir at synchronous=full.
#
#   BEFORE=/path/to/old/watchdogd Tests/Benchmarks/admission.sh
#   BEFORE_COMMIT=e5310eb Tests/Benchmarks/admission.sh   # builds it (release) in a worktree
#   AFTER=/path/to/new/watchdogd ...                      # default: a release build of this checkout
#   DURATION=5 ROUNDS=2 ...
#
# Loads (wrk -t2 -c32, unique-ids.lua: every item a fresh id on every request, so each 202
# stores new rows):
#   reports: payloads/batch100.json, 100 reports a request, their 30 sessions started first —
#            the after binary looks each report's session up (one primary-key probe);
#   sessions: 100 session starts a request from the payload's 15 installs on one network —
#            the after binary counts every start against its install's hourly limit (and the
#            installs against their network's), so most of them are marked: the limit's cost
#            at its busiest.
# Each row: items stored per second (counted in the store after the load), the daemon's CPU
# per stored item (utime + stime from /proc, µs), and after/before. Needs what run.sh needs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
duration=${DURATION:-5}
rounds=${ROUNDS:-2}
work=$(mktemp -d)
daemon_pid=
trap 'stop_daemon; rm -rf "$work"' EXIT
. "$here/lib.sh"
{

if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 1024 ]; then ulimit -n 4096; fi
after=${AFTER:-$(WATCHDOGD= watchdogd_binary)}
before=${BEFORE:-}
if [ -z "$before" ]; then
  commit=${BEFORE_COMMIT:?set BEFORE=/path/to/watchdogd or BEFORE_COMMIT=<commit>}
  tree="$work/before-src"
  git -C "$repo" worktree add -q --detach "$tree" "$commit"
  trap 'stop_daemon; git -C "$repo" worktree remove --force "$tree"; rm -rf "$work"' EXIT
  swift build -c release --static-swift-stdlib --package-path "$tree" --product watchdogd >&2
  before="$(swift build -c release --static-swift-stdlib --package-path "$tree" --show-bin-path)/watchdogd"
fi
echo "admission benchmark ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "before: $before"
echo "after:  $after"
echo "${duration}s per load, wrk -t2 -c32, $rounds rounds of before then after"
echo

# The payload's session starts (its 30 sessions, 15 installs) and a sessions payload of 100.
payloads=$(dated_payloads)
python3 - "$payloads/batch100.json" "$work" <<'PY'
import json, sys, uuid
reports = json.load(open(sys.argv[1]))["reports"]
starts, seen = [], set()
for r in reports:
    if r["session_id"] in seen: continue
    seen.add(r["session_id"])
    starts.append({"id": r["session_id"], "install_id": r["install_id"], "app": r["app"], "release": r["release"],
                   "started_at": r["occurred_at"], "device": r["device"]})
json.dump({"sessions": starts}, open(sys.argv[2] + "/starts.json", "w"))
# One session start per line in the payloads' style, so unique-ids.lua renews each id.
lines = []
for i in range(100):
    s = dict(starts[i % len(starts)]); s["id"] = str(uuid.UUID(int=i + 1, version=4))
    lines.append("  " + json.dumps(s, separators=(", ", ": ")))
open(sys.argv[2] + "/sessions100.json", "w").write('{"sessions": [\n' + ",\n".join(lines) + "\n]}\n")
PY

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks_per_second=$(getconf CLK_TCK)
count_rows() { sqlite3 "$1/watchdog.sqlite3" "SELECT count(*) FROM $2"; }

# measure BIN LOAD: one round; sets m_rate (items/s) and m_cpu (µs CPU per item).
measure() {
  local binary=$1 load=$2 dir="$work/data-$RANDOM$RANDOM"
  bin=$binary start_daemon "$load" "$dir"
  local key
  key=$("$binary" apps add com.example.mail --data-dir "$dir" 2>/dev/null)
  curl -sf -X POST "$daemon_url/v1/sessions" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    --data-binary @"$work/starts.json" > /dev/null
  local table=reports body="$payloads/batch100.json" path=/v1/reports
  [ "$load" = sessions ] && { table=sessions; body="$work/sessions100.json"; path=/v1/sessions; }
  local rows0 ticks0 rows1 ticks1
  rows0=$(count_rows "$dir" "$table"); ticks0=$(cpu_ticks "$daemon_pid")
  BODY_FILE=$body INGEST_KEY=$key run_wrk "$load" 32 -s "$here/unique-ids.lua" "$daemon_url$path"
  # What wrk left queued is committed before the count.
  sleep 1
  rows1=$(count_rows "$dir" "$table"); ticks1=$(cpu_ticks "$daemon_pid")
  stop_daemon
  m_rate=$(awk -v n=$((rows1 - rows0)) -v s="$w_seconds" 'BEGIN {printf "%.0f", n / s}')
  m_cpu=$(awk -v t=$((ticks1 - ticks0)) -v hz="$ticks_per_second" -v n=$((rows1 - rows0)) 'BEGIN {printf "%.1f", t / hz * 1e6 / n}')
}

printf '| load | round | before items/s | after items/s | after/before | before CPU µs/item | after CPU µs/item |\n|---|---|---|---|---|---|---|\n'
for load in reports sessions; do
  sum_b=0; sum_a=0; cpu_b=0; cpu_a=0
  for round in $(seq 1 "$rounds"); do
    measure "$before" "$load"; rb=$m_rate; cb=$m_cpu
    measure "$after" "$load"; ra=$m_rate; ca=$m_cpu
    printf '| %s | %d | %s | %s | %s | %s | %s |\n' "$load" "$round" "$rb" "$ra" "$(awk -v a="$ra" -v b="$rb" 'BEGIN {printf "%.2f", a / b}')" "$cb" "$ca"
    sum_b=$((sum_b + rb)); sum_a=$((sum_a + ra))
    cpu_b=$(awk -v x="$cpu_b" -v y="$cb" 'BEGIN {print x + y}'); cpu_a=$(awk -v x="$cpu_a" -v y="$ca" 'BEGIN {print x + y}')
  done
  printf '| **%s, mean** | | %s | %s | **%s** | %s | %s |\n' "$load" $((sum_b / rounds)) $((sum_a / rounds)) \
    "$(awk -v a="$sum_a" -v b="$sum_b" 'BEGIN {printf "%.2f", a / b}')" \
    "$(awk -v x="$cpu_b" -v n="$rounds" 'BEGIN {printf "%.1f", x / n}')" "$(awk -v x="$cpu_a" -v n="$rounds" 'BEGIN {printf "%.1f", x / n}')"
done
exit 0
}
