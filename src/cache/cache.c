/* cache.c: the artifact cache's handle (see kiln.h for the contract).
 *
 * A kiln_cache holds three tiers, looked through in order: memory (mem.c),
 * disk (one SQLite database, disk.c) and remote (Redis, remote.c).  A hit in
 * a lower tier fills the upper ones; a store goes to every tier.  Claims and
 * waits (claim.c) and bundles (bundle.c) are built on the calls here.
 *
 * Calls are serialised by a mutex (compiles run with the GIL released); a
 * program that forks holds it across fork() (kiln_cache_fork_prepare), so no
 * thread is inside SQLite when a child is made.  The tiers belong to the
 * process that opened them: the first call in a forked child opens its own.
 * Every public call takes the mutex here or in the files above, never below,
 * so the tiers' code runs with it held and knows nothing of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

enum {
    REMOTE_TIMEOUT_MS = 500,       /* $KILN_REMOTE_TIMEOUT_MS's default */
    REMOTE_TIMEOUT_MAX_MS = 600000 /* and its largest value */
};
static const size_t MEM_DEFAULT_BYTES = (size_t)256 << 20; /* the memory tier */
static const int64_t DISK_DEFAULT_BYTES = (int64_t)1 << 30; /* $KILN_CACHE_SIZE's default */

/* "512M", "2G", "1.5GiB", "1000000": decimal digits (a fraction only where it makes
 * whole bytes), then an optional unit; -1 for anything else (hex, exponents, inf). */
int64_t kiln_parse_size(const char *s) {
    if (!s || !*s) return -1;
    const char *p = s;
    int dots = 0;
    while ((*p >= '0' && *p <= '9') || (*p == '.' && !dots++)) p++;
    if (p == s || *s == '.') return -1;
    char *end;
    double v = strtod(s, &end);
    if (end != p || !(v >= 0) || v > 9e18) return -1;
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
    if (v > 9e18 || v != (double)(int64_t)v) return -1; /* 0.5 is no number of bytes */
    return (int64_t)v;
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
    c->nhits = 0; /* the parent's hits are the parent's to write */
    snprintf(c->owner, sizeof c->owner, "%s:%ld:%llx", c->host, (long)pid,
             (unsigned long long)now_ms() ^ (unsigned long long)(uintptr_t)c);
    /* the parent's connection is left unclosed: closing it here could
     * checkpoint or delete files the parent still uses (SQLite's advice) */
    c->db = NULL;
    free(c->path);
    c->path = NULL;
    remote_close(c->remote); /* closes the child's copy of the socket only */
    c->remote = NULL;
    disk_open(c);
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
        int64_t v = kiln_parse_size(env);
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

void kiln_cache_flush(kiln_cache *c) {
    cache_lock(c);
    disk_flush_hits(c);
    cache_unlock(c);
}

void kiln_cache_close(kiln_cache *c) {
    if (!c) return;
    if (c->pid == getpid()) disk_flush_hits(c);
    mem_free(c);
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
    return remote_ok(c->remote) ? remote_url(c->remote) : NULL; /* password masked */
}

void cache_lock(kiln_cache *c) {
    pthread_mutex_lock(&c->mu);
    own_tiers(c);
}

void cache_unlock(kiln_cache *c) { pthread_mutex_unlock(&c->mu); }

void kiln_cache_fork_prepare(kiln_cache *c) {
    if (c) pthread_mutex_lock(&c->mu);
}

void kiln_cache_fork_parent(kiln_cache *c) {
    if (c) pthread_mutex_unlock(&c->mu);
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

/* Looks through the tiers, with the lock held; counts in the stats when asked.
 * Returns the tier that had it (KILN_CACHE_MEMORY...), or 0. */
int cache_lookup(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len, char kind[16],
                 bool counted) {
    kiln_cache_stats saved = c->st;
    int hit = 0;
    int mem = mem_get(c, k, blob, len, kind);
    if (mem > 0) {
        c->st.mem_hits++;
        hit = KILN_CACHE_MEMORY;
    } else if (mem == 0) {
        c->st.mem_misses++;
        if (c->db) {
            if (disk_get(c, k, blob, len, kind)) {
                hit = KILN_CACHE_DISK;
                c->st.disk_hits++;
            } else {
                c->st.disk_misses++;
            }
        }
        if (!hit && remote_ok(c->remote) && remote_lookup(c, k, blob, len, kind, counted))
            hit = KILN_CACHE_REMOTE;
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

int kiln_cache_get_tier(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len,
                        char kind[16], int *looked) {
    char kbuf[16];
    cache_lock(c);
    if (looked)
        *looked = 1 << KILN_CACHE_MEMORY | (c->db ? 1 << KILN_CACHE_DISK : 0) |
                  (remote_ok(c->remote) ? 1 << KILN_CACHE_REMOTE : 0);
    int tier = cache_lookup(c, k, blob, len, kind ? kind : kbuf, true);
    cache_unlock(c);
    return tier;
}

int kiln_cache_get(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len,
                   char kind[16]) {
    return kiln_cache_get_tier(c, k, blob, len, kind, NULL) ? 1 : 0;
}

int kiln_cache_put(kiln_cache *c, const kiln_cache_key *k, const char *kind, const char *name,
                   const char *target, const void *blob, size_t len, double compile_ms) {
    cache_lock(c);
    c->st.compiles++;
    c->st.compile_ms += compile_ms;
    mem_put(c, k, kind, blob, len);
    int stored = 0;
    /* a failure has been said (disk_write_failed) or is a pause already warned about */
    if (c->db && disk_put(c, k, kind, name, target, blob, len, now_ms(), true, compile_ms) ==
                     SQLITE_OK)
        stored = 1;
    if (remote_ok(c->remote)) {
        if (remote_put(c->remote, k, kind, name, target, blob, len) == 0) stored = 1;
        remote_release(c->remote, k);
    }
    cache_unlock(c);
    return stored ? 0 : -1;
}

/* ---- the public calls on the disk tier (disk.c does the work) ---- */

void kiln_cache_get_stats(kiln_cache *c, kiln_cache_stats *out) {
    cache_lock(c);
    *out = c->st;
    out->mem_entries = c->nmem;
    out->mem_bytes = (int64_t)c->mem_bytes;
    disk_stats(c, out);
    cache_unlock(c);
}

int kiln_cache_list(kiln_cache *c, void (*fn)(void *ud, const kiln_cache_entry *e), void *ud) {
    cache_lock(c);
    int n = disk_list(c, fn, ud);
    cache_unlock(c);
    return n;
}

int64_t kiln_cache_clear(kiln_cache *c) {
    cache_lock(c);
    mem_clear(c);
    int64_t n = disk_clear(c);
    cache_unlock(c);
    return n;
}

int64_t kiln_cache_prune(kiln_cache *c, int64_t max_bytes) {
    cache_lock(c);
    int64_t n = disk_prune(c, max_bytes);
    cache_unlock(c);
    return n;
}

int kiln_cache_fact(kiln_cache *c, const char *name, char *buf, size_t size) {
    cache_lock(c);
    int found = disk_fact(c, name, buf, size);
    cache_unlock(c);
    return found;
}

void kiln_cache_set_fact(kiln_cache *c, const char *name, const char *value) {
    cache_lock(c);
    disk_set_fact(c, name, value);
    cache_unlock(c);
}

int kiln_cache_facts(kiln_cache *c, const char *prefix,
                     void (*fn)(void *ud, const char *name, const char *value), void *ud) {
    cache_lock(c);
    int n = disk_facts(c, prefix, fn, ud);
    cache_unlock(c);
    return n;
}

int64_t kiln_cache_verify(kiln_cache *c, int64_t *bad) {
    cache_lock(c);
    int64_t n = disk_verify(c, bad);
    cache_unlock(c);
    return n;
}
