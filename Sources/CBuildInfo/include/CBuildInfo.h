#ifndef WATCHDOG_CBUILDINFO_H
#define WATCHDOG_CBUILDINFO_H

/// The commit watchdogd was built from, as the build said (WATCHDOG_BUILD_COMMIT in the
/// environment of `swift build`, see Package.swift), or "unknown, built from source".
const char *watchdog_build_commit(void);

#endif
