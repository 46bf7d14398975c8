#!/usr/bin/env bash
# The concurrency tests with watchdogd and the tests built under ThreadSanitizer (a separate
# build dir, .build-tsan). The live tests (WatchdogdTests) start the TSan-built daemon; the
# in-memory ones (WatchdogServerTests: ingest, rate limits with a stalled writer, metrics,
# pagination while another client posts) run the same server code inside the TSan-built test
# process. Every process writes its race reports to one directory, and any report there fails
# the run, even from a daemon a test killed before it could exit with TSan's status.
# A planted race (PlantedRace.swift) is built and run first and must be reported.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT
swift build --build-tests --sanitize=thread --scratch-path .build-tsan > "$reports/build.log" 2>&1 || { tail -40 "$reports/build.log"; exit 1; }
# The canary: a planted race must be reported into the same kind of directory.
mkdir -p "$reports/canary"
swiftc -sanitize=thread -o "$reports/planted-race" Tests/ThreadSanitizer/PlantedRace.swift > "$reports/canary.log" 2>&1 || { cat "$reports/canary.log"; exit 1; }
TSAN_OPTIONS="log_path=$reports/canary/race exitcode=0" "$reports/planted-race" > /dev/null
# (grep reads the files itself: `cat | grep -q` fails under pipefail when grep stops early.)
# Swift 6.3 reports the unguarded counter as a "Swift access race" or a "data race", by which check trips first.
if ! grep -Eqs '^WARNING: ThreadSanitizer: (data race|Swift access race)' "$reports"/canary/race*; then
  echo "FAIL: ThreadSanitizer did not report the planted race; its silence on the tests would mean nothing" >&2
  exit 1
fi
echo "ThreadSanitizer canary: the planted race is reported"
status=0
tsan_test() {
  TSAN_OPTIONS="log_path=$reports/race second_deadlock_stack=1" \
    swift test --skip-build --sanitize=thread --scratch-path .build-tsan --filter "$1" || status=$?
}
if [ -n "${TSAN_TESTS:-}" ]; then
  tsan_test "$TSAN_TESTS"
else
  tsan_test "DurabilityTests|HostileClientTests|IngestTests|RateLimitTests|MetricsTests|HealthTests|RetentionTests|BackupTests|BodyBudgetTests|BodyBackPressureTests|BodyDeadlineTests|BadTokenTests|ConnectionSlotTests|StalledExportTests|HTTPTransportTests|ConfigFastPathTests"
  # The fleet runs on Swift's cooperative threads (two on this machine); beside the suites
  # above, which block theirs, it once sent nothing for 180 s, and the kills found no traffic
  # to land on. Alone, it has them to itself.
  tsan_test "EndToEndTests"
fi
if ls "$reports"/race* > /dev/null 2>&1; then
  head -q -n 200 "$reports"/race*
  echo "FAIL: ThreadSanitizer wrote $(ls "$reports"/race* | wc -l) report file(s), $(cat "$reports"/race* | grep -c "^WARNING: ThreadSanitizer" || true) warning(s)" >&2
  exit 1
fi
[ "$status" = 0 ] || exit "$status"
echo "ThreadSanitizer: no reports"
