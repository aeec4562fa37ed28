/* stream.h: kiln.Stream and a launch's stream argument (stream.c). */
#ifndef KILN_EXT_STREAM_H
#define KILN_EXT_STREAM_H

#include "state.h"

typedef struct {
    PyObject_HEAD
    void *handle;  /* CUstream; NULL for the default stream and on EXT_HOST_DEVICE */
    int device;
    bool owned;    /* created by kiln.stream(): destroyed with the object */
    ModState *st;
} StreamObject;

/* The CUstream a launch configuration's stream object names; -1 with an
 * exception for objects that are not streams. */
int ext_stream_handle(ModState *st, PyObject *obj, void **handle);
/* The kiln.Stream type, for ext_devarray_types. */
PyTypeObject *ext_stream_type(PyObject *module);

#endif
