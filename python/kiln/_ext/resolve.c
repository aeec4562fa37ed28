/* resolve.c: see resolve.h.  The description kinds are _compile.describe's: missing,
 * int, float, complex, bool, scalar, tuple, ns, module, dtype, function, array (a frozen
 * copy of a global NumPy array), devarray (a global device array, by address), extern (an
 * external CUDA device function, kiln.declare_device), other. */
#include "resolve.h"
#include "records.h"

#include <string.h>

static const char *keep_str(Resolve *R, PyObject *o) {
    if (!PyUnicode_Check(o)) return NULL;
    if (PyList_Append(R->keep, o) < 0) return NULL;
    return PyUnicode_AsUTF8(o);
}

static void free_capsule(PyObject *cap) { PyMem_Free(PyCapsule_GetPointer(cap, "kiln.values")); }

static int describe(Resolve *R, PyObject *d, kiln_value *out);

/* An array description's dtype and shape into out (kind ARRAY, ndim, shape kept in a
 * capsule until the translation ends); *count: its elements. */
/* A dtype code past the scalars names a registered record (records.c): its layout. */
static int set_record(kiln_value *out) {
    if ((int)out->dtype < KILN_RECORD0) return 0;
    int n;
    const kiln_record *recs = ext_records(&n);
    int k = (int)out->dtype - KILN_RECORD0;
    if (k >= n) {
        PyErr_Format(PyExc_ValueError, "no record dtype has id %d", k);
        return -1;
    }
    out->record = &recs[k];
    return 0;
}

static int array_head(Resolve *R, PyObject *dtype, PyObject *shape, kiln_value *out,
                      unsigned long long *count) {
    out->kind = KILN_VAL_ARRAY;
    out->dtype = (kiln_dtype)PyLong_AsLong(dtype);
    if (PyErr_Occurred()) return -1;
    if (set_record(out) < 0) return -1;
    if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) > KILN_MAX_NDIM || /* () : 0-d */
        ((unsigned)out->dtype >= KILN_NDTYPES && !out->record)) {
        PyErr_SetString(PyExc_TypeError, "array description needs (dtype, shape, ...)");
        return -1;
    }
    out->ndim = (int)PyTuple_GET_SIZE(shape);
    int64_t *dims = PyMem_Calloc(KILN_MAX_NDIM, sizeof(int64_t));
    if (!dims) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *cap = PyCapsule_New(dims, "kiln.values", free_capsule);
    if (!cap) {
        PyMem_Free(dims);
        return -1;
    }
    int rc = PyList_Append(R->mem, cap);
    Py_DECREF(cap);
    if (rc < 0) return -1;
    *count = 1;
    for (int i = 0; i < out->ndim; i++) {
        long long ext = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
        if (PyErr_Occurred()) return -1;
        if (ext < 0 ||
            (ext && *count > (unsigned long long)PY_SSIZE_T_MAX / (unsigned long long)ext)) {
            PyErr_SetString(PyExc_ValueError, "array description has a bad shape");
            return -1;
        }
        dims[i] = ext;
        *count *= (unsigned long long)ext;
    }
    out->shape = dims;
    return 0;
}

/* A description's tuple of CUDA C source texts (an external function's, or a device
 * function's link=) into out->links, kept alive by R.  0, or -1 with an exception. */
static int link_sources(Resolve *R, PyObject *srcs, kiln_value *out) {
    if (!PyTuple_Check(srcs)) {
        PyErr_SetString(PyExc_TypeError, "a description needs a tuple of sources");
        return -1;
    }
    Py_ssize_t m = PyTuple_GET_SIZE(srcs);
    /* one block: the text pointers, then their lengths */
    void *mem = PyMem_Calloc((size_t)m + 1, sizeof(const char *) + sizeof(size_t));
    if (!mem) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *cap = PyCapsule_New(mem, "kiln.values", free_capsule);
    if (!cap) {
        PyMem_Free(mem);
        return -1;
    }
    int rc = PyList_Append(R->mem, cap);
    Py_DECREF(cap);
    if (rc < 0) return -1;
    const char **texts = mem;
    size_t *lens = (size_t *)(texts + m + 1);
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *t = PyTuple_GET_ITEM(srcs, i);
        Py_ssize_t tl;
        if (!PyUnicode_Check(t)) {
            PyErr_SetString(PyExc_TypeError, "sources must be str");
            return -1;
        }
        if (PyList_Append(R->keep, t) < 0) return -1;
        texts[i] = PyUnicode_AsUTF8AndSize(t, &tl);
        if (!texts[i]) return -1;
        lens[i] = (size_t)tl;
    }
    out->links = texts;
    out->link_lens = lens;
    out->nlinks = (int)m;
    return 0;
}

static int describe(Resolve *R, PyObject *d, kiln_value *out) {
    memset(out, 0, sizeof *out);
    if (!PyTuple_Check(d) || PyTuple_GET_SIZE(d) < 1 || !PyUnicode_Check(PyTuple_GET_ITEM(d, 0))) {
        PyErr_SetString(PyExc_TypeError, "resolver must return a tuple starting with a kind");
        return -1;
    }
    const char *kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(d, 0));
    Py_ssize_t n = PyTuple_GET_SIZE(d);
#define ITEM(i) (i < n ? PyTuple_GET_ITEM(d, i) : Py_None)
    if (strcmp(kind, "missing") == 0) {
        out->kind = KILN_VAL_MISSING;
    } else if (strcmp(kind, "int") == 0) {
        out->kind = KILN_VAL_INT;
        out->v.i = PyLong_AsLongLong(ITEM(1));
        if (PyErr_Occurred()) return -1;
    } else if (strcmp(kind, "float") == 0) {
        out->kind = KILN_VAL_FLOAT;
        out->v.f = PyFloat_AsDouble(ITEM(1));
        if (PyErr_Occurred()) return -1;
    } else if (strcmp(kind, "complex") == 0) {
        out->kind = KILN_VAL_COMPLEX;
        out->v.f = PyFloat_AsDouble(ITEM(1));
        out->im = PyFloat_AsDouble(ITEM(2));
        if (PyErr_Occurred()) return -1;
    } else if (strcmp(kind, "bool") == 0) {
        out->kind = KILN_VAL_BOOL;
        out->v.i = PyObject_IsTrue(ITEM(1));
    } else if (strcmp(kind, "scalar") == 0) {
        out->kind = KILN_VAL_SCALAR;
        out->dtype = (kiln_dtype)PyLong_AsLong(ITEM(1));
        if (PyErr_Occurred()) return -1;
        PyObject *v = ITEM(2);
        if (out->dtype == KILN_COMPLEX64 || out->dtype == KILN_COMPLEX128) {
            out->v.f = PyComplex_RealAsDouble(v);
            out->im = PyComplex_ImagAsDouble(v);
        } else if (out->dtype == KILN_FLOAT16 || out->dtype == KILN_FLOAT32 ||
                   out->dtype == KILN_FLOAT64)
            out->v.f = PyFloat_AsDouble(v);
        else if (out->dtype >= KILN_UINT8 && out->dtype <= KILN_UINT64) out->v.u = PyLong_AsUnsignedLongLong(v);
        else out->v.i = PyLong_AsLongLong(v);
        if (PyErr_Occurred()) return -1;
    } else if (strcmp(kind, "tuple") == 0) {
        PyObject *items = ITEM(1);
        if (!PyTuple_Check(items)) {
            PyErr_SetString(PyExc_TypeError, "tuple description needs a tuple");
            return -1;
        }
        Py_ssize_t m = PyTuple_GET_SIZE(items);
        kiln_value *vals = PyMem_Calloc((size_t)m + 1, sizeof(kiln_value));
        if (!vals) {
            PyErr_NoMemory();
            return -1;
        }
        PyObject *cap = PyCapsule_New(vals, "kiln.values", free_capsule);
        if (!cap) {
            PyMem_Free(vals);
            return -1;
        }
        int rc = PyList_Append(R->mem, cap);
        Py_DECREF(cap);
        if (rc < 0) return -1;
        for (Py_ssize_t i = 0; i < m; i++)
            if (describe(R, PyTuple_GET_ITEM(items, i), &vals[i]) < 0) return -1;
        out->kind = KILN_VAL_TUPLE;
        out->tuple = vals;
        out->ntuple = (int)m;
    } else if (strcmp(kind, "ns") == 0) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = keep_str(R, ITEM(1));
        if (!out->name) return -1;
    } else if (strcmp(kind, "module") == 0) {
        out->kind = KILN_VAL_MODULE;
        /* "enum": an enum class, whose members are also read as Color["red"] */
        if (n > 1 && !(out->name = keep_str(R, ITEM(1)))) return -1;
    } else if (strcmp(kind, "dtype") == 0) {
        out->kind = KILN_VAL_DTYPE;
        out->dtype = (kiln_dtype)PyLong_AsLong(ITEM(1));
        if (PyErr_Occurred() || set_record(out) < 0) return -1;
    } else if (strcmp(kind, "function") == 0) {
        /* ("function", scope, text, filename, first_line, is_device, signature|None,
         *  link sources) */
        out->kind = KILN_VAL_FUNCTION;
        PyObject *scope = ITEM(1);
        if (PyList_Append(R->keep, scope) < 0) return -1;
        out->scope = scope;
        Py_ssize_t tl;
        PyObject *text = ITEM(2);
        if (!PyUnicode_Check(text)) {
            PyErr_SetString(PyExc_TypeError, "function source must be str");
            return -1;
        }
        if (PyList_Append(R->keep, text) < 0) return -1;
        out->text = PyUnicode_AsUTF8AndSize(text, &tl);
        if (!out->text) return -1;
        out->text_len = (size_t)tl;
        out->filename = keep_str(R, ITEM(3));
        if (!out->filename) return -1;
        out->first_line = (int)PyLong_AsLong(ITEM(4));
        if (PyErr_Occurred()) return -1;
        out->is_device = PyObject_IsTrue(ITEM(5));
        out->signature = ITEM(6) == Py_None ? NULL : keep_str(R, ITEM(6));
        /* a device function's own link= sources (CUDA C, or compiled code's markers) */
        if (n > 7 && link_sources(R, ITEM(7), out) < 0) return -1;
    } else if (strcmp(kind, "extern") == 0) {
        /* ("extern", symbol, signature, abi, (source text, ...), cooperative) */
        out->kind = KILN_VAL_EXTERN;
        out->name = keep_str(R, ITEM(1));
        out->signature = keep_str(R, ITEM(2));
        if (!out->name || !out->signature) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "extern description needs str name and signature");
            return -1;
        }
        out->abi = (int)PyLong_AsLong(ITEM(3));
        if (PyErr_Occurred()) return -1;
        if (link_sources(R, ITEM(4), out) < 0) return -1;
        out->cooperative = PyObject_IsTrue(ITEM(5));
        if (out->cooperative < 0) return -1;
    } else if (strcmp(kind, "devarray") == 0) {
        /* ("devarray", dtype, shape, address, device): a global device array, by address */
        unsigned long long count;
        if (array_head(R, ITEM(1), ITEM(2), out, &count) < 0) return -1;
        out->data = NULL;
        out->address = PyLong_AsUnsignedLongLong(ITEM(3));
        if (PyErr_Occurred()) return -1;
        out->device = (int)PyLong_AsLong(ITEM(4));
        if (PyErr_Occurred()) return -1;
    } else if (strcmp(kind, "array") == 0) {
        /* ("array", dtype, shape, bytes): a frozen C-order copy of a global array */
        unsigned long long count;
        PyObject *data = ITEM(3);
        if (array_head(R, ITEM(1), ITEM(2), out, &count) < 0) return -1;
        /* the bytes must hold exactly the elements the shape says */
        size_t esize = out->record ? (size_t)out->record->itemsize : (size_t)kiln_dtype_size(out->dtype);
        if (!PyBytes_Check(data) || (esize && count > (unsigned long long)PY_SSIZE_T_MAX / esize) ||
            (Py_ssize_t)(count * esize) != PyBytes_GET_SIZE(data)) {
            PyErr_SetString(PyExc_ValueError, "array description: bytes do not match the shape");
            return -1;
        }
        if (PyList_Append(R->keep, data) < 0) return -1;
        out->data = PyBytes_AS_STRING(data);
    } else if (strcmp(kind, "str") == 0) {
        Py_ssize_t len;
        out->kind = KILN_VAL_STR;
        if (!PyUnicode_Check(ITEM(1)) || PyList_Append(R->keep, ITEM(1)) < 0 ||
            !(out->name = PyUnicode_AsUTF8AndSize(ITEM(1), &len)))
            return PyErr_Occurred() ? -1 : (PyErr_SetString(PyExc_TypeError, "str expected"), -1);
        out->v.i = len;
    } else if (strcmp(kind, "other") == 0) {
        out->kind = KILN_VAL_OTHER;
        out->name = keep_str(R, ITEM(1));
        if (!out->name) return -1;
        if (n > 2 && !(out->exception = keep_str(R, ITEM(2)))) return -1; /* a class to raise */
    } else {
        PyErr_Format(PyExc_ValueError, "resolver returned an unknown kind '%s'", kind);
        return -1;
    }
#undef ITEM
    return 0;
}

int ext_resolve(void *ud, void *scope, const char *dotted, kiln_value *out) {
    Resolve *R = ud;
    PyObject *res = PyObject_CallFunction(R->resolver, "Os", (PyObject *)scope, dotted);
    if (!res) return -1;
    int rc = PyList_Append(R->keep, res);
    if (rc == 0) rc = describe(R, res, out);
    Py_DECREF(res);
    return rc;
}

