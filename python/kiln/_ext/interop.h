/* interop.h: foreign GPU arrays, __cuda_array_interface__ and DLPack (interop.c). */
#ifndef KILN_EXT_INTEROP_H
#define KILN_EXT_INTEROP_H

#include "devarray.h"
#include "dlpack.h"

typedef struct {
    uint64_t ptr;
    int ndim;
    int64_t shape[KILN_MAX_NDIM];
    int64_t strides[KILN_MAX_NDIM]; /* bytes */
    int dtype;
    int device;
    bool readonly;
    PyObject *keep;                 /* a reference to hold during the launch (DLPack) */
} ForeignArray;

/* Interns the attribute names it looks up. */
int ext_interop_init(PyObject *module, ModState *st);
/* 1 if o is a GPU array (filled in), 0 if it is not one, -1 with an exception. */
int ext_foreign_array(ModState *st, PyObject *o, void *launch_stream, ForeignArray *fa);
void ext_foreign_release(ForeignArray *fa);
extern PyMethodDef ext_interop_functions[];

#endif
