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
};

#endif
