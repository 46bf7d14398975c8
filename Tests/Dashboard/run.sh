#!/usr/bin/env bash
# Interactive browser tests of the dashboard: Playwright for Python drives Debian's Chromium
# (/usr/bin/chromium, or $CHROMIUM) against a live `watchdogd serve --demo` with real clicks
# and keys, plus axe-core (axe-playwright-python) on every view. Builds nothing itself:
# WATCHDOGD names the binary (default: the debug build's). Extra arguments go to pytest.
# WATCHDOG_RESOURCES serves another Resources/ (e.g. an older dashboard, to see tests fail).
# WATCHDOG_SIMULATOR names watchdog-simulator (default: beside the binary).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${WATCHDOGD:-$(swift build --package-path "$repo" --show-bin-path)/watchdogd}
work=$(mktemp -d)
trap 'kill "${daemon_pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
python3 -c 'import playwright, axe_playwright_python, pytest' 2> /dev/null ||
  python3 -m pip install -q playwright axe-playwright-python pytest
# A test CA standing in for Apple's App Attest root (the debug daemon trusts it; the attested
# fleet of test_attestation_panel.py attests with it through watchdog-simulator).
export WATCHDOG_SIMULATOR=${WATCHDOG_SIMULATOR:-$(dirname "$bin")/watchdog-simulator}
export WATCHDOG_ATTEST_CA="$work/attest-ca"
"$WATCHDOG_SIMULATOR" test-ca "$WATCHDOG_ATTEST_CA" > /dev/null
WATCHDOG_TESTING_ATTESTATION_ROOT_PEM_FILE="$WATCHDOG_ATTEST_CA/root.pem" "$bin" serve --demo --listen 127.0.0.1:0 --data-dir "$work/data" --rate-per-key 0 --rate-per-address 0 --alert-allowed-hosts 127.0.0.1 --rollout-interval 1 \
  --resources-dir "${WATCHDOG_RESOURCES:-$repo/Resources}" --log-level error > "$work/out" &
daemon_pid=$!
for _ in $(seq 300); do grep -q WATCHDOG_ADMIN_TOKEN "$work/out" 2>/dev/null && break; sleep 0.1; done
grep -q WATCHDOG_ADMIN_TOKEN "$work/out" || { cat "$work/out"; echo "FAIL: watchdogd did not start" >&2; exit 1; }
export WATCHDOG_URL=$(sed -n 's/^export WATCHDOG_URL=//p' "$work/out")
export WATCHDOG_ADMIN_TOKEN=$(sed -n 's/^export WATCHDOG_ADMIN_TOKEN=//p' "$work/out")
export WATCHDOG_VIEWER_TOKEN=$(sed -n 's/^export WATCHDOG_VIEWER_TOKEN=//p' "$work/out")
export WATCHDOG_INGEST_KEY=$(sed -n 's/^export WATCHDOG_INGEST_KEY=//p' "$work/out")
export WATCHDOG_SIGN_IN_LINK=$(sed -n 's/^dashboard: \([^ ]*\).*/\1/p' "$work/out")
# A second person for four eyes (test_four_eyes.py): an operator token made with the CLI.
export WATCHDOG_OPERATOR_TOKEN=$("$bin" tokens add --role operator --data-dir "$work/data" oscar)
cd "$repo/Tests/Dashboard"
python3 -m pytest -q -p no:cacheprovider "$@"
