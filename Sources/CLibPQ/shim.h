#ifndef WATCHDOG_CLIBPQ_SHIM_H
#define WATCHDOG_CLIBPQ_SHIM_H
/* Debian's libpq-dev puts the client header under postgresql/ (pkg-config's cflags add it). */
#include <libpq-fe.h>
#endif
