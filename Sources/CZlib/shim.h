#ifndef WATCHDOG_CZLIB_SHIM_H
#define WATCHDOG_CZLIB_SHIM_H
#include <zlib.h>

/* inflateInit2 and deflateInit2 are macros that pass ZLIB_VERSION and the stream size;
   Swift cannot import function-like macros, so they get fixed-arity wrappers here. */
static inline int watchdog_inflate_init_gzip(z_stream *stream) {
    /* 15 + 16: a 32 KiB window and a gzip header (RFC 1952), not zlib's own. */
    return inflateInit2(stream, 15 + 16);
}

static inline int watchdog_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

/* zlib format (RFC 1950), not gzip: its header names the preset dictionary (FDICT + DICTID)
   and its trailer checks the data (Adler-32), so a stored body says which dictionary it needs
   and a damaged one fails to inflate instead of inflating to something else. */
static inline int watchdog_deflate_init_zlib(z_stream *stream, int level, int window_bits, int mem_level) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, mem_level, Z_DEFAULT_STRATEGY);
}

static inline int watchdog_inflate_init_zlib(z_stream *stream) {
    return inflateInit2(stream, 15);
}
#endif
