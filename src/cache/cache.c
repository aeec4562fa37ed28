/* cache.c: the artifact cache (see kiln.h for the contract).
 *
 * Memory tier: a bounded LRU list of blobs in this process.  Disk tier: one
 * SQLite database (kiln.db) in WAL mode, one row per artifact with its blob,
 * size, an XXH3-128 checksum, what it is, and its creation and last-use
 * times.  WAL gives atomic multi-process writes and crash safety: a process
 * killed in the middle of a write leaves the last committed state.
 *
 * Single flight: a process that misses inserts a row into `pending` with a
 * lease (an upsert that takes over only an expired lease), compiles, stores
 * and deletes its row; the others wait, polling for the artifact, and compile
 * themselves only if the lease runs out or is released without a result.
 *
 * The cache holds code kiln will run, so the directory must be ours and not
 * writable by group or others; otherwise, or when it is unwritable or the
 * database is not one, caching is memory-only and one warning says why.
 * Calls are serialised by a mutex (compiles run with the GIL released).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define XXH_INLINE_ALL /* header-only: no library to link */
#include <xxhash.h>

#include "cache/remote.h"
#include "compiler.h"

enum { LEASE_POLL_MS = 20, LRU_GRAIN_MS = 60 * 1000 };

typedef struct MemEntry {
    kiln_cache_key key;
    char kind[16];
    void *blob;
    size_t len;
    uint64_t used; /* LRU clock */
} MemEntry;

struct kiln_cache {
    kiln_ctx *ctx;
    pthread_mutex_t mu;
    pid_t pid; /* the process that opened the tiers; a forked child reopens them */
    kiln_cache_config cfg;
    char *dir_cfg, *remote_cfg, *remote_key_cfg; /* owned copies of cfg's strings */
    /* memory tier */
    MemEntry *mem;
    int nmem, capmem;
    size_t mem_bytes, mem_max;
    uint64_t clock;
    /* disk tier, NULL when off */
    sqlite3 *db;
    char *path;
    int64_t max_bytes;
    /* remote tier, NULL when off */
    Remote *remote;
    char host[64];
    char owner[128]; /* this process in claims: host:pid:nonce */
    kiln_cache_key last_rejected; /* the last remote record refused, warned about once */
    bool put_warned;              /* a store failed and was warned about */
    kiln_cache_stats st;
};

/* Hashes source, leaving out the file names of #line markers unless asked to
 * keep them: they change no instruction (kernels carry file indexes and line
 * numbers, not names), and without them a kernel file built in CI under one
 * path is the same key in production under another. */
void kiln_cache_key_of(const char *source, size_t len, const char *target, int flags,
                       kiln_cache_key *out) {
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    const char *p = source, *end = source + len, *chunk = source;
    static const char marker[] = "#line ";
    const size_t mlen = sizeof marker - 1;
    while (!(flags & KILN_KEY_FILE_NAMES) && p < end) {
        if ((p == source || p[-1] == '\n') && (size_t)(end - p) > mlen &&
            memcmp(p, marker, mlen) == 0) {
            const char *q = p + mlen;
            while (q < end && *q >= '0' && *q <= '9') q++;
            if (q < end && *q == ' ' && q + 1 < end && q[1] == '"') {
                const char *close = memchr(q + 2, '"', (size_t)(end - q - 2));
                const char *nl = memchr(q, '\n', (size_t)(end - q));
                if (close && (!nl || close < nl)) {
                    XXH3_128bits_update(&st, chunk, (size_t)(q - chunk));
                    chunk = close + 1;
                    p = close + 1;
                    continue;
                }
            }
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    XXH3_128bits_update(&st, chunk, (size_t)(end - chunk));
    XXH3_128bits_update(&st, "\0", 1);
    if (target) XXH3_128bits_update(&st, target, strlen(target));
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&st));
    memcpy(out->b, c.digest, 16);
}

void kiln_cache_key_hex(const kiln_cache_key *k, char out[33]) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = digits[k->b[i] >> 4];
        out[2 * i + 1] = digits[k->b[i] & 15];
    }
    out[32] = 0;
}

static int hexval(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

int kiln_cache_key_parse(const char *hex, kiln_cache_key *out) {
    if (!hex || strlen(hex) != 32) return -1;
    for (int i = 0; i < 16; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        out->b[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

static void checksum(const void *blob, size_t len, uint8_t out[16]) {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(blob, len));
    memcpy(out, c.digest, 16);
}

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void warn(kiln_cache *c, const char *hint, const char *fmt, const char *a, const char *b) {
    diag_plain(c->ctx, KILN_WARNING, hint, fmt, a, b);
}

/* ---- memory tier ------------------------------------------------------------------- */

static MemEntry *mem_find(kiln_cache *c, const kiln_cache_key *k) {
    for (int i = 0; i < c->nmem; i++)
        if (memcmp(c->mem[i].key.b, k->b, 16) == 0) return &c->mem[i];
    return NULL;
}

static void mem_drop(kiln_cache *c, int i) {
    c->mem_bytes -= c->mem[i].len;
    free(c->mem[i].blob);
    c->mem[i] = c->mem[--c->nmem];
}

static void mem_put(kiln_cache *c, const kiln_cache_key *k, const char *kind, const void *blob,
                    size_t len) {
    if (len > c->mem_max || mem_find(c, k)) return;
    while (c->nmem && c->mem_bytes + len > c->mem_max) {
        int lru = 0;
        for (int i = 1; i < c->nmem; i++)
            if (c->mem[i].used < c->mem[lru].used) lru = i;
        mem_drop(c, lru);
    }
    if (c->nmem == c->capmem) {
        int ncap = c->capmem ? c->capmem * 2 : 64;
        MemEntry *n = realloc(c->mem, sizeof *n * (size_t)ncap);
        if (!n) return;
        c->mem = n;
        c->capmem = ncap;
    }
    void *copy = malloc(len ? len : 1);
    if (!copy) return;
    memcpy(copy, blob, len);
    MemEntry *e = &c->mem[c->nmem++];
    e->key = *k;
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    e->blob = copy;
    e->len = len;
    e->used = ++c->clock;
    c->mem_bytes += len;
}

/* ---- disk tier ---------------------------------------------------------------------- */

static const char *const schema =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS artifacts("
    " key BLOB PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, target TEXT NOT NULL,"
    " size INTEGER NOT NULL, checksum BLOB NOT NULL, created INTEGER NOT NULL,"
    " last_used INTEGER NOT NULL, blob BLOB NOT NULL);"
    "CREATE INDEX IF NOT EXISTS artifacts_lru ON artifacts(last_used);"
    "CREATE TABLE IF NOT EXISTS pending(key BLOB PRIMARY KEY, owner TEXT NOT NULL,"
    " expires INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS counters(name TEXT PRIMARY KEY, value REAL NOT NULL);"
    "CREATE TABLE IF NOT EXISTS facts(name TEXT PRIMARY KEY, value TEXT NOT NULL);";

static bool safe_path(kiln_cache *c, const char *p, bool dir) {
    struct stat s;
    if (lstat(p, &s) != 0) return errno == ENOENT && !dir;
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

static int64_t parse_size(const char *s) {
    if (!s || !*s) return -1;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || v > 9e18) return -1;
    while (*end == ' ') end++;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; break;
    case 'm': case 'M': mul = 1024.0 * 1024; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
    case 0: break;
    default: return -1;
    }
    if (*end && end[1] && !((end[1] == 'B' || end[1] == 'b') && !end[2]) &&
        !((end[1] == 'i' || end[1] == 'I') && (end[2] == 'B' || end[2] == 'b') && !end[3]))
        return -1;
    v *= mul;
    return v > 9e18 ? -1 : (int64_t)v;
}

static int open_db(const char *path, sqlite3 **out) {
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                            SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(db, 10000);
        rc = sqlite3_exec(db, schema, NULL, NULL, NULL);
        /* a file that is a database of something else is not ours either */
        if (rc == SQLITE_OK) {
            sqlite3_stmt *s;
            rc = sqlite3_prepare_v2(db, "SELECT key, kind, name, target, size, checksum, created, "
                                        "last_used, blob FROM artifacts LIMIT 0", -1, &s, NULL);
            sqlite3_finalize(s);
            if (rc != SQLITE_OK) rc = SQLITE_NOTADB;
        }
    }
    if (rc != SQLITE_OK && rc != SQLITE_NOTADB && rc != SQLITE_CORRUPT && db)
        rc = sqlite3_extended_errcode(db) & 0xff;
    *out = db;
    return rc;
}

static void open_disk(kiln_cache *c) {
    const char *env = getenv("KILN_CACHE_DIR");
    if (!c->cfg.dir && env && strlen(env) > 3900) {
        warn(c, "use a shorter path", "KILN_CACHE_DIR is %s; caching in memory only",
             "longer than 3900 bytes", "");
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
        warn(c, "set KILN_CACHE_DIR to a writable directory",
             "cannot use kiln's cache %s (%s); caching in memory only", path,
             db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return;
    }
    c->db = db;
    c->path = strdup(path);
}

static void open_remote(kiln_cache *c) {
    const char *url = c->cfg.remote ? c->cfg.remote : getenv("KILN_REMOTE_CACHE");
    if (!url || !*url) return;
    const char *key = c->cfg.remote_key ? c->cfg.remote_key : getenv("KILN_REMOTE_KEY");
    int timeout = c->cfg.remote_timeout_ms;
    if (timeout <= 0) {
        const char *env = getenv("KILN_REMOTE_TIMEOUT_MS");
        char *end = NULL;
        long v = env && *env ? strtol(env, &end, 10) : 0;
        if (env && *env && (*end || v <= 0 || v > 600000)) {
            warn(c, "give it in milliseconds, such as 500",
                 "KILN_REMOTE_TIMEOUT_MS=%s is not a time%s; using 500 ms", env, "");
            v = 0;
        }
        timeout = v > 0 ? (int)v : 500;
    }
    c->remote = remote_open(c->ctx, url, key, timeout, c->owner);
}

/* The tiers belong to the process that opened them: a forked child must not
 * share the parent's database connection or socket, so it opens its own. */
static void own_tiers(kiln_cache *c) {
    pid_t pid = getpid();
    if (c->pid == pid) return;
    c->pid = pid;
    snprintf(c->owner, sizeof c->owner, "%s:%ld:%llx", c->host, (long)pid,
             (unsigned long long)now_ms() ^ (unsigned long long)(uintptr_t)c);
    /* the parent's connection is left unclosed: closing it here could
     * checkpoint or delete files the parent still uses (SQLite's advice) */
    c->db = NULL;
    free(c->path);
    c->path = NULL;
    remote_close(c->remote); /* closes the child's copy of the socket only */
    c->remote = NULL;
    open_disk(c);
    open_remote(c);
}

static char *dup_cfg(const char *s) { return s ? strdup(s) : NULL; }

kiln_cache *kiln_cache_open(kiln_ctx *ctx, const kiln_cache_config *cfg) {
    kiln_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->ctx = ctx;
    pthread_mutex_init(&c->mu, NULL);
    if (cfg) c->cfg = *cfg;
    c->cfg.dir = c->dir_cfg = dup_cfg(c->cfg.dir);
    c->cfg.remote = c->remote_cfg = dup_cfg(c->cfg.remote);
    c->cfg.remote_key = c->remote_key_cfg = dup_cfg(c->cfg.remote_key);
    c->mem_max = c->cfg.memory_bytes > 0 ? (size_t)c->cfg.memory_bytes : (size_t)256 << 20;
    c->max_bytes = c->cfg.max_bytes > 0 ? c->cfg.max_bytes : -1;
    if (c->max_bytes < 0) {
        const char *env = getenv("KILN_CACHE_SIZE");
        int64_t v = parse_size(env);
        if (env && *env && v < 0)
            diag_plain(ctx, KILN_WARNING, "write a size such as 512M or 2G",
                       "KILN_CACHE_SIZE=%s is not a size; using 1 GiB", env);
        c->max_bytes = v >= 0 ? v : (int64_t)1 << 30;
    }
    if (gethostname(c->host, sizeof c->host) != 0) snprintf(c->host, sizeof c->host, "?");
    c->host[sizeof c->host - 1] = 0;
    c->pid = -1;
    own_tiers(c);
    return c;
}

void kiln_cache_close(kiln_cache *c) {
    if (!c) return;
    for (int i = 0; i < c->nmem; i++) free(c->mem[i].blob);
    free(c->mem);
    if (c->pid == getpid()) sqlite3_close(c->db);
    remote_close(c->remote);
    free(c->path);
    free(c->dir_cfg);
    free(c->remote_cfg);
    free(c->remote_key_cfg);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

const char *kiln_cache_path(kiln_cache *c) { return c->db ? c->path : NULL; }

const char *kiln_cache_remote(kiln_cache *c) {
    return remote_ok(c->remote) ? (c->cfg.remote ? c->cfg.remote : getenv("KILN_REMOTE_CACHE"))
                                : NULL;
}

static void lock(kiln_cache *c) {
    pthread_mutex_lock(&c->mu);
    own_tiers(c);
}

static void unlock(kiln_cache *c) { pthread_mutex_unlock(&c->mu); }

static bool step_key(kiln_cache *c, const char *sql, const kiln_cache_key *k) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(c->db, sql, -1, &s, NULL) != SQLITE_OK) return false;
    sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE;
}

static void count(kiln_cache *c, const char *name, double by) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(c->db,
                           "INSERT INTO counters(name, value) VALUES(?1, ?2) "
                           "ON CONFLICT(name) DO UPDATE SET value = value + ?2",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 2, by);
    sqlite3_step(s);
    sqlite3_finalize(s);
}

/* The database failed under us (corrupt pages, an I/O error, a full disk): the
 * disk tier is off for the rest of the process, after one warning.  The file
 * is not moved aside here, since other processes may have it open; `kiln cache
 * clear` or removing the directory starts afresh. */
static void disk_off(kiln_cache *c, int rc) {
    if (!c->db) return;
    const char *why = sqlite3_errstr(rc);
    char path[4200];
    snprintf(path, sizeof path, "%s", c->path ? c->path : "?");
    sqlite3_close(c->db);
    c->db = NULL;
    warn(c,
         (rc & 0xff) == SQLITE_FULL ? "free space on its file system, or set KILN_CACHE_DIR elsewhere"
                                    : "run `kiln cache clear`, or remove the cache directory",
         "kiln's cache %s failed (%s); caching in memory only", path, why);
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

static void verify_failed(kiln_cache *c, const kiln_cache_key *k, const char *where) {
    char hex[33];
    kiln_cache_key_hex(k, hex);
    warn(c, NULL, "kiln's cache entry %s failed verification (%s); it will be rebuilt", hex,
         where);
    c->st.verify_failures++;
}

/* Reads and verifies a row: 1 hit, 0 miss.  A row that fails its checks is
 * deleted and counted: it is never handed out. */
static int disk_get(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len,
                    char kind[16]) {
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
        if (b && blen == size) checksum(b, (size_t)blen, mine);
        if (!b || blen != size || sumlen != 16 || memcmp(mine, sum, 16) != 0 || !kd) {
            found = -1;
        } else if ((*blob = malloc((size_t)blen ? (size_t)blen : 1))) {
            memcpy(*blob, b, (size_t)blen);
            *len = (size_t)blen;
            snprintf(kind, 16, "%s", kd);
            found = 1;
        }
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE && db_broken(sqlite3_extended_errcode(c->db))) {
        disk_off(c, sqlite3_extended_errcode(c->db));
        return 0;
    }
    if (found < 0) {
        verify_failed(c, k, c->path);
        step_key(c, "DELETE FROM artifacts WHERE key = ?1", k);
        count(c, "verify_failures", 1);
        return 0;
    }
    if (found && last_used < now_ms() - LRU_GRAIN_MS) {
        /* a hit writes only when its time of use moves by more than the LRU's
         * grain: most hits stay read-only, which keeps a warm start fast */
        sqlite3_stmt *u;
        if (sqlite3_prepare_v2(c->db, "UPDATE artifacts SET last_used = ?2 WHERE key = ?1", -1, &u,
                               NULL) == SQLITE_OK) {
            sqlite3_bind_blob(u, 1, k->b, 16, SQLITE_STATIC);
            sqlite3_bind_int64(u, 2, now_ms());
            sqlite3_step(u);
            sqlite3_finalize(u);
        }
    }
    return found;
}

static int64_t evict(kiln_cache *c, int64_t limit) {
    int64_t gone = 0;
    for (;;) {
        sqlite3_stmt *s;
        int64_t total = 0;
        if (sqlite3_prepare_v2(c->db, "SELECT COALESCE(SUM(size), 0) FROM artifacts", -1, &s,
                               NULL) != SQLITE_OK)
            return gone;
        if (sqlite3_step(s) == SQLITE_ROW) total = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        if (total <= limit) return gone;
        if (sqlite3_prepare_v2(c->db,
                               "DELETE FROM artifacts WHERE key = "
                               "(SELECT key FROM artifacts ORDER BY last_used LIMIT 1)",
                               -1, &s, NULL) != SQLITE_OK)
            return gone;
        int rc = sqlite3_step(s);
        int changed = sqlite3_changes(c->db);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE || changed == 0) return gone;
        gone++;
        count(c, "evictions", 1);
    }
}

/* Writes one row (and ends any claim on it) in one transaction. */
static int disk_put(kiln_cache *c, const kiln_cache_key *k, const char *kind, const char *name,
                    const char *target, const void *blob, size_t len, int64_t created,
                    bool compiled, double compile_ms) {
    if (len > (size_t)INT32_MAX) return -1;
    uint8_t sum[16];
    checksum(blob, len, sum);
    if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return -1;
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(c->db,
                                "INSERT OR REPLACE INTO artifacts(key, kind, name, target, size, "
                                "checksum, created, last_used, blob) "
                                "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
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
        rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_finalize(s);
    }
    if (rc == SQLITE_OK) {
        if (compiled) {
            count(c, "compiles", 1);
            count(c, "compile_ms", compile_ms);
        }
        step_key(c, "DELETE FROM pending WHERE key = ?1", k);
        evict(c, c->max_bytes);
        rc = sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : -1;
}

/* Looks in the remote tier; a hit fills the disk tier. */
static int remote_lookup(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len,
                         char kind[16], bool counted) {
    RemoteRecord rec;
    bool rejected;
    int hit = remote_get(c->remote, k, &rec, &rejected);
    if (rejected && counted && memcmp(c->last_rejected.b, k->b, 16) != 0) {
        /* said and counted once per key: a waiter looks many times */
        c->last_rejected = *k;
        char hex[33];
        kiln_cache_key_hex(k, hex);
        c->st.remote_rejected++;
        warn(c, "check that every writer uses the same KILN_REMOTE_KEY",
             "kiln's remote cache entry %s failed authentication or its checks%s; ignored", hex,
             "");
    }
    if (hit != 1) {
        c->st.remote_misses++;
        return 0;
    }
    c->st.remote_hits++;
    if (c->db) disk_put(c, k, rec.kind, rec.name, rec.target, rec.blob, rec.len, now_ms(), false, 0);
    *blob = rec.blob;
    *len = rec.len;
    snprintf(kind, 16, "%s", rec.kind);
    return 1;
}

/* Looks through the tiers, with the lock held; counts in the stats when asked. */
static int lookup(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len, char kind[16],
                  bool counted) {
    kiln_cache_stats saved = c->st;
    int hit = 0;
    MemEntry *e = mem_find(c, k);
    if (e) {
        if ((*blob = malloc(e->len ? e->len : 1))) {
            memcpy(*blob, e->blob, e->len);
            *len = e->len;
            snprintf(kind, 16, "%s", e->kind);
            e->used = ++c->clock;
            c->st.mem_hits++;
            hit = 1;
        }
    } else {
        c->st.mem_misses++;
        if (c->db) {
            hit = disk_get(c, k, blob, len, kind);
            if (hit)
                c->st.disk_hits++;
            else
                c->st.disk_misses++;
        }
        if (!hit && remote_ok(c->remote)) hit = remote_lookup(c, k, blob, len, kind, counted);
        if (hit) mem_put(c, k, kind, *blob, *len);
    }
    if (!counted) {
        /* a second look, after a claim: hits and misses are the first look's */
        int64_t vf = c->st.verify_failures;
        c->st = saved;
        c->st.verify_failures = vf;
    }
    return hit;
}

int kiln_cache_get(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len,
                   char kind[16]) {
    char kbuf[16];
    lock(c);
    int hit = lookup(c, k, blob, len, kind ? kind : kbuf, true);
    unlock(c);
    return hit;
}

int kiln_cache_put(kiln_cache *c, const kiln_cache_key *k, const char *kind, const char *name,
                   const char *target, const void *blob, size_t len, double compile_ms) {
    lock(c);
    c->st.compiles++;
    c->st.compile_ms += compile_ms;
    mem_put(c, k, kind, blob, len);
    int stored = 0;
    if (c->db) {
        if (disk_put(c, k, kind, name, target, blob, len, now_ms(), true, compile_ms) == 0) {
            stored = 1;
        } else if (db_broken(sqlite3_extended_errcode(c->db))) {
            disk_off(c, sqlite3_extended_errcode(c->db));
        } else if (!c->put_warned) { /* busy beyond the timeout: said once */
            c->put_warned = true;
            warn(c, NULL, "could not store a kernel in kiln's cache %s (%s)", c->path,
                 sqlite3_errmsg(c->db));
        }
    }
    if (remote_ok(c->remote)) {
        if (remote_put(c->remote, k, kind, name, target, blob, len) == 0) stored = 1;
        remote_release(c->remote, k);
    }
    unlock(c);
    return stored ? 0 : -1;
}

/* Whether a claim's owner (host:pid:nonce) is a process of this host that
 * has ended: its claim is void even before its lease runs out. */
static bool owner_gone(kiln_cache *c, const char *owner) {
    size_t hl = strlen(c->host);
    if (strncmp(owner, c->host, hl) != 0 || owner[hl] != ':') return false;
    long pid = strtol(owner + hl + 1, NULL, 10);
    if (pid <= 0) return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Another process's live claim on k in the disk tier? */
static bool disk_claimed_by_other(kiln_cache *c, const kiln_cache_key *k) {
    sqlite3_stmt *s;
    bool other = false;
    if (sqlite3_prepare_v2(c->db, "SELECT owner, expires FROM pending WHERE key = ?1", -1, &s,
                           NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW) {
        const char *owner = (const char *)sqlite3_column_text(s, 0);
        int64_t expires = sqlite3_column_int64(s, 1);
        other = owner && strcmp(owner, c->owner) != 0 && expires >= now_ms() &&
                !owner_gone(c, owner);
    }
    sqlite3_finalize(s);
    return other;
}

int kiln_cache_claim(kiln_cache *c, const kiln_cache_key *k, int lease_ms, void **blob,
                     size_t *len, char kind[16]) {
    char kbuf[16];
    lock(c);
    int claimed = 1;
    if (c->db) {
        sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (disk_claimed_by_other(c, k)) {
            claimed = 0;
        } else {
            sqlite3_stmt *s;
            if (sqlite3_prepare_v2(c->db,
                                   "INSERT OR REPLACE INTO pending(key, owner, expires) "
                                   "VALUES(?1, ?2, ?3)",
                                   -1, &s, NULL) == SQLITE_OK) {
                sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
                sqlite3_bind_text(s, 2, c->owner, -1, SQLITE_STATIC);
                sqlite3_bind_int64(s, 3, now_ms() + lease_ms);
                sqlite3_step(s);
                sqlite3_finalize(s);
            }
        }
        sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
    }
    if (claimed && remote_ok(c->remote)) claimed = remote_claim(c->remote, k, lease_ms);
    /* another process may have stored it between the caller's look and the claim */
    if (claimed && lookup(c, k, blob, len, kind ? kind : kbuf, false)) {
        unlock(c);
        kiln_cache_release(c, k);
        return 2;
    }
    unlock(c);
    return claimed;
}

void kiln_cache_release(kiln_cache *c, const kiln_cache_key *k) {
    lock(c);
    if (c->db) {
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(c->db, "DELETE FROM pending WHERE key = ?1 AND owner = ?2", -1, &s,
                               NULL) == SQLITE_OK) {
            sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
            sqlite3_bind_text(s, 2, c->owner, -1, SQLITE_STATIC);
            sqlite3_step(s);
            sqlite3_finalize(s);
        }
    }
    if (remote_ok(c->remote)) remote_release(c->remote, k);
    unlock(c);
}

int kiln_cache_wait(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len,
                    char kind[16]) {
    lock(c);
    c->st.waits++;
    unlock(c);
    for (;;) {
        if (kiln_cache_get(c, k, blob, len, kind)) return 1;
        lock(c);
        bool busy = (c->db && disk_claimed_by_other(c, k)) ||
                    (remote_ok(c->remote) && remote_claimed_by_other(c->remote, k));
        unlock(c);
        if (!busy) return 0;
        struct timespec d = {0, LEASE_POLL_MS * 1000 * 1000};
        nanosleep(&d, NULL);
    }
}

void kiln_cache_get_stats(kiln_cache *c, kiln_cache_stats *out) {
    lock(c);
    *out = c->st;
    out->mem_entries = c->nmem;
    out->mem_bytes = (int64_t)c->mem_bytes;
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
                double v = sqlite3_column_double(s, 1);
                if (!n) continue;
                if (!strcmp(n, "compiles")) out->total_compiles = (int64_t)v;
                else if (!strcmp(n, "compile_ms")) out->total_compile_ms = v;
                else if (!strcmp(n, "evictions")) out->total_evictions = (int64_t)v;
                else if (!strcmp(n, "verify_failures")) out->total_verify_failures = (int64_t)v;
            }
            sqlite3_finalize(s);
        }
    }
    unlock(c);
}

int kiln_cache_list(kiln_cache *c, void (*fn)(void *ud, const kiln_cache_entry *e), void *ud) {
    lock(c);
    int n = 0;
    sqlite3_stmt *s;
    if (c->db && sqlite3_prepare_v2(c->db,
                                    "SELECT key, kind, name, target, size, created, last_used "
                                    "FROM artifacts ORDER BY last_used DESC",
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
            fn(ud, &e);
            n++;
        }
        sqlite3_finalize(s);
    }
    unlock(c);
    return n;
}

int64_t kiln_cache_clear(kiln_cache *c) {
    lock(c);
    while (c->nmem) mem_drop(c, c->nmem - 1);
    int64_t n = 0;
    if (c->db) {
        if (sqlite3_exec(c->db, "DELETE FROM artifacts", NULL, NULL, NULL) == SQLITE_OK) {
            n = sqlite3_changes(c->db);
            sqlite3_exec(c->db, "DELETE FROM pending", NULL, NULL, NULL);
            sqlite3_exec(c->db, "VACUUM", NULL, NULL, NULL);
        } else if (db_broken(sqlite3_extended_errcode(c->db))) {
            disk_off(c, sqlite3_extended_errcode(c->db));
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
        open_disk(c);
    }
    unlock(c);
    return n;
}

int64_t kiln_cache_prune(kiln_cache *c, int64_t max_bytes) {
    lock(c);
    int64_t n = 0;
    if (c->db) {
        n = evict(c, max_bytes < 0 ? c->max_bytes : max_bytes);
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(c->db, "DELETE FROM pending WHERE expires < ?1", -1, &s, NULL) ==
            SQLITE_OK) {
            sqlite3_bind_int64(s, 1, now_ms());
            sqlite3_step(s);
            sqlite3_finalize(s);
        }
        if (n) sqlite3_exec(c->db, "VACUUM", NULL, NULL, NULL);
    }
    unlock(c);
    return n;
}

int kiln_cache_fact(kiln_cache *c, const char *name, char *buf, size_t size) {
    lock(c);
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
    unlock(c);
    return found;
}

void kiln_cache_set_fact(kiln_cache *c, const char *name, const char *value) {
    lock(c);
    sqlite3_stmt *s;
    if (c->db && sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO facts(name, value) VALUES(?1, ?2)",
                                    -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
        sqlite3_step(s);
        sqlite3_finalize(s);
    }
    unlock(c);
}

int64_t kiln_cache_verify(kiln_cache *c, int64_t *bad) {
    *bad = 0;
    lock(c);
    if (!c->db) {
        unlock(c);
        return 0;
    }
    int64_t n = 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(c->db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            const char *r = (const char *)sqlite3_column_text(s, 0);
            if (r && strcmp(r, "ok") != 0) {
                warn(c, NULL, "kiln's cache %s: %s", c->path, r);
                (*bad)++;
            }
        }
        sqlite3_finalize(s);
    }
    kiln_cache_key *badkeys = NULL;
    int64_t nbad = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT key, size, checksum, blob FROM artifacts", -1, &s,
                           NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            n++;
            const void *kb = sqlite3_column_blob(s, 0), *sum = sqlite3_column_blob(s, 2);
            const void *b = sqlite3_column_blob(s, 3);
            int blen = sqlite3_column_bytes(s, 3);
            uint8_t mine[16];
            if (b) checksum(b, (size_t)blen, mine);
            if (kb && sqlite3_column_bytes(s, 0) == 16 && b && blen == sqlite3_column_int64(s, 1) &&
                sum && sqlite3_column_bytes(s, 2) == 16 && memcmp(mine, sum, 16) == 0)
                continue;
            kiln_cache_key *nk = realloc(badkeys, sizeof *nk * (size_t)(nbad + 1));
            if (!nk) break;
            badkeys = nk;
            memset(&badkeys[nbad], 0, sizeof *badkeys);
            if (kb && sqlite3_column_bytes(s, 0) == 16) memcpy(badkeys[nbad].b, kb, 16);
            nbad++;
        }
        sqlite3_finalize(s);
    }
    for (int64_t i = 0; i < nbad; i++) {
        verify_failed(c, &badkeys[i], c->path);
        step_key(c, "DELETE FROM artifacts WHERE key = ?1", &badkeys[i]);
        count(c, "verify_failures", 1);
    }
    *bad += nbad;
    free(badkeys);
    unlock(c);
    return n;
}

/* ---- bundles ------------------------------------------------------------------------- */

static int64_t bundle_error(kiln_cache *c, sqlite3 *b, const char *what, const char *path) {
    diag_plain(c->ctx, KILN_ERROR, NULL, "%s %s: %s", what, path,
               b ? sqlite3_errmsg(b) : "cannot open it");
    return -1;
}

int64_t kiln_cache_export(kiln_cache *c, const char *path, const char *const *targets,
                          int ntargets) {
    lock(c);
    if (!c->db) {
        unlock(c);
        diag_plain(c->ctx, KILN_ERROR, "set KILN_CACHE_DIR to a usable directory",
                   "kiln's disk cache is off; there is nothing to export to %s", path);
        return -1;
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    unlink(tmp);
    sqlite3 *b = NULL;
    int64_t n = -1;
    if (sqlite3_open_v2(tmp, &b, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
        sqlite3_exec(b,
                     "CREATE TABLE artifacts(key BLOB PRIMARY KEY, kind TEXT NOT NULL,"
                     " name TEXT NOT NULL, target TEXT NOT NULL, size INTEGER NOT NULL,"
                     " checksum BLOB NOT NULL, created INTEGER NOT NULL,"
                     " last_used INTEGER NOT NULL, blob BLOB NOT NULL);"
                     "CREATE TABLE bundle(name TEXT PRIMARY KEY, value TEXT);"
                     "INSERT INTO bundle VALUES('format', 'kiln-bundle-1');"
                     "CREATE TABLE facts(name TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "BEGIN;",
                     NULL, NULL, NULL) != SQLITE_OK) {
        bundle_error(c, b, "cannot write the bundle", tmp);
        goto done;
    }
    sqlite3_stmt *sel, *ins;
    if (sqlite3_prepare_v2(c->db,
                           "SELECT key, kind, name, target, size, checksum, created, last_used, "
                           "blob FROM artifacts",
                           -1, &sel, NULL) != SQLITE_OK) {
        bundle_error(c, c->db, "cannot read the cache", c->path);
        goto done;
    }
    if (sqlite3_prepare_v2(b, "INSERT INTO artifacts VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                           -1, &ins, NULL) != SQLITE_OK) {
        sqlite3_finalize(sel);
        bundle_error(c, b, "cannot write the bundle", tmp);
        goto done;
    }
    int64_t moved = 0;
    bool ok = true;
    while (ok && sqlite3_step(sel) == SQLITE_ROW) {
        const char *target = (const char *)sqlite3_column_text(sel, 3);
        bool want = ntargets == 0;
        for (int i = 0; i < ntargets && !want && target; i++)
            want = strncmp(target, targets[i], strlen(targets[i])) == 0;
        if (!want) continue;
        for (int i = 0; i < 9; i++) sqlite3_bind_value(ins, i + 1, sqlite3_column_value(sel, i));
        ok = sqlite3_step(ins) == SQLITE_DONE;
        sqlite3_reset(ins);
        moved++;
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    /* the facts (NVRTC's version and architectures) the keys were made with, so a
     * machine without NVRTC can make the same keys */
    if (ok && sqlite3_prepare_v2(c->db, "SELECT name, value FROM facts", -1, &sel, NULL) ==
                  SQLITE_OK) {
        if (sqlite3_prepare_v2(b, "INSERT INTO facts VALUES(?1, ?2)", -1, &ins, NULL) ==
            SQLITE_OK) {
            while (ok && sqlite3_step(sel) == SQLITE_ROW) {
                sqlite3_bind_value(ins, 1, sqlite3_column_value(sel, 0));
                sqlite3_bind_value(ins, 2, sqlite3_column_value(sel, 1));
                ok = sqlite3_step(ins) == SQLITE_DONE;
                sqlite3_reset(ins);
            }
            sqlite3_finalize(ins);
        }
        sqlite3_finalize(sel);
    }
    if (!ok || sqlite3_exec(b, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        bundle_error(c, b, "cannot write the bundle", tmp);
        goto done;
    }
    sqlite3_close(b);
    b = NULL;
    if (rename(tmp, path) != 0) {
        diag_plain(c->ctx, KILN_ERROR, NULL, "cannot write the bundle %s: %s", path,
                   strerror(errno));
        goto done;
    }
    n = moved;
done:
    if (b) sqlite3_close(b);
    if (n < 0) unlink(tmp);
    unlock(c);
    return n;
}

int64_t kiln_cache_import(kiln_cache *c, const char *path) {
    sqlite3 *b = NULL;
    if (access(path, R_OK) != 0) {
        diag_plain(c->ctx, KILN_ERROR, NULL, "cannot read the bundle %s: %s", path,
                   strerror(errno));
        return -1;
    }
    if (sqlite3_open_v2(path, &b, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        bundle_error(c, b, "cannot open the bundle", path);
        sqlite3_close(b);
        return -1;
    }
    sqlite3_stmt *s = NULL;
    const char *format = NULL;
    if (sqlite3_prepare_v2(b, "SELECT value FROM bundle WHERE name = 'format'", -1, &s, NULL) ==
            SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
        format = (const char *)sqlite3_column_text(s, 0);
    bool ours = format && strcmp(format, "kiln-bundle-1") == 0;
    sqlite3_finalize(s);
    if (!ours) {
        diag_plain(c->ctx, KILN_ERROR, "make bundles with `kiln cache export`",
                   "%s is not a kiln bundle", path);
        sqlite3_close(b);
        return -1;
    }
    if (sqlite3_prepare_v2(b, "SELECT key, kind, name, target, size, checksum, created, blob "
                              "FROM artifacts",
                           -1, &s, NULL) != SQLITE_OK) {
        bundle_error(c, b, "cannot read the bundle", path);
        sqlite3_close(b);
        return -1;
    }
    int64_t n = 0, bad = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        kiln_cache_key k;
        const void *kb = sqlite3_column_blob(s, 0);
        const char *kind = (const char *)sqlite3_column_text(s, 1);
        const char *name = (const char *)sqlite3_column_text(s, 2);
        const char *target = (const char *)sqlite3_column_text(s, 3);
        int64_t size = sqlite3_column_int64(s, 4);
        const void *sum = sqlite3_column_blob(s, 5);
        int64_t created = sqlite3_column_int64(s, 6);
        const void *blob = sqlite3_column_blob(s, 7);
        int blen = sqlite3_column_bytes(s, 7);
        uint8_t mine[16];
        if (blob) checksum(blob, (size_t)blen, mine);
        if (!kb || sqlite3_column_bytes(s, 0) != 16 || !kind || strlen(kind) >= 16 || !name ||
            !target || !blob || blen != size || !sum || sqlite3_column_bytes(s, 5) != 16 ||
            memcmp(mine, sum, 16) != 0) {
            bad++;
            continue;
        }
        memcpy(k.b, kb, 16);
        lock(c);
        mem_put(c, &k, kind, blob, (size_t)blen);
        int ok = c->db ? disk_put(c, &k, kind, name, target, blob, (size_t)blen, created, false, 0)
                       : 0;
        if (remote_ok(c->remote))
            remote_put(c->remote, &k, kind, name, target, blob, (size_t)blen);
        unlock(c);
        if (ok == 0) n++;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        bundle_error(c, b, "cannot read the bundle", path);
        sqlite3_close(b);
        return -1;
    }
    /* a bundle's NVRTC facts, for machines without NVRTC (bundles made before
     * facts existed have none) */
    if (sqlite3_prepare_v2(b, "SELECT value FROM facts WHERE name LIKE 'nvrtc|%'", -1, &s,
                           NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            const char *v = (const char *)sqlite3_column_text(s, 0);
            if (v && strlen(v) < 1024) kiln_cache_set_fact(c, KILN_NVRTC_IMPORTED_FACTS, v);
        }
        sqlite3_finalize(s);
    }
    sqlite3_close(b);
    if (bad) {
        char nb[32];
        snprintf(nb, sizeof nb, "%lld", (long long)bad);
        diag_plain(c->ctx, KILN_WARNING, NULL, "%s entries of the bundle %s failed verification and "
                   "were skipped", nb, path);
    }
    return n;
}
