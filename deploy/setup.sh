#!/usr/bin/env bash
# Installs the Debian packages watchdogd builds, runs and is tested with. Idempotent.
#   ./deploy/setup.sh            # build, run (Chart.js for the dashboard) and test (headless Chromium)
#   ./deploy/setup.sh --bench    # also what Tests/Benchmarks/*.sh need (wrk, sqlite3, curl, a C compiler)
#   ./deploy/setup.sh --package  # also what deploy/deb/build.sh and deploy/deb/test-clean-system.sh need
set -euo pipefail
# libcurl4-openssl-dev, libpq-dev: the headers of libcurl (webhooks, Sources/CWebhookPost) and libpq
# (Sources/CLibPQ); both libraries are loaded with dlopen when first needed, not linked.
# libzstd-dev: stored bodies are zstd frames with a trained dictionary (Sources/CZstd, Sources/ZstdDictionaries).
# python3-aiosmtpd, openssl: the e-mail hook tests (NotifyMailTests) send to a real SMTP server on
# loopback, with STARTTLS on a throwaway certificate.
packages=(pkg-config libmicrohttpd-dev libsqlite3-dev libpq-dev zlib1g-dev libzstd-dev libcurl4-openssl-dev libjs-chart.js chromium python3-aiosmtpd openssl)
# valgrind: instructions per stored report (callgrind; perf's hardware counters are often not
# available in a VM).
# python3-venv: Tests/Benchmarks/peer.sh installs Bugsink from PyPI into a virtualenv.
# libstdc++-12-dev: deploy/release-build.sh (which the benchmarks and the .deb build with) links
# GCC's libstdc++.a in; the Swift toolchain needs the package too, so it is named here only so
# that nothing relies on that.
[ "${1:-}" = "--bench" ] && packages+=(wrk sqlite3 curl gcc valgrind python3-venv libstdc++-12-dev)
# libcurl4-openssl-dev again (already above): what the package build needs, listed in one place.
[ "${1:-}" = "--package" ] && packages+=(libcurl4-openssl-dev dpkg-dev binutils lintian debootstrap curl libstdc++-12-dev)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "system packages ready: ${packages[*]}" >&2
