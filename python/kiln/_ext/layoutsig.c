/* layoutsig.c: what decides a kiln.fuse call's plan, as bytes (_fuse.py keeps a plan per
 * signature): layout_sig, the arrays' shapes and strides beside the argument types that
 * _fuse.py forms itself, and call_sig, the types too, so that a call like an earlier one
 * finds its plan with one C call and one dict look-up. */
#include "layoutsig.h"

#include <string.h>

#include "devarray.h"

/* Whether o is a NumPy array (numpy.ndarray or a subclass), known by its type's name:
 * the extension does not link NumPy. */
static bool is_numpy_array(PyObject *o) {
    for (PyTypeObject *t = Py_TYPE(o); t; t = t->tp_base)
        if (strcmp(t->tp_name, "numpy.ndarray") == 0) return true;
    return false;
}

/* layout_sig(values) -> bytes or None: each value's kind ('D' a DeviceArray, 'N' a NumPy
 * array, 'S' anything else) with an array's shape and byte strides: what decides a
 * kiln.fuse call's launch beyond its argument types (_fuse.py keeps a plan per
 * signature).  None when a NumPy array exports no buffer (the call then plans anew). */
static PyObject *f_layout_sig(PyObject *m, PyObject *values) {
    ModState *st = ext_state(m);
    PyObject *seq = PySequence_Fast(values, "layout_sig takes a sequence");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int64_t *w = PyMem_Malloc(((size_t)n * (1 + 2 * KILN_MAX_NDIM) + 1) * sizeof *w);
    if (!w) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    Py_ssize_t k = 0;
    PyObject *res = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
        if (PyObject_TypeCheck(o, st->DeviceArrayType)) {
            DeviceArrayObject *a = (DeviceArrayObject *)o;
            w[k++] = 'D' | (int64_t)a->ndim << 8;
            for (int d = 0; d < a->ndim; d++) w[k++] = a->shape[d];
            for (int d = 0; d < a->ndim; d++) w[k++] = a->strides[d];
        } else if (is_numpy_array(o)) {
            Py_buffer v;
            if (PyObject_GetBuffer(o, &v, PyBUF_STRIDES) < 0) {
                PyErr_Clear();
                res = Py_NewRef(Py_None);
                goto done;
            }
            bool fits = v.ndim <= KILN_MAX_NDIM;
            if (fits) {
                w[k++] = 'N' | (int64_t)v.ndim << 8;
                for (int d = 0; d < v.ndim; d++) w[k++] = v.shape[d];
                for (int d = 0; d < v.ndim; d++) w[k++] = v.strides[d];
            }
            PyBuffer_Release(&v);
            if (!fits) {
                res = Py_NewRef(Py_None);
                goto done;
            }
        } else {
            w[k++] = 'S';
        }
    }
    res = PyBytes_FromStringAndSize((const char *)w, k * (Py_ssize_t)sizeof *w);
done:
    PyMem_Free(w);
    Py_DECREF(seq);
    return res;
}

enum { SIG_MAX_FORMAT = 16 }; /* a NumPy dtype's buffer format longer than this: no sig */

/* call_sig(args) -> bytes or None: per argument, a kiln DeviceArray on a GPU ('D', ndim,
 * dtype, device, shape, byte strides), a numpy.ndarray (exactly that type: 'N', ndim, item
 * size, the buffer's format, shape, byte strides), or a Python float, bool or int that fits
 * int64 ('F', 'B', 'I'; exact types).  None for anything else: _fuse.py's own key, which
 * this one refines (it also tells the devices and formats apart), takes that call. */
static PyObject *f_call_sig(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    if (!PyTuple_Check(args)) {
        PyErr_SetString(PyExc_TypeError, "call_sig takes a tuple");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    int64_t stack[64], *w = stack;
    size_t cap = (size_t)n * (3 + SIG_MAX_FORMAT / 8 + 2 * KILN_MAX_NDIM);
    if (cap > sizeof stack / sizeof *stack && !(w = PyMem_Malloc(cap * sizeof *w)))
        return PyErr_NoMemory();
    Py_ssize_t k = 0;
    PyObject *res = Py_None;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(args, i);
        PyTypeObject *t = Py_TYPE(o);
        if (t == (PyTypeObject *)st->device_array_class) {
            DeviceArrayObject *a = (DeviceArrayObject *)o;
            if (a->device == EXT_HOST_DEVICE) goto done; /* _fuse.py takes it as NumPy's */
            w[k++] = 'D' | (int64_t)a->ndim << 8 | (int64_t)a->dtype << 16 |
                     (int64_t)a->device << 32;
            for (int d = 0; d < a->ndim; d++) w[k++] = a->shape[d];
            for (int d = 0; d < a->ndim; d++) w[k++] = a->strides[d];
        } else if (t == &PyFloat_Type) {
            w[k++] = 'F';
        } else if (t == &PyBool_Type) {
            w[k++] = 'B';
        } else if (t == &PyLong_Type) {
            int overflow;
            PyLong_AsLongLongAndOverflow(o, &overflow);
            if (overflow) goto done; /* _fuse.py says it is too large */
            w[k++] = 'I';
        } else if (strcmp(t->tp_name, "numpy.ndarray") == 0) {
            Py_buffer v;
            if (PyObject_GetBuffer(o, &v, PyBUF_RECORDS_RO) < 0) {
                PyErr_Clear();
                goto done;
            }
            size_t flen = v.format ? strlen(v.format) : 0;
            bool fits = v.ndim <= KILN_MAX_NDIM && flen <= SIG_MAX_FORMAT;
            if (fits) {
                w[k++] = 'N' | (int64_t)v.ndim << 8 | (int64_t)v.itemsize << 16;
                char f[SIG_MAX_FORMAT] = {0};
                memcpy(f, v.format ? v.format : "", flen);
                memcpy(&w[k], f, sizeof f);
                k += SIG_MAX_FORMAT / 8;
                for (int d = 0; d < v.ndim; d++) w[k++] = v.shape[d];
                for (int d = 0; d < v.ndim; d++) w[k++] = v.strides[d];
            }
            PyBuffer_Release(&v);
            if (!fits) goto done;
        } else {
            goto done;
        }
    }
    res = PyBytes_FromStringAndSize((const char *)w, k * (Py_ssize_t)sizeof *w);
    if (w != stack) PyMem_Free(w);
    return res;
done:
    if (w != stack) PyMem_Free(w);
    Py_RETURN_NONE;
}

PyMethodDef ext_layoutsig_functions[] = {
    {"layout_sig", f_layout_sig, METH_O, "layout_sig(values) -> bytes of kinds, shapes, strides"},
    {"call_sig", f_call_sig, METH_O,
     "call_sig(args) -> bytes of the arguments' types and layouts, or None"},
    {NULL, NULL, 0, NULL}};
