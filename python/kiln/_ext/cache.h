/* cache.h: the artifact cache as the extension uses it (cache.c). */
#ifndef KILN_EXT_CACHE_H
#define KILN_EXT_CACHE_H

#include "errors.h"

/* An artifact from the cache or a build. */
typedef struct {
    void *blob; /* malloc'd; the caller frees it */
    size_t len;
    char kind[16];
    char key[33];
    int hit;
} ExtArtifact;
/* Builds blob from what ud describes; runs without the GIL; reports through ctx. */
typedef int (*ext_build_fn)(void *ud, kiln_ctx *ctx, void **blob, size_t *len, char kind[16]);
/* The artifact for source built for target: from the cache's tiers, else built
 * once across processes (single flight) and stored.  target NULL skips the
 * cache; key_flags go to kiln_cache_key_of.  0, or -1 with kiln.CompileError
 * set (a failed build is not cached). */
int ext_cached_build(ModState *st, const char *src, size_t len, const char *target,
                     int key_flags, const char *short_target, const char *name,
                     ext_build_fn build, void *ud, ExtArtifact *out);
/* The same with the GIL released (or on a thread without it), through the caller's
 * ctx (diagnostics, interrupt hook); a failure leaves its text in ctx's sink.  0 or -1. */
int ext_cached_build_nogil(ModState *st, kiln_ctx *ctx, const char *src, size_t len,
                           const char *target, int key_flags, const char *short_target,
                           const char *name, ext_build_fn build, void *ud, ExtArtifact *out);
/* Only looks: the artifact for source built for target from the cache's tiers
 * (memory, SQLite, Redis), without claiming, waiting or building.  With the GIL.
 * 1 hit (out->blob is the caller's), 0 miss, -1 with an exception set (a cache
 * warning made an error). */
int ext_cached_lookup(ModState *st, const char *src, size_t len, const char *target,
                      ExtArtifact *out);
void ext_cache_free(ModState *st);
/* The cache, opened at first use; with or without the GIL.  NULL only when
 * out of memory. */
kiln_cache *ext_get_cache(ModState *st);
extern PyMethodDef ext_cache_functions[];

#endif
