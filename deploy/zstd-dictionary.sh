#!/usr/bin/env bash
# How the zstd dictionary for stored bodies (Sources/ZstdDictionaries/dictionary_v1.c) was made, once.
# The dictionary is part of the file format: every stored body names it by its id in the zstd
# frame header, so dictionary_v1.c is never regenerated or edited. A second run makes another
# dictionary (the demo's ids and times differ from run to run): that is why the file is
# checked in and this script only records how it was made. A better dictionary is a
# v2 with a new id beside it, and the store keeps reading both (StoredBody).
#
#   deploy/zstd-dictionary.sh WATCHDOGD OUT.c [DICT_ID]
#
# Samples: 6,000 report bodies from `watchdogd demo` (the project's model of a fleet running
# WatchdogKit), half as WatchdogKit spells JSON (compact) and half as hand-written clients do
# (", " and ": "), and a session start for every third report, made from its fields. Not the
# benchmark's payloads (Tests/Benchmarks/payloads, another generator), so the benchmark's disk
# figure is not measured on the dictionary's own training data. zstd --train, 8 KiB.
# Needs: zstd, python3, curl.
set -euo pipefail
watchdogd=${1:?usage: zstd-dictionary.sh WATCHDOGD OUT.c [DICT_ID]}
out=${2:?usage: zstd-dictionary.sh WATCHDOGD OUT.c [DICT_ID]}
dict_id=${3:-1463025665}   # "WD" 00 01: above the 0–32767 range zstd reserves
work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$watchdogd" demo --reports 30000 --releases 5 --data-dir "$work/demo" > /dev/null
token=$("$watchdogd" tokens add --role viewer samples --data-dir "$work/demo")
"$watchdogd" serve --listen 127.0.0.1:0 --data-dir "$work/demo" --log-level warning --retention-days 0 > "$work/serve.out" &
pid=$!
for _ in $(seq 100); do grep -q '^listening on ' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^listening on \(http:\/\/[^ ]*\)$/\1/p' "$work/serve.out")
curl -sf -H "Authorization: Bearer $token" "$url/v1/apps/com.example.mail/reports.ndjson" > "$work/reports.ndjson"
mkdir "$work/samples"
python3 - "$work/reports.ndjson" "$work/samples" <<'PY'
import json, random, sys
lines = open(sys.argv[1]).read().splitlines()
random.Random(26).shuffle(lines)
for i, line in enumerate(lines[:6000]):
    report = json.loads(line)["report"]
    separators = (", ", ": ") if i % 2 else (",", ":")
    dump = lambda value: json.dumps(value, separators=separators, ensure_ascii=False)
    open("%s/r%05d.json" % (sys.argv[2], i), "w").write(dump(report))
    if i % 3 == 0:
        start = {key: report[key] for key in ("install_id", "app", "release", "device")}
        start = {"id": report["session_id"], **start, "started_at": report["occurred_at"]}
        open("%s/s%05d.json" % (sys.argv[2], i), "w").write(dump(start))
PY
zstd -q --train "$work"/samples/* -o "$work/dictionary" --maxdict=8192 --dictID="$dict_id"
python3 - "$work/dictionary" "$out" "$dict_id" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
rows = [", ".join("0x%02x" % b for b in data[i:i + 16]) for i in range(0, len(data), 16)]
open(sys.argv[2], "w").write(
    "// zstd dictionary 1 for stored report and session bodies, id %s: made once by\n"
    "// deploy/zstd-dictionary.sh and never edited (stored bodies name it; see StoredBody).\n"
    "#include \"watchdog_zstd_dictionaries.h\"\n\n"
    "static const unsigned char dictionary[%d] = {\n    %s,\n};\n\n"
    "const void *watchdog_zstd_dictionary_v1(void) { return dictionary; }\n"
    "size_t watchdog_zstd_dictionary_v1_size(void) { return sizeof dictionary; }\n"
    % (sys.argv[3], len(data), ",\n    ".join(rows)))
PY
echo "wrote $out: $(stat -c %s "$work/dictionary") bytes, id $dict_id"
