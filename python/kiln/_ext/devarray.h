/* devarray.h: GPU memory as Python objects (devarray.c). */
#ifndef KILN_EXT_DEVARRAY_H
#define KILN_EXT_DEVARRAY_H

#include "driver.h"
#include "stream.h"


typedef struct {
    PyObject_HEAD
    uint64_t ptr;                    /* address of element (0, ..., 0) */
    int ndim;
    int64_t shape[KILN_MAX_NDIM];
    int64_t strides[KILN_MAX_NDIM];  /* bytes */
    uint8_t dtype;                   /* kiln_dtype */
    uint8_t layout;                  /* 'C', 'F', 'A', or 0 if strides are not element multiples */
    int64_t estrides[KILN_MAX_NDIM]; /* element strides (contiguous ones for C and F) */
    int device;
    PyObject *owner;                 /* what keeps the memory alive */
    PyObject *weakrefs;
    PyObject *dict;
} DeviceArrayObject;

typedef struct {
    PyObject_HEAD
    uint64_t ptr;                    /* device address, or host address on EXT_HOST_DEVICE */
    size_t size;
    int device;
    ModState *st;
} AllocObject;

int ext_devarray_types(PyObject *module, ModState *st);
extern PyMethodDef ext_devarray_functions[];
/* A new DeviceArray of class st->device_array_class (or the base). */
DeviceArrayObject *ext_devarray_new(ModState *st, uint64_t ptr, int ndim, const int64_t *shape,
                                    const int64_t *strides, int dtype, int device,
                                    PyObject *owner);
/* A new uninitialised DeviceArray of nd dimensions sh, C order (F order with fortran),
 * allocated on device (its stream: the allocation's ordering on a stream-ordered
 * pool).  NULL with an exception set. */
DeviceArrayObject *ext_devarray_empty(ModState *st, int nd, const int64_t *sh, int code,
                                      bool fortran, int device, void *stream);
int ext_dtype_size(int dtype);
/* The alignment an element of dtype needs (its size; half of it for complex, the
 * fields' for a record). */
int ext_dtype_align(int dtype);
/* The byte span [lo, hi) around element 0 that an array's elements cover (both 0
 * when it has none); strides are multiplied by stride_unit (1 for byte strides,
 * the item size for element strides). */
void ext_byte_span(int64_t itemsize, int ndim, const int64_t *shape, const int64_t *strides,
                   int64_t stride_unit, int64_t *lo, int64_t *hi);

#endif
