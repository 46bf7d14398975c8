/* The same-work storage yardstick: raw SQLite writing exactly the rows watchdogd wrote for a
   load, into the tables and indexes watchdogd creates, with no parsing and no server.

   SOURCE is a copy of watchdogd's database after a load of one payload (run.sh: POST 100 of
   payloads/batch100.json with fresh ids); TARGET is a fresh watchdogd database with its schema
   (made by `watchdogd apps add`, so the same tables, indexes and pragmas). Per transaction of
   BATCH reports it inserts the next BATCH rows of SOURCE's `reports` — every column as stored:
   the ids' 16 bytes in their stored (rowid) order, the compressed body bytes, the flags — and
   upserts every row of each roll-up table SOURCE holds, once: what watchdogd's writer does per
   transaction for a payload whose every request has the same releases, kinds, screens and
   hours (only the ids differ). When SOURCE's reports run out it starts over with the ids'
   48-bit time prefix moved past the last one, so ids stay unique and in the same order.
   It does not probe each report's session (one primary-key lookup in `sessions`, empty here),
   which watchdogd does before inserting the row.

   Build: cc -O2 -o sqlite_same_work sqlite_same_work.c -lsqlite3
   Run:   ./sqlite_same_work SOURCE TARGET SECONDS BATCH normal|full
   Prints: rows=… batch=… synchronous=… seconds=… rows_per_s=… rollup_rows=… */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static sqlite3 *db;

static void check(sqlite3 *handle, int rc, const char *what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    fprintf(stderr, "sqlite_same_work: %s: %s\n", what, sqlite3_errmsg(handle));
    exit(1);
  }
}

static void exec(const char *sql) { check(db, sqlite3_exec(db, sql, NULL, NULL, NULL), sql); }

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* What watchdogd's Rollup.write upserts per transaction (Sources/WatchdogStore/SQLite/Rollup.swift). */
static const char *rollups[] = {
  "releases", "release_kinds", "release_breakdown", "release_hourly", "issue_releases", "keyboard_heights",
  "test_crash_daily", "release_idiom_sessions", "release_affected", "release_installs", "release_install_kinds",
  "release_networks", "release_hourly_sessions",
};

/* A table's rows held in memory, and the statement that writes one. */
typedef struct {
  sqlite3_value **values; /* rows * columns */
  long rows;
  int columns;
  sqlite3_stmt *write;
} Table;

/* Reads every row of SOURCE.name (in rowid order for `reports`) and prepares, on the target, an
   insert (reports) or an upsert setting every non-key column (roll-ups). */
static Table load(sqlite3 *source, const char *name, int upsert) {
  Table table = {0};
  char sql[4096], columns[2048] = "", params[1024] = "", set[2048] = "", conflict[1024] = "";
  snprintf(sql, sizeof sql, "SELECT name, pk FROM pragma_table_info('%s')", name);
  sqlite3_stmt *info;
  check(source, sqlite3_prepare_v2(source, sql, -1, &info, NULL), sql);
  while (sqlite3_step(info) == SQLITE_ROW) {
    const char *column = (const char *)sqlite3_column_text(info, 0);
    int pk = sqlite3_column_int(info, 1);
    table.columns++;
    snprintf(columns + strlen(columns), sizeof columns - strlen(columns), "%s\"%s\"", table.columns > 1 ? ", " : "", column);
    snprintf(params + strlen(params), sizeof params - strlen(params), "%s?", table.columns > 1 ? ", " : "");
    if (pk == 0) snprintf(set + strlen(set), sizeof set - strlen(set), "%s\"%s\" = excluded.\"%s\"", set[0] ? ", " : "", column, column);
    else snprintf(conflict + strlen(conflict), sizeof conflict - strlen(conflict), "%s\"%s\"", conflict[0] ? ", " : "", column);
  }
  sqlite3_finalize(info);
  if (table.columns == 0) return table; /* not in this watchdogd's schema */
  if (upsert && set[0])
    snprintf(sql, sizeof sql, "INSERT INTO \"%s\" (%s) VALUES (%s) ON CONFLICT (%s) DO UPDATE SET %s", name, columns, params, conflict, set);
  else
    snprintf(sql, sizeof sql, "INSERT INTO \"%s\" (%s) VALUES (%s)%s", name, columns, params, upsert ? " ON CONFLICT DO NOTHING" : "");
  check(db, sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &table.write, NULL), sql);

  snprintf(sql, sizeof sql, "SELECT %s FROM \"%s\"%s", columns, name, upsert ? "" : " ORDER BY rowid");
  sqlite3_stmt *read;
  check(source, sqlite3_prepare_v2(source, sql, -1, &read, NULL), sql);
  long capacity = 0;
  while (sqlite3_step(read) == SQLITE_ROW) {
    if (table.rows == capacity) {
      capacity = capacity ? capacity * 2 : 1024;
      table.values = realloc(table.values, (size_t)capacity * (size_t)table.columns * sizeof *table.values);
      if (!table.values) { fprintf(stderr, "sqlite_same_work: out of memory\n"); exit(1); }
    }
    for (int c = 0; c < table.columns; c++) table.values[table.rows * table.columns + c] = sqlite3_value_dup(sqlite3_column_value(read, c));
    table.rows++;
  }
  sqlite3_finalize(read);
  return table;
}

static void write_row(Table *table, long row, int id_column, uint64_t pass, uint64_t span) {
  for (int c = 0; c < table->columns; c++) {
    sqlite3_value *value = table->values[row * table->columns + c];
    if (c == id_column && pass > 0 && sqlite3_value_type(value) == SQLITE_BLOB && sqlite3_value_bytes(value) == 16) {
      unsigned char id[16];
      memcpy(id, sqlite3_value_blob(value), 16);
      uint64_t ms = 0;
      for (int b = 0; b < 6; b++) ms = ms << 8 | id[b];
      ms += pass * span;
      for (int b = 5; b >= 0; b--) { id[b] = (unsigned char)ms; ms >>= 8; }
      sqlite3_bind_blob(table->write, c + 1, id, 16, SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_value(table->write, c + 1, value);
    }
  }
  check(db, sqlite3_step(table->write), "write");
  check(db, sqlite3_reset(table->write), "reset");
}

static uint64_t id_millis(sqlite3_value *value) {
  uint64_t ms = 0;
  if (sqlite3_value_type(value) != SQLITE_BLOB || sqlite3_value_bytes(value) != 16) return 0;
  const unsigned char *id = sqlite3_value_blob(value);
  for (int b = 0; b < 6; b++) ms = ms << 8 | id[b];
  return ms;
}

int main(int argc, char **argv) {
  const char *usage = "usage: sqlite_same_work SOURCE TARGET SECONDS BATCH normal|full\n";
  if (argc != 6) { fputs(usage, stderr); return 2; }
  double duration = atof(argv[3]);
  long batch = atol(argv[4]);
  const char *sync = argv[5];
  if (duration <= 0 || batch <= 0 || (strcmp(sync, "normal") != 0 && strcmp(sync, "full") != 0)) { fputs(usage, stderr); return 2; }
  sqlite3 *source;
  if (sqlite3_open_v2(argv[1], &source, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) { fprintf(stderr, "sqlite_same_work: cannot open %s\n", argv[1]); return 1; }
  if (sqlite3_open(argv[2], &db) != SQLITE_OK) { fprintf(stderr, "sqlite_same_work: cannot open %s\n", argv[2]); return 1; }
  exec("PRAGMA journal_mode=WAL");
  exec(strcmp(sync, "full") == 0 ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
  exec("PRAGMA cache_size=-8192"); /* watchdogd's writer: 8 MiB */

  Table reports = load(source, "reports", 0);
  if (reports.rows == 0) { fprintf(stderr, "sqlite_same_work: %s holds no reports\n", argv[1]); return 1; }
  int id_column = 0; /* reports.id comes first */
  enum { count = sizeof rollups / sizeof *rollups };
  Table tables[count];
  long rollup_rows = 0;
  for (int t = 0; t < count; t++) { tables[t] = load(source, rollups[t], 1); rollup_rows += tables[t].rows; }
  uint64_t first = id_millis(reports.values[0]), last = id_millis(reports.values[(reports.rows - 1) * reports.columns]);
  uint64_t span = last >= first ? last - first + 1 : 1;

  double t0 = now(), seconds = 0;
  long written = 0;
  for (long i = 0;; i++) {
    if (i % batch == 0) exec("BEGIN IMMEDIATE");
    write_row(&reports, i % reports.rows, id_column, (uint64_t)(i / reports.rows), span);
    written++;
    if (i % batch == batch - 1) {
      for (int t = 0; t < count; t++)
        for (long r = 0; r < tables[t].rows; r++) write_row(&tables[t], r, -1, 0, 0); /* none for a missing table */
      exec("COMMIT");
      seconds = now() - t0;
      if (seconds >= duration) break;
    }
  }
  printf("rows=%ld batch=%ld synchronous=%s seconds=%.3f rows_per_s=%.0f rollup_rows=%ld source_reports=%ld\n",
         written, batch, sync, seconds, (double)written / seconds, rollup_rows, reports.rows);
  for (int t = 0; t < count; t++) if (tables[t].write) sqlite3_finalize(tables[t].write);
  sqlite3_finalize(reports.write);
  sqlite3_close(db);
  sqlite3_close(source);
  return 0;
}
