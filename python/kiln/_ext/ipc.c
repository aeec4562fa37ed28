/* ipc.c: GPU memory shared between processes, as the bytes of a handle.
 *
 * kiln_cuda_ipc_export describes the allocation holding a pointer; this file
 * adds what another process needs to reach it and packs it into bytes (the
 * `reserved` of Numba's handle, which pickles): the exporting process's pid,
 * its address there, and for pool memory the name and token of this process's
 * descriptor server (util/fdserve.h), which hands the pool's descriptor to an
 * importer of the same user.  The importer imports each exporter's pool once
 * (ExtIpc.pools) and maps the allocation from it; in the exporting process
 * itself a handle opens to the memory it describes, without mapping anything.
 *
 * Layout of the bytes (native byte order: both processes are on one machine):
 *   0 magic "KILNIPC1", 8 kind u32, 12 device u32, 16 allocation bytes u64,
 *   24 its address in the exporter u64, 32 exporter's pid u32, 36 zero u32,
 *   40 the driver's 64 bytes, 104 the server's name (64, NUL-padded),
 *   168 its token (16): WIRE_BYTES in all.
 */
#include "ipc.h"

#include "driver.h"
#include "util/fdserve.h"

#include <unistd.h>

enum {
    W_KIND = 8, W_DEV = 12, W_SIZE = 16, W_BASE = 24, W_PID = 32, W_DATA = 40,
    W_NAME = W_DATA + 64, W_TOKEN = W_NAME + KILN_FDSERVE_NAME,
    WIRE_BYTES = W_TOKEN + KILN_FDSERVE_TOKEN,
};
static const char MAGIC[8] = {'K', 'I', 'L', 'N', 'I', 'P', 'C', '1'};

typedef struct ImportedPool {
    char name[KILN_FDSERVE_NAME]; /* the exporter's server */
    int dev;
    void *pool;
} ImportedPool;

struct ExtIpc {
    kiln_fdserver *server; /* this process's, once it shared pool memory */
    char name[KILN_FDSERVE_NAME];
    uint8_t token[KILN_FDSERVE_TOKEN];
    ImportedPool pools[EXT_IPC_POOLS];
    int npools;
};

static struct ExtIpc *ipc_state(ModState *st) {
    if (!st->ipc) {
        st->ipc = PyMem_Calloc(1, sizeof *st->ipc);
        if (!st->ipc) PyErr_NoMemory();
    }
    return st->ipc;
}

static void put32(unsigned char *w, int at, uint32_t v) { memcpy(w + at, &v, 4); }
static void put64(unsigned char *w, int at, uint64_t v) { memcpy(w + at, &v, 8); }
static uint32_t get32(const unsigned char *w, int at) {
    uint32_t v;
    memcpy(&v, w + at, 4);
    return v;
}
static uint64_t get64(const unsigned char *w, int at) {
    uint64_t v;
    memcpy(&v, w + at, 8);
    return v;
}

/* This process's descriptor server, started at the first export (again in a forked
 * child, whose pid differs), offering fd for device dev. */
static int offer(ModState *st, struct ExtIpc *ip, int dev, int fd) {
    if (!ip->server || kiln_fdserver_pid(ip->server) != (int)getpid()) {
        const char *why = NULL;
        kiln_fdserver_forget(ip->server); /* a parent's, inherited by this child */
        ip->server = kiln_fdserver_start(ip->name, ip->token, &why);
        if (!ip->server) {
            PyErr_Format(PyExc_RuntimeError, "cannot share GPU memory with other processes: %s",
                         why);
            return -1;
        }
    }
    (void)st;
    return kiln_fdserver_offer(ip->server, dev, fd);
}

static PyObject *f_ipc_export(PyObject *m, PyObject *arg) {
    ModState *st = ext_state(m);
    uint64_t ptr = PyLong_AsUnsignedLongLong(arg);
    if (ptr == (uint64_t)-1 && PyErr_Occurred()) return NULL;
    kiln_cuda *cu = ext_cuda(st);
    struct ExtIpc *ip = cu ? ipc_state(st) : NULL;
    if (!ip) return NULL;
    int dev = kiln_cuda_pointer_device(cu, ptr);
    if (dev < 0) {
        PyErr_Format(PyExc_ValueError, "0x%llx is not GPU memory this process can share",
                     (unsigned long long)ptr);
        return NULL;
    }
    if (!ext_cuda_on(st, dev)) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = kiln_cuda_sync(cu); /* the allocation and the writes queued to it are done */
    Py_END_ALLOW_THREADS
    if (rc != 0) return ext_cuda_error(st, rc, "synchronizing before sharing memory");
    kiln_ipc_desc d;
    int fd = -1;
    rc = kiln_cuda_ipc_export(cu, ptr, &d, &fd);
    if (rc == 801) { /* CUDA_ERROR_NOT_SUPPORTED */
        PyErr_SetString(PyExc_NotImplementedError,
                        "this GPU memory cannot be shared with another process: it comes from a "
                        "stream-ordered pool that is not exportable (the device's default "
                        "pool: another library's cudaMallocAsync memory, or kiln's on a "
                        "driver that cannot make exportable pools)");
        return NULL;
    }
    if (rc != 0) return ext_cuda_error(st, rc, "making an IPC handle of GPU memory");
    unsigned char w[WIRE_BYTES];
    memset(w, 0, sizeof w);
    memcpy(w, MAGIC, sizeof MAGIC);
    put32(w, W_KIND, (uint32_t)d.kind);
    put32(w, W_DEV, (uint32_t)d.dev);
    put64(w, W_SIZE, d.size);
    put64(w, W_BASE, d.base);
    put32(w, W_PID, (uint32_t)getpid());
    memcpy(w + W_DATA, d.data, sizeof d.data);
    if (d.kind == KILN_IPC_POOL) {
        if (offer(st, ip, d.dev, fd) < 0) return NULL;
        memcpy(w + W_NAME, ip->name, KILN_FDSERVE_NAME);
        memcpy(w + W_TOKEN, ip->token, KILN_FDSERVE_TOKEN);
    }
    return Py_BuildValue("(y#KKi)", (const char *)w, (Py_ssize_t)sizeof w,
                         (unsigned long long)d.offset, (unsigned long long)d.size, d.dev);
}

/* The pool of the exporter named in w, imported once per process. */
static void *imported_pool(ModState *st, struct ExtIpc *ip, kiln_cuda *cu,
                           const unsigned char *w, int dev) {
    const char *name = (const char *)w + W_NAME;
    for (int i = 0; i < ip->npools; i++)
        if (ip->pools[i].dev == dev && strcmp(ip->pools[i].name, name) == 0)
            return ip->pools[i].pool;
    if (ip->npools == EXT_IPC_POOLS) {
        PyErr_Format(PyExc_RuntimeError,
                     "this process already imported GPU memory from %d other processes' pools "
                     "(EXT_IPC_POOLS, docs/limits.md); it cannot take more",
                     EXT_IPC_POOLS);
        return NULL;
    }
    const char *why = NULL;
    int fd;
    Py_BEGIN_ALLOW_THREADS
    fd = kiln_fdserve_fetch(name, w + W_TOKEN, dev, &why);
    Py_END_ALLOW_THREADS
    if (fd < 0) {
        PyErr_Format(PyExc_RuntimeError, "cannot open the IPC handle of process %u: %s",
                     (unsigned)get32(w, W_PID), why);
        return NULL;
    }
    void *pool = NULL;
    int rc = kiln_cuda_ipc_import_pool(cu, fd, &pool);
    close(fd);
    if (rc != 0) {
        ext_cuda_error(st, rc, "importing another process's memory pool");
        return NULL;
    }
    ImportedPool *p = &ip->pools[ip->npools++];
    memcpy(p->name, name, sizeof p->name);
    p->dev = dev;
    p->pool = pool;
    return pool;
}

static PyObject *f_ipc_open(PyObject *m, PyObject *arg) {
    ModState *st = ext_state(m);
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    unsigned char w[WIRE_BYTES];
    bool ok = b.len == WIRE_BYTES;
    if (ok) memcpy(w, b.buf, sizeof w);
    PyBuffer_Release(&b);
    uint32_t kind = ok ? get32(w, W_KIND) : 0;
    ok = ok && memcmp(w, MAGIC, sizeof MAGIC) == 0 &&
         (kind == KILN_IPC_POOL || kind == KILN_IPC_LEGACY) && get64(w, W_SIZE) > 0 &&
         memchr(w + W_NAME, 0, KILN_FDSERVE_NAME) != NULL;
    if (!ok) {
        PyErr_Format(PyExc_ValueError,
                     "these bytes are not a kiln IPC handle (%d bytes from "
                     "DeviceArray.get_ipc_handle() or current_context().get_ipc_handle())",
                     (int)WIRE_BYTES);
        return NULL;
    }
    int dev = (int)get32(w, W_DEV);
    kiln_cuda *cu = ext_cuda_on(st, dev);
    struct ExtIpc *ip = cu ? ipc_state(st) : NULL;
    if (!ip) return NULL;
    if (get32(w, W_PID) == (uint32_t)getpid()) /* the exporter's own memory, as it is */
        return Py_BuildValue("(KiiK)", (unsigned long long)get64(w, W_BASE), dev, 0,
                             (unsigned long long)get64(w, W_SIZE));
    void *pool = NULL;
    if (kind == KILN_IPC_POOL && !(pool = imported_pool(st, ip, cu, w, dev))) return NULL;
    kiln_ipc_desc d;
    memset(&d, 0, sizeof d);
    d.kind = (int)kind;
    d.dev = dev;
    d.size = get64(w, W_SIZE);
    memcpy(d.data, w + W_DATA, sizeof d.data);
    uint64_t ptr = 0;
    int rc = kiln_cuda_ipc_open(cu, &d, pool, &ptr);
    if (rc != 0) return ext_cuda_error(st, rc, "opening an IPC handle of another process's memory");
    return Py_BuildValue("(KiiK)", (unsigned long long)ptr, dev, (int)kind,
                         (unsigned long long)d.size);
}

static PyObject *f_ipc_close(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    int kind, dev;
    unsigned long long ptr;
    if (!PyArg_ParseTuple(args, "iiK", &kind, &dev, &ptr)) return NULL;
    if (kind == 0) Py_RETURN_NONE; /* opened in the exporting process: nothing was mapped */
    kiln_cuda *cu = ext_cuda_on(st, dev);
    if (!cu) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = kiln_cuda_sync(cu); /* work on the memory is done before it goes */
    if (rc == 0) rc = kiln_cuda_ipc_close(cu, kind, ptr);
    Py_END_ALLOW_THREADS
    if (rc != 0) return ext_cuda_error(st, rc, "closing an IPC handle");
    Py_RETURN_NONE;
}

static PyObject *f_mem_info(PyObject *m, PyObject *arg) {
    ModState *st = ext_state(m);
    long dev = PyLong_AsLong(arg);
    if (dev == -1 && PyErr_Occurred()) return NULL;
    kiln_cuda *cu = ext_cuda_on(st, (int)dev);
    if (!cu) return NULL;
    size_t fr = 0, total = 0;
    int rc = kiln_cuda_mem_info(cu, &fr, &total);
    if (rc != 0) return ext_cuda_error(st, rc, "reading the device's free memory");
    return Py_BuildValue("(nn)", (Py_ssize_t)fr, (Py_ssize_t)total);
}

PyMethodDef ext_ipc_functions[] = {
    {"ipc_export", f_ipc_export, METH_O,
     "ipc_export(ptr) -> (handle bytes, offset, allocation bytes, device)"},
    {"ipc_open", f_ipc_open, METH_O,
     "ipc_open(handle bytes) -> (ptr, device, kind to close, allocation bytes)"},
    {"ipc_close", f_ipc_close, METH_VARARGS, "ipc_close(kind, device, ptr)"},
    {"mem_info", f_mem_info, METH_O, "mem_info(device) -> (free bytes, total bytes)"},
    {NULL, NULL, 0, NULL}};
