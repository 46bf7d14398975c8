#include "libpq_shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// Each function libpq is asked for: what it returns (V: nothing), its name without `PQ`, its
// parameters and the names they are passed on by.
#define LIBPQ_FUNCTIONS(X, V)                                                                                   \
    X(PGconn *, connectdb, (const char *a), (a))                                                             \
    X(ConnStatusType, status, (const PGconn *a), (a))                                                        \
    X(char *, errorMessage, (const PGconn *a), (a))                                                          \
    V(finish, (PGconn *a), (a))                                                                        \
    X(PGresult *, prepare, (PGconn *a, const char *b, const char *c, int d, const Oid *e), (a, b, c, d, e)) \
    X(PGresult *, execPrepared,                                                                              \
      (PGconn *a, const char *b, int c, const char *const *d, const int *e, const int *f, int g),            \
      (a, b, c, d, e, f, g))                                                                                 \
    X(PGresult *, exec, (PGconn *a, const char *b), (a, b))                                                  \
    X(ExecStatusType, resultStatus, (const PGresult *a), (a))                                                \
    X(char *, resultErrorField, (const PGresult *a, int b), (a, b))                                          \
    X(char *, resultErrorMessage, (const PGresult *a), (a))                                                  \
    V(clear, (PGresult *a), (a))                                                                       \
    X(int, ntuples, (const PGresult *a), (a))                                                                \
    X(int, nfields, (const PGresult *a), (a))                                                                \
    X(int, getisnull, (const PGresult *a, int b, int c), (a, b, c))                                          \
    X(char *, getvalue, (const PGresult *a, int b, int c), (a, b, c))                                        \
    X(char *, cmdTuples, (PGresult *a), (a))                                                                 \
    X(int, socket, (const PGconn *a), (a))                                                                   \
    X(int, consumeInput, (PGconn *a), (a))                                                                   \
    X(PGnotify *, notifies, (PGconn *a), (a))                                                                \
    V(freemem, (void *a), (a))

#define POINTER(type, name, parameters, arguments) static type(*call_##name) parameters;
#define VOID_POINTER(name, parameters, arguments) POINTER(void, name, parameters, arguments)
LIBPQ_FUNCTIONS(POINTER, VOID_POINTER)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[200] = "not loaded yet";

static void load(void) {
    void *library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error, "the PostgreSQL store needs libpq (Debian package libpq5): %s", dlerror());
        return;
    }
#define FIND(type, name, parameters, arguments)                                                   \
    if (!(call_##name = (type(*) parameters)dlsym(library, "PQ" #name))) {                         \
        snprintf(load_error, sizeof load_error, "libpq.so.5 has no PQ%s: libpq5 is too old", #name); \
        return;                                                                                   \
    }
#define VOID_FIND(name, parameters, arguments) FIND(void, name, parameters, arguments)
    LIBPQ_FUNCTIONS(FIND, VOID_FIND)
    load_error[0] = 0;
}

const char *pq_load(void) {
    pthread_once(&once, load);
    return load_error[0] ? load_error : NULL;
}

#define WRAPPER(type, name, parameters, arguments) \
    type pq_##name parameters { return call_##name arguments; }
#define VOID_WRAPPER(name, parameters, arguments) \
    void pq_##name parameters { call_##name arguments; }
LIBPQ_FUNCTIONS(WRAPPER, VOID_WRAPPER)
