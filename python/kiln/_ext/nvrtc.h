/* nvrtc.h: NVRTC builds through the cache, and its warm-up thread (nvrtc.c). */
#ifndef KILN_EXT_NVRTC_H
#define KILN_EXT_NVRTC_H

#include "cache.h"

/* NVRTC, opened at first use (thread-safe); NULL with kiln.CompileError set. */
kiln_nvrtc *ext_nvrtc(ModState *st);
/* The same without the GIL: NULL after reporting through ctx. */
kiln_nvrtc *ext_nvrtc_nogil(ModState *st, kiln_ctx *ctx);
/* nvJitLink, opened at the first link (thread-safe): NULL after reporting through ctx. */
kiln_nvjitlink *ext_nvjitlink_nogil(ModState *st, kiln_ctx *ctx);

/* nvrtc_compile, nvrtc_version, warm_up */
extern PyMethodDef ext_nvrtc_functions[];

#endif
