/* interop.c: GPU arrays of other libraries, taken without copies.
 *
 * Through __cuda_array_interface__ (CuPy, PyTorch, Numba; its stream field is
 * honoured by synchronising that stream when it is not the launch's) or
 * DLPack (JAX and any producer of __dlpack__).  A DLPack tensor is consumed:
 * the ForeignArray holds it until ext_foreign_release, after the launch.
 */
#include "interop.h"

#include <string.h>

static int typestr_dtype(const char *ts, int *dtype) {
    if (!ts || strlen(ts) < 3) return -1;
    char order = ts[0], kind = ts[1];
    int size = atoi(ts + 2);
    if (order == '>' && size > 1) return -2;
    switch (kind) {
    case 'b': *dtype = KILN_BOOL; return size == 1 ? 0 : -1;
    case 'i':
        *dtype = size == 1 ? KILN_INT8 : size == 2 ? KILN_INT16 : size == 4 ? KILN_INT32 : size == 8 ? KILN_INT64 : -1;
        return *dtype < 0 ? -1 : 0;
    case 'u':
        *dtype = size == 1 ? KILN_UINT8 : size == 2 ? KILN_UINT16 : size == 4 ? KILN_UINT32 : size == 8 ? KILN_UINT64 : -1;
        return *dtype < 0 ? -1 : 0;
    case 'f':
        *dtype = size == 4 ? KILN_FLOAT32 : size == 8 ? KILN_FLOAT64 : -1;
        return *dtype < 0 ? -1 : 0;
    default: return -1;
    }
}

static int cai_array(ModState *st, PyObject *o, PyObject *cai, void *launch_stream,
                     ForeignArray *fa) {
    if (!PyDict_Check(cai)) {
        PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ is not a dict");
        return -1;
    }
    PyObject *shape = PyDict_GetItemString(cai, "shape");
    PyObject *typestr = PyDict_GetItemString(cai, "typestr");
    PyObject *data = PyDict_GetItemString(cai, "data");
    PyObject *strides = PyDict_GetItemString(cai, "strides");
    PyObject *stream = PyDict_GetItemString(cai, "stream");
    if (!shape || !PyTuple_Check(shape) || !typestr || !PyUnicode_Check(typestr) || !data ||
        !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
        PyErr_SetString(PyExc_TypeError, "malformed __cuda_array_interface__");
        return -1;
    }
    int rc = typestr_dtype(PyUnicode_AsUTF8(typestr), &fa->dtype);
    if (rc < 0) {
        PyErr_Format(PyExc_TypeError, "GPU arrays of type '%U' are not supported by kernels",
                     typestr);
        return -1;
    }
    fa->ndim = (int)PyTuple_GET_SIZE(shape);
    if (fa->ndim > KILN_MAX_NDIM) {
        PyErr_Format(PyExc_TypeError, "kernels take arrays of at most %d dimensions", KILN_MAX_NDIM);
        return -1;
    }
    int isz = ext_dtype_size(fa->dtype);
    for (int i = 0; i < fa->ndim; i++) {
        fa->shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
        if (PyErr_Occurred()) return -1;
    }
    if (strides && strides != Py_None) {
        if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != fa->ndim) {
            PyErr_SetString(PyExc_TypeError, "malformed strides in __cuda_array_interface__");
            return -1;
        }
        for (int i = 0; i < fa->ndim; i++) {
            fa->strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i));
            if (PyErr_Occurred()) return -1;
        }
    } else {
        int64_t s = isz;
        for (int i = fa->ndim - 1; i >= 0; i--) {
            fa->strides[i] = s;
            s *= fa->shape[i];
        }
    }
    fa->ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
    if (PyErr_Occurred()) return -1;
    fa->readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) == 1;
    fa->device = fa->ptr ? kiln_cuda_pointer_device(st->cuda, fa->ptr) : 0;
    if (fa->device < 0) fa->device = st->current_device;
    /* CAI v3: make the launch wait for the producer's stream */
    if (stream && stream != Py_None) {
        unsigned long long s = PyLong_AsUnsignedLongLong(stream);
        if (PyErr_Occurred()) return -1;
        void *h = s == 1 || s == 2 ? NULL : (void *)(uintptr_t)s;
        if (h != launch_stream) {
            int r;
            Py_BEGIN_ALLOW_THREADS
            r = kiln_cuda_stream_sync(st->cuda, h);
            Py_END_ALLOW_THREADS
            if (r != 0) {
                ext_cuda_error(st, r, "waiting for a GPU array's stream");
                return -1;
            }
        }
    }
    (void)o;
    return 1;
}


static int dlpack_array(ModState *st, PyObject *o, void *launch_stream, ForeignArray *fa) {
    /* ask for the tensor on the launch's stream (1 is CUDA's legacy default stream) */
    PyObject *kw = Py_BuildValue("{s:K}", "stream",
                                 launch_stream ? (unsigned long long)(uintptr_t)launch_stream : 1ULL);
    PyObject *meth = PyObject_GetAttr(o, st->str_dlpack);
    PyObject *noargs = PyTuple_New(0);
    PyObject *cap = meth && kw && noargs ? PyObject_Call(meth, noargs, kw) : NULL;
    Py_XDECREF(meth);
    Py_XDECREF(kw);
    Py_XDECREF(noargs);
    if (!cap) return -1;
    DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");
    if (!t) {
        Py_DECREF(cap);
        return -1;
    }
    DLTensor *dl = &t->dl_tensor;
    static const int ints[] = {-1, KILN_INT8, KILN_INT16, -1, KILN_INT32, -1, -1, -1, KILN_INT64};
    static const int uints[] = {-1, KILN_UINT8, KILN_UINT16, -1, KILN_UINT32, -1, -1, -1, KILN_UINT64};
    int bytes = dl->dtype.bits / 8;
    int dt = -1;
    if (dl->dtype.lanes == 1 && bytes >= 1 && bytes <= 8 && dl->dtype.bits % 8 == 0) {
        if (dl->dtype.code == 0) dt = ints[bytes];
        else if (dl->dtype.code == 1) dt = uints[bytes];
        else if (dl->dtype.code == 2) dt = bytes == 4 ? KILN_FLOAT32 : bytes == 8 ? KILN_FLOAT64 : -1;
        else if (dl->dtype.code == 6 && bytes == 1) dt = KILN_BOOL;
    }
    if (dl->device.device_type != 2 || dt < 0 || dl->ndim > KILN_MAX_NDIM) {
        Py_DECREF(cap); /* still named "dltensor": its destructor releases the tensor */
        PyErr_SetString(PyExc_TypeError,
                        "the DLPack tensor is not a CUDA array of a type kernels support");
        return -1;
    }
    fa->dtype = dt;
    fa->ndim = dl->ndim;
    fa->device = dl->device.device_id;
    fa->readonly = false;
    fa->ptr = (uint64_t)(uintptr_t)dl->data + dl->byte_offset;
    int64_t s = 1;
    for (int i = dl->ndim - 1; i >= 0; i--) {
        fa->shape[i] = dl->shape[i];
        fa->strides[i] = (dl->strides ? dl->strides[i] : s) * bytes;
        s *= dl->shape[i];
    }
    /* consumed: the tensor is ours and is released by ext_foreign_release */
    PyCapsule_SetName(cap, "used_dltensor");
    PyCapsule_SetContext(cap, t);
    fa->keep = cap;
    return 1;
}

void ext_foreign_release(ForeignArray *fa) {
    if (!fa->keep) return;
    DLManagedTensor *t = PyCapsule_GetContext(fa->keep);
    if (t && t->deleter) t->deleter(t);
    Py_CLEAR(fa->keep);
}

int ext_foreign_array(ModState *st, PyObject *o, void *launch_stream, ForeignArray *fa) {
    fa->keep = NULL;
    PyObject *cai = PyObject_GetAttr(o, st->str_cai);
    if (cai) {
        if (!ext_cuda(st)) {
            Py_DECREF(cai);
            return -1;
        }
        int rc = cai_array(st, o, cai, launch_stream, fa);
        Py_DECREF(cai);
        return rc;
    }
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
    PyObject *dev = PyObject_CallMethodNoArgs(o, st->str_dlpack_device);
    if (!dev) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    long type = PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2 ? PyLong_AsLong(PyTuple_GET_ITEM(dev, 0)) : 0;
    Py_DECREF(dev);
    if (PyErr_Occurred()) return -1;
    if (type != 2) return 0; /* not a CUDA array: let the caller try the host paths */
    if (!ext_cuda(st)) return -1;
    return dlpack_array(st, o, launch_stream, fa);
}

int ext_interop_init(PyObject *module, ModState *st) {
    st->str_cai = PyUnicode_InternFromString("__cuda_array_interface__");
    st->str_dlpack = PyUnicode_InternFromString("__dlpack__");
    st->str_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
    if (!st->str_cai || !st->str_dlpack || !st->str_dlpack_device) return -1;
    return 0;
}
