#!/usr/bin/env bash
# Property-based API testing: schemathesis generates requests from Resources/openapi.yaml and
# runs every check against a live `watchdogd serve --demo` (server errors, responses that break
# the schema, undocumented status codes, valid requests refused, invalid ones accepted).
# Zero failures expected. SEED and EXAMPLES make a run reproducible / longer.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${WATCHDOGD:-$(swift build --package-path "$repo" --show-bin-path)/watchdogd}
work=$(mktemp -d)
trap 'kill "${daemon_pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
command -v schemathesis > /dev/null || python3 -m pip install -q schemathesis
# The hooks schemathesis makes point anywhere (and its stateful phase sends them tests):
# deliveries stay on loopback.
"$bin" serve --demo --listen 127.0.0.1:0 --data-dir "$work/data" --rate-per-key 0 --rate-per-address 0 --alert-allowed-hosts 127.0.0.1 \
  --resources-dir "$repo/Resources" --log-level error > "$work/out" &
daemon_pid=$!
for _ in $(seq 100); do grep -q WATCHDOG_ADMIN_TOKEN "$work/out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^export WATCHDOG_URL=//p' "$work/out")
admin=$(sed -n 's/^export WATCHDOG_ADMIN_TOKEN=//p' "$work/out")
ingest=$(sed -n 's/^export WATCHDOG_INGEST_KEY=//p' "$work/out")
cd "$work"
run() {  # LABEL TOKEN [schemathesis options]
  local label=$1 token=$2; shift 2
  schemathesis ${config:+--config-file "$config"} run "$repo/Resources/openapi.yaml" --url "$url" -H "Authorization: Bearer $token" \
    --checks all --suppress-health-check filter_too_much --workers 1 --max-examples "${EXAMPLES:-20}" --seed "${SEED:-1}" \
    "$@" > "$work/$label.txt" || { cat "$work/$label.txt"; echo "FAIL: schemathesis, $label pass" >&2; exit 1; }
  echo "$label: $(grep -E '^  [0-9]+ generated' "$work/$label.txt" | sed 's/^ *//')"
}
# Every operation with the admin token (ingest answers it 403: the token is the wrong kind),
# then what devices call, with the app's ingest key, so generated reports and sessions are
# really decoded, validated and stored.
# schemathesis.toml: what JSON Schema cannot say about one operation (read it); only the
# admin pass calls that operation.
config="$repo/Tests/Schemathesis/schemathesis.toml" run admin "$admin"
# The admin pass leaves the settings it generated last: attestation on (then a generated
# Watchdog-Assertion is refused 400) or approvals would change what the device passes test.
# They run with attestation off and no approvals, as the demo starts.
app=com.example.mail
for setting in 'attestation {"mode": "off"}' 'approvals {"require": []}'; do
  curl -fsS -o /dev/null -X PUT -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
    --data "${setting#* }" "$url/v1/admin/apps/$app/${setting%% *}"
done
run config "$ingest" --include-path /v1/config
# Batches answer invalid items inside their 202; hooks.py checks that answer instead.
SCHEMATHESIS_HOOKS=hooks PYTHONPATH="$repo/Tests/Schemathesis" \
  run ingest "$ingest" --include-path /v1/reports --include-path /v1/sessions --exclude-checks negative_data_rejection
