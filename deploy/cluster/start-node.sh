#!/usr/bin/env bash
# Starts (or restarts, after a crash) one node of the cluster start.sh made in DIR, on PORT,
# and waits until its /readyz answers 200.
#   usage: deploy/cluster/start-node.sh DIR PORT [--no-wait | --wait-only]
set -euo pipefail
# The servers started here outlive this script: they get no descriptor but stdin, stdout and
# stderr of whoever ran it (a caller waiting for a pipe to close would wait for ever).
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
dir=$1 port=$2 mode=${3:-}
repo=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$mode" != --wait-only ]; then
  "$(cat "$dir/watchdogd")" serve --store "$(cat "$dir/store")" --listen "127.0.0.1:$port" --data-dir "$dir/node-$port" \
    --trusted-proxy 127.0.0.1 --resources-dir "$repo/Resources" $(cat "$dir/node-args" 2>/dev/null) \
    >> "$dir/node-$port.out" 2>> "$dir/node-$port.log" &
  echo $! > "$dir/node-$port.pid"
fi
[ "$mode" = --no-wait ] && exit 0
for _ in $(seq 1 600); do
  curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" && exit 0
  kill -0 "$(cat "$dir/node-$port.pid")" 2>/dev/null || break
  sleep 0.1
done
echo "node $port did not become ready:" >&2
tail -5 "$dir/node-$port.log" >&2
exit 1
