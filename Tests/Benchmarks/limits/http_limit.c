/* The HTTP yardstick: libmicrohttpd set up as watchdogd sets it up (internal epoll thread,
   a pool of worker threads, allowed suspend/resume), answering constants and doing nothing else.

     GET  any path  -> 200, a ~200-byte config JSON with an ETag and Cache-Control
                       304 (no body) when If-None-Match equals that ETag
     POST any path  -> reads the whole body into memory, then 202 with a small JSON

   Build: cc -O2 -o http_limit http_limit.c $(pkg-config --cflags --libs libmicrohttpd)
   Run:   ./http_limit [PORT [THREADS]]   port 0 (default) picks a free one; 2 threads by default.
   Prints "listening on http://127.0.0.1:PORT" on stdout once ready, then serves until killed. */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char CONFIG[] =
    "{\"app\":\"com.example.mail\",\"version\":12,\"values\":{\"auto_fix\":true,\"test_crash\":false,"
    "\"watchdog_interval_s\":1.0,\"frame_tolerance_pt\":2.0,\"lock_threshold_s\":10,"
    "\"report_sample_rate\":0.5},\"matched_rules\":[\"rule1\",\"rule2\"]}";
static const char ETAG[] = "\"c0nf1g-12-3f9a2b7c\"";
static const char ACCEPTED[] = "{\"accepted\":1,\"duplicates\":0,\"rejected\":[]}";

/* One request's state: the body received so far (a server must hold it to parse it). */
struct request { int is_post; char *body; size_t length, capacity; };

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *body, size_t length, int etag) {
  struct MHD_Response *r = MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_PERSISTENT);
  if (r == NULL) return MHD_NO;
  if (length > 0 && MHD_add_response_header(r, "Content-Type", "application/json") != MHD_YES) { MHD_destroy_response(r); return MHD_NO; }
  if (etag && (MHD_add_response_header(r, "ETag", ETAG) != MHD_YES
               || MHD_add_response_header(r, "Cache-Control", "private, max-age=60") != MHD_YES)) { MHD_destroy_response(r); return MHD_NO; }
  enum MHD_Result ret = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **req_cls) {
  (void)cls; (void)url; (void)version;
  struct request *q = *req_cls;
  if (q == NULL) { /* headers only so far: answering now would cost the keep-alive */
    q = calloc(1, sizeof *q);
    if (q == NULL) return MHD_NO;
    q->is_post = strcmp(method, "POST") == 0;
    *req_cls = q;
    return MHD_YES;
  }
  if (q->is_post) {
    if (*size != 0) {
      if (q->length + *size > q->capacity) {
        size_t capacity = q->capacity ? q->capacity : 16384;
        while (capacity < q->length + *size) capacity *= 2;
        char *grown = realloc(q->body, capacity);
        if (grown == NULL) return MHD_NO;
        q->body = grown; q->capacity = capacity;
      }
      memcpy(q->body + q->length, data, *size);
      q->length += *size;
      *size = 0;
      return MHD_YES;
    }
    return respond(c, 202, ACCEPTED, sizeof ACCEPTED - 1, 0);
  }
  const char *match = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
  if (match != NULL && strcmp(match, ETAG) == 0) return respond(c, 304, "", 0, 1);
  return respond(c, 200, CONFIG, sizeof CONFIG - 1, 1);
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode code) {
  (void)cls; (void)c; (void)code;
  struct request *q = *req_cls;
  if (q != NULL) { free(q->body); free(q); *req_cls = NULL; }
}

int main(int argc, char **argv) {
  unsigned port = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
  unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
  signal(SIGPIPE, SIG_IGN);
  struct MHD_Daemon *d = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, (uint16_t)port,
      NULL, NULL, &handler, NULL,
      MHD_OPTION_THREAD_POOL_SIZE, threads,
      MHD_OPTION_CONNECTION_LIMIT, 4096u,
      MHD_OPTION_CONNECTION_TIMEOUT, 30u,
      MHD_OPTION_NOTIFY_COMPLETED, &completed, NULL,
      MHD_OPTION_END);
  if (d == NULL) { fprintf(stderr, "http_limit: MHD_start_daemon failed\n"); return 1; }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  printf("listening on http://127.0.0.1:%u\n", info ? (unsigned)info->port : port);
  fflush(stdout);
  for (;;) pause();
}
