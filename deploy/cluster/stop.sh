#!/usr/bin/env bash
# Stops what deploy/cluster/start.sh started in DIR (nginx, the nodes, PostgreSQL) and removes DIR.
#   usage: deploy/cluster/stop.sh DIR
set -uo pipefail
dir=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null
for pidfile in "$dir"/node-*.pid; do
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
done
"$repo/deploy/cluster/postgres-stop.sh" "$dir/postgres"
rm -rf "$dir"
