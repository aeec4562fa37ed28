/* devarray.c: GPU memory as Python objects.
 *
 * An Alloc owns one device allocation (stream-ordered where the driver has
 * cuMemAllocAsync) and frees it when the last array using it goes.  A
 * DeviceArray is a view: a pointer, shape, byte strides, dtype and device,
 * plus an owner that keeps the memory alive (an Alloc, or the foreign object
 * it was taken from without a copy).  The launch path reads DeviceArrays
 * straight from this struct.  kiln.DeviceArray (in Python) subclasses the C
 * type and adds the NumPy-facing methods.
 *
 * A Stream (stream.c) wraps a CUstream; kiln.stream() creates one here.
 *
 * On EXT_HOST_DEVICE (KILN_TARGET=cpu) the same objects stand on host memory:
 * an Alloc is an aligned malloc, copies and memsets are memcpy and memset, a
 * Stream has no handle and its work is already done (CPU launches and copies
 * are synchronous).  One DeviceArray type serves both, so every method and the
 * launch path's reading of the struct are shared; args.c classifies a host
 * array like a NumPy array, so CPU launches take it without a copy.
 */
#include "devarray.h"
#include "dlpack.h"
#include "obs.h"
#include "records.h"
#include "recorder.h"

#include <stdlib.h>
#include <string.h>
#include <structmember.h>

/* Host allocations' alignment: a cache line, which also suits every dtype and
 * the CPU kernels' vector loads (NumPy gives 16 or 64). */
enum { EXT_HOST_ALIGN = 64 };

static const int dtype_sizes[KILN_NDTYPES] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 8, 16, 2};
int ext_dtype_size(int dtype) {
    if (dtype >= KILN_RECORD0) return (int)ext_record_size(dtype - KILN_RECORD0);
    return dtype >= 0 && dtype < KILN_NDTYPES ? dtype_sizes[dtype] : 0;
}

int ext_dtype_align(int dtype) {
    if (dtype >= KILN_RECORD0) return ext_record_align(dtype - KILN_RECORD0);
    int isz = ext_dtype_size(dtype);
    return dtype == KILN_COMPLEX64 || dtype == KILN_COMPLEX128 ? isz / 2 : isz;
}

void ext_byte_span(int64_t itemsize, int ndim, const int64_t *shape, const int64_t *strides,
                   int64_t stride_unit, int64_t *lo, int64_t *hi) {
    *lo = 0;
    *hi = itemsize;
    for (int k = 0; k < ndim; k++)
        if (shape[k] == 0) {
            *hi = 0;
            return;
        }
    for (int k = 0; k < ndim; k++) {
        int64_t ext = (shape[k] - 1) * strides[k] * stride_unit;
        if (ext < 0) *lo += ext;
        else *hi += ext;
    }
}

/* ---- Alloc -------------------------------------------------------------------------- */

static void alloc_dealloc(AllocObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    if (self->device == EXT_HOST_DEVICE)
        free((void *)(uintptr_t)self->ptr);
    else if (self->ptr && self->st->cuda && kiln_cuda_use(self->st->cuda, self->device) == 0)
        kiln_cuda_free(self->st->cuda, self->ptr, NULL);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyType_Slot alloc_slots[] = {
    {Py_tp_dealloc, alloc_dealloc},
    {Py_tp_doc, (void *)"A device allocation, freed with its last array."},
    {0, NULL}};

static PyType_Spec alloc_spec = {"kiln._kiln.Alloc", sizeof(AllocObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                 alloc_slots};

/* Host memory for EXT_HOST_DEVICE: never NULL for a valid request (an empty array
 * gets a block too, so its address is a real one, as cuMemAlloc's are). */
static AllocObject *host_alloc_new(ModState *st, size_t size) {
    size_t rounded = (size + EXT_HOST_ALIGN - 1) / EXT_HOST_ALIGN * EXT_HOST_ALIGN;
    if (rounded < size) {
        PyErr_SetString(PyExc_ValueError, "array is too big");
        return NULL;
    }
    void *p = aligned_alloc(EXT_HOST_ALIGN, rounded ? rounded : EXT_HOST_ALIGN);
    if (!p) {
        PyErr_Format(PyExc_MemoryError, "cannot allocate %zu bytes of host memory for a "
                     "device array (KILN_TARGET=cpu)", size);
        return NULL;
    }
    AllocObject *a = PyObject_New(AllocObject, st->AllocType);
    if (!a) {
        free(p);
        return NULL;
    }
    a->ptr = (uint64_t)(uintptr_t)p;
    a->size = size;
    a->device = EXT_HOST_DEVICE;
    ext_record_fresh(st, a->ptr, size);
    a->st = st;
    return a;
}

static AllocObject *alloc_new(ModState *st, size_t size, int device, void *stream) {
    if (device == EXT_HOST_DEVICE) return host_alloc_new(st, size);
    kiln_cuda *cu = ext_cuda_on(st, device);
    if (!cu) return NULL;
    uint64_t ptr = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = kiln_cuda_alloc(cu, &ptr, size, stream);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        ext_cuda_error(st, rc, "allocating device memory");
        return NULL;
    }
    AllocObject *a = PyObject_New(AllocObject, st->AllocType);
    if (!a) {
        kiln_cuda_free(cu, ptr, stream);
        return NULL;
    }
    a->ptr = ptr;
    a->size = size;
    a->device = device;
    ext_record_fresh(st, ptr, size); /* its first contents need no restoring on replay */
    a->st = st;
    return a;
}

/* ---- DeviceArray ---------------------------------------------------------------------- */

DeviceArrayObject *ext_devarray_new(ModState *st, uint64_t ptr, int ndim, const int64_t *shape,
                                    const int64_t *strides, int dtype, int device,
                                    PyObject *owner) {
    PyTypeObject *cls = st->device_array_class ? (PyTypeObject *)st->device_array_class
                                               : st->DeviceArrayType;
    DeviceArrayObject *d = (DeviceArrayObject *)cls->tp_alloc(cls, 0);
    if (!d) return NULL;
    d->ptr = ptr;
    d->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        d->shape[i] = shape[i];
        d->strides[i] = strides[i];
    }
    d->dtype = (uint8_t)dtype;
    d->device = device;
    /* the launch path's view: element strides and layout, computed once */
    int isz = ext_dtype_size(dtype);
    d->layout = 0;
    bool ok = isz > 0 && ndim > 0;
    for (int i = 0; ok && i < ndim; i++) {
        if (strides[i] % isz) ok = false;
        else d->estrides[i] = strides[i] / isz;
    }
    if (ok) {
        int64_t size = 1, e = 1;
        for (int i = 0; i < ndim; i++) size *= shape[i];
        bool c = true, f = true;
        for (int i = ndim - 1; i >= 0; i--) {
            if (shape[i] != 1 && d->estrides[i] != e) c = false;
            e *= shape[i];
        }
        e = 1;
        for (int i = 0; i < ndim; i++) {
            if (shape[i] != 1 && d->estrides[i] != e) f = false;
            e *= shape[i];
        }
        if (size == 0) c = true;
        d->layout = c ? 'C' : (f && ndim > 1) ? 'F' : 'A';
        if (d->layout != 'A') {
            e = 1;
            if (d->layout == 'C')
                for (int i = ndim - 1; i >= 0; i--) {
                    d->estrides[i] = e;
                    e *= shape[i];
                }
            else
                for (int i = 0; i < ndim; i++) {
                    d->estrides[i] = e;
                    e *= shape[i];
                }
        }
    }
    Py_XINCREF(owner);
    d->owner = owner;
    return d;
}

static int da_traverse(DeviceArrayObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->owner);
    Py_VISIT(self->dict);
    return 0;
}

static int da_clear(DeviceArrayObject *self) {
    Py_CLEAR(self->owner);
    Py_CLEAR(self->dict);
    return 0;
}

static void da_dealloc(DeviceArrayObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
    da_clear(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *da_shape(DeviceArrayObject *self, void *c) {
    PyObject *t = PyTuple_New(self->ndim);
    for (int i = 0; t && i < self->ndim; i++)
        PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(self->shape[i]));
    return t;
}
static PyObject *da_strides(DeviceArrayObject *self, void *c) {
    PyObject *t = PyTuple_New(self->ndim);
    for (int i = 0; t && i < self->ndim; i++)
        PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(self->strides[i]));
    return t;
}
static int64_t da_size_of(DeviceArrayObject *self) {
    int64_t n = 1;
    for (int i = 0; i < self->ndim; i++) n *= self->shape[i];
    return n;
}
static PyObject *da_size(DeviceArrayObject *self, void *c) { return PyLong_FromLongLong(da_size_of(self)); }
static PyObject *da_ndim(DeviceArrayObject *self, void *c) { return PyLong_FromLong(self->ndim); }
static PyObject *da_ptr(DeviceArrayObject *self, void *c) { return PyLong_FromUnsignedLongLong(self->ptr); }
static PyObject *da_device(DeviceArrayObject *self, void *c) { return PyLong_FromLong(self->device); }
static PyObject *da_code(DeviceArrayObject *self, void *c) { return PyLong_FromLong(self->dtype); }
static PyObject *da_itemsize(DeviceArrayObject *self, void *c) {
    return PyLong_FromLong(ext_dtype_size(self->dtype));
}
static PyObject *da_nbytes(DeviceArrayObject *self, void *c) {
    return PyLong_FromLongLong(da_size_of(self) * ext_dtype_size(self->dtype));
}
/* (lo, hi): byte offsets from ptr of the first and one past the last byte any element uses */
static PyObject *da_span(DeviceArrayObject *self, void *c) {
    int64_t lo, hi;
    ext_byte_span(ext_dtype_size(self->dtype), self->ndim, self->shape, self->strides, 1, &lo, &hi);
    return Py_BuildValue("(LL)", (long long)lo, (long long)hi);
}
static PyObject *da_owner(DeviceArrayObject *self, void *c) {
    PyObject *o = self->owner ? self->owner : Py_None;
    Py_INCREF(o);
    return o;
}

static PyGetSetDef da_getset[] = {
    {"shape", (getter)da_shape, NULL, "extent of each dimension", NULL},
    {"strides", (getter)da_strides, NULL, "bytes between neighbours in each dimension", NULL},
    {"size", (getter)da_size, NULL, "number of elements", NULL},
    {"ndim", (getter)da_ndim, NULL, "number of dimensions", NULL},
    {"itemsize", (getter)da_itemsize, NULL, "bytes per element", NULL},
    {"nbytes", (getter)da_nbytes, NULL, "bytes of all elements", NULL},
    {"_ptr", (getter)da_ptr, NULL, "device address of the first element", NULL},
    {"_device", (getter)da_device, NULL, "device ordinal", NULL},
    {"_dtype_code", (getter)da_code, NULL, "kiln dtype code", NULL},
    {"_span", (getter)da_span, NULL, "(lo, hi) byte span around _ptr", NULL},
    {"_owner", (getter)da_owner, NULL, "what keeps the memory alive", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef da_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(DeviceArrayObject, weakrefs), READONLY, NULL},
    {"__dictoffset__", T_PYSSIZET, offsetof(DeviceArrayObject, dict), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static Py_ssize_t da_sq_len(DeviceArrayObject *self) {
    if (self->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d device array");
        return -1;
    }
    return (Py_ssize_t)self->shape[0];
}

static PyType_Slot da_slots[] = {
    {Py_tp_dealloc, da_dealloc},
    {Py_tp_traverse, da_traverse},
    {Py_tp_clear, da_clear},
    {Py_tp_getset, da_getset},
    {Py_tp_members, da_members},
    {Py_sq_length, da_sq_len},
    {Py_tp_doc, (void *)"Base of kiln.DeviceArray: GPU memory seen as an array."},
    {0, NULL}};

static PyType_Spec da_spec = {"kiln._kiln.DeviceArrayBase", sizeof(DeviceArrayObject), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                              da_slots};

/* ---- module functions --------------------------------------------------------------------------- */

static int parse_shape(PyObject *shape, int64_t *out, int *ndim) {
    PyObject *seq = PySequence_Fast(shape, "shape must be an int or a tuple of ints");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > KILN_MAX_NDIM) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "device arrays have at most %d dimensions", KILN_MAX_NDIM);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (v < 0) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
            return -1;
        }
        out[i] = v;
    }
    *ndim = (int)n;
    Py_DECREF(seq);
    return 0;
}

DeviceArrayObject *ext_devarray_empty(ModState *st, int nd, const int64_t *sh, int code,
                                      bool fortran, int device, void *stream) {
    int isz = ext_dtype_size(code);
    if (!isz) {
        PyErr_SetString(PyExc_TypeError, "unsupported dtype for a device array");
        return NULL;
    }
    int64_t total = isz, str[KILN_MAX_NDIM];
    for (int i = 0; i < nd; i++)
        if (__builtin_mul_overflow(total, sh[i], &total)) {
            PyErr_SetString(PyExc_ValueError, "array is too big");
            return NULL;
        }
    int64_t s = isz;
    for (int j = 0; j < nd; j++) {
        int i = fortran ? j : nd - 1 - j;
        str[i] = s;
        s *= sh[i];
    }
    AllocObject *a = alloc_new(st, (size_t)total, device, stream);
    if (!a) return NULL;
    DeviceArrayObject *d = ext_devarray_new(st, a->ptr, nd, sh, str, code, device, (PyObject *)a);
    Py_DECREF(a);
    return d;
}

/* device_empty(shape, dtype_code, order, device, stream) */
static PyObject *f_device_empty(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    PyObject *shape, *stream;
    int code, device;
    const char *order;
    if (!PyArg_ParseTuple(args, "OisiO", &shape, &code, &order, &device, &stream)) return NULL;
    int64_t sh[KILN_MAX_NDIM];
    int nd;
    if (parse_shape(shape, sh, &nd) < 0) return NULL;
    void *h;
    if (ext_stream_handle(st, stream, &h) < 0) return NULL;
    return (PyObject *)ext_devarray_empty(st, nd, sh, code, order[0] == 'F', device, h);
}

/* device_view(base, byte_offset, shape, strides) */
static PyObject *f_device_view(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    PyObject *base, *shape, *strides;
    long long off;
    if (!PyArg_ParseTuple(args, "O!LOO", st->DeviceArrayType, &base, &off, &shape, &strides))
        return NULL;
    DeviceArrayObject *b = (DeviceArrayObject *)base;
    int64_t sh[KILN_MAX_NDIM], str[KILN_MAX_NDIM];
    int nd, nd2;
    if (parse_shape(shape, sh, &nd) < 0) return NULL;
    PyObject *seq = PySequence_Fast(strides, "strides must be a tuple of ints");
    if (!seq) return NULL;
    nd2 = (int)PySequence_Fast_GET_SIZE(seq);
    for (int i = 0; i < nd2 && i < KILN_MAX_NDIM; i++)
        str[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    if (PyErr_Occurred()) return NULL;
    if (nd2 != nd) {
        PyErr_SetString(PyExc_ValueError, "shape and strides differ in length");
        return NULL;
    }
    return (PyObject *)ext_devarray_new(st, b->ptr + (uint64_t)off, nd, sh, str, b->dtype,
                                        b->device, b->owner);
}

/* PyArg "O&" converter: an address or handle, an integer in 0..2**64-1 ("K" takes any
 * int modulo 2**64: 2**64 was the default stream) */
static int u64_arg(PyObject *o, void *out) {
    PyObject *i = PyNumber_Index(o);
    if (!i) return 0;
    unsigned long long v = PyLong_AsUnsignedLongLong(i);
    Py_DECREF(i);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError, "an address or handle is an int from 0 to 2**64-1, "
                     "not %R", o);
        return 0;
    }
    *(unsigned long long *)out = v;
    return 1;
}

/* wrap(ptr, shape, strides, dtype_code, device, owner): a DeviceArray over foreign memory */
static PyObject *f_wrap(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    unsigned long long ptr;
    PyObject *shape, *strides, *owner;
    int code, device;
    if (!PyArg_ParseTuple(args, "O&OOiiO", u64_arg, &ptr, &shape, &strides, &code, &device, &owner))
        return NULL;
    int64_t sh[KILN_MAX_NDIM], str[KILN_MAX_NDIM];
    int nd;
    if (parse_shape(shape, sh, &nd) < 0) return NULL;
    PyObject *seq = PySequence_Fast(strides, "strides must be a tuple of ints");
    if (!seq) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != nd) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "shape and strides differ in length");
        return NULL;
    }
    for (int i = 0; i < nd; i++) str[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    if (PyErr_Occurred()) return NULL;
    return (PyObject *)ext_devarray_new(st, ptr, nd, sh, str, code, device, owner);
}

/* copy() on EXT_HOST_DEVICE: both sides are host memory, so every kind is a
 * memcpy (memmove: a view may overlap its base), done when this returns. */
static PyObject *host_copy(ModState *st, const char *kind, PyObject *dst, PyObject *src,
                           long long nbytes, PyObject *stream) {
    void *h;
    if (ext_stream_handle(st, stream, &h) < 0) return NULL;
    bool h2d = strcmp(kind, "h2d") == 0, d2h = strcmp(kind, "d2h") == 0;
    if (nbytes < 0 || (!h2d && !d2h && strcmp(kind, "d2d") != 0)) {
        PyErr_SetString(PyExc_ValueError, nbytes < 0 ? "negative size" : "kind is h2d, d2h or d2d");
        return NULL;
    }
    ext_record_refuse(st, "it copies %s", h2d ? "from the host to a device array"
                                          : d2h ? "from a device array to the host"
                                                : "between device arrays");
    Py_buffer buf = {0};
    if ((h2d || d2h) &&
        PyObject_GetBuffer(h2d ? src : dst, &buf, PyBUF_ANY_CONTIGUOUS | (h2d ? 0 : PyBUF_WRITABLE)) < 0)
        return NULL;
    void *to = h2d || !d2h ? (void *)(uintptr_t)PyLong_AsUnsignedLongLong(dst) : buf.buf;
    const void *from = d2h || !h2d ? (void *)(uintptr_t)PyLong_AsUnsignedLongLong(src) : buf.buf;
    if (!PyErr_Occurred() && (h2d || d2h) && buf.len < nbytes)
        PyErr_SetString(PyExc_ValueError, "the host buffer is smaller than the copy");
    if (!PyErr_Occurred() && nbytes > 0) {
        Py_BEGIN_ALLOW_THREADS
        memmove(to, from, (size_t)nbytes);
        Py_END_ALLOW_THREADS
    }
    if (h2d || d2h) PyBuffer_Release(&buf);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

/* copy(kind, device, dst, src, nbytes, stream): kind 'h2d', 'd2h' or 'd2d'; host sides
 * are writable/readable buffers, device sides ints */
static PyObject *f_copy(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    const char *kind;
    int device;
    PyObject *dst, *src, *stream;
    long long nbytes;
    if (!PyArg_ParseTuple(args, "siOOLO", &kind, &device, &dst, &src, &nbytes, &stream)) return NULL;
    if (device == EXT_HOST_DEVICE) return host_copy(st, kind, dst, src, nbytes, stream);
    kiln_cuda *cu = ext_cuda_on(st, device);
    if (!cu) return NULL;
    void *h;
    if (ext_stream_handle(st, stream, &h) < 0) return NULL;
    if (nbytes < 0) {
        PyErr_SetString(PyExc_ValueError, "negative size");
        return NULL;
    }
    Py_buffer buf;
    int rc = 0;
    ext_record_refuse(st, "it copies %s", kind[0] == 'h'   ? "from the host to the GPU"
                                          : kind[2] == 'h' ? "from the GPU to the host"
                                                           : "between device arrays");
    if (strcmp(kind, "h2d") == 0 || strcmp(kind, "d2h") == 0) {
        bool h2d = kind[0] == 'h';
        PyObject *hostobj = h2d ? src : dst;
        PyObject *devobj = h2d ? dst : src;
        /* C or Fortran order: the bytes are one block either way */
        int flags = PyBUF_ANY_CONTIGUOUS | (h2d ? 0 : PyBUF_WRITABLE);
        if (PyObject_GetBuffer(hostobj, &buf, flags) < 0) return NULL;
        if (buf.len < nbytes) {
            PyBuffer_Release(&buf);
            PyErr_SetString(PyExc_ValueError, "the host buffer is smaller than the copy");
            return NULL;
        }
        uint64_t dptr = PyLong_AsUnsignedLongLong(devobj);
        if (PyErr_Occurred()) {
            PyBuffer_Release(&buf);
            return NULL;
        }
        double t0 = ext_obs_us();
        Py_BEGIN_ALLOW_THREADS
        if (h2d) {
            rc = kiln_cuda_copy_htod(cu, dptr, buf.buf, (size_t)nbytes, h);
            /* the host buffer may go away when this returns */
            if (rc == 0) rc = kiln_cuda_stream_sync(cu, h);
        } else {
            rc = kiln_cuda_copy_dtoh(cu, buf.buf, dptr, (size_t)nbytes, h);
        }
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&buf);
        if (rc == 0) ext_obs_copy(st, h2d, nbytes, device, t0, (ext_obs_us() - t0) / 1e3);
    } else if (strcmp(kind, "d2d") == 0) {
        uint64_t d = PyLong_AsUnsignedLongLong(dst), s = PyLong_AsUnsignedLongLong(src);
        if (PyErr_Occurred()) return NULL;
        rc = kiln_cuda_copy_dtod(cu, d, s, (size_t)nbytes, h);
    } else {
        PyErr_SetString(PyExc_ValueError, "kind is h2d, d2h or d2d");
        return NULL;
    }
    if (rc != 0) return ext_cuda_error(st, rc, "copying memory");
    if (kind[0] == 'd' && kind[2] == 'h' && ext_check_kernel_error(st, device) < 0) return NULL;
    Py_RETURN_NONE;
}

/* memset(device, ptr, byte, nbytes, stream) */
static PyObject *f_memset(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    int device, byte;
    unsigned long long ptr;
    long long n;
    PyObject *stream;
    if (!PyArg_ParseTuple(args, "iO&iLO", &device, u64_arg, &ptr, &byte, &n, &stream)) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "negative size");
        return NULL;
    }
    void *h;
    if (device == EXT_HOST_DEVICE) {
        if (ext_stream_handle(st, stream, &h) < 0) return NULL;
        ext_record_refuse(st, "it sets device memory (memset)");
        memset((void *)(uintptr_t)ptr, byte, (size_t)n);
        Py_RETURN_NONE;
    }
    kiln_cuda *cu = ext_cuda_on(st, device);
    if (!cu) return NULL;
    if (ext_stream_handle(st, stream, &h) < 0) return NULL;
    ext_record_refuse(st, "it sets device memory (memset)");
    int rc = kiln_cuda_memset(cu, ptr, (unsigned char)byte, (size_t)n, h);
    if (rc != 0) return ext_cuda_error(st, rc, "setting memory");
    Py_RETURN_NONE;
}

/* stream(device) -> a new Stream; default_stream(device) -> the legacy default stream;
 * stream_of(device, handle) -> a Stream object for a CUstream made elsewhere (or one of
 * the driver's special handles), which it does not destroy */
static PyObject *make_stream(ModState *st, int device, bool create, void *h) {
    kiln_cuda *cu = NULL;
    if (device != EXT_HOST_DEVICE && !(cu = ext_cuda_on(st, device))) return NULL;
    if (create && cu) {
        int rc = kiln_cuda_stream_new(cu, &h);
        if (rc != 0) return ext_cuda_error(st, rc, "creating a stream");
    }
    StreamObject *s = PyObject_New(StreamObject, st->StreamType);
    if (!s) {
        if (create && h && cu) kiln_cuda_stream_free(cu, h);
        return NULL;
    }
    s->handle = h;
    s->device = device;
    s->owned = create;
    s->st = st;
    return (PyObject *)s;
}

static PyObject *f_stream(PyObject *m, PyObject *args) {
    int device;
    if (!PyArg_ParseTuple(args, "i", &device)) return NULL;
    return make_stream(ext_state(m), device, true, NULL);
}

static PyObject *f_default_stream(PyObject *m, PyObject *args) {
    int device;
    if (!PyArg_ParseTuple(args, "i", &device)) return NULL;
    return make_stream(ext_state(m), device, false, NULL);
}

static PyObject *f_stream_of(PyObject *m, PyObject *args) {
    int device;
    unsigned long long h;
    if (!PyArg_ParseTuple(args, "iO&", &device, u64_arg, &h)) return NULL;
    return make_stream(ext_state(m), device, false, (void *)(uintptr_t)h);
}

/* stream_handle(obj) -> the CUstream as an int, for any stream object a launch takes */
static PyObject *f_stream_handle(PyObject *m, PyObject *obj) {
    void *h;
    if (ext_stream_handle(ext_state(m), obj, &h) < 0) return NULL;
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)h);
}

static PyObject *f_set_device_array_class(PyObject *m, PyObject *cls) {
    ModState *st = ext_state(m);
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, st->DeviceArrayType)) {
        PyErr_SetString(PyExc_TypeError, "expected a subclass of DeviceArrayBase");
        return NULL;
    }
    Py_INCREF(cls);
    Py_XSETREF(st->device_array_class, cls);
    Py_RETURN_NONE;
}

/* ---- DLPack export ---------------------------------------------------------------------------- */


typedef struct {
    DLManagedTensor t;
    PyObject *array; /* keeps the DeviceArray alive */
    int64_t shape[KILN_MAX_NDIM], strides[KILN_MAX_NDIM];
} Exported;

static void exported_delete(DLManagedTensor *t) {
    Exported *e = (Exported *)t;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF(e->array);
    PyGILState_Release(g);
    PyMem_RawFree(e);
}

static void capsule_destructor(PyObject *cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");
        if (t && t->deleter) t->deleter(t);
    }
}

static PyObject *f_dlpack_capsule(PyObject *m, PyObject *arr) {
    ModState *st = ext_state(m);
    if (!PyObject_TypeCheck(arr, st->DeviceArrayType)) {
        PyErr_SetString(PyExc_TypeError, "expected a DeviceArray");
        return NULL;
    }
    DeviceArrayObject *d = (DeviceArrayObject *)arr;
    if (d->dtype >= KILN_NDTYPES) {
        PyErr_SetString(PyExc_TypeError,
                        d->dtype >= KILN_RECORD0 && ext_record_time(d->dtype - KILN_RECORD0)
                            ? "DLPack has no datetime64 or timedelta64 dtypes: export "
                              "a.view(np.int64)"
                            : "DLPack has no structured (record) dtypes");
        return NULL;
    }
    Exported *e = PyMem_RawCalloc(1, sizeof *e);
    if (!e) return PyErr_NoMemory();
    static const uint8_t codes[KILN_NDTYPES] = {6, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 5, 5, 4};
    int isz = ext_dtype_size(d->dtype);
    e->t.dl_tensor.data = (void *)(uintptr_t)d->ptr;
    bool host = d->device == EXT_HOST_DEVICE;
    e->t.dl_tensor.device.device_type = host ? 1 : 2; /* kDLCPU, kDLCUDA */
    e->t.dl_tensor.device.device_id = host ? 0 : d->device;
    e->t.dl_tensor.ndim = d->ndim;
    e->t.dl_tensor.dtype.code = codes[d->dtype];
    e->t.dl_tensor.dtype.bits = (uint8_t)(isz * 8);
    e->t.dl_tensor.dtype.lanes = 1;
    for (int i = 0; i < d->ndim; i++) {
        e->shape[i] = d->shape[i];
        e->strides[i] = d->strides[i] / isz; /* DLPack counts elements */
    }
    e->t.dl_tensor.shape = e->shape;
    e->t.dl_tensor.strides = e->strides;
    e->t.manager_ctx = e;
    e->t.deleter = exported_delete;
    Py_INCREF(arr);
    e->array = arr;
    PyObject *cap = PyCapsule_New(&e->t, "dltensor", capsule_destructor);
    if (!cap) exported_delete(&e->t);
    return cap;
}

PyMethodDef ext_devarray_functions[] = {
    {"device_empty", f_device_empty, METH_VARARGS,
     "device_empty(shape, dtype_code, order, device, stream) -> DeviceArray"},
    {"device_view", f_device_view, METH_VARARGS,
     "device_view(base, byte_offset, shape, strides) -> DeviceArray"},
    {"wrap", f_wrap, METH_VARARGS,
     "wrap(ptr, shape, strides, dtype_code, device, owner) -> DeviceArray"},
    {"copy", f_copy, METH_VARARGS, "copy(kind, device, dst, src, nbytes, stream)"},
    {"memset", f_memset, METH_VARARGS, "memset(device, ptr, byte, nbytes, stream)"},
    {"stream", f_stream, METH_VARARGS, "stream(device) -> Stream"},
    {"default_stream", f_default_stream, METH_VARARGS, "default_stream(device) -> Stream"},
    {"stream_of", f_stream_of, METH_VARARGS, "stream_of(device, handle) -> Stream (not owned)"},
    {"stream_handle", f_stream_handle, METH_O, "stream_handle(stream) -> CUstream as an int"},
    {"set_device_array_class", f_set_device_array_class, METH_O, "register kiln.DeviceArray"},
    {"dlpack_capsule", f_dlpack_capsule, METH_O, "a DLPack capsule viewing a DeviceArray"},
    {NULL, NULL, 0, NULL}};

int ext_devarray_types(PyObject *module, ModState *st) {
    st->AllocType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &alloc_spec, NULL);
    st->DeviceArrayType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &da_spec, NULL);
    st->StreamType = ext_stream_type(module);
    if (!st->AllocType || !st->DeviceArrayType || !st->StreamType) return -1;
    if (PyModule_AddType(module, st->DeviceArrayType) < 0) return -1;
    if (PyModule_AddType(module, st->StreamType) < 0) return -1;
    return 0;
}
