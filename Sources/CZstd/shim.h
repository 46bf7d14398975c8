#ifndef WATCHDOG_CZSTD_SHIM_H
#define WATCHDOG_CZSTD_SHIM_H
/* Debian's libzstd (libzstd-dev): stored bodies are zstd frames with a trained dictionary
   (Sources/ZstdDictionaries). Only zstd's stable API is used. */
#include <zstd.h>
#endif
