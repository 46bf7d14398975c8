#!/usr/bin/env bash
# Writes the layout deploy/release-build.sh links watchdogd with, from callgrind runs of a
# release watchdogd: what it runs to start and idle first, then what it runs to serve ingest
# and config. The kernel maps a binary's code in 64 KiB windows around each page touched, and
# code scattered over 23 MiB left about 14 MiB mapped at idle (docs/performance.md, memory).
# - deploy/link/watchdogd.order (lld --symbol-ordering-file): the functions by name, each group
#   sorted by name (callgrind lists them in no stable order, and within a group the order does
#   not change what is mapped);
# - deploy/link/watchdogd.sections.ld (a linker script that only adds the output section
#   .text.hot before .text): the functions run that the order file cannot name, by object and
#   section — Swift's private functions (closures, thunks: `.text..L__unnamed_7`, no symbol)
#   and helpers whose name many objects define: 209 sections, 7 KiB, at b082d0e; left where
#   they were, those the start ran kept 2 MiB mapped at idle.
#
# Run it after changes that move startup or ingest code (stale files cost memory, never
# correctness: names and sections that no longer exist are skipped, new functions go after):
#   deploy/link/order.sh                 # builds watchdogd first (deploy/release-build.sh)
#   WATCHDOGD=path/to/watchdogd deploy/link/order.sh   # with the link map beside it,
#                                        # path/to/watchdogd.map, as release-build.sh writes
# Needs valgrind, curl and python3. Prints how many functions each group holds.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$repo/deploy/link/watchdogd.order
script=$repo/deploy/link/watchdogd.sections.ld
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
pid=

[ -n "${WATCHDOGD:-}" ] || WATCHDOGD=$("$repo/deploy/release-build.sh")
[ -f "$WATCHDOGD.map" ] || { echo "order.sh: no link map $WATCHDOGD.map (deploy/release-build.sh writes it beside the binary)" >&2; exit 1; }
# valgrind 3.19 cannot read the DWARF 5 of Swift's debug info: a copy without it.
strip -g -o "$work/watchdogd" "$WATCHDOGD"
key=$("$work/watchdogd" apps add com.example.mail --data-dir "$work/data" 2>/dev/null)

# Phase 1, start and idle: from exec until 3 s after "listening"; dumped on its own.
valgrind --tool=callgrind --demangle=no --dump-instr=yes --compress-pos=no --callgrind-out-file="$work/callgrind.out" \
  "$work/watchdogd" serve --listen 127.0.0.1:0 --data-dir "$work/data" > "$work/serve.out" 2> "$work/serve.err" &
pid=$!
. "$repo/Tests/lib/listening.sh"
url=; for _ in 1 2 3 4 5 6; do [ -z "$url" ] && url=$(listening_url "$work/serve.out"); done
[ -n "$url" ] || { echo "watchdogd under callgrind did not start:" >&2; tail -5 "$work/serve.err" >&2; exit 1; }
sleep 3
# Where valgrind loaded the binary: it names as "???" the code outside the ELF section .text
# (the .text.hot this script's output adds) and gives those addresses unrelocated.
base=$(awk -v binary="$work/watchdogd" '$6 == binary && $3 == "00000000" { split($1, range, "-"); print range[1]; exit }' "/proc/$pid/maps")
[ -n "$base" ] || { echo "order.sh: watchdogd's mapping not found in /proc/$pid/maps" >&2; exit 1; }
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

python3 - "$work" "$out" "$script" "$WATCHDOGD.map" "$base" <<'PY'
import bisect, re, sys
work, out, script, linkmap, base = sys.argv[1:6]
base = int(base, 16)
ambiguous = set(open(work + "/ambiguous").read().split())
binary = work + "/watchdogd"

def run(path):
    """The functions callgrind names, and the addresses of the binary's instructions it ran."""
    functions, addresses, objects, current = set(), set(), {}, None
    for line in open(path, errors="replace"):
        if line.startswith("0x"):
            if current == binary:
                addresses.add(int(line.split()[0], 16))
            elif current == "???":
                addresses.add(int(line.split()[0], 16) - base)
            continue
        # An object's name comes with its number the first time either a cost (ob=) or a
        # call (cob=) mentions it; later lines give the number alone.
        match = re.match(r"(c?)ob=\((\d+)\)(?: (.*))?", line)
        if match:
            if match.group(3):
                objects[match.group(2)] = match.group(3).strip()
            if not match.group(1):
                current = objects.get(match.group(2))
            continue
        match = re.match(r"c?fn=\(\d+\) (\S+)", line)
        if match and not match.group(1).startswith("0x") and match.group(1) not in ambiguous:
            functions.add(match.group(1))
    return functions, addresses

# The input sections of the binary's code, from the link map (lld -Map: the columns VMA, LMA,
# size, alignment, then the name indented by 0, 8 or 16 for output section, input section, symbol).
sections, output = [], None
for line in open(linkmap, errors="replace"):
    name = line[49:].rstrip("\n")
    indent = len(name) - len(name.lstrip())
    if indent == 0:
        output = name.strip()
    elif indent == 8 and output.startswith(".text"):
        fields = line.split()
        sections.append((int(fields[0], 16), int(fields[2], 16), name.strip()))
sections.sort()
starts = [start for start, _, _ in sections]

def unnamed(addresses, named):
    """Sections of our objects (SwiftPM's <Module>.build/...o) with code run that no listed name moves."""
    found = set()
    for address in addresses:
        index = bisect.bisect_right(starts, address) - 1
        if index < 0 or address >= starts[index] + sections[index][1]:
            continue
        match = re.match(r".*/([^/]+\.build/.+\.o):\((\.text\.(.+))\)$", sections[index][2])
        if match and match.group(3) not in named:
            found.add((match.group(1), match.group(2)))
    return sorted(found)

# callgrind writes the dump of phase 1 as callgrind.out.1 and the rest at exit as callgrind.out.
idle_functions, idle_addresses = run(work + "/callgrind.out.1")
all_functions, all_addresses = run(work + "/callgrind.out")
idle = sorted(idle_functions)
serving = sorted(all_functions - idle_functions)
with open(out, "w") as f:
    f.write("\n".join(idle + serving) + "\n")
named = set(idle + serving)
idle_sections = unnamed(idle_addresses, named)
placed = set(idle_sections)
serving_sections = [section for section in unnamed(all_addresses, named) if section not in placed]
with open(script, "w") as f:
    f.write("/* Written by deploy/link/order.sh: code watchdogd runs to start and idle, then to serve,\n"
            "   that deploy/link/watchdogd.order cannot name, placed before .text. */\n")
    f.write("SECTIONS {\n  .text.hot : {\n")
    for path, section in idle_sections + serving_sections:
        f.write(f"    */{path}({section})\n")
    f.write("  }\n} INSERT BEFORE .text;\n")
print(f"{out}: {len(idle)} functions to start and idle, then {len(serving)} more to serve")
print(f"{script}: {len(idle_sections)} unnamed sections to start and idle, then {len(serving_sections)} more to serve")
PY
