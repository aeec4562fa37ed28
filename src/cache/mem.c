/* mem.c: the memory tier, a bounded LRU of blobs in this process.
 *
 * It sits in front of the disk and remote tiers for the kernels this process
 * has built or loaded (the extension's per-dispatcher tables sit in front of
 * it).  A flat array searched linearly, each entry stamped with a counter at
 * every use; the bound is in bytes (256 MiB unless configured, cache.c), and
 * the least recently used entries leave to make room.  Entries go in and come
 * out as copies: what a caller is handed is its own, so an eviction never
 * frees memory that someone still reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

static MemEntry *mem_find(kiln_cache *c, const kiln_cache_key *k) {
    for (int i = 0; i < c->nmem; i++)
        if (memcmp(c->mem[i].key.b, k->b, 16) == 0) return &c->mem[i];
    return NULL;
}

static void mem_drop(kiln_cache *c, int i) {
    c->mem_bytes -= c->mem[i].len;
    free(c->mem[i].blob);
    c->mem[i] = c->mem[--c->nmem];
}

void mem_put(kiln_cache *c, const kiln_cache_key *k, const char *kind, const void *blob,
             size_t len) {
    if (len > c->mem_max || mem_find(c, k)) return;
    while (c->nmem && c->mem_bytes + len > c->mem_max) {
        int lru = 0;
        for (int i = 1; i < c->nmem; i++)
            if (c->mem[i].used < c->mem[lru].used) lru = i;
        mem_drop(c, lru);
    }
    if (c->nmem == c->capmem) {
        int ncap = c->capmem ? c->capmem * 2 : 64;
        MemEntry *n = realloc(c->mem, sizeof *n * (size_t)ncap);
        if (!n) return;
        c->mem = n;
        c->capmem = ncap;
    }
    void *copy = malloc(len ? len : 1);
    if (!copy) return;
    memcpy(copy, blob, len);
    MemEntry *e = &c->mem[c->nmem++];
    e->key = *k;
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    e->blob = copy;
    e->len = len;
    e->used = ++c->clock;
    c->mem_bytes += len;
}

int mem_get(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len, char kind[16]) {
    MemEntry *e = mem_find(c, k);
    if (!e) return 0;
    if (!(*blob = malloc(e->len ? e->len : 1))) return -1;
    memcpy(*blob, e->blob, e->len);
    *len = e->len;
    snprintf(kind, 16, "%s", e->kind);
    e->used = ++c->clock;
    return 1;
}

void mem_clear(kiln_cache *c) {
    while (c->nmem) mem_drop(c, c->nmem - 1);
}

void mem_free(kiln_cache *c) {
    for (int i = 0; i < c->nmem; i++) free(c->mem[i].blob);
    free(c->mem);
}
