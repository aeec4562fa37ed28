/* fuzz_bundle.c: libFuzzer target over the bundle reader, kiln_cache_import
 * (what `kiln cache import FILE` runs on a file from anywhere).
 *
 * An input is
 *
 *     byte 0   bit 0: the rest is the bundle file itself (SQLite's file format
 *              and kiln's reader of it); else the rest describes a bundle that
 *              this target writes with SQLite (kiln's reader of the rows, of
 *              any type and size, without SQLite's format in the way);
 *              bit 1: import into a cache with a disk tier (kept for the
 *              process, small, so eviction runs) instead of a memory-only one
 *     rest     the file, or the description: a schema byte (bit 0 no `bundle`
 *              table, 1 no `facts`, 2 an `artifacts` table without its `blob`
 *              column), the format value, then rows of `artifacts` (key, kind,
 *              name, target, size, checksum, created, last_used, blob) and of
 *              `facts`, each value of the right type and content most of the
 *              time (checksums computed here) and of any type otherwise
 *
 * Checks beyond the sanitizers: a failed import reported an error; a
 * described row that is valid is imported and then found in the cache with
 * its bytes; the NVRTC facts a bundle brings parse or are refused
 * (kiln_nvrtc_target_from) without harm.
 */
#include "fuzz_util.h"

static kiln_cache *disk_cache; /* bit 1's cache, for the process */
static kiln_ctx *disk_ctx;
static Diags disk_diags;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *dir = fz_scratch();
    char db[300];
    snprintf(db, sizeof db, "%s/db", dir);
    disk_ctx = kiln_ctx_new();
    kiln_ctx_set_diag(disk_ctx, fz_diag, &disk_diags);
    kiln_cache_config cfg = {.dir = db, .max_bytes = 256 << 10, .memory_bytes = 64 << 10,
                             .remote = "", .remote_key = ""};
    disk_cache = kiln_cache_open(disk_ctx, &cfg);
    if (!disk_cache || !kiln_cache_path(disk_cache)) {
        fprintf(stderr, "fuzz_bundle: no disk tier in %s\n", db);
        abort();
    }
    return 0;
}

enum { MAX_ROWS = 8 };

typedef struct Row {
    uint8_t key[16];
    const uint8_t *blob;
    size_t len;
    bool valid; /* every check of kiln_cache_import passes */
} Row;

static const char *const kinds[] = {"so", "cubin", "ptx"};
static const char *const targets[] = {"cpu:x86_64", "cuda:sm_90", "cuda:sm_80"};
static const char good_facts[] = "1 4096 1700000000 0 1234 12040 4 75 80 89 90 /usr/lib/libnvrtc.so";

/* Writes the described bundle to path; fills rows, returns how many. */
static int write_bundle(const char *path, Reader *r, Row *rows, bool *ours) {
    uint8_t schema = rd_u8(r);
    *ours = !(schema & 1);
    sqlite3 *b;
    if (sqlite3_open_v2(path, &b, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        fprintf(stderr, "fuzz_bundle: cannot write %s\n", path);
        abort();
    }
    sqlite3_exec(b, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=512;"
                    "BEGIN", NULL, NULL, NULL);
    /* no constraints: a hostile bundle holds what it likes */
    sqlite3_exec(b, (schema & 4) ? "CREATE TABLE artifacts(key, kind, name, target, size, checksum,"
                                   " created, last_used)"
                                 : "CREATE TABLE artifacts(key, kind, name, target, size, checksum,"
                                   " created, last_used, blob)",
                 NULL, NULL, NULL);
    sqlite3_stmt *s;
    if (!(schema & 1)) {
        sqlite3_exec(b, "CREATE TABLE bundle(name, value)", NULL, NULL, NULL);
        int nb = 1 + rd_u8(r) % 3;
        for (int i = 0; i < nb; i++) {
            sqlite3_prepare_v2(b, "INSERT INTO bundle VALUES(?1, ?2)", -1, &s, NULL);
            /* the bundle is kiln's when every row is the format row (both tags right) */
            if (r->n > 0 && (r->p[0] & 7) >= 5) *ours = false;
            bind_fuzz(s, 1, r, v_text("format"));
            if (r->n > 0 && (r->p[0] & 7) >= 5) *ours = false;
            bind_fuzz(s, 2, r, v_text("kiln-bundle-1"));
            sqlite3_step(s);
            sqlite3_finalize(s);
        }
    }
    int nrows = rd_u8(r) % (MAX_ROWS + 1);
    for (int i = 0; i < nrows; i++) {
        Row *w = &rows[i];
        rd_key(r, w->key);
        uint8_t kc = rd_u8(r);
        const uint8_t *kb, *nb, *tb;
        size_t kn = rd_bytes(r, 24, &kb);
        size_t nn = rd_bytes(r, 300, &nb);
        uint8_t tc = rd_u8(r);
        size_t tn = rd_bytes(r, 80, &tb);
        w->len = rd_bytes(r, 2048, &w->blob);
        int64_t created = (int64_t)(rd_u64(r) & 0xffffffffffff);
        uint8_t sum[16];
        if (kc % 4 < 3)
            fz_checksum(w->key, kinds[kc % 4], strlen(kinds[kc % 4]), w->blob, w->len, sum);
        else
            fz_checksum(w->key, kb, kn, w->blob, w->len, sum);
        Val kind = kc % 4 < 3 ? v_text(kinds[kc % 4]) : v_textn(kb, kn);
        Val target = tc % 4 < 3 ? v_text(targets[tc % 4]) : v_textn(tb, tn);
        sqlite3_prepare_v2(b, (schema & 4) ? "INSERT INTO artifacts VALUES(?1,?2,?3,?4,?5,?6,?7,?8)"
                                           : "INSERT INTO artifacts VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)",
                           -1, &s, NULL);
        /* a row is valid when every value took its right form and holds what
         * kiln_cache_import accepts */
        const Reader mark = *r;
        bind_fuzz(s, 1, r, v_blob(w->key, 16));
        bind_fuzz(s, 2, r, kind);
        bind_fuzz(s, 3, r, v_textn(nb, nn));
        bind_fuzz(s, 4, r, target);
        bind_fuzz(s, 5, r, v_int((int64_t)w->len));
        bind_fuzz(s, 6, r, v_blob(sum, 16));
        bind_fuzz(s, 7, r, v_int(created));
        bind_fuzz(s, 8, r, v_int(created));
        if (!(schema & 4)) bind_fuzz(s, 9, r, v_blob(w->blob, w->len));
        /* the tags bind_fuzz read: each one's low three bits below 5 means right */
        Reader again = mark;
        bool right = true;
        for (int col = 0; col < ((schema & 4) ? 8 : 9); col++) {
            uint8_t tag = rd_u8(&again);
            if ((tag & 7) >= 5) {
                right = false;
                break;
            }
        }
        w->valid = right && !(schema & 4) && kc % 4 < 3 && w->len > 0;
        sqlite3_step(s);
        sqlite3_finalize(s);
    }
    if (!(schema & 2)) {
        sqlite3_exec(b, "CREATE TABLE facts(name, value)", NULL, NULL, NULL);
        int nf = rd_u8(r) % 3;
        for (int i = 0; i < nf; i++) {
            const uint8_t *vb;
            uint8_t vc = rd_u8(r);
            size_t vn = rd_bytes(r, 1500, &vb);
            sqlite3_prepare_v2(b, "INSERT INTO facts VALUES(?1, ?2)", -1, &s, NULL);
            bind_fuzz(s, 1, r, v_text("nvrtc|/usr/lib|x|0|0"));
            bind_fuzz(s, 2, r, (vc & 1) ? v_text(good_facts) : v_textn(vb, vn));
            sqlite3_step(s);
            sqlite3_finalize(s);
        }
    }
    sqlite3_exec(b, "COMMIT", NULL, NULL, NULL);
    if (sqlite3_close(b) != SQLITE_OK) {
        fprintf(stderr, "fuzz_bundle: the bundle did not close\n");
        abort();
    }
    return nrows;
}

/* The bundle's NVRTC facts, as a machine without NVRTC would use them. */
static void use_facts(kiln_cache *c) {
    char facts[1100], target[512];
    if (!kiln_cache_fact(c, KILN_NVRTC_IMPORTED_FACTS, facts, sizeof facts)) return;
    kiln_options o = {.target = KILN_TARGET_CUDA};
    for (int arch = 70; arch <= 100; arch += 10)
        for (int ptx = 0; ptx < 2; ptx++)
            if (kiln_nvrtc_target_from(facts, 0, &o, arch, ptx, target, sizeof target) == 0)
                (void)strlen(target);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint8_t mode = data[0];
    Reader r = {data + 1, size - 1};
    char path[400], side[420];
    snprintf(path, sizeof path, "%s/bundle.db", fz_scratch());
    static const char *const sides[] = {"-journal", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(side, sizeof side, "%s%s", path, sides[i]);
        unlink(side);
    }
    unlink(path);
    Row rows[MAX_ROWS];
    int nrows = 0;
    bool ours = false;
    if (mode & 1)
        fz_write(path, r.p, r.n);
    else
        nrows = write_bundle(path, &r, rows, &ours);

    kiln_ctx *ctx = disk_ctx;
    kiln_cache *c = disk_cache;
    Diags *D = &disk_diags;
    Diags mine = {0, 0};
    if (!(mode & 2)) {
        ctx = kiln_ctx_new();
        kiln_ctx_set_diag(ctx, fz_diag, &mine);
        kiln_cache_config cfg = {.dir = "", .memory_bytes = 1 << 20, .remote = "",
                                 .remote_key = ""};
        c = kiln_cache_open(ctx, &cfg);
        D = &mine;
    }
    *D = (Diags){0, 0};
    int64_t n = kiln_cache_import(c, path);
    if (n < 0 && D->errors == 0) {
        fprintf(stderr, "fuzz_bundle: kiln_cache_import failed without an error\n");
        abort();
    }
    int nvalid = 0;
    for (int i = 0; i < nrows && ours; i++) {
        if (!rows[i].valid) continue;
        nvalid++;
        void *blob = NULL;
        size_t len = 0;
        char kind[16];
        kiln_cache_key k;
        memcpy(k.b, rows[i].key, 16);
        if (kiln_cache_get(c, &k, &blob, &len, kind) != 1) {
            fprintf(stderr, "fuzz_bundle: a valid row of the bundle was not imported\n");
            abort();
        }
        /* the memory-only cache is new: what it holds is this bundle's (the first
         * good row of a key wins in the memory tier) */
        bool same = false;
        for (int j = 0; j < nrows && !same; j++)
            same = !memcmp(rows[j].key, k.b, 16) && rows[j].len == len &&
                   !memcmp(rows[j].blob, blob, len);
        if (!(mode & 2) && !same) {
            fprintf(stderr, "fuzz_bundle: an imported row came back with other bytes\n");
            abort();
        }
        free(blob);
    }
    if (nvalid && n < nvalid) {
        fprintf(stderr, "fuzz_bundle: %d valid rows, %lld imported\n", nvalid, (long long)n);
        abort();
    }
    if (mode & 2) {
        use_facts(c);
    } else {
        kiln_cache_close(c);
        kiln_ctx_free(ctx);
    }
    return 0;
}
