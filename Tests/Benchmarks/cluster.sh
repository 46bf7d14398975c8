#!/usr/bin/env bash
# Ingest and stats of watchdogd on SQLite beside PostgreSQL, in one run, ending in one markdown
# table: 1 SQLite daemon (synchronous=full, the default), 1 PostgreSQL daemon (directly, and
# through nginx) and 3 PostgreSQL daemons behind nginx (deploy/cluster/start.sh, fresh each).
#
#   Tests/Benchmarks/cluster.sh                   # DURATION=5 seconds per load
#   DURATION=3 Tests/Benchmarks/cluster.sh        # shorter
#   WATCHDOGD=/path/to/watchdogd ...              # a prebuilt binary instead of building
#   SCRATCH_PATH=/tmp/build ...                   # build there (default .build-bench)
#
# Ingest: wrk -t2 -c32 for DURATION s, POST 100 reports a request, every report a fresh id
# (unique-ids.lua). reports/s = rows stored (counted with sqlite3 / psql before the load and as
# wrk stops) / wrk's seconds. Then the script waits until the count has not moved for 2 s (the
# requests wrk left queued); CPU µs/report = utime+stime (/proc/PID/stat) from before the load to
# that point, over every row stored in it, for: the watchdogd processes (the daemon's PID, or
# DIR/node-*.pid), PostgreSQL (the cluster's postmaster, read from its postmaster.pid, with its
# children's utime+stime and the postmaster's cutime+cstime of children that exited: exactly this
# cluster's processes, whatever other PostgreSQL runs on the machine) and nginx (its master and
# workers). Machine CPU busy % is from /proc/stat over the wrk run (every process counts, also
# others' on a shared machine).
# Stats: after the loads, for each endpoint, one curl (must answer 200), then wrk -c1 for
# DURATION s; p50/p95 in ms, through the same entry point as the load.
# Needs: wrk, curl, sqlite3, psql, nginx, PostgreSQL (Debian's), python3, run as root (the cluster
# runs PostgreSQL as user postgres).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
duration=${DURATION:-5}
connections=32
work=$(mktemp -d)
daemon_pid=; cluster_dir=
. "$here/lib.sh"
payloads=$(dated_payloads)
stop_cluster() {
  [ -n "$cluster_dir" ] || return 0
  "$repo/deploy/cluster/stop.sh" "$cluster_dir" > /dev/null 2>&1 || true
  cluster_dir=
}
trap 'stop_daemon; stop_cluster; wait 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
{ # the whole script is read before it runs, so editing it meanwhile cannot break a run

export SCRATCH_PATH=${SCRATCH_PATH:-$repo/.build-bench}   # never the default .build
bin=$(watchdogd_binary)
commit=$(commit_label)
cores=$(nproc)
ticks_per_s=$(getconf CLK_TCK)
echo "watchdogd $commit ($(date -u '+%Y-%m-%d %H:%M UTC'), $cores cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "${duration}s per load, wrk -t2 -c$connections, POST 100 reports with fresh ids; stats: wrk -c1 for ${duration}s per endpoint"
echo

fmt() { awk -v v="$1" 'BEGIN {printf "%.0f", v}' | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta'; }   # 12,345
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "n/a" || b == "n/a" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b}'; }

# free_ports N: N ports below the usual ephemeral range that nothing listens on now.
free_ports() {
  python3 - "$1" <<'PY'
import random, socket, sys
found = []
while len(found) < int(sys.argv[1]):
    port = random.randint(20000, 31999)
    if port in found: continue
    s = socket.socket()
    try: s.bind(("127.0.0.1", port)); found.append(port)
    except OSError: pass
    finally: s.close()
print(" ".join(map(str, found)))
PY
}

# stat_ticks PID [children]: utime+stime of the process (all its threads), in clock ticks; with
# "children", plus cutime+cstime (children it has reaped). 0 if it is gone.
stat_ticks() {
  local fields
  fields=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
  awk -v c="${2:-}" '{print $12 + $13 + (c == "children" ? $14 + $15 : 0)}' <<<"$fields"
}
# tree_ticks PID: the process with its reaped children and its live children (PostgreSQL's
# backends, nginx's workers).
tree_ticks() {
  local parent=$1 total child
  [ -n "$parent" ] || { echo 0; return; }
  total=$(stat_ticks "$parent" children)
  for child in $(pgrep -P "$parent" || true); do total=$((total + $(stat_ticks "$child"))); done
  echo "$total"
}
watchdogd_ticks() { local t=0 pid; for pid in $watchdogd_pids; do t=$((t + $(stat_ticks "$pid"))); done; echo "$t"; }
postgres_ticks() { if [ -n "$store" ]; then tree_ticks "$(head -1 "$cluster_dir/postgres/data/postmaster.pid")"; else echo 0; fi; }
nginx_ticks() { if [ -n "$store" ]; then tree_ticks "$(cat "$cluster_dir/nginx.pid")"; else echo 0; fi; }
# cpu_busy_total: busy and total jiffies of the whole machine (/proc/stat).
cpu_busy_total() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }
per_report_us() { awk -v t="$1" -v hz="$ticks_per_s" -v n="$2" 'BEGIN {if (n + 0 == 0) print "n/a"; else printf "%.0f", t / hz * 1e6 / n}'; }

count_rows() {
  if [ -n "$store" ]; then psql -X -Atqc 'SELECT count(*) FROM reports' "$store"
  else sqlite3 "$sqlite_dir/watchdog.sqlite3" "SELECT count(*) FROM reports"; fi
}
# settle: waits (at most 120 s) until the count of stored reports has not moved for 2 s; prints it.
settle() {
  local current previous still=0 waited=0
  previous=$(count_rows)
  while [ "$still" -lt 4 ] && [ "$waited" -lt 240 ]; do
    sleep 0.5; waited=$((waited + 1))
    current=$(count_rows)
    if [ "$current" = "$previous" ]; then still=$((still + 1)); else still=0; fi
    previous=$current
  done
  echo "$previous"
}

# ingest SETUP URL: one load; sets r_rps, r_wd, r_pg, r_ng (µs/report) and r_busy, prints a line.
ingest() {
  local setup=$1 url=$2 before at_end final wd0 pg0 ng0 busy0 total0 busy1 total1 rows acked
  before=$(count_rows)
  wd0=$(watchdogd_ticks); pg0=$(postgres_ticks); ng0=$(nginx_ticks); read -r busy0 total0 < <(cpu_busy_total)
  BODY_FILE="$payloads/batch100.json" INGEST_KEY=$key \
    run_wrk "$setup" "$connections" -s "$here/unique-ids.lua" "$url/v1/reports"
  read -r busy1 total1 < <(cpu_busy_total)
  at_end=$(count_rows)
  final=$(settle)
  rows=$((final - before))
  r_wd=$(per_report_us $(( $(watchdogd_ticks) - wd0 )) "$rows")
  r_pg=n/a; r_ng=n/a
  if [ -n "$store" ]; then
    r_pg=$(per_report_us $(( $(postgres_ticks) - pg0 )) "$rows")
    [ "$url" != "$node_url" ] && r_ng=$(per_report_us $(( $(nginx_ticks) - ng0 )) "$rows")
  fi
  r_rps=$(awk -v n="$((at_end - before))" -v s="$w_seconds" 'BEGIN {printf "%.0f", n / s}')
  acked=$(( (w_requests - w_bad) * 100 ))
  r_busy=$(awk -v b="$((busy1 - busy0))" -v t="$((total1 - total0))" 'BEGIN {printf "%.0f", t ? 100 * b / t : 0}')
  r_short=; [ "$w_requests" -lt $((2 * connections)) ] && r_short=" (only $w_requests responses: raise DURATION)"
  printf '  %-28s %9s reports/s stored in %.2fs (%s acknowledged by 2xx, %s stored in all, %s of them after wrk stopped); CPU µs/report: watchdogd %s, postgres %s, nginx %s; machine CPU busy %s%%\n' \
    "$setup" "$(fmt "$r_rps")" "$w_seconds" "$(fmt "$acked")" "$(fmt "$rows")" "$(fmt $((final - at_end)))" "$r_wd" "$r_pg" "$r_ng" "$r_busy"
  [ "$rows" -lt "$acked" ] && echo "  !! $setup: fewer rows stored than acknowledged ($rows < $acked)"
  return 0
}

# The release-health endpoints, for the payloads' two releases (14.1.3 and 14.2.0).
endpoints=(
  "releases:/releases"
  "compare:/compare?base=14.1.3&target=14.2.0"
  "issues:/issues?release=14.2.0"
  "timeseries:/timeseries?release=14.2.0&bucket=hour"
)
# stats URL: sets r_stats ("name p50/p95, …" in ms) and prints a line per endpoint.
stats() {
  local url=$1 endpoint name path status p50 p95 count errors
  r_stats=
  for endpoint in "${endpoints[@]}"; do
    name=${endpoint%%:*}; path=${endpoint#*:}
    status=$(curl -s -o "$work/stats.out" -w '%{http_code}' -H "Authorization: Bearer $viewer" "$url/v1/apps/com.example.mail$path")
    [ "$status" = 200 ] || echo "  !! $name: HTTP $status: $(head -c 300 "$work/stats.out")"
    read -r p50 p95 count errors < <(latency "$url/v1/apps/com.example.mail$path" "$viewer")
    [ "$errors" = 0 ] || echo "  !! $name: $errors errors (non-2xx or socket) of $count requests"
    printf '  %-12s p50 %6s ms  p95 %6s ms  (%s requests)\n' "$name" "$p50" "$p95" "$count"
    r_stats+="${r_stats:+, }$name $p50/$p95"
  done
}

# ---------------------------------------------------------------- (a) SQLite
echo "== 1 SQLite daemon, synchronous=full (the default), fresh data dir"
store=; sqlite_dir=$work/sqlite
key=$("$bin" apps add com.example.mail --data-dir "$sqlite_dir" 2>/dev/null)
viewer=$("$bin" tokens add --role viewer "bench-$$" --data-dir "$sqlite_dir" 2>/dev/null)
RATE=0 start_daemon sqlite "$sqlite_dir" --synchronous full   # no rate limits, as the cluster's nodes
watchdogd_pids=$daemon_pid; node_url=$daemon_url
ingest "SQLite, 1 daemon" "$daemon_url"
sq_rps=$r_rps; sq_wd=$r_wd; sq_busy=$r_busy; sq_short=$r_short
stats "$daemon_url"; sq_stats=$r_stats; sq_rows=$(count_rows)
stop_daemon
echo

# start_cluster NODES: deploy/cluster/start.sh with NODES watchdogd on free ports, the app and a
# viewer token; sets cluster_dir, store, cluster_url, node_url (the first node), watchdogd_pids.
start_cluster() {
  local ports node_ports
  read -r -a ports < <(free_ports $(($1 + 2)))
  node_ports="${ports[*]:2}"
  cluster_dir=/tmp/watchdog-bench-cluster.$$.$1   # not in $work: user postgres must reach it
  WATCHDOGD=$bin CLUSTER_PORT=${ports[0]} PG_PORT=${ports[1]} NODE_PORTS=$node_ports \
    NODE_ARGS="--rate-per-address 0 --rate-per-key 0 --retention-days 0 --log-level warning" \
    "$repo/deploy/cluster/start.sh" "$cluster_dir" > "$work/cluster.env" 2> "$work/cluster.err" \
    || { echo "deploy/cluster/start.sh failed:" >&2; cat "$work/cluster.err" >&2; return 1; }
  store=$(sed -n 's/^WATCHDOG_STORE=//p' "$work/cluster.env")
  cluster_url=$(sed -n 's/^CLUSTER_URL=//p' "$work/cluster.env")
  node_url=$(sed -n 's/^NODE_URLS=//p' "$work/cluster.env" | cut -d' ' -f1)
  watchdogd_pids=$(cat "$cluster_dir"/node-*.pid)
  key=$("$bin" apps add com.example.mail --store "$store" 2>/dev/null)
  viewer=$("$bin" tokens add --role viewer "bench-$$" --store "$store" 2>/dev/null)
}

# ---------------------------------------------------------------- (b) PostgreSQL, 1 node
echo "== 1 PostgreSQL daemon (deploy/cluster/start.sh, one node): directly, then through nginx"
start_cluster 1
ingest "PostgreSQL, 1 node, direct" "$node_url"
p1d_rps=$r_rps; p1d_wd=$r_wd; p1d_pg=$r_pg; p1d_busy=$r_busy; p1d_short=$r_short
ingest "PostgreSQL, 1 node, nginx" "$cluster_url"
p1n_rps=$r_rps; p1n_wd=$r_wd; p1n_pg=$r_pg; p1n_ng=$r_ng; p1n_busy=$r_busy; p1n_short=$r_short
p1_rows=$(count_rows)
echo "  stats, directly:"
stats "$node_url"; p1d_stats=$r_stats
echo "  stats, through nginx:"
stats "$cluster_url"; p1n_stats=$r_stats
stop_cluster
echo

# ---------------------------------------------------------------- (c) PostgreSQL, 3 nodes
echo "== 3 PostgreSQL daemons behind nginx (deploy/cluster/start.sh)"
start_cluster 3
ingest "PostgreSQL, 3 nodes, nginx" "$cluster_url"
p3_rps=$r_rps; p3_wd=$r_wd; p3_pg=$r_pg; p3_ng=$r_ng; p3_busy=$r_busy; p3_short=$r_short
p3_rows=$(count_rows)
stats "$cluster_url"; p3_stats=$r_stats
stop_cluster
echo

# ---------------------------------------------------------------- table
row() { printf '| %s | %s | %s | %s | %s | %s |\n' "$@"; }
echo "== watchdogd $commit, ${duration}s per load, one run, $cores cores"
echo
row setup reports/s "watchdogd CPU µs/report" "postgres CPU µs/report" "nginx CPU µs/report" "stats p50/p95 ms (after the loads)"
row --- --- --- --- --- ---
row "1 SQLite daemon, synchronous=full (machine busy $sq_busy%)" "$(fmt "$sq_rps")$sq_short" "$sq_wd" "n/a" "n/a" "$sq_stats ($(fmt "$sq_rows") reports)"
row "1 PostgreSQL daemon, direct (machine busy $p1d_busy%)" "$(fmt "$p1d_rps")$p1d_short" "$p1d_wd" "$p1d_pg" "n/a" "$p1d_stats ($(fmt "$p1_rows") reports)"
row "1 PostgreSQL daemon, through nginx (machine busy $p1n_busy%)" "$(fmt "$p1n_rps")$p1n_short" "$p1n_wd" "$p1n_pg" "$p1n_ng" "$p1n_stats ($(fmt "$p1_rows") reports)"
row "3 PostgreSQL daemons, through nginx (machine busy $p3_busy%)" "$(fmt "$p3_rps")$p3_short" "$p3_wd" "$p3_pg" "$p3_ng" "$p3_stats ($(fmt "$p3_rows") reports)"
echo
sum() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "n/a" || b == "n/a") print "n/a"; else print a + b}'; }
echo "Ratios:"
echo "- PostgreSQL 1 node / SQLite (both direct): reports/s $(ratio "$p1d_rps" "$sq_rps")×; CPU µs/report (watchdogd + postgres vs watchdogd) $(ratio "$(sum "$p1d_wd" "$p1d_pg")" "$sq_wd")×"
echo "- PostgreSQL 3 nodes / 1 node (both through nginx): reports/s $(ratio "$p3_rps" "$p1n_rps")×; CPU µs/report watchdogd $(ratio "$p3_wd" "$p1n_wd")×, postgres $(ratio "$p3_pg" "$p1n_pg")×"
echo "- nginx in front of 1 node / direct: reports/s $(ratio "$p1n_rps" "$p1d_rps")×"
echo
echo "Limits of this machine: $cores cores ($(nproc --all) online), shared by wrk (2 threads), nginx (1 worker), PostgreSQL"
echo "(a backend per pooled connection, the WAL writer) and the watchdogd daemons, and by whatever else runs here"
echo "(load average before the run and the machine's busy % per load are printed above). With every"
echo "process on the same $cores cores, adding nodes adds no CPU: 3 nodes can gain over 1 here only by"
echo "overlapping waits (each node's writes wait on PostgreSQL round trips and WAL fsyncs), not by more"
echo "cores, and may as well lose; the figures to read are the ratios and the CPU cost per report, not"
echo "the absolute rates, and one short run on a shared machine varies from run to run."
echo "On a bigger machine: the watchdogd nodes are stateless (the store is shared), so their part —"
echo "watchdogd CPU µs/report — spreads over cores and machines, and nginx's is small. What does not"
echo "spread is PostgreSQL's single primary: its CPU µs/report and its WAL fsyncs (one per commit, and a"
echo "202 waits for it) bound the cluster at about (primary's cores × 1e6 / postgres µs/report) reports/s,"
echo "before the disk's fsync rate does. SQLite is bound by one writer on one machine."
exit
}
