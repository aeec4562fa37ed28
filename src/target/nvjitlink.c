/* nvjitlink.c: the CUDA target's device linker: nvJitLink, opened with dlopen like
 * NVRTC, links a kernel's own code (LTO-IR, or a relocatable cubin without LTO) with
 * compiled external device code (PTX, cubins, fatbins, LTO-IR, objects and archives
 * that hold device code) into one cubin for an exact sm_XY.  It needs no GPU, so
 * kernels that link such files are checked in CI like the others.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "target/dl.h"

typedef int nvJitLinkResult;
typedef struct nvJitLink *nvJitLinkHandle;

/* nvJitLink's input kinds (nvJitLink.h's nvJitLinkInputType), which kiln_link_kind
 * numbers alike */
_Static_assert(KILN_LINK_CUBIN == 1 && KILN_LINK_PTX == 2 && KILN_LINK_LTOIR == 3 &&
                   KILN_LINK_FATBIN == 4 && KILN_LINK_OBJECT == 5 && KILN_LINK_LIBRARY == 6,
               "kiln_link_kind follows nvJitLinkInputType");

struct kiln_nvjitlink {
    void *lib;
    int version; /* major * 1000 + minor * 10 */
    nvJitLinkResult (*Create)(nvJitLinkHandle *, uint32_t, const char *const *);
    nvJitLinkResult (*Destroy)(nvJitLinkHandle *);
    nvJitLinkResult (*AddData)(nvJitLinkHandle, int, const void *, size_t, const char *);
    nvJitLinkResult (*Complete)(nvJitLinkHandle);
    nvJitLinkResult (*GetLinkedCubinSize)(nvJitLinkHandle, size_t *);
    nvJitLinkResult (*GetLinkedCubin)(nvJitLinkHandle, void *);
    nvJitLinkResult (*GetErrorLogSize)(nvJitLinkHandle, size_t *);
    nvJitLinkResult (*GetErrorLog)(nvJitLinkHandle, char *);
    nvJitLinkResult (*Version)(unsigned *, unsigned *);
};

/* The library exports each function under its plain name (CUDA 12.3 on) and a
 * versioned one (__nvJitLinkCreate_12_0); the first found is used. */
static void *find(void *lib, const char *name) {
    static const char *const tags[] = {"", "_13_0", "_12_0"};
    char buf[96];
    for (size_t i = 0; i < COUNTOF(tags); i++) {
        snprintf(buf, sizeof buf, "%s%s%s", *tags[i] ? "__" : "", name, tags[i]);
        void *p = dlsym(lib, buf);
        if (p) return p;
    }
    return NULL;
}

#define FIND(obj, lib, field, name, ok)                                                    \
    do {                                                                                   \
        void *p_ = find(lib, name);                                                        \
        if (!p_) *(ok) = false;                                                            \
        memcpy(&(obj)->field, &p_, sizeof p_);                                             \
    } while (0)

kiln_nvjitlink *kiln_nvjitlink_open(kiln_ctx *ctx, const char *near_dir) {
    static const char *const names[] = {"libnvJitLink.so", "libnvJitLink.so.13",
                                        "libnvJitLink.so.12",
                                        "/usr/local/cuda/lib64/libnvJitLink.so"};
    const char *env = getenv("KILN_NVJITLINK");
    void *lib = NULL;
    if (env && *env) {
        lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            diag_plain(ctx, KILN_ERROR, "point KILN_NVJITLINK at libnvJitLink.so or unset it",
                       "cannot load nvJitLink from KILN_NVJITLINK=%s: %s", env, dlerror());
            return NULL;
        }
    }
    /* beside NVRTC first: the toolkit's own, whose version matches NVRTC's LTO-IR */
    for (size_t i = 0; !lib && near_dir && *near_dir && i < 3; i++) {
        char path[4096];
        int w = snprintf(path, sizeof path, "%s/%s", near_dir, names[i]);
        if (w > 0 && (size_t)w < sizeof path) lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    for (size_t i = 0; !lib && i < COUNTOF(names); i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        diag_plain(ctx, KILN_ERROR,
                   "install the CUDA toolkit's nvJitLink, of NVRTC's CUDA version (pip: "
                   "nvidia-nvjitlink-cu12 for CUDA 12, nvidia-nvjitlink for 13), and set KILN_NVJITLINK to libnvJitLink.so if it is not on the library path; "
                   "or link the CUDA C source (.cu) instead",
                   "linking compiled device code (PTX, cubin, fatbin, LTO-IR) needs nvJitLink "
                   "(libnvJitLink.so), which was not found");
        return NULL;
    }
    kiln_nvjitlink *j = calloc(1, sizeof *j);
    if (!j) {
        dlclose(lib);
        return NULL;
    }
    j->lib = lib;
    bool ok = true;
    FIND(j, lib, Create, "nvJitLinkCreate", &ok);
    FIND(j, lib, Destroy, "nvJitLinkDestroy", &ok);
    FIND(j, lib, AddData, "nvJitLinkAddData", &ok);
    FIND(j, lib, Complete, "nvJitLinkComplete", &ok);
    FIND(j, lib, GetLinkedCubinSize, "nvJitLinkGetLinkedCubinSize", &ok);
    FIND(j, lib, GetLinkedCubin, "nvJitLinkGetLinkedCubin", &ok);
    FIND(j, lib, GetErrorLogSize, "nvJitLinkGetErrorLogSize", &ok);
    FIND(j, lib, GetErrorLog, "nvJitLinkGetErrorLog", &ok);
    if (!ok) {
        diag_plain(ctx, KILN_ERROR, "kiln needs nvJitLink 12.0 or newer",
                   "the nvJitLink library found lacks functions kiln needs");
        free(j);
        dlclose(lib);
        return NULL;
    }
    bool has_version = true; /* nvJitLinkVersion is 12.3's */
    FIND(j, lib, Version, "nvJitLinkVersion", &has_version);
    unsigned major = 12, minor = 0;
    if (has_version) j->Version(&major, &minor);
    j->version = (int)(major * 1000 + minor * 10);
    return j;
}

void kiln_nvjitlink_close(kiln_nvjitlink *j) {
    if (!j) return;
    /* the library stays loaded, as NVRTC does (nvrtc.c) */
    free(j);
}

int kiln_nvjitlink_version(kiln_nvjitlink *j) { return j->version; }

const char *kiln_link_kind_name(int kind) {
    static const char *const names[] = {"?",      "cubin",  "PTX",    "LTO-IR",
                                        "fatbin", "object", "archive"};
    return kind >= 0 && kind < (int)COUNTOF(names) ? names[kind] : "?";
}

/* nvJitLink's error log after a failed step, reported with what it was doing. */
static void report(kiln_ctx *ctx, kiln_nvjitlink *j, nvJitLinkHandle h, nvJitLinkResult rc,
                   const char *what, const char *hint) {
    size_t n = 0;
    char *log = NULL;
    if (h && j->GetErrorLogSize(h, &n) == 0 && n > 0 && (log = malloc(n + 1)) != NULL) {
        log[0] = 0;
        if (j->GetErrorLog(h, log) != 0) log[0] = 0;
        log[n] = 0;
    }
    diag_plain(ctx, KILN_ERROR, hint, "nvJitLink could not %s (error %d)%s%s", what, rc,
               log && *log ? ":\n" : "", log ? log : "");
    free(log);
}

int kiln_nvjitlink_link(kiln_ctx *ctx, kiln_nvjitlink *j, int nvrtc_version, int arch, int lto,
                        const kiln_options *opts, const kiln_link_input *in, int nin,
                        void **cubin, size_t *cubin_len) {
    *cubin = NULL;
    *cubin_len = 0;
    if (j->version / 1000 < nvrtc_version / 1000) {
        diag_plain(ctx, KILN_ERROR,
                   "use the nvJitLink of NVRTC's CUDA version (KILN_NVJITLINK names it; the "
                   "toolkit's lib directory holds both)",
                   "nvJitLink %d.%d is older than NVRTC %d.%d, whose code it cannot link",
                   j->version / 1000, j->version % 1000 / 10, nvrtc_version / 1000,
                   nvrtc_version % 1000 / 10);
        return -1;
    }
    char archopt[32], regopt[48];
    const char *argv[8];
    uint32_t argc = 0;
    snprintf(archopt, sizeof archopt, "-arch=sm_%d", arch);
    argv[argc++] = archopt;
    if (lto) argv[argc++] = "-lto";
    if (opts->fastmath) argv[argc++] = "-ftz=1", argv[argc++] = "-prec-div=0",
                        argv[argc++] = "-prec-sqrt=0";
    if (opts->lineinfo) argv[argc++] = "-lineinfo";
    if (opts->max_registers > 0) {
        snprintf(regopt, sizeof regopt, "-maxrregcount=%d", opts->max_registers);
        argv[argc++] = regopt;
    }
    nvJitLinkHandle h = NULL;
    nvJitLinkResult rc = j->Create(&h, argc, argv);
    if (rc != 0) {
        report(ctx, j, h, rc, "start a link", NULL);
        if (h) j->Destroy(&h);
        return -1;
    }
    for (int i = 0; i < nin; i++) {
        rc = j->AddData(h, in[i].kind, in[i].data, in[i].len, in[i].name);
        if (rc != 0) {
            char what[512];
            snprintf(what, sizeof what, "read %s as %s for sm_%d", in[i].name,
                     kiln_link_kind_name(in[i].kind), arch);
            report(ctx, j, h, rc, what,
                   "check that the file is what its extension says, compiled for this GPU's "
                   "architecture (PTX and LTO-IR: this one or an older one; cubins: the same "
                   "major one) by a CUDA no newer than nvJitLink's");
            j->Destroy(&h);
            return -1;
        }
    }
    rc = j->Complete(h);
    if (rc != 0) {
        char what[128];
        snprintf(what, sizeof what, "link the kernel for sm_%d", arch);
        report(ctx, j, h, rc, what,
               "check that the linked files define the declared functions (declare_device's "
               "name and signature) and were compiled as relocatable device code");
        j->Destroy(&h);
        return -1;
    }
    size_t n = 0;
    rc = j->GetLinkedCubinSize(h, &n);
    void *out = rc == 0 ? malloc(n ? n : 1) : NULL;
    if (out) rc = j->GetLinkedCubin(h, out);
    j->Destroy(&h);
    if (!out || rc != 0) {
        free(out);
        diag_plain(ctx, KILN_ERROR, NULL, "nvJitLink produced no cubin for sm_%d", arch);
        return -1;
    }
    *cubin = out;
    *cubin_len = n;
    return 0;
}
