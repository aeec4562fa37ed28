/* fuzz_util.h: what the cache's fuzz targets share (fuzz_bundle.c, fuzz_cache.c).
 *
 * A Reader hands out an input's bytes as the decisions of a structured
 * generator: row counts, SQLite values of a type the input picks (the
 * "right" one most of the time, else NULL, an integer, a real, text with
 * any bytes or a blob), strings and blobs.  When the input runs out every
 * read returns zeros, so every prefix of an input is an input.  Scratch
 * files live in one directory per process, removed at exit.
 */
#ifndef KILN_FUZZ_UTIL_H
#define KILN_FUZZ_UTIL_H

#include <dirent.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "kiln.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

typedef struct Reader {
    const uint8_t *p;
    size_t n;
} Reader;

static inline uint8_t rd_u8(Reader *r) {
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

static inline uint64_t rd_u64(Reader *r) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)rd_u8(r) << (8 * i);
    return v;
}

/* Up to max bytes, as many as a length byte says (and the input has). */
static inline size_t rd_bytes(Reader *r, size_t max, const uint8_t **out) {
    size_t n = rd_u8(r);
    if (n == 255) n = (size_t)rd_u8(r) << 8 | rd_u8(r); /* a long one */
    if (n > max) n = max;
    if (n > r->n) n = r->n;
    *out = r->p;
    r->p += n;
    r->n -= n;
    return n;
}

/* Exactly 16 bytes (zeros past the input's end). */
static inline void rd_key(Reader *r, uint8_t out[16]) {
    for (int i = 0; i < 16; i++) out[i] = rd_u8(r);
}

/* The checksum kiln keeps with an artifact (cache/key.c): XXH3-128, canonical
 * (big-endian), of the key, the kind as kiln reads it (to its first NUL) with a NUL,
 * and the blob. */
static inline void fz_checksum(const uint8_t key[16], const void *kind, size_t kindlen,
                               const void *p, size_t n, uint8_t out[16]) {
    const char *kd = kind;
    size_t kl = 0;
    while (kl < kindlen && kd[kl]) kl++;
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    XXH3_128bits_update(&st, key, 16);
    XXH3_128bits_update(&st, kd, kl);
    XXH3_128bits_update(&st, "", 1);
    XXH3_128bits_update(&st, p, n);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&st));
    memcpy(out, c.digest, 16);
}

/* What a column should hold. */
typedef struct Val {
    int type; /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB, SQLITE_NULL */
    int64_t i;
    double f;
    const void *p;
    size_t n;
} Val;

static inline Val v_int(int64_t i) { return (Val){SQLITE_INTEGER, i, 0, NULL, 0}; }
static inline Val v_text(const char *s) { return (Val){SQLITE_TEXT, 0, 0, s, strlen(s)}; }
static inline Val v_textn(const void *s, size_t n) { return (Val){SQLITE_TEXT, 0, 0, s, n}; }
static inline Val v_blob(const void *p, size_t n) { return (Val){SQLITE_BLOB, 0, 0, p, n}; }
static inline Val v_real(double f) { return (Val){SQLITE_FLOAT, 0, f, NULL, 0}; }

static inline void bind_val(sqlite3_stmt *s, int i, Val v) {
    switch (v.type) {
    case SQLITE_INTEGER: sqlite3_bind_int64(s, i, v.i); break;
    case SQLITE_FLOAT: sqlite3_bind_double(s, i, v.f); break;
    case SQLITE_TEXT: sqlite3_bind_text(s, i, v.p, (int)v.n, SQLITE_TRANSIENT); break;
    case SQLITE_BLOB: sqlite3_bind_blob(s, i, v.n ? v.p : "", (int)v.n, SQLITE_TRANSIENT); break;
    default: sqlite3_bind_null(s, i); break;
    }
}

/* Binds the right value five times in eight, else one the input makes up. */
static inline void bind_fuzz(sqlite3_stmt *s, int i, Reader *r, Val right) {
    uint8_t tag = rd_u8(r);
    const uint8_t *b;
    size_t n;
    switch (tag & 7) {
    case 5: bind_val(s, i, (Val){SQLITE_NULL, 0, 0, NULL, 0}); break;
    case 6:
        if (tag & 8) {
            bind_val(s, i, v_int((int64_t)rd_u64(r)));
        } else {
            uint64_t u = rd_u64(r);
            double f;
            memcpy(&f, &u, sizeof f);
            bind_val(s, i, v_real(f));
        }
        break;
    case 7:
        n = rd_bytes(r, 4096, &b);
        bind_val(s, i, (tag & 8) ? v_blob(b, n) : v_textn(b, n));
        break;
    default: bind_val(s, i, right); break;
    }
}

/* ---- scratch files ------------------------------------------------------------------- */

static char fz_dir[256];

static void fz_clean_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[600];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
}

static void fz_remove_dir(void) {
    char sub[300];
    snprintf(sub, sizeof sub, "%s/db", fz_dir);
    fz_clean_dir(sub);
    rmdir(sub);
    fz_clean_dir(fz_dir);
    rmdir(fz_dir);
}

/* A directory of this process's own (mode 0700, as kiln's cache wants). */
static inline const char *fz_scratch(void) {
    if (!fz_dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fz_dir, sizeof fz_dir, "%s/kiln-fuzz-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(fz_dir)) {
            perror("mkdtemp");
            abort();
        }
        atexit(fz_remove_dir);
    }
    return fz_dir;
}

static inline void fz_write(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

/* ---- diagnostics ---------------------------------------------------------------------- */

typedef struct Diags {
    int errors, warnings;
} Diags;

/* Every diagnostic must carry its text; a cache's diagnostics are warnings,
 * except the bundle functions', which report their failure as an error. */
static inline void fz_diag(void *ud, const kiln_diag *d) {
    Diags *D = ud;
    if (!d->formatted || !d->message) {
        fprintf(stderr, "fuzz: a diagnostic without its text\n");
        abort();
    }
    if (getenv("KILN_FUZZ_VERBOSE")) fprintf(stderr, "diag: %s\n", d->formatted);
    if (d->severity == KILN_ERROR) D->errors++;
    else D->warnings++;
}

#endif
