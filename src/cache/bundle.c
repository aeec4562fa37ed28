/* bundle.c: bundles, the cache's entries in one file to carry to other machines.
 *
 * A bundle is an SQLite file: a `bundle` table (format, and a signature when
 * signed), `artifacts` as in kiln.db, and `facts` (NVRTC's version and
 * architectures, so a machine without NVRTC makes the same keys).  Export
 * writes a temporary file and renames it into place.
 *
 * A bundle holds machine code that every process using the cache will run,
 * so import reads it as hostile input: a regular file only, SQLite's
 * defensive mode with no triggers or views, a checked page format, bounds on
 * entries and their sizes (below), and every entry checked against its size
 * and checksum; what breaks them is an error or a skipped entry, never a crash
 * or a huge allocation.  When a bundle key is set (KILN_BUNDLE_KEY or
 * KILN_BUNDLE_KEY_FILE), a bundle must also carry a matching HMAC-SHA256 of
 * everything import reads, each value with its type and length; the
 * signature and the entries are read in one read transaction, so both see
 * one state of the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache/cache_int.h"

/* bundles are hostile input until checked: what kiln reads of one */
enum {
    BUNDLE_MAX_ENTRIES = 1 << 20, /* rows of `artifacts` (a 1 GiB cache holds ~60,000) */
    BUNDLE_MAX_BLOB = 256 << 20,  /* bytes of one shared object or cubin */
    BUNDLE_MAX_TEXT = 1024,       /* bytes of an entry's name or target */
    BUNDLE_KEY_FILE_MAX = 4096,   /* bytes of $KILN_BUNDLE_KEY_FILE */
    BUNDLE_MAX_FACT = 1024        /* bytes of an imported NVRTC fact */
};

static const char bundle_format[] = "kiln-bundle-1";
static const char sig_prefix[] = "hmac-sha256:";

static int64_t bundle_error(kiln_cache *c, sqlite3 *b, const char *what, const char *path) {
    diag_plain(c->ctx, KILN_ERROR, NULL, "%s %s: %s", what, path,
               b ? sqlite3_errmsg(b) : "cannot open it");
    return -1;
}

static void wipe_key(char *key, size_t len) {
    if (!key) return;
    volatile char *p = key;
    for (size_t i = 0; i < len; i++) p[i] = 0;
    free(key);
}

/* The bundle key: the configuration's, else $KILN_BUNDLE_KEY, else the
 * contents of $KILN_BUNDLE_KEY_FILE without trailing newlines.  1 with *key
 * malloc'd (wipe_key it), 0 when there is none, -1 after an error. */
static int bundle_key(kiln_cache *c, char **key, size_t *len) {
    *key = NULL;
    *len = 0;
    const char *k = c->cfg.bundle_key ? c->cfg.bundle_key : getenv("KILN_BUNDLE_KEY");
    if (k && *k) {
        *len = strlen(k);
        *key = strdup(k);
        return *key ? 1 : -1;
    }
    const char *file = getenv("KILN_BUNDLE_KEY_FILE");
    /* set but empty (a deployment's `KILN_BUNDLE_KEY=$UNSET_VARIABLE`) is an error, never
     * "no key": a key that went missing must not mean unchecked bundles */
    const char *empty = k && !c->cfg.bundle_key ? "KILN_BUNDLE_KEY"
                        : !c->cfg.bundle_key && file && !*file ? "KILN_BUNDLE_KEY_FILE" : NULL;
    if (empty) {
        diag_plain(c->ctx, KILN_ERROR, "unset it to use no key, or give it the key",
                   "%s is set but empty", empty);
        return -1;
    }
    if (c->cfg.bundle_key || !file) return 0;
    const char *why = NULL;
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    char buf[BUNDLE_KEY_FILE_MAX + 1];
    ssize_t n = -1;
    if (fd < 0 || fstat(fd, &st) != 0) why = strerror(errno);
    else if (!S_ISREG(st.st_mode)) why = "not a regular file";
    else if (st.st_size > BUNDLE_KEY_FILE_MAX) why = "longer than 4096 bytes";
    else if ((n = read(fd, buf, sizeof buf)) < 0) why = strerror(errno);
    if (fd >= 0) close(fd);
    while (!why && n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) n--;
    if (!why && n <= 0) why = "empty";
    if (!why && n > BUNDLE_KEY_FILE_MAX) why = "longer than 4096 bytes";
    if (why) {
        diag_plain(c->ctx, KILN_ERROR, "point KILN_BUNDLE_KEY_FILE at a file that holds the key",
                   "cannot use the bundle key file %s (KILN_BUNDLE_KEY_FILE): %s", file, why);
        memset(buf, 0, sizeof buf);
        return -1;
    }
    *key = malloc((size_t)n + 1);
    if (*key) {
        memcpy(*key, buf, (size_t)n);
        (*key)[n] = 0;
        *len = (size_t)n;
    }
    memset(buf, 0, sizeof buf);
    return *key ? 1 : -1;
}

static bool load_hmac(kiln_cache *c, Hmac *h, const char *path) {
    if (hmac_load(h)) return true;
    diag_plain(c->ctx, KILN_ERROR, "install OpenSSL's libcrypto, or unset the bundle key",
               "a bundle key is set but libcrypto (for HMAC-SHA256) cannot be loaded; the "
               "bundle %s is not used", path);
    return false;
}

/* One value into the MAC, with its type and length: no two different
 * contents make the same message. */
static void mac_value(HmacStream *h, sqlite3_stmt *s, int col) {
    uint8_t head[9];
    int t = sqlite3_column_type(s, col);
    uint64_t v = 0;
    const void *p = NULL;
    head[0] = (uint8_t)t;
    if (t == SQLITE_INTEGER) {
        v = (uint64_t)sqlite3_column_int64(s, col);
    } else if (t == SQLITE_FLOAT) {
        double d = sqlite3_column_double(s, col);
        memcpy(&v, &d, 8);
    } else if (t != SQLITE_NULL) {
        p = t == SQLITE_TEXT ? (const void *)sqlite3_column_text(s, col) : sqlite3_column_blob(s, col);
        v = (uint64_t)sqlite3_column_bytes(s, col);
    }
    for (int i = 0; i < 8; i++) head[1 + i] = (uint8_t)(v >> (8 * i));
    hmac_update(h, head, sizeof head);
    if (p) hmac_update(h, p, (size_t)v);
}

/* The HMAC-SHA256 of a bundle's contents under key: every row of `artifacts`
 * in key order (all its columns but last_used, which import does not read),
 * then every row of `facts` in name order.  0, or -1 with b's error. */
static int bundle_mac(sqlite3 *b, const Hmac *hm, const char *key, size_t keylen,
                      uint8_t out[32]) {
    static const char domain[] = "kiln-bundle-1 signature";
    static const char *const tables[] = {
        "SELECT key, kind, name, target, size, checksum, created, blob FROM artifacts ORDER BY key",
        "SELECT name, value FROM facts ORDER BY name"};
    HmacStream h;
    int ok = hmac_begin(&h, hm, key, keylen) == 0;
    hmac_update(&h, domain, sizeof domain);
    for (int t = 0; t < 2 && ok; t++) {
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(b, tables[t], -1, &s, NULL) != SQLITE_OK) {
            ok = t == 1; /* bundles made before facts existed have none */
            break;
        }
        int rc, ncol = sqlite3_column_count(s);
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            hmac_update(&h, t ? "f" : "a", 1);
            for (int i = 0; i < ncol; i++) mac_value(&h, s, i);
        }
        sqlite3_finalize(s);
        ok = rc == SQLITE_DONE;
    }
    return hmac_end(&h, out) == 0 && ok ? 0 : -1;
}

static const char *file_type(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    return "not a regular file";
}

/* Whether path is the cache's database file or its -wal or -shm (the same file by
 * device and inode, whatever the path's spelling). */
static bool exists_as_db(kiln_cache *c, const char *path) {
    struct stat p, d;
    if (!c->path || stat(path, &p) != 0) return false;
    static const char *const suffix[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < COUNTOF(suffix); i++) {
        char f[4200];
        snprintf(f, sizeof f, "%s%s", c->path, suffix[i]);
        if (stat(f, &d) == 0 && d.st_dev == p.st_dev && d.st_ino == p.st_ino) return true;
    }
    return false;
}

int64_t kiln_cache_export_bundle(kiln_cache *c, const char *path, const char *const *targets,
                                 int ntargets, int *is_signed) {
    if (is_signed) *is_signed = 0;
    /* the bundle is renamed into place: never over a device, FIFO or directory
     * (as root, a rename over /dev/null replaces it) */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        diag_plain(c->ctx, KILN_ERROR, "give the path of a new or regular file",
                   "%s is %s; kiln writes bundles only to regular files", path,
                   file_type(st.st_mode));
        return -1;
    }
    /* the directory the bundle goes into (SQLite's own message would name the
     * temporary file and "a database") */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        if (slash == dir) slash[1] = 0;
        else *slash = 0;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            diag_plain(c->ctx, KILN_ERROR, "create the directory first",
                       "cannot write the bundle %s: its directory %s does not exist", path,
                       dir);
            return -1;
        }
    }
    if (exists_as_db(c, path)) {
        diag_plain(c->ctx, KILN_ERROR, "give the path of another file",
                   "%s is kiln's cache database (or its journal); a bundle written over it "
                   "would replace the cache", path);
        return -1;
    }
    char *key;
    size_t keylen;
    int haskey = bundle_key(c, &key, &keylen);
    Hmac hm;
    if (haskey < 0 || (haskey && !load_hmac(c, &hm, path))) {
        wipe_key(key, keylen);
        return -1;
    }
    cache_lock(c);
    if (!c->db) {
        cache_unlock(c);
        wipe_key(key, keylen);
        diag_plain(c->ctx, KILN_ERROR, "set KILN_CACHE_DIR to a usable directory",
                   "kiln's disk cache is off; there is nothing to export to %s", path);
        return -1;
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    unlink(tmp);
    sqlite3 *b = NULL;
    int64_t n = -1;
    if (sqlite3_open_v2(tmp, &b, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
        sqlite3_exec(b,
                     "CREATE TABLE artifacts(key BLOB PRIMARY KEY, kind TEXT NOT NULL,"
                     " name TEXT NOT NULL, target TEXT NOT NULL, size INTEGER NOT NULL,"
                     " checksum BLOB NOT NULL, created INTEGER NOT NULL,"
                     " last_used INTEGER NOT NULL, blob BLOB NOT NULL);"
                     "CREATE TABLE bundle(name TEXT PRIMARY KEY, value TEXT);"
                     "INSERT INTO bundle VALUES('format', 'kiln-bundle-1');"
                     "CREATE TABLE facts(name TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "BEGIN;",
                     NULL, NULL, NULL) != SQLITE_OK) {
        bundle_error(c, b, "cannot write the bundle", tmp);
        goto done;
    }
    sqlite3_stmt *sel, *ins;
    if (sqlite3_prepare_v2(c->db,
                           "SELECT key, kind, name, target, size, checksum, created, last_used, "
                           "blob FROM artifacts",
                           -1, &sel, NULL) != SQLITE_OK) {
        bundle_error(c, c->db, "cannot read the cache", c->path);
        goto done;
    }
    if (sqlite3_prepare_v2(b, "INSERT INTO artifacts VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                           -1, &ins, NULL) != SQLITE_OK) {
        sqlite3_finalize(sel);
        bundle_error(c, b, "cannot write the bundle", tmp);
        goto done;
    }
    int64_t moved = 0;
    bool ok = true;
    while (ok && sqlite3_step(sel) == SQLITE_ROW) {
        const char *target = (const char *)sqlite3_column_text(sel, 3);
        bool want = ntargets == 0;
        for (int i = 0; i < ntargets && !want && target; i++)
            want = strncmp(target, targets[i], strlen(targets[i])) == 0;
        if (!want) continue;
        for (int i = 0; i < 9; i++) sqlite3_bind_value(ins, i + 1, sqlite3_column_value(sel, i));
        ok = sqlite3_step(ins) == SQLITE_DONE;
        sqlite3_reset(ins);
        moved++;
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    /* the facts (NVRTC's version and architectures) the keys were made with, so a
     * machine without NVRTC can make the same keys */
    if (ok && sqlite3_prepare_v2(c->db, "SELECT name, value FROM facts", -1, &sel, NULL) ==
                  SQLITE_OK) {
        if (sqlite3_prepare_v2(b, "INSERT INTO facts VALUES(?1, ?2)", -1, &ins, NULL) ==
            SQLITE_OK) {
            while (ok && sqlite3_step(sel) == SQLITE_ROW) {
                sqlite3_bind_value(ins, 1, sqlite3_column_value(sel, 0));
                sqlite3_bind_value(ins, 2, sqlite3_column_value(sel, 1));
                ok = sqlite3_step(ins) == SQLITE_DONE;
                sqlite3_reset(ins);
            }
            sqlite3_finalize(ins);
        }
        sqlite3_finalize(sel);
    }
    if (ok && haskey) {
        /* signed over what the bundle holds, read back as import will read it */
        uint8_t mac[32];
        char sig[sizeof sig_prefix + 64];
        ok = bundle_mac(b, &hm, key, keylen, mac) == 0;
        int w = snprintf(sig, sizeof sig, "%s", sig_prefix);
        for (int i = 0; i < 32; i++) w += snprintf(sig + w, sizeof sig - (size_t)w, "%02x", mac[i]);
        if (ok && sqlite3_prepare_v2(b, "INSERT INTO bundle VALUES('signature', ?1)", -1, &ins,
                                     NULL) == SQLITE_OK) {
            sqlite3_bind_text(ins, 1, sig, -1, SQLITE_STATIC);
            ok = sqlite3_step(ins) == SQLITE_DONE;
            sqlite3_finalize(ins);
        } else {
            ok = false;
        }
    }
    if (!ok || sqlite3_exec(b, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        bundle_error(c, b, "cannot write the bundle", tmp);
        goto done;
    }
    sqlite3_close(b);
    b = NULL;
    if (rename(tmp, path) != 0) {
        diag_plain(c->ctx, KILN_ERROR, NULL, "cannot write the bundle %s: %s", path,
                   strerror(errno));
        goto done;
    }
    n = moved;
    if (is_signed) *is_signed = haskey;
done:
    if (b) sqlite3_close(b);
    if (n < 0) unlink(tmp);
    cache_unlock(c);
    wipe_key(key, keylen);
    return n;
}

int64_t kiln_cache_export(kiln_cache *c, const char *path, const char *const *targets,
                          int ntargets) {
    return kiln_cache_export_bundle(c, path, targets, ntargets, NULL);
}

/* A connection to a file nobody vouches for yet: read only, no triggers,
 * views or schema functions run, corrupt pages detected, and no value longer
 * than the longest entry kiln takes (SQLite refuses it before allocating). */
static int open_untrusted(const char *path, sqlite3 **b) {
    int rc = sqlite3_open_v2(path, b, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_db_config(*b, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(*b, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
    sqlite3_db_config(*b, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
#endif
#ifdef SQLITE_DBCONFIG_ENABLE_VIEW
    sqlite3_db_config(*b, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
#endif
    sqlite3_limit(*b, SQLITE_LIMIT_LENGTH, BUNDLE_MAX_BLOB);
    sqlite3_busy_timeout(*b, DB_BUSY_MS);
    return sqlite3_exec(*b, "PRAGMA cell_size_check = ON; BEGIN", NULL, NULL, NULL);
}

/* The bundle's signature: 1 read into mac, 0 none, -1 there but malformed. */
static int read_signature(sqlite3 *b, uint8_t mac[32]) {
    sqlite3_stmt *s;
    int found = 0;
    if (sqlite3_prepare_v2(b, "SELECT value FROM bundle WHERE name = 'signature'", -1, &s, NULL) !=
        SQLITE_OK)
        return 0;
    if (sqlite3_step(s) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        size_t pl = sizeof sig_prefix - 1;
        found = -1;
        if (v && strlen(v) == pl + 64 && memcmp(v, sig_prefix, pl) == 0) {
            found = 1;
            for (int i = 0; i < 32 && found == 1; i++) {
                int hi = key_hexval(v[pl + 2 * i]), lo = key_hexval(v[pl + 2 * i + 1]);
                if (hi < 0 || lo < 0) found = -1;
                else mac[i] = (uint8_t)(hi << 4 | lo);
            }
        }
    }
    sqlite3_finalize(s);
    return found;
}

/* Checks the bundle's signature when a key is set: 0 go on (*checked set when
 * it matched), -1 after an error (refused). */
static int check_signature(kiln_cache *c, sqlite3 *b, const char *path, int flags, int *checked) {
    char *key;
    size_t keylen;
    int haskey = bundle_key(c, &key, &keylen);
    if (haskey <= 0) return haskey;
    Hmac hm;
    uint8_t want[32], mine[32];
    int rc = -1;
    int sig = read_signature(b, want);
    bool trust = flags & KILN_IMPORT_TRUST_UNSIGNED;
    const char *problem = NULL;
    if (!load_hmac(c, &hm, path)) goto done;
    if (sig == 0) {
        problem = " is not signed";
    } else if (sig < 0) {
        problem = " has a malformed signature";
    } else if (bundle_mac(b, &hm, key, keylen, mine) != 0) {
        bundle_error(c, b, "cannot read the bundle", path);
        goto done;
    } else {
        uint8_t d = 0;
        for (int i = 0; i < 32; i++) d |= (uint8_t)(want[i] ^ mine[i]); /* constant time */
        if (d) problem = ": signature does not match (the bundle was altered, or signed with "
                         "another key)";
    }
    if (!problem) {
        *checked = 1;
        rc = 0;
    } else if (trust) {
        diag_plain(c->ctx, KILN_WARNING, NULL,
                   "%s%s; importing it anyway (--trust-unsigned): its machine code will run in "
                   "processes that use this cache", path, problem);
        rc = 0;
    } else {
        diag_plain(c->ctx, KILN_ERROR,
                   "export it with the same KILN_BUNDLE_KEY, or pass --trust-unsigned if you "
                   "trust where it came from",
                   "%s%s; a bundle is code, and kiln refuses it while a bundle key "
                   "(KILN_BUNDLE_KEY or KILN_BUNDLE_KEY_FILE) is set", path, problem);
    }
done:
    wipe_key(key, keylen);
    return rc;
}

int64_t kiln_cache_import_bundle(kiln_cache *c, const char *path, int flags, int *checked) {
    int ok_sig = 0;
    if (checked) *checked = 0;
    struct stat st;
    /* stat, not open: opening a FIFO blocks, a device may act */
    if (stat(path, &st) != 0 || access(path, R_OK) != 0) {
        diag_plain(c->ctx, KILN_ERROR, NULL, "cannot read the bundle %s: %s", path,
                   strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        diag_plain(c->ctx, KILN_ERROR, "give the file that `kiln cache export` wrote",
                   "%s is %s, not a bundle file", path, file_type(st.st_mode));
        return -1;
    }
    sqlite3 *b = NULL;
    sqlite3_stmt *s = NULL;
    int64_t n = -1, bad = 0, rows = 0;
    if (open_untrusted(path, &b) != SQLITE_OK) {
        bundle_error(c, b, "cannot open the bundle", path);
        goto done;
    }
    const char *format = NULL;
    if (sqlite3_prepare_v2(b, "SELECT value FROM bundle WHERE name = 'format'", -1, &s, NULL) ==
            SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
        format = (const char *)sqlite3_column_text(s, 0);
    bool ours = format && strcmp(format, bundle_format) == 0;
    sqlite3_finalize(s);
    s = NULL;
    if (!ours) {
        diag_plain(c->ctx, KILN_ERROR, "make bundles with `kiln cache export`",
                   "%s is not a kiln bundle", path);
        goto done;
    }
    if (sqlite3_prepare_v2(b, "SELECT COUNT(*) FROM artifacts", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW) {
        bundle_error(c, b, "cannot read the bundle", path);
        goto done;
    }
    rows = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    s = NULL;
    if (rows > BUNDLE_MAX_ENTRIES) {
        char nb[32], lim[32];
        snprintf(nb, sizeof nb, "%lld", (long long)rows);
        snprintf(lim, sizeof lim, "%d", BUNDLE_MAX_ENTRIES);
        diag_plain(c->ctx, KILN_ERROR, "export fewer entries per bundle (--target)",
                   "the bundle %s holds %s entries, more than kiln reads from one (%s)", path, nb,
                   lim);
        goto done;
    }
    /* the signature is checked over the same read transaction as the rows
     * that are then imported: both passes see one state of the file */
    if (check_signature(c, b, path, flags, &ok_sig) != 0) goto done;
    if (sqlite3_prepare_v2(b, "SELECT key, kind, name, target, size, checksum, created, blob "
                              "FROM artifacts",
                           -1, &s, NULL) != SQLITE_OK) {
        bundle_error(c, b, "cannot read the bundle", path);
        goto done;
    }
    /* a cache with a lasting tier counts what one of them kept; a memory-only one (an
     * in-process import, the CLI refuses it) what its memory tier holds */
    bool lasting = c->db || remote_ok(c->remote);
    int64_t moved = 0, lost = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        kiln_cache_key k;
        const void *kb = sqlite3_column_blob(s, 0);
        int kblen = sqlite3_column_bytes(s, 0);
        const char *kind = (const char *)sqlite3_column_text(s, 1);
        int kindlen = sqlite3_column_bytes(s, 1);
        const char *name = (const char *)sqlite3_column_text(s, 2);
        int namelen = sqlite3_column_bytes(s, 2);
        const char *target = (const char *)sqlite3_column_text(s, 3);
        int targetlen = sqlite3_column_bytes(s, 3);
        int64_t size = sqlite3_column_int64(s, 4);
        const void *sum = sqlite3_column_blob(s, 5);
        int sumlen = sqlite3_column_bytes(s, 5);
        int64_t created = sqlite3_column_int64(s, 6);
        const void *blob = sqlite3_column_blob(s, 7);
        int blen = sqlite3_column_bytes(s, 7);
        uint8_t mine[16];
        /* every length is checked against the bytes SQLite handed over, and
         * the texts against kiln's bounds; NULs inside a text end it */
        if (!kb || kblen != 16 || !kind || kindlen >= 16 || (int)strlen(kind) != kindlen ||
            !name || namelen > BUNDLE_MAX_TEXT || !target || targetlen > BUNDLE_MAX_TEXT ||
            !blob || blen <= 0 || blen > BUNDLE_MAX_BLOB || size != blen || !sum ||
            sumlen != 16) {
            bad++;
            continue;
        }
        memcpy(k.b, kb, 16);
        key_checksum(&k, kind, blob, (size_t)blen, mine);
        if (memcmp(mine, sum, 16) != 0) { /* damaged, or filed under another key or kind */
            bad++;
            continue;
        }
        cache_lock(c);
        mem_put(c, &k, kind, blob, (size_t)blen);
        /* counted when a tier that outlives this process has it */
        bool kept = !lasting || (c->db && disk_put(c, &k, kind, name, target, blob,
                                                   (size_t)blen, created, false, 0) == SQLITE_OK);
        if (remote_ok(c->remote) &&
            remote_put(c->remote, &k, kind, name, target, blob, (size_t)blen) == 0)
            kept = true;
        cache_unlock(c);
        if (kept) moved++;
        else lost++;
    }
    sqlite3_finalize(s);
    s = NULL;
    if (rc != SQLITE_DONE) {
        bundle_error(c, b, "cannot read the bundle", path);
        goto done;
    }
    /* a bundle's NVRTC facts, for machines without NVRTC (bundles made before
     * facts existed have none) */
    if (sqlite3_prepare_v2(b, "SELECT value FROM facts WHERE name LIKE 'nvrtc|%'", -1, &s,
                           NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            const char *v = (const char *)sqlite3_column_text(s, 0);
            if (v && strlen(v) < BUNDLE_MAX_FACT) kiln_cache_set_fact(c, KILN_NVRTC_IMPORTED_FACTS, v);
        }
        sqlite3_finalize(s);
        s = NULL;
    }
    if (lost) {
        char nm[32], nl[32];
        snprintf(nm, sizeof nm, "%lld", (long long)moved);
        snprintf(nl, sizeof nl, "%lld", (long long)lost);
        diag_plain(c->ctx, KILN_ERROR, "free space (or raise the file size limit) and import "
                   "again: entries already there are kept",
                   "%s entries of the bundle %s were not stored (the warning above says why); "
                   "%s were", nl, path, nm);
        goto done;
    }
    n = moved;
    if (checked) *checked = ok_sig;
    if (bad) {
        char nb[32];
        snprintf(nb, sizeof nb, "%lld", (long long)bad);
        diag_plain(c->ctx, KILN_WARNING, NULL, "%s entries of the bundle %s failed verification and "
                   "were skipped", nb, path);
    }
done:
    sqlite3_finalize(s);
    sqlite3_close(b);
    return n;
}

int64_t kiln_cache_import(kiln_cache *c, const char *path) {
    return kiln_cache_import_bundle(c, path, 0, NULL);
}
