#!/usr/bin/env bash
# Proof on a clean system (issue 27): a minimal Debian 12 root made by debootstrap from the
# mirror this machine's apt uses, then
#   1. the .deb installed with `apt-get install ./watchdogd_….deb` (dependencies from Debian),
#      `watchdogd serve` run as the service user with the packaged settings file, checked over
#      HTTP (/readyz, the dashboard page and Chart.js, an ingest, a config poll); then
#      `apt-get remove` (settings, database and user stay; a reinstall serves the same data) and
#      `apt-get purge` (settings and database gone, user kept);
#   2. the container's runtime stage (deploy/Dockerfile): deploy/container/install-runtime.sh in
#      a second fresh root, the binary started there with the Dockerfile's ENV.
# The roots share the network with this machine, so the daemons listen on 127.0.0.1:0.
#   deploy/deb/test-clean-system.sh PATH/TO/watchdogd_VERSION_amd64.deb
# Needs root (debootstrap, chroot, mount). The base root is cached as a tarball in
# $WATCHDOG_ROOT_CACHE (default /var/cache/watchdog-ci) and refreshed after a week.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
deb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -f "$deb" ] || { echo "usage: $0 watchdogd_VERSION_amd64.deb" >&2; exit 2; }
. "$repo/Tests/lib/listening.sh"
cache=${WATCHDOG_ROOT_CACHE:-/var/cache/watchdog-ci}
work=$(mktemp -d /tmp/watchdog-clean-system.XXXXXX)
roots=()
daemon_pid=""

cleanup() {
  [ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  for root in "${roots[@]}"; do
    umount "$root/proc" "$root/dev/pts" "$root/dev" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# The mirror and suites of this machine's apt (deb822 .sources or a one-line sources.list).
mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n 1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || fail "no Debian mirror in /etc/apt/sources.list*"

base="$cache/debian12-minbase.tar.gz"
if [ -z "$(find "$base" -mtime -7 2>/dev/null)" ]; then
  echo "== debootstrap bookworm (minbase) from $mirror ==" >&2
  mkdir -p "$cache"
  fresh="$work/debootstrap"
  debootstrap --variant=minbase bookworm "$fresh" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -n 30 "$work/debootstrap.log" >&2; fail "debootstrap"; }
  # The same suites as this machine (updates, security), so apt resolves as it does here.
  if ls /etc/apt/sources.list.d/*.sources > /dev/null 2>&1; then
    rm -f "$fresh/etc/apt/sources.list"
    cp /etc/apt/sources.list.d/*.sources "$fresh/etc/apt/sources.list.d/"
  fi
  rm -rf "$fresh/var/cache/apt/archives/"*.deb "$fresh/var/lib/apt/lists/"*
  tar -C "$fresh" -czf "$base.tmp" . && mv "$base.tmp" "$base"
  rm -rf "$fresh"
fi

# new_root NAME: sets root to a fresh copy of the base with /proc and /dev, where no service starts.
new_root() {
  root="$work/$1"
  mkdir -p "$root"
  tar -C "$root" -xzf "$base"
  roots+=("$root")
  mount -t proc proc "$root/proc"
  mount --bind /dev "$root/dev"
  mount --bind /dev/pts "$root/dev/pts"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
}

# serve ROOT LOG COMMAND…: starts a daemon in ROOT; sets url and daemon_pid. chroot, setpriv
# and env each exec the next, so daemon_pid is watchdogd's own and gets the SIGTERM.
serve() {
  local root=$1 log=$2
  shift 2
  : > "$log"
  chroot "$root" "$@" > "$log" 2> "$log.err" &
  daemon_pid=$!
  url=$(listening_url "$log")
  [ -n "$url" ] || { cat "$log" "$log.err" >&2; fail "watchdogd did not start in $root"; }
}

stop_daemon() {
  kill -TERM "$daemon_pid"
  local status=0
  wait "$daemon_pid" || status=$?
  daemon_pid=""
  [ "$status" -eq 0 ] || fail "watchdogd exited $status after SIGTERM"
}

# check_http KEY: /readyz, the dashboard and Chart.js, an ingest (202) and a config poll.
check_http() {
  local key=$1 status
  status=$(curl -s -o "$work/body" -w '%{http_code}' "$url/readyz")
  [ "$status" = 200 ] && grep -q '"ready"' "$work/body" || fail "/readyz: $status $(cat "$work/body")"
  status=$(curl -s -o "$work/body" -w '%{http_code}' "$url/")
  [ "$status" = 200 ] && grep -qi '<!doctype html' "$work/body" || fail "dashboard page: $status"
  status=$(curl -s -o /dev/null -w '%{http_code}' "$url/assets/chart.js/chart.mjs")
  [ "$status" = 200 ] || fail "Chart.js from libjs-chart.js: $status"
  python3 - "$repo/Tests/Fixtures/reports/valid-batch.json" > "$work/batch.json" <<'PY'
import datetime, json, sys, uuid
report = json.load(open(sys.argv[1]))["reports"][0]
report["id"] = str(uuid.uuid4())
report["occurred_at"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
print(json.dumps({"reports": [report]}))
PY
  status=$(curl -s -o "$work/body" -w '%{http_code}' -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    --data-binary @"$work/batch.json" "$url/v1/reports")
  [ "$status" = 202 ] && grep -q '"accepted":1' "$work/body" || fail "ingest: $status $(cat "$work/body")"
  status=$(curl -s -o "$work/body" -w '%{http_code}' -H "Authorization: Bearer $key" \
    "$url/v1/config?app=com.example.mail&version=1.0&install_id=I-1")
  [ "$status" = 200 ] || fail "config poll: $status $(cat "$work/body")"
  ok "$url: /readyz, dashboard, Chart.js, ingest 202, config poll 200"
}

started=$SECONDS
echo "== the .deb in a fresh Debian 12 root ==" >&2
new_root deb
cp "$deb" "$root/tmp/"
chroot "$root" apt-get update -qq
chroot "$root" sh -c "cd /tmp && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ./$(basename "$deb")" > "$work/install.log" 2>&1 \
  || { cat "$work/install.log" >&2; fail "apt-get install ./$(basename "$deb")"; }
ok "apt-get install ./$(basename "$deb") resolved its dependencies from Debian"
chroot "$root" id watchdogd > /dev/null || fail "no system user watchdogd"
[ "$(chroot "$root" stat -c '%U %a' /var/lib/watchdogd)" = "watchdogd 700" ] || fail "/var/lib/watchdogd: $(chroot "$root" stat -c '%U %a' /var/lib/watchdogd)"
[ "$(chroot "$root" stat -c '%U:%G %a' /etc/watchdogd/watchdogd.env)" = "root:watchdogd 640" ] || fail "watchdogd.env permissions"
grep -qx /etc/watchdogd/watchdogd.env "$root/var/lib/dpkg/info/watchdogd.conffiles" || fail "watchdogd.env is not a conffile"
for file in /usr/share/man/man1/watchdogd.1.gz /usr/share/bash-completion/completions/watchdogd \
    /usr/share/zsh/vendor-completions/_watchdogd /usr/share/fish/vendor_completions.d/watchdogd.fish \
    /usr/lib/systemd/system/watchdogd.service /usr/lib/systemd/system/watchdogd-backup.timer /usr/share/watchdogd/openapi.yaml; do
  [ -s "$root$file" ] || fail "missing $file"
done
version=$(chroot "$root" watchdogd --version)
echo "$version" | grep -q "commit $(git -C "$repo" rev-parse HEAD)" || fail "--version does not name the commit: $version"
ok "user, /var/lib/watchdogd, conffile, man page, completions, units; --version: $version"

# As the unit runs it (deploy/watchdogd.service): the service user, the settings file, the
# data dir; Resources/ found in /usr/share/watchdogd without a flag.
as_service=(setpriv --reuid=watchdogd --regid=watchdogd --init-groups env WATCHDOG_DATA_DIR=/var/lib/watchdogd WATCHDOG_LISTEN=127.0.0.1:0
  watchdogd)
key=$(chroot "$root" "${as_service[@]}" apps add com.example.mail --config /etc/watchdogd/watchdogd.env)
serve "$root" "$work/deb.out" "${as_service[@]}" serve --config /etc/watchdogd/watchdogd.env
check_http "$key"
stop_daemon

echo "== apt-get remove: settings, data and user stay ==" >&2
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq watchdogd > /dev/null
[ ! -e "$root/usr/bin/watchdogd" ] || fail "remove left /usr/bin/watchdogd"
[ -f "$root/etc/watchdogd/watchdogd.env" ] || fail "remove deleted the settings"
ls "$root/var/lib/watchdogd/"* > /dev/null 2>&1 || fail "remove deleted the database"
chroot "$root" id watchdogd > /dev/null || fail "remove deleted the user"
chroot "$root" sh -c "cd /tmp && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./$(basename "$deb")" > /dev/null
serve "$root" "$work/deb2.out" "${as_service[@]}" serve --config /etc/watchdogd/watchdogd.env
check_http "$key"
stop_daemon
ok "remove kept settings, database and user; the reinstalled package serves the same app and key"

echo "== apt-get purge: settings and data gone ==" >&2
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq watchdogd > /dev/null
[ ! -e "$root/etc/watchdogd" ] || fail "purge left /etc/watchdogd: $(ls -A "$root/etc/watchdogd")"
[ ! -e "$root/var/lib/watchdogd" ] || fail "purge left /var/lib/watchdogd"
[ -z "$(chroot "$root" dpkg-statoverride --list /etc/watchdogd/watchdogd.env)" ] || fail "purge left the statoverride"
chroot "$root" dpkg -s watchdogd > /dev/null 2>&1 && fail "watchdogd still known to dpkg"
leftovers=$(cd "$root" && find usr etc var/lib -name '*watchdog*' ! -path 'var/lib/dpkg/*' ! -path 'var/lib/apt/*' ! -path 'var/lib/systemd/deb-systemd-helper-*' | sort)
[ -z "$leftovers" ] || fail "purge left: $leftovers"
chroot "$root" id watchdogd > /dev/null || fail "purge removed the user (kept on purpose)"
ok "purge removed /etc/watchdogd and /var/lib/watchdogd; the system user watchdogd stays"
echo "the .deb on a clean system: $((SECONDS - started)) s" >&2

echo "== the container's runtime stage (deploy/Dockerfile) in a fresh Debian 12 root ==" >&2
started=$SECONDS
new_root container
cp "$repo/deploy/deb/runtime-packages" "$repo/deploy/container/install-runtime.sh" "$root/tmp/"
chroot "$root" sh /tmp/install-runtime.sh /tmp/runtime-packages > "$work/runtime.log" 2>&1 \
  || { cat "$work/runtime.log" >&2; fail "install-runtime.sh"; }
# COPY --from=build /out/watchdogd and COPY Resources, as the Dockerfile does: the binary is the
# .deb's (the same release build, stripped).
dpkg-deb -x "$deb" "$work/extracted"
install -D -m 0755 "$work/extracted/usr/bin/watchdogd" "$root/usr/local/bin/watchdogd"
cp -r "$repo/Resources" "$root/usr/share/watchdogd"
# The Dockerfile's ENV, with the listen address on a free loopback port (the root shares this
# machine's network).
read -r -a container_env <<< "$(sed -n 's/^ENV //p' "$repo/deploy/Dockerfile")"
grep -q '^USER watchdogd$' "$repo/deploy/Dockerfile" || fail "the Dockerfile no longer runs as watchdogd"
as_container=(setpriv --reuid=watchdogd --regid=watchdogd --init-groups env "${container_env[@]}" WATCHDOG_LISTEN=127.0.0.1:0 /usr/local/bin/watchdogd)
key=$(chroot "$root" "${as_container[@]}" apps add com.example.mail)
serve "$root" "$work/container.out" "${as_container[@]}" serve
check_http "$key"
stop_daemon
echo "the container's runtime stage: $((SECONDS - started)) s" >&2
echo "PASS: the .deb and the container's runtime stage on a fresh Debian 12"
