#!/usr/bin/env bash
# Starts the cluster of deploy/cluster on this machine: PostgreSQL (Debian's, initdb/pg_ctl in
# DIR), three `watchdogd serve --store postgres://…` on loopback ports and nginx in front with
# deploy/cluster/nginx.conf. Prints the cluster's URL, the nodes' and the store's on stdout as
# `NAME=value` lines. Stop everything with deploy/cluster/stop.sh DIR.
#   usage: deploy/cluster/start.sh [DIR]
#   env:   WATCHDOGD (default: .build/release/watchdogd, built if missing), CLUSTER_PORT (8180),
#          NODE_PORTS ("8181 8182 8183"), PG_PORT (55440), NODE_ARGS (more `serve` flags, e.g.
#          "--rate-per-address 0" for a load test from one address)
set -euo pipefail
# The servers started here outlive this script: they get no descriptor but stdin, stdout and
# stderr of whoever ran it (a caller waiting for a pipe to close would wait for ever).
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$(mktemp -d /tmp/watchdog-cluster.XXXXXX)}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cluster_port=${CLUSTER_PORT:-8180}
node_ports=(${NODE_PORTS:-8181 8182 8183})
pg_port=${PG_PORT:-55440}
watchdogd=${WATCHDOGD:-$repo/.build/release/watchdogd}
if [ ! -x "$watchdogd" ]; then
  (cd "$repo" && swift build -c release --product watchdogd >&2)
fi

store=$("$repo/deploy/cluster/postgres-start.sh" "$dir/postgres" "$pg_port")
# The schema exists before three nodes race for it (they would wait on the migration lock anyway).
"$watchdogd" migrate --store "$store" >&2

echo "$store" > "$dir/store"
echo "$watchdogd" > "$dir/watchdogd"
echo "${NODE_ARGS:-}" > "$dir/node-args"
for port in "${node_ports[@]}"; do "$repo/deploy/cluster/start-node.sh" "$dir" "$port" --no-wait; done
for port in "${node_ports[@]}"; do "$repo/deploy/cluster/start-node.sh" "$dir" "$port" --wait-only; done

servers=""
for port in "${node_ports[@]}"; do servers+="    server 127.0.0.1:$port max_fails=1 fail_timeout=2s;\n"; done
awk -v servers="$servers" -v listen="    listen 127.0.0.1:$cluster_port;" '
  /^upstream watchdogd_cluster/ { print; inside = 1; printf "%s", servers; next }
  inside && /server 127\.0\.0\.1/ { next }
  inside && /^}/ { inside = 0 }
  /^    listen / { print listen; next }
  { print }' "$repo/deploy/cluster/nginx.conf" > "$dir/site.conf"
cat > "$dir/nginx-main.conf" <<CONF
pid $dir/nginx.pid;
error_log $dir/nginx-error.log;
events {}
http {
  access_log off;
  client_body_temp_path $dir/body; proxy_temp_path $dir/proxy; fastcgi_temp_path $dir/fastcgi; uwsgi_temp_path $dir/uwsgi; scgi_temp_path $dir/scgi;
  include $dir/site.conf;
}
CONF
nginx -c "$dir/nginx-main.conf" -p "$dir" < /dev/null > /dev/null 2>> "$dir/nginx-error.log"
for _ in $(seq 1 50); do curl -fs -o /dev/null "http://127.0.0.1:$cluster_port/readyz" && break; sleep 0.1; done

echo "CLUSTER_DIR=$dir"
echo "CLUSTER_URL=http://127.0.0.1:$cluster_port"
echo "NODE_URLS=$(printf 'http://127.0.0.1:%s ' "${node_ports[@]}" | sed 's/ $//')"
echo "WATCHDOG_STORE=$store"
