#!/usr/bin/env bash
# Writes deploy/link/watchdogd.order: the functions a release watchdogd runs to start and idle,
# then those it runs to serve ingest and config, each group sorted by name (callgrind lists them
# in no stable order, and within a group the order does not change what is mapped).
# Package.swift hands the file to lld (--symbol-ordering-file) for release builds on Linux, so
# that this code sits together at the front of .text: the kernel maps a binary's code in 64 KiB
# windows around each page touched, and code scattered over 23 MiB left about 14 MiB mapped
# at idle (docs/performance.md, memory).
#
# Run it after changes that move startup or ingest code (a stale file costs memory, never
# correctness: names it lists that no longer exist are skipped, new functions go after):
#   deploy/link/order.sh                 # builds watchdogd first (deploy/release-build.sh)
#   WATCHDOGD=path/to/watchdogd deploy/link/order.sh
# Needs valgrind, curl and python3. Prints how many functions each group holds.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$repo/deploy/link/watchdogd.order
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
pid=

[ -n "${WATCHDOGD:-}" ] || WATCHDOGD=$("$repo/deploy/release-build.sh")
# valgrind 3.19 cannot read the DWARF 5 of Swift's debug info: a copy without it.
strip -g -o "$work/watchdogd" "$WATCHDOGD"
key=$("$work/watchdogd" apps add com.example.mail --data-dir "$work/data" 2>/dev/null)

# Phase 1, start and idle: from exec until 3 s after "listening"; dumped on its own.
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" \
  "$work/watchdogd" serve --listen 127.0.0.1:0 --data-dir "$work/data" > "$work/serve.out" 2> "$work/serve.err" &
pid=$!
. "$repo/Tests/lib/listening.sh"
url=; for _ in 1 2 3 4 5 6; do [ -z "$url" ] && url=$(listening_url "$work/serve.out"); done
[ -n "$url" ] || { echo "watchdogd under callgrind did not start:" >&2; tail -5 "$work/serve.err" >&2; exit 1; }
sleep 3
callgrind_control --dump=idle "$pid" > /dev/null 2>&1

# Phase 2, serving: reports in a batch and one at a time, the remote config, health and metrics.
auth=(-H "Authorization: Bearer $key")
for body in batch100 report1; do
  for _ in 1 2 3; do
    python3 - "$repo/Tests/Benchmarks/payloads/$body.json" > "$work/body.json" <<'PY'
import re, sys, uuid
print(re.sub(r'"id": "[0-9a-f-]+"', lambda _: '"id": "%s"' % uuid.uuid4(), open(sys.argv[1]).read()))
PY
    curl -sf -o /dev/null "${auth[@]}" -H 'Content-Type: application/json' --data-binary @"$work/body.json" "$url/v1/reports"
  done
done
for _ in 1 2 3; do curl -sf -o /dev/null "${auth[@]}" "$url/v1/config?app=com.example.mail&version=14.2.0&build=1"; done
curl -sf -o /dev/null "$url/healthz"; curl -sf -o /dev/null "$url/metrics" || true
kill -INT "$pid"; wait "$pid" 2>/dev/null || true; pid=

# lld moves every section holding a symbol of a listed name, local ones included. A name defined
# more than once (local helpers such as `objectdestroyTm` or `block_copy_helper`, hidden copies
# of a generic's witnesses) that the toolchain's Swift archives define too is left out: their
# objects keep a whole module's code in one section (_RegexParser's 475 KiB), which would move to
# the front though the daemon never runs it. Names defined more than once only in our objects and
# the packages' (one section per function) stay: their copies sit together instead of apart.
toolchain=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift_static/linux
for archive in "$toolchain"/*.a; do nm -A --defined-only "$archive" 2>/dev/null; done \
  | awk '{ member = $1; sub(/:[^:]*$/, "", member) } member !~ /\.(c|cc|cpp|S|s)\.o$/ { print $NF }' | sort -u > "$work/toolchain-swift"
nm --defined-only "$work/watchdogd" | awk '{print $NF}' | sort | uniq -d | comm -12 - "$work/toolchain-swift" > "$work/ambiguous"

python3 - "$work" "$out" <<'PY'
import re, sys
work, out = sys.argv[1], sys.argv[2]
ambiguous = set(open(work + "/ambiguous").read().split())
def names(path):
    seen = []
    for line in open(path, errors="replace"):
        match = re.match(r"c?fn=\(\d+\) (\S+)", line)
        if match and not match.group(1).startswith("0x") and match.group(1) not in ambiguous:
            seen.append(match.group(1))
    return sorted(set(seen))
# callgrind writes the dump of phase 1 as callgrind.out.1 and the rest at exit as callgrind.out.
idle = names(work + "/callgrind.out.1")
first = set(idle)
serving = [name for name in names(work + "/callgrind.out") if name not in first]
with open(out, "w") as f:
    f.write("\n".join(idle + serving) + "\n")
print(f"{out}: {len(idle)} functions to start and idle, then {len(serving)} more to serve")
PY
