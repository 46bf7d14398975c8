#!/usr/bin/env bash
# WatchdogKit's documentation: `swift package generate-documentation --target WatchdogKit` with
# no warning, and a doc comment on every public declaration of ours that the symbol graph holds
# (what Linux compiles: the `#if os(iOS)` code is not in it).
set -euo pipefail
cd "$(dirname "$0")/../.."
swift package generate-documentation --target WatchdogKit --warnings-as-errors 2>&1 | tail -n 3
graph=$(find .build -path '*/extracted-symbols/*/WatchdogKit/WatchdogKit.symbols.json' | head -n 1)
python3 - "$graph" <<'PY'
import json, sys
graph = json.load(open(sys.argv[1]))
ours, missing = 0, []
for symbol in graph['symbols']:
    uri = symbol.get('location', {}).get('uri', '')
    # Synthesized and inherited members (==, hash(into:)) have no location in our sources.
    if symbol['accessLevel'] not in ('public', 'open') or '/Sources/WatchdogKit/' not in uri:
        continue
    ours += 1
    if not symbol.get('docComment'):
        line = symbol['location']['position']['line'] + 1
        missing.append(f"{uri.split('/Sources/', 1)[1]}:{line}: {'.'.join(symbol['pathComponents'])}")
print(f"{ours - len(missing)} of {ours} public declarations documented")
for entry in missing: print("FAIL: no doc comment:", entry)
sys.exit(1 if missing else 0)
PY
