/* driver.c: the CUDA driver as the extension uses it.
 *
 * The driver is opened at the first thing that needs it; on a machine without
 * a GPU that fails once, quietly, and kiln.is_available() says why.  Kernel
 * errors (bounds checks, asserts, zero range steps) are recorded by the GPU in
 * a small record per device; a kernel compiled with debug=True is checked
 * right after its launch, other kernels that can fail at the next
 * synchronisation point (kiln.synchronize, a copy to the host, a stream's
 * synchronize), so ordinary launches stay asynchronous.
 */
#include "driver.h"

#include "obs.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

/* Copies s into dst (n bytes, n > 0), each byte outside printable ASCII written as \xNN:
 * a path need not be UTF-8, and the reason becomes a Python str. */
static void printable(char *dst, size_t n, const char *s) {
    size_t k = 0;
    for (; *s && k + 5 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f) dst[k++] = (char)c;
        else k += (size_t)snprintf(dst + k, n - k, "\\x%02x", c);
    }
    dst[k] = 0;
}

/* After the driver failed to open: when KILN_CUDA_DRIVER names it, the reason
 * names that path and what the loader said, and a RuntimeWarning says so once
 * (a driver asked for by name is a setting to fix, not a machine without a
 * GPU).  -1 when a warnings filter turned the warning into an exception. */
static int explain_driver(ModState *st) {
    const char *env = getenv("KILN_CUDA_DRIVER");
    if (!env || !*env) return 0;
    void *h = dlopen(env, RTLD_NOW | RTLD_LOCAL); /* again, for the loader's words */
    const char *err = h ? NULL : dlerror();
    char raw[sizeof st->cuda_why_buf];
    snprintf(raw, sizeof raw, "KILN_CUDA_DRIVER=%s %s: %s", env,
             err ? "cannot be loaded" : "is not a usable CUDA driver",
             err ? err : st->cuda_why ? st->cuda_why : "unknown reason");
    printable(st->cuda_why_buf, sizeof st->cuda_why_buf, raw);
    if (h) dlclose(h);
    st->cuda_why = st->cuda_why_buf;
    return PyErr_WarnFormat(PyExc_RuntimeWarning, 2,
                            "%s; no GPU can be used, so target 'auto' runs kernels on the CPU",
                            st->cuda_why_buf);
}

kiln_cuda *ext_cuda(ModState *st) {
    if (st->cuda) return st->cuda;
    if (!st->cuda_tried) {
        st->cuda_tried = true;
        st->cuda = kiln_cuda_open(&st->cuda_why);
        if (st->cuda) return st->cuda;
        if (explain_driver(st) < 0) return NULL;
    }
    /* the device API on host memory is a choice the user makes, never a silent
     * fallback (a program that meant the GPU should hear that it has none) */
    const char *target = getenv("KILN_TARGET");
    if (target && strcmp(target, "cpu") == 0) /* what it would advise is done: GPU memory was met */
        PyErr_Format(st->CudaError,
                     "this needs a CUDA GPU (a GPU array, or GPU memory asked for), and none can "
                     "be used: %s; with KILN_TARGET=cpu, kiln's device arrays are in host memory "
                     "(docs/cpu-device-api.md): copy GPU arrays to the host first",
                     st->cuda_why ? st->cuda_why : "unknown reason");
    else
        PyErr_Format(st->CudaError,
                     "no CUDA GPU can be used: %s; set KILN_TARGET=cpu to run kernels and kiln's "
                     "device API (to_device, device_array, streams, events) on the CPU, in host "
                     "memory",
                     st->cuda_why ? st->cuda_why : "unknown reason");
    return NULL;
}

/* The class a driver error is raised as: kiln.CudaError, or, once a program has
 * imported cuda.core (Numba-CUDA raises its CUDAError for a failed launch or driver
 * call), a subclass of both, made once, so that `except CUDAError` written for
 * Numba-CUDA catches kiln's errors too.  Nothing is imported here: the module is
 * looked up among those already loaded. */
static PyObject *cuda_error_class(ModState *st) {
    if (st->CudaErrorCompat) return st->CudaErrorCompat;
    PyObject *name = PyUnicode_FromString("cuda.core._utils.cuda_utils");
    PyObject *mod = name ? PyImport_GetModule(name) : NULL;
    Py_XDECREF(name);
    PyObject *base = mod ? PyObject_GetAttrString(mod, "CUDAError") : NULL;
    Py_XDECREF(mod);
    if (base && PyType_Check(base) && PyType_IsSubtype((PyTypeObject *)base,
                                                       (PyTypeObject *)PyExc_Exception) &&
        !PyType_IsSubtype((PyTypeObject *)st->CudaError, (PyTypeObject *)base))
        st->CudaErrorCompat = PyObject_CallFunction((PyObject *)&PyType_Type, "s(OO){s:s}",
                                                    "CudaError", st->CudaError, base,
                                                    "__module__", "kiln");
    Py_XDECREF(base);
    PyErr_Clear(); /* a module without the class, or layouts that do not combine */
    return st->CudaErrorCompat ? st->CudaErrorCompat : st->CudaError;
}

PyObject *ext_cuda_error(ModState *st, int rc, const char *what) {
    PyErr_Format(cuda_error_class(st), "%s: %s (while %s)", kiln_cuda_error_name(st->cuda, rc),
                 kiln_cuda_error_text(st->cuda, rc), what);
    return NULL;
}

PyObject *ext_cuda_launch_error(ModState *st, int rc, kiln_cuda_module *m, const int64_t grid[3],
                                const int64_t block[3], unsigned shmem) {
    int64_t most = 0;
    int64_t nb = grid[0] * grid[1] * grid[2], nt = block[0] * block[1] * block[2];
    if (rc != KILN_CUDA_COOP_TOO_LARGE ||
        kiln_cuda_max_coop_blocks(st->cuda, m, (int)nt, shmem, &most) != 0)
        return ext_cuda_error(st, rc, "launching the kernel");
    PyErr_Format(PyExc_ValueError,
                 "a cooperative launch of %lld blocks of %lld threads is too large: at most %lld "
                 "blocks of %lld threads can be co-resident on this GPU "
                 "(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE; see max_cooperative_grid_blocks)",
                 (long long)nb, (long long)nt, (long long)most, (long long)nt);
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

int ext_check_shared(ModState *st, int dev, int64_t bytes) {
    enum { MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97 }; /* a CUdevice_attribute */
    if (dev < 0 || dev >= EXT_MAX_DEVICES) return 0;
    if (!st->shared_limit[dev]) {
        int v = 0;
        if (kiln_cuda_device_attribute(st->cuda, dev, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &v) != 0 ||
            v <= 0)
            v = -1; /* not known: the driver will say at the launch */
        st->shared_limit[dev] = v;
    }
    int limit = st->shared_limit[dev];
    if (limit < 0 || bytes <= limit) return 0;
    char name[256] = "?";
    kiln_cuda_device_name(st->cuda, dev, name, sizeof name);
    PyErr_Format(PyExc_ValueError,
                 "dynamic_shared_bytes is %lld, but GPU %d (%s) gives a block at most %d bytes of "
                 "shared memory (%d KiB), static shared arrays included",
                 (long long)bytes, dev, name, limit, limit / 1024);
    return -1;
}

/* ---- module functions -------------------------------------------------------------------------- */

static PyObject *f_cuda_available(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    if (ext_cuda(st)) return Py_BuildValue("(Os)", Py_True, "");
    if (!PyErr_ExceptionMatches(st->CudaError)) return NULL; /* a warning made an error */
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

/* default_device() -> EXT_HOST_DEVICE under KILN_TARGET=cpu (read now: os.environ's
 * writes reach getenv), else the current device */
static PyObject *f_default_device(PyObject *m, PyObject *unused) {
    (void)unused;
    const char *t = getenv("KILN_TARGET");
    return PyLong_FromLong(t && strcmp(t, "cpu") == 0 ? EXT_HOST_DEVICE
                                                        : ext_state(m)->current_device);
}

static PyObject *f_synchronize(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    if (!st->cuda) Py_RETURN_NONE; /* nothing was ever launched on a GPU */
    for (int d = 0; d < kiln_cuda_device_count(st->cuda) && d < EXT_MAX_DEVICES; d++) {
        if (!st->errbuf[d] && d != st->current_device) continue;
        if (ext_use_device(st, d) < 0) return NULL;
        int rc;
        double t0 = ext_obs_us();
        Py_BEGIN_ALLOW_THREADS
        rc = kiln_cuda_sync(st->cuda);
        Py_END_ALLOW_THREADS
        ext_obs_sync(st, "synchronize", t0, (ext_obs_us() - t0) / 1e3);
        if (rc != 0) return ext_cuda_error(st, rc, "synchronizing the device");
        if (ext_check_kernel_error(st, d) < 0) return NULL;
    }
    Py_RETURN_NONE;
}

/* _ctx_check_seconds(count): the seconds one making-current check of the current device's
 * context costs (what every launch does first, ext_use_device), from a C loop: a benchmark
 * hook (bench/gpu/launch_args.py). */
static PyObject *f_ctx_check_seconds(PyObject *m, PyObject *arg) {
    ModState *st = ext_state(m);
    long count = PyLong_AsLong(arg);
    if (count < 1) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "count must be positive");
        return NULL;
    }
    if (ext_use_device(st, st->current_device) < 0) return NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < count; i++)
        if (ext_use_device(st, st->current_device) < 0) return NULL;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return PyFloat_FromDouble(((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9) /
                              (double)count);
}

PyMethodDef ext_driver_functions[] = {
    {"_ctx_check_seconds", f_ctx_check_seconds, METH_O,
     "benchmark hook: one launch's context check, in seconds"},
    {"cuda_available", f_cuda_available, METH_NOARGS, "(available, why not)"},
    {"cuda_info", f_cuda_info, METH_NOARGS, "driver version and devices"},
    {"select_device", f_select_device, METH_O, "select_device(n)"},
    {"current_device", f_current_device, METH_NOARGS, "the selected device"},
    {"default_device", f_default_device, METH_NOARGS,
     "where new arrays go: -1 (host memory) under KILN_TARGET=cpu, else the selected device"},
    {"synchronize", f_synchronize, METH_NOARGS, "wait for all GPU work; report kernel errors"},
    {NULL, NULL, 0, NULL}};
