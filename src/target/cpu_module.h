/* cpu_module.h: a loaded CPU kernel, shared by the two ways of loading one:
 * cpu.c (a shared object built by the system compiler, opened with dlopen)
 * and tcc.c (tier 0: libtcc compiles the source into memory kiln maps). */
#ifndef KILN_TARGET_CPU_MODULE_H
#define KILN_TARGET_CPU_MODULE_H

#include <stddef.h>

#include "kiln.h"

struct kiln_cpu_module {
    void *handle;     /* from dlopen (cpu.c), or NULL */
    int fd;           /* the memfd holding the object, open while loaded; -1 for tier 0 */
    void *code;       /* tier 0: the mapping tcc relocated the code into, or NULL */
    size_t code_len;  /* ... and its length */
    void (*entry)(const kiln_cpu_launch *, const int64_t *);
    int pool;         /* tier 0: the entry may run as several shares at once (rt_cpu.h) */
    int vector;       /* tier 0: the entry runs blocks of threads through vecops.c */
};

/* Tier 0's launch (tcc.c): m's entry on launch->pool_nt threads when m->pool. */
void kiln_cpu_quick_run(kiln_cpu_module *m, const kiln_cpu_launch *launch,
                        const int64_t *params);

#endif
