#!/usr/bin/env bash
# An app that depends on WatchdogKit as README tells iOS teams to (Examples/WatchdogExample: this
# package with its `Server` trait off) must resolve no package but this one, and build WatchdogKit
# with none of the server's packages; and nothing WatchdogKit builds from may ask pkg-config for
# a library (on a Mac with Homebrew's zlib, pkg-config points an iOS build at the macOS dylib).
# Linux only needs Swift: the example's app code is `#if os(iOS)`, so here it builds WatchdogKit
# and its local targets exactly as the app resolves them.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
example=$root/Examples/WatchdogExample

echo "-- swift package show-dependencies (Examples/WatchdogExample)"
(cd "$example" && swift package show-dependencies)
(cd "$example" && swift package show-dependencies --format json) > /tmp/watchdog-example-deps.json
(cd "$root" && swift package dump-package) > /tmp/watchdog-package.json
python3 - /tmp/watchdog-example-deps.json /tmp/watchdog-package.json <<'PY'
import json, sys
example, package = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
failures = []
deps = example.get('dependencies', [])
if len(deps) != 1:
    failures.append(f"the example resolves {len(deps)} packages, not only this repository's: {[d['url'] for d in deps]}")
for dep in deps:
    for inner in dep.get('dependencies', []):
        failures.append(f"the example resolves {inner['url']} {inner.get('version', '')} through {dep['name']}")
# WatchdogKit and the local targets it builds from: no package product, no pkg-config.
targets = {t['name']: t for t in package['targets']}
seen, pending = set(), ['WatchdogKit']
while pending:
    name = pending.pop()
    if name in seen: continue
    seen.add(name)
    target = targets[name]
    if target.get('pkgConfig'):
        failures.append(f"{name} finds its library through pkg-config ({target['pkgConfig']}): a module map's link is all an Apple SDK needs")
    for dependency in target.get('dependencies', []):
        kind, value = next(iter(dependency.items()))
        if kind == 'product':
            failures.append(f"{name} depends on {value[1]}'s product {value[0]}: apps would need that package")
        else:
            pending.append(value[0])
print(f"WatchdogKit builds from {sorted(seen)}")
for failure in failures: print("FAIL:", failure)
sys.exit(1 if failures else 0)
PY

echo "-- swift build (Examples/WatchdogExample, Linux: WatchdogKit as the app resolves it)"
(cd "$example" && swift build 2>&1 | tail -n 3)
echo "the example app resolves and builds WatchdogKit with no other package"
