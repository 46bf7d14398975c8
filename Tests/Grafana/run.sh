#!/usr/bin/env bash
# Issue 42, point 3: the release series Grafana reads, checked with the real tools.
#   - a demo watchdogd (real daemon, port 0) plus a declared release with a hostile name;
#   - `promtool check metrics` on GET /v1/metrics/releases;
#   - a real Prometheus scrapes it with a viewer token, and every query of
#     deploy/grafana/watchdog-releases.json (panels and variables) is run against that
#     Prometheus and must return data (check.py).
#
#   usage: Tests/Grafana/run.sh     (WATCHDOGD defaults to the debug build; needs Debian's prometheus)
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v promtool > /dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus > /dev/null
watchdogd=$(realpath "${WATCHDOGD:-.build/debug/watchdogd}")
work=$(mktemp -d /tmp/watchdog-grafana.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  wait 2> /dev/null || true
  if [ -z "${KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT

"$watchdogd" serve --demo --data-dir "$work/data" --listen 127.0.0.1:0 > "$work/watchdogd.out" 2> "$work/watchdogd.err" &
pids+=($!)
for _ in $(seq 1 300); do grep -q '^export WATCHDOG_ADMIN_TOKEN=' "$work/watchdogd.out" 2> /dev/null && break; sleep 0.1; done
eval "$(grep '^export ' "$work/watchdogd.out")"
: "${WATCHDOG_VIEWER_TOKEN:?the demo printed no viewer token}"

python3 Tests/Grafana/check.py seed
curl -sf "$WATCHDOG_URL/v1/metrics/releases" -H "Authorization: Bearer $WATCHDOG_VIEWER_TOKEN" > "$work/scrape.txt"
promtool check metrics < "$work/scrape.txt"
echo "promtool: $(grep -vc '^#' "$work/scrape.txt") series, clean"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '%s' "$WATCHDOG_VIEWER_TOKEN" > "$work/viewer-token"
cat > "$work/prometheus.yml" <<YAML
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: watchdog-releases
    metrics_path: /v1/metrics/releases
    authorization: { type: Bearer, credentials_file: $work/viewer-token }
    static_configs: [{ targets: ["${WATCHDOG_URL#http://}"] }]
YAML
promtool check config "$work/prometheus.yml" > /dev/null
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" --web.listen-address="127.0.0.1:$port" \
  > "$work/prometheus.log" 2>&1 &
pids+=($!)
PROMETHEUS_URL="http://127.0.0.1:$port" python3 Tests/Grafana/check.py queries deploy/grafana/watchdog-releases.json
