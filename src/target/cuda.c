/* cuda.c: the CUDA target's driver: load modules, launch, move memory.
 *
 * The driver is opened with dlopen and called through function pointers
 * (cuda_int.h; the few types they need are plain integers and opaque
 * pointers), so there is no build- or link-time dependency on CUDA: kiln runs
 * on machines without it.  NVRTC is nvrtc.c's; sharing memory between
 * processes is cuda_ipc.c's.
 *
 * One primary context per device, made current on the calling thread by
 * kiln_cuda_use.  Launch and copy functions return the driver's CUresult so
 * the caller can raise kiln.CudaError with the driver's own name and text.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compiler.h"
#include "target/cuda_int.h"
#include "target/dl.h"

kiln_cuda *kiln_cuda_open(const char **why) {
    const char *env = getenv("KILN_CUDA_DRIVER");
    void *lib = dlopen(env && *env ? env : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        *why = env && *env ? "the CUDA driver that KILN_CUDA_DRIVER names cannot be loaded"
                           : "the CUDA driver (libcuda.so.1) was not found";
        return NULL;
    }
    kiln_cuda *c = calloc(1, sizeof *c);
    if (!c) {
        dlclose(lib);
        *why = "out of memory";
        return NULL;
    }
    c->lib = lib;
    bool ok = true;
    LOAD(c, lib, Init, "cuInit", &ok);
    LOAD(c, lib, DriverGetVersion, "cuDriverGetVersion", &ok);
    LOAD(c, lib, DeviceGetCount, "cuDeviceGetCount", &ok);
    LOAD(c, lib, DeviceGet, "cuDeviceGet", &ok);
    LOAD(c, lib, DeviceGetAttribute, "cuDeviceGetAttribute", &ok);
    LOAD(c, lib, DeviceGetName, "cuDeviceGetName", &ok);
    LOAD(c, lib, DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", &ok);
    LOAD(c, lib, DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", &ok);
    LOAD(c, lib, CtxSetCurrent, "cuCtxSetCurrent", &ok);
    LOAD(c, lib, CtxGetCurrent, "cuCtxGetCurrent", &ok);
    LOAD(c, lib, CtxSynchronize, "cuCtxSynchronize", &ok);
    LOAD(c, lib, ModuleLoadData, "cuModuleLoadData", &ok);
    LOAD(c, lib, ModuleUnload, "cuModuleUnload", &ok);
    LOAD(c, lib, ModuleGetFunction, "cuModuleGetFunction", &ok);
    LOAD(c, lib, FuncSetAttribute, "cuFuncSetAttribute", &ok);
    LOAD(c, lib, FuncGetAttribute, "cuFuncGetAttribute", &ok);
    LOAD(c, lib, LaunchKernel, "cuLaunchKernel", &ok);
    LOAD(c, lib, MemAlloc, "cuMemAlloc_v2", &ok);
    LOAD(c, lib, MemFree, "cuMemFree_v2", &ok);
    LOAD(c, lib, MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", &ok);
    LOAD(c, lib, MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", &ok);
    LOAD(c, lib, MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", &ok);
    LOAD(c, lib, MemsetD8Async, "cuMemsetD8Async", &ok);
    LOAD(c, lib, StreamCreate, "cuStreamCreate", &ok);
    LOAD(c, lib, StreamDestroy, "cuStreamDestroy_v2", &ok);
    LOAD(c, lib, StreamSynchronize, "cuStreamSynchronize", &ok);
    LOAD(c, lib, PointerGetAttribute, "cuPointerGetAttribute", &ok);
    LOAD(c, lib, EventCreate, "cuEventCreate", &ok);
    LOAD(c, lib, EventDestroy, "cuEventDestroy_v2", &ok);
    LOAD(c, lib, EventRecord, "cuEventRecord", &ok);
    LOAD(c, lib, EventSynchronize, "cuEventSynchronize", &ok);
    LOAD(c, lib, EventQuery, "cuEventQuery", &ok);
    LOAD(c, lib, EventElapsedTime, "cuEventElapsedTime", &ok);
    LOAD(c, lib, StreamWaitEvent, "cuStreamWaitEvent", &ok);
    LOAD(c, lib, MemHostAlloc, "cuMemHostAlloc", &ok);
    LOAD(c, lib, MemFreeHost, "cuMemFreeHost", &ok);
    bool managed = true;
    LOAD(c, lib, MemAllocManaged, "cuMemAllocManaged", &managed);
    c->has_link = true;
    LOAD(c, lib, LinkCreate, "cuLinkCreate_v2", &c->has_link);
    LOAD(c, lib, LinkAddData, "cuLinkAddData_v2", &c->has_link);
    LOAD(c, lib, LinkComplete, "cuLinkComplete", &c->has_link);
    LOAD(c, lib, LinkDestroy, "cuLinkDestroy", &c->has_link);
    LOAD(c, lib, MemHostRegister, "cuMemHostRegister_v2", &ok);
    LOAD(c, lib, MemHostUnregister, "cuMemHostUnregister", &ok);
    LOAD(c, lib, GetErrorName, "cuGetErrorName", &ok);
    LOAD(c, lib, GetErrorString, "cuGetErrorString", &ok);
    if (!ok) {
        *why = "the CUDA driver is too old (kiln needs CUDA 11.2 or newer)";
        kiln_cuda_close(c);
        return NULL;
    }
    bool has_async = true;
    LOAD(c, lib, MemAllocAsync, "cuMemAllocAsync", &has_async);
    LOAD(c, lib, MemFreeAsync, "cuMemFreeAsync", &has_async);
    c->async_alloc = has_async;
    c->pools = has_async;
    LOAD(c, lib, DeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", &c->pools);
    LOAD(c, lib, MemPoolSetAttribute, "cuMemPoolSetAttribute", &c->pools);
    LOAD(c, lib, MemPoolTrimTo, "cuMemPoolTrimTo", &c->pools);
    c->ipc = c->pools;
    LOAD(c, lib, MemPoolCreate, "cuMemPoolCreate", &c->ipc);
    LOAD(c, lib, MemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", &c->ipc);
    LOAD(c, lib, MemPoolExportToShareableHandle, "cuMemPoolExportToShareableHandle", &c->ipc);
    LOAD(c, lib, MemPoolImportFromShareableHandle, "cuMemPoolImportFromShareableHandle", &c->ipc);
    LOAD(c, lib, MemPoolExportPointer, "cuMemPoolExportPointer", &c->ipc);
    LOAD(c, lib, MemPoolImportPointer, "cuMemPoolImportPointer", &c->ipc);
    c->legacy_ipc = true;
    LOAD(c, lib, MemGetAddressRange, "cuMemGetAddressRange_v2", &c->legacy_ipc);
    LOAD(c, lib, IpcGetMemHandle, "cuIpcGetMemHandle", &c->legacy_ipc);
    LOAD(c, lib, IpcOpenMemHandle, "cuIpcOpenMemHandle_v2", &c->legacy_ipc);
    LOAD(c, lib, IpcCloseMemHandle, "cuIpcCloseMemHandle", &c->legacy_ipc);
    bool info = true;
    LOAD(c, lib, MemGetInfo, "cuMemGetInfo_v2", &info);
    for (int d = 0; d < MAX_DEVICES; d++) c->pool_fd[d] = -1;
    c->graphs = true;
    LOAD(c, lib, GraphCreate, "cuGraphCreate", &c->graphs);
    LOAD(c, lib, GraphDestroy, "cuGraphDestroy", &c->graphs);
    LOAD(c, lib, GraphAddKernelNode, "cuGraphAddKernelNode", &c->graphs);
    LOAD(c, lib, GraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", &c->graphs);
    LOAD(c, lib, GraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams", &c->graphs);
    LOAD(c, lib, GraphLaunch, "cuGraphLaunch", &c->graphs);
    LOAD(c, lib, GraphExecDestroy, "cuGraphExecDestroy", &c->graphs);
    c->coop = c->occupancy = true;
    LOAD(c, lib, LaunchCooperativeKernel, "cuLaunchCooperativeKernel", &c->coop);
    LOAD(c, lib, OccupancyMaxActiveBlocksPerMultiprocessor,
         "cuOccupancyMaxActiveBlocksPerMultiprocessor", &c->occupancy);
    c->graph_coop = c->graphs;
    LOAD(c, lib, GraphKernelNodeSetAttribute, "cuGraphKernelNodeSetAttribute", &c->graph_coop);
    if (c->Init(0) != 0) {
        *why = "the CUDA driver failed to initialise (cuInit): no usable GPU or driver";
        kiln_cuda_close(c);
        return NULL;
    }
    c->DriverGetVersion(&c->driver);
    if (c->DeviceGetCount(&c->ndev) != 0 || c->ndev <= 0) {
        *why = "the CUDA driver reports no GPU";
        kiln_cuda_close(c);
        return NULL;
    }
    if (c->ndev > MAX_DEVICES) c->ndev = MAX_DEVICES;
    for (int d = 0; d < c->ndev; d++) {
        CUdevice dev;
        int ma = 0, mi = 0;
        c->arch[d] = -1;
        if (c->DeviceGet(&dev, d) == 0 &&
            c->DeviceGetAttribute(&ma, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == 0 &&
            c->DeviceGetAttribute(&mi, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == 0)
            c->arch[d] = ma * 10 + mi;
        int sms = 0, per_sm = 0;
        if (c->arch[d] > 0 &&
            c->DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == 0 &&
            c->DeviceGetAttribute(&per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                                  dev) == 0 &&
            sms > 0 && per_sm > 0)
            c->fill[d] = (int64_t)sms * per_sm;
    }
    return c;
}

void kiln_cuda_close(kiln_cuda *c) {
    if (!c) return;
    /* Primary contexts are left to the driver at exit: releasing them here
     * would pull memory from under arrays still alive in other libraries; the
     * driver library stays loaded for the same reason. */
    free(c);
}

int kiln_cuda_device_count(kiln_cuda *c) { return c->ndev; }
int kiln_cuda_arch(kiln_cuda *c, int dev) { return dev >= 0 && dev < c->ndev ? c->arch[dev] : -1; }
int kiln_cuda_driver_version(kiln_cuda *c) { return c->driver; }

int kiln_cuda_device_name(kiln_cuda *c, int dev, char *buf, int size) {
    CUdevice d;
    int rc = c->DeviceGet(&d, dev);
    if (rc == 0) rc = c->DeviceGetName(buf, size, d);
    return rc;
}

/* Device dev's pool for kiln's memory.  Its own pool, created exportable (a POSIX
 * file descriptor shares it with other processes: cuda_ipc.c), else the device's
 * default pool, which cannot be shared.  Both keep freed memory (see kiln_cuda_use). */
static void *make_pool(kiln_cuda *c, int dev, CUdevice d) {
    void *pool = NULL;
    uint64_t keep = UINT64_MAX;
    if (c->ipc) {
        CUmemPoolProps p;
        memset(&p, 0, sizeof p);
        p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        p.location.id = d;
        if (c->MemPoolCreate(&pool, &p) == 0 && pool &&
            c->MemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) == 0) {
            c->own_pool[dev] = true;
            return pool;
        }
        pool = NULL;
    }
    if (c->pools && c->DeviceGetDefaultMemPool(&pool, d) == 0 && pool &&
        c->MemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) == 0)
        return pool;
    return NULL;
}

/* kiln's own pool of the current context's device, or NULL (the default pool's
 * memory comes from cuMemAllocAsync) */
static void *own_pool(kiln_cuda *c) {
    CUcontext cur = NULL;
    if (c->CtxGetCurrent(&cur) != 0 || !cur) return NULL;
    for (int d = 0; d < c->ndev; d++)
        if (c->ctx[d] == cur) return c->own_pool[d] ? c->pool[d] : NULL;
    return NULL;
}

int kiln_cuda_use(kiln_cuda *c, int dev) {
    if (dev < 0 || dev >= c->ndev) return 101; /* CUDA_ERROR_INVALID_DEVICE */
    if (!c->ctx[dev]) {
        CUdevice d;
        int rc = c->DeviceGet(&d, dev);
        if (rc == 0) rc = c->DevicePrimaryCtxRetain(&c->ctx[dev], d);
        if (rc != 0) return rc;
        /* The default pool gives freed memory back to the system at every
         * synchronisation (release threshold 0), so a kernel that allocates its
         * result each call (vectorize, fuse) paid a new mapping of it each time:
         * 0.5 ms for 256 MiB on an H200.  The pool keeps what it has instead, as
         * CuPy's and PyTorch's allocators do; kiln_cuda_alloc trims it when an
         * allocation finds the device full. */
        c->pool[dev] = make_pool(c, dev, d);
    }
    CUcontext cur = NULL;
    c->CtxGetCurrent(&cur);
    if (cur == c->ctx[dev]) return 0;
    return c->CtxSetCurrent(c->ctx[dev]);
}

const char *kiln_cuda_error_name(kiln_cuda *c, int rc) {
    const char *s = NULL;
    if (!c || c->GetErrorName(rc, &s) != 0 || !s) return "CUDA_ERROR_UNKNOWN";
    return s;
}

const char *kiln_cuda_error_text(kiln_cuda *c, int rc) {
    const char *s = NULL;
    if (!c || c->GetErrorString(rc, &s) != 0 || !s) return "unknown error";
    return s;
}

int kiln_cuda_load(kiln_cuda *c, int dev, const void *image, const char *entry,
                   kiln_cuda_module **out) {
    *out = NULL;
    if (dev < 0 || dev >= c->ndev) return 101; /* CUDA_ERROR_INVALID_DEVICE */
    kiln_cuda_module *m = calloc(1, sizeof *m);
    if (!m) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    int rc = c->ModuleLoadData(&m->mod, image);
    if (rc == 0) rc = c->ModuleGetFunction(&m->fn, m->mod, entry);
    char wide[128];
    if (rc == 0 && c->fill[dev] > 0 &&
        snprintf(wide, sizeof wide, "%s_wide", entry) < (int)sizeof wide &&
        c->ModuleGetFunction(&m->wide, m->mod, wide) != 0)
        m->wide = NULL; /* CUDA_ERROR_NOT_FOUND: the kernel does not widen */
    if (rc != 0) {
        if (m->mod) c->ModuleUnload(m->mod);
        free(m);
        return rc;
    }
    /* Widening divides the blocks by KILN_CUDA_WIDE: only worth it when what is
     * left still fills every SM. */
    m->wide_min = KILN_CUDA_WIDE * c->fill[dev];
    m->dyn_smem_max = 48 * 1024;
    m->dev = dev;
    *out = m;
    return 0;
}

void kiln_cuda_unload(kiln_cuda *c, kiln_cuda_module *m) {
    if (!m) return;
    c->ModuleUnload(m->mod);
    free(m);
}

int kiln_cuda_widens(const kiln_cuda_module *m, const int64_t grid[3], const int64_t block[3]) {
    return m->wide && grid[1] == 1 && grid[2] == 1 && block[1] == 1 && block[2] == 1 &&
           grid[0] * block[0] >= m->wide_min;
}

void kiln_cuda_module_set_cooperative(kiln_cuda_module *m) { m->coop = true; }
int kiln_cuda_module_cooperative(const kiln_cuda_module *m) { return m->coop; }

int kiln_cuda_max_coop_blocks(kiln_cuda *c, const kiln_cuda_module *m, int block_threads,
                              size_t dyn_smem, int64_t *out) {
    *out = 0;
    if (!c->occupancy) return CUDA_ERROR_NOT_SUPPORTED;
    int per_sm = 0, sms = 0;
    CUdevice d;
    int rc = c->OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, m->fn, block_threads, dyn_smem);
    if (rc == 0) rc = c->DeviceGet(&d, m->dev);
    if (rc == 0) rc = c->DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d);
    if (rc == 0) *out = (int64_t)per_sm * sms;
    return rc;
}

int kiln_cuda_launch(kiln_cuda *c, kiln_cuda_module *m, const int64_t grid[3],
                     const int64_t block[3], unsigned shmem, void *stream, void **params,
                     void **wide_params) {
    if ((int)shmem > m->dyn_smem_max) {
        int rc = c->FuncSetAttribute(m->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     (int)shmem);
        if (rc != 0) return rc;
        m->dyn_smem_max = (int)shmem;
    }
    if (m->coop) /* the kind of launch is the module's, decided once when it was loaded */
        return c->coop ? c->LaunchCooperativeKernel(m->fn, (unsigned)grid[0], (unsigned)grid[1],
                                                    (unsigned)grid[2], (unsigned)block[0],
                                                    (unsigned)block[1], (unsigned)block[2],
                                                    shmem, stream, params)
                       : CUDA_ERROR_NOT_SUPPORTED;
    if (wide_params)
        return c->LaunchKernel(m->wide, (unsigned)((grid[0] + KILN_CUDA_WIDE - 1) / KILN_CUDA_WIDE),
                               1, 1, (unsigned)block[0], 1, 1, shmem, stream, wide_params, NULL);
    return c->LaunchKernel(m->fn, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2],
                           (unsigned)block[0], (unsigned)block[1], (unsigned)block[2], shmem,
                           stream, params, NULL);
}

/* ---- graphs ------------------------------------------------------------------------- */

struct kiln_cuda_graph {
    CUgraph graph;
    CUgraphExec exec[KILN_CUDA_GRAPH_EXECS]; /* executable copies, nexec of them */
    int nexec;
    CUgraphNode *nodes;
    int n, cap;
};

/* The node parameters of a launch, as kiln_cuda_launch would make it. */
static int node_params(kiln_cuda_module *m, const int64_t grid[3], const int64_t block[3],
                       unsigned shmem, void **params, void **wide_params, KernelNodeParams *p) {
    memset(p, 0, sizeof *p);
    if (wide_params) {
        p->func = m->wide;
        p->grid[0] = (unsigned)((grid[0] + KILN_CUDA_WIDE - 1) / KILN_CUDA_WIDE);
        p->grid[1] = p->grid[2] = 1;
        p->params = wide_params;
    } else {
        p->func = m->fn;
        for (int i = 0; i < 3; i++) p->grid[i] = (unsigned)grid[i];
        p->params = params;
    }
    for (int i = 0; i < 3; i++) p->block[i] = (unsigned)block[i];
    p->shmem = shmem;
    return 0;
}

int kiln_cuda_graphs(kiln_cuda *c) { return c->graphs; }
int kiln_cuda_graph_coop(kiln_cuda *c) { return c->graph_coop; }

int kiln_cuda_graph_new(kiln_cuda *c, kiln_cuda_graph **out) {
    *out = NULL;
    if (!c->graphs) return CUDA_ERROR_NOT_SUPPORTED;
    kiln_cuda_graph *g = calloc(1, sizeof *g);
    if (!g) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    int rc = c->GraphCreate(&g->graph, 0);
    if (rc != 0) {
        free(g);
        return rc;
    }
    *out = g;
    return 0;
}

int kiln_cuda_graph_add(kiln_cuda *c, kiln_cuda_graph *g, kiln_cuda_module *m,
                        const int64_t grid[3], const int64_t block[3], unsigned shmem,
                        void **params, void **wide_params) {
    if (g->nexec) return 1; /* CUDA_ERROR_INVALID_VALUE: instantiated already */
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 8;
        CUgraphNode *nodes = realloc(g->nodes, sizeof *nodes * (size_t)cap);
        if (!nodes) return 2;
        g->nodes = nodes;
        g->cap = cap;
    }
    KernelNodeParams p;
    node_params(m, grid, block, shmem, params, wide_params, &p);
    /* a chain: each node after the one before, as the launches ran on their streams */
    if (m->coop && !c->graph_coop) return CUDA_ERROR_NOT_SUPPORTED;
    int rc = c->GraphAddKernelNode(&g->nodes[g->n], g->graph, g->n ? &g->nodes[g->n - 1] : NULL,
                                   g->n ? 1 : 0, &p);
    if (rc == 0 && m->coop) {
        /* CUkernelNodeAttrValue: a union of at most 64 bytes, here its int `cooperative` */
        union {
            int cooperative;
            unsigned char pad[64];
        } v;
        memset(&v, 0, sizeof v);
        v.cooperative = 1;
        rc = c->GraphKernelNodeSetAttribute(g->nodes[g->n], CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, &v);
    }
    if (rc == 0) g->n++;
    return rc;
}

int kiln_cuda_graph_instantiate(kiln_cuda *c, kiln_cuda_graph *g) {
    if (g->nexec == KILN_CUDA_GRAPH_EXECS) return 1; /* CUDA_ERROR_INVALID_VALUE */
    int rc = c->GraphInstantiateWithFlags(&g->exec[g->nexec], g->graph, 0);
    if (rc == 0) g->nexec++;
    return rc;
}

int kiln_cuda_graph_execs(const kiln_cuda_graph *g) { return g->nexec; }

int kiln_cuda_graph_set(kiln_cuda *c, kiln_cuda_graph *g, int x, int i, kiln_cuda_module *m,
                        const int64_t grid[3], const int64_t block[3], unsigned shmem,
                        void **params, void **wide_params) {
    if (x < 0 || x >= g->nexec || i < 0 || i >= g->n) return 1;
    KernelNodeParams p;
    node_params(m, grid, block, shmem, params, wide_params, &p);
    return c->GraphExecKernelNodeSetParams(g->exec[x], g->nodes[i], &p);
}

int kiln_cuda_graph_launch(kiln_cuda *c, kiln_cuda_graph *g, int x, void *stream) {
    if (x < 0 || x >= g->nexec) return 1;
    return c->GraphLaunch(g->exec[x], stream);
}

void kiln_cuda_graph_free(kiln_cuda *c, kiln_cuda_graph *g) {
    if (!g) return;
    for (int x = 0; x < g->nexec; x++) c->GraphExecDestroy(g->exec[x]);
    if (g->graph) c->GraphDestroy(g->graph);
    free(g->nodes);
    free(g);
}

int kiln_cuda_alloc(kiln_cuda *c, uint64_t *ptr, size_t size, void *stream) {
    CUdeviceptr p = 0;
    if (size == 0) size = 1;
    int rc;
    if (c->async_alloc) {
        void *own = own_pool(c);
        rc = own ? c->MemAllocFromPoolAsync(&p, size, own, stream)
                 : c->MemAllocAsync(&p, size, stream);
        if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
            /* memory the pools keep (freed, not in use) goes back, then once more */
            for (int d = 0; d < c->ndev; d++)
                if (c->pool[d]) c->MemPoolTrimTo(c->pool[d], 0);
            rc = own ? c->MemAllocFromPoolAsync(&p, size, own, stream)
                     : c->MemAllocAsync(&p, size, stream);
        }
        if (rc == CUDA_ERROR_NOT_SUPPORTED) {
            c->async_alloc = false;
            rc = c->MemAlloc(&p, size);
        }
    } else {
        rc = c->MemAlloc(&p, size);
    }
    *ptr = p;
    return rc;
}

int kiln_cuda_free(kiln_cuda *c, uint64_t ptr, void *stream) {
    if (c->async_alloc) return c->MemFreeAsync(ptr, stream);
    return c->MemFree(ptr);
}

int kiln_cuda_copy_htod(kiln_cuda *c, uint64_t dst, const void *src, size_t n, void *stream) {
    if (!n) return 0;
    return c->MemcpyHtoDAsync(dst, src, n, stream);
}

int kiln_cuda_copy_dtoh(kiln_cuda *c, void *dst, uint64_t src, size_t n, void *stream) {
    if (!n) return 0;
    int rc = c->MemcpyDtoHAsync(dst, src, n, stream);
    /* the host buffer is the caller's as soon as this returns */
    if (rc == 0) rc = c->StreamSynchronize(stream);
    return rc;
}

int kiln_cuda_copy_dtod(kiln_cuda *c, uint64_t dst, uint64_t src, size_t n, void *stream) {
    if (!n) return 0;
    return c->MemcpyDtoDAsync(dst, src, n, stream);
}

int kiln_cuda_memset(kiln_cuda *c, uint64_t dst, unsigned char v, size_t n, void *stream) {
    if (!n) return 0;
    return c->MemsetD8Async(dst, v, n, stream);
}

int kiln_cuda_stream_new(kiln_cuda *c, void **stream) {
    /* CU_STREAM_DEFAULT (blocking), as Numba's and CUDA's runtime streams: work queued on
     * the legacy default stream afterwards (a copy_to_host() without a stream) waits for
     * this stream's work, so a Numba program that launches on a stream and copies without
     * one reads the kernel's results, not memory the kernel is still writing */
    return c->StreamCreate((CUstream *)stream, 0);
}
int kiln_cuda_stream_free(kiln_cuda *c, void *stream) { return c->StreamDestroy(stream); }
int kiln_cuda_stream_sync(kiln_cuda *c, void *stream) { return c->StreamSynchronize(stream); }

int kiln_cuda_event_new(kiln_cuda *c, void **event, int timing) {
    return c->EventCreate(event, timing ? 0u : 2u /* CU_EVENT_DISABLE_TIMING */);
}
int kiln_cuda_event_free(kiln_cuda *c, void *event) { return c->EventDestroy(event); }
int kiln_cuda_event_record(kiln_cuda *c, void *event, void *stream) {
    return c->EventRecord(event, stream);
}
int kiln_cuda_event_sync(kiln_cuda *c, void *event) { return c->EventSynchronize(event); }
int kiln_cuda_event_query(kiln_cuda *c, void *event) { return c->EventQuery(event); }
int kiln_cuda_event_elapsed(kiln_cuda *c, float *ms, void *start, void *end) {
    return c->EventElapsedTime(ms, start, end);
}
int kiln_cuda_stream_wait_event(kiln_cuda *c, void *stream, void *event) {
    return c->StreamWaitEvent(stream, event, 0);
}

int kiln_cuda_func_attribute(kiln_cuda *c, const kiln_cuda_module *m, int attr, int *value) {
    *value = 0;
    return c->FuncGetAttribute(value, attr, m->fn);
}

int kiln_cuda_func_set_attribute(kiln_cuda *c, kiln_cuda_module *m, int attr, int value) {
    int rc = c->FuncSetAttribute(m->fn, attr, value);
    if (rc == 0 && m->wide) rc = c->FuncSetAttribute(m->wide, attr, value);
    return rc;
}

int kiln_cuda_host_alloc(kiln_cuda *c, void **ptr, size_t size, int kind) {
    enum { PORTABLE = 1, DEVICEMAP = 2, ATTACH_GLOBAL = 1 };
    *ptr = NULL;
    if (kind == KILN_HOST_MANAGED) {
        CUdeviceptr p = 0;
        if (!c->MemAllocManaged) return CUDA_ERROR_NOT_SUPPORTED;
        int rc = c->MemAllocManaged(&p, size ? size : 1, ATTACH_GLOBAL);
        *ptr = (void *)(uintptr_t)p;
        return rc;
    }
    return c->MemHostAlloc(ptr, size ? size : 1, kind == KILN_HOST_MAPPED ? PORTABLE | DEVICEMAP : 0);
}
int kiln_cuda_host_free(kiln_cuda *c, void *ptr, int kind) {
    if (kind == KILN_HOST_MANAGED) return c->MemFree((CUdeviceptr)(uintptr_t)ptr);
    return c->MemFreeHost(ptr);
}
int kiln_cuda_host_register(kiln_cuda *c, void *ptr, size_t size) {
    return c->MemHostRegister(ptr, size, 0);
}
int kiln_cuda_host_unregister(kiln_cuda *c, void *ptr) { return c->MemHostUnregister(ptr); }

int kiln_cuda_device_attribute(kiln_cuda *c, int dev, int attr, int *value) {
    CUdevice d;
    *value = 0;
    if (dev < 0 || dev >= c->ndev) return 101; /* CUDA_ERROR_INVALID_DEVICE */
    int rc = c->DeviceGet(&d, dev);
    return rc ? rc : c->DeviceGetAttribute(value, attr, d);
}
int kiln_cuda_sync(kiln_cuda *c) { return c->CtxSynchronize(); }

int kiln_cuda_pointer_device(kiln_cuda *c, uint64_t ptr) {
    int dev = -1;
    if (c->PointerGetAttribute(&dev, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr) != 0) return -1;
    return dev;
}

/* ---- the driver's linker ------------------------------------------------------------- */

int kiln_cuda_can_link(kiln_cuda *c) { return c->has_link; }

int kiln_cuda_link(kiln_ctx *ctx, kiln_cuda *c, int dev, const kiln_options *o,
                   const kiln_link_input *in, int n, void **cubin, size_t *cubin_len) {
    /* kiln_link_kind -> CUjitInputType (cubin 0, PTX 1, fatbin 2, object 3, library 4) */
    static const int jit_kind[] = {-1, 0, 1, -1, 2, 3, 4};
    *cubin = NULL;
    *cubin_len = 0;
    if (!c->has_link) {
        diag_plain(ctx, KILN_ERROR, "install nvJitLink (KILN_NVJITLINK names it)",
                   "neither nvJitLink nor the driver's linker (cuLinkCreate) can be used");
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (in[i].kind < 1 || in[i].kind > 6 || jit_kind[in[i].kind] < 0) {
            diag_plain(ctx, KILN_ERROR,
                       "install nvJitLink (pip: nvidia-nvjitlink), which links LTO-IR, or link "
                       "PTX or a cubin of the function instead",
                       "%s is LTO-IR, which the driver's linker (used without nvJitLink) "
                       "cannot link", in[i].name);
            return -1;
        }
    int rc = kiln_cuda_use(c, dev);
    if (rc != 0) {
        diag_plain(ctx, KILN_ERROR, NULL, "cannot use device %d to link the kernel (CUresult %d)",
                   dev, rc);
        return -1;
    }
    char log[8192] = "";
    /* CU_JIT_ERROR_LOG_BUFFER (5) and its size (6); CU_JIT_MAX_REGISTERS (0) and
     * CU_JIT_GENERATE_LINE_INFO (13) as the kernel's options ask (fastmath has no driver
     * option outside LTO: the kernel's own PTX was compiled with it) */
    int opts[4] = {5, 6, 0, 13};
    void *vals[4] = {log, (void *)(uintptr_t)sizeof log, (void *)(uintptr_t)o->max_registers,
                     (void *)(uintptr_t)1};
    unsigned nopts = 2;
    if (o->max_registers > 0) nopts = 3;
    if (o->lineinfo) {
        opts[nopts] = 13;
        vals[nopts++] = (void *)(uintptr_t)1;
    }
    void *state = NULL;
    rc = c->LinkCreate(nopts, opts, vals, &state);
    for (int i = 0; rc == 0 && i < n; i++)
        rc = c->LinkAddData(state, jit_kind[in[i].kind], (void *)in[i].data, in[i].len,
                            in[i].name, 0, NULL, NULL);
    void *out = NULL;
    size_t len = 0;
    if (rc == 0) rc = c->LinkComplete(state, &out, &len);
    if (rc == 0 && (*cubin = malloc(len ? len : 1)) != NULL) {
        memcpy(*cubin, out, len); /* the link state owns out */
        *cubin_len = len;
    }
    if (state) c->LinkDestroy(state);
    if (rc != 0 || !*cubin) {
        log[sizeof log - 1] = 0;
        diag_plain(ctx, KILN_ERROR,
                   "check that the linked files define the declared functions and were "
                   "compiled as relocatable device code for this GPU",
                   "the driver's linker could not link the kernel for device %d (CUresult %d)%s%s",
                   dev, rc, *log ? ":\n" : "", log);
        return -1;
    }
    return 0;
}

