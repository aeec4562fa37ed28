/* cuda.c: the CUDA target: NVRTC to compile, the driver API to load, launch
 * and move memory.
 *
 * Both libraries are opened with dlopen and called through function pointers
 * declared here (the few types they need are plain integers and opaque
 * pointers), so there is no build- or link-time dependency on CUDA: kiln runs
 * on machines without it, and NVRTC alone cross-compiles for any sm_XY, which
 * is how CI checks every generated kernel without a GPU.
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

/* ---- NVRTC --------------------------------------------------------------------- */

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

/* What the cache key needs from NVRTC: its version and the architectures it
 * compiles cubins for.  Kept in the cache (kiln_nvrtc_describe), so a cache
 * hit need not load NVRTC (about 6 ms). */
typedef struct NvrtcFacts {
    int version;
    int archs[64];
    int narchs;
} NvrtcFacts;

struct kiln_nvrtc {
    void *lib;
    NvrtcFacts f;
    const char *(*GetErrorString)(nvrtcResult);
    nvrtcResult (*Version)(int *, int *);
    nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int,
                                 const char *const *, const char *const *);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *);
    nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
    nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetPTX)(nvrtcProgram, char *);
    nvrtcResult (*GetLTOIRSize)(nvrtcProgram, size_t *); /* NULL before CUDA 12.0 */
    nvrtcResult (*GetLTOIR)(nvrtcProgram, char *);
    nvrtcResult (*GetNumSupportedArchs)(int *);
    nvrtcResult (*GetSupportedArchs)(int *);
};

static void *sym(void *lib, const char *name, bool *ok) {
    void *p = dlsym(lib, name);
    if (!p) *ok = false;
    return p;
}

#define LOAD(obj, lib, field, name, ok) memcpy(&(obj)->field, (void *[]){sym(lib, name, ok)}, sizeof(void *))

kiln_nvrtc *kiln_nvrtc_open(kiln_ctx *ctx) {
    static const char *const names[] = {"libnvrtc.so",    "libnvrtc.so.13", "libnvrtc.so.12",
                                        "libnvrtc.so.11.2", "/usr/local/cuda/lib64/libnvrtc.so"};
    const char *env = getenv("KILN_NVRTC");
    void *lib = NULL;
    if (env && *env) {
        lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            diag_plain(ctx, KILN_ERROR, "point KILN_NVRTC at libnvrtc.so or unset it",
                       "cannot load NVRTC from KILN_NVRTC=%s: %s", env, dlerror());
            return NULL;
        }
    }
    for (size_t i = 0; !lib && i < COUNTOF(names); i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        diag_plain(ctx, KILN_ERROR,
                   "install the CUDA toolkit's NVRTC (or pip install nvidia-cuda-nvrtc) and set "
                   "KILN_NVRTC to libnvrtc.so if it is not on the library path",
                   "NVRTC (libnvrtc.so) was not found");
        return NULL;
    }
    kiln_nvrtc *n = calloc(1, sizeof *n);
    if (!n) {
        dlclose(lib);
        return NULL;
    }
    n->lib = lib;
    bool ok = true;
    LOAD(n, lib, GetErrorString, "nvrtcGetErrorString", &ok);
    LOAD(n, lib, Version, "nvrtcVersion", &ok);
    LOAD(n, lib, CreateProgram, "nvrtcCreateProgram", &ok);
    LOAD(n, lib, DestroyProgram, "nvrtcDestroyProgram", &ok);
    LOAD(n, lib, CompileProgram, "nvrtcCompileProgram", &ok);
    LOAD(n, lib, GetProgramLogSize, "nvrtcGetProgramLogSize", &ok);
    LOAD(n, lib, GetProgramLog, "nvrtcGetProgramLog", &ok);
    LOAD(n, lib, GetPTXSize, "nvrtcGetPTXSize", &ok);
    LOAD(n, lib, GetPTX, "nvrtcGetPTX", &ok);
    LOAD(n, lib, GetCUBINSize, "nvrtcGetCUBINSize", &ok);
    LOAD(n, lib, GetCUBIN, "nvrtcGetCUBIN", &ok);
    if (!ok) {
        diag_plain(ctx, KILN_ERROR, "kiln needs NVRTC 11.2 or newer",
                   "the NVRTC library found lacks functions kiln needs");
        kiln_nvrtc_close(n);
        return NULL;
    }
    bool has_ltoir = true; /* optional: only kiln.compile(output='ltoir') needs it */
    LOAD(n, lib, GetLTOIRSize, "nvrtcGetLTOIRSize", &has_ltoir);
    LOAD(n, lib, GetLTOIR, "nvrtcGetLTOIR", &has_ltoir);
    if (!has_ltoir) n->GetLTOIRSize = NULL, n->GetLTOIR = NULL;
    bool has_archs = true;
    LOAD(n, lib, GetNumSupportedArchs, "nvrtcGetNumSupportedArchs", &has_archs);
    LOAD(n, lib, GetSupportedArchs, "nvrtcGetSupportedArchs", &has_archs);
    int major = 0, minor = 0;
    n->Version(&major, &minor);
    n->f.version = major * 1000 + minor * 10;
    if (has_archs && n->GetNumSupportedArchs(&n->f.narchs) == 0 && n->f.narchs > 0 &&
        n->f.narchs <= (int)COUNTOF(n->f.archs)) {
        n->GetSupportedArchs(n->f.archs);
    } else {
        n->f.narchs = 0;
    }
    return n;
}

void kiln_nvrtc_close(kiln_nvrtc *n) {
    if (!n) return;
    /* The library stays loaded: NVRTC and its C++ runtime keep static state
     * that is not meant to be unloaded, and the next open finds it again. */
    free(n);
}

int kiln_nvrtc_version(kiln_nvrtc *n) { return n->f.version; }

/* What NVRTC is asked: the architecture it compiles for, cubin or PTX, and its
 * options.  One place, so the cache key (kiln_nvrtc_target) and the compile
 * cannot disagree. */
/* The longest include option for NVRTC kiln writes (a toolkit directory). */
enum { KILN_PATH_OPT = 1024 };

typedef struct NvrtcPlan {
    int use;     /* the architecture compiled for */
    int is_ptx;
    int argc;
    const char *argv[16];
    char archopt[64], regopt[64];
} NvrtcPlan;

static int nvrtc_plan(kiln_ctx *ctx, const NvrtcFacts *n, const kiln_options *opts, int arch,
                      bool force_ptx, NvrtcPlan *p) {
    p->use = arch;
    /* relocatable code is PTX (or LTO-IR, which the caller reads as the program's output) */
    p->is_ptx = force_ptx || opts->nvrtc_output != KILN_NVRTC_WHOLE;
    force_ptx = p->is_ptx;
    /* a cubin for the exact architecture when NVRTC knows it */
    if (n->narchs > 0) {
        bool known = false;
        int best = 0;
        for (int i = 0; i < n->narchs; i++) {
            if (n->archs[i] == arch) known = true;
            if (n->archs[i] <= arch && n->archs[i] > best) best = n->archs[i];
        }
        if (!known || force_ptx) {
            if (!best) {
                if (ctx)
                    diag_plain(ctx, KILN_ERROR, "use a newer CUDA toolkit's NVRTC",
                               "NVRTC %d.%d cannot compile for sm_%d", n->version / 1000,
                               n->version % 1000 / 10, arch);
                return -1;
            }
            p->is_ptx = 1;
            p->use = known ? arch : best;
        }
    }
    snprintf(p->archopt, sizeof p->archopt, "--gpu-architecture=%s_%d",
             p->is_ptx ? "compute" : "sm", p->use);
    p->argc = 0;
    p->argv[p->argc++] = p->archopt;
    p->argv[p->argc++] = "--std=c++17";
    p->argv[p->argc++] = "--diag-suppress=177,550"; /* unused prelude functions and variables */
    if (opts->nvrtc_output != KILN_NVRTC_WHOLE) p->argv[p->argc++] = "--relocatable-device-code=true";
    if (opts->nvrtc_output == KILN_NVRTC_LTOIR) p->argv[p->argc++] = "--dlink-time-opt";
    if (opts->fastmath) p->argv[p->argc++] = "--use_fast_math";
    if (opts->lineinfo) p->argv[p->argc++] = "--generate-line-info";
    if (opts->max_registers > 0) {
        snprintf(p->regopt, sizeof p->regopt, "--maxrregcount=%d", opts->max_registers);
        p->argv[p->argc++] = p->regopt;
    }
    return 0;
}

static int target_text(kiln_ctx *ctx, const NvrtcFacts *f, const kiln_options *opts, int arch,
                       int want_ptx, char *buf, size_t size) {
    NvrtcPlan p;
    if (nvrtc_plan(ctx, f, opts, arch, want_ptx != 0, &p) < 0) return -1;
    int w = snprintf(buf, size, "cuda:sm_%d %s nvrtc=%d kiln=%s", arch,
                     p.is_ptx ? "ptx" : "cubin", f->version, kiln_version());
    for (int i = 0; i < p.argc && w >= 0 && (size_t)w < size; i++)
        w += snprintf(buf + w, size - (size_t)w, " %s", p.argv[i]);
    return w >= 0 && (size_t)w < size ? 0 : -1;
}

int kiln_nvrtc_target(kiln_ctx *ctx, kiln_nvrtc *n, const kiln_options *opts, int arch,
                      int want_ptx, char *buf, size_t size) {
    return target_text(ctx, &n->f, opts, arch, want_ptx, buf, size);
}

/* The facts are valid while the library file is the same file: its path, size,
 * modification time and inode are stored with them. */
int kiln_nvrtc_describe(kiln_nvrtc *n, char *buf, size_t size) {
    Dl_info info;
    struct stat st;
    if (!dladdr(*(void **)&n->Version, &info) || !info.dli_fname ||
        stat(info.dli_fname, &st) != 0)
        return -1;
    int w = snprintf(buf, size, "1 %lld %lld %lld %llu %d %d", (long long)st.st_size,
                     (long long)st.st_mtim.tv_sec, (long long)st.st_mtim.tv_nsec,
                     (unsigned long long)st.st_ino, n->f.version, n->f.narchs);
    for (int i = 0; i < n->f.narchs && w >= 0 && (size_t)w < size; i++)
        w += snprintf(buf + w, size - (size_t)w, " %d", n->f.archs[i]);
    if (w >= 0 && (size_t)w < size) w += snprintf(buf + w, size - (size_t)w, " %s", info.dli_fname);
    return w >= 0 && (size_t)w < size ? 0 : -1;
}

int kiln_nvrtc_target_from(const char *facts, int check_file, const kiln_options *opts, int arch,
                           int want_ptx, char *buf, size_t size) {
    NvrtcFacts f;
    long long fsize, sec, nsec;
    unsigned long long ino;
    int fmt, used;
    memset(&f, 0, sizeof f);
    if (sscanf(facts, "%d %lld %lld %lld %llu %d %d%n", &fmt, &fsize, &sec, &nsec, &ino,
               &f.version, &f.narchs, &used) != 7 ||
        fmt != 1 || f.narchs < 0 || f.narchs > (int)COUNTOF(f.archs))
        return -1;
    const char *p = facts + used;
    for (int i = 0; i < f.narchs; i++) {
        int k;
        if (sscanf(p, "%d%n", &f.archs[i], &k) != 1) return -1;
        p += k;
    }
    if (*p++ != ' ' || *p != '/') return -1;
    struct stat st;
    if (check_file && (stat(p, &st) != 0 || st.st_size != fsize || st.st_mtim.tv_sec != sec ||
                       st.st_mtim.tv_nsec != nsec || st.st_ino != ino))
        return -1; /* another NVRTC now: load it */
    return target_text(NULL, &f, opts, arch, want_ptx, buf, size);
}

void kiln_nvrtc_facts_name(char *buf, size_t size) {
    /* which NVRTC dlopen finds depends on these; /etc/ld.so.cache changes with ldconfig */
    const char *env = getenv("KILN_NVRTC"), *ldp = getenv("LD_LIBRARY_PATH");
    struct stat st;
    long long cs = 0, ct = 0;
    if (stat("/etc/ld.so.cache", &st) == 0) {
        cs = (long long)st.st_size;
        ct = (long long)st.st_mtim.tv_sec;
    }
    snprintf(buf, size, "nvrtc|%s|%s|%lld|%lld", env ? env : "", ldp ? ldp : "", cs, ct);
}

/* dst = a + b; false (and nothing to use) when it does not fit */
static bool join_path(char *dst, size_t size, const char *a, const char *b) {
    int w = snprintf(dst, size, "%s%s", a, b);
    return w >= 0 && (size_t)w < size;
}

/* The CUDA toolkit's include directory, for external sources that include its headers
 * (curand_kernel.h): beside the NVRTC library loaded (lib/ or lib64/ next to include/),
 * else $CUDA_HOME, $CUDA_PATH, /usr/local/cuda.  Its cccl/ too where it has one (CUDA 13
 * keeps libcu++, which curand_kernel.h includes, there).  Returns the number of options
 * written into opts (bufs holds their text). */
static int toolkit_includes(kiln_nvrtc *n, char bufs[2][KILN_PATH_OPT], const char **opts) {
    char cand[4][KILN_PATH_OPT];
    int nc = 0;
    Dl_info info;
    if (dladdr(*(void **)&n->Version, &info) && info.dli_fname) {
        char dir[KILN_PATH_OPT];
        const char *slash = strrchr(info.dli_fname, '/');
        size_t dl = slash ? (size_t)(slash - info.dli_fname) : 0;
        if (slash && dl < sizeof dir) {
            memcpy(dir, info.dli_fname, dl);
            dir[dl] = 0;
            if (join_path(cand[nc], KILN_PATH_OPT, dir, "/../include")) nc++;
        }
    }
    const char *envs[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH")};
    for (int i = 0; i < 2; i++)
        if (envs[i] && *envs[i] && join_path(cand[nc], KILN_PATH_OPT, envs[i], "/include")) nc++;
    if (join_path(cand[nc], KILN_PATH_OPT, "/usr/local/cuda", "/include")) nc++;
    for (int i = 0; i < nc; i++) {
        char probe[KILN_PATH_OPT];
        struct stat st;
        if (!join_path(probe, sizeof probe, cand[i], "/cuda_runtime_api.h") ||
            stat(probe, &st) != 0)
            continue;
        int k = 0;
        if (!join_path(bufs[k], KILN_PATH_OPT, "-I", cand[i])) return 0;
        opts[k] = bufs[k];
        k++;
        if (join_path(probe, sizeof probe, cand[i], "/cccl") && stat(probe, &st) == 0 &&
            S_ISDIR(st.st_mode) && join_path(bufs[k], KILN_PATH_OPT, "-I", probe)) {
            opts[k] = bufs[k];
            k++;
        }
        return k;
    }
    return 0;
}

int kiln_nvrtc_compile(kiln_ctx *ctx, kiln_nvrtc *n, const char *src, size_t len,
                       const kiln_options *opts, int arch, void **blob, size_t *blob_len,
                       int *is_ptx) {
    (void)len;
    *blob = NULL;
    *blob_len = 0;
    NvrtcPlan p;
    if (nvrtc_plan(ctx, &n->f, opts, arch, *is_ptx != 0, &p) < 0) return -1;
    *is_ptx = p.is_ptx;
    bool ltoir = opts->nvrtc_output == KILN_NVRTC_LTOIR;
    if (ltoir && !n->GetLTOIR) {
        diag_plain(ctx, KILN_ERROR, "use CUDA 12's NVRTC or newer, or output='ptx'",
                   "NVRTC %d.%d cannot write LTO-IR (it has no nvrtcGetLTOIR)",
                   n->f.version / 1000, n->f.version % 1000 / 10);
        return -1;
    }
    int use = p.use, argc = p.argc;
    const char **argv = p.argv;
    /* external sources (emit.c) may include the toolkit's headers; the include directory
     * is left out of the target text (the cache key): the sources' own text is in it */
    bool external = strstr(src, KILN_EXTERN_SRC_MARKER) != NULL;
    char incbuf[2][KILN_PATH_OPT];
    if (external && argc + 2 <= (int)COUNTOF(p.argv)) argc += toolkit_includes(n, incbuf, argv + argc);
    nvrtcProgram prog;
    nvrtcResult rc = n->CreateProgram(&prog, src, "kiln_kernel.cu", 0, NULL, NULL);
    if (rc != 0) {
        diag_plain(ctx, KILN_ERROR, NULL, "NVRTC could not create a program: %s",
                   n->GetErrorString(rc));
        return -1;
    }
    rc = n->CompileProgram(prog, argc, argv);
    if (rc != 0) {
        size_t lsz = 0;
        n->GetProgramLogSize(prog, &lsz);
        char *log = malloc(lsz + 1);
        if (log) {
            log[0] = 0;
            n->GetProgramLog(prog, log);
            log[lsz] = 0;
        }
        diag_plain(ctx, KILN_ERROR,
                   external ? "check the external CUDA C sources (kiln.declare_device's link=) "
                              "against the declarations kiln wrote for them"
                            : "this is a bug in kiln's CUDA code generation; please report it "
                              "with the kernel",
                   "NVRTC rejected the %s for sm_%d:\n%s",
                   external ? "program with external CUDA C sources" : "generated code", use,
                   log ? log : "");
        free(log);
        n->DestroyProgram(&prog);
        return -1;
    }
    size_t sz = 0;
    rc = ltoir ? n->GetLTOIRSize(prog, &sz) : *is_ptx ? n->GetPTXSize(prog, &sz) : n->GetCUBINSize(prog, &sz);
    char *out = rc == 0 ? malloc(sz ? sz : 1) : NULL;
    if (out) rc = ltoir ? n->GetLTOIR(prog, out) : *is_ptx ? n->GetPTX(prog, out) : n->GetCUBIN(prog, out);
    n->DestroyProgram(&prog);
    if (!out || rc != 0) {
        free(out);
        diag_plain(ctx, KILN_ERROR, NULL, "NVRTC produced no %s",
                   ltoir ? "LTO-IR" : *is_ptx ? "PTX" : "cubin");
        return -1;
    }
    *blob = out;
    *blob_len = sz;
    return 0;
}

/* ---- the driver --------------------------------------------------------------------- */

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;
typedef void *CUgraph;
typedef void *CUgraphNode;
typedef void *CUgraphExec;

/* CUDA_KERNEL_NODE_PARAMS as the unversioned graph functions take it (v1). */
typedef struct {
    CUfunction func;
    unsigned grid[3], block[3], shmem;
    void **params;
    void **extra;
} KernelNodeParams;

enum {
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE = 2, /* CU_LAUNCH_ATTRIBUTE_COOPERATIVE */
};

enum { MAX_DEVICES = 64 };

struct kiln_cuda {
    void *lib;
    int ndev;
    int driver;
    CUcontext ctx[MAX_DEVICES];  /* retained primary contexts, NULL until used */
    int arch[MAX_DEVICES];
    int64_t fill[MAX_DEVICES];   /* threads resident when every SM is full, 0 if unknown */
    bool async_alloc;            /* cuMemAllocAsync works */
    bool pools;                  /* the memory pool functions below were found */
    void *pool[MAX_DEVICES];     /* each used device's default pool, once configured */
    CUresult (*Init)(unsigned);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*FuncSetAttribute)(CUfunction, int, int);
    CUresult (*FuncGetAttribute)(int *, int, CUfunction);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
    /* optional: cooperative kernels (kiln.cg) and their occupancy */
    CUresult (*LaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, unsigned, unsigned, CUstream, void **);
    CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
    bool coop, occupancy;
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemAllocAsync)(CUdeviceptr *, size_t, CUstream);
    CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
    CUresult (*DeviceGetDefaultMemPool)(void **, CUdevice);
    CUresult (*MemPoolSetAttribute)(void *, int, void *);
    CUresult (*MemPoolTrimTo)(void *, size_t);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*PointerGetAttribute)(void *, int, CUdeviceptr);
    CUresult (*EventCreate)(void **, unsigned);
    CUresult (*EventDestroy)(void *);
    CUresult (*EventRecord)(void *, CUstream);
    CUresult (*EventSynchronize)(void *);
    CUresult (*EventQuery)(void *);
    CUresult (*EventElapsedTime)(float *, void *, void *);
    CUresult (*StreamWaitEvent)(CUstream, void *, unsigned);
    CUresult (*MemHostAlloc)(void **, size_t, unsigned);
    CUresult (*MemFreeHost)(void *);
    CUresult (*MemAllocManaged)(CUdeviceptr *, size_t, unsigned); /* optional */
    CUresult (*MemHostRegister)(void *, size_t, unsigned);
    CUresult (*MemHostUnregister)(void *);
    CUresult (*GetErrorName)(CUresult, const char **);
    CUresult (*GetErrorString)(CUresult, const char **);
    bool graphs; /* the graph functions below were found (CUDA 11.4 and newer) */
    CUresult (*GraphCreate)(CUgraph *, unsigned);
    CUresult (*GraphDestroy)(CUgraph);
    CUresult (*GraphAddKernelNode)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                   const KernelNodeParams *);
    CUresult (*GraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*GraphExecKernelNodeSetParams)(CUgraphExec, CUgraphNode, const KernelNodeParams *);
    CUresult (*GraphLaunch)(CUgraphExec, CUstream);
    CUresult (*GraphExecDestroy)(CUgraphExec);
    bool graph_coop; /* cooperative kernel nodes (below) */
    CUresult (*GraphKernelNodeSetAttribute)(CUgraphNode, int, const void *);
};

struct kiln_cuda_module {
    CUmodule mod;
    CUfunction fn;
    CUfunction wide;  /* the entry named <entry>_wide, or NULL */
    int64_t wide_min; /* the fewest threads of a launch that takes it */
    int dyn_smem_max; /* the dynamic shared memory the function is set up for */
    int dev;          /* the device it is loaded on */
    bool coop;        /* launched cooperatively (kiln_cuda_module_set_cooperative) */
};

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
        void *pool = NULL;
        uint64_t keep = UINT64_MAX;
        if (c->pools && c->DeviceGetDefaultMemPool(&pool, d) == 0 && pool &&
            c->MemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) == 0)
            c->pool[dev] = pool;
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
    CUgraphExec exec;
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
    if (g->exec) return 1; /* CUDA_ERROR_INVALID_VALUE: instantiated already */
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
    if (g->exec) return 0;
    return c->GraphInstantiateWithFlags(&g->exec, g->graph, 0);
}

int kiln_cuda_graph_set(kiln_cuda *c, kiln_cuda_graph *g, int i, kiln_cuda_module *m,
                        const int64_t grid[3], const int64_t block[3], unsigned shmem,
                        void **params, void **wide_params) {
    if (!g->exec || i < 0 || i >= g->n) return 1;
    KernelNodeParams p;
    node_params(m, grid, block, shmem, params, wide_params, &p);
    return c->GraphExecKernelNodeSetParams(g->exec, g->nodes[i], &p);
}

int kiln_cuda_graph_launch(kiln_cuda *c, kiln_cuda_graph *g, void *stream) {
    if (!g->exec) return 1;
    return c->GraphLaunch(g->exec, stream);
}

void kiln_cuda_graph_free(kiln_cuda *c, kiln_cuda_graph *g) {
    if (!g) return;
    if (g->exec) c->GraphExecDestroy(g->exec);
    if (g->graph) c->GraphDestroy(g->graph);
    free(g->nodes);
    free(g);
}

int kiln_cuda_alloc(kiln_cuda *c, uint64_t *ptr, size_t size, void *stream) {
    CUdeviceptr p = 0;
    if (size == 0) size = 1;
    int rc;
    if (c->async_alloc) {
        rc = c->MemAllocAsync(&p, size, stream);
        if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
            /* memory the pools keep (freed, not in use) goes back, then once more */
            for (int d = 0; d < c->ndev; d++)
                if (c->pool[d]) c->MemPoolTrimTo(c->pool[d], 0);
            rc = c->MemAllocAsync(&p, size, stream);
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
