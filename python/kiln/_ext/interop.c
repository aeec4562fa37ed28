/* interop.c: GPU arrays of other libraries, taken without copies.
 *
 * Through __cuda_array_interface__ (CuPy, PyTorch, Numba; its stream field is
 * honoured by synchronising that stream when it is not the launch's) or
 * DLPack (JAX and any producer of __dlpack__).  A DLPack tensor is consumed:
 * the ForeignArray holds it until ext_foreign_release, after the launch.
 */
#include "interop.h"
#include "stream.h"

#include <stdio.h>
#include <string.h>

/* The kiln dtype of a __cuda_array_interface__ typestr: a byte order ('<', '>',
 * '|' or '='), a kind letter and the item size in decimal, and nothing else
 * ("<f4", "|b1").  0, or -1 for a well-formed type kernels do not take, -2 for
 * a big-endian one, -3 for text that is not a typestr, -4 for two raw bytes (bfloat16?),
 * -5 for a datetime64 or timedelta64 with its unit ("<M8[s]"). */
static int typestr_dtype(const char *ts, Py_ssize_t len, int *dtype) {
    if (len >= 6 && len <= 12 && strchr("<>|=", ts[0]) && (ts[1] == 'M' || ts[1] == 'm') &&
        ts[2] == '8' && ts[3] == '[' && ts[len - 1] == ']') {
        *dtype = -1; /* datetime64[unit]: through kiln.as_cuda_array (a registered dtype) */
        return -5;
    }
    if (len < 3 || len > 4 || !strchr("<>|=", ts[0])) return -3;
    int size = 0;
    for (Py_ssize_t k = 2; k < len; k++) {
        if (ts[k] < '0' || ts[k] > '9') return -3;
        size = size * 10 + (ts[k] - '0');
    }
    if (ts[0] == '>' && size > 1) return -2;
    switch (ts[1]) {
    case 'b': *dtype = size == 1 ? KILN_BOOL : -1; break;
    case 'i':
        *dtype = size == 1 ? KILN_INT8 : size == 2 ? KILN_INT16 : size == 4 ? KILN_INT32 : size == 8 ? KILN_INT64 : -1;
        break;
    case 'u':
        *dtype = size == 1 ? KILN_UINT8 : size == 2 ? KILN_UINT16 : size == 4 ? KILN_UINT32 : size == 8 ? KILN_UINT64 : -1;
        break;
    case 'f': *dtype = size == 2 ? KILN_FLOAT16 : size == 4 ? KILN_FLOAT32 : size == 8 ? KILN_FLOAT64 : -1; break;
    case 'c': *dtype = size == 8 ? KILN_COMPLEX64 : size == 16 ? KILN_COMPLEX128 : -1; break;
    case 'V': /* raw bytes: "<V2" is how a bfloat16 array (ml_dtypes) describes itself */
        *dtype = -1;
        return size == 2 ? -4 : -1;
    case 'm': case 'M': case 'O': case 'S': case 'U': *dtype = -1; break;
    default: return -3;
    }
    return *dtype < 0 ? -1 : 0;
}

/* Checks a foreign array's geometry: no negative extent, and the bytes its
 * elements span (and the element count) fit in 64 bits, so nothing computed
 * from them later overflows.  Negative strides are fine: a view may run
 * backwards through its buffer. */
static int check_geometry(const ForeignArray *fa, int isz, const char *what) {
    int64_t count = 1, span = isz;
    for (int i = 0; i < fa->ndim; i++) {
        int64_t n = fa->shape[i], st = fa->strides[i], ext;
        if (n < 0) {
            PyErr_Format(PyExc_ValueError, "%s shape[%d] is %lld; a dimension cannot be negative",
                         what, i, (long long)n);
            return -1;
        }
        if (__builtin_mul_overflow(count, n, &count) || st == INT64_MIN ||
            __builtin_mul_overflow(n > 0 ? n - 1 : 0, st < 0 ? -st : st, &ext) ||
            __builtin_add_overflow(span, ext, &span)) {
            PyErr_Format(PyExc_ValueError, "%s shape and strides span more than 64 bits of bytes",
                         what);
            return -1;
        }
    }
    return 0;
}

/* An index (an int, or an object with __index__, which may run any Python
 * code) as a 64-bit value; -1 with an exception naming it. */
static int cai_int(PyObject *v, const char *field, int i, int64_t *out) {
    if (PyFloat_Check(v) || !PyIndex_Check(v)) {
        if (i >= 0)
            PyErr_Format(PyExc_TypeError, "__cuda_array_interface__['%s'][%d] must be an int, not %.100s",
                         field, i, Py_TYPE(v)->tp_name);
        else
            PyErr_Format(PyExc_TypeError, "__cuda_array_interface__['%s'] must be an int, not %.100s",
                         field, Py_TYPE(v)->tp_name);
        return -1;
    }
    PyObject *ix = PyNumber_Index(v);
    if (!ix) return -1;
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(ix, &overflow);
    Py_DECREF(ix);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (overflow) {
        PyErr_Format(PyExc_ValueError, "__cuda_array_interface__['%s'] holds an int too large for 64 bits",
                     field);
        return -1;
    }
    *out = x;
    return 0;
}

/* A tuple of ints of length n (the CAI's shape or strides) into out. */
static int cai_ints(PyObject *t, const char *field, int n, int64_t *out) {
    if (!PyTuple_Check(t) || (n >= 0 && PyTuple_GET_SIZE(t) != n)) {
        if (!PyTuple_Check(t))
            PyErr_Format(PyExc_TypeError, "__cuda_array_interface__['%s'] must be a tuple, not %.100s",
                         field, Py_TYPE(t)->tp_name);
        else
            PyErr_Format(PyExc_ValueError,
                         "__cuda_array_interface__['%s'] has %zd entries, but the shape has %d",
                         field, PyTuple_GET_SIZE(t), n);
        return -1;
    }
    /* t is held by the caller, and a tuple's items cannot change: each stays
     * alive while its __index__ runs, whatever that does to the dict */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++)
        if (cai_int(PyTuple_GET_ITEM(t, i), field, (int)i, &out[i]) < 0) return -1;
    return 0;
}

/* The dict's entry for key as a new reference (NULL, without an exception,
 * when it has none). */
static int cai_get(PyObject *cai, PyObject *key, PyObject **out) {
    PyObject *v = PyDict_GetItemWithError(cai, key);
    if (!v && PyErr_Occurred()) return -1;
    Py_XINCREF(v);
    *out = v;
    return 0;
}

/* Reads a __cuda_array_interface__ dict.  Everything read from it is held (a
 * strong reference) until the reading is over: reading an entry can run
 * Python code (__index__, __bool__) that changes or empties the dict. */
static int cai_array(ModState *st, PyObject *cai, void *launch_stream, ForeignArray *fa) {
    if (!PyDict_Check(cai)) {
        PyErr_Format(PyExc_TypeError, "__cuda_array_interface__ is a %.100s, not a dict",
                     Py_TYPE(cai)->tp_name);
        return -1;
    }
    PyObject *shape = NULL, *typestr = NULL, *data = NULL, *strides = NULL, *stream = NULL,
             *mask = NULL;
    int rc = -1;
    if (cai_get(cai, st->str_cai_shape, &shape) < 0 ||
        cai_get(cai, st->str_cai_typestr, &typestr) < 0 ||
        cai_get(cai, st->str_cai_data, &data) < 0 ||
        cai_get(cai, st->str_cai_strides, &strides) < 0 ||
        cai_get(cai, st->str_cai_stream, &stream) < 0 || cai_get(cai, st->str_cai_mask, &mask) < 0)
        goto done;
    if (!shape || !typestr || !data) {
        PyErr_Format(PyExc_TypeError, "__cuda_array_interface__ has no '%s'",
                     !shape ? "shape" : !typestr ? "typestr" : "data");
        goto done;
    }
    if (mask && mask != Py_None) {
        PyErr_SetString(PyExc_TypeError, "masked GPU arrays (a __cuda_array_interface__ 'mask') "
                                         "are not supported by kernels");
        goto done;
    }
    Py_ssize_t tlen;
    const char *ts = PyUnicode_Check(typestr) ? PyUnicode_AsUTF8AndSize(typestr, &tlen) : NULL;
    if (!ts) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "__cuda_array_interface__['typestr'] must be a str, not %.100s",
                         Py_TYPE(typestr)->tp_name);
        goto done;
    }
    int trc = typestr_dtype(ts, tlen, &fa->dtype);
    if (trc == -3) {
        PyErr_Format(PyExc_ValueError,
                     "__cuda_array_interface__['typestr'] is %R, which is not a type string "
                     "(a byte order, a kind and a size, like '<f4')",
                     typestr);
        goto done;
    }
    if (trc == -4) { /* two raw bytes: the caller asks DLPack, which names bfloat16 */
        rc = 2;
        goto done;
    }
    if (trc < 0) {
        PyErr_Format(PyExc_TypeError, "GPU arrays of type '%U'%s are not supported by kernels%s",
                     typestr, trc == -2 ? " (big-endian)" : "",
                     trc == -5 ? " as they come; pass kiln.as_cuda_array(a), which kernels take "
                                 "as int64 counts of its unit" : "");
        goto done;
    }
    if (!PyTuple_Check(shape)) {
        PyErr_Format(PyExc_TypeError, "__cuda_array_interface__['shape'] must be a tuple, not %.100s",
                     Py_TYPE(shape)->tp_name);
        goto done;
    }
    if (PyTuple_GET_SIZE(shape) > KILN_MAX_NDIM) {
        PyErr_Format(PyExc_TypeError, "the GPU array has %zd dimensions; kernels take at most %d",
                     PyTuple_GET_SIZE(shape), KILN_MAX_NDIM);
        goto done;
    }
    fa->ndim = (int)PyTuple_GET_SIZE(shape);
    int isz = ext_dtype_size(fa->dtype);
    if (cai_ints(shape, "shape", fa->ndim, fa->shape) < 0) goto done;
    if (strides && strides != Py_None) {
        if (cai_ints(strides, "strides", fa->ndim, fa->strides) < 0) goto done;
    } else {
        int64_t s = isz;
        for (int i = fa->ndim - 1; i >= 0; i--) {
            fa->strides[i] = s;
            if (__builtin_mul_overflow(s, fa->shape[i] > 0 ? fa->shape[i] : 1, &s)) s = 0;
        }
    }
    if (check_geometry(fa, isz, "the GPU array's") < 0) goto done;
    if (!PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "__cuda_array_interface__['data'] must be a tuple (pointer, read_only), not %R",
                     data);
        goto done;
    }
    PyObject *p = PyTuple_GET_ITEM(data, 0); /* data is held: p lives while __index__ runs */
    PyObject *pi = !PyFloat_Check(p) && PyIndex_Check(p) ? PyNumber_Index(p) : NULL;
    fa->ptr = pi ? PyLong_AsUnsignedLongLong(pi) : 0;
    Py_XDECREF(pi);
    if (!pi || PyErr_Occurred()) {
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_OverflowError)) goto done;
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError,
                     "__cuda_array_interface__['data'][0] must be a device address (an int from 0 "
                     "to 2**64-1), not %R",
                     p);
        goto done;
    }
    int64_t count = 1;
    for (int i = 0; i < fa->ndim; i++) count *= fa->shape[i]; /* check_geometry: no overflow */
    if (count > 0 && fa->ptr == 0) {
        PyErr_Format(PyExc_ValueError,
                     "__cuda_array_interface__['data'][0] is 0 (a null pointer), but the array "
                     "has %lld elements",
                     (long long)count);
        goto done;
    }
    int align = ext_dtype_align(fa->dtype);
    if (count > 0 && align > 1 && fa->ptr % (uint64_t)align != 0) {
        char hex[24]; /* PyErr_Format has no %llx */
        snprintf(hex, sizeof hex, "%#llx", (unsigned long long)fa->ptr);
        PyErr_Format(PyExc_ValueError,
                     "the GPU array's data pointer %s is not aligned to %d bytes, which its "
                     "elements need; pass an aligned copy",
                     hex, align);
        goto done;
    }
    int ro = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
    if (ro < 0) goto done;
    fa->readonly = ro == 1;
    fa->device = fa->ptr ? kiln_cuda_pointer_device(st->cuda, fa->ptr) : 0;
    if (fa->device < 0) fa->device = st->current_device;
    /* CAI v3: make the launch wait for the producer's stream */
    if (stream && stream != Py_None) {
        int64_t s;
        if (cai_int(stream, "stream", -1, &s) < 0) goto done;
        if (s == 0) {
            PyErr_SetString(PyExc_ValueError,
                            "__cuda_array_interface__['stream'] is 0, which the interface does "
                            "not allow (1 is the legacy default stream, 2 the per-thread one)");
            goto done;
        }
        void *h = s == 1 || s == 2 ? NULL : (void *)(uintptr_t)s;
        if (h != launch_stream) {
            int r;
            Py_BEGIN_ALLOW_THREADS
            r = kiln_cuda_stream_sync(st->cuda, h);
            Py_END_ALLOW_THREADS
            if (r != 0) {
                ext_cuda_error(st, r, "waiting for a GPU array's stream");
                goto done;
            }
        }
    }
    rc = 1;
done:
    Py_XDECREF(shape);
    Py_XDECREF(typestr);
    Py_XDECREF(data);
    Py_XDECREF(strides);
    Py_XDECREF(stream);
    Py_XDECREF(mask);
    return rc;
}

/* The kiln dtype of a DLPack type, -1 if kernels do not take it. */
static int dlpack_dtype(DLDataType t) {
    static const int ints[] = {-1, KILN_INT8, KILN_INT16, -1, KILN_INT32, -1, -1, -1, KILN_INT64};
    static const int uints[] = {-1, KILN_UINT8, KILN_UINT16, -1, KILN_UINT32, -1, -1, -1, KILN_UINT64};
    int bytes = t.bits / 8;
    if (t.lanes != 1 || t.bits % 8 != 0) return -1;
    if (t.code == 5) return bytes == 8 ? KILN_COMPLEX64 : bytes == 16 ? KILN_COMPLEX128 : -1;
    if (bytes < 1 || bytes > 8) return -1;
    switch (t.code) {
    case 0: return ints[bytes];
    case 1: return uints[bytes];
    case 2: return bytes == 2 ? KILN_FLOAT16 : bytes == 4 ? KILN_FLOAT32 : bytes == 8 ? KILN_FLOAT64 : -1;
    case 4: return bytes == 2 ? KILN_BFLOAT16 : -1; /* kDLBfloat */
    case 6: return bytes == 1 ? KILN_BOOL : -1;
    default: return -1;
    }
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
    int dt = dlpack_dtype(dl->dtype);
    /* the capsule is still named "dltensor" on these errors: its destructor
     * releases the tensor */
    if (dl->device.device_type != DLPACK_CUDA) {
        PyErr_Format(PyExc_TypeError, "the DLPack tensor is on device type %d, not a CUDA GPU (%d)",
                     (int)dl->device.device_type, DLPACK_CUDA);
        goto fail;
    }
    if (dt < 0) {
        PyErr_Format(PyExc_TypeError,
                     "the DLPack tensor's type (code %d, %d bits, %d lanes) is not one kernels take "
                     "(bool, int8..int64, uint8..uint64, float32, float64)",
                     (int)dl->dtype.code, (int)dl->dtype.bits, (int)dl->dtype.lanes);
        goto fail;
    }
    if (dl->ndim < 0 || dl->ndim > KILN_MAX_NDIM) {
        PyErr_Format(PyExc_TypeError, "the DLPack tensor has %d dimensions; kernels take 0 to %d",
                     (int)dl->ndim, KILN_MAX_NDIM);
        goto fail;
    }
    if (dl->ndim > 0 && !dl->shape) {
        PyErr_SetString(PyExc_ValueError, "the DLPack tensor has dimensions but no shape");
        goto fail;
    }
    int bytes = dl->dtype.bits / 8;
    fa->dtype = dt;
    fa->ndim = dl->ndim;
    fa->device = dl->device.device_id;
    fa->readonly = false;
    fa->ptr = (uint64_t)(uintptr_t)dl->data + dl->byte_offset;
    int64_t s = 1;
    for (int i = dl->ndim - 1; i >= 0; i--) {
        fa->shape[i] = dl->shape[i];
        int64_t e = dl->strides ? dl->strides[i] : s;
        if (__builtin_mul_overflow(e, bytes, &fa->strides[i])) {
            PyErr_SetString(PyExc_ValueError, "the DLPack tensor's strides are too large for 64 bits");
            goto fail;
        }
        if (__builtin_mul_overflow(s, dl->shape[i] > 0 ? dl->shape[i] : 1, &s)) s = 0;
    }
    if (check_geometry(fa, bytes, "the DLPack tensor's") < 0) goto fail;
    /* consumed: the tensor is ours and is released by ext_foreign_release */
    PyCapsule_SetName(cap, "used_dltensor");
    PyCapsule_SetContext(cap, t);
    fa->keep = cap;
    return 1;
fail:
    Py_DECREF(cap);
    return -1;
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
        int rc = cai_array(st, cai, launch_stream, fa);
        Py_DECREF(cai);
        if (rc != 2) return rc;
        /* typestr "<V2" (CuPy's bfloat16): the same array through DLPack, whose type
         * codes have bfloat16 (CAI's typestr has not) */
        if (PyObject_HasAttr(o, st->str_dlpack)) return dlpack_array(st, o, launch_stream, fa);
        PyErr_SetString(PyExc_TypeError,
                        "GPU arrays of type '<V2' are not supported by kernels (a bfloat16 "
                        "array is read through DLPack, and this one has no __dlpack__)");
        return -1;
    }
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
        /* an interface that cannot describe the array (PyTorch's bfloat16 tensors raise
         * there): DLPack, when the object has it, can */
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        if (!PyObject_HasAttr(o, st->str_dlpack)) {
            PyErr_Restore(t, v, tb);
            return -1;
        }
        Py_XDECREF(t);
        Py_XDECREF(v);
        Py_XDECREF(tb);
    }
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

/* foreign_view(obj, stream) -> a DeviceArray over obj's memory (obj kept as its owner),
 * with the interface's stream rule applied for work queued on `stream` (the producer's
 * stream is synchronized only when it is another one); None when obj is not a GPU
 * array through __cuda_array_interface__ (DLPack producers take the Python path).
 * kiln.reduce takes CuPy and torch arrays here: the Python route (as_cuda_array) cost
 * about 8 us a call, more than a 2^20-element sum. */
static PyObject *f_foreign_view(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    PyObject *o, *stream;
    if (!PyArg_ParseTuple(args, "OO", &o, &stream)) return NULL;
    void *h;
    if (ext_stream_handle(st, stream, &h) < 0) return NULL;
    ForeignArray fa;
    int rc = ext_foreign_array(st, o, h, &fa);
    if (rc < 0) return NULL;
    if (rc == 0 || fa.keep) {
        ext_foreign_release(&fa);
        Py_RETURN_NONE;
    }
    return (PyObject *)ext_devarray_new(st, fa.ptr, fa.ndim, fa.shape, fa.strides, fa.dtype,
                                        fa.device, o);
}

PyMethodDef ext_interop_functions[] = {
    {"foreign_view", f_foreign_view, METH_VARARGS,
     "foreign_view(obj, stream) -> DeviceArray over a __cuda_array_interface__ array, or None"},
    {NULL, NULL, 0, NULL},
};

int ext_interop_init(PyObject *module, ModState *st) {
    st->str_cai = PyUnicode_InternFromString("__cuda_array_interface__");
    st->str_dlpack = PyUnicode_InternFromString("__dlpack__");
    st->str_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
    st->str_cai_shape = PyUnicode_InternFromString("shape");
    st->str_cai_typestr = PyUnicode_InternFromString("typestr");
    st->str_cai_data = PyUnicode_InternFromString("data");
    st->str_cai_strides = PyUnicode_InternFromString("strides");
    st->str_cai_stream = PyUnicode_InternFromString("stream");
    st->str_cai_mask = PyUnicode_InternFromString("mask");
    if (!st->str_cai || !st->str_dlpack || !st->str_dlpack_device || !st->str_cai_shape ||
        !st->str_cai_typestr || !st->str_cai_data || !st->str_cai_strides ||
        !st->str_cai_stream || !st->str_cai_mask)
        return -1;
    return 0;
}
