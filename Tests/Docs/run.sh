#!/usr/bin/env bash
# Issue 43, point 3: the docs run. Every relative link and anchor of README.md and docs/
# resolves (links.py), and every ```sh runnable block succeeds against a demo daemon
# (blocks.py), with `watchdogd` on PATH working on the daemon's data dir; and /docs/api
# (Resources/dashboard/api.html) is what deploy/openapi-html.py writes from openapi.yaml.
#
#   usage: Tests/Docs/run.sh       (WATCHDOGD defaults to the debug build)
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 Tests/Docs/links.py
python3 -c 'import yaml' 2> /dev/null || python3 -m pip install -q pyyaml
python3 deploy/openapi-html.py --check
watchdogd=$(realpath "${WATCHDOGD:-.build/debug/watchdogd}")
work=$(mktemp -d /tmp/watchdog-docs.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2> /dev/null; wait 2> /dev/null; rm -rf "$work"' EXIT
"$watchdogd" serve --demo --data-dir "$work/data" --listen 127.0.0.1:0 --log-level error > "$work/out" &
pid=$!
for _ in $(seq 300); do grep -q '^export WATCHDOG_ADMIN_TOKEN=' "$work/out" 2> /dev/null && break; sleep 0.1; done
eval "$(grep '^export ' "$work/out")"
mkdir -p "$work/bin"
printf '#!/bin/sh\nexec %s "$@"\n' "$watchdogd" > "$work/bin/watchdogd"
chmod +x "$work/bin/watchdogd"
PATH="$work/bin:$PATH" WATCHDOG_DATA_DIR="$work/data" DOCS_WORK="$work/blocks" python3 Tests/Docs/blocks.py
