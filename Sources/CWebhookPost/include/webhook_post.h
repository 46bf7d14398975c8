// One webhook POST (and the CLI's requests to a running server) over Debian's libcurl, loaded on
// first use, with every limit enforced inside libcurl's own callbacks: the answer's body is read
// up to a cap (a webhook's 2xx not at all), the whole attempt ends at a wall-clock deadline,
// redirects are never followed, and another thread can cut it short.
// A C shim because curl_easy_setopt is variadic, which Swift cannot call.
#ifndef WEBHOOK_POST_H
#define WEBHOOK_POST_H

#include <stddef.h>

/// What one attempt came to.
typedef struct {
    /// The HTTP status; 0 when no answer arrived.
    long status;
    /// Bytes of the answer's body kept in `answer` (at most the cap given).
    size_t answer_length;
    /// Body bytes the receiver sent that were not read (the connection was cut instead).
    int truncated;
    /// Why there was no answer (libcurl's message), empty otherwise.
    char error[256];
} webhook_post_result;

/// Loads libcurl (dlopen: it is not linked, so a daemon without hooks never maps it) and calls
/// `curl_global_init`, once; `webhook_post` and `http_get` call it themselves. NULL when libcurl
/// is ready, else why not (a missing libcurl4 names the package), which every later attempt
/// also gives as its error.
const char *webhook_post_global_init(void);

/// POSTs `body` to `url` (http or https only) with `headers` (`Name: value` lines separated by
/// `\n`). Blocks until the answer's status (2xx) or `answer_capacity` body bytes (other
/// statuses) arrived, the transfer ended, `timeout_ms` passed, or `*cancel` became non-zero.
void webhook_post(const char *url, const char *headers, const unsigned char *body, size_t body_length, long timeout_ms,
                  unsigned char *answer, size_t answer_capacity, const int *cancel, webhook_post_result *result);

/// GETs (`body` NULL) or POSTs `body` to `url` with `headers` (as for `webhook_post`) and keeps
/// up to `answer_capacity` bytes of the answer's body whatever its status (`truncated` when there
/// was more): the CLI's requests to a running server (`watchdogd gate`, `watchdogd rollouts`).
void http_request(const char *url, const char *headers, const unsigned char *body, size_t body_length, long timeout_ms,
                  unsigned char *answer, size_t answer_capacity, const int *cancel, webhook_post_result *result);

/// Sends one e-mail over SMTP (`url` smtp:// with STARTTLS required, or smtps://), logging in
/// with `username`/`password` when given (libcurl picks PLAIN or LOGIN as the server offers),
/// from `from` to `recipients` (`<addr>` lines separated by `\n`); `message` is the whole
/// RFC 5322 message with CRLF line ends. `ca_file`: the CA bundle to trust instead of the
/// system's (empty: the system's). `status` is the server's last reply code (250) on success,
/// 0 with `error` otherwise. Limits as `webhook_post`: `timeout_ms`, `*cancel`.
void smtp_send(const char *url, const char *ca_file, const char *username, const char *password, const char *from, const char *recipients,
               const unsigned char *message, size_t message_length, long timeout_ms, const int *cancel, webhook_post_result *result);

/// Sets a flag `webhook_post` watches (from any thread).
void webhook_post_cancel(int *cancel);

#endif
