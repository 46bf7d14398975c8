#!/bin/sh
# The container's runtime stage (deploy/Dockerfile): the Debian packages of
# deploy/deb/runtime-packages (what the binary loads, and Chart.js) plus ca-certificates for
# HTTPS webhooks, and the service user. deploy/deb/test-clean-system.sh runs this same script in
# a debootstrap root and starts the binary there, as no Docker engine runs in CI.
#   install-runtime.sh PACKAGE_LIST
set -eu
packages=$(grep -v '^#' "$1")
apt-get update
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages ca-certificates
rm -rf /var/lib/apt/lists/*
useradd --system --home /var/lib/watchdogd --create-home watchdogd
