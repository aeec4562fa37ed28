/* fake_cuda.c: a stand-in for libcuda.so.1 that runs nothing, for testing and
 * timing kiln's host side of the GPU path on machines without a GPU (CI).
 *
 * Load it with KILN_CUDA_DRIVER=/path/to/libkiln-fake-cuda.so.  One device,
 * sm_90, 132 SMs of 2048 threads.  "Device" memory is host memory from
 * malloc, so copies to and from it work; a module is the image's bytes, and
 * cuModuleGetFunction finds a name when it occurs in them (NVRTC's cubins
 * keep their symbol names).  cuLaunchKernel runs nothing: it records the
 * function's name, the grid, the block and the first bytes that each
 * parameter pointer points at, which fake_last_launch() returns to a test.
 * cuLaunchCooperativeKernel records the same and that it was cooperative; its
 * occupancy is 2048 threads per SM over the block's threads (at most 32 blocks), and a
 * larger cooperative grid fails as the driver's does (720).
 * kiln's own memory pools (cuMemPoolCreate) are memfd files mapped shared, each
 * allocation bumped from one, so that another process maps the same bytes from
 * the pool's descriptor (cuMemPoolExportToShareableHandle, ...ImportPointer), as
 * the driver's exportable pools let it: kiln's IPC handles are tested across
 * processes with it.  The legacy IPC handles are not supported (801).
 * Not thread-safe; tests call it from one thread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum { NOT_FOUND = 500, INVALID_VALUE = 1, OOM = 2, MAX_PARAMS = 512 };

typedef struct Module {
    char *image;
    size_t len;
} Module;

enum { CARVEOUT = 9 }; /* CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT */

typedef struct Function {
    char name[128];
    int carveout; /* what cuFuncSetAttribute set, -1 (the driver's default) until then */
} Function;

static int ctx_token;
static int fail_next; /* the CUresult the next launch returns, if not 0 */
static void *current;
static struct {
    char name[128];
    unsigned grid[3], block[3], shmem;
    int nparams;
    int64_t params[MAX_PARAMS]; /* 8 bytes from each parameter pointer */
    long count;
    int coop; /* the last launch was cooperative (a launch, or a graph node marked so) */
} last;

CUresult cuInit(unsigned flags) { return flags == 0 ? 0 : INVALID_VALUE; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal == 0 ? 0 : 101; }

CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
    (void)dev;
    switch (attr) {
    case 10: *v = 32; return 0;   /* warp size */
    case 16: *v = 132; return 0;  /* multiprocessors */
    case 39: *v = 2048; return 0; /* threads per multiprocessor */
    case 75: *v = 9; return 0;    /* compute capability */
    case 76: *v = 0; return 0;
    case 97: *v = 232448; return 0; /* shared memory per block, opt-in (227 KiB, an H100) */
    default: *v = 0; return 0;
    }
}

CUresult cuDeviceGetName(char *buf, int size, int dev) {
    (void)dev;
    snprintf(buf, (size_t)size, "kiln fake GPU");
    return 0;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = &ctx_token; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { current = ctx; return 0; }
CUresult cuCtxGetCurrent(void **ctx) { *ctx = current; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }

/* an ELF cubin's size comes from its header; PTX is text */
static size_t image_size(const char *img) {
    if (memcmp(img, "\x7f" "ELF", 4) == 0) {
        uint64_t shoff;
        uint16_t shentsize, shnum;
        memcpy(&shoff, img + 0x28, 8);
        memcpy(&shentsize, img + 0x3a, 2);
        memcpy(&shnum, img + 0x3c, 2);
        return (size_t)(shoff + (uint64_t)shentsize * shnum);
    }
    return strlen(img) + 1;
}

CUresult cuModuleLoadData(void **mod, const void *image) {
    Module *m = calloc(1, sizeof *m);
    if (!m) return OOM;
    m->len = image_size(image);
    m->image = malloc(m->len);
    if (!m->image) {
        free(m);
        return OOM;
    }
    memcpy(m->image, image, m->len);
    *mod = m;
    return 0;
}

/* The driver's linker: the inputs are kept and "linked" into their concatenation as text
 * (a module load takes any NUL-terminated image).  An input whose text holds
 * "FAKE_LINK_ERROR" fails the link with that line in the error log, as a real PTX error
 * would (kiln's tests of its driver-linker path). */
typedef struct FakeLink {
    char *out;
    size_t len;
    char *log;
    size_t logsize;
} FakeLink;

CUresult cuLinkCreate_v2(unsigned n, int *opts, void **vals, void **state) {
    FakeLink *l = calloc(1, sizeof *l);
    if (!l) return OOM;
    for (unsigned i = 0; i < n; i++) {
        if (opts[i] == 5) l->log = vals[i];                      /* CU_JIT_ERROR_LOG_BUFFER */
        if (opts[i] == 6) l->logsize = (size_t)(uintptr_t)vals[i]; /* ..._SIZE_BYTES */
    }
    *state = l;
    return 0;
}

CUresult cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name,
                          unsigned n, int *opts, void **vals) {
    (void)type, (void)n, (void)opts, (void)vals;
    FakeLink *l = state;
    if (memmem(data, size, "FAKE_LINK_ERROR", 15)) {
        if (l->log && l->logsize) snprintf(l->log, l->logsize, "error: FAKE_LINK_ERROR in %s", name);
        return 218; /* CUDA_ERROR_INVALID_PTX */
    }
    char *out = realloc(l->out, l->len + size + 1);
    if (!out) return OOM;
    for (size_t i = 0; i < size; i++) out[l->len + i] = ((const char *)data)[i] ? ((const char *)data)[i] : ' ';
    l->out = out;
    l->len += size;
    l->out[l->len] = 0;
    return 0;
}

CUresult cuLinkComplete(void *state, void **cubin, size_t *size) {
    FakeLink *l = state;
    if (!l->out) return 1;
    /* the image ends in " NAME" of its first .entry, so cuModuleGetFunction finds it there
     * (a name is found where a NUL follows it) */
    const char *e = strstr(l->out, ".entry ");
    if (e) {
        size_t at = (size_t)(e - l->out) + 7, n = strcspn(e + 7, "( \t\n");
        char *out = realloc(l->out, l->len + n + 2);
        if (!out) return OOM;
        memmove(out + l->len + 1, out + at, n);
        out[l->len] = ' ';
        l->len += n + 1;
        out[l->len] = 0;
        l->out = out;
    }
    *cubin = l->out;
    *size = l->len + 1;
    return 0;
}

CUresult cuLinkDestroy(void *state) {
    FakeLink *l = state;
    free(l->out);
    free(l);
    return 0;
}

CUresult cuModuleUnload(void *mod) {
    Module *m = mod;
    free(m->image);
    free(m);
    return 0;
}

/* Functions live as long as the process: kiln holds them with their module. */
CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
    Module *m = mod;
    size_t n = strlen(name);
    for (size_t i = 0; i + n < m->len; i++) {
        if (memcmp(m->image + i, name, n) == 0 && m->image[i + n] == '\0' &&
            (i == 0 || m->image[i - 1] == '\0' || m->image[i - 1] == ' ')) {
            Function *f = calloc(1, sizeof *f);
            if (!f) return OOM;
            snprintf(f->name, sizeof f->name, "%s", name);
            f->carveout = -1;
            *fn = f;
            return 0;
        }
    }
    return NOT_FOUND;
}

/* the shared memory carveout is kept and checked as the driver does (-1 to 100) */
CUresult cuFuncSetAttribute(void *fn, int attr, int v) {
    if (attr != CARVEOUT) return 0;
    if (v < -1 || v > 100) return INVALID_VALUE;
    ((Function *)fn)->carveout = v;
    return 0;
}
/* a kernel's resources, as a real entry reports them: 1024 threads, 0 bytes of static
 * shared, constant and local memory, 16 registers; and its carveout */
CUresult cuFuncGetAttribute(int *v, int attr, void *fn) {
    if (attr == CARVEOUT) {
        *v = ((Function *)fn)->carveout;
        return 0;
    }
    static const int values[] = {1024, 0, 0, 0, 16};
    if (attr < 0 || attr > 4) return INVALID_VALUE;
    *v = values[attr];
    return 0;
}

static int coop_next; /* cuLaunchCooperativeKernel's call of cuLaunchKernel */

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem, void *stream, void **params, void **extra) {
    (void)stream;
    (void)extra;
    last.coop = coop_next;
    coop_next = 0;
    Function *f = fn;
    if (fail_next) {
        int rc = fail_next;
        fail_next = 0;
        return rc;
    }
    if (!gx || !gy || !gz || !bx || !by || !bz || (uint64_t)bx * by * bz > 1024) return INVALID_VALUE;
    memcpy(last.name, f->name, sizeof last.name);
    last.grid[0] = gx;
    last.grid[1] = gy;
    last.grid[2] = gz;
    last.block[0] = bx;
    last.block[1] = by;
    last.block[2] = bz;
    last.shmem = shmem;
    /* the driver knows the count from the image; kiln ends its arrays with NULL */
    int n = 0;
    while (params && n < MAX_PARAMS && params[n]) {
        memcpy(&last.params[n], params[n], 8);
        n++;
    }
    last.nparams = n;
    last.count++;
    return 0;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *fn, int block, size_t dyn) {
    (void)fn;
    (void)dyn;
    if (block < 1 || block > 1024) return INVALID_VALUE;
    *n = 2048 / block < 32 ? 2048 / block : 32;
    return 0;
}

CUresult cuLaunchCooperativeKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                   unsigned by, unsigned bz, unsigned shmem, void *stream,
                                   void **params) {
    int per_sm = 0;
    if (cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, (int)(bx * by * bz), shmem))
        return INVALID_VALUE;
    if ((uint64_t)gx * gy * gz > (uint64_t)per_sm * 132) return 720; /* TOO_LARGE */
    coop_next = 1;
    return cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, shmem, stream, params, NULL);
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size) {
    void *m = calloc(1, size ? size : 1);
    if (!m) return OOM;
    *p = (CUdeviceptr)(uintptr_t)m;
    return 0;
}
/* pools of kiln's own (cuMemPoolCreate), and the allocations made from them or imported */
enum { POOL_BYTES_LOG2 = 36, POOL_ALIGN = 4096, MAX_POOL_ALLOCS = 4096 };
typedef struct FakePool {
    int fd;
    char *base;
    uint64_t next; /* bytes handed out so far (never reused: freed ones are punched out) */
    int imported;
} FakePool;
static struct {
    CUdeviceptr p;
    size_t size;
    FakePool *pool;
} allocs[MAX_POOL_ALLOCS];
static int nallocs;
static long pools_created;

static int find_alloc(CUdeviceptr p) {
    for (int i = 0; i < nallocs; i++)
        if (p >= allocs[i].p && p < allocs[i].p + allocs[i].size) return i;
    return -1;
}
static int add_alloc(CUdeviceptr p, size_t size, FakePool *pool) {
    if (nallocs == MAX_POOL_ALLOCS) return OOM;
    allocs[nallocs].p = p;
    allocs[nallocs].size = size;
    allocs[nallocs].pool = pool;
    nallocs++;
    return 0;
}

CUresult cuMemFree_v2(CUdeviceptr p) {
    int i = find_alloc(p);
    if (i < 0) {
        free((void *)(uintptr_t)p);
        return 0;
    }
    if (allocs[i].p != p) return INVALID_VALUE;
    FakePool *pool = allocs[i].pool;
    if (!pool->imported) /* its pages go back; the bytes read as zeros if mapped again */
        fallocate(pool->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)(p - (CUdeviceptr)(uintptr_t)pool->base), (off_t)allocs[i].size);
    allocs[i] = allocs[--nallocs];
    return 0;
}

static FakePool *map_pool(int fd, int imported) {
    FakePool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    void *m = mmap(NULL, (size_t)1 << POOL_BYTES_LOG2, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (m == MAP_FAILED) {
        free(pool);
        return NULL;
    }
    pool->fd = fd;
    pool->base = m;
    pool->imported = imported;
    return pool;
}

CUresult cuMemPoolCreate(void **out, const void *props) {
    (void)props;
    int fd = memfd_create("kiln-fake-pool", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)1 << POOL_BYTES_LOG2) != 0) {
        if (fd >= 0) close(fd);
        return OOM;
    }
    FakePool *pool = map_pool(fd, 0);
    if (!pool) {
        close(fd);
        return OOM;
    }
    pools_created++;
    *out = pool;
    return 0;
}
long fake_pools_created(void);
long fake_pools_created(void) { return pools_created; }

CUresult cuMemPoolExportToShareableHandle(void *out, void *p, int type, unsigned long long flags) {
    FakePool *pool = p;
    if (type != 1 || flags || pool->imported) return INVALID_VALUE;
    int fd = dup(pool->fd);
    if (fd < 0) return OOM;
    memcpy(out, &fd, sizeof fd);
    return 0;
}
CUresult cuMemPoolImportFromShareableHandle(void **out, void *handle, int type,
                                            unsigned long long flags) {
    if (type != 1 || flags) return INVALID_VALUE;
    int fd = dup((int)(intptr_t)handle);
    FakePool *pool = fd >= 0 ? map_pool(fd, 1) : NULL;
    if (!pool) {
        if (fd >= 0) close(fd);
        return INVALID_VALUE;
    }
    *out = pool;
    return 0;
}

/* what cuMemPoolExportPointer's 64 bytes hold here */
typedef struct ExportData {
    uint64_t magic, offset, size;
    unsigned char pad[40];
} ExportData;
enum { EXPORT_MAGIC = 0x6b696c6e };

CUresult cuMemPoolExportPointer(void *out, CUdeviceptr p) {
    int i = find_alloc(p);
    if (i < 0 || allocs[i].p != p || allocs[i].pool->imported) return INVALID_VALUE;
    ExportData e = {EXPORT_MAGIC, p - (CUdeviceptr)(uintptr_t)allocs[i].pool->base,
                    allocs[i].size, {0}};
    memcpy(out, &e, sizeof e);
    return 0;
}
CUresult cuMemPoolImportPointer(CUdeviceptr *out, void *p, void *data) {
    FakePool *pool = p;
    ExportData e;
    memcpy(&e, data, sizeof e);
    if (e.magic != EXPORT_MAGIC || !pool->imported ||
        e.offset + e.size > (uint64_t)1 << POOL_BYTES_LOG2)
        return INVALID_VALUE;
    CUdeviceptr q = (CUdeviceptr)(uintptr_t)(pool->base + e.offset);
    if (add_alloc(q, e.size, pool)) return OOM;
    *out = q;
    return 0;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
    int i = find_alloc(p);
    if (i < 0) return NOT_FOUND;
    *base = allocs[i].p;
    *size = allocs[i].size;
    return 0;
}
CUresult cuIpcGetMemHandle(void *h, CUdeviceptr p) { (void)h; (void)p; return 801; }
typedef struct {
    char reserved[64];
} IpcMemHandle;
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *p, IpcMemHandle h, unsigned flags) {
    (void)p; (void)h; (void)flags;
    return 801;
}
CUresult cuIpcCloseMemHandle(CUdeviceptr p) { (void)p; return 801; }
CUresult cuMemGetInfo_v2(size_t *fr, size_t *total) {
    *fr = (size_t)70 << 30;
    *total = (size_t)80 << 30;
    return 0;
}
/* the device's default memory pool: its release threshold as kiln set it, how often
 * it was trimmed, and a count of stream-ordered allocations to fail as out of memory */
static struct { uint64_t threshold; long trims, fail_next; int pool; } pool;

CUresult cuMemAllocAsync(CUdeviceptr *p, size_t size, void *s) {
    (void)s;
    if (pool.fail_next > 0) {
        pool.fail_next--;
        return OOM;
    }
    return cuMemAlloc_v2(p, size);
}
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t size, void *mp, void *s) {
    (void)s;
    FakePool *fp = mp;
    if (pool.fail_next > 0) {
        pool.fail_next--;
        return OOM;
    }
    size_t n = ((size ? size : 1) + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN;
    if (fp->imported || fp->next + n > (uint64_t)1 << POOL_BYTES_LOG2) return OOM;
    CUdeviceptr q = (CUdeviceptr)(uintptr_t)(fp->base + fp->next);
    if (add_alloc(q, n, fp)) return OOM;
    fp->next += n;
    *p = q;
    return 0;
}
CUresult cuMemFreeAsync(CUdeviceptr p, void *s) { (void)s; return cuMemFree_v2(p); }
CUresult cuDeviceGetDefaultMemPool(void **out, int dev) {
    (void)dev;
    *out = &pool.pool;
    return 0;
}
CUresult cuMemPoolSetAttribute(void *p, int attr, void *value) {
    if (!p) return 1;
    if (attr == 4) memcpy(&pool.threshold, value, 8); /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
    return 0;
}
CUresult cuMemPoolTrimTo(void *p, size_t keep) {
    (void)keep;
    if (!p) return 1;
    pool.trims++;
    return 0;
}
/* test hooks: the pool's state, and the next n stream-ordered allocations fail */
void fake_pool_state(uint64_t out[2]) {
    out[0] = pool.threshold;
    out[1] = (uint64_t)pool.trims;
}
void fake_fail_allocs(long n) { pool.fail_next = n; }

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *st) {
    (void)st;
    memcpy((void *)(uintptr_t)d, s, n);
    return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *st) {
    (void)st;
    memcpy(d, (const void *)(uintptr_t)s, n);
    return 0;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) {
    (void)st;
    memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return 0;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void *st) {
    (void)st;
    memset((void *)(uintptr_t)d, v, n);
    return 0;
}

static int stream_token;
static long stream_flags = -1; /* the flags of the last cuStreamCreate */
long fake_last_stream_flags(void);
long fake_last_stream_flags(void) { return stream_flags; }
CUresult cuStreamCreate(void **s, unsigned flags) {
    stream_flags = flags;
    *s = &stream_token;
    return 0;
}
CUresult cuStreamDestroy_v2(void *s) { (void)s; return 0; }
static long stream_syncs; /* cuStreamSynchronize calls, for the tests */
CUresult cuStreamSynchronize(void *s) {
    (void)s;
    stream_syncs++;
    return 0;
}
long fake_stream_sync_count(void);
long fake_stream_sync_count(void) { return stream_syncs; }

/* events remember when they were recorded (host time: nothing runs here) */
typedef struct Event {
    double t;
    int recorded;
    unsigned flags;
} Event;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

CUresult cuEventCreate(void **ev, unsigned flags) {
    Event *e = calloc(1, sizeof *e);
    if (!e) return OOM;
    e->flags = flags;
    *ev = e;
    return 0;
}
CUresult cuEventDestroy_v2(void *ev) { free(ev); return 0; }
CUresult cuEventRecord(void *ev, void *stream) {
    (void)stream;
    Event *e = ev;
    e->t = now_ms();
    e->recorded = 1;
    return 0;
}
CUresult cuEventSynchronize(void *ev) { (void)ev; return 0; }
CUresult cuEventQuery(void *ev) { (void)ev; return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
    Event *s = a, *e = b;
    if (!s->recorded || !e->recorded) return 400; /* CUDA_ERROR_INVALID_HANDLE */
    if ((s->flags | e->flags) & 2) return 400;
    *ms = (float)(e->t - s->t);
    return 0;
}
CUresult cuStreamWaitEvent(void *stream, void *ev, unsigned flags) {
    (void)stream;
    (void)ev;
    return flags == 0 ? 0 : INVALID_VALUE;
}

/* the flags of the last cuMemHostAlloc (-1 before one), and how many managed blocks were made */
static long host_alloc_flags = -1, managed_blocks;
long fake_host_alloc_flags(void);
long fake_host_alloc_flags(void) { return host_alloc_flags; }
long fake_managed_blocks(void);
long fake_managed_blocks(void) { return managed_blocks; }
CUresult cuMemHostAlloc(void **p, size_t size, unsigned flags) {
    host_alloc_flags = flags;
    *p = calloc(1, size ? size : 1);
    return *p ? 0 : OOM;
}
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t size, unsigned flags) {
    if (flags != 1) return INVALID_VALUE; /* CU_MEM_ATTACH_GLOBAL */
    CUresult rc = cuMemAlloc_v2(p, size);
    managed_blocks += rc == 0;
    return rc;
}
CUresult cuMemFreeHost(void *p) { free(p); return 0; }

/* the one range pinned at a time, to answer "already registered" as the driver does */
static void *pinned_ptr;
CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned flags) {
    (void)size;
    if (flags) return INVALID_VALUE;
    if (pinned_ptr == p) return 712;
    pinned_ptr = p;
    return 0;
}
CUresult cuMemHostUnregister(void *p) {
    if (pinned_ptr != p) return 713; /* CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED */
    pinned_ptr = NULL;
    return 0;
}

CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p) {
    if (attr == 9) { /* device ordinal */
        *(int *)data = 0;
        return 0;
    }
    if (attr == 17) { /* the memory pool, NULL for cuMemAlloc's memory */
        int i = find_alloc(p);
        void *mp = i >= 0 ? allocs[i].pool : NULL;
        memcpy(data, &mp, sizeof mp);
        return 0;
    }
    return INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult rc, const char **s) {
    *s = rc == NOT_FOUND       ? "CUDA_ERROR_NOT_FOUND"
         : rc == INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
         : rc == 701           ? "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
                               : "CUDA_ERROR_UNKNOWN";
    return 0;
}
CUresult cuGetErrorString(CUresult rc, const char **s) {
    *s = rc == INVALID_VALUE ? "invalid argument" : "fake driver error";
    return 0;
}

/* ---- for tests (ctypes) ---- */

void fake_fail_next_launch(int rc) { fail_next = rc; }
const char *fake_last_name(void) { return last.name; }
long fake_launch_count(void) { return last.count; }
int fake_last_coop(void) { return last.coop; }
void fake_last_config(unsigned out[7]) {
    memcpy(out, last.grid, sizeof last.grid);
    memcpy(out + 3, last.block, sizeof last.block);
    out[6] = last.shmem;
}
/* ---- graphs: a node keeps its launch; cuGraphLaunch "runs" the nodes in order --------- */

typedef struct {
    void *func;
    unsigned grid[3], block[3], shmem;
    void **params;
    void **extra;
} NodeParams;

typedef struct Node {
    NodeParams p;
    int64_t vals[MAX_PARAMS]; /* the parameters' first 8 bytes, copied as the driver does */
    int n;
    int coop; /* CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE set */
} Node;

typedef struct Graph {
    Node *nodes[64];
    int n;
} Graph;

static struct {
    long created, instantiated, set, launched;
} graphs;

static void node_take(Node *nd, const NodeParams *p) {
    nd->p = *p;
    nd->n = 0;
    while (p->params && nd->n < MAX_PARAMS && p->params[nd->n]) {
        memcpy(&nd->vals[nd->n], p->params[nd->n], 8);
        nd->n++;
    }
}

CUresult cuGraphCreate(void **g, unsigned flags) {
    if (flags) return INVALID_VALUE;
    *g = calloc(1, sizeof(Graph));
    graphs.created++;
    return *g ? 0 : OOM;
}

CUresult cuGraphDestroy(void *g) {
    Graph *gr = g;
    for (int i = 0; i < gr->n; i++) free(gr->nodes[i]);
    free(gr);
    return 0;
}

CUresult cuGraphAddKernelNode(void **node, void *g, void *const *deps, size_t ndeps,
                              const NodeParams *p) {
    Graph *gr = g;
    /* kiln makes a chain: each node depends on the one added before it */
    if (gr->n == 64 || ndeps != (gr->n ? 1u : 0u) || (ndeps && deps[0] != gr->nodes[gr->n - 1]))
        return INVALID_VALUE;
    Node *nd = calloc(1, sizeof *nd);
    if (!nd) return OOM;
    node_take(nd, p);
    gr->nodes[gr->n++] = nd;
    *node = nd;
    return 0;
}

/* an executable graph: a copy of the graph's nodes as they are when it is made, whose
 * parameters are then set on their own (the graph and its other copies keep theirs) */
typedef struct {
    Graph *graph;
    Node nodes[64];
    int n;
} Exec;

CUresult cuGraphInstantiateWithFlags(void **exec, void *g, unsigned long long flags) {
    if (flags) return INVALID_VALUE;
    Graph *gr = g;
    Exec *x = calloc(1, sizeof *x);
    if (!x) return OOM;
    x->graph = gr;
    x->n = gr->n;
    for (int i = 0; i < gr->n; i++) x->nodes[i] = *gr->nodes[i];
    *exec = x;
    graphs.instantiated++;
    return 0;
}

static long fail_set_in; /* the node update that fails, counted from the next (1) */

CUresult cuGraphExecKernelNodeSetParams(void *exec, void *node, const NodeParams *p) {
    Exec *x = exec;
    if (fail_set_in > 0 && --fail_set_in == 0) return INVALID_VALUE;
    int i = 0;
    while (i < x->n && x->graph->nodes[i] != node) i++;
    if (i == x->n) return INVALID_VALUE; /* not a node of the exec's graph */
    Node *nd = &x->nodes[i];
    if (p->func != nd->p.func) return INVALID_VALUE; /* the driver refuses another function */
    node_take(nd, p);
    graphs.set++;
    return 0;
}

CUresult cuGraphLaunch(void *exec, void *stream) {
    (void)stream;
    Exec *gr = exec;
    for (int i = 0; i < gr->n; i++) {
        Node *nd = &gr->nodes[i];
        memcpy(last.name, ((Function *)nd->p.func)->name, sizeof last.name);
        memcpy(last.grid, nd->p.grid, sizeof last.grid);
        memcpy(last.block, nd->p.block, sizeof last.block);
        last.shmem = nd->p.shmem;
        memcpy(last.params, nd->vals, sizeof(int64_t) * (size_t)nd->n);
        last.nparams = nd->n;
        last.coop = nd->coop;
        last.count++;
    }
    graphs.launched++;
    return 0;
}

CUresult cuGraphKernelNodeSetAttribute(void *node, int attr, const void *value) {
    if (attr != 2) return INVALID_VALUE; /* only the one kiln sets: cooperative */
    memcpy(&((Node *)node)->coop, value, sizeof(int));
    return 0;
}

CUresult cuGraphExecDestroy(void *exec) {
    free(exec);
    return 0;
}

/* the k-th node update of an executable graph from now fails (CUDA_ERROR_INVALID_VALUE) */
void fake_fail_graph_set(long k);
void fake_fail_graph_set(long k) { fail_set_in = k; }

/* graphs created, instantiated, node updates, graph launches */
void fake_graph_counts(long out[4]) {
    out[0] = graphs.created;
    out[1] = graphs.instantiated;
    out[2] = graphs.set;
    out[3] = graphs.launched;
}

int fake_last_params(int64_t *out, int max) {
    int n = last.nparams < max ? last.nparams : max;
    memcpy(out, last.params, sizeof(int64_t) * (size_t)n);
    return last.nparams;
}
