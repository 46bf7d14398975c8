#include "CBuildInfo.h"

// Package.swift defines it from the environment of `swift build`; a C define, because a Swift
// `-D` cannot carry a value.
#ifndef WATCHDOG_BUILD_COMMIT
#define WATCHDOG_BUILD_COMMIT "unknown, built from source"
#endif

const char *watchdog_build_commit(void) {
    return WATCHDOG_BUILD_COMMIT;
}
