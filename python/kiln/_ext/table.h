/* table.h: the specialisation table and its entries (table.c).
 *
 * Ownership: an Entry (a loaded kernel) is a Python object, reference-counted.
 * The dispatcher's table holds one reference per key; every launch holds one
 * more from its lookup to its return (the GIL is released while the kernel
 * runs).  The loaded code is unloaded only in entry_dealloc, when the last
 * reference goes, so no launch ever runs code that was unloaded.  A key's
 * entry is never replaced: the first entry inserted for a key stays, and a
 * thread whose build lost the race uses it and drops its own.
 *
 * Tiers (tier.h): a CPU entry made by tier 0 has cpu == cpu0 (libtcc's code)
 * and a job, the optimising build, which stores the optimised module into
 * cpu (release) when it is loaded.  A launch reads cpu once (acquire) and runs
 * what it read; tier 0's module stays loaded until entry_dealloc, so a launch
 * that read it before the swap finishes in loaded code.
 */
#ifndef KILN_EXT_TABLE_H
#define KILN_EXT_TABLE_H

#include <string.h>

#include "obs.h"
#include "state.h"
#include "tier.h"

typedef struct {
    PyObject_HEAD
    int target;           /* 0 CPU, 1 CUDA */
    kiln_cpu_module *cpu; /* the code launches run: read once per launch, acquire */
    kiln_cpu_module *cpu0; /* tier 0's module while it may run, else NULL */
    ExtTierJob *job;      /* the optimising build after tier 0, or NULL */
    kiln_cuda_module *cu;
    int device;           /* CUDA: the device the module is loaded on */
    bool can_fail;        /* it may record a kernel error */
    bool debug;           /* compiled with debug=True: checked after each launch */
    bool cooperative;     /* uses kiln.cg: its CUDA module launches cooperatively */
    ModState *st;
    int nparams;
    kiln_argtype *ptypes; /* the types it was compiled for */
    uint8_t *written;     /* per parameter */
    int nslots;           /* 8-byte parameter slots */
    PyObject *program;    /* Program */
    PyObject *files;      /* tuple of file names for error locations */
    PyObject *signature;  /* str */
    ExtObsEntry obs;      /* its counters and names, for kiln.metrics() and traces */
} EntryObject;

typedef struct {
    uint64_t hash;
    int len;
    uint8_t *key;     /* PyMem-owned copy */
    PyObject *entry;  /* strong reference */
} Slot;

/* Open addressing over type keys; used with the GIL held. */
typedef struct {
    Slot *slots;
    int cap, n;
    uint64_t gen; /* bumped by every clear: an entry looked up while gen had one value is
                   * still the table's (and alive) while it keeps that value */
} SpecTable;

/* A type key's hash, 4 bytes a step: a key is 4 bytes per argument (each written by one
 * 4-byte store, which these loads forward from), then the target and device bytes and
 * perhaps the launch configuration.  A byte at a time (FNV) cost a chained multiply per
 * byte, about 30 ns of a launch. */
static inline uint64_t ext_key_hash(const uint8_t *k, int n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t w;
        memcpy(&w, k + i, 4);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 31;
    }
    for (; i < n; i++) h = (h ^ k[i]) * 0x100000001B3ull;
    h ^= h >> 33;
    return h | 1; /* 0 marks an empty slot */
}

/* The entry under key (borrowed: take a reference to keep it), or NULL. */
static inline PyObject *ext_table_get(SpecTable *t, const uint8_t *key, int len, uint64_t h) {
    if (!t->cap) return NULL;
    int mask = t->cap - 1;
    for (int i = (int)(h & (uint64_t)mask);; i = (i + 1) & mask) {
        Slot *s = &t->slots[i];
        if (!s->hash) return NULL;
        if (s->hash == h && s->len == len && memcmp(s->key, key, (size_t)len) == 0) return s->entry;
    }
}

/* Inserts entry under key unless the key has one already; returns the entry the
 * table holds for the key (borrowed), or NULL with an exception set. */
PyObject *ext_table_insert(SpecTable *t, const uint8_t *key, int len, uint64_t h,
                           PyObject *entry);
/* Drops the table's references (a running launch keeps its own). */
void ext_table_clear(SpecTable *t);

/* Creates kiln._kiln.Entry (st->EntryType). */
int ext_table_init(PyObject *module, ModState *st);

#endif
