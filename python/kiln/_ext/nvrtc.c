/* nvrtc.c: CUDA C to a cubin (or PTX) through NVRTC and the artifact cache.
 *
 * NVRTC is opened at the first build that misses every cache tier (a warm
 * start never loads it: its facts, which are part of the cache key, are kept
 * in the cache); the first kernel definition starts a thread that pays its
 * first-use cost ahead.  Everything that runs without the GIL reports
 * through a kiln_ctx's text sink (errors.c).
 */
#include "nvrtc.h"

#include "driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#define XXH_INLINE_ALL /* header-only: no library to link */
#include <xxhash.h>

typedef struct {
    ModState *st;
    const char *src;
    size_t len;
    kiln_options o;
    int arch, want_ptx;
    /* compiled device code linked with the kernel by nvJitLink (nlinks of them) */
    kiln_link_input *links;
    int nlinks, lto;
    int device; /* the device the kernel is built for, or -1 (none known) */
    bool culink; /* linked by the driver's linker: nvJitLink cannot be loaded */
} NvrtcBuild;

/* The kernel's own code as nvJitLink's first input, then the linked files, into a cubin. */
static int link_cuda(NvrtcBuild *b, kiln_ctx *ctx, void **blob, size_t *len) {
    kiln_nvjitlink *j = b->culink ? NULL : ext_nvjitlink_nogil(b->st, ctx);
    if (!j && !b->culink) return -1;
    void *own = NULL;
    size_t own_len = 0;
    int is_ptx = 1;
    kiln_nvrtc *n = ext_nvrtc_nogil(b->st, ctx);
    if (!n || kiln_nvrtc_compile(ctx, n, b->src, b->len, &b->o, b->arch, &own, &own_len, &is_ptx) < 0)
        return -1;
    b->links[0] = (kiln_link_input){b->lto && !b->culink ? KILN_LINK_LTOIR : KILN_LINK_PTX, own,
                                    own_len, "<the kernel>"};
    int rc = b->culink ? kiln_cuda_link(ctx, b->st->cuda, b->device, &b->o, b->links,
                                            b->nlinks + 1, blob, len) :
             kiln_nvjitlink_link(ctx, j, kiln_nvrtc_version(n), b->arch, b->lto, &b->o, b->links,
                                 b->nlinks + 1, blob, len);
    b->links[0].data = NULL;
    free(own);
    return rc;
}

static int build_cuda(void *ud, kiln_ctx *ctx, void **blob, size_t *len, char kind[16]) {
    NvrtcBuild *b = ud;
    if (b->nlinks) {
        snprintf(kind, 16, "cubin");
        return link_cuda(b, ctx, blob, len);
    }
    int is_ptx = b->want_ptx;
    kiln_nvrtc *n = ext_nvrtc_nogil(b->st, ctx); /* loaded here, on a miss, at the latest */
    if (!n) return -1;
    int rc = kiln_nvrtc_compile(ctx, n, b->src, b->len, &b->o, b->arch, blob, len, &is_ptx);
    snprintf(kind, 16, "%s", b->o.nvrtc_output == KILN_NVRTC_LTOIR ? "ltoir" : is_ptx ? "ptx" : "cubin");
    return rc;
}

/* NVRTC, opened at first use; the lock keeps two threads from opening it twice. */
static pthread_mutex_t nvrtc_mu = PTHREAD_MUTEX_INITIALIZER;

kiln_nvrtc *ext_nvrtc_nogil(ModState *st, kiln_ctx *ctx) {
    pthread_mutex_lock(&nvrtc_mu);
    if (!st->nvrtc) st->nvrtc = kiln_nvrtc_open(ctx);
    kiln_nvrtc *n = st->nvrtc;
    pthread_mutex_unlock(&nvrtc_mu);
    return n;
}

kiln_nvjitlink *ext_nvjitlink_nogil(ModState *st, kiln_ctx *ctx) {
    pthread_mutex_lock(&nvrtc_mu);
    if (!st->nvjitlink) {
        char dir[4096] = "";
        if (!st->nvrtc) st->nvrtc = kiln_nvrtc_open(ctx);
        if (st->nvrtc && kiln_nvrtc_dir(st->nvrtc, dir, sizeof dir) < 0) dir[0] = 0;
        st->nvjitlink = kiln_nvjitlink_open(ctx, dir);
    }
    kiln_nvjitlink *j = st->nvjitlink;
    pthread_mutex_unlock(&nvrtc_mu);
    return j;
}

kiln_nvrtc *ext_nvrtc(ModState *st) {
    TextSink txt = {NULL, 0, 0, 0};
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) {
        PyErr_NoMemory();
        return NULL;
    }
    kiln_ctx_set_diag(ctx, ext_text_diag, &txt);
    kiln_nvrtc *n = ext_nvrtc_nogil(st, ctx);
    kiln_ctx_free(ctx);
    if (!n)
        ext_raise_text(st, &txt,
                       "NVRTC (libnvrtc.so) was not found; install the CUDA toolkit's NVRTC or "
                       "set KILN_NVRTC to its path");
    PyMem_RawFree(txt.buf);
    return n;
}

/* ---- NVRTC warm-up ------------------------------------------------------------------
 * NVRTC's first compile in a process costs about 100 ms more than later ones
 * (it loads its builtins).  The first kernel definition starts a thread that
 * pays it with a tiny compile while the program goes on importing and setting
 * up; the thread owns everything it uses (NVRTC's state is per process, so
 * any handle warms it) and is joined at exit. */

static pthread_t warm_thread;
static bool warm_started;

static void *warm_main(void *unused) {
    (void)unused;
    void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu) return NULL; /* no driver: no GPU compiles are coming */
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_nvrtc *n = ctx ? kiln_nvrtc_open(ctx) : NULL;
    if (n) {
        static const char src[] = "extern \"C\" __global__ void kiln_warm(float *p) "
                                  "{ p[threadIdx.x] = expf(p[threadIdx.x]) / 3.0f; }\n";
        kiln_options o;
        memset(&o, 0, sizeof o);
        o.target = KILN_TARGET_CUDA;
        void *blob = NULL;
        size_t len = 0;
        int is_ptx = 0;
        kiln_nvrtc_compile(ctx, n, src, sizeof src - 1, &o, 80, &blob, &len, &is_ptx);
        free(blob);
        kiln_nvrtc_close(n);
    }
    kiln_ctx_free(ctx);
    dlclose(cu);
    return NULL;
}

static void warm_join(void) {
    if (warm_started) pthread_join(warm_thread, NULL);
    warm_started = false;
}

static PyObject *f_warm_up(PyObject *m, PyObject *unused) {
    if (!warm_started && pthread_create(&warm_thread, NULL, warm_main, NULL) == 0) {
        warm_started = true;
        Py_AtExit(warm_join);
    }
    Py_RETURN_NONE;
}

/* The cache key's target text.  NVRTC's facts come from the cache when it has
 * them for the NVRTC that would be loaded, so a warm start never loads NVRTC;
 * otherwise NVRTC is loaded and its facts are stored.  -1 with an exception. */
static int cuda_target(ModState *st, const kiln_options *o, int arch, int want_ptx, char *buf,
                       size_t size) {
    char name[4200], facts[1024];
    int rc = -1;
    kiln_cache *c;
    Py_BEGIN_ALLOW_THREADS
    c = ext_get_cache(st);
    kiln_nvrtc_facts_name(name, sizeof name);
    if (c && kiln_cache_fact(c, name, facts, sizeof facts))
        rc = kiln_nvrtc_target_from(facts, 1, o, arch, want_ptx, buf, size);
    Py_END_ALLOW_THREADS
    if (rc == 0) return 0;
    kiln_nvrtc *n = ext_nvrtc(st);
    if (!n) {
        /* no NVRTC here: a bundle's facts still give its keys (nothing can be compiled) */
        if (c && kiln_cache_fact(c, KILN_NVRTC_IMPORTED_FACTS, facts, sizeof facts) &&
            kiln_nvrtc_target_from(facts, 0, o, arch, want_ptx, buf, size) == 0) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) {
        PyErr_NoMemory();
        return -1;
    }
    TextSink txt = {NULL, 0, 0, 0};
    kiln_ctx_set_diag(ctx, ext_text_diag, &txt);
    rc = kiln_nvrtc_target(ctx, n, o, arch, want_ptx, buf, size);
    kiln_ctx_free(ctx);
    if (rc < 0) {
        ext_raise_text(st, &txt, "NVRTC cannot compile for this architecture");
    } else {
        Py_BEGIN_ALLOW_THREADS
        if (c && kiln_nvrtc_describe(n, facts, sizeof facts) == 0)
            kiln_cache_set_fact(c, name, facts);
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(txt.buf);
    return rc;
}

/* Compiled files linked into one kernel at most (docs/limits.md): more is a ValueError. */
enum { KILN_LINK_MAX_FILES = 64 };

/* links, a sequence of (kind, name, bytes), into b->links[1..]; -1 with an exception. */
static int parse_links(PyObject *links, NvrtcBuild *b) {
    Py_ssize_t n = PySequence_Size(links);
    if (n < 0) return -1;
    if (n > KILN_LINK_MAX_FILES) {
        PyErr_Format(PyExc_ValueError, "a kernel links at most %d compiled files (KILN_LINK_MAX_FILES), not %zd",
                     KILN_LINK_MAX_FILES, n);
        return -1;
    }
    b->links = PyMem_Calloc((size_t)n + 1, sizeof *b->links);
    if (!b->links) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(links, i);
        int kind;
        const char *name, *data;
        Py_ssize_t len;
        if (!PyArg_ParseTuple(t, "isy#", &kind, &name, &data, &len)) return -1;
        if (kind < KILN_LINK_CUBIN || kind > KILN_LINK_LIBRARY) {
            PyErr_Format(PyExc_ValueError, "no linked input kind %d", kind);
            return -1;
        }
        b->links[i + 1] = (kiln_link_input){kind, data, (size_t)len, name};
    }
    b->nlinks = (int)n;
    return 0;
}

/* Which linker links b: nvJitLink (1, its version in *version: kept in the cache like
 * NVRTC's facts, so a warm hit loads neither library), else the driver's (2, the driver's
 * version) where nvJitLink cannot be loaded (KILN_NVJITLINK=0 asks for it) and the kernel
 * is built for a device; -1 with an exception. */
static int choose_linker(ModState *st, NvrtcBuild *b, int *version) {
    char fname[4400], fact[64];
    const char *env = getenv("KILN_NVJITLINK");
    bool off = env && strcmp(env, "0") == 0;
    int w0 = snprintf(fname, sizeof fname, "nvjitlink|%s|", env ? env : "");
    kiln_nvrtc_facts_name(fname + w0, sizeof fname - (size_t)w0);
    kiln_cache *c;
    *version = 0;
    Py_BEGIN_ALLOW_THREADS
    c = ext_get_cache(st);
    if (!off && c && kiln_cache_fact(c, fname, fact, sizeof fact)) *version = atoi(fact);
    Py_END_ALLOW_THREADS
    if (*version > 0) return 1;
    TextSink txt = {NULL, 0, 0, 0};
    kiln_nvjitlink *j = st->nvjitlink;
    if (!j && !off) {
        kiln_ctx *ctx = kiln_ctx_new();
        if (!ctx) {
            PyErr_NoMemory();
            return -1;
        }
        kiln_ctx_set_diag(ctx, ext_text_diag, &txt);
        j = ext_nvjitlink_nogil(st, ctx);
        kiln_ctx_free(ctx);
    }
    if (j && !off) {
        PyMem_RawFree(txt.buf);
        *version = kiln_nvjitlink_version(j);
        snprintf(fact, sizeof fact, "%d", *version);
        Py_BEGIN_ALLOW_THREADS
        if (c) kiln_cache_set_fact(c, fname, fact);
        Py_END_ALLOW_THREADS
        return 1;
    }
    if (b->device >= 0 && (off || !env || !*env)) { /* the driver's linker, when it has one */
        kiln_cuda *cu = ext_cuda(st);
        if (cu && kiln_cuda_can_link(cu)) {
            PyMem_RawFree(txt.buf);
            *version = kiln_cuda_driver_version(cu);
            return 2;
        }
        PyErr_Clear();
    }
    ext_raise_text(st, &txt, off ? "KILN_NVJITLINK=0 asks for the driver's linker, which needs "
                                   "a GPU the kernel is built for"
                                 : "nvJitLink (libnvJitLink.so) was not found");
    PyMem_RawFree(txt.buf);
    return -1;
}

/* The target text of a linked kernel: NVRTC's, then the linker's version and options and
 * each linked input's kind, size and XXH3 (the source names the files by content too). */
static int link_target(NvrtcBuild *b, int version, char *target, size_t size) {
    size_t w = strlen(target);
    int k = b->culink ? snprintf(target + w, size - w, " culink=%d", version)
                      : snprintf(target + w, size - w, " nvjitlink=%d lto=%d", version, b->lto);
    for (int i = 1; i <= b->nlinks && k >= 0 && (size_t)k < size - w; i++) {
        w += (size_t)k;
        k = snprintf(target + w, size - w, " %d:%zu:%016llx", b->links[i].kind, b->links[i].len,
                     (unsigned long long)XXH3_64bits(b->links[i].data, b->links[i].len));
    }
    if (k < 0 || (size_t)k >= size - w) {
        PyErr_SetString(PyExc_ValueError, "too many linked files for the cache key");
        return -1;
    }
    return 0;
}

/* nvrtc_compile(source, (fastmath, lineinfo, max_registers), arch, want_ptx=False, name='',
 *               cache=True, output=KILN_NVRTC_WHOLE, links=(), lto=True, device=-1)
 *   -> (image, is_ptx, cache key, hit) */
static PyObject *f_nvrtc_compile(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    const char *src, *name = "";
    Py_ssize_t len;
    int fastmath, lineinfo, maxreg, arch, want_ptx = 0, use_cache = 1, output = KILN_NVRTC_WHOLE;
    int lto = 1, device = -1;
    PyObject *links = NULL;
    if (!PyArg_ParseTuple(args, "s#(iii)i|pspiOpi", &src, &len, &fastmath, &lineinfo, &maxreg,
                          &arch, &want_ptx, &name, &use_cache, &output, &links, &lto, &device))
        return NULL;
    if (output < KILN_NVRTC_WHOLE || output > KILN_NVRTC_LTOIR)
        return PyErr_Format(PyExc_ValueError, "no NVRTC output %d", output);
    if (arch < 10 || arch > 10000) return PyErr_Format(PyExc_ValueError, "no GPU architecture sm_%d", arch);
    NvrtcBuild b = {st, src, (size_t)len, {0}, arch, want_ptx, NULL, 0, lto, device, false};
    b.o.target = KILN_TARGET_CUDA;
    b.o.fastmath = fastmath;
    b.o.lineinfo = lineinfo;
    b.o.max_registers = maxreg;
    b.o.nvrtc_output = output;
    PyObject *seq = NULL, *r = NULL;
    if (links && links != Py_None) {
        if (!(seq = PySequence_Fast(links, "links is a sequence of (kind, name, bytes)"))) return NULL;
        if (parse_links(seq, &b) < 0) goto done;
        if (b.nlinks && (output != KILN_NVRTC_WHOLE || want_ptx)) {
            PyErr_SetString(PyExc_ValueError, "linked files make a cubin: not with PTX or relocatable output");
            goto done;
        }
    }
    int link_version = 0;
    if (b.nlinks) {
        int linker = choose_linker(st, &b, &link_version);
        if (linker < 0) goto done;
        b.culink = linker == 2;
        b.o.nvrtc_output = lto && !b.culink ? KILN_NVRTC_LTOIR : KILN_NVRTC_RELOCATABLE;
    }
    char target[4096], short_target[32];
    if (use_cache && cuda_target(st, &b.o, arch, b.nlinks ? 1 : want_ptx, target, sizeof target) < 0)
        goto done;
    if (use_cache && b.nlinks && link_target(&b, link_version, target, sizeof target) < 0) goto done;
    if (!use_cache && !ext_nvrtc(st)) goto done;
    snprintf(short_target, sizeof short_target, "cuda:sm_%d", arch);
    ExtArtifact art;
    /* line info carries the file names into the cubin: then they are in the key */
    if (ext_cached_build(st, src, (size_t)len, use_cache ? target : NULL,
                         lineinfo ? KILN_KEY_FILE_NAMES : 0, short_target, name, build_cuda, &b,
                         &art) < 0)
        goto done;
    r = Py_BuildValue("(y#isi)", (const char *)art.blob, (Py_ssize_t)art.len,
                      strcmp(art.kind, "ptx") == 0, art.key, art.hit);
    free(art.blob);
done:
    PyMem_Free(b.links);
    Py_XDECREF(seq);
    return r;
}

static PyObject *f_nvrtc_version(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    kiln_nvrtc *n = ext_nvrtc(st);
    if (!n) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return PyLong_FromLong(kiln_nvrtc_version(n));
}

PyMethodDef ext_nvrtc_functions[] = {
    {"nvrtc_compile", f_nvrtc_compile, METH_VARARGS,
     "nvrtc_compile(source, (fastmath, lineinfo, max_registers), arch, want_ptx=False, name='', "
     "cache=True, output=0) -> (image, is_ptx, cache key, hit); output 1 relocatable PTX, "
     "2 LTO-IR; links: (kind, name, bytes) of compiled device code linked by nvJitLink into "
     "a cubin, with link-time optimisation when lto (the driver's linker for device where "
     "nvJitLink is missing)"},
    {"nvrtc_version", f_nvrtc_version, METH_NOARGS, "NVRTC's version or None"},
    {"warm_up", f_warm_up, METH_NOARGS, "start NVRTC's first-use work on a thread (once)"},
    {NULL, NULL, 0, NULL}};
