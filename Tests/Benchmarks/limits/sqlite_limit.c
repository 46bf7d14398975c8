/* The minimal storage yardstick: raw SQLite inserts of report-sized rows, no parsing, no
   server: fewer rows, columns and indexes than watchdogd writes, but the body as ~1 KB of
   text where watchdogd stores it compressed to about a quarter. Not the same work (that is
   sqlite_same_work.c).

   Each row is what a stored report minimally is: a unique id in the order watchdogd keys the
   ids WatchdogKit sends (a UUID v7, time first, as its 16 bytes: the primary key, so inserts
   land near the right edge of the B-tree), app, version, build, kind, fingerprint,
   occurred_at, and a ~1 KB JSON body; one secondary index; plus an upsert of an hourly roll-up
   row (count per app, release, kind and hour). WAL journal,
   synchronous NORMAL or FULL, transactions of BATCH rows committed one after another for
   SECONDS seconds (so the run lasts as long as the daemon's load, however slow the machine).

   Build: cc -O2 -o sqlite_limit sqlite_limit.c -lsqlite3
   Run:   ./sqlite_limit DBPATH SECONDS BATCH normal|full
   Prints: rows=… batch=… synchronous=… seconds=… rows_per_s=…  (DBPATH is created afresh). */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static sqlite3 *db;

static void check(int rc, const char *what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    fprintf(stderr, "sqlite_limit: %s: %s\n", what, sqlite3_errmsg(db));
    exit(1);
  }
}

static void exec(const char *sql) { check(sqlite3_exec(db, sql, NULL, NULL, NULL), sql); }

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t state;
static uint64_t next_random(void) { /* xorshift64* */
  state ^= state >> 12; state ^= state << 25; state ^= state >> 27;
  return state * 2685821657736338717ULL;
}

/* A UUID v7 as its 16 bytes: 48 bits of milliseconds (plus the row number, so ids increase),
   version 7, random bits, variant 10 — as watchdogd stores the ids WatchdogKit makes. */
static void uuid_v7(unsigned char out[16], long i) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  uint64_t ms = (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
  uint64_t hi = (ms << 16) | 0x7000ULL | (next_random() & 0xfff);
  uint64_t lo = (next_random() & 0x3fffffff00000000ULL) | (0x8ULL << 60) | (uint64_t)(i & 0xffffffff);
  for (int b = 0; b < 8; b++) { out[b] = (unsigned char)(hi >> (56 - 8 * b)); out[8 + b] = (unsigned char)(lo >> (56 - 8 * b)); }
}

static void hex_id(const unsigned char id[16], char out[37]) {
  static const char digits[] = "0123456789abcdef";
  int o = 0;
  for (int b = 0; b < 16; b++) {
    if (b == 4 || b == 6 || b == 8 || b == 10) out[o++] = '-';
    out[o++] = digits[id[b] >> 4]; out[o++] = digits[id[b] & 15];
  }
  out[o] = 0;
}

int main(int argc, char **argv) {
  if (argc != 5) { fprintf(stderr, "usage: sqlite_limit DBPATH SECONDS BATCH normal|full\n"); return 2; }
  const char *path = argv[1];
  double duration = atof(argv[2]);
  long batch = atol(argv[3]);
  const char *sync = argv[4];
  if (duration <= 0 || batch <= 0 || (strcmp(sync, "normal") != 0 && strcmp(sync, "full") != 0)) {
    fprintf(stderr, "usage: sqlite_limit DBPATH SECONDS BATCH normal|full\n"); return 2;
  }
  char sidecar[4096];
  unlink(path);
  snprintf(sidecar, sizeof sidecar, "%s-wal", path); unlink(sidecar);
  snprintf(sidecar, sizeof sidecar, "%s-shm", path); unlink(sidecar);
  if (sqlite3_open(path, &db) != SQLITE_OK) { fprintf(stderr, "sqlite_limit: cannot open %s\n", path); return 1; }
  exec("PRAGMA journal_mode=WAL");
  exec(strcmp(sync, "full") == 0 ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
  exec("CREATE TABLE reports (id BLOB PRIMARY KEY NOT NULL, app TEXT NOT NULL, version TEXT NOT NULL,"
       " build TEXT NOT NULL, kind TEXT NOT NULL, fingerprint TEXT NOT NULL, occurred_at INTEGER NOT NULL,"
       " body TEXT NOT NULL);"
       "CREATE INDEX reports_by_release ON reports (app, version, build, kind, occurred_at);"
       "CREATE TABLE hourly (app TEXT NOT NULL, version TEXT NOT NULL, build TEXT NOT NULL, kind TEXT NOT NULL,"
       " hour INTEGER NOT NULL, reports INTEGER NOT NULL, PRIMARY KEY (app, version, build, kind, hour)) WITHOUT ROWID;");

  sqlite3_stmt *insert, *rollup;
  check(sqlite3_prepare_v2(db, "INSERT INTO reports (id, app, version, build, kind, fingerprint, occurred_at, body)"
                               " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (id) DO NOTHING", -1, &insert, NULL), "prepare insert");
  check(sqlite3_prepare_v2(db, "INSERT INTO hourly (app, version, build, kind, hour, reports) VALUES (?1, ?2, ?3, ?4, ?5, 1)"
                               " ON CONFLICT DO UPDATE SET reports = reports + 1", -1, &rollup, NULL), "prepare rollup");

  static const char *kinds[] = {"view_frame_mismatch", "input_covered_by_keyboard", "keyboard_without_input", "interaction_lock"};
  static const char *versions[] = {"14.1.0", "14.2.0"};
  static const char *builds[] = {"31000", "31245"};
  static const char *screens[] = {"ComposeViewController", "InboxViewController", "SearchViewController", "ThreadViewController"};
  state = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)getpid();
  if (state == 0) state = 1;

  unsigned char key[16];
  char id[37], fingerprint[64], body[1400];
  double t0 = now();
  double seconds = 0;
  for (long i = 0;; i++) {
    if (i % batch == 0) exec("BEGIN IMMEDIATE");
    uuid_v7(key, i);
    hex_id(key, id);
    int k = (int)(i % 4), r = (int)((i / 4) % 2), s = (int)((i / 8) % 4);
    long long occurred = 1763700000LL + i / 10;
    snprintf(fingerprint, sizeof fingerprint, "%s|%s|v%ld", kinds[k], screens[s], i % 13);
    int length = snprintf(body, sizeof body,
        "{\"id\": \"%s\", \"kind\": \"%s\", \"occurred_at\": %lld, \"app\": \"com.example.mail\","
        " \"release\": {\"version\": \"%s\", \"build\": \"%s\", \"channel\": \"beta\"},"
        " \"device\": {\"model\": \"iPhone15,2\", \"os\": \"iOS\", \"os_version\": \"18.1\", \"idiom\": \"phone\", \"locale\": \"ja_JP\"},"
        " \"session_id\": \"S-%ld\", \"install_id\": \"I-%ld\", \"app_state\": \"active\", \"screen\": \"%s\","
        " \"view\": {\"name\": \"composeToolbar\", \"expected\": {\"x\": 0, \"y\": 228, \"width\": 390, \"height\": 44},"
        " \"actual\": {\"x\": 0, \"y\": %ld, \"width\": 390, \"height\": 44}, \"tolerance\": 1.0},"
        " \"keyboard\": {\"visible\": true, \"frame\": {\"x\": 0, \"y\": 272, \"width\": 390, \"height\": 252}, \"mode\": \"docked\","
        " \"height\": 252, \"animation_duration\": 0.25, \"animation_curve\": 7, \"input_mode\": \"ja-JP\", \"notification\": \"keyboardWillChangeFrame\"},"
        " \"action\": {\"auto_fixed\": true, \"test_crash\": false},"
        " \"logs\": [\"[keyboard][tracker] keyboardWillChangeFrame: calculated height - 252.0\","
        " \"[keyboard][watchdog] woof: composeToolbar expected y 228.0, actual y %ld.0\"]}",
        id, kinds[k], occurred, versions[r], builds[r], i % 5000, i % 3000, screens[s], 240 + i % 50, 240 + i % 50);
    sqlite3_bind_blob(insert, 1, key, 16, SQLITE_STATIC);
    sqlite3_bind_text(insert, 2, "com.example.mail", -1, SQLITE_STATIC);
    sqlite3_bind_text(insert, 3, versions[r], -1, SQLITE_STATIC);
    sqlite3_bind_text(insert, 4, builds[r], -1, SQLITE_STATIC);
    sqlite3_bind_text(insert, 5, kinds[k], -1, SQLITE_STATIC);
    sqlite3_bind_text(insert, 6, fingerprint, -1, SQLITE_STATIC);
    sqlite3_bind_int64(insert, 7, occurred);
    sqlite3_bind_text(insert, 8, body, length, SQLITE_STATIC);
    check(sqlite3_step(insert), "insert");
    check(sqlite3_reset(insert), "reset insert");
    sqlite3_bind_text(rollup, 1, "com.example.mail", -1, SQLITE_STATIC);
    sqlite3_bind_text(rollup, 2, versions[r], -1, SQLITE_STATIC);
    sqlite3_bind_text(rollup, 3, builds[r], -1, SQLITE_STATIC);
    sqlite3_bind_text(rollup, 4, kinds[k], -1, SQLITE_STATIC);
    sqlite3_bind_int64(rollup, 5, occurred / 3600);
    check(sqlite3_step(rollup), "rollup");
    check(sqlite3_reset(rollup), "reset rollup");
    if (i % batch == batch - 1) {
      exec("COMMIT");
      seconds = now() - t0;
      if (seconds >= duration) break;
    }
  }
  sqlite3_int64 stored = 0;
  sqlite3_stmt *count;
  check(sqlite3_prepare_v2(db, "SELECT count(*) FROM reports", -1, &count, NULL), "prepare count");
  if (sqlite3_step(count) == SQLITE_ROW) stored = sqlite3_column_int64(count, 0);
  sqlite3_finalize(count);
  printf("rows=%lld batch=%ld synchronous=%s seconds=%.3f rows_per_s=%.0f body_bytes=%d\n",
         (long long)stored, batch, sync, seconds, (double)stored / seconds, (int)strlen(body));
  sqlite3_finalize(insert); sqlite3_finalize(rollup);
  sqlite3_close(db);
  return 0;
}
