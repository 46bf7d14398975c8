// libpq, loaded with dlopen when the PostgreSQL store is first opened rather than linked: a
// daemon on SQLite maps neither libpq nor what it pulls in (OpenSSL, Kerberos, LDAP and GnuTLS).
// The types and constants are libpq's own header (libpq-dev); the functions are its, called
// through pointers found by name, under the `pq_` names below (libpq's without `PQ`).
#ifndef WATCHDOG_LIBPQ_SHIM_H
#define WATCHDOG_LIBPQ_SHIM_H

#include <postgresql/libpq-fe.h>
#include <stddef.h>

/// Loads libpq once (later calls return the first outcome): NULL when it is ready, else why
/// not (a missing libpq5 names the package).
const char *pq_load(void);

// Only after `pq_load` returned NULL.
PGconn *pq_connectdb(const char *conninfo);
ConnStatusType pq_status(const PGconn *connection);
char *pq_errorMessage(const PGconn *connection);
void pq_finish(PGconn *connection);
PGresult *pq_prepare(PGconn *connection, const char *name, const char *query, int count, const Oid *types);
PGresult *pq_execPrepared(PGconn *connection, const char *name, int count, const char *const *values,
                          const int *lengths, const int *formats, int resultFormat);
PGresult *pq_exec(PGconn *connection, const char *query);
ExecStatusType pq_resultStatus(const PGresult *result);
char *pq_resultErrorField(const PGresult *result, int field);
char *pq_resultErrorMessage(const PGresult *result);
void pq_clear(PGresult *result);
int pq_ntuples(const PGresult *result);
int pq_nfields(const PGresult *result);
int pq_getisnull(const PGresult *result, int row, int column);
char *pq_getvalue(const PGresult *result, int row, int column);
char *pq_cmdTuples(PGresult *result);
int pq_socket(const PGconn *connection);
int pq_consumeInput(PGconn *connection);
PGnotify *pq_notifies(PGconn *connection);
void pq_freemem(void *pointer);

#endif
