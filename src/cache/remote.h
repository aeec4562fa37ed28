/* remote.h: the Redis tier of the artifact cache, and HMAC-SHA256 (hmac.c);
 * called by the cache's files (cache_int.h) alone.
 *
 * Values are self-describing records: a magic, an HMAC-SHA256 (zeros when no
 * key is set), an XXH3-128 checksum of the blob, the metadata and the blob.
 * The HMAC covers the cache key and everything after it, so a record cannot
 * be replayed under another key.  Every failure of the server (refused,
 * timed out, an error reply) turns the tier off for the rest of the process
 * after one warning; records that fail the checks are misses, counted.  The
 * timeout is a deadline for a whole command (sending it and reading all of
 * its reply), so a server that answers a byte at a time cannot stretch it.
 */
#ifndef KILN_CACHE_REMOTE_H
#define KILN_CACHE_REMOTE_H

#include <stdbool.h>

#include "kiln.h"

typedef struct Remote Remote;

/* The most bytes of one reply kept while it arrives: a record holds one cached object
 * (at most 256 MiB, as a bundle's entries) and its metadata. */
enum { REMOTE_MAX_REPLY_BYTES = (256 << 20) + (64 << 10) };
/* The most elements of an aggregate in a reply (kiln's commands get a few). */
enum { REMOTE_MAX_REPLY_ELEMENTS = 64 };

typedef struct RemoteRecord {
    char kind[16], name[128], target[64];
    void *blob; /* malloc'd */
    size_t len;
} RemoteRecord;

/* Connects to url (redis://[:password@]host[:port][/db]); NULL after one
 * warning through ctx when it cannot.  hmac_key may be NULL. */
Remote *remote_open(kiln_ctx *ctx, const char *url, const char *hmac_key, int timeout_ms,
                    const char *owner);
void remote_close(Remote *r);
/* false once a failure has turned the tier off */
bool remote_ok(const Remote *r);
/* The tier's address with any password shown as "***". */
const char *remote_url(const Remote *r);

/* 1 hit (rec filled), 0 miss, -1 the tier failed (now off).  *rejected is set
 * when a record was there but failed authentication or its checks. */
int remote_get(Remote *r, const kiln_cache_key *k, RemoteRecord *rec, bool *rejected);
int remote_put(Remote *r, const kiln_cache_key *k, const char *kind, const char *name,
               const char *target, const void *blob, size_t len);
/* SET NX with expiry: 1 claimed (or the tier is off), 0 another holds it.  A
 * claim that never expires, or expires more than stale_ms from now, cannot be
 * a live process's: it is taken over (1) and *stale is set. */
int remote_claim(Remote *r, const kiln_cache_key *k, int lease_ms, int stale_ms, bool *stale);
/* Whether another process holds a live claim (unexpired, and not stale as
 * above). */
bool remote_claimed_by_other(Remote *r, const kiln_cache_key *k, int stale_ms);
void remote_release(Remote *r, const kiln_cache_key *k);

/* HMAC-SHA256 through libcrypto, loaded with dlopen when a key is set (no
 * build dependency; OpenSSL 1.1 and 3 export the same functions). */
typedef struct Hmac {
    const void *(*sha256)(void);
    unsigned char *(*hmac)(const void *md, const void *key, int keylen, const unsigned char *d,
                           size_t n, unsigned char *out, unsigned int *outlen);
    void *(*md_new)(void);
    void (*md_free)(void *ctx);
    int (*init)(void *ctx, const void *md, void *engine);
    int (*update)(void *ctx, const void *d, size_t n);
    int (*final)(void *ctx, unsigned char *out, unsigned int *n);
} Hmac;
bool hmac_load(Hmac *h);
int hmac_sha256(const Hmac *h, const void *key, size_t keylen, const void *msg, size_t len,
                uint8_t out[32]);

/* The same MAC over a message given in pieces (bundles).  hmac_begin and
 * hmac_end return 0, or -1 when libcrypto failed; hmac_end frees what
 * hmac_begin took, whatever happened between. */
typedef struct HmacStream {
    const Hmac *h;
    void *md;
    uint8_t opad[64];
    bool ok;
} HmacStream;
int hmac_begin(HmacStream *s, const Hmac *h, const void *key, size_t keylen);
void hmac_update(HmacStream *s, const void *p, size_t n);
int hmac_end(HmacStream *s, uint8_t out[32]);

#endif
