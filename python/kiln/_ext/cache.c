/* cache.c: the artifact cache as the extension uses it.
 *
 * The module opens one kiln_cache at its first build (not at import: SQLite
 * is not touched by `import kiln`).  ext_cached_build is the path every CPU
 * and CUDA build takes: key, lookup through the tiers, single flight across
 * processes, the build itself, the store.  All of it runs with the GIL
 * released; the cache's warnings are collected under a lock meanwhile and
 * given to Python's warnings module (kiln.CacheWarning) once the GIL is back.
 *
 * Waits: a wait for another process's build polls the build context's
 * interrupt hook (ext_interrupted: Ctrl-C becomes KeyboardInterrupt) and ends
 * within KILN_CACHE_LEASE_MS in all, after which this process builds.
 *
 * fork: the handlers registered at the first use hold the open lock, the
 * cache's own lock and the warnings' lock across fork(), so no thread of the
 * parent is inside the cache (or SQLite) when the child is made.  The child
 * abandons the parent's cache, unclosed (its database connection is the
 * parent's), and opens its own at its first use.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "cache.h"

#include "obs.h"

/* claim-and-wait rounds of one build (a round ends when the holder dies, releases or
 * lets its lease lapse); then it builds without a claim */
enum { MAX_ROUNDS = 16 };

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER; /* guards the lazy open */
static ModState *fork_state;     /* the module's state, for the fork handlers */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static pthread_t ahead_thread;
static bool ahead_started;

static void fork_prepare(void) {
    pthread_mutex_lock(&open_mu);
    if (!fork_state) return;
    kiln_cache_fork_prepare(fork_state->cache);
    pthread_mutex_lock(&fork_state->cache_warn_mu);
}

static void fork_parent(void) {
    if (fork_state) {
        pthread_mutex_unlock(&fork_state->cache_warn_mu);
        kiln_cache_fork_parent(fork_state->cache);
    }
    pthread_mutex_unlock(&open_mu);
}

static void fork_child(void) {
    /* the child has only the forking thread: it re-makes the locks it held
     * and leaves the parent's cache unclosed (closing could checkpoint or
     * remove files the parent still uses) */
    pthread_mutex_init(&open_mu, NULL);
    ahead_started = false;
    if (!fork_state) return;
    pthread_mutex_init(&fork_state->cache_warn_mu, NULL);
    fork_state->cache = NULL;
}

static void register_fork(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

static void cache_diag(void *ud, const kiln_diag *d) {
    ModState *st = ud;
    pthread_mutex_lock(&st->cache_warn_mu);
    ext_text_diag(&st->cache_warn, d);
    pthread_mutex_unlock(&st->cache_warn_mu);
}

kiln_cache *ext_get_cache(ModState *st) {
    pthread_once(&fork_once, register_fork);
    pthread_mutex_lock(&open_mu);
    fork_state = st;
    if (!st->cache) {
        if (!st->cache_ctx) st->cache_ctx = kiln_ctx_new();
        if (st->cache_ctx) {
            kiln_ctx_set_diag(st->cache_ctx, cache_diag, st);
            st->cache = kiln_cache_open(st->cache_ctx, NULL);
        }
    }
    kiln_cache *c = st->cache;
    pthread_mutex_unlock(&open_mu);
    return c;
}

/* Gives the collected warnings to Python, one warning per line group.  With
 * the GIL.  Returns -1 when a warning filter turned one into an exception. */
static int flush_warnings(ModState *st) {
    pthread_mutex_lock(&st->cache_warn_mu);
    TextSink t = st->cache_warn;
    memset(&st->cache_warn, 0, sizeof st->cache_warn);
    pthread_mutex_unlock(&st->cache_warn_mu);
    int rc = 0;
    if (t.n) {
        PyObject *msg = PyUnicode_DecodeUTF8(t.buf, (Py_ssize_t)t.n, "replace");
        if (!msg || PyErr_WarnEx(st->CacheWarning, PyUnicode_AsUTF8(msg), 1) < 0) rc = -1;
        Py_XDECREF(msg);
    }
    PyMem_RawFree(t.buf);
    return rc;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Whether a cached artifact can be used: a CPU shared object must be whole (a damaged
 * entry, bundle or remote record is then a miss, and the build replaces it). */
static bool artifact_ok(const char *short_target, const ExtArtifact *a) {
    if (!short_target || strncmp(short_target, "cpu", 3) != 0) return true;
    return kiln_cpu_blob_ok(a->blob, a->len) != 0;
}

int ext_cached_build_nogil(ModState *st, kiln_ctx *ctx, const char *src, size_t len,
                           const char *target, int key_flags, const char *short_target,
                           const char *name, ext_build_fn build, void *ud, ExtArtifact *out) {
    memset(out, 0, sizeof *out);
    int rc = 0;
    kiln_cache *c = target ? ext_get_cache(st) : NULL;
    kiln_cache_key k;
    if (c) {
        kiln_cache_key_of(src, len, target, key_flags, &k);
        kiln_cache_key_hex(&k, out->key);
        /* Single flight: look; claim (which looks again); or wait for the claim's
         * holder, and claim again if it ends without a result.  All the waiting
         * together lasts at most one lease; then this process builds. */
        double t0 = ext_obs_us();
        int looked = 0;
        int tier = kiln_cache_get_tier(c, &k, &out->blob, &out->len, out->kind, &looked);
        out->hit = tier != 0;
        double give_up = now_ms() + KILN_CACHE_LEASE_MS;
        for (int round = 0; !out->hit && round < MAX_ROUNDS; round++) {
            int cl = kiln_cache_claim(c, &k, KILN_CACHE_LEASE_MS, &out->blob, &out->len,
                                      out->kind);
            if (cl == 2) out->hit = 1;
            if (cl != 0) break;
            double left = give_up - now_ms();
            if (left < 1) break;
            int w = kiln_cache_wait(c, &k, ctx, (int)left, &out->blob, &out->len, out->kind);
            if (w < 0) {
                rc = -1; /* interrupted: nothing claimed, nothing written */
                break;
            }
            out->hit = w;
        }
        /* a result another process stored meanwhile came from the disk (or remote) tier */
        if (!tier && out->hit)
            tier = looked & 1 << KILN_CACHE_DISK ? KILN_CACHE_DISK : KILN_CACHE_REMOTE;
        ext_obs_cache(st, tier, looked, out->key, t0, (ext_obs_us() - t0) / 1e3);
    }
    if (out->hit && !artifact_ok(short_target, out)) { /* damaged: built again, replaced */
        free(out->blob);
        out->blob = NULL;
        out->hit = 0;
    }
    if (!out->hit && rc == 0) {
        double t0 = now_ms(), t0us = ext_obs_us();
        rc = build(ud, ctx, &out->blob, &out->len, out->kind);
        double ms = now_ms() - t0;
        bool gpu = short_target && strncmp(short_target, "cuda", 4) == 0;
        ext_obs_stage(st, gpu ? OBS_NVRTC : OBS_CC, t0us, ms, NULL);
        if (c && rc == 0)
            kiln_cache_put(c, &k, out->kind, name, short_target, out->blob, out->len, ms);
        else if (c)
            kiln_cache_release(c, &k); /* a failed build is never cached */
    }
    if (rc < 0) {
        free(out->blob);
        out->blob = NULL;
    }
    return rc;
}

int ext_cached_build(ModState *st, const char *src, size_t len, const char *target,
                     int key_flags, const char *short_target, const char *name,
                     ext_build_fn build, void *ud, ExtArtifact *out) {
    memset(out, 0, sizeof *out);
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) {
        PyErr_NoMemory();
        return -1;
    }
    TextSink t = {NULL, 0, 0, 0};
    kiln_ctx_set_diag(ctx, ext_text_diag, &t);
    /* every wait (a claim held elsewhere, the C compiler) polls it */
    kiln_ctx_set_interrupt(ctx, ext_interrupted, NULL);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ext_cached_build_nogil(st, ctx, src, len, target, key_flags, short_target, name, build,
                                ud, out);
    Py_END_ALLOW_THREADS
    kiln_ctx_free(ctx);
    if (rc < 0) {
        ext_raise_text(st, &t, "kiln: the build failed");
        PyMem_RawFree(t.buf);
        free(out->blob);
        out->blob = NULL;
        /* the failure is the error to show; warnings still go out */
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        if (flush_warnings(st) < 0) PyErr_Clear();
        PyErr_Restore(et, ev, tb);
        return -1;
    }
    PyMem_RawFree(t.buf);
    if (flush_warnings(st) < 0) {
        free(out->blob);
        out->blob = NULL;
        return -1;
    }
    return 0;
}

int ext_cached_lookup(ModState *st, const char *src, size_t len, const char *target,
                      ExtArtifact *out) {
    memset(out, 0, sizeof *out);
    Py_BEGIN_ALLOW_THREADS
    kiln_cache *c = ext_get_cache(st);
    if (c) {
        kiln_cache_key k;
        kiln_cache_key_of(src, len, target, 0, &k);
        kiln_cache_key_hex(&k, out->key);
        double t0 = ext_obs_us();
        int looked = 0;
        int tier = kiln_cache_get_tier(c, &k, &out->blob, &out->len, out->kind, &looked);
        out->hit = tier != 0;
        ext_obs_cache(st, tier, looked, out->key, t0, (ext_obs_us() - t0) / 1e3);
        if (out->hit && !artifact_ok(kiln_cpu_target_name(), out)) { /* a miss: built anew */
            free(out->blob);
            out->blob = NULL;
            out->hit = 0;
        }
    }
    Py_END_ALLOW_THREADS
    if (flush_warnings(st) < 0) {
        free(out->blob);
        out->blob = NULL;
        return -1;
    }
    return out->hit;
}

/* ---- opening ahead ------------------------------------------------------------------
 * Opening the database (about 1 ms: SQLite's first statement maps the WAL) is
 * done on a thread started at the first kernel definition, so it overlaps with
 * what the program does before its first call.  (OpenMP's runtime, 0.15 ms, is
 * loaded by the first Dispatcher's init, on the calling thread: ext_omp_load sets
 * its spin count through the environment, which only the GIL's holder may touch.) */

static void *ahead_main(void *arg) {
    ext_get_cache(arg);
    return NULL;
}

static void ahead_join(void) {
    if (ahead_started) pthread_join(ahead_thread, NULL);
    ahead_started = false;
}

static PyObject *f_open_ahead(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    pthread_once(&fork_once, register_fork);
    if (!ahead_started && pthread_create(&ahead_thread, NULL, ahead_main, st) == 0) {
        ahead_started = true;
        static bool registered;
        if (!registered) {
            registered = true;
            Py_AtExit(ahead_join);
        }
    }
    Py_RETURN_NONE;
}

/* ---- kiln._kiln.cache_* --------------------------------------------------------- */

/* A path or address from the environment as Python has it: bytes that are
 * not UTF-8 decode as os.fsdecode would (surrogateescape); None for NULL. */
static PyObject *fs_str(const char *p) {
    if (!p) Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(p);
}

/* The cache's path and remote address, copied: the strings are the cache's */
typedef struct {
    char path[4300], remote[1024];
    bool has_path, has_remote;
} Where;

static void where_of(kiln_cache *c, Where *w) {
    const char *p = kiln_cache_path(c), *r = kiln_cache_remote(c);
    w->has_path = p != NULL;
    w->has_remote = r != NULL;
    snprintf(w->path, sizeof w->path, "%s", p ? p : "");
    snprintf(w->remote, sizeof w->remote, "%s", r ? r : "");
}

static PyObject *f_cache_stats(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    kiln_cache_stats s;
    Where w;
    kiln_cache *c;
    memset(&s, 0, sizeof s);
    Py_BEGIN_ALLOW_THREADS
    c = ext_get_cache(st);
    if (c) {
        kiln_cache_get_stats(c, &s);
        where_of(c, &w);
    }
    Py_END_ALLOW_THREADS
    if (!c) return PyErr_NoMemory();
    if (flush_warnings(st) < 0) return NULL;
    PyObject *path = fs_str(w.has_path ? w.path : NULL);
    PyObject *remote = path ? fs_str(w.has_remote ? w.remote : NULL) : NULL;
    if (!remote) {
        Py_XDECREF(path);
        return NULL;
    }
    return Py_BuildValue(
        "{s:{s:L,s:L,s:L,s:L},"
        "s:{s:N,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:d},"
        "s:{s:N,s:L,s:L,s:L},"
        "s:L,s:d,s:L,s:L}",
        "memory", "hits", (long long)s.mem_hits, "misses", (long long)s.mem_misses, "entries",
        (long long)s.mem_entries, "bytes", (long long)s.mem_bytes,
        "disk", "path", path, "hits", (long long)s.disk_hits, "misses",
        (long long)s.disk_misses, "entries", (long long)s.entries, "bytes", (long long)s.bytes,
        "max_bytes", (long long)s.max_bytes, "evictions", (long long)s.total_evictions,
        "verify_failures", (long long)s.verify_failures, "all_compiles", (long long)s.total_compiles,
        "all_verify_failures", (long long)s.total_verify_failures, "all_compile_ms",
        s.total_compile_ms,
        "remote", "url", remote, "hits", (long long)s.remote_hits, "misses",
        (long long)s.remote_misses, "rejected", (long long)s.remote_rejected,
        "compiles", (long long)s.compiles, "compile_ms", s.compile_ms, "waits",
        (long long)s.waits, "verify_failures", (long long)s.verify_failures);
}

static PyObject *f_cache_clear(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    int64_t n = 0;
    Py_BEGIN_ALLOW_THREADS
    kiln_cache *c = ext_get_cache(st);
    if (c) n = kiln_cache_clear(c);
    Py_END_ALLOW_THREADS
    if (flush_warnings(st) < 0) return NULL;
    return PyLong_FromLongLong(n);
}

static PyObject *f_cache_prune(PyObject *m, PyObject *arg) {
    ModState *st = ext_state(m);
    long long max = PyLong_AsLongLong(arg);
    if (max == -1 && PyErr_Occurred()) return NULL;
    int64_t n = 0;
    Py_BEGIN_ALLOW_THREADS
    kiln_cache *c = ext_get_cache(st);
    if (c) n = kiln_cache_prune(c, max);
    Py_END_ALLOW_THREADS
    if (flush_warnings(st) < 0) return NULL;
    return PyLong_FromLongLong(n);
}

/* The entries, copied out of the cache without the GIL (a callback that made
 * Python objects could run a finalizer that lets another thread fork while
 * this one holds the cache's lock). */
typedef struct {
    char hex[33], kind[16], name[128], target[64];
    int64_t size, created_ms, last_used_ms, hits;
    double compile_ms;
} Row;

typedef struct {
    Row *rows;
    size_t n, cap;
    bool failed;
} Rows;

static void list_one(void *ud, const kiln_cache_entry *e) {
    Rows *r = ud;
    if (r->failed) return;
    if (r->n == r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : 64;
        Row *nr = PyMem_RawRealloc(r->rows, ncap * sizeof *nr);
        if (!nr) {
            r->failed = true;
            return;
        }
        r->rows = nr;
        r->cap = ncap;
    }
    Row *w = &r->rows[r->n++];
    kiln_cache_key_hex(&e->key, w->hex);
    snprintf(w->kind, sizeof w->kind, "%s", e->kind ? e->kind : "");
    snprintf(w->name, sizeof w->name, "%s", e->name ? e->name : "");
    snprintf(w->target, sizeof w->target, "%s", e->target ? e->target : "");
    w->size = e->size;
    w->created_ms = e->created_ms;
    w->last_used_ms = e->last_used_ms;
    w->hits = e->hits;
    w->compile_ms = e->compile_ms;
}

/* Text that came from a file (an imported bundle may hold any bytes) */
static PyObject *text(const char *s) {
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

/* [(key, kind, name, target, size, created_ms, last_used_ms, hits, compile_ms)], newest use
 * first */
static PyObject *f_cache_entries(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    Rows r = {NULL, 0, 0, false};
    Py_BEGIN_ALLOW_THREADS
    kiln_cache *c = ext_get_cache(st);
    if (c) kiln_cache_list(c, list_one, &r);
    Py_END_ALLOW_THREADS
    PyObject *list = r.failed ? PyErr_NoMemory() : PyList_New((Py_ssize_t)r.n);
    for (size_t i = 0; list && i < r.n; i++) {
        Row *w = &r.rows[i];
        PyObject *t = Py_BuildValue("(sNNNLLLLd)", w->hex, text(w->kind), text(w->name),
                                    text(w->target), (long long)w->size,
                                    (long long)w->created_ms, (long long)w->last_used_ms,
                                    (long long)w->hits, w->compile_ms);
        if (!t) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    PyMem_RawFree(r.rows);
    if (list && flush_warnings(st) < 0) Py_CLEAR(list);
    return list;
}

static PyObject *f_cache_where(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    Where w;
    kiln_cache *c;
    Py_BEGIN_ALLOW_THREADS
    c = ext_get_cache(st);
    if (c) where_of(c, &w);
    Py_END_ALLOW_THREADS
    if (flush_warnings(st) < 0) return NULL;
    if (!c) return PyErr_NoMemory();
    return Py_BuildValue("(NN)", fs_str(w.has_path ? w.path : NULL),
                         fs_str(w.has_remote ? w.remote : NULL));
}

/* Bundles: errors come through the cache's context as text; raise them. */
static PyObject *bundle_result(ModState *st, int64_t n) {
    pthread_mutex_lock(&st->cache_warn_mu);
    TextSink t = st->cache_warn;
    memset(&st->cache_warn, 0, sizeof st->cache_warn);
    pthread_mutex_unlock(&st->cache_warn_mu);
    PyObject *r = NULL;
    if (n < 0) {
        PyObject *msg = t.n ? PyUnicode_DecodeUTF8(t.buf, (Py_ssize_t)t.n, "replace")
                            : PyUnicode_FromString("the bundle could not be moved");
        if (msg) {
            PyErr_SetObject(st->CacheError, msg);
            Py_DECREF(msg);
        }
    } else {
        PyObject *msg = t.n ? PyUnicode_DecodeUTF8(t.buf, (Py_ssize_t)t.n, "replace") : NULL;
        if (t.n && (!msg || PyErr_WarnEx(st->CacheWarning, PyUnicode_AsUTF8(msg), 1) < 0)) {
            Py_XDECREF(msg);
            PyMem_RawFree(t.buf);
            return NULL;
        }
        Py_XDECREF(msg);
        r = PyLong_FromLongLong(n);
    }
    PyMem_RawFree(t.buf);
    return r;
}

/* cache_export(path, [target prefixes]) -> int */
static PyObject *f_cache_export(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    PyObject *pathobj, *targets;
    if (!PyArg_ParseTuple(args, "O&O", PyUnicode_FSConverter, &pathobj, &targets)) return NULL;
    PyObject *seq = PySequence_Fast(targets, "targets must be a list of strings");
    if (!seq) {
        Py_DECREF(pathobj);
        return NULL;
    }
    Py_ssize_t nt = PySequence_Fast_GET_SIZE(seq);
    const char **tv = PyMem_Malloc(sizeof(char *) * (size_t)(nt + 1));
    for (Py_ssize_t i = 0; tv && i < nt; i++) {
        tv[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
        if (!tv[i]) {
            PyMem_Free(tv);
            Py_DECREF(seq);
            Py_DECREF(pathobj);
            return NULL;
        }
    }
    if (!tv) {
        Py_DECREF(seq);
        Py_DECREF(pathobj);
        return PyErr_NoMemory();
    }
    const char *path = PyBytes_AS_STRING(pathobj);
    int64_t n = -1;
    Py_BEGIN_ALLOW_THREADS
    kiln_cache *c = ext_get_cache(st);
    if (c) n = kiln_cache_export(c, path, tv, (int)nt);
    Py_END_ALLOW_THREADS
    PyMem_Free(tv);
    Py_DECREF(seq);
    Py_DECREF(pathobj);
    return bundle_result(st, n);
}

/* cache_import(path, trust_unsigned) -> int */
static PyObject *f_cache_import(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    PyObject *pathobj;
    int trust = 0;
    if (!PyArg_ParseTuple(args, "O&|p", PyUnicode_FSConverter, &pathobj, &trust)) return NULL;
    const char *path = PyBytes_AS_STRING(pathobj);
    int64_t n = -1;
    Py_BEGIN_ALLOW_THREADS
    kiln_cache *c = ext_get_cache(st);
    if (c) n = kiln_cache_import_bundle(c, path, trust ? KILN_IMPORT_TRUST_UNSIGNED : 0, NULL);
    Py_END_ALLOW_THREADS
    Py_DECREF(pathobj);
    return bundle_result(st, n);
}

/* Writes the disk hits counted in this process (at exit, and before reading the
 * cache's figures from another process). */
static PyObject *f_cache_flush(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&open_mu);
    kiln_cache *c = st->cache;
    if (c) kiln_cache_flush(c);
    pthread_mutex_unlock(&open_mu);
    Py_END_ALLOW_THREADS
    if (flush_warnings(st) < 0) return NULL;
    Py_RETURN_NONE;
}

/* Closes the cache; the next use opens it again from the environment. */
static PyObject *f_cache_reopen(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&open_mu); /* held while closing: a fork then waits */
    kiln_cache *c = st->cache;
    st->cache = NULL;
    kiln_cache_close(c);
    pthread_mutex_unlock(&open_mu);
    Py_END_ALLOW_THREADS
    if (flush_warnings(st) < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- facts: small named values in the disk tier (max-autotune's choices) ---------------- */

enum { FACT_MAX = 1024 }; /* bytes of a fact's value kiln reads back */

/* cache_fact(name) -> its value, or None */
static PyObject *f_cache_fact(PyObject *m, PyObject *arg) {
    ModState *st = ext_state(m);
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!name) return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "a fact's name is a str");
    char buf[FACT_MAX];
    int found = 0;
    Py_BEGIN_ALLOW_THREADS
    kiln_cache *c = ext_get_cache(st);
    if (c) found = kiln_cache_fact(c, name, buf, sizeof buf);
    Py_END_ALLOW_THREADS
    if (flush_warnings(st) < 0) return NULL;
    if (!found) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(buf, (Py_ssize_t)strlen(buf), "replace");
}

/* cache_set_fact(name, value) */
static PyObject *f_cache_set_fact(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    const char *name, *value;
    if (!PyArg_ParseTuple(args, "ss", &name, &value)) return NULL;
    if (strlen(value) >= FACT_MAX) {
        PyErr_Format(PyExc_ValueError, "a fact's value is shorter than %d bytes", FACT_MAX);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    kiln_cache *c = ext_get_cache(st);
    if (c) kiln_cache_set_fact(c, name, value);
    Py_END_ALLOW_THREADS
    if (flush_warnings(st) < 0) return NULL;
    Py_RETURN_NONE;
}

typedef struct {
    char **v; /* name, value, name, value... (malloc'd); NULL after running out of memory */
    size_t n, cap;
} FactList;

static void collect_fact(void *ud, const char *name, const char *value) {
    FactList *l = ud;
    if (!l->v && l->cap) return;
    if (l->n + 2 > l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, sizeof *v * cap);
        if (!v) {
            for (size_t i = 0; i < l->n; i++) free(l->v[i]);
            free(l->v);
            l->v = NULL;
            l->cap = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = strdup(name);
    l->v[l->n++] = strdup(value);
}

/* cache_facts(prefix) -> [(name, value), ...] in name order */
static PyObject *f_cache_facts(PyObject *m, PyObject *arg) {
    ModState *st = ext_state(m);
    const char *prefix = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!prefix) return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "a prefix is a str");
    FactList l = {NULL, 0, 0};
    Py_BEGIN_ALLOW_THREADS
    kiln_cache *c = ext_get_cache(st);
    if (c) kiln_cache_facts(c, prefix, collect_fact, &l);
    Py_END_ALLOW_THREADS
    PyObject *out = l.v || !l.cap ? PyList_New(0) : PyErr_NoMemory();
    for (size_t i = 0; out && i + 1 < l.n; i += 2) {
        PyObject *t = l.v[i] && l.v[i + 1] ? Py_BuildValue("(ss)", l.v[i], l.v[i + 1]) : NULL;
        if (!t || PyList_Append(out, t) < 0) Py_CLEAR(out);
        Py_XDECREF(t);
    }
    for (size_t i = 0; l.v && i < l.n; i++) free(l.v[i]);
    free(l.v);
    if (flush_warnings(st) < 0) Py_CLEAR(out);
    return out;
}

void ext_cache_free(ModState *st) {
    ahead_join();
    kiln_cache_close(st->cache);
    st->cache = NULL;
    kiln_ctx_free(st->cache_ctx);
    st->cache_ctx = NULL;
    PyMem_RawFree(st->cache_warn.buf);
    memset(&st->cache_warn, 0, sizeof st->cache_warn);
}

PyMethodDef ext_cache_functions[] = {
    {"cache_stats", f_cache_stats, METH_NOARGS, "the cache's statistics, per tier"},
    {"cache_fact", f_cache_fact, METH_O, "cache_fact(name) -> value or None"},
    {"cache_set_fact", f_cache_set_fact, METH_VARARGS, "cache_set_fact(name, value)"},
    {"cache_facts", f_cache_facts, METH_O, "cache_facts(prefix) -> [(name, value)]"},
    {"cache_clear", f_cache_clear, METH_NOARGS, "empty the memory and disk tiers"},
    {"cache_prune", f_cache_prune, METH_O, "cache_prune(max_bytes or -1) -> entries evicted"},
    {"cache_entries", f_cache_entries, METH_NOARGS, "the disk tier's entries"},
    {"cache_where", f_cache_where, METH_NOARGS, "(database path or None, remote or None)"},
    {"cache_export", f_cache_export, METH_VARARGS, "cache_export(path, targets) -> count"},
    {"cache_import", f_cache_import, METH_VARARGS,
     "cache_import(path, trust_unsigned=False) -> count"},
    {"cache_reopen", f_cache_reopen, METH_NOARGS, "close the cache; reopen at next use"},
    {"cache_flush", f_cache_flush, METH_NOARGS, "write the disk hits counted so far"},
    {"open_ahead", f_open_ahead, METH_NOARGS, "open the cache on a thread (once per process)"},
    {NULL, NULL, 0, NULL}};
