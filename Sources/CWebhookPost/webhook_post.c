#include "webhook_post.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

void webhook_post_global_init(void) { pthread_once(&global_once, global_init); }

void webhook_post_cancel(int *cancel) { __atomic_store_n(cancel, 1, __ATOMIC_SEQ_CST); }

typedef struct {
    CURL *curl;
    unsigned char *answer;
    size_t capacity;
    webhook_post_result *result;
    /// A GET keeps a 2xx answer's body (the answer is the point); a webhook POST does not.
    int keep_success_body;
} transfer;

/// Keeps the body's start; returning less than given makes libcurl stop with
/// CURLE_WRITE_ERROR and close the connection, so nothing past the cap is downloaded.
static size_t on_body(char *data, size_t size, size_t count, void *context) {
    transfer *t = context;
    size_t given = size * count;
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
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

/// A POST of `body` (`body` non-NULL) or a GET (`body` NULL).
static void perform(const char *url, const char *headers, const unsigned char *body, size_t body_length, long timeout_ms,
                    unsigned char *answer, size_t answer_capacity, const int *cancel, webhook_post_result *result) {
    memset(result, 0, sizeof *result);
    webhook_post_global_init();
    CURL *curl = curl_easy_init();
    if (!curl) {
        snprintf(result->error, sizeof result->error, "libcurl could not start a transfer");
        return;
    }
    struct curl_slist *list = NULL;
    char *copy = strdup(headers), *rest = NULL;
    // strtok_r: several workers post at once.
    for (char *line = copy ? strtok_r(copy, "\n", &rest) : NULL; line; line = strtok_r(NULL, "\n", &rest)) list = curl_slist_append(list, line);
    free(copy);
    // No "Expect: 100-continue" round trip.
    list = curl_slist_append(list, "Expect:");
    char error[CURL_ERROR_SIZE] = "";
    transfer t = {curl, answer, answer_capacity, result, body == NULL};
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    if (body) {
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    }
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, 16384L);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, (void *)cancel);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    CURLcode code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->status);
    if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && result->truncated)) {
        if (code == CURLE_ABORTED_BY_CALLBACK) {
            snprintf(result->error, sizeof result->error, "cancelled: watchdogd is stopping");
        } else if (code == CURLE_OPERATION_TIMEDOUT) {
            snprintf(result->error, sizeof result->error, "no complete answer within %ld ms; connection cut", timeout_ms);
        } else {
            snprintf(result->error, sizeof result->error, "%s", error[0] ? error : curl_easy_strerror(code));
        }
    }
    curl_slist_free_all(list);
    curl_easy_cleanup(curl);
}

void webhook_post(const char *url, const char *headers, const unsigned char *body, size_t body_length, long timeout_ms,
                  unsigned char *answer, size_t answer_capacity, const int *cancel, webhook_post_result *result) {
    static const unsigned char empty[1] = {0};
    perform(url, headers, body ? body : empty, body_length, timeout_ms, answer, answer_capacity, cancel, result);
}

void http_get(const char *url, const char *headers, long timeout_ms, unsigned char *answer, size_t answer_capacity,
              const int *cancel, webhook_post_result *result) {
    perform(url, headers, NULL, 0, timeout_ms, answer, answer_capacity, cancel, result);
}
