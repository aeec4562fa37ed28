/* ufunc.h: kiln.vectorize's repeated call on kiln device arrays, in C (ufunc.c). */
#ifndef KILN_EXT_UFUNC_H
#define KILN_EXT_UFUNC_H

#include "state.h"

/* Threads per block of a ufunc's flat launch outside max-autotune (Python reads it as
 * _kiln.ufunc_threads: _autotune.DEFAULT_THREADS). */
enum { UFUNC_DEFAULT_THREADS = 256 };

/* Creates kiln._kiln.UfuncBase and the names it uses. */
int ext_ufunc_init(PyObject *module, ModState *st);

#endif
