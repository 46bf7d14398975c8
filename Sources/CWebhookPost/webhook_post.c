#include "webhook_post.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// libcurl is loaded with dlopen on the first request, not linked: a daemon without hooks maps
// neither it nor what it pulls in (OpenSSL, GnuTLS through librtmp and libldap, libssh2…).
// Its functions are called only through these pointers, found by name once.
#define CURL_FUNCTIONS(X)                                                                          \
    X(CURLcode, curl_global_init, (long))                                                          \
    X(CURL *, curl_easy_init, (void))                                                              \
    X(CURLcode, curl_easy_setopt, (CURL *, CURLoption, ...))                                       \
    X(CURLcode, curl_easy_getinfo, (CURL *, CURLINFO, ...))                                        \
    X(CURLcode, curl_easy_perform, (CURL *))                                                       \
    X(void, curl_easy_cleanup, (CURL *))                                                           \
    X(const char *, curl_easy_strerror, (CURLcode))                                                \
    X(struct curl_slist *, curl_slist_append, (struct curl_slist *, const char *))               \
    X(void, curl_slist_free_all, (struct curl_slist *))

#define POINTER(type, name, parameters) static type(*call_##name) parameters;
CURL_FUNCTIONS(POINTER)

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
/// Why libcurl could not be used; empty once it is loaded and initialised.
static char load_error[200] = "not loaded yet";

static void global_init(void) {
    // libcurl4 (the OpenSSL flavour, what libcurl4-openssl-dev links against); soname 4.
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error, "HTTP requests (webhooks, watchdogd gate and rollouts) need libcurl (Debian package libcurl4): %s", dlerror());
        return;
    }
#define FIND(type, name, parameters)                                                               \
    if (!(call_##name = (type(*) parameters)dlsym(library, #name))) {                              \
        snprintf(load_error, sizeof load_error, "libcurl.so.4 has no %s: libcurl4 is too old", #name); \
        return;                                                                                    \
    }
    CURL_FUNCTIONS(FIND)
#undef FIND
    if (call_curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "libcurl could not initialise (curl_global_init)");
        return;
    }
    load_error[0] = 0;
}

const char *webhook_post_global_init(void) {
    pthread_once(&global_once, global_init);
    return load_error[0] ? load_error : NULL;
}

void webhook_post_cancel(int *cancel) { __atomic_store_n(cancel, 1, __ATOMIC_SEQ_CST); }

typedef struct {
    CURL *curl;
    unsigned char *answer;
    size_t capacity;
    webhook_post_result *result;
    /// The CLI's requests keep a 2xx answer's body (the answer is the point); a webhook POST does not.
    int keep_success_body;
} transfer;

/// Keeps the body's start; returning less than given makes libcurl stop with
/// CURLE_WRITE_ERROR and close the connection, so nothing past the cap is downloaded.
static size_t on_body(char *data, size_t size, size_t count, void *context) {
    transfer *t = context;
    size_t given = size * count;
    long status = 0;
    call_curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    if (!t->keep_success_body && status >= 200 && status < 300) {
        t->result->truncated = 1;  // the status is the answer; its body is not read
        return 0;
    }
    size_t room = t->capacity - t->result->answer_length;
    size_t kept = given < room ? given : room;
    memcpy(t->answer + t->result->answer_length, data, kept);
    t->result->answer_length += kept;
    if (t->result->answer_length >= t->capacity) {
        t->result->truncated = 1;
        return 0;
    }
    return given;
}

/// Called at least once a second while the transfer runs: a non-zero return aborts it.
static int on_progress(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    return __atomic_load_n((const int *)context, __ATOMIC_SEQ_CST) != 0;
}

/// A cleared `result` and a new easy handle; NULL (the reason in `result`) when libcurl is
/// missing or cannot start a transfer.
static CURL *start_transfer(webhook_post_result *result) {
    memset(result, 0, sizeof *result);
    const char *unavailable = webhook_post_global_init();
    if (unavailable) {
        snprintf(result->error, sizeof result->error, "%s", unavailable);
        return NULL;
    }
    CURL *curl = call_curl_easy_init();
    if (!curl) snprintf(result->error, sizeof result->error, "libcurl could not start a transfer");
    return curl;
}

/// `list` with each line of `text` (newline-separated) appended; strtok_r: several workers
/// send at once.
static struct curl_slist *append_lines(struct curl_slist *list, const char *text) {
    char *copy = strdup(text), *rest = NULL;
    for (char *line = copy ? strtok_r(copy, "\n", &rest) : NULL; line; line = strtok_r(NULL, "\n", &rest)) list = call_curl_slist_append(list, line);
    free(copy);
    return list;
}

/// A POST of `body` (`body` non-NULL) or a GET (`body` NULL); a 2xx answer's body is kept only
/// when `keep_success_body`.
static void perform(const char *url, const char *headers, const unsigned char *body, size_t body_length, long timeout_ms,
                    unsigned char *answer, size_t answer_capacity, const int *cancel, int keep_success_body,
                    webhook_post_result *result) {
    CURL *curl = start_transfer(result);
    if (!curl) return;
    struct curl_slist *list = append_lines(NULL, headers);
    // No "Expect: 100-continue" round trip.
    list = call_curl_slist_append(list, "Expect:");
    char error[CURL_ERROR_SIZE] = "";
    transfer t = {curl, answer, answer_capacity, result, keep_success_body};
    call_curl_easy_setopt(curl, CURLOPT_URL, url);
    call_curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    call_curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    call_curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    call_curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    call_curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    call_curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    if (body) {
        call_curl_easy_setopt(curl, CURLOPT_POST, 1L);
        call_curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)body);
        call_curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    }
    call_curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    call_curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    call_curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, 16384L);
    call_curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    call_curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    call_curl_easy_setopt(curl, CURLOPT_XFERINFODATA, (void *)cancel);
    call_curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    CURLcode code = call_curl_easy_perform(curl);
    call_curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->status);
    if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && result->truncated)) {
        if (code == CURLE_ABORTED_BY_CALLBACK) {
            snprintf(result->error, sizeof result->error, "cancelled: watchdogd is stopping");
        } else if (code == CURLE_OPERATION_TIMEDOUT) {
            snprintf(result->error, sizeof result->error, "no complete answer within %ld ms; connection cut", timeout_ms);
        } else {
            snprintf(result->error, sizeof result->error, "%s", error[0] ? error : call_curl_easy_strerror(code));
        }
    }
    call_curl_slist_free_all(list);
    call_curl_easy_cleanup(curl);
}

void webhook_post(const char *url, const char *headers, const unsigned char *body, size_t body_length, long timeout_ms,
                  unsigned char *answer, size_t answer_capacity, const int *cancel, webhook_post_result *result) {
    static const unsigned char empty[1] = {0};
    perform(url, headers, body ? body : empty, body_length, timeout_ms, answer, answer_capacity, cancel, 0, result);
}

void http_request(const char *url, const char *headers, const unsigned char *body, size_t body_length, long timeout_ms,
                  unsigned char *answer, size_t answer_capacity, const int *cancel, webhook_post_result *result) {
    perform(url, headers, body, body_length, timeout_ms, answer, answer_capacity, cancel, 1, result);
}

typedef struct {
    const unsigned char *data;
    size_t length;
    size_t sent;
} upload;

static size_t on_read(char *buffer, size_t size, size_t count, void *context) {
    upload *u = context;
    size_t room = size * count, left = u->length - u->sent;
    size_t given = left < room ? left : room;
    memcpy(buffer, u->data + u->sent, given);
    u->sent += given;
    return given;
}

void smtp_send(const char *url, const char *ca_file, const char *username, const char *password, const char *from, const char *recipients,
               const unsigned char *message, size_t message_length, long timeout_ms, const int *cancel, webhook_post_result *result) {
    CURL *curl = start_transfer(result);
    if (!curl) return;
    struct curl_slist *list = append_lines(NULL, recipients);
    char error[CURL_ERROR_SIZE] = "";
    upload u = {message, message_length, 0};
    call_curl_easy_setopt(curl, CURLOPT_URL, url);
    call_curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
    // smtp:// must upgrade with STARTTLS (or fail); smtps:// is TLS from the first byte.
    call_curl_easy_setopt(curl, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
    if (ca_file && ca_file[0]) call_curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    if (username && username[0]) call_curl_easy_setopt(curl, CURLOPT_USERNAME, username);
    if (password && password[0]) call_curl_easy_setopt(curl, CURLOPT_PASSWORD, password);
    call_curl_easy_setopt(curl, CURLOPT_MAIL_FROM, from);
    call_curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, list);
    call_curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    call_curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
    call_curl_easy_setopt(curl, CURLOPT_READDATA, &u);
    call_curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)message_length);
    call_curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    call_curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    call_curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    call_curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    call_curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    call_curl_easy_setopt(curl, CURLOPT_XFERINFODATA, (void *)cancel);
    call_curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    CURLcode code = call_curl_easy_perform(curl);
    long reply = 0;
    call_curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply);
    if (code == CURLE_OK) {
        result->status = reply > 0 ? reply : 250;
    } else if (code == CURLE_ABORTED_BY_CALLBACK) {
        snprintf(result->error, sizeof result->error, "cancelled: watchdogd is stopping");
    } else if (code == CURLE_OPERATION_TIMEDOUT) {
        snprintf(result->error, sizeof result->error, "no complete answer within %ld ms; connection cut", timeout_ms);
    } else {
        snprintf(result->error, sizeof result->error, "%s (SMTP reply %ld)", error[0] ? error : call_curl_easy_strerror(code), reply);
    }
    call_curl_slist_free_all(list);
    call_curl_easy_cleanup(curl);
}
