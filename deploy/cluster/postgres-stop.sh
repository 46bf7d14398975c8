#!/usr/bin/env bash
# Stops a PostgreSQL started by start-postgres.sh and removes its directory.
#   usage: deploy/cluster/postgres-stop.sh DIR
set -euo pipefail
dir=$1
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_postgres() { if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi; }
[ -f "$dir/data/postmaster.pid" ] && as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w stop > /dev/null || true
rm -rf "$dir"
