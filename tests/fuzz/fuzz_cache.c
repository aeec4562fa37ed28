/* fuzz_cache.c: libFuzzer target over what the cache reads back from its
 * tiers: the rows of kiln.db (another process, a bad disk or an attacker
 * with the user's rights may have written them), the database file itself,
 * and the Redis tier's replies (any server on the network can answer).
 *
 * An input is
 *
 *     byte 0   mode = bits 0-1 (3 is 0), and bits 2-4 choose extra operations:
 *              2 verify, 3 export a bundle and import it into a new cache,
 *              4 prune to a small size
 *       mode 0 rows: kiln.db gets rows this target writes with SQLite, in
 *              `artifacts`, `pending`, `counters` and `facts`, each value of
 *              the right type and content most of the time (checksums computed
 *              here) and of any type otherwise; then a cache opens it and gets,
 *              lists, counts, claims, stores, reads facts
 *       mode 1 the rest is kiln.db itself (SQLite's format, and the disk tier's
 *              handling of a database that is corrupt or fails in use)
 *       mode 2 the rest describes a Redis server's replies: a flags byte (bit 0
 *              make the first reply a well-formed record around the bytes that
 *              follow: magic, key, checksum and MAC fixed here; bit 1 with an
 *              HMAC key; bit 2 with a consistent blob length), then up to five
 *              replies, each a little-endian 16-bit length and its bytes, sent
 *              in turn by a server on 127.0.0.1 to the cache's commands (GET,
 *              SET NX, SET, EVAL); a reply that is not one complete RESP value
 *              is the server's last
 *
 * Checks beyond the sanitizers: a cache never returns bytes other than those
 * stored under the key (rows written right must come back as written), and
 * every diagnostic carries its text.  kiln_cache_wait is not called: a claim
 * that never ends makes it wait forever (a known bug of issue 9).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "fuzz_util.h"
#ifdef KILN_FUZZ_REDIS
#include <dlfcn.h>
#include <hiredis/hiredis.h>
#endif

static char dbdir[300], dbpath[400];

static void diag_check(void *ud, const kiln_diag *d) { fz_diag(ud, d); }

static kiln_cache *open_cache(kiln_ctx *ctx, const char *dir, const char *remote,
                              const char *key) {
    kiln_cache_config cfg = {.dir = dir, .max_bytes = 1 << 20, .memory_bytes = 1 << 20,
                             .remote = remote, .remote_key = key, .remote_timeout_ms = 500};
    kiln_cache *c = kiln_cache_open(ctx, &cfg);
    if (!c) abort();
    return c;
}

/* ---- the operations every mode runs ---------------------------------------------------- */

static void list_one(void *ud, const kiln_cache_entry *e) {
    (void)ud;
    if (e->kind) (void)strlen(e->kind);
    if (e->name) (void)strlen(e->name);
    if (e->target) (void)strlen(e->target);
}

static void exercise(kiln_cache *c, kiln_ctx *ctx, Diags *D, uint8_t ops, const uint8_t keys[][16],
                     int nkeys) {
    kiln_cache_key k;
    for (int i = 0; i <= nkeys; i++) {
        if (i < nkeys) memcpy(k.b, keys[i], 16);
        else memset(k.b, 0xee, 16);
        void *blob = NULL;
        size_t len = 0;
        char kind[16];
        if (kiln_cache_get(c, &k, &blob, &len, kind) == 1) {
            if (memchr(kind, 0, sizeof kind) == NULL) abort(); /* a C string */
            free(blob);
        }
    }
    kiln_cache_list(c, list_one, NULL);
    kiln_cache_stats st;
    kiln_cache_get_stats(c, &st);
    char buf[1100];
    if (kiln_cache_fact(c, KILN_NVRTC_IMPORTED_FACTS, buf, sizeof buf)) {
        char target[512];
        kiln_options o = {.target = KILN_TARGET_CUDA};
        if (kiln_nvrtc_target_from(buf, 0, &o, 90, 0, target, sizeof target) == 0)
            (void)strlen(target);
    }
    if (nkeys) {
        memcpy(k.b, keys[0], 16);
        void *blob = NULL;
        size_t len = 0;
        int claimed = kiln_cache_claim(c, &k, 2000, &blob, &len, NULL);
        if (claimed == 1)
            kiln_cache_put(c, &k, "so", "fuzz", "cpu:x86_64", "built", 5, 1.0);
        else if (claimed == 2)
            free(blob);
        else
            kiln_cache_release(c, &k);
    }
    if (ops & 4) {
        int64_t bad;
        kiln_cache_verify(c, &bad);
    }
    if (ops & 8) {
        char bundle[400];
        snprintf(bundle, sizeof bundle, "%s/export.db", fz_scratch());
        *D = (Diags){0, 0};
        int64_t n = kiln_cache_export(c, bundle, NULL, 0);
        if (n < 0 && D->errors == 0) {
            fprintf(stderr, "fuzz_cache: kiln_cache_export failed without an error\n");
            abort();
        }
        if (n >= 0) {
            Diags d2 = {0, 0};
            kiln_ctx *ctx2 = kiln_ctx_new();
            kiln_ctx_set_diag(ctx2, diag_check, &d2);
            kiln_cache *c2 = open_cache(ctx2, "", "", "");
            int64_t m = kiln_cache_import(c2, bundle);
            if (m < 0 && d2.errors == 0) abort();
            kiln_cache_close(c2);
            kiln_ctx_free(ctx2);
            unlink(bundle);
        }
    }
    if (ops & 16) kiln_cache_prune(c, 4096);
    (void)ctx;
}

/* ---- mode 0: rows ---------------------------------------------------------------------- */

enum { MAX_ROWS = 6 };

static const char *const kinds[] = {"so", "cubin", "ptx"};
static const char good_facts[] = "1 4096 1700000000 0 1234 12040 4 75 80 89 90 /usr/lib/libnvrtc.so";

typedef struct Written {
    uint8_t key[16];
    const uint8_t *blob;
    size_t len;
    bool right;
} Written;

static int write_rows(Reader *r, Written *w) {
    sqlite3 *db;
    if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) abort();
    sqlite3_busy_timeout(db, 2000);
    sqlite3_exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
    sqlite3_exec(db, "BEGIN IMMEDIATE; DELETE FROM artifacts; DELETE FROM pending;"
                     "DELETE FROM counters; DELETE FROM facts;", NULL, NULL, NULL);
    sqlite3_stmt *s;
    int n = rd_u8(r) % (MAX_ROWS + 1);
    int64_t now = 1700000000000;
    for (int i = 0; i < n; i++) {
        Written *x = &w[i];
        rd_key(r, x->key);
        uint8_t kc = rd_u8(r);
        const uint8_t *kb, *nb;
        size_t kn = rd_bytes(r, 24, &kb), nn = rd_bytes(r, 200, &nb);
        x->len = rd_bytes(r, 1024, &x->blob);
        uint8_t sum[16];
        if (kc % 4 < 3)
            fz_checksum(x->key, kinds[kc % 4], strlen(kinds[kc % 4]), x->blob, x->len, sum);
        else
            fz_checksum(x->key, kb, kn, x->blob, x->len, sum);
        int64_t age = (int64_t)rd_u8(r) * 1000000;
        const Reader mark = *r;
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO artifacts(key, kind, name, target, size, "
                               "checksum, created, last_used, blob) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)",
                           -1, &s, NULL);
        bind_fuzz(s, 1, r, v_blob(x->key, 16));
        bind_fuzz(s, 2, r, kc % 4 < 3 ? v_text(kinds[kc % 4]) : v_textn(kb, kn));
        bind_fuzz(s, 3, r, v_textn(nb, nn));
        bind_fuzz(s, 4, r, v_text("cpu:x86_64"));
        bind_fuzz(s, 5, r, v_int((int64_t)x->len));
        bind_fuzz(s, 6, r, v_blob(sum, 16));
        bind_fuzz(s, 7, r, v_int(now));
        bind_fuzz(s, 8, r, v_int(now - age));
        bind_fuzz(s, 9, r, v_blob(x->blob, x->len));
        Reader again = mark;
        /* SQLite reads an empty blob back as NULL, which kiln takes for a broken row */
        x->right = kc % 4 < 3 && x->len > 0;
        for (int col = 0; col < 9; col++)
            if ((rd_u8(&again) & 7) >= 5) x->right = false;
        if (sqlite3_step(s) != SQLITE_DONE) x->right = false;
        sqlite3_finalize(s);
    }
    /* a later row of the same key replaced an earlier one */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (!memcmp(w[i].key, w[j].key, 16)) w[i].right = false;
    int np = rd_u8(r) % 3;
    for (int i = 0; i < np; i++) {
        uint8_t key[16];
        rd_key(r, key);
        const uint8_t *ob;
        size_t on = rd_bytes(r, 200, &ob);
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO pending(key, owner, expires) VALUES(?1,?2,?3)",
                           -1, &s, NULL);
        bind_fuzz(s, 1, r, v_blob(i == 0 && n ? w[0].key : key, 16));
        bind_fuzz(s, 2, r, v_textn(ob, on));
        bind_fuzz(s, 3, r, v_int((int64_t)rd_u64(r)));
        sqlite3_step(s);
        sqlite3_finalize(s);
    }
    static const char *const counters[] = {"compiles", "compile_ms", "evictions",
                                           "verify_failures"};
    int nc = rd_u8(r) % 4;
    for (int i = 0; i < nc; i++) {
        uint64_t u = rd_u64(r);
        double f;
        memcpy(&f, &u, sizeof f);
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO counters(name, value) VALUES(?1, ?2)", -1,
                           &s, NULL);
        bind_fuzz(s, 1, r, v_text(counters[i % 4]));
        bind_fuzz(s, 2, r, v_real(f));
        sqlite3_step(s);
        sqlite3_finalize(s);
    }
    int nf = rd_u8(r) % 3;
    for (int i = 0; i < nf; i++) {
        const uint8_t *vb;
        uint8_t vc = rd_u8(r);
        size_t vn = rd_bytes(r, 1500, &vb);
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO facts(name, value) VALUES(?1, ?2)", -1, &s,
                           NULL);
        bind_fuzz(s, 1, r, v_text(KILN_NVRTC_IMPORTED_FACTS));
        bind_fuzz(s, 2, r, (vc & 1) ? v_text(good_facts) : v_textn(vb, vn));
        sqlite3_step(s);
        sqlite3_finalize(s);
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) abort();
    sqlite3_close(db);
    return n;
}

static void rows_mode(uint8_t ops, Reader *r) {
    Written w[MAX_ROWS];
    int n = write_rows(r, w);
    Diags D = {0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, diag_check, &D);
    kiln_cache *c = open_cache(ctx, dbdir, "", "");
    if (!kiln_cache_path(c)) {
        fprintf(stderr, "fuzz_cache: the disk tier is off in %s\n", dbdir);
        abort();
    }
    /* rows written right come back as written, before anything else happens */
    uint8_t keys[MAX_ROWS][16];
    for (int i = 0; i < n; i++) {
        memcpy(keys[i], w[i].key, 16);
        if (!w[i].right) continue;
        kiln_cache_key k;
        memcpy(k.b, w[i].key, 16);
        void *blob = NULL;
        size_t len = 0;
        if (kiln_cache_get(c, &k, &blob, &len, NULL) != 1 || len != w[i].len ||
            memcmp(blob, w[i].blob, len) != 0) {
            fprintf(stderr, "fuzz_cache: a good row did not come back as written\n");
            abort();
        }
        free(blob);
    }
    exercise(c, ctx, &D, ops, (const uint8_t(*)[16])keys, n);
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
}

/* ---- mode 1: the database file ---------------------------------------------------------- */

static void file_mode(uint8_t ops, Reader *r) {
    fz_clean_dir(dbdir);
    fz_write(dbpath, r->p, r->n);
    Diags D = {0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, diag_check, &D);
    kiln_cache *c = open_cache(ctx, dbdir, "", "");
    /* the keys make_seeds.py gives its rows: 16 times the byte i */
    uint8_t keys[4][16];
    for (int i = 0; i < 4; i++) memset(keys[i], i, 16);
    exercise(c, ctx, &D, ops, (const uint8_t(*)[16])keys, 4);
    kiln_cache_clear(c); /* a database that failed: clear starts a new one */
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    fz_clean_dir(dbdir);
}

/* ---- mode 2: a Redis server's replies ----------------------------------------------------- */

#ifdef KILN_FUZZ_REDIS
static int listen_fd = -1, port;

enum { MAX_REPLIES = 5, HEAD = 40, BODY_FIXED = 44 };

typedef struct Server {
    const uint8_t *reply[MAX_REPLIES];
    size_t len[MAX_REPLIES];
    int n;
} Server;

static bool wait_readable(int fd, int ms) {
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, ms) == 1;
}

/* Reads one command (a RESP array of bulk strings, as hiredis sends); false at
 * the end of the connection. */
static bool read_command(int fd) {
    redisReader *rd = redisReaderCreate();
    bool ok = false;
    char buf[4096];
    for (;;) {
        if (!wait_readable(fd, 2000)) break;
        ssize_t got = recv(fd, buf, sizeof buf, 0);
        if (got <= 0) break;
        redisReaderFeed(rd, buf, (size_t)got);
        void *rep = NULL;
        if (redisReaderGetReply(rd, &rep) != REDIS_OK) break;
        if (rep) {
            freeReplyObject(rep);
            ok = true;
            break;
        }
    }
    redisReaderFree(rd);
    return ok;
}

/* Whether bytes are exactly one complete RESP reply. */
static bool one_reply(const uint8_t *p, size_t n) {
    redisReader *rd = redisReaderCreate();
    redisReaderFeed(rd, (const char *)p, n);
    void *rep = NULL;
    bool ok = redisReaderGetReply(rd, &rep) == REDIS_OK && rep != NULL;
    if (rep) freeReplyObject(rep);
    /* nothing left over: a second reply would answer the next command early */
    void *more = NULL;
    if (ok && redisReaderGetReply(rd, &more) == REDIS_OK && more) {
        freeReplyObject(more);
        ok = false;
    }
    redisReaderFree(rd);
    return ok;
}

static void *serve(void *arg) {
    Server *S = arg;
    if (!wait_readable(listen_fd, 2000)) return NULL;
    int fd = accept(listen_fd, NULL, NULL);
    if (fd < 0) return NULL;
    for (int i = 0; i < S->n; i++) {
        if (!read_command(fd)) break;
        if (S->len[i] && send(fd, S->reply[i], S->len[i], MSG_NOSIGNAL) < 0) break;
        if (!one_reply(S->reply[i], S->len[i])) break;
    }
    close(fd); /* the cache sees the end of the connection at its next command */
    return NULL;
}

/* HMAC-SHA256 as remote.c computes it, through libcrypto. */
static bool hmac(const char *key, const uint8_t *msg, size_t n, uint8_t out[32]) {
    static void *lib;
    static const void *(*sha256)(void);
    static unsigned char *(*mac)(const void *, const void *, int, const unsigned char *, size_t,
                                 unsigned char *, unsigned int *);
    if (!lib) {
        lib = dlopen("libcrypto.so.3", RTLD_NOW);
        if (!lib) lib = dlopen("libcrypto.so.1.1", RTLD_NOW);
        if (!lib) return false;
        *(void **)&sha256 = dlsym(lib, "EVP_sha256");
        *(void **)&mac = dlsym(lib, "HMAC");
    }
    unsigned int len = 0;
    return sha256 && mac && mac(sha256(), key, (int)strlen(key), msg, n, out, &len) && len == 32;
}

static void redis_mode(uint8_t ops, Reader *r) {
    uint8_t flags = rd_u8(r);
    const char *key = (flags & 2) ? "fuzz-key" : "";
    Server S = {.n = 0};
    uint8_t *record = NULL;
    while (S.n < MAX_REPLIES && r->n) {
        size_t n = rd_u8(r);
        n |= (size_t)rd_u8(r) << 8;
        if (n > r->n) n = r->n;
        S.reply[S.n] = r->p;
        S.len[S.n++] = n;
        r->p += n;
        r->n -= n;
    }
    kiln_cache_key k0;
    memset(k0.b, 0x5a, 16);
    if ((flags & 1) && S.n) {
        /* reply 0: a bulk string holding a record whose checks pass, but for
         * what the bytes themselves say (lengths, metadata) */
        size_t n = S.len[0] < HEAD + BODY_FIXED ? HEAD + BODY_FIXED : S.len[0];
        uint8_t *v = calloc(1, n);
        memcpy(v, S.reply[0], S.len[0]);
        memcpy(v, "KILNREC2", 8);
        uint8_t *body = v + HEAD;
        memcpy(body, k0.b, 16);
        size_t rest = n - HEAD - BODY_FIXED;
        uint32_t metalen = (uint32_t)body[32] | (uint32_t)body[33] << 8 |
                           (uint32_t)body[34] << 16 | (uint32_t)body[35] << 24;
        if (flags & 4) {
            if (metalen > rest) {
                metalen = (uint32_t)(rest / 2);
                for (int i = 0; i < 4; i++) body[32 + i] = (uint8_t)(metalen >> (8 * i));
            }
            uint64_t bl = rest - metalen;
            for (int i = 0; i < 8; i++) body[36 + i] = (uint8_t)(bl >> (8 * i));
        }
        if (metalen <= rest) /* the kind is the metadata's first field */
            fz_checksum(k0.b, body + BODY_FIXED, metalen, body + BODY_FIXED + metalen,
                        rest - metalen, body + 16);
        if (*key) {
            if (!hmac(key, body, n - HEAD, v + 8)) memset(v + 8, 0, 32);
        } else {
            memset(v + 8, 0, 32);
        }
        char head[32];
        int hn = snprintf(head, sizeof head, "$%zu\r\n", n);
        record = malloc((size_t)hn + n + 2);
        memcpy(record, head, (size_t)hn);
        memcpy(record + hn, v, n);
        memcpy(record + hn + n, "\r\n", 2);
        free(v);
        S.reply[0] = record;
        S.len[0] = (size_t)hn + n + 2;
    }
    pthread_t th;
    if (pthread_create(&th, NULL, serve, &S) != 0) abort();
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d/0", port);
    Diags D = {0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, diag_check, &D);
    kiln_cache *c = open_cache(ctx, "", url, key);
    if (kiln_cache_remote(c)) (void)strlen(kiln_cache_remote(c));
    exercise(c, ctx, &D, ops & ~8, (const uint8_t(*)[16])k0.b, 1);
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    pthread_join(th, NULL);
    free(record);
}

static void start_server(void) {
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(listen_fd, 4) != 0 || getsockname(listen_fd, (struct sockaddr *)&a, &al) != 0) {
        perror("fuzz_cache: listen");
        abort();
    }
    port = ntohs(a.sin_port);
}
#endif

/* ---- entry points ------------------------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    snprintf(dbdir, sizeof dbdir, "%s/db", fz_scratch());
    snprintf(dbpath, sizeof dbpath, "%s/kiln.db", dbdir);
    if (mkdir(dbdir, 0700) != 0) {
        perror(dbdir);
        abort();
    }
#ifdef KILN_FUZZ_REDIS
    start_server();
#endif
    return 0;
}

/* kiln.db with kiln's schema, for the rows mode (after the file mode left it anything) */
static void fresh_db(void) {
    fz_clean_dir(dbdir);
    Diags D = {0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, diag_check, &D);
    kiln_cache_close(open_cache(ctx, dbdir, "", ""));
    kiln_ctx_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static bool have_db;
    if (size < 1) return 0;
    uint8_t mode = data[0] & 3, ops = data[0] & 0x1c;
    Reader r = {data + 1, size - 1};
#ifndef KILN_FUZZ_REDIS
    if (mode == 2) mode = 0;
#endif
    if (mode == 3) mode = 0;
    if (mode == 0) {
        if (!have_db) fresh_db();
        have_db = true;
        rows_mode(ops, &r);
    } else if (mode == 1) {
        have_db = false;
        file_mode(ops, &r);
    } else {
#ifdef KILN_FUZZ_REDIS
        redis_mode(ops, &r);
#endif
    }
    return 0;
}
