#!/usr/bin/env bash
# Runs deploy/nginx.conf for real: a self-signed certificate, nginx on a free port in front of
# watchdogd, and requests over HTTPS — health, an ingest post, the dashboard, and the
# per-address rate limit seeing the forwarded client address. Needs nginx and openssl (.ci/run
# installs them) and a built watchdogd (swift build).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/Tests/lib/listening.sh"
bin=${WATCHDOGD:-$(swift build --package-path "$repo" --show-bin-path)/watchdogd}
work=$(mktemp -d)
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) "${daemon_pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
key=$("$bin" apps add com.example.mail --data-dir "$work/data" 2>/dev/null)
"$bin" serve --listen 127.0.0.1:0 --data-dir "$work/data" --trusted-proxy 127.0.0.1 --cookie-secure --rate-per-address 2 \
  --resources-dir "$repo/Resources" --log-level warning > "$work/out" &
daemon_pid=$!
url=$(listening_url "$work/out")
port=${url##*:}
tls_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The shipped server block, with this run's certificate, ports and paths.
sed -e "s#server 127.0.0.1:8080;#server 127.0.0.1:$port;#" \
    -e "s#listen 443 ssl http2;#listen 127.0.0.1:$tls_port ssl http2;#" \
    -e "s#/etc/letsencrypt/live/watchdog.example.com/fullchain.pem#$work/cert.pem#" \
    -e "s#/etc/letsencrypt/live/watchdog.example.com/privkey.pem#$work/key.pem#" \
    "$repo/deploy/nginx.conf" > "$work/site.conf"
cat > "$work/nginx.conf" <<CONF
pid $work/nginx.pid;
error_log $work/error.log;
events {}
http {
  access_log off;
  client_body_temp_path $work/body; proxy_temp_path $work/proxy; fastcgi_temp_path $work/fastcgi; uwsgi_temp_path $work/uwsgi; scgi_temp_path $work/scgi;
  include $work/site.conf;
}
CONF
nginx -c "$work/nginx.conf" -p "$work"
sleep 0.5
https="https://127.0.0.1:$tls_port"
curl_tls() { curl -s --cacert "$work/cert.pem" "$@"; }

check() { if [ "$2" != "$3" ]; then echo "FAIL: $1: got '$2', expected '$3'" >&2; tail -5 "$work/error.log" >&2; exit 1; fi; echo "ok: $1"; }
check "health over TLS" "$(curl_tls -o /dev/null -w '%{http_code}' "$https/healthz")" 200
check "HSTS" "$(curl_tls -D - -o /dev/null "$https/healthz" | grep -ci strict-transport-security)" 1
body=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d))' "$repo/Tests/Fixtures/reports/valid-batch.json")
check "ingest over TLS" "$(curl_tls -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$body" "$https/v1/reports")" 202
check "dashboard over TLS" "$(curl_tls -o /dev/null -w '%{http_code}' "$https/")" 200
# The rate limit counts the forwarded client, not the proxy: a client reaching nginx from
# 127.0.0.3 runs out, one from 127.0.0.4 through the same proxy does not.
post() { curl_tls --interface "$1" -o /dev/null -w '%{http_code} ' -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d '{"reports": []}' "$https/v1/reports"; }
statuses=""
for i in $(seq 12); do statuses+=$(post 127.0.0.3); done
check "the forwarded address is rate-limited" "$(echo "$statuses" | grep -c 429)" 1
check "another client through the same proxy keeps its own bucket" "$(post 127.0.0.4)" "202 "
# Hostile clients through the proxy (issue 13): nginx refuses ambiguous framing itself (400,
# connection closed, the smuggled request never reaches watchdogd) and holds a client that
# trickles its headers on its own connection, not on one of watchdogd's slots.
admin=$("$bin" tokens add --role admin proxy-check --data-dir "$work/data" 2>/dev/null)
hostile=$(python3 "$repo/deploy/proxy-hostile.py" "$tls_port" "$work/cert.pem" "$admin" "${TRICKLE_SECONDS:-5}")
echo "$hostile"
for name in cl-with-chunked cl-0-then-n cl-negative cl-hex; do
  check "$name refused by the proxy" "$(echo "$hostile" | awk -v n="$name" '$1 == n {print $2, $3, $4, $5}')" "400 closed not-smuggled by-nginx"
done
check "unknown Transfer-Encoding refused by the proxy" "$(echo "$hostile" | awk '$1 == "te-unknown" {print $2, $4, $5}')" "501 not-smuggled by-nginx"
echo "TLS proxy: all checks passed"
