/* test_cache.c: the artifact cache's tiers, checks and bundles, in one
 * process (the multi-process scenarios are tests/python/test_cache.py). */
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/remote.h"
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
    CHECK(kiln_cache_wait(a, &k, &b, &len, NULL) == 0);
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
