/* claim.c: single flight, one compile of a key at a time across processes.
 *
 * A process that misses claims the key: on disk, a row in `pending` with a
 * lease, written in an immediate transaction (an upsert that takes over only
 * an expired, dead or stale claim); in Redis, SET NX with an expiry.  The
 * claim looks again, since another process may have stored the key between
 * the miss and the claim; then the caller compiles and stores the artifact,
 * which ends the claim (disk_put deletes the row in the same transaction).
 * The others wait, polling for the artifact, and compile themselves only if
 * the lease runs out or is released without a result.
 *
 * Every wait has a bound: a lease is at most KILN_CACHE_LEASE_MS, a claim
 * that says it lasts longer is stale (taken over, one warning), a claim of a
 * process of this host that has ended is void at once, and a waiter gives up
 * after at most one lease and compiles itself.  A wait polls the context's interrupt
 * with no lock held, so Ctrl-C ends it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

enum {
    LEASE_POLL_MS = 20,  /* a waiter looks for the artifact this often */
    CLAIM_BUSY_TRIES = 5 /* a claim waits at most this many DB_BUSY_MS for the write lock */
};

/* Whether a claim's owner (host:pid:nonce) is a process of this host that
 * has ended: its claim is void even before its lease runs out. */
static bool owner_gone(kiln_cache *c, const char *owner) {
    size_t hl = strlen(c->host);
    if (strncmp(owner, c->host, hl) != 0 || owner[hl] != ':') return false;
    long pid = strtol(owner + hl + 1, NULL, 10);
    if (pid <= 0) return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

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
    if (!c->db || !disk_may_write(c) || !holds_claim(c, k)) return;
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(c->db, "DELETE FROM pending WHERE key = ?1 AND owner = ?2", -1,
                                &s, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_blob(s, 1, k->b, 16, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, c->owner, -1, SQLITE_STATIC);
        rc = sqlite3_step(s);
        sqlite3_finalize(s);
    }
    if (rc != SQLITE_DONE) disk_write_failed(c, rc);
}

/* Opens the claim's write transaction.  Under contention (many processes
 * starting at once on a loaded host) the write lock may stay taken past one
 * DB_BUSY_MS: if another process's claim on k shows up meanwhile (a read,
 * which never waits), this one waits for that process (*claimed = 0);
 * otherwise it tries again, at most CLAIM_BUSY_TRIES times in all, before
 * the caller builds without a claim and writes pause (disk.c). */
static int begin_claim(kiln_cache *c, const kiln_cache_key *k, int *claimed) {
    int rc = SQLITE_BUSY;
    for (int i = 0; i < CLAIM_BUSY_TRIES; i++) {
        rc = sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) return rc;
        bool stale = false;
        if (disk_claimed_by_other(c, k, &stale)) {
            *claimed = 0;
            return SQLITE_OK;
        }
    }
    return rc;
}

int kiln_cache_claim(kiln_cache *c, const kiln_cache_key *k, int lease_ms, void **blob,
                     size_t *len, char kind[16]) {
    char kbuf[16];
    if (lease_ms <= 0 || lease_ms > KILN_CACHE_LEASE_MS) lease_ms = KILN_CACHE_LEASE_MS;
    cache_lock(c);
    int claimed = 1;
    bool stale = false;
    if (c->db && !disk_may_write(c)) {
        /* no claim of ours can be written now; another's live one is still waited for */
        if (disk_claimed_by_other(c, k, &stale)) claimed = 0;
    } else if (c->db) {
        int rc = begin_claim(c, k, &claimed);
        if (rc == SQLITE_OK && claimed) {
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
        if (rc != SQLITE_OK) disk_write_failed(c, rc); /* building without a disk claim */
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
    if (claimed && cache_lookup(c, k, blob, len, kind ? kind : kbuf, false)) {
        cache_unlock(c);
        kiln_cache_release(c, k);
        return 2;
    }
    cache_unlock(c);
    return claimed;
}

void kiln_cache_release(kiln_cache *c, const kiln_cache_key *k) {
    cache_lock(c);
    release_disk(c, k);
    if (remote_ok(c->remote)) remote_release(c->remote, k);
    cache_unlock(c);
}

int kiln_cache_wait(kiln_cache *c, const kiln_cache_key *k, kiln_ctx *ctx, int max_ms,
                    void **blob, size_t *len, char kind[16]) {
    if (max_ms <= 0 || max_ms > KILN_CACHE_LEASE_MS) max_ms = KILN_CACHE_LEASE_MS;
    int64_t deadline = mono_ms() + max_ms;
    cache_lock(c);
    c->st.waits++;
    cache_unlock(c);
    for (;;) {
        if (kiln_cache_get(c, k, blob, len, kind)) return 1;
        cache_lock(c);
        bool stale = false;
        bool busy = (c->db && disk_claimed_by_other(c, k, &stale)) ||
                    (remote_ok(c->remote) && remote_claimed_by_other(c->remote, k, STALE_MS));
        cache_unlock(c);
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
