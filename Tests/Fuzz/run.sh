#!/usr/bin/env bash
# Fuzzes the report decoder and validator (Sources/WatchdogWire), then the App Attest CBOR decoder
# (Sources/WatchdogServer/Attestation), with libFuzzer + AddressSanitizer.
# Built with swiftc directly, outside `swift build`, so the fuzzer build cannot break the package.
# The seed corpus is every report and session batch in Tests/Fixtures; json.dict gives the
# mutator JSON tokens (with it, a removed bounds check in the \u-escape reader is found in
# about 5 s; without it, not in 120 s). A finding (crash, sanitizer report, broken invariant)
# exits non-zero and leaves its input in .build-fuzz/findings.
#   SECONDS_TO_RUN=60 CBOR_SECONDS_TO_RUN=20 bash Tests/Fuzz/run.sh     (defaults 60 and 20)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out="$repo/.build-fuzz"
mkdir -p "$out/corpus" "$out/cbor-corpus" "$out/findings"

swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name WatchdogWireFuzz \
  "$repo"/Sources/WatchdogWire/*.swift "$repo/Tests/Fuzz/ReportDecoderFuzz.swift" \
  -o "$out/report-decoder-fuzz" 2> "$out/build.log" || { cat "$out/build.log"; exit 1; }

swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name WatchdogCBORFuzz \
  "$repo"/Sources/WatchdogServer/Attestation/CBOR.swift "$repo"/Sources/WatchdogServer/Attestation/AuthenticatorData.swift \
  "$repo/Tests/Fuzz/CBORFuzz.swift" -o "$out/cbor-fuzz" 2> "$out/cbor-build.log" || { cat "$out/cbor-build.log"; exit 1; }

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

# CBOR seeds: an attestation object's shape (fmt, attStmt.x5c, authData) and an assertion's.
python3 - "$out/cbor-corpus" <<'PY'
import pathlib, sys
def head(major, n):
    if n < 24: return bytes([major << 5 | n])
    if n < 256: return bytes([major << 5 | 24, n])
    return bytes([major << 5 | 25]) + n.to_bytes(2, "big")
def text(s): return head(3, len(s)) + s.encode()
def byts(b): return head(2, len(b)) + b
auth = bytes(32) + b"\x40" + bytes(4) + b"appattest" + bytes(7) + b"\x00\x20" + bytes(32)
seeds = {
    "attestation": head(5, 3) + text("fmt") + text("apple-appattest") + text("attStmt") + head(5, 2) + text("x5c")
        + head(4, 2) + byts(b"\x30" * 40) + byts(b"\x30" * 30) + text("receipt") + byts(b"r") + text("authData") + byts(auth),
    "assertion": head(5, 2) + text("signature") + byts(b"\x30\x44" + bytes(70)) + text("authenticatorData") + byts(bytes(32) + b"\x00\x00\x00\x00\x07"),
}
for name, data in seeds.items():
    (pathlib.Path(sys.argv[1]) / name).write_bytes(data)
PY
"$out/cbor-fuzz" -max_total_time="${CBOR_SECONDS_TO_RUN:-20}" -max_len=4096 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 "$out/cbor-corpus" > "$out/cbor-fuzz.log" 2>&1 || { tail -60 "$out/cbor-fuzz.log"; exit 1; }
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^Done" "$out/cbor-fuzz.log"
