#ifndef WATCHDOG_CMICROHTTPD_SHIM_H
#define WATCHDOG_CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

/* MHD_start_daemon, MHD_get_daemon_info and MHD_get_connection_info are variadic, and Swift
   does not import C variadic functions. These fixed-arity wrappers pass exactly the options
   watchdogd uses; everything else stays libmicrohttpd's default. */

typedef struct watchdog_daemon_options {
    unsigned int flags;
    const struct sockaddr *address;     /* the listening address (IPv4 or IPv6) */
    MHD_AcceptPolicyCallback accept_policy;  /* asked for every new connection */
    void *accept_policy_context;
    unsigned int thread_pool_size;
    unsigned int connection_limit;
    unsigned int per_ip_connection_limit;
    unsigned int connection_timeout_s;
    size_t connection_memory_limit;
    MHD_AccessHandlerCallback handler;
    void *handler_context;
    MHD_RequestCompletedCallback completed;
    void *completed_context;
    MHD_LogCallback logger;
    void *logger_context;
    MHD_NotifyConnectionCallback notify_connection;  /* connection opened / closed */
    void *notify_connection_context;
} watchdog_daemon_options;

static inline struct MHD_Daemon *watchdog_start_daemon(const watchdog_daemon_options *o) {
    return MHD_start_daemon(o->flags, 0, o->accept_policy, o->accept_policy_context,
        o->handler, o->handler_context,
        /* First, so that libmicrohttpd's messages about the other options reach it too. */
        MHD_OPTION_EXTERNAL_LOGGER, o->logger, o->logger_context,
        MHD_OPTION_SOCK_ADDR, o->address,
        MHD_OPTION_THREAD_POOL_SIZE, o->thread_pool_size,
        MHD_OPTION_CONNECTION_LIMIT, o->connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->per_ip_connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, o->connection_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, o->connection_memory_limit,
        MHD_OPTION_NOTIFY_COMPLETED, o->completed, o->completed_context,
        MHD_OPTION_NOTIFY_CONNECTION, o->notify_connection, o->notify_connection_context,
        MHD_OPTION_END);
}

/* The port the daemon is bound to; 0 when it cannot be read. */
static inline uint16_t watchdog_daemon_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/* The peer's address of a connection, or NULL. */
static inline const struct sockaddr *watchdog_connection_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/* The socket of a connection, or -1. */
static inline int watchdog_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* MHD_LogCallback receives a va_list; formatting it needs vsnprintf, which Swift cannot call
   with a C va_list portably. */
static inline int watchdog_format_log(char *buffer, size_t size, const char *format, va_list args) {
    return vsnprintf(buffer, size, format, args);
}
#endif
