/* nvrtc.c: the CUDA target's compiler: NVRTC, opened with dlopen, turns generated
 * CUDA C into a cubin, PTX or LTO-IR for an exact sm_XY, on machines without a GPU too
 * (which is how CI checks every generated kernel).  What the cache key needs from it
 * (its version, its architectures) is kept as facts so a cache hit need not load it.
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
#include "target/dl.h"

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

int kiln_nvrtc_dir(kiln_nvrtc *n, char *buf, size_t size) {
    Dl_info info;
    if (!dladdr(*(void **)&n->Version, &info) || !info.dli_fname) return -1;
    const char *slash = strrchr(info.dli_fname, '/');
    size_t len = slash ? (size_t)(slash - info.dli_fname) : 0;
    if (!slash || len >= size) return -1;
    memcpy(buf, info.dli_fname, len);
    buf[len] = 0;
    return 0;
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
    /* external sources, or external functions declared without any (kiln_ext_ wrappers):
     * an error is then likely theirs */
    bool external = strstr(src, KILN_EXTERN_SRC_MARKER) != NULL || strstr(src, "kiln_ext_");
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
                              "against the declarations kiln wrote for them, and that every "
                              "declared function has a definition in one of them"
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
