// The dictionaries stored bodies are compressed with, as C arrays: SwiftPM resources would need
// Foundation's Bundle at run time, and a Swift array literal of 8 KiB takes the type checker a
// long while.
#ifndef WATCHDOG_ZSTD_DICTIONARIES_H
#define WATCHDOG_ZSTD_DICTIONARIES_H

#include <stddef.h>

/// Dictionary 1 (id 1463025665), trained once by deploy/zstd-dictionary.sh. Never edited.
const void *watchdog_zstd_dictionary_v1(void);
/// Its size in bytes.
size_t watchdog_zstd_dictionary_v1_size(void);

#endif
