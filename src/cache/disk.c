/* disk.c: the disk tier, one SQLite database (kiln.db) in WAL mode.
 *
 * One row per artifact with its blob, size, an XXH3-128 checksum, what it is,
 * its creation and last-use times, the milliseconds of the build that stored
 * it and how many hits it had (all processes: `kiln cache stats` gives the hit
 * rate, `kiln cache ls --sort hits` the kernels that paid off; a process
 * counts its hits in memory and writes them with its next store, its close,
 * or a flush, never waiting for another's lock to do so); both checks
 * run on every read, and a row that fails them is deleted, counted and never
 * handed out.  A kiln.db made before the last two columns gets them at open
 * (ALTER TABLE ... DEFAULT 0), so it keeps working, and an older kiln reading
 * a newer database ignores them (its INSERTs leave them at their defaults).  WAL gives
 * atomic multi-process writes and crash safety: each store is one transaction
 * (row, counters, end of claim, eviction), so a process killed in the middle
 * of a write leaves the last committed state.
 *
 * Another process may hold the database's write lock for as long as it likes
 * (an open `sqlite3` shell).  Readers never wait for it (WAL); a write waits
 * at most DB_BUSY_MS, and after one such failure writes are skipped for
 * DB_WRITE_PAUSE_MS, with one warning: kernels are built and used, not
 * stored.  A write that fails for any other reason says why before anything
 * else runs on the connection (a ROLLBACK after SQLite ended the transaction
 * itself would replace the error), and a broken database (corrupt, full,
 * failing I/O) turns the tier off.
 *
 * The cache holds code kiln will run, so the directory must be ours and not
 * writable by group or others; otherwise, or when it is unwritable or the
 * database is not one, caching is memory-only and one warning says why.
 *
 * Nothing here takes the cache's lock: cache.c's callers hold it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cache/cache_int.h"

enum {
    LRU_GRAIN_MS = 60 * 1000,      /* a hit rewrites its time of use at most this often */
    DB_WRITE_PAUSE_MS = 30 * 1000, /* after a write lock wait failed, no write is tried this long */
    CACHE_DIR_MAX = 3900           /* bytes of $KILN_CACHE_DIR: room for "/kiln.db-wal" */
};

static const char *const schema =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS artifacts("
    " key BLOB PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, target TEXT NOT NULL,"
    " size INTEGER NOT NULL, checksum BLOB NOT NULL, created INTEGER NOT NULL,"
    " last_used INTEGER NOT NULL, blob BLOB NOT NULL,"
    " hits INTEGER NOT NULL DEFAULT 0, compile_ms REAL NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS artifacts_lru ON artifacts(last_used);"
    "CREATE TABLE IF NOT EXISTS pending(key BLOB PRIMARY KEY, owner TEXT NOT NULL,"
    " expires INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS counters(name TEXT PRIMARY KEY, value REAL NOT NULL);"
    "CREATE TABLE IF NOT EXISTS facts(name TEXT PRIMARY KEY, value TEXT NOT NULL);";

/* Columns added after the first schema: a kiln.db from before gets them. */
static const char *const added_columns[] = {
    "ALTER TABLE artifacts ADD COLUMN hits INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE artifacts ADD COLUMN compile_ms REAL NOT NULL DEFAULT 0",
};

/* Whether artifacts has column name. */
static bool has_column(sqlite3 *db, const char *name) {
    sqlite3_stmt *s;
    bool found = false;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('artifacts') WHERE name = ?1", -1,
                           &s, NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    found = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return found;
}

/* Brings an older kiln.db's artifacts table up to the current schema.  Two
 * processes may both try: the second's ALTER fails with "duplicate column",
 * and the check after it finds the column there. */
static int migrate(sqlite3 *db) {
    static const char *const names[] = {"hits", "compile_ms"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (has_column(db, names[i])) continue;
        int rc = sqlite3_exec(db, added_columns[i], NULL, NULL, NULL);
        if (rc != SQLITE_OK && !has_column(db, names[i])) return rc;
    }
    return SQLITE_OK;
}

static bool safe_path(kiln_cache *c, const char *p, bool dir) {
    struct stat s;
    if (lstat(p, &s) != 0) return errno == ENOENT && !dir;
    if (!dir && S_ISLNK(s.st_mode)) {
        warn(c, "remove the link, or point KILN_CACHE_DIR at the directory it leads to",
             "kiln's cache %s is a symbolic link, which kiln does not follow to the file of "
             "code it runs%s; caching in memory only", p, "");
        return false;
    }
    if (dir ? !S_ISDIR(s.st_mode) : !S_ISREG(s.st_mode)) {
        warn(c, "point KILN_CACHE_DIR at a directory of your own",
             "kiln's cache %s is not a %s; caching in memory only", p, dir ? "directory" : "file");
        return false;
    }
    if (s.st_uid != geteuid()) {
        warn(c, "the cache holds code kiln runs: use a directory you own (KILN_CACHE_DIR)",
             "kiln's cache %s belongs to another user%s; caching in memory only", p, "");
        return false;
    }
    if (s.st_mode & 022) {
        warn(c, "chmod go-w it (the cache holds code kiln runs)",
             "kiln's cache %s is writable by group or others%s; caching in memory only", p, "");
        return false;
    }
    return true;
}

/* mkdir -p; what it creates gets mode 0700 */
static int make_dirs(const char *path) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
    return 0;
}

static char *default_dir(void) {
    const char *env = getenv("KILN_CACHE_DIR");
    char buf[4096];
    if (env) {
        snprintf(buf, sizeof buf, "%s", env);
    } else if ((env = getenv("XDG_CACHE_HOME")) && *env) {
        snprintf(buf, sizeof buf, "%s/kiln", env);
    } else if ((env = getenv("HOME")) && *env) {
        snprintf(buf, sizeof buf, "%s/.cache/kiln", env);
    } else {
        return NULL;
    }
    return strdup(buf);
}

static int open_db(const char *path, sqlite3 **out) {
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                            SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
    if (rc == SQLITE_OK) {
        /* a writer waits this long for another's lock; readers never wait (WAL) */
        sqlite3_busy_timeout(db, DB_BUSY_MS);
        rc = sqlite3_exec(db, schema, NULL, NULL, NULL);
        if (rc == SQLITE_OK) rc = migrate(db);
        /* an SQL error here is a table of another layout (no such column): not ours */
        if ((rc & 0xff) == SQLITE_ERROR) rc = SQLITE_NOTADB;
        /* a file that is a database of something else is not ours either */
        if (rc == SQLITE_OK) {
            sqlite3_stmt *s;
            rc = sqlite3_prepare_v2(db, "SELECT key, kind, name, target, size, checksum, created, "
                                        "last_used, blob, hits, compile_ms FROM artifacts LIMIT 0", -1, &s, NULL);
            sqlite3_finalize(s);
            if (rc != SQLITE_OK) rc = SQLITE_NOTADB;
        }
    }
    if (rc != SQLITE_OK && rc != SQLITE_NOTADB && rc != SQLITE_CORRUPT && db)
        rc = sqlite3_extended_errcode(db) & 0xff;
    *out = db;
    return rc;
}

void disk_open(kiln_cache *c) {
    const char *env = getenv("KILN_CACHE_DIR");
    if (!c->cfg.dir && env && strlen(env) > CACHE_DIR_MAX) {
        char why[64];
        snprintf(why, sizeof why, "longer than %d bytes", CACHE_DIR_MAX);
        warn(c, "use a shorter path", "KILN_CACHE_DIR is %s; caching in memory only", why, "");
        return;
    }
    char *dir = c->cfg.dir ? strdup(c->cfg.dir) : default_dir();
    if (!dir || !*dir) {
        free(dir);
        return;
    }
    if (make_dirs(dir) != 0) {
        warn(c, "set KILN_CACHE_DIR to a writable directory",
             "cannot create kiln's cache directory %s (%s); caching in memory only", dir,
             strerror(errno));
        free(dir);
        return;
    }
    /* the directory as the file system names it: symbolic links along the way (a
     * ~/.cache linked to a scratch disk) are resolved here, so that the database itself,
     * opened without following links, may not be one */
    char real[PATH_MAX];
    if (realpath(dir, real) && strlen(real) <= CACHE_DIR_MAX) {
        free(dir);
        dir = strdup(real);
        if (!dir) return;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/kiln.db", dir);
    if (!safe_path(c, dir, true) || !safe_path(c, path, false)) {
        free(dir);
        return;
    }
    if (access(dir, W_OK) != 0 || (access(path, F_OK) == 0 && access(path, W_OK) != 0)) {
        warn(c, "set KILN_CACHE_DIR to a writable directory",
             "kiln's cache %s is not writable (%s); caching in memory only", dir,
             strerror(errno));
        free(dir);
        return;
    }
    free(dir);
    sqlite3 *db;
    int rc = open_db(path, &db);
    if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT) {
        /* not a database, or not ours, or broken: set it aside and start afresh */
        sqlite3_close(db);
        char aside[4300];
        snprintf(aside, sizeof aside, "%s.corrupt-%lld", path, (long long)now_ms());
        rename(path, aside);
        char wal[4300];
        snprintf(wal, sizeof wal, "%s-wal", path);
        unlink(wal);
        snprintf(wal, sizeof wal, "%s-shm", path);
        unlink(wal);
        warn(c, NULL, "kiln's cache %s was not a valid kiln database; it was moved to %s", path,
             aside);
        rc = open_db(path, &db);
    }
    if (rc != SQLITE_OK) {
        int sys = db ? sqlite3_system_errno(db) : 0;
        char why[512];
        if (sys == EFBIG) /* opening writes the WAL: under `ulimit -f` that can fail */
            snprintf(why, sizeof why, "file size limit reached: %s", strerror(sys));
        else if (sys)
            snprintf(why, sizeof why, "%s: %s", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
                     strerror(sys));
        else
            snprintf(why, sizeof why, "%s", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        struct rlimit fs;
        if (sys != EFBIG && (rc & 0xff) == SQLITE_IOERR && getrlimit(RLIMIT_FSIZE, &fs) == 0 &&
            fs.rlim_cur != RLIM_INFINITY) { /* SQLite's errno may be of a later call */
            size_t n = strlen(why);
            snprintf(why + n, sizeof why - n, ", under a file size limit of %llu bytes",
                     (unsigned long long)fs.rlim_cur);
            sys = EFBIG;
        }
        bool locked = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
        warn(c, sys == EFBIG ? "raise the file size limit (ulimit -f), or set KILN_CACHE_DIR"
                : locked ? "another process holds the database locked: try again once it is "
                           "done, or set KILN_CACHE_DIR to another directory"
                         : "set KILN_CACHE_DIR to a writable directory",
             "cannot use kiln's cache %s (%s); caching in memory only", path, why);
        sqlite3_close(db);
        return;
    }
    c->db = db;
    c->path = strdup(path);
}

/* The result of a statement that binds k as ?1: SQLITE_DONE or an error. */
static int step_key(kiln_cache *c, const char *sql, const kiln_cache_key *k) {
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(c->db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc;
}

static int count(kiln_cache *c, const char *name, double by) {
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(c->db,
                                "INSERT INTO counters(name, value) VALUES(?1, ?2) "
                                "ON CONFLICT(name) DO UPDATE SET value = value + ?2",
                                -1, &s, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 2, by);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc;
}

static const char *code_name(int rc) {
    switch (rc & 0xff) {
    case SQLITE_FULL: return "SQLITE_FULL";
    case SQLITE_IOERR: return "SQLITE_IOERR";
    case SQLITE_CORRUPT: return "SQLITE_CORRUPT";
    case SQLITE_NOTADB: return "SQLITE_NOTADB";
    case SQLITE_CANTOPEN: return "SQLITE_CANTOPEN";
    case SQLITE_READONLY: return "SQLITE_READONLY";
    default: return "SQLITE_ERROR";
    }
}

/* The database failed under us (corrupt pages, an I/O error, a full disk): the
 * disk tier is off for the rest of the process, after one warning that names
 * the failure.  The file is not moved aside here, since other processes may
 * have it open; `kiln cache clear` or removing the directory starts afresh.
 * rc is the extended code of the failure, sys_errno the errno under it. */
static void disk_off(kiln_cache *c, int rc, int sys_errno, const char *doing) {
    if (!c->db) return;
    char path[4200];
    snprintf(path, sizeof path, "%s", c->path ? c->path : "?");
    sqlite3_close(c->db);
    c->db = NULL;
    bool full = (rc & 0xff) == SQLITE_FULL || sys_errno == ENOSPC || sys_errno == EDQUOT;
    char why[256];
    if (full)
        snprintf(why, sizeof why, "disk full (%s)", code_name(rc));
    else if (sys_errno == EFBIG)
        snprintf(why, sizeof why, "file size limit reached (%s: %s)", code_name(rc),
                 strerror(sys_errno));
    else if (sys_errno)
        snprintf(why, sizeof why, "%s (%s: %s)", sqlite3_errstr(rc), code_name(rc),
                 strerror(sys_errno));
    else
        snprintf(why, sizeof why, "%s (%s)", sqlite3_errstr(rc), code_name(rc));
    diag_plain(c->ctx, KILN_WARNING,
               full ? "free space on its file system, or set KILN_CACHE_DIR elsewhere"
                    : "run `kiln cache clear`, or remove the cache directory",
               "%s %s %s; the disk cache is off for this process", why, doing, path);
}

static bool db_broken(int rc) {
    switch (rc & 0xff) {
    case SQLITE_CORRUPT: case SQLITE_NOTADB: case SQLITE_IOERR: case SQLITE_FULL:
    case SQLITE_CANTOPEN: case SQLITE_READONLY:
        return true;
    default:
        return false;
    }
}

/* Writes are paused: another process held the write lock past DB_BUSY_MS. */
bool disk_may_write(kiln_cache *c) { return mono_ms() >= c->writes_paused_until; }

static void write_busy(kiln_cache *c) {
    c->writes_paused_until = mono_ms() + DB_WRITE_PAUSE_MS;
    if (c->busy_warned) return;
    c->busy_warned = true;
    char ms[32];
    snprintf(ms, sizeof ms, "%d", DB_BUSY_MS);
    warn(c, "another process keeps a write transaction open on it (an open sqlite3 shell?)",
         "kiln's cache %s is locked by another process (no write lock within %s ms); kernels "
         "are built and used but not stored until it is free", c->path, ms);
}

/* A write on the disk tier failed with rc, the code that sqlite3_* call
 * returned: ends the transaction if SQLite has not already done so (ROLLBACK
 * without one would replace the error, and a full disk ends it by itself),
 * then turns the tier off if the database is broken, or pauses writes if
 * another process holds the lock.  Returns rc. */
int disk_write_failed(kiln_cache *c, int rc) {
    int err = errno; /* the failed write's, when SQLite did not keep it (EFBIG) */
    int ext = sqlite3_extended_errcode(c->db), sys = sqlite3_system_errno(c->db);
    if ((ext & 0xff) != (rc & 0xff)) ext = rc;
    if (!sys && ((ext & 0xff) == SQLITE_IOERR || (ext & 0xff) == SQLITE_FULL)) sys = err;
    if (!sqlite3_get_autocommit(c->db)) sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    if (db_broken(ext)) {
        disk_off(c, ext, sys, "writing");
    } else if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
        write_busy(c);
    } else if (!c->put_warned) {
        c->put_warned = true;
        warn(c, NULL, "could not write to kiln's cache %s (%s)", c->path, sqlite3_errstr(ext));
    }
    return rc;
}

static void verify_failed(kiln_cache *c, const kiln_cache_key *k, const char *where) {
    char hex[33];
    kiln_cache_key_hex(k, hex);
    warn(c, NULL, "kiln's cache entry %s failed verification (%s); it will be rebuilt", hex,
         where);
    c->st.verify_failures++;
}

/* Hits are counted in memory (a write on a warm start's first call would cost
 * milliseconds) and written with the next store's transaction, or by
 * disk_flush_hits (the cache's close, its stats and list, kiln_cache_flush). */
static void note_hit(kiln_cache *c, const kiln_cache_key *k) {
    for (int i = 0; i < c->nhits; i++)
        if (memcmp(c->hits[i].key.b, k->b, 16) == 0) {
            c->hits[i].n++;
            return;
        }
    if (c->nhits == HITS_PENDING_MAX) disk_flush_hits(c);
    if (c->nhits == HITS_PENDING_MAX) return; /* the lock is taken: this one goes uncounted */
    c->hits[c->nhits].key = *k;
    c->hits[c->nhits++].n = 1;
}

/* The pending hits into the open transaction: SQLITE_DONE or the error. */
static int write_hits(kiln_cache *c) {
    int64_t total = 0;
    int rc = SQLITE_DONE;
    for (int i = 0; i < c->nhits && rc == SQLITE_DONE; i++) {
        sqlite3_stmt *u;
        rc = sqlite3_prepare_v2(c->db, "UPDATE artifacts SET hits = hits + ?2 WHERE key = ?1", -1,
                                &u, NULL);
        if (rc != SQLITE_OK) break;
        sqlite3_bind_blob(u, 1, c->hits[i].key.b, 16, SQLITE_STATIC);
        sqlite3_bind_int64(u, 2, c->hits[i].n);
        rc = sqlite3_step(u);
        sqlite3_finalize(u);
        total += c->hits[i].n;
    }
    if (rc == SQLITE_DONE && total) rc = count(c, "hits", (double)total);
    return rc;
}

void disk_flush_hits(kiln_cache *c) {
    if (!c->db || !c->nhits || !disk_may_write(c)) return;
    /* never waits for another process's lock: the hits stay pending, to go with
     * a later write (or uncounted, at the close) */
    sqlite3_busy_timeout(c->db, 0);
    int rc = sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    sqlite3_busy_timeout(c->db, DB_BUSY_MS);
    if (rc == SQLITE_OK) rc = write_hits(c);
    if (rc == SQLITE_DONE) rc = sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK) {
        c->nhits = 0;
    } else if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
        if (!sqlite3_get_autocommit(c->db)) sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    } else {
        disk_write_failed(c, rc);
    }
}

/* Reads and verifies a row: 1 hit, 0 miss.  A row that fails its checks is
 * deleted and counted: it is never handed out. */
int disk_get(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len, char kind[16]) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(c->db,
                           "SELECT size, checksum, blob, kind, last_used FROM artifacts WHERE key = ?1",
                           -1, &s, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
    int found = 0;
    int64_t last_used = 0;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        int64_t size = sqlite3_column_int64(s, 0);
        const void *sum = sqlite3_column_blob(s, 1);
        int sumlen = sqlite3_column_bytes(s, 1);
        const void *b = sqlite3_column_blob(s, 2);
        int blen = sqlite3_column_bytes(s, 2);
        const char *kd = (const char *)sqlite3_column_text(s, 3);
        last_used = sqlite3_column_int64(s, 4);
        uint8_t mine[16];
        if (b && blen == size && kd) key_checksum(k, kd, b, (size_t)blen, mine);
        if (!b || blen != size || sumlen != 16 || !kd || memcmp(mine, sum, 16) != 0) {
            found = -1;
            if (b && blen == size && sumlen == 16 && kd) { /* written before the key was in it */
                key_checksum_blob_only(b, (size_t)blen, mine);
                if (memcmp(mine, sum, 16) == 0) found = -2;
            }
        } else if ((*blob = malloc((size_t)blen ? (size_t)blen : 1))) {
            memcpy(*blob, b, (size_t)blen);
            *len = (size_t)blen;
            snprintf(kind, 16, "%s", kd);
            found = 1;
        }
    }
    int ext = sqlite3_extended_errcode(c->db), sys = sqlite3_system_errno(c->db);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE && db_broken(ext)) {
        disk_off(c, ext, sys, "reading");
        return 0;
    }
    if (found < 0) { /* -2: a stale row, built again without a word */
        if (found == -1) verify_failed(c, k, c->path);
        if (disk_may_write(c)) {
            rc = step_key(c, "DELETE FROM artifacts WHERE key = ?1", k);
            if (rc == SQLITE_DONE && found == -1) rc = count(c, "verify_failures", 1);
            if (rc != SQLITE_DONE) disk_write_failed(c, rc);
        }
        return 0;
    }
    if (found) note_hit(c, k);
    if (found && last_used < now_ms() - LRU_GRAIN_MS && disk_may_write(c)) {
        /* a hit writes only when its time of use moves by more than the LRU's
         * grain: most hits stay read-only, which keeps a warm start fast (a
         * write costs milliseconds: the WAL is made again in a new process) */
        sqlite3_stmt *u;
        if (sqlite3_prepare_v2(c->db, "UPDATE artifacts SET last_used = ?2 WHERE key = ?1", -1, &u,
                               NULL) == SQLITE_OK) {
            sqlite3_bind_blob(u, 1, k->b, 16, SQLITE_STATIC);
            sqlite3_bind_int64(u, 2, now_ms());
            rc = sqlite3_step(u);
            sqlite3_finalize(u);
            if (rc != SQLITE_DONE) disk_write_failed(c, rc);
        }
    }
    return found;
}

/* Evicts least recently used rows down to limit bytes; *rc is SQLITE_DONE, or
 * the error that stopped it. */
static int64_t evict(kiln_cache *c, int64_t limit, int *rc) {
    int64_t gone = 0;
    *rc = SQLITE_DONE;
    for (;;) {
        sqlite3_stmt *s;
        int64_t total = 0;
        if ((*rc = sqlite3_prepare_v2(c->db, "SELECT COALESCE(SUM(size), 0) FROM artifacts", -1,
                                      &s, NULL)) != SQLITE_OK)
            return gone;
        *rc = sqlite3_step(s);
        if (*rc == SQLITE_ROW) total = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        if (*rc != SQLITE_ROW) return gone;
        *rc = SQLITE_DONE;
        if (total <= limit) return gone;
        if ((*rc = sqlite3_prepare_v2(c->db,
                                      "DELETE FROM artifacts WHERE key = "
                                      "(SELECT key FROM artifacts ORDER BY last_used LIMIT 1)",
                                      -1, &s, NULL)) != SQLITE_OK)
            return gone;
        *rc = sqlite3_step(s);
        int changed = sqlite3_changes(c->db);
        sqlite3_finalize(s);
        if (*rc != SQLITE_DONE || changed == 0) return gone;
        gone++;
        if ((*rc = count(c, "evictions", 1)) != SQLITE_DONE) return gone;
    }
}

/* Writes one row (and ends any claim on it) in one transaction: SQLITE_OK, or
 * the error, after disk_write_failed has dealt with it. */
int disk_put(kiln_cache *c, const kiln_cache_key *k, const char *kind, const char *name,
             const char *target, const void *blob, size_t len, int64_t created, bool compiled,
             double compile_ms) {
    if (len > (size_t)INT32_MAX) return SQLITE_TOOBIG;
    if (!disk_may_write(c)) return SQLITE_BUSY;
    uint8_t sum[16];
    key_checksum(k, kind, blob, len, sum);
    int rc = sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return disk_write_failed(c, rc);
    sqlite3_stmt *s;
    rc = sqlite3_prepare_v2(c->db,
                            "INSERT OR REPLACE INTO artifacts(key, kind, name, target, size, "
                            "checksum, created, last_used, blob, compile_ms) "
                            "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                            -1, &s, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, target, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 5, (int64_t)len);
        sqlite3_bind_blob(s, 6, sum, 16, SQLITE_STATIC);
        sqlite3_bind_int64(s, 7, created);
        sqlite3_bind_int64(s, 8, now_ms());
        sqlite3_bind_blob64(s, 9, blob, len, SQLITE_STATIC);
        sqlite3_bind_double(s, 10, compiled ? compile_ms : 0);
        rc = sqlite3_step(s);
        sqlite3_finalize(s);
    }
    if (rc == SQLITE_DONE && compiled) rc = count(c, "compiles", 1);
    if (rc == SQLITE_DONE && compiled) rc = count(c, "compile_ms", compile_ms);
    if (rc == SQLITE_DONE) rc = step_key(c, "DELETE FROM pending WHERE key = ?1", k);
    if (rc == SQLITE_DONE) rc = write_hits(c); /* the hits counted since the last write */
    if (rc == SQLITE_DONE) evict(c, c->max_bytes, &rc);
    if (rc == SQLITE_DONE) rc = sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK) c->nhits = 0;
    return rc == SQLITE_OK ? SQLITE_OK : disk_write_failed(c, rc);
}

/* ---- what the public calls on the disk tier do (cache.c takes the lock) ---- */

void disk_stats(kiln_cache *c, kiln_cache_stats *out) {
    disk_flush_hits(c);
    out->max_bytes = c->max_bytes;
    if (c->db) {
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(c->db, "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM artifacts", -1,
                               &s, NULL) == SQLITE_OK) {
            if (sqlite3_step(s) == SQLITE_ROW) {
                out->entries = sqlite3_column_int64(s, 0);
                out->bytes = sqlite3_column_int64(s, 1);
            }
            sqlite3_finalize(s);
        }
        if (sqlite3_prepare_v2(c->db, "SELECT name, value FROM counters", -1, &s, NULL) ==
            SQLITE_OK) {
            while (sqlite3_step(s) == SQLITE_ROW) {
                const char *n = (const char *)sqlite3_column_text(s, 0);
                /* counts are read as integers: SQLite clamps a REAL out of int64's
                 * range (a corrupt or hostile database) where a C cast would be
                 * undefined */
                int64_t i = sqlite3_column_int64(s, 1);
                if (!n) continue;
                if (!strcmp(n, "compiles")) out->total_compiles = i;
                else if (!strcmp(n, "compile_ms"))
                    out->total_compile_ms = sqlite3_column_double(s, 1);
                else if (!strcmp(n, "evictions")) out->total_evictions = i;
                else if (!strcmp(n, "hits")) out->total_hits = i;
                else if (!strcmp(n, "verify_failures")) out->total_verify_failures = i;
            }
            sqlite3_finalize(s);
        }
    }
}

int disk_list(kiln_cache *c, void (*fn)(void *ud, const kiln_cache_entry *e), void *ud) {
    disk_flush_hits(c);
    int n = 0;
    sqlite3_stmt *s;
    if (c->db && sqlite3_prepare_v2(c->db,
                                    "SELECT key, kind, name, target, size, created, last_used, "
                                    "hits, compile_ms FROM artifacts ORDER BY last_used DESC",
                                    -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            kiln_cache_entry e;
            memset(&e, 0, sizeof e);
            if (sqlite3_column_bytes(s, 0) == 16) memcpy(e.key.b, sqlite3_column_blob(s, 0), 16);
            e.kind = (const char *)sqlite3_column_text(s, 1);
            e.name = (const char *)sqlite3_column_text(s, 2);
            e.target = (const char *)sqlite3_column_text(s, 3);
            e.size = sqlite3_column_int64(s, 4);
            e.created_ms = sqlite3_column_int64(s, 5);
            e.last_used_ms = sqlite3_column_int64(s, 6);
            e.hits = sqlite3_column_int64(s, 7);
            e.compile_ms = sqlite3_column_double(s, 8);
            fn(ud, &e);
            n++;
        }
        sqlite3_finalize(s);
    }
    return n;
}

/* PRAGMA quick_check says "ok" (it reads every page; a busy database counts as ok). */
static bool quick_ok(sqlite3 *db) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &s, NULL) != SQLITE_OK) return false;
    int rc = sqlite3_step(s);
    bool ok = rc == SQLITE_BUSY || rc == SQLITE_LOCKED ||
              (rc == SQLITE_ROW && sqlite3_column_text(s, 0) &&
               strcmp((const char *)sqlite3_column_text(s, 0), "ok") == 0);
    sqlite3_finalize(s);
    return ok;
}

int64_t disk_clear(kiln_cache *c) {
    int64_t n = 0;
    if (c->db) {
        int rc = sqlite3_exec(c->db, "DELETE FROM artifacts", NULL, NULL, NULL);
        if (rc == SQLITE_OK) {
            n = sqlite3_changes(c->db);
            sqlite3_exec(c->db, "DELETE FROM pending", NULL, NULL, NULL);
            int v = sqlite3_exec(c->db, "VACUUM", NULL, NULL, NULL);
            /* a damaged page the DELETE did not touch (an index's): VACUUM or the check
             * finds it, and the file is started anew below, as the warning promised; so
             * is a full disk, where VACUUM cannot write its copy and the WAL keeps the
             * space the user cleared for */
            if ((v & 0xff) == SQLITE_CORRUPT || (v & 0xff) == SQLITE_NOTADB ||
                (v & 0xff) == SQLITE_FULL || !quick_ok(c->db)) {
                sqlite3_close(c->db);
                c->db = NULL;
            }
        } else {
            disk_write_failed(c, rc);
        }
    }
    if (!c->db && c->path) {
        /* a database that failed: clearing means starting a new one (the user asked;
         * processes still using the old file keep their own copy of it) */
        static const char *const suffixes[] = {"", "-wal", "-shm"};
        for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
            char f[4300];
            snprintf(f, sizeof f, "%s%s", c->path, suffixes[i]);
            unlink(f);
        }
        free(c->path);
        c->path = NULL;
        disk_open(c);
    }
    return n;
}

int64_t disk_prune(kiln_cache *c, int64_t max_bytes) {
    int64_t n = 0;
    if (c->db) {
        int rc;
        n = evict(c, max_bytes < 0 ? c->max_bytes : max_bytes, &rc);
        sqlite3_stmt *s;
        /* claims that lapsed, and stale ones (see claim.c's disk_claimed_by_other) */
        if (rc == SQLITE_DONE &&
            (rc = sqlite3_prepare_v2(c->db, "DELETE FROM pending WHERE expires < ?1 OR expires > ?2",
                                     -1, &s, NULL)) == SQLITE_OK) {
            sqlite3_bind_int64(s, 1, now_ms());
            sqlite3_bind_int64(s, 2, now_ms() + STALE_MS);
            rc = sqlite3_step(s);
            sqlite3_finalize(s);
        }
        if (rc != SQLITE_DONE) disk_write_failed(c, rc);
        else if (n) sqlite3_exec(c->db, "VACUUM", NULL, NULL, NULL);
    }
    return n;
}

int disk_fact(kiln_cache *c, const char *name, char *buf, size_t size) {
    int found = 0;
    sqlite3_stmt *s;
    if (c->db &&
        sqlite3_prepare_v2(c->db, "SELECT value FROM facts WHERE name = ?1", -1, &s, NULL) ==
            SQLITE_OK) {
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        if (sqlite3_step(s) == SQLITE_ROW) {
            const char *v = (const char *)sqlite3_column_text(s, 0);
            if (v && strlen(v) < size) {
                memcpy(buf, v, strlen(v) + 1);
                found = 1;
            }
        }
        sqlite3_finalize(s);
    }
    return found;
}

void disk_set_fact(kiln_cache *c, const char *name, const char *value) {
    sqlite3_stmt *s;
    if (c->db && disk_may_write(c) &&
        sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO facts(name, value) VALUES(?1, ?2)", -1,
                           &s, NULL) == SQLITE_OK) {
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
        int rc = sqlite3_step(s);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE) disk_write_failed(c, rc);
    }
}

int disk_facts(kiln_cache *c, const char *prefix,
               void (*fn)(void *ud, const char *name, const char *value), void *ud) {
    int n = 0;
    sqlite3_stmt *s;
    /* a prefix match without LIKE's wildcards: substr compares bytes */
    if (c->db && sqlite3_prepare_v2(c->db,
                                    "SELECT name, value FROM facts WHERE "
                                    "substr(name, 1, length(?1)) = ?1 ORDER BY name",
                                    -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_text(s, 1, prefix, -1, SQLITE_STATIC);
        while (sqlite3_step(s) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(s, 0);
            const char *v = (const char *)sqlite3_column_text(s, 1);
            if (!name || !v) continue;
            fn(ud, name, v);
            n++;
        }
        sqlite3_finalize(s);
    }
    return n;
}

int64_t disk_verify(kiln_cache *c, int64_t *bad) {
    *bad = 0;
    if (!c->db) return 0;
    int64_t n = 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(c->db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            const char *r = (const char *)sqlite3_column_text(s, 0);
            if (r && strcmp(r, "ok") != 0) {
                /* the file itself is damaged: deleting rows does not mend it */
                warn(c, "`kiln cache clear` starts a new database (the entries of this one "
                        "cannot all be read back)",
                     "kiln's cache %s is damaged: %s", c->path, r);
                (*bad)++;
            }
        }
        sqlite3_finalize(s);
    }
    kiln_cache_key *badkeys = NULL;
    bool *stale = NULL; /* per bad key: a row from before the key was in the checksum */
    int64_t nbad = 0, nstale = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT key, size, checksum, blob, kind FROM artifacts", -1,
                           &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            n++;
            const void *kb = sqlite3_column_blob(s, 0), *sum = sqlite3_column_blob(s, 2);
            const void *b = sqlite3_column_blob(s, 3);
            int blen = sqlite3_column_bytes(s, 3);
            const char *kd = (const char *)sqlite3_column_text(s, 4);
            kiln_cache_key k;
            memset(&k, 0, sizeof k);
            bool whole = kb && sqlite3_column_bytes(s, 0) == 16 && b &&
                         blen == sqlite3_column_int64(s, 1) && sum &&
                         sqlite3_column_bytes(s, 2) == 16 && kd;
            if (kb && sqlite3_column_bytes(s, 0) == 16) memcpy(k.b, kb, 16);
            uint8_t mine[16];
            if (whole) key_checksum(&k, kd, b, (size_t)blen, mine);
            if (whole && memcmp(mine, sum, 16) == 0) continue;
            bool old = false;
            if (whole) {
                key_checksum_blob_only(b, (size_t)blen, mine);
                old = memcmp(mine, sum, 16) == 0;
            }
            kiln_cache_key *nk = realloc(badkeys, sizeof *nk * (size_t)(nbad + 1));
            bool *ns = realloc(stale, sizeof *ns * (size_t)(nbad + 1));
            if (ns) stale = ns;
            if (nk) badkeys = nk;
            if (!nk || !ns) break;
            badkeys[nbad] = k;
            stale[nbad] = old;
            nbad++;
            nstale += old;
        }
        sqlite3_finalize(s);
    }
    for (int64_t i = 0; i < nbad; i++) {
        if (!stale[i]) verify_failed(c, &badkeys[i], c->path);
        int rc = step_key(c, "DELETE FROM artifacts WHERE key = ?1", &badkeys[i]);
        if (rc == SQLITE_DONE && !stale[i]) rc = count(c, "verify_failures", 1);
        if (rc != SQLITE_DONE) {
            disk_write_failed(c, rc);
            if (!c->db) break;
        }
    }
    *bad += nbad - nstale;
    free(badkeys);
    free(stale);
    return n;
}
