/* ufunc.c: kiln.vectorize's repeated call, in C.
 *
 * The first call of a ufunc goes through Python (_ufunc.py's _call): it chooses the
 * signature, builds the flat kernel, and when every argument is an array of one shape in
 * C order, all kiln.DeviceArrays or all numpy.ndarrays, it memoises the launch under
 * the arguments' type key and one byte of the kind ('D' or 'N'): key -> (flat kernel,
 * result dtype, its code, a list of the threads max-autotune chose by size bucket, None
 * where it has not searched, and what makes a NumPy result: numpy.empty).  Later calls
 * with the same key come here from the ufunc's __call__: classify the arguments, form
 * the key, find the memo, allocate the result and launch through the kernel's Launcher
 * (launch.c), with no Python frame on the way.  Anything else (a scalar, a foreign,
 * strided or subclassed array, a stream, shapes that differ, an out= that shares bytes
 * with an input other than element for element, a key not memoised, a size bucket
 * max-autotune has not searched) returns None and the Python path takes the call; it
 * is the reference for what this one does.
 *
 * A DeviceArray result goes to the arrays' device, which must be the current one (or
 * host memory under KILN_TARGET=cpu, where every device array is host-backed).
 */
#include "ufunc.h"

#include <stddef.h>
#include <string.h>
#include <structmember.h>

#include "args.h"
#include "devarray.h"
#include "dispatcher.h"
#include "driver.h"
#include "tunedepth.h"

enum { UFUNC_MAX_ARRAYS = KILN_MAX_PARAMS }; /* the key's arrays: inputs and out= */

/* Whether o is exactly a numpy.ndarray (a subclass keeps the Python path), known by its
 * type's name: the extension does not link NumPy. */
static bool is_ndarray(PyObject *o) { return strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") == 0; }

/* a's 1-D view of n elements (a itself when it is 1-D): new reference.  A DeviceArray
 * is viewed in C, a NumPy array (C-contiguous here) reshaped. */
static PyObject *flat_view(ModState *st, PyObject *a, int64_t n) {
    if (Py_TYPE(a) == (PyTypeObject *)st->device_array_class) {
        DeviceArrayObject *d = (DeviceArrayObject *)a;
        if (d->ndim == 1) return Py_NewRef(a);
        int64_t isz = ext_dtype_size(d->dtype);
        return (PyObject *)ext_devarray_new(st, d->ptr, 1, &n, &isz, d->dtype, d->device,
                                            d->owner);
    }
    return PyObject_CallMethod(a, "reshape", "L", (long long)n);
}

/* Whether writing out (a C-contiguous host array) element by element could change an
 * input element not yet read: it shares bytes with an input that is not the same
 * elements (same start and item size).  _ufunc.py's _overlaps, for the Python path. */
static bool overlaps_input(const Arg *in, Py_ssize_t nin, const Arg *o, int64_t count) {
    uint64_t ob = (uint64_t)(uintptr_t)o->view.buf;
    int64_t oisz = ext_dtype_size(o->t.dtype);
    for (Py_ssize_t i = 0; i < nin; i++) {
        uint64_t ib = (uint64_t)(uintptr_t)in[i].view.buf;
        int64_t iisz = ext_dtype_size(in[i].t.dtype);
        bool share = ib < ob + (uint64_t)(oisz * count) && ob < ib + (uint64_t)(iisz * count);
        if (share && (ib != ob || iisz != oisz)) return true;
    }
    return false;
}

/* The result of a call that the memo hit holds: allocated (or out), the flat kernel
 * launched on it and the inputs.  New reference, or NULL with an exception set. */
static PyObject *launch_hit(ModState *st, PyObject *hit, bool dev, PyObject *const *in,
                            Py_ssize_t nin, PyObject *out, const Arg *a0, int64_t count,
                            int64_t threads) {
    /* a DeviceArray result on the inputs' device (host memory for host-backed ones,
     * which classify as host arrays) */
    const int device = dev ? ((const DeviceArrayObject *)in[0])->device : 0;
    int code = (int)PyLong_AsLong(PyTuple_GET_ITEM(hit, 2));
    if (code == -1 && PyErr_Occurred()) return NULL;
    /* hit is borrowed from a dict that Python code run below (a collection) may change */
    PyObject *disp = Py_NewRef(PyTuple_GET_ITEM(hit, 0));
    PyObject *full = NULL;
    if (out != Py_None) {
        full = Py_NewRef(out);
    } else if (dev) {
        full = (PyObject *)ext_devarray_empty(st, a0->t.ndim, a0->shape, code, false, device,
                                              NULL);
    } else {
        PyObject *shape = PyTuple_New(a0->t.ndim);
        for (int j = 0; shape && j < a0->t.ndim; j++) {
            PyObject *e = PyLong_FromLongLong(a0->shape[j]);
            if (!e) Py_CLEAR(shape);
            else PyTuple_SET_ITEM(shape, j, e);
        }
        if (shape)
            full = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(hit, 4), shape,
                                                PyTuple_GET_ITEM(hit, 1), NULL);
        Py_XDECREF(shape);
    }
    if (!full) {
        Py_DECREF(disp);
        return NULL;
    }
    PyObject *call[UFUNC_MAX_ARRAYS + 1] = {NULL};
    Py_ssize_t nc = 0;
    PyObject *launcher = NULL, *res = NULL;
    call[nc++] = flat_view(st, full, count);
    if (!call[0]) goto done;
    for (Py_ssize_t i = 0; i < nin; i++)
        if (!(call[nc++] = flat_view(st, in[i], count))) goto done;
    if (!(call[nc++] = PyLong_FromLongLong(count))) goto done;
    launcher = ext_disp_launcher(st, disp, (count + threads - 1) / threads, threads);
    if (!launcher) goto done;
    res = PyObject_Vectorcall(launcher, call, (size_t)nc, NULL);
done:
    for (Py_ssize_t i = 0; i < nc; i++) Py_XDECREF(call[i]);
    Py_XDECREF(launcher);
    Py_DECREF(disp);
    if (!res) {
        Py_DECREF(full);
        return NULL;
    }
    Py_DECREF(res);
    return full;
}

/* The memoised launch of a call with inputs in[0..nin), out (Py_None: none) and
 * stream: the result (new reference), Py_None (new reference) where the Python path
 * must take the call, or NULL with an exception set. */
static PyObject *launch_memo(ModState *st, PyObject *memo, PyObject *const *in, Py_ssize_t nin,
                             PyObject *out, PyObject *stream, bool tune) {
    if (stream != Py_None && !(PyLong_CheckExact(stream) && PyObject_Not(stream) == 1))
        Py_RETURN_NONE; /* a stream: the Python path passes it on */
    PyObject *arrays[UFUNC_MAX_ARRAYS];
    Py_ssize_t n = nin;
    if (nin < 1 || nin + 1 > UFUNC_MAX_ARRAYS) Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < nin; i++) arrays[i] = in[i];
    if (out != Py_None) arrays[n++] = out;
    PyTypeObject *dcls = (PyTypeObject *)st->device_array_class;
    const bool dev = dcls && Py_TYPE(arrays[0]) == dcls;
    for (Py_ssize_t i = 0; i < n; i++)
        if (dev ? Py_TYPE(arrays[i]) != dcls : !is_ndarray(arrays[i])) Py_RETURN_NONE;
    if (dev) {
        const int d0 = ((const DeviceArrayObject *)arrays[0])->device;
        if (d0 != st->current_device && d0 != EXT_HOST_DEVICE) Py_RETURN_NONE;
        for (Py_ssize_t i = 1; i < n; i++)
            if (((const DeviceArrayObject *)arrays[i])->device != d0) Py_RETURN_NONE;
    }

    /* the type key, as key_of(*args[, out]) forms it, then the kind of call; the
     * arrays' shapes, which must be one */
    Arg a[UFUNC_MAX_ARRAYS];
    uint8_t key[4 * UFUNC_MAX_ARRAYS + 1];
    Py_ssize_t nc = 0;
    PyObject *ret = NULL;
    for (; nc < n; nc++) {
        int rc = ext_classify(st, arrays[nc], &a[nc], NULL, NULL, (int)nc, NULL);
        if (rc < 0) {
            ext_release_arg(&a[nc]);
            goto done;
        }
        const Arg *x = &a[nc];
        memcpy(key + 4 * nc, &x->t, 4);
        if (!x->t.is_array || x->t.ndim == 0 || x->t.layout != KILN_LAYOUT_C ||
            x->t.ndim != a[0].t.ndim ||
            memcmp(x->shape, a[0].shape, sizeof(int64_t) * x->t.ndim) != 0) {
            nc++;
            ret = Py_NewRef(Py_None);
            goto done;
        }
    }
    int64_t count = 1;
    for (int j = 0; j < a[0].t.ndim; j++) count *= a[0].shape[j];
    if (count == 0 || (!dev && out != Py_None && overlaps_input(a, nin, &a[nin], count))) {
        ret = Py_NewRef(Py_None);
        goto done;
    }
    key[4 * n] = dev ? 'D' : 'N';
    PyObject *kb = PyBytes_FromStringAndSize((const char *)key, 4 * n + 1);
    if (!kb) goto done;
    PyObject *hit = PyDict_GetItemWithError(memo, kb); /* borrowed */
    Py_DECREF(kb);
    if (!hit) {
        if (!PyErr_Occurred()) ret = Py_NewRef(Py_None);
        goto done;
    }
    if (!PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 5 ||
        !PyLong_Check(PyTuple_GET_ITEM(hit, 2)) || !PyList_Check(PyTuple_GET_ITEM(hit, 3))) {
        PyErr_SetString(PyExc_TypeError, "a ufunc's launch memo holds (kernel, dtype, code, "
                                         "tuned threads, maker)");
        goto done;
    }
    int64_t threads = UFUNC_DEFAULT_THREADS;
    if (tune && ext_tuning()) { /* max-autotune: the choice for this size */
        Py_ssize_t bucket = 0;
        for (uint64_t c = (uint64_t)count; c; c >>= 1) bucket++; /* _autotune.bucket */
        PyObject *tl = PyTuple_GET_ITEM(hit, 3);
        PyObject *t = bucket < PyList_GET_SIZE(tl) ? PyList_GET_ITEM(tl, bucket) : Py_None;
        if (t == Py_None) { /* not searched at this size: the Python path does */
            ret = Py_NewRef(Py_None);
            goto done;
        }
        threads = PyLong_AsLongLong(t);
        if (threads == -1 && PyErr_Occurred()) goto done;
    }
    ret = launch_hit(st, hit, dev, arrays, nin, out, &a[0], count, threads);
done:
    for (Py_ssize_t i = 0; i < nc; i++) ext_release_arg(&a[i]);
    return ret;
}

/* ---- kiln._kiln.UfuncBase: kiln.Vectorized's C half ---------------------------------- */

typedef struct {
    PyObject_HEAD
    ModState *st;
    PyObject *fast; /* the memo: type key -> (kernel, dtype, code, tuned threads, maker) */
    bool tune;      /* max-autotune's search is on (KILN_AUTOTUNE) */
} UfuncObject;

static PyObject *ufunc_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    (void)args;
    (void)kw;
    ModState *st = ext_state_of_type(tp);
    if (!st) return NULL;
    UfuncObject *self = (UfuncObject *)tp->tp_alloc(tp, 0);
    if (!self) return NULL;
    self->st = st;
    self->fast = PyDict_New();
    self->tune = false;
    if (!self->fast) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int ufunc_traverse(UfuncObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->fast);
    return 0;
}

static int ufunc_clear(UfuncObject *self) {
    Py_CLEAR(self->fast);
    return 0;
}

static void ufunc_dealloc(UfuncObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (tp->tp_clear) tp->tp_clear((PyObject *)self); /* a subclass's __dict__ too */
    ufunc_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* self(*args, out=None, stream=0): the memoised launch when it takes the call, else
 * self._call(*args, **kwargs), the Python path (_ufunc.py) */
static PyObject *ufunc_call(UfuncObject *self, PyObject *args, PyObject *kw) {
    ModState *st = self->st;
    PyObject *out = Py_None, *stream = Py_None;
    if (kw && PyDict_GET_SIZE(kw)) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kw, &pos, &key, &value)) {
            if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, "out") == 0)
                out = value;
            else if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, "stream") == 0)
                stream = value;
            else { /* named as NumPy's ufuncs name themselves */
                PyObject *name = PyObject_GetAttrString((PyObject *)self, "__name__");
                if (!name) return NULL;
                PyErr_Format(PyExc_TypeError,
                             "'%S' got an unexpected keyword argument %R (it takes out= and "
                             "stream=)",
                             name, key);
                Py_DECREF(name);
                return NULL;
            }
        }
    }
    Py_ssize_t nin = PyTuple_GET_SIZE(args);
    if (self->fast && PyDict_Check(self->fast) && nin > 0 &&
        (Py_TYPE(PyTuple_GET_ITEM(args, 0)) == (PyTypeObject *)st->device_array_class ||
         is_ndarray(PyTuple_GET_ITEM(args, 0)))) {
        PyObject *r = launch_memo(st, self->fast, &PyTuple_GET_ITEM(args, 0), nin, out, stream,
                                  self->tune);
        if (r != Py_None) return r;
        Py_DECREF(r);
    }
    PyObject *call = PyObject_GetAttr((PyObject *)self, st->str_ufunc_call);
    if (!call) return NULL;
    PyObject *r = PyObject_Call(call, args, kw);
    Py_DECREF(call);
    return r;
}

static PyMemberDef ufunc_members[] = {
    {"_fast", T_OBJECT_EX, offsetof(UfuncObject, fast), 0,
     "the memoised launches: type key + kind -> (kernel, dtype, code, tuned threads by "
     "bucket, maker)"},
    {"_tune", T_BOOL, offsetof(UfuncObject, tune), 0, "max-autotune's search is on"},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot ufunc_slots[] = {
    {Py_tp_new, ufunc_new},
    {Py_tp_dealloc, ufunc_dealloc},
    {Py_tp_traverse, ufunc_traverse},
    {Py_tp_clear, ufunc_clear},
    {Py_tp_call, ufunc_call},
    {Py_tp_members, ufunc_members},
    {Py_tp_doc, (void *)"Base of kiln.vectorize's objects: a repeated call on kiln device "
                        "arrays launches from C."},
    {0, NULL}};

static PyType_Spec ufunc_spec = {"kiln._kiln.UfuncBase", sizeof(UfuncObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                                 ufunc_slots};

int ext_ufunc_init(PyObject *module, ModState *st) {
    st->UfuncType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &ufunc_spec, NULL);
    if (!st->UfuncType || PyModule_AddType(module, st->UfuncType) < 0) return -1;
    st->str_ufunc_call = PyUnicode_InternFromString("_call");
    if (!st->str_ufunc_call) return -1;
    return PyModule_AddIntConstant(module, "ufunc_threads", UFUNC_DEFAULT_THREADS);
}

