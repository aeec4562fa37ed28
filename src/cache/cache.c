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
 * Every wait has a bound: a lease is at most KILN_CACHE_LEASE_MS, a claim
 * that says it lasts longer is stale (taken over, one warning), and a waiter
 * gives up after that long and compiles itself.
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
 * database is not one, caching is memory-only and one warning says why.  So
 * are bundles: they are read as hostile input (size limits below, SQLite's
 * defensive mode) and, when a bundle key is set, must carry a matching
 * HMAC-SHA256 of their contents.
 *
 * Calls are serialised by a mutex (compiles run with the GIL released); a
 * program that forks holds it across fork() (kiln_cache_fork_prepare), so no
 * thread is inside SQLite when a child is made.
 */
#include <errno.h>
#include <fcntl.h>
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

enum {
    LEASE_POLL_MS = 20,            /* a waiter looks for the artifact this often */
    LRU_GRAIN_MS = 60 * 1000,      /* a hit rewrites its time of use at most this often */
    DB_BUSY_MS = 1000,             /* the longest wait for another process's write lock */
    DB_WRITE_PAUSE_MS = 30 * 1000, /* after such a wait failed, no write is tried this long */
    /* bundles are hostile input until checked: what kiln reads of one */
    BUNDLE_MAX_ENTRIES = 1 << 20,    /* rows of `artifacts` (a 1 GiB cache holds ~60,000) */
    BUNDLE_MAX_BLOB = 256 << 20,     /* bytes of one shared object or cubin */
    BUNDLE_MAX_TEXT = 1024,          /* bytes of an entry's name or target */
    BUNDLE_KEY_FILE_MAX = 4096,      /* bytes of $KILN_BUNDLE_KEY_FILE */
    BUNDLE_MAX_FACT = 1024,          /* bytes of an imported NVRTC fact */
    /* configuration */
    CACHE_DIR_MAX = 3900,             /* bytes of $KILN_CACHE_DIR: room for "/kiln.db-wal" */
    REMOTE_TIMEOUT_MS = 500,          /* $KILN_REMOTE_TIMEOUT_MS's default */
    REMOTE_TIMEOUT_MAX_MS = 600000    /* and its largest value */
};
static const size_t MEM_DEFAULT_BYTES = (size_t)256 << 20; /* the memory tier */
static const int64_t DISK_DEFAULT_BYTES = (int64_t)1 << 30; /* $KILN_CACHE_SIZE's default */

static const char bundle_format[] = "kiln-bundle-1";
static const char sig_prefix[] = "hmac-sha256:";

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
    char *dir_cfg, *remote_cfg, *remote_key_cfg, *bundle_key_cfg; /* owned copies of cfg's */
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
    bool busy_warned;             /* a write lock held elsewhere was warned about */
    bool stale_warned;            /* a stale claim was warned about */
    int64_t writes_paused_until;  /* monotonic ms: the write lock was held elsewhere */
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

/* for bounds on waits: not moved by changes to the time of day */
static int64_t mono_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
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
        /* a writer waits this long for another's lock; readers never wait (WAL) */
        sqlite3_busy_timeout(db, DB_BUSY_MS);
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
        if (env && *env && (*end || v <= 0 || v > REMOTE_TIMEOUT_MAX_MS)) {
            warn(c, "give it in milliseconds, such as 500",
                 "KILN_REMOTE_TIMEOUT_MS=%s is not a time%s; using 500 ms", env, "");
            v = 0;
        }
        timeout = v > 0 ? (int)v : REMOTE_TIMEOUT_MS;
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
    c->cfg.bundle_key = c->bundle_key_cfg = dup_cfg(c->cfg.bundle_key);
    c->mem_max = c->cfg.memory_bytes > 0 ? (size_t)c->cfg.memory_bytes : MEM_DEFAULT_BYTES;
    c->max_bytes = c->cfg.max_bytes > 0 ? c->cfg.max_bytes : -1;
    if (c->max_bytes < 0) {
        const char *env = getenv("KILN_CACHE_SIZE");
        int64_t v = parse_size(env);
        if (env && *env && v < 0)
            diag_plain(ctx, KILN_WARNING, "write a size such as 512M or 2G",
                       "KILN_CACHE_SIZE=%s is not a size; using 1 GiB", env);
        c->max_bytes = v >= 0 ? v : DISK_DEFAULT_BYTES;
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
    free(c->bundle_key_cfg);
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

void kiln_cache_fork_prepare(kiln_cache *c) {
    if (c) pthread_mutex_lock(&c->mu);
}

void kiln_cache_fork_parent(kiln_cache *c) {
    if (c) pthread_mutex_unlock(&c->mu);
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
static bool may_write(kiln_cache *c) { return mono_ms() >= c->writes_paused_until; }

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
static int write_failed(kiln_cache *c, int rc) {
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
    int ext = sqlite3_extended_errcode(c->db), sys = sqlite3_system_errno(c->db);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE && db_broken(ext)) {
        disk_off(c, ext, sys, "reading");
        return 0;
    }
    if (found < 0) {
        verify_failed(c, k, c->path);
        if (may_write(c)) {
            rc = step_key(c, "DELETE FROM artifacts WHERE key = ?1", k);
            if (rc == SQLITE_DONE) rc = count(c, "verify_failures", 1);
            if (rc != SQLITE_DONE) write_failed(c, rc);
        }
        return 0;
    }
    if (found && last_used < now_ms() - LRU_GRAIN_MS && may_write(c)) {
        /* a hit writes only when its time of use moves by more than the LRU's
         * grain: most hits stay read-only, which keeps a warm start fast */
        sqlite3_stmt *u;
        if (sqlite3_prepare_v2(c->db, "UPDATE artifacts SET last_used = ?2 WHERE key = ?1", -1, &u,
                               NULL) == SQLITE_OK) {
            sqlite3_bind_blob(u, 1, k->b, 16, SQLITE_STATIC);
            sqlite3_bind_int64(u, 2, now_ms());
            rc = sqlite3_step(u);
            sqlite3_finalize(u);
            if (rc != SQLITE_DONE) write_failed(c, rc);
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
 * the error, after write_failed has dealt with it. */
static int disk_put(kiln_cache *c, const kiln_cache_key *k, const char *kind, const char *name,
                    const char *target, const void *blob, size_t len, int64_t created,
                    bool compiled, double compile_ms) {
    if (len > (size_t)INT32_MAX) return SQLITE_TOOBIG;
    if (!may_write(c)) return SQLITE_BUSY;
    uint8_t sum[16];
    checksum(blob, len, sum);
    int rc = sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return write_failed(c, rc);
    sqlite3_stmt *s;
    rc = sqlite3_prepare_v2(c->db,
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
        rc = sqlite3_step(s);
        sqlite3_finalize(s);
    }
    if (rc == SQLITE_DONE && compiled) rc = count(c, "compiles", 1);
    if (rc == SQLITE_DONE && compiled) rc = count(c, "compile_ms", compile_ms);
    if (rc == SQLITE_DONE) rc = step_key(c, "DELETE FROM pending WHERE key = ?1", k);
    if (rc == SQLITE_DONE) evict(c, c->max_bytes, &rc);
    if (rc == SQLITE_DONE) rc = sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
    return rc == SQLITE_OK ? SQLITE_OK : write_failed(c, rc);
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
    /* a failure has been said (write_failed) or is a pause already warned about */
    if (c->db && disk_put(c, k, kind, name, target, blob, len, now_ms(), true, compile_ms) ==
                     SQLITE_OK)
        stored = 1;
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

/* The furthest expiry a live claim can have: the longest lease, plus the
 * difference between the clocks of two hosts that share a cache directory. */
enum { STALE_MS = KILN_CACHE_LEASE_MS + KILN_CACHE_CLOCK_SKEW_MS };

/* Another process's live claim on k in the disk tier?  A claim that expires
 * further away than STALE_MS is no live process's (a lease is never that
 * long): not live, and *stale is set. */
static bool disk_claimed_by_other(kiln_cache *c, const kiln_cache_key *k, bool *stale) {
    sqlite3_stmt *s;
    bool other = false;
    if (sqlite3_prepare_v2(c->db, "SELECT owner, expires FROM pending WHERE key = ?1", -1, &s,
                           NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW) {
        const char *owner = (const char *)sqlite3_column_text(s, 0);
        int64_t expires = sqlite3_column_int64(s, 1), now = now_ms();
        other = owner && strcmp(owner, c->owner) != 0 && expires >= now && !owner_gone(c, owner);
        if (other && expires - now > STALE_MS) {
            other = false;
            *stale = true;
        }
    }
    sqlite3_finalize(s);
    return other;
}

static void stale_claim(kiln_cache *c, const kiln_cache_key *k) {
    if (c->stale_warned) return;
    c->stale_warned = true;
    char hex[33], lease[32];
    kiln_cache_key_hex(k, hex);
    snprintf(lease, sizeof lease, "%d", KILN_CACHE_LEASE_MS / 1000);
    warn(c, "a process that claims for longer, or a claim written by hand, is not kiln's",
         "kiln's cache: the claim on kernel %s expires later than the longest lease (%s s) or "
         "never; it is stale, and this process builds the kernel itself", hex, lease);
}

/* Whether this process holds the disk claim on k (a read: never waits). */
static bool holds_claim(kiln_cache *c, const kiln_cache_key *k) {
    sqlite3_stmt *s;
    bool mine = false;
    if (sqlite3_prepare_v2(c->db, "SELECT 1 FROM pending WHERE key = ?1 AND owner = ?2", -1, &s,
                           NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, c->owner, -1, SQLITE_STATIC);
    mine = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return mine;
}

/* Ends this process's disk claim on k, if it has one.  Looked at first: a
 * release with nothing to release never waits for the write lock. */
static void release_disk(kiln_cache *c, const kiln_cache_key *k) {
    if (!c->db || !may_write(c) || !holds_claim(c, k)) return;
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(c->db, "DELETE FROM pending WHERE key = ?1 AND owner = ?2", -1,
                                &s, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, c->owner, -1, SQLITE_STATIC);
        rc = sqlite3_step(s);
        sqlite3_finalize(s);
    }
    if (rc != SQLITE_DONE) write_failed(c, rc);
}

int kiln_cache_claim(kiln_cache *c, const kiln_cache_key *k, int lease_ms, void **blob,
                     size_t *len, char kind[16]) {
    char kbuf[16];
    if (lease_ms <= 0 || lease_ms > KILN_CACHE_LEASE_MS) lease_ms = KILN_CACHE_LEASE_MS;
    lock(c);
    int claimed = 1;
    bool stale = false;
    if (c->db && !may_write(c)) {
        /* no claim of ours can be written now; another's live one is still waited for */
        if (disk_claimed_by_other(c, k, &stale)) claimed = 0;
    } else if (c->db) {
        int rc = sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc == SQLITE_OK) {
            if (disk_claimed_by_other(c, k, &stale)) {
                claimed = 0;
            } else {
                sqlite3_stmt *s;
                /* takes over an expired, dead or stale claim */
                rc = sqlite3_prepare_v2(c->db,
                                        "INSERT OR REPLACE INTO pending(key, owner, expires) "
                                        "VALUES(?1, ?2, ?3)",
                                        -1, &s, NULL);
                if (rc == SQLITE_OK) {
                    sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
                    sqlite3_bind_text(s, 2, c->owner, -1, SQLITE_STATIC);
                    sqlite3_bind_int64(s, 3, now_ms() + lease_ms);
                    rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(c->db);
                    sqlite3_finalize(s);
                }
            }
            if (rc == SQLITE_OK) rc = sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
        }
        if (rc != SQLITE_OK) write_failed(c, rc); /* building without a disk claim */
    }
    if (claimed && remote_ok(c->remote)) {
        bool rstale = false;
        claimed = remote_claim(c->remote, k, lease_ms, STALE_MS, &rstale);
        stale = stale || rstale;
        /* another machine builds it: this host's processes wait for it, not for us */
        if (!claimed) release_disk(c, k);
    }
    if (stale) stale_claim(c, k);
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
    release_disk(c, k);
    if (remote_ok(c->remote)) remote_release(c->remote, k);
    unlock(c);
}

int kiln_cache_wait(kiln_cache *c, const kiln_cache_key *k, kiln_ctx *ctx, int max_ms,
                    void **blob, size_t *len, char kind[16]) {
    if (max_ms <= 0 || max_ms > KILN_CACHE_LEASE_MS) max_ms = KILN_CACHE_LEASE_MS;
    int64_t deadline = mono_ms() + max_ms;
    lock(c);
    c->st.waits++;
    unlock(c);
    for (;;) {
        if (kiln_cache_get(c, k, blob, len, kind)) return 1;
        lock(c);
        bool stale = false;
        bool busy = (c->db && disk_claimed_by_other(c, k, &stale)) ||
                    (remote_ok(c->remote) && remote_claimed_by_other(c->remote, k, STALE_MS));
        unlock(c);
        int64_t left = deadline - mono_ms();
        if (!busy || left <= 0) return 0; /* build it here: no live claim, or waited enough */
        /* the poll runs with no lock held: it may take the GIL, which a thread
         * that waits for the lock may hold */
        if (kiln_ctx_interrupted(ctx)) {
            diag_plain(ctx, KILN_ERROR, NULL,
                       "interrupted while waiting for another process to build a kernel");
            return -1;
        }
        struct timespec d = {0, (left < LEASE_POLL_MS ? left : LEASE_POLL_MS) * 1000000L};
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
        int rc = sqlite3_exec(c->db, "DELETE FROM artifacts", NULL, NULL, NULL);
        if (rc == SQLITE_OK) {
            n = sqlite3_changes(c->db);
            sqlite3_exec(c->db, "DELETE FROM pending", NULL, NULL, NULL);
            sqlite3_exec(c->db, "VACUUM", NULL, NULL, NULL);
        } else {
            write_failed(c, rc);
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
        int rc;
        n = evict(c, max_bytes < 0 ? c->max_bytes : max_bytes, &rc);
        sqlite3_stmt *s;
        /* claims that lapsed, and stale ones (see disk_claimed_by_other) */
        if (rc == SQLITE_DONE &&
            (rc = sqlite3_prepare_v2(c->db, "DELETE FROM pending WHERE expires < ?1 OR expires > ?2",
                                     -1, &s, NULL)) == SQLITE_OK) {
            sqlite3_bind_int64(s, 1, now_ms());
            sqlite3_bind_int64(s, 2, now_ms() + STALE_MS);
            rc = sqlite3_step(s);
            sqlite3_finalize(s);
        }
        if (rc != SQLITE_DONE) write_failed(c, rc);
        else if (n) sqlite3_exec(c->db, "VACUUM", NULL, NULL, NULL);
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
    if (c->db && may_write(c) &&
        sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO facts(name, value) VALUES(?1, ?2)", -1,
                           &s, NULL) == SQLITE_OK) {
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
        int rc = sqlite3_step(s);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE) write_failed(c, rc);
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
        int rc = step_key(c, "DELETE FROM artifacts WHERE key = ?1", &badkeys[i]);
        if (rc == SQLITE_DONE) rc = count(c, "verify_failures", 1);
        if (rc != SQLITE_DONE) {
            write_failed(c, rc);
            if (!c->db) break;
        }
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

static void wipe_key(char *key, size_t len) {
    if (!key) return;
    volatile char *p = key;
    for (size_t i = 0; i < len; i++) p[i] = 0;
    free(key);
}

/* The bundle key: the configuration's, else $KILN_BUNDLE_KEY, else the
 * contents of $KILN_BUNDLE_KEY_FILE without trailing newlines.  1 with *key
 * malloc'd (wipe_key it), 0 when there is none, -1 after an error. */
static int bundle_key(kiln_cache *c, char **key, size_t *len) {
    *key = NULL;
    *len = 0;
    const char *k = c->cfg.bundle_key ? c->cfg.bundle_key : getenv("KILN_BUNDLE_KEY");
    if (k && *k) {
        *len = strlen(k);
        *key = strdup(k);
        return *key ? 1 : -1;
    }
    const char *file = getenv("KILN_BUNDLE_KEY_FILE");
    if (c->cfg.bundle_key || !file || !*file) return 0;
    const char *why = NULL;
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    char buf[BUNDLE_KEY_FILE_MAX + 1];
    ssize_t n = -1;
    if (fd < 0 || fstat(fd, &st) != 0) why = strerror(errno);
    else if (!S_ISREG(st.st_mode)) why = "not a regular file";
    else if (st.st_size > BUNDLE_KEY_FILE_MAX) why = "longer than 4096 bytes";
    else if ((n = read(fd, buf, sizeof buf)) < 0) why = strerror(errno);
    if (fd >= 0) close(fd);
    while (!why && n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) n--;
    if (!why && n <= 0) why = "empty";
    if (!why && n > BUNDLE_KEY_FILE_MAX) why = "longer than 4096 bytes";
    if (why) {
        diag_plain(c->ctx, KILN_ERROR, "point KILN_BUNDLE_KEY_FILE at a file that holds the key",
                   "cannot use the bundle key file %s (KILN_BUNDLE_KEY_FILE): %s", file, why);
        memset(buf, 0, sizeof buf);
        return -1;
    }
    *key = malloc((size_t)n + 1);
    if (*key) {
        memcpy(*key, buf, (size_t)n);
        (*key)[n] = 0;
        *len = (size_t)n;
    }
    memset(buf, 0, sizeof buf);
    return *key ? 1 : -1;
}

static bool load_hmac(kiln_cache *c, Hmac *h, const char *path) {
    if (hmac_load(h)) return true;
    diag_plain(c->ctx, KILN_ERROR, "install OpenSSL's libcrypto, or unset the bundle key",
               "a bundle key is set but libcrypto (for HMAC-SHA256) cannot be loaded; the "
               "bundle %s is not used", path);
    return false;
}

/* One value into the MAC, with its type and length: no two different
 * contents make the same message. */
static void mac_value(HmacStream *h, sqlite3_stmt *s, int col) {
    uint8_t head[9];
    int t = sqlite3_column_type(s, col);
    uint64_t v = 0;
    const void *p = NULL;
    head[0] = (uint8_t)t;
    if (t == SQLITE_INTEGER) {
        v = (uint64_t)sqlite3_column_int64(s, col);
    } else if (t == SQLITE_FLOAT) {
        double d = sqlite3_column_double(s, col);
        memcpy(&v, &d, 8);
    } else if (t != SQLITE_NULL) {
        p = t == SQLITE_TEXT ? (const void *)sqlite3_column_text(s, col) : sqlite3_column_blob(s, col);
        v = (uint64_t)sqlite3_column_bytes(s, col);
    }
    for (int i = 0; i < 8; i++) head[1 + i] = (uint8_t)(v >> (8 * i));
    hmac_update(h, head, sizeof head);
    if (p) hmac_update(h, p, (size_t)v);
}

/* The HMAC-SHA256 of a bundle's contents under key: every row of `artifacts`
 * in key order (all its columns but last_used, which import does not read),
 * then every row of `facts` in name order.  0, or -1 with b's error. */
static int bundle_mac(sqlite3 *b, const Hmac *hm, const char *key, size_t keylen,
                      uint8_t out[32]) {
    static const char domain[] = "kiln-bundle-1 signature";
    static const char *const tables[] = {
        "SELECT key, kind, name, target, size, checksum, created, blob FROM artifacts ORDER BY key",
        "SELECT name, value FROM facts ORDER BY name"};
    HmacStream h;
    int ok = hmac_begin(&h, hm, key, keylen) == 0;
    hmac_update(&h, domain, sizeof domain);
    for (int t = 0; t < 2 && ok; t++) {
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(b, tables[t], -1, &s, NULL) != SQLITE_OK) {
            ok = t == 1; /* bundles made before facts existed have none */
            break;
        }
        int rc, ncol = sqlite3_column_count(s);
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            hmac_update(&h, t ? "f" : "a", 1);
            for (int i = 0; i < ncol; i++) mac_value(&h, s, i);
        }
        sqlite3_finalize(s);
        ok = rc == SQLITE_DONE;
    }
    return hmac_end(&h, out) == 0 && ok ? 0 : -1;
}

int64_t kiln_cache_export_bundle(kiln_cache *c, const char *path, const char *const *targets,
                                 int ntargets, int *is_signed) {
    if (is_signed) *is_signed = 0;
    char *key;
    size_t keylen;
    int haskey = bundle_key(c, &key, &keylen);
    Hmac hm;
    if (haskey < 0 || (haskey && !load_hmac(c, &hm, path))) {
        wipe_key(key, keylen);
        return -1;
    }
    lock(c);
    if (!c->db) {
        unlock(c);
        wipe_key(key, keylen);
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
    if (ok && haskey) {
        /* signed over what the bundle holds, read back as import will read it */
        uint8_t mac[32];
        char sig[sizeof sig_prefix + 64];
        ok = bundle_mac(b, &hm, key, keylen, mac) == 0;
        int w = snprintf(sig, sizeof sig, "%s", sig_prefix);
        for (int i = 0; i < 32; i++) w += snprintf(sig + w, sizeof sig - (size_t)w, "%02x", mac[i]);
        if (ok && sqlite3_prepare_v2(b, "INSERT INTO bundle VALUES('signature', ?1)", -1, &ins,
                                     NULL) == SQLITE_OK) {
            sqlite3_bind_text(ins, 1, sig, -1, SQLITE_STATIC);
            ok = sqlite3_step(ins) == SQLITE_DONE;
            sqlite3_finalize(ins);
        } else {
            ok = false;
        }
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
    if (is_signed) *is_signed = haskey;
done:
    if (b) sqlite3_close(b);
    if (n < 0) unlink(tmp);
    unlock(c);
    wipe_key(key, keylen);
    return n;
}

int64_t kiln_cache_export(kiln_cache *c, const char *path, const char *const *targets,
                          int ntargets) {
    return kiln_cache_export_bundle(c, path, targets, ntargets, NULL);
}

static const char *file_type(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    return "not a regular file";
}

/* A connection to a file nobody vouches for yet: read only, no triggers,
 * views or schema functions run, corrupt pages detected, and no value longer
 * than the longest entry kiln takes (SQLite refuses it before allocating). */
static int open_untrusted(const char *path, sqlite3 **b) {
    int rc = sqlite3_open_v2(path, b, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_db_config(*b, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(*b, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
    sqlite3_db_config(*b, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
#endif
#ifdef SQLITE_DBCONFIG_ENABLE_VIEW
    sqlite3_db_config(*b, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
#endif
    sqlite3_limit(*b, SQLITE_LIMIT_LENGTH, BUNDLE_MAX_BLOB);
    sqlite3_busy_timeout(*b, DB_BUSY_MS);
    return sqlite3_exec(*b, "PRAGMA cell_size_check = ON; BEGIN", NULL, NULL, NULL);
}

/* The bundle's signature: 1 read into mac, 0 none, -1 there but malformed. */
static int read_signature(sqlite3 *b, uint8_t mac[32]) {
    sqlite3_stmt *s;
    int found = 0;
    if (sqlite3_prepare_v2(b, "SELECT value FROM bundle WHERE name = 'signature'", -1, &s, NULL) !=
        SQLITE_OK)
        return 0;
    if (sqlite3_step(s) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        size_t pl = sizeof sig_prefix - 1;
        found = -1;
        if (v && strlen(v) == pl + 64 && memcmp(v, sig_prefix, pl) == 0) {
            found = 1;
            for (int i = 0; i < 32 && found == 1; i++) {
                int hi = hexval(v[pl + 2 * i]), lo = hexval(v[pl + 2 * i + 1]);
                if (hi < 0 || lo < 0) found = -1;
                else mac[i] = (uint8_t)(hi << 4 | lo);
            }
        }
    }
    sqlite3_finalize(s);
    return found;
}

/* Checks the bundle's signature when a key is set: 0 go on (*checked set when
 * it matched), -1 after an error (refused). */
static int check_signature(kiln_cache *c, sqlite3 *b, const char *path, int flags, int *checked) {
    char *key;
    size_t keylen;
    int haskey = bundle_key(c, &key, &keylen);
    if (haskey <= 0) return haskey;
    Hmac hm;
    uint8_t want[32], mine[32];
    int rc = -1;
    int sig = read_signature(b, want);
    bool trust = flags & KILN_IMPORT_TRUST_UNSIGNED;
    const char *problem = NULL;
    if (!load_hmac(c, &hm, path)) goto done;
    if (sig == 0) {
        problem = " is not signed";
    } else if (sig < 0) {
        problem = " has a malformed signature";
    } else if (bundle_mac(b, &hm, key, keylen, mine) != 0) {
        bundle_error(c, b, "cannot read the bundle", path);
        goto done;
    } else {
        uint8_t d = 0;
        for (int i = 0; i < 32; i++) d |= (uint8_t)(want[i] ^ mine[i]); /* constant time */
        if (d) problem = ": signature does not match (the bundle was altered, or signed with "
                         "another key)";
    }
    if (!problem) {
        *checked = 1;
        rc = 0;
    } else if (trust) {
        diag_plain(c->ctx, KILN_WARNING, NULL,
                   "%s%s; importing it anyway (--trust-unsigned): its machine code will run in "
                   "processes that use this cache", path, problem);
        rc = 0;
    } else {
        diag_plain(c->ctx, KILN_ERROR,
                   "export it with the same KILN_BUNDLE_KEY, or pass --trust-unsigned if you "
                   "trust where it came from",
                   "%s%s; a bundle is code, and kiln refuses it while a bundle key "
                   "(KILN_BUNDLE_KEY or KILN_BUNDLE_KEY_FILE) is set", path, problem);
    }
done:
    wipe_key(key, keylen);
    return rc;
}

int64_t kiln_cache_import_bundle(kiln_cache *c, const char *path, int flags, int *checked) {
    int ok_sig = 0;
    if (checked) *checked = 0;
    struct stat st;
    /* stat, not open: opening a FIFO blocks, a device may act */
    if (stat(path, &st) != 0 || access(path, R_OK) != 0) {
        diag_plain(c->ctx, KILN_ERROR, NULL, "cannot read the bundle %s: %s", path,
                   strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        diag_plain(c->ctx, KILN_ERROR, "give the file that `kiln cache export` wrote",
                   "%s is %s, not a bundle file", path, file_type(st.st_mode));
        return -1;
    }
    sqlite3 *b = NULL;
    sqlite3_stmt *s = NULL;
    int64_t n = -1, bad = 0, rows = 0;
    if (open_untrusted(path, &b) != SQLITE_OK) {
        bundle_error(c, b, "cannot open the bundle", path);
        goto done;
    }
    const char *format = NULL;
    if (sqlite3_prepare_v2(b, "SELECT value FROM bundle WHERE name = 'format'", -1, &s, NULL) ==
            SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
        format = (const char *)sqlite3_column_text(s, 0);
    bool ours = format && strcmp(format, bundle_format) == 0;
    sqlite3_finalize(s);
    s = NULL;
    if (!ours) {
        diag_plain(c->ctx, KILN_ERROR, "make bundles with `kiln cache export`",
                   "%s is not a kiln bundle", path);
        goto done;
    }
    if (sqlite3_prepare_v2(b, "SELECT COUNT(*) FROM artifacts", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW) {
        bundle_error(c, b, "cannot read the bundle", path);
        goto done;
    }
    rows = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    s = NULL;
    if (rows > BUNDLE_MAX_ENTRIES) {
        char nb[32], lim[32];
        snprintf(nb, sizeof nb, "%lld", (long long)rows);
        snprintf(lim, sizeof lim, "%d", BUNDLE_MAX_ENTRIES);
        diag_plain(c->ctx, KILN_ERROR, "export fewer entries per bundle (--target)",
                   "the bundle %s holds %s entries, more than kiln reads from one (%s)", path, nb,
                   lim);
        goto done;
    }
    /* the signature is checked over the same read transaction as the rows
     * that are then imported: both passes see one state of the file */
    if (check_signature(c, b, path, flags, &ok_sig) != 0) goto done;
    if (sqlite3_prepare_v2(b, "SELECT key, kind, name, target, size, checksum, created, blob "
                              "FROM artifacts",
                           -1, &s, NULL) != SQLITE_OK) {
        bundle_error(c, b, "cannot read the bundle", path);
        goto done;
    }
    int64_t moved = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        kiln_cache_key k;
        const void *kb = sqlite3_column_blob(s, 0);
        int kblen = sqlite3_column_bytes(s, 0);
        const char *kind = (const char *)sqlite3_column_text(s, 1);
        int kindlen = sqlite3_column_bytes(s, 1);
        const char *name = (const char *)sqlite3_column_text(s, 2);
        int namelen = sqlite3_column_bytes(s, 2);
        const char *target = (const char *)sqlite3_column_text(s, 3);
        int targetlen = sqlite3_column_bytes(s, 3);
        int64_t size = sqlite3_column_int64(s, 4);
        const void *sum = sqlite3_column_blob(s, 5);
        int sumlen = sqlite3_column_bytes(s, 5);
        int64_t created = sqlite3_column_int64(s, 6);
        const void *blob = sqlite3_column_blob(s, 7);
        int blen = sqlite3_column_bytes(s, 7);
        uint8_t mine[16];
        /* every length is checked against the bytes SQLite handed over, and
         * the texts against kiln's bounds; NULs inside a text end it */
        if (!kb || kblen != 16 || !kind || kindlen >= 16 || (int)strlen(kind) != kindlen ||
            !name || namelen > BUNDLE_MAX_TEXT || !target || targetlen > BUNDLE_MAX_TEXT ||
            !blob || blen <= 0 || blen > BUNDLE_MAX_BLOB || size != blen || !sum ||
            sumlen != 16) {
            bad++;
            continue;
        }
        checksum(blob, (size_t)blen, mine);
        if (memcmp(mine, sum, 16) != 0) {
            bad++;
            continue;
        }
        memcpy(k.b, kb, 16);
        lock(c);
        mem_put(c, &k, kind, blob, (size_t)blen);
        int stored = c->db ? disk_put(c, &k, kind, name, target, blob, (size_t)blen, created,
                                      false, 0)
                           : SQLITE_OK;
        if (remote_ok(c->remote))
            remote_put(c->remote, &k, kind, name, target, blob, (size_t)blen);
        unlock(c);
        if (stored == SQLITE_OK) moved++;
    }
    sqlite3_finalize(s);
    s = NULL;
    if (rc != SQLITE_DONE) {
        bundle_error(c, b, "cannot read the bundle", path);
        goto done;
    }
    /* a bundle's NVRTC facts, for machines without NVRTC (bundles made before
     * facts existed have none) */
    if (sqlite3_prepare_v2(b, "SELECT value FROM facts WHERE name LIKE 'nvrtc|%'", -1, &s,
                           NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            const char *v = (const char *)sqlite3_column_text(s, 0);
            if (v && strlen(v) < BUNDLE_MAX_FACT) kiln_cache_set_fact(c, KILN_NVRTC_IMPORTED_FACTS, v);
        }
        sqlite3_finalize(s);
        s = NULL;
    }
    n = moved;
    if (checked) *checked = ok_sig;
    if (bad) {
        char nb[32];
        snprintf(nb, sizeof nb, "%lld", (long long)bad);
        diag_plain(c->ctx, KILN_WARNING, NULL, "%s entries of the bundle %s failed verification and "
                   "were skipped", nb, path);
    }
done:
    sqlite3_finalize(s);
    sqlite3_close(b);
    return n;
}

int64_t kiln_cache_import(kiln_cache *c, const char *path) {
    return kiln_cache_import_bundle(c, path, 0, NULL);
}
