#!/usr/bin/env bash
# Builds the Debian package of watchdogd: the release binary (Swift runtime linked statically),
# Resources/ under /usr/share/watchdogd, the systemd unit and backup timer, the settings file as
# a conffile, a man page and bash/zsh/fish completions (both from swift-argument-parser), and
# maintainer scripts that make the system user and /var/lib/watchdogd.
#   deploy/deb/build.sh [OUTPUT_DIR]      # default .build/deb; prints the .deb's path last
# Depends: is what dpkg-shlibdeps finds in the binary plus the libraries it loads with dlopen
# and libjs-chart.js, and must equal deploy/deb/runtime-packages (the container's list too).
# lintian runs on the result.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
out=$(mkdir -p "${1:-.build/deb}" && cd "${1:-.build/deb}" && pwd)
./deploy/setup.sh --package

# The commit --version names (Package.swift reads it from the environment).
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit-modified"
export WATCHDOG_BUILD_COMMIT=$commit
# Who answers for the package (Maintainer:, the changelog); set it to your team's address.
maintainer=${WATCHDOG_DEB_MAINTAINER:-Watchdog maintainers <watchdog@example.org>}

echo "== release build of watchdogd at $commit ==" >&2
# deploy/release-build.sh: static Swift runtime, code laid out by lld (docs/performance.md, memory).
binary=$(./deploy/release-build.sh)
# What that layout asks for, checked on the binary: relative relocations packed, and the order
# file applied (the functions the start runs sit at the front of .text, not among the rest) ...
readelf -d "$binary" | grep -q '(RELR)' || { echo "$binary has no packed relocations (DT_RELR)" >&2; exit 1; }
read -r text_start text_size < <(readelf -SW "$binary" | awk '$2 == ".text" {print $4, $6}')
read -r checked early < <(nm --defined-only --radix=d "$binary" | awk -v start=$((16#$text_start)) -v third=$((16#$text_size / 3)) '
  NR == FNR { if (FNR <= 5000 && $0 ~ /^\$s/) want[$0] = 1; next }
  ($3 in want) { n++; if ($1 - start < third) early++ }
  END { print n + 0, early + 0 }' deploy/link/watchdogd.order -)
if [ "$checked" -lt 500 ] || [ $((early * 10)) -lt $((checked * 9)) ]; then
  echo "$binary: $early of the order file's first $checked Swift functions in the first third of .text: not laid out by it" >&2
  exit 1
fi
# ... and the linker script applied: the start's unnamed code in .text.hot, ahead of .text.
hot=$(readelf -SW "$binary" | awk '$2 == ".text.hot" {print $6}')
[ -n "$hot" ] && [ $((16#$hot)) -gt 0 ] || { echo "$binary has no .text.hot: deploy/link/watchdogd.sections.ld not applied (or stale: run deploy/link/order.sh)" >&2; exit 1; }
echo "layout: packed relocations; $early of $checked start functions in the first third of .text; .text.hot $((16#$hot)) bytes" >&2
# The tree is built where dpkg-shlibdeps expects a package's files: debian/<package>/ beside debian/control.
work=$(mktemp -d /tmp/watchdogd-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
stage="$work/debian/watchdogd"
mkdir -p "$stage/DEBIAN"
printf 'Source: watchdogd\n\nPackage: watchdogd\nArchitecture: amd64\n' > "$work/debian/control"
install -D -m 0755 "$binary" "$stage/usr/bin/watchdogd"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/watchdogd"
version=$("$stage/usr/bin/watchdogd" --version | cut -d' ' -f1)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "unexpected version: $version" >&2; exit 1; }

echo "== Depends: from the binary's libraries ==" >&2
libraries=$(cd "$work" && dpkg-shlibdeps -O debian/watchdogd/usr/bin/watchdogd | sed -n 's/^shlibs:Depends=//p')
# libcurl (webhooks, the CLI's requests) and libpq (the PostgreSQL store) are loaded with dlopen
# when first needed (Sources/CWebhookPost, Sources/CLibPQ), so dpkg-shlibdeps cannot see them:
# named here, libcurl4 from 7.85 (CURLOPT_PROTOCOLS_STR).
depends="$libraries, libcurl4 (>= 7.85.0), libpq5, libjs-chart.js"
names=$(echo "$depends" | tr ',' '\n' | sed 's/(.*//; s/ //g' | sort)
expected=$(grep -v '^#' deploy/deb/runtime-packages | sort)
if [ "$names" != "$expected" ]; then
  echo "the binary's runtime packages differ from deploy/deb/runtime-packages:" >&2
  diff <(echo "$expected") <(echo "$names") >&2 || true
  exit 1
fi

echo "== man page (swift-argument-parser's generate-manual plugin) and completions ==" >&2
# The plugin builds every product first: in debug and without the commit, as CI has already built them.
env -u WATCHDOG_BUILD_COMMIT swift package plugin generate-manual --configuration debug >&2
manual=.build/plugins/GenerateManual/outputs/watchdogd/watchdogd.1
# An empty line is not mdoc (the help text's paragraph breaks): a paragraph macro instead.
install -d "$stage/usr/share/man/man1"
sed 's/^$/.Pp/' "$manual" > "$stage/usr/share/man/man1/watchdogd.1"
gzip -9n "$stage/usr/share/man/man1/watchdogd.1"
completions() { "$stage/usr/bin/watchdogd" --generate-completion-script "$1"; }
install -d "$stage/usr/share/bash-completion/completions" "$stage/usr/share/zsh/vendor-completions" "$stage/usr/share/fish/vendor_completions.d"
# bash sources the file: no #! line.
completions bash | sed '1{/^#!/d}' > "$stage/usr/share/bash-completion/completions/watchdogd"
completions zsh > "$stage/usr/share/zsh/vendor-completions/_watchdogd"
completions fish > "$stage/usr/share/fish/vendor_completions.d/watchdogd.fish"

echo "== files ==" >&2
install -d "$stage/usr/share/watchdogd"
cp -r Resources/. "$stage/usr/share/watchdogd/"
install -D -m 0644 deploy/watchdogd.service "$stage/usr/lib/systemd/system/watchdogd.service"
install -D -m 0644 deploy/watchdogd-backup.service "$stage/usr/lib/systemd/system/watchdogd-backup.service"
install -D -m 0644 deploy/watchdogd-backup.timer "$stage/usr/lib/systemd/system/watchdogd-backup.timer"
install -D -m 0644 deploy/watchdogd.env "$stage/etc/watchdogd/watchdogd.env"
install -D -m 0644 deploy/deb/copyright "$stage/usr/share/doc/watchdogd/copyright"
{
  echo "watchdogd ($version) unstable; urgency=medium"
  echo
  echo "  * Built from commit $commit."
  echo
  echo " -- $maintainer  $(date -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")"
} | gzip -9n > "$stage/usr/share/doc/watchdogd/changelog.gz"
find "$stage" -path "$stage/DEBIAN" -prune -o -type d -exec chmod 0755 {} +
find "$stage/usr/share" "$stage/etc" -type f -exec chmod 0644 {} +

for script in postinst prerm postrm; do install -m 0755 "deploy/deb/$script" "$stage/DEBIAN/$script"; done
echo /etc/watchdogd/watchdogd.env > "$stage/DEBIAN/conffiles"
(cd "$stage" && find usr -type f -exec md5sum {} + | sort -k2) > "$stage/DEBIAN/md5sums"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: watchdogd
Version: $version
Architecture: amd64
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $depends, adduser
Recommends: ca-certificates
Suggests: nginx | reverse-proxy
Section: net
Priority: optional
Description: telemetry server for the keyboard-layout watchdogs of beta iOS apps
 watchdogd takes reports and session starts from the WatchdogKit SDK inside
 beta iOS apps, serves their remote configuration, and shows per-release
 statistics on a dashboard. It stores data in SQLite (one node) or
 PostgreSQL (several nodes) and runs as a systemd service that reports
 readiness and liveness (Type=notify, WatchdogSec=).
CONTROL

deb="$out/watchdogd_${version}_amd64.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >&2
echo "== lintian ==" >&2
# Exit status 0 unless there is an error; warnings are printed and explained in docs/packaging.md.
lintian --fail-on error "$deb" >&2 || { echo "lintian found errors" >&2; exit 1; }
echo "$deb"
