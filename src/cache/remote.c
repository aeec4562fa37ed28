/* remote.c: the Redis tier (see remote.h), through hiredis.
 *
 * A record, as stored under "kiln:a:<32 hex digits>":
 *
 *     0   "KILNREC2"
 *     8   HMAC-SHA256 of the body under KILN_REMOTE_KEY (zeros without a key)
 *     40  body: the cache key (16), the checksum of the key, kind and blob
 *         (key.c's key_checksum, 16), the metadata
 *         length (u32 LE), the blob length (u64 LE), the metadata
 *         ("kind\0name\0target\0") and the blob
 *
 * Claims for single flight are "kiln:c:<hex>" set with NX and PX to the
 * owner's name; a claim without an expiry, or with one further away than the
 * longest lease, is stale and taken over (a script does the check and the
 * take-over at once).  Each command has a deadline, not a timeout per read:
 * it is sent and its reply read with the remaining time before each write
 * (SO_SNDTIMEO) and each read (poll), so a server that answers one byte at a
 * time still ends by the deadline.  A record of the first format ("KILNREC1",
 * whose checksum covered the blob alone) is a miss, and is written over.  Any failure turns the tier off for the
 * process after one warning (the local tiers carry on).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "cache/cache_int.h"
#include "cache/remote.h"
#include "compiler.h"
#include "util/sigpipe.h"

enum { HEAD = 40, BODY_FIXED = 16 + 16 + 4 + 8 };

static const char magic[8] = {'K', 'I', 'L', 'N', 'R', 'E', 'C', '2'};
static const char magic_v1[8] = {'K', 'I', 'L', 'N', 'R', 'E', 'C', '1'};

/* hiredis 1.x counts an aggregate's elements in a size_t, 0.14 in an int */
#if defined(HIREDIS_MAJOR) && HIREDIS_MAJOR >= 1
typedef size_t ReplyCount;
#else
typedef int ReplyCount;
#endif

struct Remote {
    kiln_ctx *ctx;
    redisContext *rc;
    redisReplyObjectFunctions fns; /* hiredis' own, but for capped_array */
    void *(*create_array)(const redisReadTask *, ReplyCount);
    long long refused_elements;    /* an aggregate capped_array refused, or 0 */
    char *url;
    char *key; /* HMAC key or NULL */
    size_t keylen;
    Hmac hmac;
    char owner[96];
    int timeout_ms; /* the deadline of each command, from its start */
    bool ok;
};

/* ---- the connection -------------------------------------------------------------- */

static void fail(Remote *r, const char *what) {
    if (!r->ok) return;
    r->ok = false;
    diag_plain(r->ctx, KILN_WARNING, "check KILN_REMOTE_CACHE, or unset it",
               "kiln's remote cache %s failed (%s); using the local cache only", r->url, what);
}

static void key_name(char *out, size_t size, const char *space, const kiln_cache_key *k) {
    char hex[33];
    kiln_cache_key_hex(k, hex);
    snprintf(out, size, "kiln:%s:%s", space, hex);
}

static void timed_out(Remote *r) {
    char why[96];
    snprintf(why, sizeof why, "timed out: no complete reply within %d ms", r->timeout_ms);
    fail(r, why);
}

/* hiredis writes with write(2): a server that has gone raises SIGPIPE (sigpipe.h). */
static int write_no_sigpipe(redisContext *rc, int *done) {
    SigpipeHold hold;
    sigpipe_hold(&hold);
    int status = redisBufferWrite(rc, done);
    sigpipe_release(&hold);
    return status;
}

/* hiredis makes an aggregate's array of element pointers as soon as its count is read:
 * a hostile "*2147483647" would take 16 GiB (and seconds to free at exit).  kiln's
 * commands get a few elements at most, so a larger count fails the reply at once. */
static void *capped_array(const redisReadTask *t, ReplyCount n) {
    Remote *r = t->privdata;
    if ((long long)n > REMOTE_MAX_REPLY_ELEMENTS) {
        r->refused_elements = (long long)n;
        return NULL; /* hiredis: an error of the reader, the reply abandoned */
    }
    return r->create_array(t, n);
}

/* Sends what hiredis has buffered and reads one reply, all by the deadline. */
static redisReply *round_trip(Remote *r, int64_t deadline) {
    redisContext *rc = r->rc;
    int done = 0;
    while (!done) {
        int64_t left = deadline - mono_ms();
        if (left <= 0) goto timeout;
        /* a blocking write of a large record returns after the remaining time */
        struct timeval tv = {(time_t)(left / 1000), (suseconds_t)(left % 1000) * 1000};
        setsockopt(rc->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (write_no_sigpipe(rc, &done) != REDIS_OK) goto failed;
    }
    for (;;) {
        void *reply = NULL;
        if (redisGetReplyFromReader(rc, &reply) != REDIS_OK) goto failed;
        if (reply) return reply;
        int64_t left = deadline - mono_ms();
        if (left <= 0) goto timeout;
        struct pollfd p = {rc->fd, POLLIN, 0};
        int n = poll(&p, 1, (int)left);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) goto timeout;
        if (n < 0) {
            fail(r, strerror(errno));
            return NULL;
        }
        if (redisBufferRead(rc) != REDIS_OK) goto failed; /* reads what is there: no wait */
        if (rc->reader && rc->reader->len - rc->reader->pos > REMOTE_MAX_REPLY_BYTES) {
            /* a record is at most a cached object and its metadata: a reply announcing
             * more would be buffered until the deadline (gigabytes from a hostile server) */
            char why[96];
            snprintf(why, sizeof why, "a reply of more than %d MiB, more than any record",
                     REMOTE_MAX_REPLY_BYTES >> 20);
            fail(r, why);
            return NULL;
        }
    }
timeout:
    timed_out(r);
    return NULL;
failed:
    if (r->refused_elements) {
        char why[128];
        snprintf(why, sizeof why, "a reply announcing %lld elements, more than any command of "
                 "kiln's gets (%d)", r->refused_elements, REMOTE_MAX_REPLY_ELEMENTS);
        fail(r, why);
    } else if (mono_ms() >= deadline) {
        timed_out(r);
    } else {
        fail(r, rc->err ? rc->errstr : "no reply");
    }
    return NULL;
}

/* Why the connection cannot carry a command, or NULL: between commands nothing may
 * be waiting to be read.  Bytes there answer no command (a server out of step, or
 * hostile: they would be taken for the next command's reply), and an end of the
 * connection means the server has gone (a write to it would only fail later). */
static const char *unasked(redisContext *rc) {
    redisReader *rd = rc->reader;
    if (rd && rd->pos < rd->len) return "the server sent bytes no command asked for";
    struct pollfd p = {rc->fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return NULL;
    char byte;
    ssize_t n = recv(rc->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return "the server sent bytes no command asked for";
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        return "the server closed the connection";
    return NULL;
}

/* Runs a command; NULL after turning the tier off. */
static redisReply *command(Remote *r, const char *fmt, ...) {
    if (!r->ok) return NULL;
    int64_t deadline = mono_ms() + r->timeout_ms;
    const char *broken = unasked(r->rc);
    if (broken) {
        fail(r, broken);
        return NULL;
    }
    va_list ap;
    va_start(ap, fmt);
    int rc = redisvAppendCommand(r->rc, fmt, ap);
    va_end(ap);
    if (rc != REDIS_OK) {
        fail(r, r->rc->err ? r->rc->errstr : "out of memory");
        return NULL;
    }
    redisReply *rep = round_trip(r, deadline);
    if (!rep) return NULL;
    if (rep->type == REDIS_REPLY_ERROR) {
        char why[160];
        snprintf(why, sizeof why, "%.150s", rep->str ? rep->str : "error reply");
        freeReplyObject(rep);
        fail(r, why);
        return NULL;
    }
    return rep;
}

/* Parses redis://[:password@]host[:port][/db]. */
static bool parse_url(const char *url, char *host, size_t hostsize, int *port, char *pass,
                      size_t passsize, int *db) {
    const char *p = url;
    if (strncmp(p, "redis://", 8) != 0) return false;
    p += 8;
    *pass = 0;
    const char *at = strchr(p, '@');
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        const char *pw = colon ? colon + 1 : p;
        size_t n = (size_t)(at - pw);
        if (n >= passsize) return false;
        memcpy(pass, pw, n);
        pass[n] = 0;
        p = at + 1;
    }
    size_t n = strcspn(p, ":/");
    if (n == 0 || n >= hostsize) return false;
    memcpy(host, p, n);
    host[n] = 0;
    p += n;
    *port = 6379;
    *db = 0;
    if (*p == ':') {
        char *end;
        long v = strtol(p + 1, &end, 10);
        if (end == p + 1 || v <= 0 || v > 65535) return false;
        *port = (int)v;
        p = end;
    }
    if (*p == '/') {
        if (p[1]) {
            char *end;
            long v = strtol(p + 1, &end, 10);
            if (end == p + 1 || *end || v < 0 || v > 1 << 20) return false;
            *db = (int)v;
        }
        p += strlen(p);
    }
    return *p == 0;
}

/* The address as messages show it: a password (anything between "//" and the
 * last "@") becomes "***".  Malloc'd, or NULL. */
static char *redact_url(const char *url) {
    const char *s = strstr(url, "//"), *at = strrchr(url, '@');
    if (!s || !at || at < s) return strdup(url);
    size_t pre = (size_t)(s + 2 - url), n = pre + 3 + strlen(at) + 1;
    char *r = malloc(n);
    if (r) snprintf(r, n, "%.*s***%s", (int)pre, url, at);
    return r;
}

Remote *remote_open(kiln_ctx *ctx, const char *url, const char *hmac_key, int timeout_ms,
                    const char *owner) {
    char host[256], pass[256];
    int port, db;
    if (!parse_url(url, host, sizeof host, &port, pass, sizeof pass, &db)) {
        char *shown = redact_url(url);
        diag_plain(ctx, KILN_WARNING, "write it as redis://host:port/db",
                   "KILN_REMOTE_CACHE=%s is not a redis:// address; using the local cache only",
                   shown ? shown : "(its value)");
        free(shown);
        return NULL;
    }
    Hmac h;
    if (hmac_key && *hmac_key) {
        if (!hmac_load(&h)) {
            diag_plain(ctx, KILN_WARNING, "install OpenSSL's libcrypto, or unset KILN_REMOTE_KEY",
                       "KILN_REMOTE_KEY is set but libcrypto (for HMAC-SHA256) cannot be "
                       "loaded%s; using the local cache only", "");
            return NULL;
        }
    }
    Remote *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->ctx = ctx;
    r->url = redact_url(url); /* for messages and kiln_cache_remote: never the password */
    if (!r->url) {
        free(r);
        return NULL;
    }
    r->ok = true;
    snprintf(r->owner, sizeof r->owner, "%s", owner);
    r->timeout_ms = timeout_ms;
    if (hmac_key && *hmac_key) {
        r->key = strdup(hmac_key);
        r->keylen = strlen(hmac_key);
        r->hmac = h;
    }
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    r->rc = redisConnectWithTimeout(host, port, tv);
    if (!r->rc || r->rc->err) {
        fail(r, r->rc ? r->rc->errstr : "out of memory");
        remote_close(r);
        return NULL;
    }
    redisSetTimeout(r->rc, tv);
    if (r->rc->reader && r->rc->reader->fn) { /* aggregates' counts capped (capped_array) */
        r->fns = *r->rc->reader->fn;
        r->create_array = r->fns.createArray;
        r->fns.createArray = capped_array;
        r->rc->reader->fn = &r->fns;
        r->rc->reader->privdata = r;
    }
    redisReply *rep;
    if (*pass && !(rep = command(r, "AUTH %s", pass))) goto failed;
    if (*pass) freeReplyObject(rep);
    if (db && !(rep = command(r, "SELECT %d", db))) goto failed;
    if (db) freeReplyObject(rep);
    return r;
failed:
    remote_close(r);
    return NULL;
}

void remote_close(Remote *r) {
    if (!r) return;
    if (r->rc) redisFree(r->rc);
    free(r->url);
    free(r->key);
    free(r);
}

bool remote_ok(const Remote *r) { return r && r->ok; }

const char *remote_url(const Remote *r) { return r ? r->url : NULL; }

/* ---- records ---------------------------------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static bool sign(Remote *r, const uint8_t *body, size_t n, uint8_t out[32]) {
    if (!r->key) {
        memset(out, 0, 32);
        return true;
    }
    return hmac_sha256(&r->hmac, r->key, r->keylen, body, n, out) == 0;
}

/* Constant-time comparison, for the MAC. */
static bool same(const uint8_t *a, const uint8_t *b, size_t n) {
    uint8_t d = 0;
    for (size_t i = 0; i < n; i++) d |= (uint8_t)(a[i] ^ b[i]);
    return d == 0;
}

static bool copy_field(char *dst, size_t size, const char **p, const char *end) {
    const char *z = memchr(*p, 0, (size_t)(end - *p));
    if (!z || (size_t)(z - *p) >= size) return false;
    memcpy(dst, *p, (size_t)(z - *p) + 1);
    *p = z + 1;
    return true;
}

/* Checks a record read for key k; fills rec. */
static bool parse_record(Remote *r, const kiln_cache_key *k, const uint8_t *v, size_t n,
                         RemoteRecord *rec) {
    if (n < HEAD + BODY_FIXED || memcmp(v, magic, 8) != 0) return false;
    const uint8_t *body = v + HEAD;
    uint8_t mac[32];
    if (!sign(r, body, n - HEAD, mac) || !same(mac, v + 8, 32)) return false;
    if (memcmp(body, k->b, 16) != 0) return false;
    uint64_t metalen = get_le(body + 32, 4), bloblen = get_le(body + 36, 8);
    size_t rest = n - HEAD - BODY_FIXED;
    if (metalen > rest || bloblen != rest - metalen) return false;
    const char *meta = (const char *)body + BODY_FIXED, *mend = meta + metalen;
    if (!copy_field(rec->kind, sizeof rec->kind, &meta, mend) ||
        !copy_field(rec->name, sizeof rec->name, &meta, mend) ||
        !copy_field(rec->target, sizeof rec->target, &meta, mend))
        return false;
    const uint8_t *blob = body + BODY_FIXED + metalen;
    uint8_t sum[16];
    key_checksum(k, rec->kind, blob, bloblen, sum);
    if (memcmp(sum, body + 16, 16) != 0) return false;
    rec->blob = malloc(bloblen ? bloblen : 1);
    if (!rec->blob) return false;
    memcpy(rec->blob, blob, bloblen);
    rec->len = bloblen;
    return true;
}

int remote_get(Remote *r, const kiln_cache_key *k, RemoteRecord *rec, bool *rejected) {
    *rejected = false;
    char name[64];
    key_name(name, sizeof name, "a", k);
    redisReply *rep = command(r, "GET %s", name);
    if (!rep) return -1;
    int hit = 0;
    if (rep->type == REDIS_REPLY_STRING) {
        if (parse_record(r, k, (const uint8_t *)rep->str, (size_t)rep->len, rec))
            hit = 1;
        else if (!(rep->len >= 8 && memcmp(rep->str, magic_v1, 8) == 0)) /* v1: a miss */
            *rejected = true;
    } else if (rep->type != REDIS_REPLY_NIL) {
        *rejected = true;
    }
    freeReplyObject(rep);
    return hit;
}

int remote_put(Remote *r, const kiln_cache_key *k, const char *kind, const char *name,
               const char *target, const void *blob, size_t len) {
    if (!r->ok) return -1;
    /* the fields as a reader's RemoteRecord holds them, cut to fit */
    RemoteRecord fit;
    size_t lk = strnlen(kind, sizeof fit.kind - 1), ln = strnlen(name, sizeof fit.name - 1),
           lt = strnlen(target, sizeof fit.target - 1);
    size_t metalen = lk + ln + lt + 3, n = HEAD + BODY_FIXED + metalen + len;
    uint8_t *v = malloc(n);
    if (!v) return -1;
    uint8_t *body = v + HEAD;
    memcpy(v, magic, 8);
    memcpy(body, k->b, 16);
    put_le(body + 32, metalen, 4);
    put_le(body + 36, len, 8);
    char *meta = (char *)body + BODY_FIXED;
    memcpy(meta, kind, lk);
    meta[lk] = 0;
    memcpy(meta + lk + 1, name, ln);
    meta[lk + 1 + ln] = 0;
    memcpy(meta + lk + ln + 2, target, lt);
    meta[lk + ln + 2 + lt] = 0;
    memcpy(body + BODY_FIXED + metalen, blob, len);
    key_checksum(k, meta, blob, len, body + 16); /* meta starts with the kind as stored */
    int rc = -1;
    if (sign(r, body, n - HEAD, v + 8)) {
        char key[64];
        key_name(key, sizeof key, "a", k);
        redisReply *rep = command(r, "SET %s %b", key, (const char *)v, n);
        if (rep) {
            rc = 0;
            freeReplyObject(rep);
        }
    }
    free(v);
    return rc;
}

/* Takes over a claim that is stale: no expiry (PTTL -1), or an expiry further
 * away than ARGV[2] ms, which no live claimant can have asked for.  1 taken
 * over, 0 a live claim stands, -1 there is none (any more). */
static const char take_stale[] =
    "local t = redis.call('pttl', KEYS[1]) "
    "if t == -2 then return -1 end "
    "if t == -1 or t > tonumber(ARGV[2]) then "
    "redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[3]) return 1 end "
    "return 0";

int remote_claim(Remote *r, const kiln_cache_key *k, int lease_ms, int stale_ms, bool *stale) {
    *stale = false;
    char name[64];
    key_name(name, sizeof name, "c", k);
    for (int tries = 0; tries < 2; tries++) { /* the other claim may lapse between the two */
        redisReply *rep = command(r, "SET %s %s NX PX %d", name, r->owner, lease_ms);
        if (!rep) return 1;
        int claimed = rep->type == REDIS_REPLY_STATUS;
        freeReplyObject(rep);
        if (claimed) return 1;
        rep = command(r, "EVAL %s 1 %s %s %d %d", take_stale, name, r->owner, stale_ms, lease_ms);
        if (!rep) return 1;
        long long v = rep->type == REDIS_REPLY_INTEGER ? rep->integer : 0;
        freeReplyObject(rep);
        if (v == 1) {
            *stale = true;
            return 1;
        }
        if (v == 0) return 0;
    }
    return 0;
}

/* 1 another process holds a live claim, 0 none or ours, 2 a stale one */
static const char claim_state[] =
    "local v = redis.call('get', KEYS[1]) "
    "if not v or v == ARGV[1] then return 0 end "
    "local t = redis.call('pttl', KEYS[1]) "
    "if t == -1 or t > tonumber(ARGV[2]) then return 2 end "
    "return 1";

bool remote_claimed_by_other(Remote *r, const kiln_cache_key *k, int stale_ms) {
    char name[64];
    key_name(name, sizeof name, "c", k);
    redisReply *rep = command(r, "EVAL %s 1 %s %s %d", claim_state, name, r->owner, stale_ms);
    if (!rep) return false;
    bool other = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
    freeReplyObject(rep);
    return other;
}

void remote_release(Remote *r, const kiln_cache_key *k) {
    char name[64];
    key_name(name, sizeof name, "c", k);
    redisReply *rep = command(r,
                              "EVAL %s 1 %s %s",
                              "if redis.call('get', KEYS[1]) == ARGV[1] then "
                              "return redis.call('del', KEYS[1]) else return 0 end",
                              name, r->owner);
    if (rep) freeReplyObject(rep);
}
