#!/usr/bin/env bash
# Fuzzes the report decoder and validator (Sources/WatchdogWire) with libFuzzer + AddressSanitizer.
# Built with swiftc directly, outside `swift build`, so the fuzzer build cannot break the package.
# The seed corpus is every report and session batch in Tests/Fixtures; json.dict gives the
# mutator JSON tokens (with it, a removed bounds check in the \u-escape reader is found in
# about 5 s; without it, not in 120 s). A finding (crash, sanitizer report, broken invariant)
# exits non-zero and leaves its input in .build-fuzz/findings.
#   SECONDS_TO_RUN=60 bash Tests/Fuzz/run.sh     (default 60)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out="$repo/.build-fuzz"
mkdir -p "$out/corpus" "$out/findings"

swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name WatchdogWireFuzz \
  "$repo"/Sources/WatchdogWire/*.swift "$repo/Tests/Fuzz/ReportDecoderFuzz.swift" \
  -o "$out/report-decoder-fuzz" 2> "$out/build.log" || { cat "$out/build.log"; exit 1; }

# Seeds: the fixture batches as sent, and each invalid case's body on its own.
python3 - "$repo/Tests/Fixtures" "$out/corpus" <<'PY'
import json, pathlib, sys
fixtures, corpus = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
n = 0
for path in sorted(fixtures.rglob("*.json")):
    doc = json.loads(path.read_text())
    bodies = [case["body"] for case in doc if isinstance(case, dict) and "body" in case] if isinstance(doc, list) else [doc]
    for body in bodies:
        (corpus / f"seed-{n}.json").write_text(json.dumps(body))
        n += 1
print(f"seed corpus: {n} inputs from {fixtures}")
PY

cd "$out/findings"
"$out/report-decoder-fuzz" -max_total_time="${SECONDS_TO_RUN:-60}" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -dict="$repo/Tests/Fuzz/json.dict" "$out/corpus" > "$out/fuzz.log" 2>&1 || { tail -60 "$out/fuzz.log"; exit 1; }
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^Done" "$out/fuzz.log"
