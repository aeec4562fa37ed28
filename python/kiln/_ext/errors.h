/* errors.h: diagnostics and kernel errors as Python exceptions (errors.c). */
#ifndef KILN_EXT_ERRORS_H
#define KILN_EXT_ERRORS_H

#include "state.h"

/* Creates kiln.CompileError, CudaError, PerformanceWarning, CacheWarning and
 * CacheError and adds them to the module. */
int ext_errors_init(PyObject *module, ModState *st);

/* Diagnostics collected as a list of str, with the GIL held. */
typedef struct {
    PyObject *list; /* formatted diagnostics (str) */
    int nerrors;
} Sink;
void ext_sink_diag(void *ud, const kiln_diag *d);
/* Raises CompileError from what the sink collected (unless an exception is
 * already set, e.g. by the resolver). */
void ext_raise_compile_error(ModState *st, Sink *s, const char *fallback);

/* kiln_diag_fn collecting into a TextSink (no GIL needed). */
void ext_text_diag(void *ud, const kiln_diag *d);
/* kiln_interrupt_fn for contexts used with the GIL released: on the main thread,
 * takes the GIL and runs Python's signal handlers; nonzero when one raised
 * (KeyboardInterrupt), which stays set for the caller to return. */
int ext_interrupted(void *ud);
/* Raises kiln.CompileError with the sink's text (or fallback), unless an
 * exception (an interrupt's) is already set. */
void ext_raise_text(ModState *st, TextSink *t, const char *fallback);

/* Raises the exception for a kernel's error record (IndexError, AssertionError,
 * ...), naming the place from files; returns NULL. */
PyObject *ext_raise_kernel_error(const kiln_kernel_error *err, PyObject *files);

#endif
