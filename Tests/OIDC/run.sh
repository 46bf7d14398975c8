#!/usr/bin/env bash
# OpenID Connect sign-in against a real OpenID provider: django-oidc-provider (PyPI) in a tiny
# Django project (op/), started here on loopback, and `watchdogd serve --oidc-issuer …` in front
# of it; Playwright drives Debian's Chromium through the whole browser flow (test_oidc.py).
# WATCHDOGD names the binary (default: the debug build's). Extra arguments go to pytest.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${WATCHDOGD:-$(swift build --package-path "$repo" --show-bin-path)/watchdogd}
work=$(mktemp -d)
trap 'kill "${daemon_pid:-}" "${op_pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
python3 -c 'import oidc_provider, django, playwright, pytest' 2> /dev/null ||
  python3 -m pip install -q "django>=4.2,<5.3" django-oidc-provider==0.9.0 playwright pytest
op_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export OP_PORT=$op_port OP_DB="$work/op.sqlite3" OP_MODE_FILE="$work/op-mode"
export OIDC_ISSUER="http://127.0.0.1:$op_port/openid"
secret=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
printf '%s\n' "$secret" > "$work/client-secret"
cat > "$work/watchdogd.env" <<CONF
WATCHDOG_OIDC_ISSUER=$OIDC_ISSUER
WATCHDOG_OIDC_CLIENT_ID=watchdog
WATCHDOG_OIDC_CLIENT_SECRET_FILE=$work/client-secret
WATCHDOG_OIDC_ROLE=group:watchdog-admins=admin,group:mail-team=operator:com.example.mail
WATCHDOG_OIDC_PROVIDER_NAME=Test IdP
CONF
"$bin" serve --config "$work/watchdogd.env" --demo --listen 127.0.0.1:0 --data-dir "$work/data" --oidc-jwks-refetch 0 \
  --resources-dir "$repo/Resources" --log-level error > "$work/out" &
daemon_pid=$!
for _ in $(seq 300); do grep -q WATCHDOG_ADMIN_TOKEN "$work/out" 2>/dev/null && break; sleep 0.1; done
grep -q WATCHDOG_ADMIN_TOKEN "$work/out" || { cat "$work/out"; echo "FAIL: watchdogd did not start" >&2; exit 1; }
export WATCHDOG_URL=$(sed -n 's/^export WATCHDOG_URL=//p' "$work/out")
export WATCHDOG_ADMIN_TOKEN=$(sed -n 's/^export WATCHDOG_ADMIN_TOKEN=//p' "$work/out")
cd "$repo/Tests/OIDC/op"
python3 manage.py migrate -v0
python3 manage.py setup_op --redirect-uri "$WATCHDOG_URL/auth/oidc/callback" --secret "$secret" > "$work/kid"
python3 manage.py runserver "127.0.0.1:$op_port" --noreload > "$work/op.log" 2>&1 &
op_pid=$!
for _ in $(seq 300); do curl -sf "$OIDC_ISSUER/.well-known/openid-configuration" > /dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$OIDC_ISSUER/.well-known/openid-configuration" > /dev/null || { cat "$work/op.log"; echo "FAIL: the OpenID provider did not start" >&2; exit 1; }
export OP_DIR="$repo/Tests/OIDC/op"
cd "$repo/Tests/OIDC"
python3 -m pytest -q -p no:cacheprovider "$@" || { echo "--- provider log"; tail -n 40 "$work/op.log"; exit 1; }
