/* cache_int.h: what the files of the artifact cache share.  Not for other
 * layers: they use include/kiln.h (the contract) and docs/cache.md says what a
 * user sees.
 *
 * A cache is one kiln_cache with three tiers, looked through in order: memory
 * (this process), disk (one SQLite database) and remote (Redis).  Its files
 * call one way, each down to the files below it, never up:
 *
 *   bundle.c   bundles: export, import, their signatures, the hardened reader
 *   claim.c    single flight: claims on a key, their release, waits for another
 *              process's build
 *   cache.c    the handle: open, close, the lock and fork, lookups and stores
 *              through the tiers in order, the public calls on the disk tier
 *   disk.c     the SQLite tier: where kiln.db lives and its schema, rows read
 *              and written, write failures, eviction, stats, facts, verification
 *   mem.c      the memory tier: a bounded LRU of blobs
 *   key.c      keys and checksums (XXH3-128)
 *
 * remote.c (the Redis tier) and hmac.c (HMAC-SHA256) sit below them all
 * (remote.h).
 *
 * One mutex serialises every call: the public kiln_cache_* functions take it
 * (cache_lock), and every function declared here that takes a kiln_cache runs
 * with it held, except cache_lock itself.  So no file below cache.c locks.
 */
#ifndef KILN_CACHE_INT_H
#define KILN_CACHE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "cache/remote.h"
#include "compiler.h"

enum {
    /* the longest wait for another process's write lock on kiln.db (and for a
     * bundle's lock, when one is read) */
    DB_BUSY_MS = 1000,
    /* The furthest expiry a live claim can have: the longest lease, plus the
     * difference between the clocks of two hosts that share a cache directory.
     * A claim that expires further away is no live process's (claim.c), and
     * prune deletes it (disk.c). */
    STALE_MS = KILN_CACHE_LEASE_MS + KILN_CACHE_CLOCK_SKEW_MS,
    /* distinct entries whose disk hits a process keeps before writing them */
    HITS_PENDING_MAX = 256
};

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
    struct {
        kiln_cache_key key;
        int64_t n;
    } hits[HITS_PENDING_MAX];     /* disk hits not written yet (disk.c) */
    int nhits;
    kiln_cache_stats st;
};

static inline int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* for bounds on waits: not moved by changes to the time of day */
static inline int64_t mono_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static inline void warn(kiln_cache *c, const char *hint, const char *fmt, const char *a,
                        const char *b) {
    diag_plain(c->ctx, KILN_WARNING, hint, fmt, a, b);
}

/* ---- cache.c: the handle ---- */

/* Takes the lock; in a forked child, first opens the child's own tiers. */
void cache_lock(kiln_cache *c);
void cache_unlock(kiln_cache *c);
/* Looks through the tiers, filling the upper ones from a hit in a lower one:
 * the tier that had it (KILN_CACHE_MEMORY, _DISK, _REMOTE) with *blob
 * malloc'd (the caller frees it), 0 a miss.  Counts in the
 * stats when counted; a second look, after a claim, does not. */
int cache_lookup(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len, char kind[16],
                 bool counted);

/* ---- disk.c: the SQLite tier, c->db (NULL while the tier is off) ---- */

/* Opens kiln.db in the configured directory into c->db and c->path; leaves
 * c->db NULL after one warning when the directory or the file cannot be used. */
void disk_open(kiln_cache *c);
/* 1 a hit (*blob malloc'd, checked against its size and checksum), 0 a miss.
 * Needs c->db. */
int disk_get(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len, char kind[16]);
/* Writes one row (and ends any claim on it) in one transaction: SQLITE_OK, or
 * the error, after disk_write_failed has dealt with it.  Needs c->db. */
int disk_put(kiln_cache *c, const kiln_cache_key *k, const char *kind, const char *name,
             const char *target, const void *blob, size_t len, int64_t created, bool compiled,
             double compile_ms);
/* false while writes are paused: another process held the write lock past
 * DB_BUSY_MS */
bool disk_may_write(kiln_cache *c);
/* A write failed with rc: ends the transaction, turns the tier off or pauses
 * writes as the failure says, warns once.  Returns rc.  Needs c->db. */
int disk_write_failed(kiln_cache *c, int rc);
/* What the public calls on the disk tier do, cache.c having taken the lock:
 * kiln_cache_get_stats (the disk's fields), kiln_cache_list, kiln_cache_clear
 * (the disk's part: a tier turned off by a failure starts a new database),
 * kiln_cache_prune, kiln_cache_fact, kiln_cache_set_fact, kiln_cache_facts,
 * kiln_cache_verify.
 * Apart from clear, each does nothing, or finds nothing, while the tier is off. */
void disk_stats(kiln_cache *c, kiln_cache_stats *out);
int disk_list(kiln_cache *c, void (*fn)(void *ud, const kiln_cache_entry *e), void *ud);
int64_t disk_clear(kiln_cache *c);
int64_t disk_prune(kiln_cache *c, int64_t max_bytes);
int disk_fact(kiln_cache *c, const char *name, char *buf, size_t size);
void disk_set_fact(kiln_cache *c, const char *name, const char *value);
int disk_facts(kiln_cache *c, const char *prefix,
               void (*fn)(void *ud, const char *name, const char *value), void *ud);
int64_t disk_verify(kiln_cache *c, int64_t *bad);
/* Writes the hits counted since the last write, in a transaction of its own that
 * does not wait for another process's lock (they stay pending then). */
void disk_flush_hits(kiln_cache *c);

/* ---- mem.c: the memory tier ---- */

/* 1 a hit (*blob a malloc'd copy, the entry now the most recently used), 0 not
 * there, -1 there but no memory for the copy. */
int mem_get(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len, char kind[16]);
/* Keeps a copy of blob unless it is there already or larger than the tier,
 * evicting least recently used entries to make room. */
void mem_put(kiln_cache *c, const kiln_cache_key *k, const char *kind, const void *blob,
             size_t len);
void mem_clear(kiln_cache *c); /* every entry out */
void mem_free(kiln_cache *c);  /* the tier's memory, when the cache closes */

/* ---- key.c ---- */

/* The checksum kiln.db and bundles store beside a blob: XXH3-128 of the key, the
 * kind (with its NUL) and the blob, so a blob filed under another kernel's key, or
 * as another kind of artifact, fails its check as a damaged one does. */
void key_checksum(const kiln_cache_key *k, const char *kind, const void *blob, size_t len,
                  uint8_t out[16]);
/* The checksum of rows written before the key and kind were in it (the blob alone):
 * such a row is stale, dropped without a warning, never run. */
void key_checksum_blob_only(const void *blob, size_t len, uint8_t out[16]);
int key_hexval(char ch); /* a hex digit's value, or -1 */

#endif
