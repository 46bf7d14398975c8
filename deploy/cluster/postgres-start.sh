#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 (Debian's) in a temp dir, owned by the `postgres` user, on a
# loopback port, with a `watchdog` database; prints the URL to use. Stop it with
# `deploy/cluster/postgres-stop.sh DIR`.
#   usage: deploy/cluster/postgres-start.sh [DIR] [PORT]
set -euo pipefail
dir=${1:-$(mktemp -d /tmp/watchdog-pg.XXXXXX)}
port=${2:-55432}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
mkdir -p "$dir"
chown postgres "$dir"
as_postgres() { if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi; }
if [ ! -f "$dir/data/PG_VERSION" ]; then
  as_postgres "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-instructions > "$dir/initdb.log"
  # Enough connections for three daemons' pools and the tests; fsync stays on (a 202 is durable).
  cat >> "$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 500
shared_buffers = 128MB
CONF
fi
as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start < /dev/null > /dev/null 2>> "$dir/pg_ctl.log"
as_postgres "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = 'watchdog'" postgres | grep -q 1 \
  || as_postgres "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres watchdog
echo "postgres://postgres@127.0.0.1:$port/watchdog"
