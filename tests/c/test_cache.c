/* test_cache.c: the artifact cache's tiers, checks and bundles, in one
 * process (the multi-process scenarios are tests/python/test_cache.py and
 * test_cache_faults.py). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache_int.h"
#include "cache/remote.h"
#include "util/sigpipe.h"
#include "kiln.h"
#include "test.h"

typedef struct {
    char text[4096];
    int warnings, errors;
} Sink;

static void sink(void *ud, const kiln_diag *d) {
    Sink *s = ud;
    if (d->severity == KILN_WARNING) s->warnings++;
    if (d->severity == KILN_ERROR) s->errors++;
    size_t n = strlen(s->text);
    snprintf(s->text + n, sizeof s->text - n, "%s\n", d->formatted);
}

static char *temp_dir(void) {
    char tmpl[] = "/tmp/kiln-ctest-cacheXXXXXX";
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

static void remove_tree(const char *dir) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static kiln_cache *open_in(kiln_ctx *ctx, const char *dir, int64_t max_bytes) {
    kiln_cache_config cfg = {0};
    cfg.dir = dir;
    cfg.max_bytes = max_bytes;
    cfg.remote = "";
    return kiln_cache_open(ctx, &cfg);
}

static kiln_cache_key key_of(const char *src) {
    kiln_cache_key k;
    kiln_cache_key_of(src, strlen(src), "cpu:test", 0, &k);
    return k;
}

TEST(cache_keys) {
    kiln_cache_key a = key_of("int x;"), b = key_of("int y;"), c;
    kiln_cache_key_of("int x;", 6, "cuda:sm_90", 0, &c);
    CHECK(memcmp(a.b, b.b, 16) != 0);
    CHECK(memcmp(a.b, c.b, 16) != 0); /* the target is in the key */
    /* #line file names are not, unless asked; line numbers are */
    static const char s1[] = "int a;\n#line 4 \"/ci/src/k.py\"\nx = 1;\n";
    static const char s2[] = "int a;\n#line 4 \"/app/k.py\"\nx = 1;\n";
    static const char s3[] = "int a;\n#line 5 \"/app/k.py\"\nx = 1;\n";
    static const char s4[] = "int a;\n#line 4 \"/app/k.py\"\nx = 2;\n";
    kiln_cache_key k1, k2, k3, k4, k5, k6;
    kiln_cache_key_of(s1, strlen(s1), "t", 0, &k1);
    kiln_cache_key_of(s2, strlen(s2), "t", 0, &k2);
    kiln_cache_key_of(s3, strlen(s3), "t", 0, &k3);
    kiln_cache_key_of(s4, strlen(s4), "t", 0, &k4);
    kiln_cache_key_of(s1, strlen(s1), "t", KILN_KEY_FILE_NAMES, &k5);
    kiln_cache_key_of(s2, strlen(s2), "t", KILN_KEY_FILE_NAMES, &k6);
    CHECK(memcmp(k1.b, k2.b, 16) == 0);
    CHECK(memcmp(k2.b, k3.b, 16) != 0);
    CHECK(memcmp(k2.b, k4.b, 16) != 0);
    CHECK(memcmp(k5.b, k6.b, 16) != 0);
    char hex[33];
    kiln_cache_key_hex(&a, hex);
    CHECK(strlen(hex) == 32);
    kiln_cache_key back;
    CHECK(kiln_cache_key_parse(hex, &back) == 0 && memcmp(back.b, a.b, 16) == 0);
    CHECK(kiln_cache_key_parse("xyz", &back) < 0);
    CHECK(kiln_cache_key_parse("0123456789abcdef0123456789abcdeg", &back) < 0);
}

TEST(cache_memory_and_disk_tiers) {
    char *dir = temp_dir();
    Sink s = {{0}, 0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, sink, &s);
    kiln_cache *c = open_in(ctx, dir, 0);
    CHECK(kiln_cache_path(c) != NULL);
    struct stat st;
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 077) == 0);
    kiln_cache_key k = key_of("kernel one");
    void *blob = NULL;
    size_t len = 0;
    char kind[16];
    CHECK(kiln_cache_get(c, &k, &blob, &len, kind) == 0);
    CHECK(kiln_cache_claim(c, &k, 1000, &blob, &len, NULL) == 1);
    CHECK(kiln_cache_put(c, &k, "so", "one", "cpu:test", "ELF-bytes", 9, 12.5) == 0);
    CHECK(kiln_cache_get(c, &k, &blob, &len, kind) == 1);
    CHECK(len == 9 && memcmp(blob, "ELF-bytes", 9) == 0);
    CHECK_STR(kind, "so");
    free(blob);
    kiln_cache_close(c);

    /* a new cache on the same directory finds it on disk */
    c = open_in(ctx, dir, 0);
    CHECK(kiln_cache_get(c, &k, &blob, &len, kind) == 1);
    free(blob);
    kiln_cache_stats stt;
    kiln_cache_get_stats(c, &stt);
    CHECK(stt.disk_hits == 1 && stt.mem_misses == 1 && stt.entries == 1 && stt.bytes == 9);
    CHECK(stt.total_compiles == 1 && stt.total_compile_ms == 12.5);
    /* and then in memory */
    CHECK(kiln_cache_get(c, &k, &blob, &len, kind) == 1);
    free(blob);
    kiln_cache_get_stats(c, &stt);
    CHECK(stt.mem_hits == 1);
    CHECK(kiln_cache_clear(c) == 1);
    CHECK(kiln_cache_get(c, &k, &blob, &len, kind) == 0);
    kiln_cache_close(c);
    CHECK(s.warnings == 0);
    kiln_ctx_free(ctx);
    remove_tree(dir);
    free(dir);
}

TEST(cache_corrupt_row_is_a_miss_and_dropped) {
    char *dir = temp_dir();
    Sink s = {{0}, 0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, sink, &s);
    kiln_cache *c = open_in(ctx, dir, 0);
    kiln_cache_key k = key_of("kernel two");
    CHECK(kiln_cache_put(c, &k, "so", "two", "cpu:test", "good bytes", 10, 1) == 0);
    kiln_cache_close(c);
    /* flip the blob behind kiln's back */
    char path[600];
    snprintf(path, sizeof path, "%s/kiln.db", dir);
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "UPDATE artifacts SET blob = CAST('evil bytes' AS BLOB)", NULL, NULL,
                       NULL) == SQLITE_OK);
    sqlite3_close(db);
    c = open_in(ctx, dir, 0);
    void *blob = NULL;
    size_t len;
    CHECK(kiln_cache_get(c, &k, &blob, &len, NULL) == 0);
    CHECK(s.warnings == 1);
    CHECK_CONTAINS(s.text, "failed verification");
    kiln_cache_stats st;
    kiln_cache_get_stats(c, &st);
    CHECK(st.verify_failures == 1 && st.total_verify_failures == 1 && st.entries == 0);
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    remove_tree(dir);
    free(dir);
}

/* Rows whose blobs were swapped between keys, or whose kind was changed, fail their
 * checksums (which bind key, kind and blob) and are never handed out; a row written
 * before the key was in the checksum (blob alone) is dropped as stale, without a word. */
TEST(cache_rows_bound_to_their_key_and_kind) {
    char *dir = temp_dir();
    Sink s = {{0}, 0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, sink, &s);
    kiln_cache *c = open_in(ctx, dir, 0);
    kiln_cache_key ka = key_of("kernel a"), kb = key_of("kernel b"), kc = key_of("kernel c");
    kiln_cache_key kd = key_of("kernel d");
    CHECK(kiln_cache_put(c, &ka, "so", "a", "cpu:test", "bytes of a", 10, 1) == 0);
    CHECK(kiln_cache_put(c, &kb, "so", "b", "cpu:test", "bytes of b", 10, 1) == 0);
    CHECK(kiln_cache_put(c, &kc, "so", "c", "cpu:test", "bytes of c", 10, 1) == 0);
    CHECK(kiln_cache_put(c, &kd, "so", "d", "cpu:test", "bytes of d", 10, 1) == 0);
    kiln_cache_close(c);
    char path[600];
    snprintf(path, sizeof path, "%s/kiln.db", dir);
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    sqlite3_stmt *st;
    /* a and b trade blobs and checksums; c becomes a cubin */
    CHECK(sqlite3_exec(db, "CREATE TEMP TABLE t AS SELECT * FROM artifacts;"
                           "UPDATE artifacts SET blob = (SELECT blob FROM t WHERE t.name = "
                           " (CASE artifacts.name WHEN 'a' THEN 'b' ELSE 'a' END)),"
                           " checksum = (SELECT checksum FROM t WHERE t.name = "
                           " (CASE artifacts.name WHEN 'a' THEN 'b' ELSE 'a' END))"
                           " WHERE name IN ('a', 'b');"
                           "UPDATE artifacts SET kind = 'cubin' WHERE name = 'c';",
                       NULL, NULL, NULL) == SQLITE_OK);
    /* d's checksum as kiln wrote it before: the blob alone */
    uint8_t old[16];
    key_checksum_blob_only("bytes of d", 10, old);
    CHECK(sqlite3_prepare_v2(db, "UPDATE artifacts SET checksum = ?1 WHERE name = 'd'", -1, &st,
                             NULL) == SQLITE_OK);
    sqlite3_bind_blob(st, 1, old, 16, SQLITE_STATIC);
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
    c = open_in(ctx, dir, 0);
    void *blob = NULL;
    size_t len;
    CHECK(kiln_cache_get(c, &ka, &blob, &len, NULL) == 0);
    CHECK(kiln_cache_get(c, &kb, &blob, &len, NULL) == 0);
    CHECK(kiln_cache_get(c, &kc, &blob, &len, NULL) == 0);
    CHECK(s.warnings == 3);
    CHECK_CONTAINS(s.text, "failed verification");
    CHECK(kiln_cache_get(c, &kd, &blob, &len, NULL) == 0);
    CHECK(s.warnings == 3); /* the stale row: no warning */
    kiln_cache_stats stats;
    kiln_cache_get_stats(c, &stats);
    CHECK(stats.verify_failures == 3 && stats.entries == 0);
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    remove_tree(dir);
    free(dir);
}

TEST(cache_not_a_database_is_set_aside) {
    char *dir = temp_dir();
    char path[600];
    snprintf(path, sizeof path, "%s/kiln.db", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        for (int i = 0; i < 200; i++) fputs("this is not a database at all\n", f);
        fclose(f);
    }
    Sink s = {{0}, 0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, sink, &s);
    kiln_cache *c = open_in(ctx, dir, 0);
    CHECK(kiln_cache_path(c) != NULL);
    CHECK_CONTAINS(s.text, "was not a valid kiln database");
    kiln_cache_key k = key_of("kernel three");
    CHECK(kiln_cache_put(c, &k, "so", "three", "cpu:test", "x", 1, 1) == 0);
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    remove_tree(dir);
    free(dir);
}

TEST(cache_unsafe_directory_means_memory_only) {
    char *dir = temp_dir();
    CHECK(chmod(dir, 0777) == 0);
    Sink s = {{0}, 0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, sink, &s);
    kiln_cache *c = open_in(ctx, dir, 0);
    CHECK(kiln_cache_path(c) == NULL);
    CHECK(s.warnings == 1);
    CHECK_CONTAINS(s.text, "writable by group or others");
    /* memory still works */
    kiln_cache_key k = key_of("kernel four");
    void *blob;
    size_t len;
    CHECK(kiln_cache_claim(c, &k, 1000, &blob, &len, NULL) == 1);
    kiln_cache_put(c, &k, "so", "four", "cpu:test", "abc", 3, 1);
    CHECK(kiln_cache_get(c, &k, &blob, &len, NULL) == 1);
    free(blob);
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    remove_tree(dir);
    free(dir);
}

TEST(cache_evicts_least_recently_used) {
    char *dir = temp_dir();
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_cache *c = open_in(ctx, dir, 3000);
    char blob[1000];
    memset(blob, 'x', sizeof blob);
    kiln_cache_key ks[5];
    for (int i = 0; i < 5; i++) {
        char src[32];
        snprintf(src, sizeof src, "kernel %d", i);
        ks[i] = key_of(src);
        CHECK(kiln_cache_put(c, &ks[i], "so", src, "cpu:test", blob, sizeof blob, 1) == 0);
        usleep(2000); /* distinct times of use */
    }
    kiln_cache_stats st;
    kiln_cache_get_stats(c, &st);
    CHECK(st.entries == 3 && st.bytes == 3000 && st.total_evictions == 2);
    CHECK(kiln_cache_prune(c, 1000) == 2);
    kiln_cache_close(c);
    c = open_in(ctx, dir, 3000);
    void *b;
    size_t len;
    CHECK(kiln_cache_get(c, &ks[4], &b, &len, NULL) == 1); /* the newest stays */
    if (len) free(b);
    CHECK(kiln_cache_get(c, &ks[0], &b, &len, NULL) == 0);
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    remove_tree(dir);
    free(dir);
}

TEST(cache_claims) {
    char *dir = temp_dir();
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_cache *a = open_in(ctx, dir, 0);
    kiln_cache_key k = key_of("kernel five");
    void *b;
    size_t len;
    CHECK(kiln_cache_claim(a, &k, 60000, &b, &len, NULL) == 1);
    /* another owner (here: another process's row) holds it */
    char path[600];
    snprintf(path, sizeof path, "%s/kiln.db", dir);
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "UPDATE pending SET owner = 'elsewhere:1:1'", NULL, NULL, NULL) ==
          SQLITE_OK);
    CHECK(kiln_cache_claim(a, &k, 60000, &b, &len, NULL) == 0);
    /* an owner of this host whose process is gone holds nothing */
    char host[64], sql[256];
    gethostname(host, sizeof host);
    host[63] = 0;
    snprintf(sql, sizeof sql, "UPDATE pending SET owner = '%s:%d:1'", host, 0x3ffffff0);
    CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    CHECK(kiln_cache_claim(a, &k, 60000, &b, &len, NULL) == 1);
    /* an expired lease holds nothing either */
    CHECK(sqlite3_exec(db, "UPDATE pending SET owner = 'elsewhere:1:1', expires = 0", NULL, NULL,
                       NULL) == SQLITE_OK);
    CHECK(kiln_cache_wait(a, &k, NULL, 0, &b, &len, NULL) == 0);
    CHECK(kiln_cache_claim(a, &k, 60000, &b, &len, NULL) == 1);
    kiln_cache_release(a, &k);
    /* stored by another process between a miss and the claim: the claim finds it */
    kiln_cache *other = open_in(ctx, dir, 0);
    CHECK(kiln_cache_put(other, &k, "so", "five", "cpu:test", "done", 4, 1) == 0);
    kiln_cache_close(other);
    char kind[16];
    CHECK(kiln_cache_claim(a, &k, 60000, &b, &len, kind) == 2);
    CHECK(len == 4 && memcmp(b, "done", 4) == 0);
    free(b);
    kiln_cache_stats st;
    kiln_cache_get_stats(a, &st);
    CHECK(st.disk_hits == 0 && st.mem_hits == 0); /* a claim's look is not counted */
    sqlite3_close(db);
    kiln_cache_close(a);
    kiln_ctx_free(ctx);
    remove_tree(dir);
    free(dir);
}

TEST(cache_bundles) {
    char *dir = temp_dir(), *dir2 = temp_dir();
    Sink s = {{0}, 0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, sink, &s);
    kiln_cache *c = open_in(ctx, dir, 0);
    kiln_cache_key k1 = key_of("cuda kernel"), k2 = key_of("cpu kernel");
    kiln_cache_put(c, &k1, "cubin", "a", "cuda:sm_90", "CUBIN", 5, 1);
    kiln_cache_put(c, &k2, "so", "b", "cpu:x86_64", "SHOBJ", 5, 1);
    char bundle[600];
    snprintf(bundle, sizeof bundle, "%s/b.kiln", dir2);
    const char *only[] = {"cuda:sm_90"};
    CHECK(kiln_cache_export(c, bundle, only, 1) == 1);
    kiln_cache_close(c);
    kiln_cache *d = open_in(ctx, dir2, 0); /* dir2 holds the bundle and a new cache */
    CHECK(kiln_cache_import(d, bundle) == 1);
    void *b;
    size_t len;
    char kind[16];
    CHECK(kiln_cache_get(d, &k1, &b, &len, kind) == 1 && len == 5);
    if (len) free(b);
    CHECK_STR(kind, "cubin");
    CHECK(kiln_cache_get(d, &k2, &b, &len, NULL) == 0);
    /* a file that is not a bundle is an error, not a crash */
    CHECK(kiln_cache_import(d, "/etc/hostname") == -1);
    CHECK_CONTAINS(s.text, "is not a kiln bundle");
    CHECK(kiln_cache_import(d, "/nonexistent/bundle") == -1);
    kiln_cache_close(d);
    kiln_ctx_free(ctx);
    remove_tree(dir);
    remove_tree(dir2);
    free(dir);
    free(dir2);
}

TEST(hmac_sha256_rfc4231) {
    Hmac h;
    if (!hmac_load(&h)) {
        fprintf(stderr, "    (libcrypto not found: HMAC not checked)\n");
        return;
    }
    /* RFC 4231, test case 2 */
    uint8_t out[32];
    CHECK(hmac_sha256(&h, "Jefe", 4, "what do ya want for nothing?", 28, out) == 0);
    static const uint8_t want[32] = {0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24,
                                     0x26, 0x08, 0x95, 0x75, 0xc7, 0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27,
                                     0x39, 0x83, 0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
    CHECK(memcmp(out, want, 32) == 0);
}

/* kiln-ctest --cache-writer DIR: stores large entries in a loop until it is
 * killed (tests/python/test_cache.py kills it with SIGKILL mid-write). */
int cache_writer(const char *dir);
int cache_writer(const char *dir) {
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_cache *c = open_in(ctx, dir, 0);
    if (!kiln_cache_path(c)) return 1;
    size_t len = 256 * 1024;
    unsigned char *blob = malloc(len);
    if (!blob) return 1;
    for (long i = 0;; i++) {
        for (size_t j = 0; j < len; j++) blob[j] = (unsigned char)(j * 31 + (size_t)i * 7 + 1);
        char src[64];
        snprintf(src, sizeof src, "writer %ld %ld", (long)getpid(), i);
        kiln_cache_key k = key_of(src);
        if (kiln_cache_put(c, &k, "so", src, "cpu:test", blob, len, 1) != 0) return 1;
        if (i == 0) {
            printf("ready\n");
            fflush(stdout);
        }
    }
}

/* ---- waits have bounds and can be interrupted ------------------------------------------ */

static double mono_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int exec_sql(const char *dir, const char *sql) {
    char path[600];
    snprintf(path, sizeof path, "%s/kiln.db", dir);
    sqlite3 *db;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

static int polls;
static int stop_after_three(void *ud) {
    (void)ud;
    return ++polls >= 3;
}

TEST(cache_claims_and_waits_have_bounds) {
    char *dir = temp_dir();
    Sink s = {{0}, 0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, sink, &s);
    kiln_cache *a = open_in(ctx, dir, 0);
    kiln_cache_key k = key_of("kernel with a claim");
    void *b;
    size_t len;
    CHECK(kiln_cache_claim(a, &k, 1000, &b, &len, NULL) == 1);
    /* a claim that expires in ten years is no live process's: stale, taken over, one warning */
    CHECK(exec_sql(dir, "UPDATE pending SET owner = 'elsewhere:1:1', "
                        "expires = CAST(strftime('%s', 'now') AS INTEGER) * 1000 + 315360000000")
          == SQLITE_OK);
    double t0 = mono_s();
    CHECK(kiln_cache_wait(a, &k, NULL, 0, &b, &len, NULL) == 0);
    CHECK(mono_s() - t0 < 1);
    CHECK(kiln_cache_claim(a, &k, 1000, &b, &len, NULL) == 1);
    CHECK(s.warnings == 1);
    CHECK_CONTAINS(s.text, "it is stale");
    /* a lease asked for beyond the longest is cut to it */
    CHECK(kiln_cache_claim(a, &k, 1 << 30, &b, &len, NULL) == 1);
    /* a live claim: the wait ends when asked to (max_ms), and on an interrupt */
    CHECK(exec_sql(dir, "UPDATE pending SET owner = 'elsewhere:1:1', "
                        "expires = CAST(strftime('%s', 'now') AS INTEGER) * 1000 + 50000")
          == SQLITE_OK);
    CHECK(kiln_cache_claim(a, &k, 1000, &b, &len, NULL) == 0);
    t0 = mono_s();
    CHECK(kiln_cache_wait(a, &k, NULL, 300, &b, &len, NULL) == 0);
    CHECK(mono_s() - t0 >= 0.25 && mono_s() - t0 < 2);
    kiln_ctx_set_interrupt(ctx, stop_after_three, NULL);
    t0 = mono_s();
    CHECK(kiln_cache_wait(a, &k, ctx, 0, &b, &len, NULL) == -1);
    CHECK(mono_s() - t0 < 1 && polls == 3);
    CHECK_CONTAINS(s.text, "interrupted while waiting");
    CHECK(s.warnings == 1);
    kiln_cache_close(a);
    kiln_ctx_free(ctx);
    remove_tree(dir);
    free(dir);
}

TEST(cache_a_locked_database_pauses_writes) {
    char *dir = temp_dir();
    Sink s = {{0}, 0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, sink, &s);
    kiln_cache *c = open_in(ctx, dir, 0);
    kiln_cache_key k1 = key_of("stored before"), k2 = key_of("built while locked"),
                   k3 = key_of("built later");
    CHECK(kiln_cache_put(c, &k1, "so", "one", "cpu:test", "111", 3, 1) == 0);
    char path[600];
    snprintf(path, sizeof path, "%s/kiln.db", dir);
    sqlite3 *holder;
    CHECK(sqlite3_open(path, &holder) == SQLITE_OK);
    CHECK(sqlite3_exec(holder, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK);
    kiln_cache *d = open_in(ctx, dir, 0); /* another process's view: a fresh connection */
    CHECK(kiln_cache_path(d) != NULL);
    void *b;
    size_t len;
    double t0 = mono_s();
    CHECK(kiln_cache_get(d, &k1, &b, &len, NULL) == 1); /* readers never wait */
    CHECK(mono_s() - t0 < 0.5); /* not even to count the hit */
    free(b);
    CHECK(kiln_cache_claim(d, &k2, 1000, &b, &len, NULL) == 1);
    CHECK(kiln_cache_put(d, &k2, "so", "two", "cpu:test", "222", 3, 1) == -1);
    kiln_cache_release(d, &k2);
    CHECK(kiln_cache_claim(d, &k3, 1000, &b, &len, NULL) == 1);
    CHECK(kiln_cache_put(d, &k3, "so", "three", "cpu:test", "333", 3, 1) == -1);
    double took = mono_s() - t0;
    CHECK(took < 8); /* one bounded wait (a claim tries 5 x 1 s), then writes are paused */
    CHECK(s.warnings == 1);
    CHECK_CONTAINS(s.text, "is locked by another process");
    CHECK(kiln_cache_get(d, &k2, &b, &len, NULL) == 1); /* the memory tier has them */
    free(b);
    CHECK(kiln_cache_path(d) != NULL);
    sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(holder);
    kiln_cache_close(d);
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    remove_tree(dir);
    free(dir);
}

static void count_rows(void *ud, const kiln_cache_entry *e) {
    int64_t *v = ud;
    v[0] += e->hits;
    v[1] += e->compile_ms > 0;
    v[2]++;
}

/* Each disk hit is counted on its entry and in the totals, by every process; the
 * build's milliseconds stay on the entry; the tier a look-up answered from is said. */
TEST(cache_counts_hits_per_entry_and_says_the_tier) {
    char *dir = temp_dir();
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_cache *c = open_in(ctx, dir, 0);
    kiln_cache_key k = key_of("counted");
    CHECK(kiln_cache_put(c, &k, "so", "one", "cpu:test", "111", 3, 12.5) == 0);
    void *b;
    size_t len;
    int looked = 0;
    CHECK(kiln_cache_get_tier(c, &k, &b, &len, NULL, &looked) == KILN_CACHE_MEMORY);
    CHECK(looked == (1 << KILN_CACHE_MEMORY | 1 << KILN_CACHE_DISK));
    free(b);
    for (int p = 0; p < 2; p++) { /* two other processes' views */
        kiln_cache *d = open_in(ctx, dir, 0);
        CHECK(kiln_cache_get_tier(d, &k, &b, &len, NULL, NULL) == KILN_CACHE_DISK);
        free(b);
        CHECK(kiln_cache_get_tier(d, &k, &b, &len, NULL, NULL) == KILN_CACHE_MEMORY);
        free(b);
        kiln_cache_close(d);
    }
    int64_t v[3] = {0, 0, 0};
    kiln_cache_list(c, count_rows, v);
    CHECK(v[0] == 2 && v[1] == 1 && v[2] == 1);
    kiln_cache_stats st;
    kiln_cache_get_stats(c, &st);
    CHECK(st.total_hits == 2 && st.total_compiles == 1);
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    remove_tree(dir);
    free(dir);
}

/* A write past RLIMIT_FSIZE (EFBIG), in a child: the tier goes off with one
 * warning that says so, not "cannot rollback - no transaction is active". */
TEST(cache_a_file_size_limit_turns_the_tier_off) {
    char *dir = temp_dir();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        Sink s = {{0}, 0, 0};
        kiln_ctx *ctx = kiln_ctx_new();
        kiln_ctx_set_diag(ctx, sink, &s);
        kiln_cache *c = open_in(ctx, dir, 0);
        kiln_cache_key k1 = key_of("small"), k2 = key_of("large");
        int bad = kiln_cache_put(c, &k1, "so", "small", "cpu:test", "x", 1, 1) != 0;
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit r = {256 * 1024, 256 * 1024};
        setrlimit(RLIMIT_FSIZE, &r);
        size_t n = 1 << 20;
        char *big = calloc(1, n);
        bad |= !big || kiln_cache_put(c, &k2, "so", "large", "cpu:test", big, n, 1) != -1;
        bad |= kiln_cache_path(c) != NULL || s.warnings != 1;
        bad |= !strstr(s.text, "file size limit reached") ||
               !strstr(s.text, "the disk cache is off for this process") ||
               strstr(s.text, "cannot rollback") != NULL;
        if (bad) fprintf(stderr, "%s", s.text);
        free(big);
        _exit(bad ? 1 : 0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    remove_tree(dir);
    free(dir);
}

/* ---- bundles: signatures and hostile files ---------------------------------------------- */

static kiln_cache *open_keyed(kiln_ctx *ctx, const char *dir, const char *key) {
    kiln_cache_config cfg = {0};
    cfg.dir = dir;
    cfg.remote = "";
    cfg.bundle_key = key;
    return kiln_cache_open(ctx, &cfg);
}

TEST(cache_bundle_signatures) {
    char *dir = temp_dir(), *out = temp_dir();
    Sink s = {{0}, 0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, sink, &s);
    kiln_cache *c = open_keyed(ctx, dir, "k1");
    kiln_cache_key k1 = key_of("signed one"), k2 = key_of("signed two");
    kiln_cache_put(c, &k1, "so", "a", "cpu:x86_64", "AAAA", 4, 1);
    kiln_cache_put(c, &k2, "so", "b", "cpu:x86_64", "BBBB", 4, 1);
    char signed_b[600], plain[600], evil[600];
    snprintf(signed_b, sizeof signed_b, "%s/signed.kiln", out);
    snprintf(plain, sizeof plain, "%s/plain.kiln", out);
    snprintf(evil, sizeof evil, "%s/evil.kiln", out);
    int is_signed = 0, checked = 0;
    CHECK(kiln_cache_export_bundle(c, signed_b, NULL, 0, &is_signed) == 2 && is_signed);
    kiln_cache_close(c);
    c = open_keyed(ctx, dir, "");
    CHECK(kiln_cache_export_bundle(c, plain, NULL, 0, &is_signed) == 2 && !is_signed);
    kiln_cache_close(c);
    /* swap the two entries' code and checksums: the checksums bind each blob to its key,
     * so they fail too, signed or not */
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cp '%s' '%s' && sqlite3 '%s' \"CREATE TEMP TABLE t AS SELECT * FROM artifacts;"
             " UPDATE artifacts SET blob = (SELECT blob FROM t WHERE t.key <> artifacts.key),"
             " checksum = (SELECT checksum FROM t WHERE t.key <> artifacts.key);\"",
             signed_b, evil, evil);
    CHECK(system(cmd) == 0);
    struct {
        const char *key, *file;
        int flags;
        int64_t want;
        int checked;
        const char *says;
    } cases[] = {
        {"k1", signed_b, 0, 2, 1, NULL},
        {"k2", signed_b, 0, -1, 0, "does not match"},
        {"k1", plain, 0, -1, 0, "is not signed"},
        {"k1", plain, KILN_IMPORT_TRUST_UNSIGNED, 2, 0, "importing it anyway"},
        {"k1", evil, 0, -1, 0, "does not match"},
        {"", evil, 0, 0, 0, "failed verification"}, /* without a key: the checksums */
        {"", signed_b, 0, 2, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *into = temp_dir();
        s.text[0] = 0;
        s.warnings = s.errors = 0;
        kiln_cache *d = open_keyed(ctx, into, cases[i].key);
        checked = -1;
        int64_t n = kiln_cache_import_bundle(d, cases[i].file, cases[i].flags, &checked);
        if (n != cases[i].want || checked != cases[i].checked)
            fprintf(stderr, "    case %zu: %lld entries, checked %d\n%s", i, (long long)n,
                    checked, s.text);
        CHECK(n == cases[i].want && checked == cases[i].checked);
        if (cases[i].says) CHECK_CONTAINS(s.text, cases[i].says);
        kiln_cache_stats st;
        kiln_cache_get_stats(d, &st);
        CHECK(st.entries == (n > 0 ? n : 0));
        kiln_cache_close(d);
        remove_tree(into);
        free(into);
    }
    kiln_ctx_free(ctx);
    remove_tree(dir);
    remove_tree(out);
    free(dir);
    free(out);
}

static int import_into(const char *path, Sink *s) {
    char *into = temp_dir();
    kiln_ctx *ctx = kiln_ctx_new();
    memset(s, 0, sizeof *s);
    kiln_ctx_set_diag(ctx, sink, s);
    kiln_cache *d = open_keyed(ctx, into, "");
    int64_t n = kiln_cache_import(d, path);
    kiln_cache_close(d);
    kiln_ctx_free(ctx);
    remove_tree(into);
    free(into);
    return (int)n;
}

static int write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(p, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

TEST(cache_bundle_reader_takes_hostile_files) {
    char *dir = temp_dir(), *out = temp_dir();
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_cache *c = open_keyed(ctx, dir, "");
    unsigned char blob[3000];
    for (size_t i = 0; i < sizeof blob; i++) blob[i] = (unsigned char)(i * 7);
    for (int i = 0; i < 6; i++) {
        char src[32];
        snprintf(src, sizeof src, "hostile %d", i);
        kiln_cache_key k = key_of(src);
        kiln_cache_put(c, &k, "so", src, "cpu:x86_64", blob, sizeof blob, 1);
    }
    char good[600], bad[600];
    snprintf(good, sizeof good, "%s/good.kiln", out);
    snprintf(bad, sizeof bad, "%s/bad.kiln", out);
    CHECK(kiln_cache_export(c, good, NULL, 0) == 6);
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    Sink s;
    CHECK(import_into(good, &s) == 6);
    /* special files are refused by what they are, before anything opens them */
    char fifo[600], sock[600];
    snprintf(fifo, sizeof fifo, "%s/f.kiln", out);
    snprintf(sock, sizeof sock, "%s/s.kiln", out);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(import_into(fifo, &s) == -1);
    CHECK_CONTAINS(s.text, "is a FIFO, not a bundle file");
    CHECK(import_into(out, &s) == -1);
    CHECK_CONTAINS(s.text, "is a directory, not a bundle file");
    CHECK(import_into("/dev/null", &s) == -1);
    CHECK_CONTAINS(s.text, "/dev/null is a character device, not a bundle file");
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {0};
    sa.sun_family = AF_UNIX;
    CHECK(strlen(sock) < sizeof sa.sun_path);
    memcpy(sa.sun_path, sock, strlen(sock) < sizeof sa.sun_path ? strlen(sock) : 0);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(import_into(sock, &s) == -1);
    CHECK_CONTAINS(s.text, "is a socket, not a bundle file");
    close(fd);
    /* truncated anywhere, or with any byte changed: an error or fewer entries, never a
     * crash (ASan runs this too) */
    FILE *f = fopen(good, "rb");
    unsigned char *data = malloc(1 << 20);
    size_t n = f && data ? fread(data, 1, 1 << 20, f) : 0;
    if (f) fclose(f);
    CHECK(n > 4096);
    int errors = 0;
    for (size_t cut = 0; cut < n; cut += n / 61 + 1) {
        CHECK(write_file(bad, data, cut) == 0);
        int r = import_into(bad, &s);
        CHECK(r <= 6 && (r >= 0 || s.errors > 0));
        errors += r < 0;
    }
    srand(7);
    for (int i = 0; i < 120; i++) {
        unsigned char *copy = malloc(n);
        memcpy(copy, data, n);
        for (int j = 0; j < 4; j++) copy[(size_t)rand() % n] ^= (unsigned char)(1 + rand() % 255);
        CHECK(write_file(bad, copy, n) == 0);
        int r = import_into(bad, &s);
        CHECK(r <= 6 && (r >= 0 || s.errors > 0));
        free(copy);
    }
    CHECK(errors > 0);
    free(data);
    /* lengths that lie, texts past kiln's bounds, a key of the wrong size: skipped */
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cp '%s' '%s' && sqlite3 '%s' \"UPDATE artifacts SET size = 4611686018427387904"
             " WHERE rowid = 1; UPDATE artifacts SET name = printf('%%.2000c', 'n') WHERE rowid = 2;"
             " UPDATE artifacts SET key = x'00' WHERE rowid = 3;"
             " UPDATE artifacts SET kind = 'a-kind-far-too-long' WHERE rowid = 4;\"",
             good, bad, bad);
    CHECK(system(cmd) == 0);
    CHECK(import_into(bad, &s) == 2);
    CHECK_CONTAINS(s.text, "4 entries of the bundle");
    /* more rows than kiln reads: refused up front, whatever the rows hold */
    snprintf(cmd, sizeof cmd,
             "rm -f '%s' && sqlite3 '%s' \"CREATE TABLE bundle(name, value);"
             " INSERT INTO bundle VALUES('format', 'kiln-bundle-1'); CREATE TABLE artifacts(x);"
             " WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i <= 1048576)"
             " INSERT INTO artifacts SELECT NULL FROM n;\"",
             bad, bad);
    CHECK(system(cmd) == 0);
    CHECK(import_into(bad, &s) == -1);
    CHECK_CONTAINS(s.text, "entries, more than kiln reads from one (1048576)");
    /* a view in place of a table is not run */
    snprintf(cmd, sizeof cmd,
             "rm -f '%s' && sqlite3 '%s' \"CREATE TABLE bundle(name, value);"
             " INSERT INTO bundle VALUES('format', 'kiln-bundle-1');"
             " CREATE VIEW artifacts AS SELECT 1 AS key, 2 AS kind, 3 AS name, 4 AS target,"
             " 5 AS size, 6 AS checksum, 7 AS created, 8 AS blob;\"",
             bad, bad);
    CHECK(system(cmd) == 0);
    CHECK(import_into(bad, &s) == -1);
    remove_tree(dir);
    remove_tree(out);
    free(dir);
    free(out);
}

TEST(hmac_sha256_in_pieces) {
    Hmac h;
    if (!hmac_load(&h)) {
        fprintf(stderr, "    (libcrypto not found: HMAC not checked)\n");
        return;
    }
    /* RFC 4231, test case 6: a 131-byte key (hashed first), fed in uneven pieces */
    uint8_t key[131], out[32], one[32];
    memset(key, 0xaa, sizeof key);
    static const char msg[] = "Test Using Larger Than Block-Size Key - Hash Key First";
    static const uint8_t want[32] = {0x60, 0xe4, 0x31, 0x59, 0x1e, 0xe0, 0xb6, 0x7f, 0x0d, 0x8a, 0x26,
                                     0xaa, 0xcb, 0xf5, 0xb7, 0x7f, 0x8e, 0x0b, 0xc6, 0x21, 0x37, 0x28,
                                     0xc5, 0x14, 0x05, 0x46, 0x04, 0x0f, 0x0e, 0xe3, 0x7f, 0x54};
    HmacStream st;
    CHECK(hmac_begin(&st, &h, key, sizeof key) == 0);
    size_t n = strlen(msg);
    hmac_update(&st, msg, 7);
    hmac_update(&st, msg + 7, 0);
    hmac_update(&st, msg + 7, n - 7);
    CHECK(hmac_end(&st, out) == 0);
    CHECK(memcmp(out, want, 32) == 0);
    CHECK(hmac_sha256(&h, key, sizeof key, msg, n, one) == 0 && memcmp(one, want, 32) == 0);
    /* and a short key, as the one-call form computes it */
    CHECK(hmac_begin(&st, &h, "Jefe", 4) == 0);
    hmac_update(&st, "what do ya want ", 16);
    hmac_update(&st, "for nothing?", 12);
    CHECK(hmac_end(&st, out) == 0);
    CHECK(hmac_sha256(&h, "Jefe", 4, "what do ya want for nothing?", 28, one) == 0);
    CHECK(memcmp(out, one, 32) == 0);
}

/* A write to a socket whose peer has closed, under SIGPIPE's default action: with the
 * hold it fails with EPIPE and the process lives on (without it the test binary dies),
 * nothing stays pending, and a SIGPIPE pending before is left alone. */
TEST(sigpipe_hold_survives_a_closed_peer) {
    struct sigaction dfl = {0}, old;
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, &old);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    close(sv[1]);
    SigpipeHold h;
    sigpipe_hold(&h);
    errno = 0;
    CHECK(write(sv[0], "x", 1) == -1 && errno == EPIPE);
    sigpipe_release(&h);
    sigset_t pending;
    sigemptyset(&pending);
    CHECK(sigpending(&pending) == 0 && !sigismember(&pending, SIGPIPE));
    sigset_t mask;
    CHECK(pthread_sigmask(SIG_SETMASK, NULL, &mask) == 0 && !sigismember(&mask, SIGPIPE));

    /* someone else's pending SIGPIPE (blocked by the caller) survives the hold */
    sigset_t pipe_only, before;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &before);
    raise(SIGPIPE);
    sigpipe_hold(&h);
    CHECK(write(sv[0], "x", 1) == -1 && errno == EPIPE);
    sigpipe_release(&h);
    CHECK(sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE));
    struct timespec zero = {0, 0};
    CHECK(sigtimedwait(&pipe_only, NULL, &zero) == SIGPIPE);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    close(sv[0]);
    sigaction(SIGPIPE, &old, NULL);
}
