/* dl.h: looking up a dlopen'd library's functions into a table of pointers
 * (nvrtc.c, cuda.c, cuda_ipc.c). */
#ifndef KILN_TARGET_DL_H
#define KILN_TARGET_DL_H

#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

/* name's address in lib; NULL, and *ok cleared, when it has none */
static inline void *sym(void *lib, const char *name, bool *ok) {
    void *p = dlsym(lib, name);
    if (!p) *ok = false;
    return p;
}

/* obj->field = name's address, without casting a void * to a function pointer */
#define LOAD(obj, lib, field, name, ok) memcpy(&(obj)->field, (void *[]){sym(lib, name, ok)}, sizeof(void *))

#endif
