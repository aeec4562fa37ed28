/* resolve.h: the resolver bridge (resolve.c): the core asks about a global name, Python's
 * resolver (_compile.resolve) describes its value as a tuple, and this turns the tuple
 * into a kiln_value whose pointers stay valid until the translation ends. */
#ifndef KILN_EXT_RESOLVE_H
#define KILN_EXT_RESOLVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "kiln.h"

typedef struct {
    PyObject *resolver; /* callable(scope, dotted) -> description tuple */
    PyObject *keep;     /* list: objects whose strings *out points into */
    PyObject *mem;      /* list of capsules freeing kiln_value arrays */
} Resolve;

/* The core's kiln_resolve_fn over a Resolve (ud): 0, or -1 with a Python exception. */
int ext_resolve(void *ud, void *scope, const char *dotted, kiln_value *out);

#endif
