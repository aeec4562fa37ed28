/* cuda_ipc.c: GPU memory shared between processes (kiln.h, "GPU memory shared
 * between processes").
 *
 * kiln's arrays come from a stream-ordered pool of its own per device, created
 * with a POSIX file descriptor as its export handle (cuda.c, make_pool): the
 * driver's legacy cuIpcGetMemHandle refuses pool memory, but an exportable
 * pool shares any of its allocations with cuMemPoolExportPointer's 64 bytes once
 * the importing process holds the pool (cuMemPoolImportFromShareableHandle of
 * its descriptor, which travels over a Unix socket: util/fdserve.c).  Memory
 * another library allocated with cuMemAlloc (CuPy's pool, PyTorch's allocator)
 * is shared through the legacy handle.  What is shared is always the whole
 * allocation holding the pointer; the offset of the pointer in it travels with
 * the handle, as Numba's does.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "target/cuda_int.h"

int kiln_cuda_ipc_export(kiln_cuda *c, uint64_t ptr, kiln_ipc_desc *out, int *pool_fd) {
    memset(out, 0, sizeof *out);
    *pool_fd = -1;
    if (!c->legacy_ipc) return CUDA_ERROR_NOT_SUPPORTED;
    CUdeviceptr base = 0;
    size_t size = 0;
    int rc = c->MemGetAddressRange(&base, &size, ptr);
    if (rc != 0) return rc;
    int dev = kiln_cuda_pointer_device(c, ptr);
    if (dev < 0 || dev >= c->ndev) return 101; /* CUDA_ERROR_INVALID_DEVICE */
    out->dev = dev;
    out->base = base;
    out->size = size;
    out->offset = ptr - base;
    void *pool = NULL;
    if (c->PointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, base) != 0)
        pool = NULL;
    if (!pool) { /* cuMemAlloc's memory */
        out->kind = KILN_IPC_LEGACY;
        return c->IpcGetMemHandle((CUipcMemHandle *)out->data, base);
    }
    if (!c->own_pool[dev] || pool != c->pool[dev]) return CUDA_ERROR_NOT_SUPPORTED;
    if (c->pool_fd[dev] < 0) {
        int fd = -1;
        rc = c->MemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
        if (rc != 0) return rc;
        c->pool_fd[dev] = fd;
    }
    rc = c->MemPoolExportPointer(out->data, base);
    if (rc != 0) return rc;
    out->kind = KILN_IPC_POOL;
    *pool_fd = c->pool_fd[dev];
    return 0;
}

int kiln_cuda_ipc_import_pool(kiln_cuda *c, int fd, void **pool) {
    *pool = NULL;
    if (!c->ipc) return CUDA_ERROR_NOT_SUPPORTED;
    return c->MemPoolImportFromShareableHandle(pool, (void *)(intptr_t)fd,
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
}

int kiln_cuda_ipc_open(kiln_cuda *c, const kiln_ipc_desc *d, void *pool, uint64_t *ptr) {
    CUdeviceptr p = 0;
    int rc;
    *ptr = 0;
    if (d->kind == KILN_IPC_POOL) {
        if (!c->ipc || !pool) return CUDA_ERROR_NOT_SUPPORTED;
        unsigned char data[sizeof d->data];
        memcpy(data, d->data, sizeof data);
        rc = c->MemPoolImportPointer(&p, pool, data);
    } else {
        if (!c->legacy_ipc) return CUDA_ERROR_NOT_SUPPORTED;
        CUipcMemHandle h;
        memcpy(h.reserved, d->data, sizeof h.reserved);
        rc = c->IpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    }
    if (rc == 0) *ptr = p;
    return rc;
}

int kiln_cuda_ipc_close(kiln_cuda *c, int kind, uint64_t ptr) {
    /* an imported pool allocation is freed like any (the exporter's stays) */
    return kind == KILN_IPC_POOL ? c->MemFree(ptr) : c->IpcCloseMemHandle(ptr);
}

int kiln_cuda_mem_info(kiln_cuda *c, size_t *free_bytes, size_t *total_bytes) {
    *free_bytes = *total_bytes = 0;
    if (!c->MemGetInfo) return CUDA_ERROR_NOT_SUPPORTED;
    return c->MemGetInfo(free_bytes, total_bytes);
}
