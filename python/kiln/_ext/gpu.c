/* gpu.c: the extension's CUDA side.
 *
 * The driver is opened at the first thing that needs it; on a machine without
 * a GPU that fails once, quietly, and kiln.is_available() says why.  Kernel
 * errors (bounds checks, asserts, zero range steps) are recorded by the GPU in
 * a small record per device; a kernel compiled with debug=True is checked
 * right after its launch, other kernels that can fail at the next
 * synchronisation point (kiln.synchronize, a copy to the host, a stream's
 * synchronize), so ordinary launches stay asynchronous.
 *
 * Foreign GPU arrays are taken without copies through
 * __cuda_array_interface__ (CuPy, PyTorch, Numba; its stream field is
 * honoured by synchronising that stream when it is not the launch's) or
 * DLPack (JAX and any producer of __dlpack__).
 */
#include <dlfcn.h>
#include <pthread.h>

#include "ext.h"

kiln_cuda *ext_cuda(ModState *st) {
    if (st->cuda) return st->cuda;
    if (!st->cuda_tried) {
        st->cuda_tried = true;
        st->cuda = kiln_cuda_open(&st->cuda_why);
        if (st->cuda) return st->cuda;
    }
    PyErr_Format(st->CudaError, "no CUDA GPU can be used: %s",
                 st->cuda_why ? st->cuda_why : "unknown reason");
    return NULL;
}

PyObject *ext_cuda_error(ModState *st, int rc, const char *what) {
    PyErr_Format(st->CudaError, "%s: %s (while %s)", kiln_cuda_error_name(st->cuda, rc),
                 kiln_cuda_error_text(st->cuda, rc), what);
    return NULL;
}

kiln_cuda *ext_cuda_on(ModState *st, int dev) {
    kiln_cuda *cu = ext_cuda(st);
    if (!cu) return NULL;
    if (dev < 0 || dev >= kiln_cuda_device_count(cu)) {
        PyErr_Format(PyExc_ValueError, "device %d does not exist (this machine has %d)", dev,
                     kiln_cuda_device_count(cu));
        return NULL;
    }
    int rc = kiln_cuda_use(cu, dev);
    if (rc != 0) {
        ext_cuda_error(st, rc, "making the device's context current");
        return NULL;
    }
    return cu;
}

int ext_use_device(ModState *st, int dev) { return ext_cuda_on(st, dev) ? 0 : -1; }

int ext_errbuf(ModState *st, int dev, uint64_t *ptr) {
    if (!st->errbuf[dev]) {
        uint64_t p;
        int rc = kiln_cuda_alloc(st->cuda, &p, sizeof(kiln_kernel_error), NULL);
        if (rc == 0) rc = kiln_cuda_memset(st->cuda, p, 0, sizeof(kiln_kernel_error), NULL);
        if (rc == 0) rc = kiln_cuda_stream_sync(st->cuda, NULL);
        if (rc != 0) {
            ext_cuda_error(st, rc, "allocating the kernel error record");
            return -1;
        }
        st->errbuf[dev] = p;
    }
    *ptr = st->errbuf[dev];
    return 0;
}

PyObject *ext_raise_kernel_error(const kiln_kernel_error *err, PyObject *files) {
    int fidx = err->line >> 20, line = err->line & 0xFFFFF;
    const char *file = "?";
    if (files && PyTuple_Check(files) && fidx < PyTuple_GET_SIZE(files)) {
        file = PyUnicode_AsUTF8(PyTuple_GET_ITEM(files, fidx));
        if (!file) {
            PyErr_Clear();
            file = "?";
        }
    }
    switch (err->code) {
    case KILN_ERR_INDEX:
        PyErr_Format(PyExc_IndexError, "%s:%d: index %lld is out of bounds for axis %lld with size %lld",
                     file, line, (long long)err->a, (long long)err->b, (long long)err->c);
        break;
    case KILN_ERR_ASSERT: PyErr_Format(PyExc_AssertionError, "%s:%d: assertion failed", file, line); break;
    case KILN_ERR_ZERODIV:
        PyErr_Format(PyExc_ZeroDivisionError, "%s:%d: integer division or modulo by zero", file, line);
        break;
    case KILN_ERR_RANGE:
        PyErr_Format(PyExc_ValueError, "%s:%d: range() arg 3 must not be zero", file, line);
        break;
    case KILN_ERR_POW:
        PyErr_Format(PyExc_ValueError,
                     "%s:%d: integers to negative integer powers are not allowed (%lld ** %lld)",
                     file, line, (long long)err->a, (long long)err->b);
        break;
    default: PyErr_Format(PyExc_RuntimeError, "%s:%d: kernel error %d", file, line, err->code); break;
    }
    return NULL;
}

int ext_check_kernel_error(ModState *st, int dev) {
    if (dev < 0 || dev >= EXT_MAX_DEVICES || !st->err_pending[dev] || !st->errbuf[dev]) return 0;
    kiln_kernel_error err;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = kiln_cuda_sync(st->cuda);
    if (rc == 0) rc = kiln_cuda_copy_dtoh(st->cuda, &err, st->errbuf[dev], sizeof err, NULL);
    Py_END_ALLOW_THREADS
    st->err_pending[dev] = false;
    if (rc != 0) {
        ext_cuda_error(st, rc, "reading the kernel error record");
        return -1;
    }
    if (err.code == 0) return 0;
    kiln_cuda_memset(st->cuda, st->errbuf[dev], 0, sizeof err, NULL);
    kiln_cuda_stream_sync(st->cuda, NULL);
    ext_raise_kernel_error(&err, st->err_files[dev]);
    return -1;
}

/* ---- foreign GPU arrays ------------------------------------------------------------------------ */

static int typestr_dtype(const char *ts, int *dtype) {
    if (!ts || strlen(ts) < 3) return -1;
    char order = ts[0], kind = ts[1];
    int size = atoi(ts + 2);
    if (order == '>' && size > 1) return -2;
    switch (kind) {
    case 'b': *dtype = KILN_BOOL; return size == 1 ? 0 : -1;
    case 'i':
        *dtype = size == 1 ? KILN_INT8 : size == 2 ? KILN_INT16 : size == 4 ? KILN_INT32 : size == 8 ? KILN_INT64 : -1;
        return *dtype < 0 ? -1 : 0;
    case 'u':
        *dtype = size == 1 ? KILN_UINT8 : size == 2 ? KILN_UINT16 : size == 4 ? KILN_UINT32 : size == 8 ? KILN_UINT64 : -1;
        return *dtype < 0 ? -1 : 0;
    case 'f':
        *dtype = size == 4 ? KILN_FLOAT32 : size == 8 ? KILN_FLOAT64 : -1;
        return *dtype < 0 ? -1 : 0;
    default: return -1;
    }
}

static int cai_array(ModState *st, PyObject *o, PyObject *cai, void *launch_stream,
                     ForeignArray *fa) {
    if (!PyDict_Check(cai)) {
        PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ is not a dict");
        return -1;
    }
    PyObject *shape = PyDict_GetItemString(cai, "shape");
    PyObject *typestr = PyDict_GetItemString(cai, "typestr");
    PyObject *data = PyDict_GetItemString(cai, "data");
    PyObject *strides = PyDict_GetItemString(cai, "strides");
    PyObject *stream = PyDict_GetItemString(cai, "stream");
    if (!shape || !PyTuple_Check(shape) || !typestr || !PyUnicode_Check(typestr) || !data ||
        !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
        PyErr_SetString(PyExc_TypeError, "malformed __cuda_array_interface__");
        return -1;
    }
    int rc = typestr_dtype(PyUnicode_AsUTF8(typestr), &fa->dtype);
    if (rc < 0) {
        PyErr_Format(PyExc_TypeError, "GPU arrays of type '%U' are not supported by kernels",
                     typestr);
        return -1;
    }
    fa->ndim = (int)PyTuple_GET_SIZE(shape);
    if (fa->ndim > KILN_MAX_NDIM) {
        PyErr_Format(PyExc_TypeError, "kernels take arrays of at most %d dimensions", KILN_MAX_NDIM);
        return -1;
    }
    int isz = ext_dtype_size(fa->dtype);
    for (int i = 0; i < fa->ndim; i++) {
        fa->shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
        if (PyErr_Occurred()) return -1;
    }
    if (strides && strides != Py_None) {
        if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != fa->ndim) {
            PyErr_SetString(PyExc_TypeError, "malformed strides in __cuda_array_interface__");
            return -1;
        }
        for (int i = 0; i < fa->ndim; i++) {
            fa->strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i));
            if (PyErr_Occurred()) return -1;
        }
    } else {
        int64_t s = isz;
        for (int i = fa->ndim - 1; i >= 0; i--) {
            fa->strides[i] = s;
            s *= fa->shape[i];
        }
    }
    fa->ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
    if (PyErr_Occurred()) return -1;
    fa->readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) == 1;
    fa->device = fa->ptr ? kiln_cuda_pointer_device(st->cuda, fa->ptr) : 0;
    if (fa->device < 0) fa->device = st->current_device;
    /* CAI v3: make the launch wait for the producer's stream */
    if (stream && stream != Py_None) {
        unsigned long long s = PyLong_AsUnsignedLongLong(stream);
        if (PyErr_Occurred()) return -1;
        void *h = s == 1 || s == 2 ? NULL : (void *)(uintptr_t)s;
        if (h != launch_stream) {
            int r;
            Py_BEGIN_ALLOW_THREADS
            r = kiln_cuda_stream_sync(st->cuda, h);
            Py_END_ALLOW_THREADS
            if (r != 0) {
                ext_cuda_error(st, r, "waiting for a GPU array's stream");
                return -1;
            }
        }
    }
    (void)o;
    return 1;
}


static int dlpack_array(ModState *st, PyObject *o, void *launch_stream, ForeignArray *fa) {
    /* ask for the tensor on the launch's stream (1 is CUDA's legacy default stream) */
    PyObject *kw = Py_BuildValue("{s:K}", "stream",
                                 launch_stream ? (unsigned long long)(uintptr_t)launch_stream : 1ULL);
    PyObject *meth = PyObject_GetAttr(o, st->str_dlpack);
    PyObject *noargs = PyTuple_New(0);
    PyObject *cap = meth && kw && noargs ? PyObject_Call(meth, noargs, kw) : NULL;
    Py_XDECREF(meth);
    Py_XDECREF(kw);
    Py_XDECREF(noargs);
    if (!cap) return -1;
    DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");
    if (!t) {
        Py_DECREF(cap);
        return -1;
    }
    DLTensor *dl = &t->dl_tensor;
    static const int ints[] = {-1, KILN_INT8, KILN_INT16, -1, KILN_INT32, -1, -1, -1, KILN_INT64};
    static const int uints[] = {-1, KILN_UINT8, KILN_UINT16, -1, KILN_UINT32, -1, -1, -1, KILN_UINT64};
    int bytes = dl->dtype.bits / 8;
    int dt = -1;
    if (dl->dtype.lanes == 1 && bytes >= 1 && bytes <= 8 && dl->dtype.bits % 8 == 0) {
        if (dl->dtype.code == 0) dt = ints[bytes];
        else if (dl->dtype.code == 1) dt = uints[bytes];
        else if (dl->dtype.code == 2) dt = bytes == 4 ? KILN_FLOAT32 : bytes == 8 ? KILN_FLOAT64 : -1;
        else if (dl->dtype.code == 6 && bytes == 1) dt = KILN_BOOL;
    }
    if (dl->device.device_type != 2 || dt < 0 || dl->ndim > KILN_MAX_NDIM) {
        Py_DECREF(cap); /* still named "dltensor": its destructor releases the tensor */
        PyErr_SetString(PyExc_TypeError,
                        "the DLPack tensor is not a CUDA array of a type kernels support");
        return -1;
    }
    fa->dtype = dt;
    fa->ndim = dl->ndim;
    fa->device = dl->device.device_id;
    fa->readonly = false;
    fa->ptr = (uint64_t)(uintptr_t)dl->data + dl->byte_offset;
    int64_t s = 1;
    for (int i = dl->ndim - 1; i >= 0; i--) {
        fa->shape[i] = dl->shape[i];
        fa->strides[i] = (dl->strides ? dl->strides[i] : s) * bytes;
        s *= dl->shape[i];
    }
    /* consumed: the tensor is ours and is released by ext_foreign_release */
    PyCapsule_SetName(cap, "used_dltensor");
    PyCapsule_SetContext(cap, t);
    fa->keep = cap;
    return 1;
}

void ext_foreign_release(ForeignArray *fa) {
    if (!fa->keep) return;
    DLManagedTensor *t = PyCapsule_GetContext(fa->keep);
    if (t && t->deleter) t->deleter(t);
    Py_CLEAR(fa->keep);
}

int ext_foreign_array(ModState *st, PyObject *o, void *launch_stream, ForeignArray *fa) {
    fa->keep = NULL;
    PyObject *cai = PyObject_GetAttr(o, st->str_cai);
    if (cai) {
        if (!ext_cuda(st)) {
            Py_DECREF(cai);
            return -1;
        }
        int rc = cai_array(st, o, cai, launch_stream, fa);
        Py_DECREF(cai);
        return rc;
    }
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
    PyObject *dev = PyObject_CallMethodNoArgs(o, st->str_dlpack_device);
    if (!dev) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    long type = PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2 ? PyLong_AsLong(PyTuple_GET_ITEM(dev, 0)) : 0;
    Py_DECREF(dev);
    if (PyErr_Occurred()) return -1;
    if (type != 2) return 0; /* not a CUDA array: let the caller try the host paths */
    if (!ext_cuda(st)) return -1;
    return dlpack_array(st, o, launch_stream, fa);
}

/* ---- module functions -------------------------------------------------------------------------- */

static PyObject *f_cuda_available(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    if (ext_cuda(st)) return Py_BuildValue("(Os)", Py_True, "");
    PyErr_Clear();
    return Py_BuildValue("(Os)", Py_False, st->cuda_why ? st->cuda_why : "unknown");
}

static PyObject *f_cuda_info(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    kiln_cuda *cu = ext_cuda(st);
    if (!cu) return NULL;
    PyObject *devs = PyList_New(0);
    if (!devs) return NULL;
    for (int d = 0; d < kiln_cuda_device_count(cu); d++) {
        char name[256] = "?";
        kiln_cuda_device_name(cu, d, name, sizeof name);
        PyObject *t = Py_BuildValue("(si)", name, kiln_cuda_arch(cu, d));
        if (!t || PyList_Append(devs, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(devs);
            return NULL;
        }
        Py_DECREF(t);
    }
    PyObject *r = Py_BuildValue("{s:i,s:O}", "driver", kiln_cuda_driver_version(cu), "devices", devs);
    Py_DECREF(devs);
    return r;
}

static PyObject *f_select_device(PyObject *m, PyObject *arg) {
    ModState *st = ext_state(m);
    long d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) return NULL;
    if (ext_use_device(st, (int)d) < 0) return NULL;
    st->current_device = (int)d;
    Py_RETURN_NONE;
}

static PyObject *f_current_device(PyObject *m, PyObject *unused) {
    return PyLong_FromLong(ext_state(m)->current_device);
}

static PyObject *f_synchronize(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    if (!st->cuda) Py_RETURN_NONE; /* nothing was ever launched on a GPU */
    for (int d = 0; d < kiln_cuda_device_count(st->cuda) && d < EXT_MAX_DEVICES; d++) {
        if (!st->errbuf[d] && d != st->current_device) continue;
        if (ext_use_device(st, d) < 0) return NULL;
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = kiln_cuda_sync(st->cuda);
        Py_END_ALLOW_THREADS
        if (rc != 0) return ext_cuda_error(st, rc, "synchronizing the device");
        if (ext_check_kernel_error(st, d) < 0) return NULL;
    }
    Py_RETURN_NONE;
}

typedef struct {
    ModState *st;
    const char *src;
    size_t len;
    kiln_options o;
    int arch, want_ptx;
} NvrtcBuild;

static int build_cuda(void *ud, kiln_ctx *ctx, void **blob, size_t *len, char kind[16]) {
    NvrtcBuild *b = ud;
    int is_ptx = b->want_ptx;
    kiln_nvrtc *n = ext_nvrtc_nogil(b->st, ctx); /* loaded here, on a miss, at the latest */
    if (!n) return -1;
    int rc = kiln_nvrtc_compile(ctx, n, b->src, b->len, &b->o, b->arch, blob, len, &is_ptx);
    snprintf(kind, 16, "%s", is_ptx ? "ptx" : "cubin");
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

/* nvrtc_compile(source, (fastmath, lineinfo, max_registers), arch, want_ptx=False, name='',
 *               cache=True) -> (image, is_ptx, cache key, hit) */
static PyObject *f_nvrtc_compile(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    const char *src, *name = "";
    Py_ssize_t len;
    int fastmath, lineinfo, maxreg, arch, want_ptx = 0, use_cache = 1;
    if (!PyArg_ParseTuple(args, "s#(iii)i|psp", &src, &len, &fastmath, &lineinfo, &maxreg, &arch,
                          &want_ptx, &name, &use_cache))
        return NULL;
    if (arch < 10 || arch > 10000) return PyErr_Format(PyExc_ValueError, "no GPU architecture sm_%d", arch);
    NvrtcBuild b = {st, src, (size_t)len, {0}, arch, want_ptx};
    b.o.target = KILN_TARGET_CUDA;
    b.o.fastmath = fastmath;
    b.o.lineinfo = lineinfo;
    b.o.max_registers = maxreg;
    char target[512], short_target[32];
    if (use_cache && cuda_target(st, &b.o, arch, want_ptx, target, sizeof target) < 0)
        return NULL;
    if (!use_cache && !ext_nvrtc(st)) return NULL;
    snprintf(short_target, sizeof short_target, "cuda:sm_%d", arch);
    ExtArtifact art;
    /* line info carries the file names into the cubin: then they are in the key */
    if (ext_cached_build(st, src, (size_t)len, use_cache ? target : NULL,
                         lineinfo ? KILN_KEY_FILE_NAMES : 0, short_target, name, build_cuda, &b,
                         &art) < 0)
        return NULL;
    PyObject *r = Py_BuildValue("(y#isi)", (const char *)art.blob, (Py_ssize_t)art.len,
                                strcmp(art.kind, "ptx") == 0, art.key, art.hit);
    free(art.blob);
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

PyMethodDef ext_gpu_functions[] = {
    {"cuda_available", f_cuda_available, METH_NOARGS, "(available, why not)"},
    {"cuda_info", f_cuda_info, METH_NOARGS, "driver version and devices"},
    {"select_device", f_select_device, METH_O, "select_device(n)"},
    {"current_device", f_current_device, METH_NOARGS, "the selected device"},
    {"synchronize", f_synchronize, METH_NOARGS, "wait for all GPU work; report kernel errors"},
    {"nvrtc_compile", f_nvrtc_compile, METH_VARARGS,
     "nvrtc_compile(source, (fastmath, lineinfo, max_registers), arch, want_ptx=False, name='', "
     "cache=True) -> (image, is_ptx, cache key, hit)"},
    {"nvrtc_version", f_nvrtc_version, METH_NOARGS, "NVRTC's version or None"},
    {"warm_up", f_warm_up, METH_NOARGS, "start NVRTC's first-use work on a thread (once)"},
    {NULL, NULL, 0, NULL}};
