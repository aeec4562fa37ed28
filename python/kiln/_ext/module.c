/* module.c: kiln._kiln, the thin C layer between Python and the kiln core.
 *
 * It owns the launch path, which must cost close to nothing over the kernel:
 *
 *   k[griddim, blockdim]      Dispatcher.__getitem__ parses the configuration
 *                             and returns a Launcher, cached per configuration
 *                             so a repeated `k[g, b]` allocates nothing;
 *   launcher(*args)           a vectorcall: each argument is classified by its
 *                             type pointer (float, int, bool) or through the
 *                             buffer protocol (NumPy arrays and scalars,
 *                             memoryviews), its 4-byte type goes into the key,
 *                             the key is looked up in the dispatcher's
 *                             open-addressing table, the parameters are packed
 *                             into 8-byte slots on the stack, and the kernel
 *                             runs with the GIL released.
 *
 * A miss calls the Python method _compile_key(key), which translates, builds
 * and loads the kernel and returns an Entry; the Entry is stored under the
 * key.  Everything else here wraps the core's functions (translate, build,
 * load) for that Python code and converts diagnostics into kiln.CompileError.
 *
 * Multi-phase init, module state and heap types, as CPython's _json.c does.
 */
#include "ext.h"

#include <float.h>
#include <time.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <structmember.h>

ModState *ext_state(PyObject *module) { return (ModState *)PyModule_GetState(module); }
static ModState *state_of(PyObject *module) { return ext_state(module); }

/* ---- diagnostics ------------------------------------------------------------ */

typedef struct {
    PyObject *list; /* formatted diagnostics (str) */
    int nerrors;
} Sink;

static void sink_diag(void *ud, const kiln_diag *d) {
    Sink *s = ud;
    if (d->severity == KILN_ERROR) s->nerrors++;
    if (!s->list) return;
    PyObject *t = PyUnicode_DecodeUTF8(d->formatted, (Py_ssize_t)strlen(d->formatted), "replace");
    if (t) {
        PyList_Append(s->list, t);
        Py_DECREF(t);
    } else {
        PyErr_Clear();
    }
}

/* Raises CompileError from what the sink collected (unless an exception is
 * already set, e.g. by the resolver). */
static void raise_compile_error(ModState *st, Sink *s, const char *fallback) {
    if (PyErr_Occurred()) return;
    PyObject *sep = PyUnicode_FromString("\n");
    PyObject *msg = NULL;
    if (sep && s->list && PyList_GET_SIZE(s->list) > 0) msg = PyUnicode_Join(sep, s->list);
    if (!msg) msg = PyUnicode_FromString(fallback);
    Py_XDECREF(sep);
    if (!msg) return;
    PyObject *exc = PyObject_CallOneArg(st->CompileError, msg);
    if (exc) {
        if (s->list) PyObject_SetAttrString(exc, "diagnostics", s->list);
        PyErr_SetObject(st->CompileError, exc);
        Py_DECREF(exc);
    }
    Py_DECREF(msg);
}

/* ---- argument types ------------------------------------------------------------ */

static const char *dtype_names[KILN_NDTYPES] = {
    "bool", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64", "float16", "float32", "float64"};

/* Maps a buffer format to a dtype.  Returns 0, -1 for an unsupported type, -2
 * for a non-native byte order. */
static int format_dtype(const char *fmt, Py_ssize_t itemsize, kiln_dtype *out) {
    if (!fmt) fmt = "B";
    if (*fmt == '@' || *fmt == '=' || *fmt == '<') {
        fmt++;
    } else if (*fmt == '>' || *fmt == '!') {
        if (itemsize != 1) return -2;
        fmt++;
    }
    if (!fmt[0] || fmt[1]) return -1;
    int sgn;
    switch (fmt[0]) {
    case '?':
        if (itemsize != 1) return -1;
        *out = KILN_BOOL;
        return 0;
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': sgn = 1; break;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': sgn = 0; break;
    case 'e':
    case 'f':
    case 'd':
        if (itemsize == 4) *out = KILN_FLOAT32;
        else if (itemsize == 8) *out = KILN_FLOAT64;
        else return -1; /* float16 and others: not yet */
        return 0;
    default: return -1;
    }
    switch (itemsize) {
    case 1: *out = sgn ? KILN_INT8 : KILN_UINT8; return 0;
    case 2: *out = sgn ? KILN_INT16 : KILN_UINT16; return 0;
    case 4: *out = sgn ? KILN_INT32 : KILN_UINT32; return 0;
    case 8: *out = sgn ? KILN_INT64 : KILN_UINT64; return 0;
    default: return -1;
    }
}

typedef union {
    int64_t i;
    uint64_t u;
    double f;
} Scalar;

/* One classified argument. */
typedef struct {
    kiln_argtype t;
    Scalar v;          /* scalars: the value (i for bool and signed, u, f) */
    Py_buffer view;    /* host arrays: the buffer, released after the launch */
    bool has_view;
    int64_t shape[KILN_MAX_NDIM];
    int64_t strides[KILN_MAX_NDIM]; /* in elements */
    /* GPU */
    bool on_gpu;       /* a device array: dptr is the address of element 0 */
    uint64_t dptr;
    int device;
    bool readonly;
    ForeignArray fa;   /* a foreign array's borrowed reference (DLPack) */
    bool has_foreign;
    uint64_t tmp;      /* GPU launch with a host array: the device copy */
    int64_t tmp_lo;    /* byte offset of the copy's start from element 0 (<= 0) */
    size_t tmp_size;
} Arg;

static PyObject *param_name(PyObject *names, int i) {
    if (names && PyTuple_Check(names) && i < PyTuple_GET_SIZE(names))
        return PyTuple_GET_ITEM(names, i);
    return NULL;
}

/* Formats "argument 'x' of kernel 'k'" into buf. */
static void arg_desc(char *buf, size_t n, PyObject *names, PyObject *kname, int i) {
    PyObject *pn = param_name(names, i);
    const char *p = pn ? PyUnicode_AsUTF8(pn) : NULL;
    const char *k = kname ? PyUnicode_AsUTF8(kname) : NULL;
    if (!p) PyErr_Clear();
    if (!k) PyErr_Clear();
    if (p)
        snprintf(buf, n, "argument '%s' of %s '%s'", p, "kernel", k ? k : "?");
    else
        snprintf(buf, n, "argument %d of %s '%s'", i + 1, "kernel", k ? k : "?");
}

static int scalar_from_memory(const void *p, kiln_dtype d, Scalar *v) {
    switch (d) {
    case KILN_BOOL: v->i = *(const uint8_t *)p != 0; return 0;
    case KILN_INT8: v->i = *(const int8_t *)p; return 0;
    case KILN_INT16: { int16_t x; memcpy(&x, p, 2); v->i = x; return 0; }
    case KILN_INT32: { int32_t x; memcpy(&x, p, 4); v->i = x; return 0; }
    case KILN_INT64: { int64_t x; memcpy(&x, p, 8); v->i = x; return 0; }
    case KILN_UINT8: v->u = *(const uint8_t *)p; return 0;
    case KILN_UINT16: { uint16_t x; memcpy(&x, p, 2); v->u = x; return 0; }
    case KILN_UINT32: { uint32_t x; memcpy(&x, p, 4); v->u = x; return 0; }
    case KILN_UINT64: { uint64_t x; memcpy(&x, p, 8); v->u = x; return 0; }
    case KILN_FLOAT32: { float x; memcpy(&x, p, 4); v->f = x; return 0; }
    case KILN_FLOAT64: { double x; memcpy(&x, p, 8); v->f = x; return 0; }
    default: return -1;
    }
}

static char layout_of(int nd, const int64_t *shape, const int64_t *st) {
    int64_t size = 1;
    for (int k = 0; k < nd; k++) size *= shape[k];
    if (size == 0) return 'C';
    int64_t exp = 1;
    bool c = true;
    for (int k = nd - 1; k >= 0; k--) {
        if (shape[k] != 1 && st[k] != exp) {
            c = false;
            break;
        }
        exp *= shape[k];
    }
    if (c) return 'C';
    exp = 1;
    for (int k = 0; k < nd; k++) {
        if (shape[k] != 1 && st[k] != exp) return 'A';
        exp *= shape[k];
    }
    return nd == 1 ? 'C' : 'F';
}

/* Classifies argument i.  Returns 0, or -1 with an exception set. */
static char layout_of(int nd, const int64_t *shape, const int64_t *st);
static void contiguous_strides(Arg *a);

/* A device array's byte strides as element strides, and its layout. */
static int device_layout(Arg *a, const int64_t *bstrides, int isz, PyObject *names,
                         PyObject *kname, int i) {
    for (int k = 0; k < a->t.ndim; k++) {
        if (bstrides[k] % isz != 0) {
            char d[256];
            arg_desc(d, sizeof d, names, kname, i);
            PyErr_Format(PyExc_ValueError,
                         "%s has strides that are not a multiple of its element size", d);
            return -1;
        }
        a->strides[k] = bstrides[k] / isz;
    }
    a->t.layout = (uint8_t)layout_of(a->t.ndim, a->shape, a->strides);
    if (a->t.layout != 'A') contiguous_strides(a);
    return 0;
}

static int classify(ModState *st, PyObject *o, Arg *a, PyObject *names, PyObject *kname, int i,
                    void *stream) {
    a->has_view = false;
    a->on_gpu = false;
    a->has_foreign = false;
    a->tmp = 0;
    a->t.is_array = 0;
    a->t.ndim = 0;
    a->t.layout = 0;
    /* device arrays first: a failed PyFloat_Check costs a subtype walk */
    if (st && PyObject_TypeCheck(o, st->DeviceArrayType)) {
        DeviceArrayObject *d = (DeviceArrayObject *)o;
        a->on_gpu = true;
        a->dptr = d->ptr;
        a->device = d->device;
        a->readonly = false;
        a->t.is_array = 1;
        a->t.dtype = d->dtype;
        a->t.ndim = (uint8_t)d->ndim;
        if (d->ndim == 0) {
            char desc[256];
            arg_desc(desc, sizeof desc, names, kname, i);
            PyErr_Format(PyExc_TypeError, "%s is a 0-d device array; pass a scalar", desc);
            return -1;
        }
        memcpy(a->shape, d->shape, sizeof(int64_t) * (size_t)d->ndim);
        if (d->layout) { /* computed when the array was made */
            a->t.layout = d->layout;
            memcpy(a->strides, d->estrides, sizeof(int64_t) * (size_t)d->ndim);
            return 0;
        }
        return device_layout(a, d->strides, ext_dtype_size(d->dtype), names, kname, i);
    }
    if (PyFloat_CheckExact(o)) {
        a->t.dtype = KILN_FLOAT64;
        a->v.f = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    if (PyBool_Check(o)) {
        a->t.dtype = KILN_BOOL;
        a->v.i = o == Py_True;
        return 0;
    }
    if (PyLong_Check(o)) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow == 0) {
            if (x == -1 && PyErr_Occurred()) return -1;
            a->t.dtype = KILN_INT64;
            a->v.i = x;
            return 0;
        }
        if (overflow > 0) {
            unsigned long long u = PyLong_AsUnsignedLongLong(o);
            if (!PyErr_Occurred()) {
                a->t.dtype = KILN_UINT64;
                a->v.u = u;
                return 0;
            }
            PyErr_Clear();
        }
        char d[256];
        arg_desc(d, sizeof d, names, kname, i);
        PyErr_Format(PyExc_OverflowError, "%s is an int too large for 64 bits", d);
        return -1;
    }
    if (PyFloat_Check(o)) {
        a->t.dtype = KILN_FLOAT64;
        a->v.f = PyFloat_AsDouble(o);
        return 0;
    }
    if (PyObject_CheckBuffer(o)) {
        Py_buffer *v = &a->view;
        if (PyObject_GetBuffer(o, v, PyBUF_RECORDS_RO) < 0) {
            /* GPU arrays (CuPy, JAX) may claim the buffer protocol and refuse it */
            if (st) {
                PyObject *bt, *bv, *btb;
                PyErr_Fetch(&bt, &bv, &btb);
                int rc = ext_foreign_array(st, o, stream, &a->fa);
                if (rc == 1) {
                    Py_XDECREF(bt);
                    Py_XDECREF(bv);
                    Py_XDECREF(btb);
                    goto foreign;
                }
                if (rc < 0) {
                    Py_XDECREF(bt);
                    Py_XDECREF(bv);
                    Py_XDECREF(btb);
                    goto foreign_error;
                }
                PyErr_Restore(bt, bv, btb);
            }
            char d[256];
            arg_desc(d, sizeof d, names, kname, i);
            PyObject *t, *ev, *tb, *t2, *v2, *tb2;
            PyErr_Fetch(&t, &ev, &tb);
            PyErr_NormalizeException(&t, &ev, &tb);
            PyErr_Format(PyExc_TypeError, "%s: cannot read its buffer", d);
            PyErr_Fetch(&t2, &v2, &tb2);
            PyErr_NormalizeException(&t2, &v2, &tb2);
            if (v2 && ev) {
                PyException_SetCause(v2, ev);
                ev = NULL;
            }
            Py_XDECREF(t);
            Py_XDECREF(ev);
            Py_XDECREF(tb);
            PyErr_Restore(t2, v2, tb2);
            return -1;
        }
        kiln_dtype dt;
        int rc = format_dtype(v->format, v->itemsize, &dt);
        if (rc < 0) {
            char d[256];
            arg_desc(d, sizeof d, names, kname, i);
            if (rc == -2)
                PyErr_Format(PyExc_TypeError,
                             "%s has a non-native byte order; convert it with a.astype(a.dtype.newbyteorder('='))",
                             d);
            else
                PyErr_Format(PyExc_TypeError,
                             "%s has element format '%s', which kernels do not support (use bool, "
                             "int8..int64, uint8..uint64, float32 or float64)",
                             d, v->format ? v->format : "B");
            PyBuffer_Release(v);
            return -1;
        }
        a->t.dtype = (uint8_t)dt;
        if (v->ndim == 0) {
            scalar_from_memory(v->buf, dt, &a->v);
            PyBuffer_Release(v);
            return 0;
        }
        a->has_view = true;
        if (v->ndim > KILN_MAX_NDIM) {
            char d[256];
            arg_desc(d, sizeof d, names, kname, i);
            PyErr_Format(PyExc_TypeError, "%s has %d dimensions; kernels take at most %d", d,
                         v->ndim, KILN_MAX_NDIM);
            return -1;
        }
        Py_ssize_t isz = v->itemsize;
        if (((uintptr_t)v->buf % (uintptr_t)isz) != 0) {
            char d[256];
            arg_desc(d, sizeof d, names, kname, i);
            PyErr_Format(PyExc_ValueError, "%s is not aligned to its %zd-byte elements; pass a copy",
                         d, isz);
            return -1;
        }
        for (int k = 0; k < v->ndim; k++) {
            a->shape[k] = v->shape[k];
            Py_ssize_t s = v->strides ? v->strides[k] : 0;
            if (!v->strides) {
                /* C-contiguous without strides */
                Py_ssize_t e = 1;
                for (int j = k + 1; j < v->ndim; j++) e *= v->shape[j];
                a->strides[k] = e;
                continue;
            }
            if (s % isz != 0) {
                char d[256];
                arg_desc(d, sizeof d, names, kname, i);
                PyErr_Format(PyExc_ValueError,
                             "%s has strides that are not a multiple of its element size; pass a copy",
                             d);
                return -1;
            }
            a->strides[k] = s / isz;
        }
        a->t.is_array = 1;
        a->t.ndim = (uint8_t)v->ndim;
        a->readonly = v->readonly != 0;
        a->t.layout = (uint8_t)layout_of(v->ndim, a->shape, a->strides);
        if (a->t.layout != 'A') contiguous_strides(a);
        return 0;
    }
    if (st) {
        int rc = ext_foreign_array(st, o, stream, &a->fa);
        if (rc < 0) {
        foreign_error:;
            char d[256];
            arg_desc(d, sizeof d, names, kname, i);
            PyObject *t, *ev, *tb;
            PyErr_Fetch(&t, &ev, &tb);
            PyErr_NormalizeException(&t, &ev, &tb);
            PyErr_Format(t ? t : PyExc_TypeError, "%s: %S", d, ev ? ev : Py_None);
            Py_XDECREF(t);
            Py_XDECREF(ev);
            Py_XDECREF(tb);
            return -1;
        }
        if (rc == 1) {
        foreign:
            a->has_foreign = true;
            a->on_gpu = true;
            a->dptr = a->fa.ptr;
            a->device = a->fa.device;
            a->readonly = a->fa.readonly;
            a->t.is_array = 1;
            a->t.dtype = (uint8_t)a->fa.dtype;
            a->t.ndim = (uint8_t)a->fa.ndim;
            if (a->fa.ndim == 0) {
                char d[256];
                arg_desc(d, sizeof d, names, kname, i);
                PyErr_Format(PyExc_TypeError, "%s is a 0-d GPU array; pass a scalar", d);
                return -1;
            }
            memcpy(a->shape, a->fa.shape, sizeof(int64_t) * (size_t)a->fa.ndim);
            return device_layout(a, a->fa.strides, ext_dtype_size(a->fa.dtype), names, kname, i);
        }
    }
    char d[256];
    arg_desc(d, sizeof d, names, kname, i);
    PyErr_Format(PyExc_TypeError,
                 "%s is a %.100s; kernels take NumPy arrays (or other buffers), ints, floats, bools "
                 "and NumPy scalars",
                 d, Py_TYPE(o)->tp_name);
    return -1;
}

/* dims of size 1 can have any stride: C and F arrays use the contiguous ones */
static void contiguous_strides(Arg *a) {
    int64_t e = 1;
    if (a->t.layout == 'C') {
        for (int k = a->t.ndim - 1; k >= 0; k--) {
            a->strides[k] = e;
            e *= a->shape[k];
        }
    } else {
        for (int k = 0; k < a->t.ndim; k++) {
            a->strides[k] = e;
            e *= a->shape[k];
        }
    }
}

static void release_arg(Arg *a) {
    if (a->has_view) PyBuffer_Release(&a->view);
    a->has_view = false;
    if (a->has_foreign) ext_foreign_release(&a->fa);
    a->has_foreign = false;
}

/* Stores a scalar argument converted to dtype d into an 8-byte slot. */
static int pack_scalar(const Arg *a, kiln_dtype d, int64_t *slot, PyObject *names,
                       PyObject *kname, int i) {
    *slot = 0;
    kiln_dtype from = (kiln_dtype)a->t.dtype;
    bool from_float = from == KILN_FLOAT32 || from == KILN_FLOAT64;
    bool from_unsigned = from >= KILN_UINT8 && from <= KILN_UINT64;
    double f = from_float ? a->v.f : from_unsigned ? (double)a->v.u : (double)a->v.i;
    if (d == KILN_FLOAT32) {
        float x = (float)f;
        memcpy(slot, &x, 4);
        return 0;
    }
    if (d == KILN_FLOAT64) {
        memcpy(slot, &f, 8);
        return 0;
    }
    if (d == KILN_BOOL) {
        uint8_t b = from_float ? f != 0 : (a->v.u != 0);
        memcpy(slot, &b, 1);
        return 0;
    }
    /* integers: exact unless the value does not fit */
    int64_t iv;
    uint64_t uv;
    if (from_float) {
        if (!(f > -9223372036854775808.0 && f < 18446744073709551616.0)) goto overflow;
        if (f < 9223372036854775808.0) {
            iv = (int64_t)f;
            uv = (uint64_t)iv;
        } else {
            uv = (uint64_t)f;
            iv = (int64_t)uv;
        }
    } else {
        iv = a->v.i;
        uv = a->v.u;
    }
    bool neg = !from_unsigned && (from_float ? f < 0 : iv < 0);
    switch (d) {
    case KILN_INT8: if (iv < INT8_MIN || iv > INT8_MAX || (from_unsigned && uv > INT8_MAX)) goto overflow; { int8_t x = (int8_t)iv; memcpy(slot, &x, 1); } return 0;
    case KILN_INT16: if (iv < INT16_MIN || iv > INT16_MAX || (from_unsigned && uv > INT16_MAX)) goto overflow; { int16_t x = (int16_t)iv; memcpy(slot, &x, 2); } return 0;
    case KILN_INT32: if (iv < INT32_MIN || iv > INT32_MAX || (from_unsigned && uv > INT32_MAX)) goto overflow; { int32_t x = (int32_t)iv; memcpy(slot, &x, 4); } return 0;
    case KILN_INT64: if (from_unsigned && uv > INT64_MAX) goto overflow; memcpy(slot, &iv, 8); return 0;
    case KILN_UINT8: if (neg || uv > UINT8_MAX) goto overflow; { uint8_t x = (uint8_t)uv; memcpy(slot, &x, 1); } return 0;
    case KILN_UINT16: if (neg || uv > UINT16_MAX) goto overflow; { uint16_t x = (uint16_t)uv; memcpy(slot, &x, 2); } return 0;
    case KILN_UINT32: if (neg || uv > UINT32_MAX) goto overflow; { uint32_t x = (uint32_t)uv; memcpy(slot, &x, 4); } return 0;
    case KILN_UINT64: if (neg) goto overflow; memcpy(slot, &uv, 8); return 0;
    default: break;
    }
overflow:;
    char desc[256];
    arg_desc(desc, sizeof desc, names, kname, i);
    PyErr_Format(PyExc_OverflowError, "%s does not fit the compiled type %s", desc,
                 dtype_names[d]);
    return -1;
}

/* ---- Program ------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    kiln_program *p;
} ProgramObject;

static void program_dealloc(ProgramObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    kiln_program_free(self->p);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *program_source(ProgramObject *self, void *c) {
    size_t n;
    const char *s = kiln_program_source(self->p, &n);
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "replace");
}
static PyObject *program_types(ProgramObject *self, void *c) {
    return PyUnicode_FromString(kiln_program_types(self->p));
}
static PyObject *program_name(ProgramObject *self, void *c) {
    return PyUnicode_FromString(kiln_program_name(self->p));
}
static PyObject *program_written(ProgramObject *self, void *c) {
    int n = kiln_program_nparams(self->p);
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i, PyBool_FromLong(kiln_program_param_flags(self->p, i) & KILN_PARAM_WRITTEN));
    return t;
}
static PyObject *program_gpu_only(ProgramObject *self, void *c) {
    const char *w;
    if (!kiln_program_gpu_only(self->p, &w)) Py_RETURN_NONE;
    return PyUnicode_FromString(w);
}
static PyObject *program_files(ProgramObject *self, void *c) {
    PyObject *l = PyList_New(0);
    if (!l) return NULL;
    for (int i = 0;; i++) {
        const char *f = kiln_program_file(self->p, i);
        if (!f) break;
        PyObject *s = PyUnicode_FromString(f);
        if (!s || PyList_Append(l, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(l);
            return NULL;
        }
        Py_DECREF(s);
    }
    PyObject *t = PyList_AsTuple(l);
    Py_DECREF(l);
    return t;
}

static PyGetSetDef program_getset[] = {
    {"source", (getter)program_source, NULL, "generated C or CUDA C", NULL},
    {"types", (getter)program_types, NULL, "each variable's type (inspect_types)", NULL},
    {"name", (getter)program_name, NULL, "the kernel's name", NULL},
    {"written", (getter)program_written, NULL, "per parameter: may the kernel write it", NULL},
    {"gpu_only", (getter)program_gpu_only, NULL, "the first GPU-only feature used, or None", NULL},
    {"files", (getter)program_files, NULL, "source files of runtime error locations", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot program_slots[] = {
    {Py_tp_dealloc, program_dealloc},
    {Py_tp_getset, program_getset},
    {Py_tp_doc, (void *)"A translated kernel: generated code and what sema learned."},
    {0, NULL}};

static PyType_Spec program_spec = {"kiln._kiln.Program", sizeof(ProgramObject), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                       Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                   program_slots};

/* ---- Entry: a loaded kernel ------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    int target;           /* 0 CPU, 1 CUDA */
    kiln_cpu_module *cpu;
    kiln_cuda_module *cu;
    int device;           /* CUDA: the device the module is loaded on */
    bool can_fail;        /* it may record a kernel error */
    bool debug;           /* compiled with debug=True: checked after each launch */
    ModState *st;
    int nparams;
    kiln_argtype *ptypes; /* the types it was compiled for */
    uint8_t *written;     /* per parameter */
    int nslots;           /* 8-byte parameter slots */
    PyObject *program;    /* Program */
    PyObject *files;      /* tuple of file names for error locations */
    PyObject *signature;  /* str */
} EntryObject;

static void entry_dealloc(EntryObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    kiln_cpu_unload(self->cpu);
    if (self->cu && self->st->cuda && kiln_cuda_use(self->st->cuda, self->device) == 0)
        kiln_cuda_unload(self->st->cuda, self->cu);
    PyMem_Free(self->ptypes);
    PyMem_Free(self->written);
    Py_XDECREF(self->program);
    Py_XDECREF(self->files);
    Py_XDECREF(self->signature);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyMemberDef entry_members[] = {
    {"program", T_OBJECT, offsetof(EntryObject, program), READONLY, "the translated Program"},
    {"signature", T_OBJECT, offsetof(EntryObject, signature), READONLY, "compiled signature"},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot entry_slots[] = {
    {Py_tp_dealloc, entry_dealloc},
    {Py_tp_members, entry_members},
    {Py_tp_doc, (void *)"A compiled, loaded specialisation of a kernel."},
    {0, NULL}};

static PyType_Spec entry_spec = {"kiln._kiln.Entry", sizeof(EntryObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                     Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                 entry_slots};

/* ---- the specialisation table ------------------------------------------------------ */

typedef struct {
    uint64_t hash;
    int len;
    uint8_t *key;     /* PyMem-owned copy */
    PyObject *entry;  /* strong reference */
} Slot;

typedef struct {
    Slot *slots;
    int cap, n;
} SpecTable;

static uint64_t key_hash(const uint8_t *k, int n) {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) {
        h ^= k[i];
        h *= 1099511628211ull;
    }
    return h | 1; /* 0 marks an empty slot */
}

static PyObject *table_get(SpecTable *t, const uint8_t *key, int len, uint64_t h) {
    if (!t->cap) return NULL;
    int mask = t->cap - 1;
    for (int i = (int)(h & (uint64_t)mask);; i = (i + 1) & mask) {
        Slot *s = &t->slots[i];
        if (!s->hash) return NULL;
        if (s->hash == h && s->len == len && memcmp(s->key, key, (size_t)len) == 0) return s->entry;
    }
}

/* Inserts entry under key unless the key has one already; returns the entry the
 * table holds for the key (borrowed), or NULL with an exception set.  A live
 * entry is never replaced: a launch on another thread may be running its code
 * (it holds its own reference, but the table's answer must not change under
 * concurrent first calls, so every thread runs one specialisation). */
static PyObject *table_insert(SpecTable *t, const uint8_t *key, int len, uint64_t h,
                              PyObject *entry) {
    PyObject *had = table_get(t, key, len, h);
    if (had) return had;
    if ((t->n + 1) * 10 >= t->cap * 7) {
        int ncap = t->cap ? t->cap * 2 : 16;
        Slot *ns = PyMem_Calloc((size_t)ncap, sizeof(Slot));
        if (!ns) {
            PyErr_NoMemory();
            return NULL;
        }
        for (int i = 0; i < t->cap; i++) {
            Slot *s = &t->slots[i];
            if (!s->hash) continue;
            int j = (int)(s->hash & (uint64_t)(ncap - 1));
            while (ns[j].hash) j = (j + 1) & (ncap - 1);
            ns[j] = *s;
        }
        PyMem_Free(t->slots);
        t->slots = ns;
        t->cap = ncap;
    }
    int mask = t->cap - 1;
    for (int i = (int)(h & (uint64_t)mask);; i = (i + 1) & mask) {
        Slot *s = &t->slots[i];
        if (!s->hash) {
            s->key = PyMem_Malloc((size_t)(len ? len : 1));
            if (!s->key) {
                PyErr_NoMemory();
                return NULL;
            }
            memcpy(s->key, key, (size_t)len);
            s->len = len;
            s->hash = h;
            Py_INCREF(entry);
            s->entry = entry;
            t->n++;
            return entry;
        }
    }
}

static void table_clear(SpecTable *t) {
    for (int i = 0; i < t->cap; i++) {
        if (!t->slots[i].hash) continue;
        PyMem_Free(t->slots[i].key);
        Py_CLEAR(t->slots[i].entry);
    }
    PyMem_Free(t->slots);
    t->slots = NULL;
    t->cap = t->n = 0;
}

/* ---- Dispatcher ----------------------------------------------------------------------- */

static struct PyModuleDef kiln_module;

enum { LAUNCH_CACHE = 8 };

typedef struct LauncherObject LauncherObject;

typedef struct {
    PyObject_HEAD
    PyObject *dict;
    PyObject *weakrefs;
    int nparams;
    int is_device;
    PyObject *names;    /* tuple of parameter names */
    PyObject *kname;    /* the kernel's name */
    SpecTable tab;
    LauncherObject *lc[LAUNCH_CACHE];
    int lnext;
    ModState *st;
    int64_t par_threshold;
    int target;        /* for host-only arguments: 0 CPU, 1 CUDA, -1 not resolved yet */
    bool explicit_cpu; /* target='cpu' was asked for: GPU arrays are an error */
    bool warned;       /* the host-array PerformanceWarning was given */
} DispatcherObject;

struct LauncherObject {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    DispatcherObject *disp;
    int64_t grid[3], block[3];
    PyObject *stream;
    void *stream_handle; /* its CUstream */
    int64_t shmem;
    long repeat;         /* bench hook: launch this many times back to back in C */
    double repeat_s;     /* ... and the seconds per launch it took */
    bool last_wide;      /* the last launch took the kernel's wide entry (tests) */
};

static int disp_init(DispatcherObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {(char *)"names", (char *)"name", (char *)"is_device", NULL};
    PyObject *names, *name;
    int is_device = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!U|p", kwlist, &PyTuple_Type, &names, &name,
                                     &is_device))
        return -1;
    if (PyTuple_GET_SIZE(names) > KILN_MAX_PARAMS) {
        PyErr_Format(PyExc_TypeError, "kernels take at most %d parameters", KILN_MAX_PARAMS);
        return -1;
    }
    Py_INCREF(names);
    Py_XSETREF(self->names, names);
    Py_INCREF(name);
    Py_XSETREF(self->kname, name);
    self->nparams = (int)PyTuple_GET_SIZE(names);
    self->is_device = is_device;
    self->par_threshold = 16384;
    self->target = -1;
    PyObject *mod = PyType_GetModuleByDef(Py_TYPE(self), &kiln_module);
    if (!mod) return -1;
    self->st = state_of(mod);
    return 0;
}

static int disp_traverse(DispatcherObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->dict);
    Py_VISIT(self->names);
    Py_VISIT(self->kname);
    for (int i = 0; i < self->tab.cap; i++)
        if (self->tab.slots[i].hash) Py_VISIT(self->tab.slots[i].entry);
    for (int i = 0; i < LAUNCH_CACHE; i++) Py_VISIT((PyObject *)self->lc[i]);
    return 0;
}

static int disp_clear(DispatcherObject *self) {
    Py_CLEAR(self->dict);
    Py_CLEAR(self->names);
    Py_CLEAR(self->kname);
    table_clear(&self->tab);
    for (int i = 0; i < LAUNCH_CACHE; i++) Py_CLEAR(self->lc[i]);
    return 0;
}

static void disp_dealloc(DispatcherObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
    disp_clear(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int parse_dims(PyObject *o, int64_t out[3], const char *what) {
    out[0] = out[1] = out[2] = 1;
    PyObject *items[3];
    int n;
    if (PyTuple_Check(o) || PyList_Check(o)) {
        Py_ssize_t sz = PySequence_Fast_GET_SIZE(o);
        if (sz < 1 || sz > 3) {
            PyErr_Format(PyExc_ValueError, "%s must have 1 to 3 dimensions, got %zd", what, sz);
            return -1;
        }
        n = (int)sz;
        for (int i = 0; i < n; i++) items[i] = PySequence_Fast_GET_ITEM(o, i);
    } else {
        n = 1;
        items[0] = o;
    }
    for (int i = 0; i < n; i++) {
        PyObject *x = items[i];
        if (PyFloat_Check(x) || !PyIndex_Check(x)) {
            PyErr_Format(PyExc_TypeError,
                         "%s must be a positive int or a tuple of up to 3 positive ints, not %.100s",
                         what, Py_TYPE(x)->tp_name);
            return -1;
        }
        PyObject *ix = PyNumber_Index(x);
        if (!ix) return -1;
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(ix, &overflow);
        Py_DECREF(ix);
        if (overflow || v <= 0) {
            if (PyErr_Occurred()) return -1;
            PyErr_Format(PyExc_ValueError, "%s must be positive, got %s%lld in dimension %d", what,
                         overflow ? "a huge value " : "", overflow ? 0LL : v, i);
            return -1;
        }
        out[i] = v;
    }
    return 0;
}

static PyObject *launcher_call(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames);

static PyObject *disp_getitem(DispatcherObject *self, PyObject *cfg) {
    if (self->is_device) {
        PyErr_Format(PyExc_TypeError,
                     "device function '%U' cannot be launched; call it from a kernel", self->kname);
        return NULL;
    }
    if (!PyTuple_Check(cfg) || PyTuple_GET_SIZE(cfg) < 2 || PyTuple_GET_SIZE(cfg) > 4) {
        PyErr_SetString(PyExc_TypeError,
                        "the launch configuration is k[griddim, blockdim] or "
                        "k[griddim, blockdim, stream, dynamic_shared_bytes]");
        return NULL;
    }
    int64_t g[3], b[3], shmem = 0;
    if (parse_dims(PyTuple_GET_ITEM(cfg, 0), g, "griddim") < 0) return NULL;
    if (parse_dims(PyTuple_GET_ITEM(cfg, 1), b, "blockdim") < 0) return NULL;
    if (b[0] > 1024 || b[1] > 1024 || b[2] > 64 || b[0] * b[1] * b[2] > 1024) {
        PyErr_Format(PyExc_ValueError,
                     "blockdim (%lld, %lld, %lld) exceeds the limits of 1024 threads per block "
                     "(x, y <= 1024, z <= 64)",
                     (long long)b[0], (long long)b[1], (long long)b[2]);
        return NULL;
    }
    if (g[0] > INT32_MAX || g[1] > 65535 || g[2] > 65535) {
        PyErr_Format(PyExc_ValueError,
                     "griddim (%lld, %lld, %lld) exceeds the limits (x <= 2**31-1, y, z <= 65535)",
                     (long long)g[0], (long long)g[1], (long long)g[2]);
        return NULL;
    }
    PyObject *stream = Py_None;
    void *handle = NULL;
    if (PyTuple_GET_SIZE(cfg) >= 3) {
        stream = PyTuple_GET_ITEM(cfg, 2);
        if (PyLong_Check(stream) && PyLong_AsLongLong(stream) == 0) stream = Py_None;
        if (PyErr_Occurred()) return NULL;
        if (ext_stream_handle(self->st, stream, &handle) < 0) return NULL;
    }
    if (PyTuple_GET_SIZE(cfg) == 4) {
        PyObject *s = PyTuple_GET_ITEM(cfg, 3);
        if (!PyLong_Check(s)) {
            PyErr_Format(PyExc_TypeError, "dynamic_shared_bytes must be an int, not %.100s",
                         Py_TYPE(s)->tp_name);
            return NULL;
        }
        shmem = PyLong_AsLongLong(s);
        if (shmem == -1 && PyErr_Occurred()) return NULL;
        if (shmem < 0 || shmem > (1 << 30)) {
            PyErr_Format(PyExc_ValueError, "dynamic_shared_bytes must be >= 0, got %lld",
                         (long long)shmem);
            return NULL;
        }
    }
    for (int i = 0; i < LAUNCH_CACHE; i++) {
        LauncherObject *l = self->lc[i];
        if (l && memcmp(l->grid, g, sizeof g) == 0 && memcmp(l->block, b, sizeof b) == 0 &&
            l->stream == stream && l->shmem == shmem) {
            Py_INCREF(l);
            return (PyObject *)l;
        }
    }
    LauncherObject *l = PyObject_GC_New(LauncherObject, self->st->LauncherType);
    if (!l) return NULL;
    l->vectorcall = launcher_call;
    Py_INCREF(self);
    l->disp = self;
    memcpy(l->grid, g, sizeof g);
    memcpy(l->block, b, sizeof b);
    Py_INCREF(stream);
    l->stream = stream;
    l->stream_handle = handle;
    l->shmem = shmem;
    l->repeat = 0;
    l->repeat_s = 0;
    l->last_wide = false;
    PyObject_GC_Track(l);
    Py_INCREF(l);
    Py_XSETREF(self->lc[self->lnext], l);
    self->lnext = (self->lnext + 1) % LAUNCH_CACHE;
    return (PyObject *)l;
}

static PyObject *disp_call(DispatcherObject *self, PyObject *args, PyObject *kw) {
    if (self->is_device)
        PyErr_Format(PyExc_TypeError,
                     "device function '%U' can only be called from kernels", self->kname);
    else
        PyErr_Format(PyExc_TypeError,
                     "kernel '%U' needs a launch configuration: %U[blocks, threads](...)",
                     self->kname, self->kname);
    return NULL;
}

static PyObject *disp_lookup(DispatcherObject *self, PyObject *key) {
    if (!PyBytes_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "key must be bytes");
        return NULL;
    }
    const uint8_t *k = (const uint8_t *)PyBytes_AS_STRING(key);
    int n = (int)PyBytes_GET_SIZE(key);
    PyObject *e = table_get(&self->tab, k, n, key_hash(k, n));
    if (!e) Py_RETURN_NONE;
    Py_INCREF(e);
    return e;
}

static PyObject *disp_insert(DispatcherObject *self, PyObject *args) {
    PyObject *key, *entry;
    if (!PyArg_ParseTuple(args, "O!O!", &PyBytes_Type, &key, self->st->EntryType, &entry))
        return NULL;
    const uint8_t *k = (const uint8_t *)PyBytes_AS_STRING(key);
    int n = (int)PyBytes_GET_SIZE(key);
    PyObject *kept = table_insert(&self->tab, k, n, key_hash(k, n), entry);
    Py_XINCREF(kept);
    return kept;
}

static PyObject *disp_entries(DispatcherObject *self, PyObject *unused) {
    PyObject *l = PyList_New(0);
    if (!l) return NULL;
    for (int i = 0; i < self->tab.cap; i++) {
        Slot *s = &self->tab.slots[i];
        if (!s->hash) continue;
        PyObject *t = Py_BuildValue("(y#O)", (const char *)s->key, (Py_ssize_t)s->len, s->entry);
        if (!t || PyList_Append(l, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(l);
            return NULL;
        }
        Py_DECREF(t);
    }
    return l;
}

static PyObject *disp_clear_entries(DispatcherObject *self, PyObject *unused) {
    table_clear(&self->tab);
    Py_RETURN_NONE;
}

static PyObject *disp_get_name(DispatcherObject *self, void *c) {
    if (!self->kname) Py_RETURN_NONE;
    Py_INCREF(self->kname);
    return self->kname;
}

static PyMethodDef disp_methods[] = {
    {"_lookup", (PyCFunction)disp_lookup, METH_O, "the Entry for a type key, or None"},
    {"_insert", (PyCFunction)disp_insert, METH_VARARGS,
     "store an Entry under a type key unless it has one; returns the Entry the table keeps"},
    {"_entries", (PyCFunction)disp_entries, METH_NOARGS, "[(key, Entry)]"},
    {"_clear_entries", (PyCFunction)disp_clear_entries, METH_NOARGS, "forget every Entry"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef disp_getset[] = {
    {"_kname", (getter)disp_get_name, NULL, "kernel name", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef disp_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(DispatcherObject, dict), READONLY, NULL},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(DispatcherObject, weakrefs), READONLY, NULL},
    {"_nparams", T_INT, offsetof(DispatcherObject, nparams), READONLY, NULL},
    {"_is_device", T_INT, offsetof(DispatcherObject, is_device), READONLY, NULL},
    {"_par_threshold", T_LONGLONG, offsetof(DispatcherObject, par_threshold), 0,
     "CPU target: launches with fewer threads in all run on one core"},
    {"_target", T_INT, offsetof(DispatcherObject, target), 0,
     "target of launches with host arguments: 0 CPU, 1 CUDA, -1 unresolved"},
    {"_explicit_cpu", T_BOOL, offsetof(DispatcherObject, explicit_cpu), 0,
     "target='cpu' was given"},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot disp_slots[] = {
    {Py_tp_init, disp_init},
    {Py_tp_dealloc, disp_dealloc},
    {Py_tp_traverse, disp_traverse},
    {Py_tp_clear, disp_clear},
    {Py_mp_subscript, disp_getitem},
    {Py_tp_call, disp_call},
    {Py_tp_methods, disp_methods},
    {Py_tp_members, disp_members},
    {Py_tp_getset, disp_getset},
    {Py_tp_doc, (void *)"Base of kiln kernels: the specialisation table and the launch path."},
    {0, NULL}};

static PyType_Spec disp_spec = {"kiln._kiln.DispatcherBase", sizeof(DispatcherObject), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                                disp_slots};

/* ---- Launcher ----------------------------------------------------------------------------- */

static int launcher_traverse(LauncherObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT((PyObject *)self->disp);
    Py_VISIT(self->stream);
    return 0;
}

static int launcher_clear(LauncherObject *self) {
    Py_CLEAR(self->disp);
    Py_CLEAR(self->stream);
    return 0;
}

static void launcher_dealloc(LauncherObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    launcher_clear(self);
    PyObject_GC_Del(self);
    Py_DECREF(tp);
}

enum { STACK_ARGS = 16, STACK_SLOTS = 256 };

/* Packs the arguments into 8-byte slots (docs/abi.md); device addresses for
 * a GPU launch.  Sets the slot offset of each parameter in off. */
static int pack(DispatcherObject *d, EntryObject *e, Arg *a, int n, int64_t *slots, int *off,
                bool gpu) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        const kiln_argtype *pt = &e->ptypes[i];
        off[i] = s;
        if (pt->is_array) {
            if (e->written[i] && a[i].readonly) {
                char desc[256];
                arg_desc(desc, sizeof desc, d->names, d->kname, i);
                PyErr_Format(PyExc_ValueError, "%s is read-only, but the kernel writes to it", desc);
                return -1;
            }
            if (gpu)
                slots[s++] = (int64_t)(a[i].on_gpu ? a[i].dptr : a[i].tmp - (uint64_t)a[i].tmp_lo);
            else
                slots[s++] = (int64_t)(uintptr_t)a[i].view.buf;
            for (int k = 0; k < pt->ndim; k++) slots[s++] = a[i].shape[k];
            for (int k = 0; k < pt->ndim; k++) slots[s++] = a[i].strides[k];
        } else if (pack_scalar(&a[i], (kiln_dtype)pt->dtype, &slots[s++], d->names, d->kname, i) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The byte span [lo, hi) of a host array's elements around element 0. */
static void host_span(const Arg *a, int64_t *lo, int64_t *hi) {
    int64_t isz = (int64_t)a->view.itemsize;
    ext_byte_span(isz, a->t.ndim, a->shape, a->strides, isz, lo, hi);
}

/* Host arrays in a GPU launch: copied in before and back after (if written). */
static int stage_host_arrays(ModState *st, DispatcherObject *d, Arg *a, int n, void *stream) {
    for (int i = 0; i < n; i++) {
        if (!a[i].t.is_array || a[i].on_gpu) continue;
        if (!d->warned) {
            d->warned = true;
            char desc[256];
            arg_desc(desc, sizeof desc, d->names, d->kname, i);
            if (PyErr_WarnFormat(st->PerformanceWarning, 1,
                                 "%s is a host array, so kernel '%U' copies its host arrays to the "
                                 "GPU and back at every launch; pass kiln.to_device() arrays",
                                 desc, d->kname) < 0)
                return -1;
        }
        int64_t lo, hi;
        host_span(&a[i], &lo, &hi);
        a[i].tmp_lo = lo;
        a[i].tmp_size = (size_t)(hi - lo);
        int rc = kiln_cuda_alloc(st->cuda, &a[i].tmp, a[i].tmp_size, stream);
        if (rc == 0)
            rc = kiln_cuda_copy_htod(st->cuda, a[i].tmp, (char *)a[i].view.buf + lo, a[i].tmp_size,
                                     stream);
        if (rc != 0) {
            ext_cuda_error(st, rc, "copying a host array to the GPU");
            return -1;
        }
    }
    return 0;
}

static int unstage_host_arrays(ModState *st, EntryObject *e, Arg *a, int n, void *stream) {
    int err = 0;
    for (int i = 0; i < n; i++) {
        if (!a[i].tmp) continue;
        int rc = 0;
        if (e && e->written[i] && !err)
            rc = kiln_cuda_copy_dtoh(st->cuda, (char *)a[i].view.buf + a[i].tmp_lo, a[i].tmp,
                                     a[i].tmp_size, stream);
        kiln_cuda_free(st->cuda, a[i].tmp, stream);
        a[i].tmp = 0;
        if (rc != 0 && !err) {
            ext_cuda_error(st, rc, "copying an array back from the GPU");
            err = -1;
        }
    }
    return err;
}

/* Whether the packed arrays of a GPU launch may take the wide entry's
 * __restrict__ pointers: no array the kernel writes shares a byte with
 * another array argument.  Byte spans from the packed data pointer, shape and
 * strides (in elements). */
static bool arrays_disjoint(const EntryObject *e, const int64_t *slots, const int *off) {
    enum { MAXA = 16 };
    int64_t lo[MAXA], hi[MAXA];
    bool w[MAXA];
    int na = 0;
    for (int i = 0; i < e->nparams; i++) {
        const kiln_argtype *pt = &e->ptypes[i];
        if (!pt->is_array) continue;
        if (na == MAXA) return false;
        const int64_t *p = &slots[off[i]]; /* data, shape[ndim], strides[ndim] */
        int64_t isz = ext_dtype_size(pt->dtype), l, h;
        ext_byte_span(isz, pt->ndim, p + 1, p + 1 + pt->ndim, isz, &l, &h);
        if (h == l) continue; /* empty: touches nothing */
        lo[na] = p[0] + l;
        hi[na] = p[0] + h;
        w[na++] = e->written[i] != 0;
    }
    for (int i = 0; i < na; i++)
        for (int j = i + 1; j < na; j++)
            if ((w[i] || w[j]) && lo[i] < hi[j] && lo[j] < hi[i]) return false;
    return true;
}

static PyObject *launcher_call(PyObject *selfobj, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
    LauncherObject *self = (LauncherObject *)selfobj;
    DispatcherObject *d = self->disp;
    ModState *st = d->st;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames && PyTuple_GET_SIZE(kwnames)) {
        PyErr_Format(PyExc_TypeError, "kernel '%U' takes positional arguments only", d->kname);
        return NULL;
    }
    if (n != d->nparams) {
        PyErr_Format(PyExc_TypeError, "kernel '%U' takes %d argument%s but %zd were given",
                     d->kname, d->nparams, d->nparams == 1 ? "" : "s", n);
        return NULL;
    }
    Arg stack_args[STACK_ARGS];
    Arg *a = n <= STACK_ARGS ? stack_args : PyMem_Malloc(sizeof(Arg) * (size_t)n);
    uint8_t keybuf[4 * STACK_ARGS + 2];
    uint8_t *key = n <= STACK_ARGS ? keybuf : PyMem_Malloc(4 * (size_t)n + 2);
    int64_t stack_slots[STACK_SLOTS];
    int64_t *slots = stack_slots;
    int stack_off[STACK_ARGS + 1];
    int *off = n <= STACK_ARGS ? stack_off : PyMem_Malloc(sizeof(int) * (size_t)(n + 1));
    void *stack_pp[STACK_ARGS + 2];
    void *stack_wpp[STACK_SLOTS];
    void **pp = n <= STACK_ARGS ? stack_pp : PyMem_Malloc(sizeof(void *) * (size_t)(n + 2));
    PyObject *ret = NULL;
    EntryObject *e = NULL;
    int classified = 0;
    bool staged = false;
    if (!a || !key || !off || !pp) {
        PyErr_NoMemory();
        goto done;
    }
    int gpu_dev = -1, gpu_arg = -1;
    for (int i = 0; i < n; i++) {
        classified = i + 1;
        if (classify(st, args[i], &a[i], d->names, d->kname, i, self->stream_handle) < 0) goto done;
        memcpy(key + 4 * i, &a[i].t, 4);
        if (!a[i].on_gpu) continue;
        if (gpu_dev < 0) {
            gpu_dev = a[i].device;
            gpu_arg = i;
        } else if (a[i].device != gpu_dev) {
            char d1[256], d2[256];
            arg_desc(d1, sizeof d1, d->names, d->kname, gpu_arg);
            arg_desc(d2, sizeof d2, d->names, d->kname, i);
            PyErr_Format(PyExc_ValueError, "%s is on GPU %d but %s is on GPU %d; copy one of them",
                         d1, gpu_dev, d2, a[i].device);
            goto done;
        }
    }
    int target, device = 0;
    if (gpu_dev >= 0) {
        if (d->explicit_cpu) {
            char desc[256];
            arg_desc(desc, sizeof desc, d->names, d->kname, gpu_arg);
            PyErr_Format(PyExc_TypeError,
                         "%s is a GPU array, but the kernel was asked to run on the CPU "
                         "(target='cpu'); copy it with .copy_to_host()",
                         desc);
            goto done;
        }
        target = 1;
        device = gpu_dev;
    } else {
        if (d->target < 0) {
            PyObject *t = PyObject_CallMethodNoArgs((PyObject *)d, st->str_resolve_target);
            if (!t) goto done;
            long v = PyLong_AsLong(t);
            Py_DECREF(t);
            if (v == -1 && PyErr_Occurred()) goto done;
            d->target = v ? 1 : 0;
        }
        target = d->target;
        if (target) device = st->current_device;
    }
    key[4 * n] = (uint8_t)target;
    key[4 * n + 1] = (uint8_t)device;
    int klen = 4 * (int)n + 2;
    uint64_t h = key_hash(key, klen);
    /* The launch holds its own reference to the entry from here to its return:
     * the GIL is released while the kernel runs, and another thread may clear
     * the table meanwhile; the code is unloaded only by the last reference. */
    PyObject *entry = table_get(&d->tab, key, klen, h);
    if (entry) {
        Py_INCREF(entry);
    } else {
        PyObject *kb = PyBytes_FromStringAndSize((const char *)key, klen);
        if (!kb) goto done;
        entry = PyObject_CallMethodOneArg((PyObject *)d, st->str_compile_key, kb);
        Py_DECREF(kb);
        if (!entry) goto done;
        if (!Py_IS_TYPE(entry, st->EntryType)) {
            Py_DECREF(entry);
            PyErr_SetString(PyExc_TypeError, "_compile_key must return an Entry");
            goto done;
        }
        /* another thread's first call may have inserted one meanwhile: use that */
        PyObject *kept = table_insert(&d->tab, key, klen, h, entry);
        Py_XINCREF(kept);
        Py_DECREF(entry);
        if (!kept) goto done;
        entry = kept;
    }
    e = (EntryObject *)entry;
    if (e->nslots > STACK_SLOTS) {
        slots = PyMem_Malloc(sizeof(int64_t) * (size_t)e->nslots);
        if (!slots) {
            PyErr_NoMemory();
            goto done;
        }
    }
    if (e->target == 0) {
        if (pack(d, e, a, (int)n, slots, off, false) < 0) goto done;
        kiln_kernel_error err;
        memset(&err, 0, sizeof err);
        kiln_cpu_launch L;
        memcpy(L.grid, self->grid, sizeof L.grid);
        memcpy(L.block, self->block, sizeof L.block);
        L.par_threshold = d->par_threshold;
        L.err = &err;
        Py_BEGIN_ALLOW_THREADS
        kiln_cpu_launch_kernel(e->cpu, &L, slots);
        Py_END_ALLOW_THREADS
        if (err.code != 0) {
            ext_raise_kernel_error(&err, e->files);
            goto done;
        }
    } else {
        if (ext_use_device(st, e->device) < 0) goto done;
        uint64_t errp;
        if (ext_errbuf(st, e->device, &errp) < 0) goto done;
        staged = true;
        if (stage_host_arrays(st, d, a, (int)n, self->stream_handle) < 0) goto done;
        if (pack(d, e, a, (int)n, slots, off, true) < 0) goto done;
        pp[0] = &errp;
        for (int i = 0; i < n; i++) pp[1 + i] = &slots[off[i]];
        pp[1 + n] = NULL; /* the driver does not need it; tests/fake_cuda does */
        /* the wide entry's parameters: each slot on its own, then the thread count */
        void **wpp = NULL;
        int64_t nthreads = 0;
        self->last_wide = false;
        if (kiln_cuda_widens(e->cu, self->grid, self->block) && e->nslots + 3 <= STACK_SLOTS &&
            arrays_disjoint(e, slots, off)) {
            nthreads = self->grid[0] * self->block[0];
            wpp = stack_wpp;
            wpp[0] = &errp;
            for (int j = 0; j < e->nslots; j++) wpp[1 + j] = &slots[j];
            wpp[1 + e->nslots] = &nthreads;
            wpp[2 + e->nslots] = NULL;
            self->last_wide = true;
        }
        int rc;
        if (self->repeat > 1) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            rc = 0;
            for (long r = 0; r < self->repeat && rc == 0; r++)
                rc = kiln_cuda_launch(st->cuda, e->cu, self->grid, self->block,
                                      (unsigned)self->shmem, self->stream_handle, pp, wpp);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            self->repeat_s = ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9) /
                             (double)self->repeat;
        } else {
            /* cuLaunchKernel queues the work and returns; releasing the GIL around it
             * would cost more than the call saves (CuPy and Numba keep it too) */
            rc = kiln_cuda_launch(st->cuda, e->cu, self->grid, self->block, (unsigned)self->shmem,
                                  self->stream_handle, pp, wpp);
        }
        if (rc != 0) {
            ext_cuda_error(st, rc, "launching the kernel");
            goto done;
        }
        if (e->can_fail) {
            st->err_pending[e->device] = true;
            Py_INCREF(e->files);
            Py_XSETREF(st->err_files[e->device], e->files);
        }
        staged = false;
        if (unstage_host_arrays(st, e, a, (int)n, self->stream_handle) < 0) goto done;
        if (e->debug && ext_check_kernel_error(st, e->device) < 0) goto done;
    }
    ret = Py_None;
    Py_INCREF(ret);
done:
    if (staged) {
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        unstage_host_arrays(st, NULL, a, (int)n, self->stream_handle);
        PyErr_Restore(t, v, tb);
    }
    for (int i = 0; i < classified; i++) release_arg(&a[i]);
    if (a && a != stack_args) PyMem_Free(a);
    if (key && key != keybuf) PyMem_Free(key);
    if (off && off != stack_off) PyMem_Free(off);
    if (pp && pp != stack_pp) PyMem_Free(pp);
    if (slots != stack_slots) PyMem_Free(slots);
    Py_XDECREF(e);
    return ret;
}

static PyMemberDef launcher_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(LauncherObject, vectorcall), READONLY, NULL},
    {"dispatcher", T_OBJECT, offsetof(LauncherObject, disp), READONLY, NULL},
    {"_last_wide", T_BOOL, offsetof(LauncherObject, last_wide), READONLY,
     "whether the last launch ran several grid positions per thread"},
    {NULL, 0, 0, 0, NULL}};

static PyObject *launcher_config(LauncherObject *self, void *c) {
    return Py_BuildValue("((LLL)(LLL)OL)", (long long)self->grid[0], (long long)self->grid[1],
                         (long long)self->grid[2], (long long)self->block[0],
                         (long long)self->block[1], (long long)self->block[2], self->stream,
                         (long long)self->shmem);
}

/* _raw_launches(count, *args): launches count times from a C loop with the
 * arguments packed once; returns the seconds per launch (the driver's floor). */
static PyObject *launcher_raw(PyObject *selfobj, PyObject *const *args, Py_ssize_t nargs) {
    LauncherObject *self = (LauncherObject *)selfobj;
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "_raw_launches(count, *args)");
        return NULL;
    }
    long count = PyLong_AsLong(args[0]);
    if (count < 1) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "count must be positive");
        return NULL;
    }
    self->repeat = count;
    self->repeat_s = 0;
    PyObject *r = launcher_call(selfobj, args + 1, (size_t)(nargs - 1), NULL);
    self->repeat = 0;
    if (!r) return NULL;
    Py_DECREF(r);
    return PyFloat_FromDouble(self->repeat_s);
}

static PyMethodDef launcher_methods[] = {
    {"_raw_launches", (PyCFunction)(void (*)(void))launcher_raw, METH_FASTCALL,
     "benchmark hook: the driver's own cost per launch"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef launcher_getset[] = {
    {"config", (getter)launcher_config, NULL, "(griddim, blockdim, stream, shared bytes)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot launcher_slots[] = {
    {Py_tp_dealloc, launcher_dealloc},
    {Py_tp_traverse, launcher_traverse},
    {Py_tp_clear, launcher_clear},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_members, launcher_members},
    {Py_tp_methods, launcher_methods},
    {Py_tp_getset, launcher_getset},
    {Py_tp_doc, (void *)"A kernel with its launch configuration; call it with the arguments."},
    {0, NULL}};

static PyType_Spec launcher_spec = {"kiln._kiln.Launcher", sizeof(LauncherObject), 0,
                                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                                        Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_IMMUTABLETYPE |
                                        Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                    launcher_slots};

/* ---- the resolver bridge ------------------------------------------------------------------- */

typedef struct {
    PyObject *resolver; /* callable(scope, dotted) -> description tuple */
    PyObject *keep;     /* list: objects whose strings *out points into */
    PyObject *mem;      /* list of capsules freeing kiln_value arrays */
} Resolve;

static const char *keep_str(Resolve *R, PyObject *o) {
    if (!PyUnicode_Check(o)) return NULL;
    if (PyList_Append(R->keep, o) < 0) return NULL;
    return PyUnicode_AsUTF8(o);
}

static void free_capsule(PyObject *cap) { PyMem_Free(PyCapsule_GetPointer(cap, "kiln.values")); }

static int describe(Resolve *R, PyObject *d, kiln_value *out);

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
    } else if (strcmp(kind, "bool") == 0) {
        out->kind = KILN_VAL_BOOL;
        out->v.i = PyObject_IsTrue(ITEM(1));
    } else if (strcmp(kind, "scalar") == 0) {
        out->kind = KILN_VAL_SCALAR;
        out->dtype = (kiln_dtype)PyLong_AsLong(ITEM(1));
        if (PyErr_Occurred()) return -1;
        PyObject *v = ITEM(2);
        if (out->dtype == KILN_FLOAT32 || out->dtype == KILN_FLOAT64) out->v.f = PyFloat_AsDouble(v);
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
    } else if (strcmp(kind, "dtype") == 0) {
        out->kind = KILN_VAL_DTYPE;
        out->dtype = (kiln_dtype)PyLong_AsLong(ITEM(1));
        if (PyErr_Occurred()) return -1;
    } else if (strcmp(kind, "function") == 0) {
        /* ("function", scope, text, filename, first_line, is_device, signature|None) */
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
    } else if (strcmp(kind, "other") == 0) {
        out->kind = KILN_VAL_OTHER;
        out->name = keep_str(R, ITEM(1));
        if (!out->name) return -1;
    } else {
        PyErr_Format(PyExc_ValueError, "resolver returned an unknown kind '%s'", kind);
        return -1;
    }
#undef ITEM
    return 0;
}

static int c_resolve(void *ud, void *scope, const char *dotted, kiln_value *out) {
    Resolve *R = ud;
    PyObject *res = PyObject_CallFunction(R->resolver, "Os", (PyObject *)scope, dotted);
    if (!res) return -1;
    int rc = PyList_Append(R->keep, res);
    if (rc == 0) rc = describe(R, res, out);
    Py_DECREF(res);
    return rc;
}

/* ---- module functions ------------------------------------------------------------------------ */

/* What a call into the core with Python globals needs: a context whose
 * diagnostics go to a sink, and the resolver bridge. */
typedef struct {
    kiln_ctx *ctx;
    Sink sink;
    Resolve R;
} CoreCall;

static int core_open(CoreCall *c, PyObject *resolver) {
    c->sink.list = PyList_New(0);
    c->sink.nerrors = 0;
    c->R.resolver = resolver;
    c->R.keep = PyList_New(0);
    c->R.mem = PyList_New(0);
    c->ctx = kiln_ctx_new();
    if (!c->sink.list || !c->R.keep || !c->R.mem || !c->ctx) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    kiln_ctx_set_diag(c->ctx, sink_diag, &c->sink);
    return 0;
}

static void core_close(CoreCall *c) {
    kiln_ctx_free(c->ctx);
    Py_XDECREF(c->sink.list);
    Py_XDECREF(c->R.keep);
    Py_XDECREF(c->R.mem);
}

/* A type key is 4 bytes per argument, followed (in the dispatcher's table) by
 * 2 bytes: the target and the device. */
static int key_to_argtypes(PyObject *key, kiln_argtype *out, int max) {
    if (!PyBytes_Check(key) || PyBytes_GET_SIZE(key) % 4 > 2 || PyBytes_GET_SIZE(key) % 4 == 1 ||
        PyBytes_GET_SIZE(key) / 4 > max) {
        PyErr_SetString(PyExc_ValueError, "a type key is bytes of 4 per argument (and 2 more)");
        return -1;
    }
    int n = (int)(PyBytes_GET_SIZE(key) / 4);
    memcpy(out, PyBytes_AS_STRING(key), (size_t)n * 4);
    return n;
}

/* translate(text, filename, first_line, key, options, resolver, scope) */
static PyObject *mod_translate(PyObject *module, PyObject *args) {
    ModState *st = state_of(module);
    const char *text, *filename;
    Py_ssize_t tlen;
    int first_line;
    PyObject *key, *opts, *resolver, *scope;
    if (!PyArg_ParseTuple(args, "s#siO!O!OO", &text, &tlen, &filename, &first_line,
                          &PyBytes_Type, &key, &PyTuple_Type, &opts, &resolver, &scope))
        return NULL;
    kiln_options o;
    memset(&o, 0, sizeof o);
    int target = 0;
    if (!PyArg_ParseTuple(opts, "iiiiii", &target, &o.fastmath, &o.debug, &o.lineinfo,
                          &o.max_registers, &o.cuda_arch))
        return NULL;
    o.target = target ? KILN_TARGET_CUDA : KILN_TARGET_CPU;
    kiln_argtype at[KILN_MAX_PARAMS];
    int n = key_to_argtypes(key, at, KILN_MAX_PARAMS);
    if (n < 0) return NULL;
    CoreCall c;
    PyObject *result = NULL;
    if (core_open(&c, resolver) < 0) goto done;
    kiln_source src = {text, (size_t)tlen, filename, first_line, scope};
    kiln_program *p = kiln_translate(c.ctx, &src, at, n, &o, c_resolve, &c.R);
    if (!p) {
        raise_compile_error(st, &c.sink, "kiln: compilation failed");
        goto done;
    }
    ProgramObject *po = PyObject_New(ProgramObject, st->ProgramType);
    if (!po) {
        kiln_program_free(p);
        goto done;
    }
    po->p = p;
    result = (PyObject *)po;
done:
    core_close(&c);
    return result;
}

/* infer_return(text, filename, first_line, key, resolver, scope) -> bytes (4, or empty for None) */
static PyObject *mod_infer_return(PyObject *module, PyObject *args) {
    ModState *st = state_of(module);
    const char *text, *filename;
    Py_ssize_t tlen;
    int first_line;
    PyObject *key, *resolver, *scope;
    if (!PyArg_ParseTuple(args, "s#siO!OO", &text, &tlen, &filename, &first_line, &PyBytes_Type,
                          &key, &resolver, &scope))
        return NULL;
    kiln_argtype at[KILN_MAX_PARAMS], ret;
    int n = key_to_argtypes(key, at, KILN_MAX_PARAMS);
    if (n < 0) return NULL;
    kiln_options o;
    memset(&o, 0, sizeof o);
    CoreCall c;
    PyObject *result = NULL;
    if (core_open(&c, resolver) < 0) goto done;
    kiln_source src = {text, (size_t)tlen, filename, first_line, scope};
    if (kiln_infer_return(c.ctx, &src, at, n, &o, c_resolve, &c.R, &ret) < 0) {
        raise_compile_error(st, &c.sink, "kiln: typing failed");
        goto done;
    }
    if (ret.dtype == KILN_NDTYPES) result = PyBytes_FromStringAndSize("", 0);
    else result = PyBytes_FromStringAndSize((const char *)&ret, 4);
done:
    core_close(&c);
    return result;
}

void ext_text_diag(void *ud, const kiln_diag *d) {
    TextSink *t = ud;
    if (d->severity == KILN_ERROR) t->nerrors++;
    size_t len = strlen(d->formatted);
    if (t->n + len + 2 > t->cap) {
        size_t ncap = (t->cap + len + 2) * 2;
        char *nb = PyMem_RawRealloc(t->buf, ncap);
        if (!nb) return;
        t->buf = nb;
        t->cap = ncap;
    }
    if (t->n) t->buf[t->n++] = '\n';
    memcpy(t->buf + t->n, d->formatted, len);
    t->n += len;
    t->buf[t->n] = 0;
}

int ext_interrupted(void *ud) {
    (void)ud;
    /* Python runs signal handlers on the main thread only (PyErr_CheckSignals is
     * a no-op elsewhere): other threads' waits end by their own time limits. */
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = 0;
    if (PyErr_Occurred()) stop = 1; /* an earlier poll's KeyboardInterrupt */
    else if (PyErr_CheckSignals() < 0) stop = 1; /* the exception stays set for the caller */
    PyGILState_Release(g);
    return stop;
}

void ext_raise_text(ModState *st, TextSink *t, const char *fallback) {
    if (PyErr_Occurred()) return; /* an interrupt's KeyboardInterrupt stands */
    PyObject *msg = t->n ? PyUnicode_DecodeUTF8(t->buf, (Py_ssize_t)t->n, "replace")
                         : PyUnicode_FromString(fallback);
    if (msg) {
        PyErr_SetObject(st->CompileError, msg);
        Py_DECREF(msg);
    }
}

typedef struct {
    const char *src;
    size_t len;
} CpuBuild;

static int build_cpu(void *ud, kiln_ctx *ctx, void **blob, size_t *len, char kind[16]) {
    CpuBuild *b = ud;
    snprintf(kind, 16, "so");
    return kiln_cpu_build(ctx, b->src, b->len, blob, len);
}

/* cpu_build(source, name='', cache=True) -> (shared object bytes, cache key or '', hit) */
static PyObject *mod_cpu_build(PyObject *module, PyObject *args) {
    ModState *st = state_of(module);
    const char *src, *name = "";
    Py_ssize_t len;
    int use_cache = 1;
    if (!PyArg_ParseTuple(args, "s#|sp", &src, &len, &name, &use_cache)) return NULL;
    /* the C compiler's identity, once per build: KILN_CC may change between builds */
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) return PyErr_NoMemory();
    char *target = NULL;
    if (use_cache) {
        Py_BEGIN_ALLOW_THREADS
        target = strdup(kiln_cpu_target(ctx));
        Py_END_ALLOW_THREADS
    }
    kiln_ctx_free(ctx);
    CpuBuild b = {src, (size_t)len};
    ExtArtifact art;
    int rc = ext_cached_build(st, src, (size_t)len, target, 0, kiln_cpu_target_name(), name,
                              build_cpu, &b, &art);
    free(target);
    if (rc < 0) return NULL;
    PyObject *r = Py_BuildValue("(y#si)", (const char *)art.blob, (Py_ssize_t)art.len, art.key,
                                art.hit);
    free(art.blob);
    return r;
}

/* A new Entry for a program and key, without its loaded code. */
static EntryObject *entry_new(ModState *st, PyObject *prog, PyObject *key, PyObject *sig) {
    kiln_argtype at[KILN_MAX_PARAMS];
    int n = key_to_argtypes(key, at, KILN_MAX_PARAMS);
    if (n < 0) return NULL;
    ProgramObject *po = (ProgramObject *)prog;
    if (n != kiln_program_nparams(po->p)) {
        PyErr_SetString(PyExc_ValueError, "the key does not match the program's parameters");
        return NULL;
    }
    EntryObject *e = PyObject_New(EntryObject, st->EntryType);
    if (!e) return NULL;
    e->target = 0;
    e->cpu = NULL;
    e->cu = NULL;
    e->device = 0;
    e->st = st;
    e->debug = false;
    e->nparams = n;
    e->ptypes = PyMem_Malloc(sizeof(kiln_argtype) * (size_t)(n + 1));
    e->written = PyMem_Malloc((size_t)(n + 1));
    e->program = NULL;
    e->files = NULL;
    e->signature = NULL;
    if (!e->ptypes || !e->written) {
        Py_DECREF(e);
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(e->ptypes, at, sizeof(kiln_argtype) * (size_t)n);
    e->nslots = 0;
    for (int i = 0; i < n; i++) {
        e->written[i] = (kiln_program_param_flags(po->p, i) & KILN_PARAM_WRITTEN) != 0;
        e->nslots += at[i].is_array ? 1 + 2 * at[i].ndim : 1;
    }
    Py_INCREF(prog);
    e->program = prog;
    e->files = program_files(po, NULL);
    e->can_fail = kiln_program_file(po->p, 0) != NULL; /* error sites name their file */
    Py_INCREF(sig);
    e->signature = sig;
    if (!e->files) {
        Py_DECREF(e);
        return NULL;
    }
    return e;
}

/* cpu_entry(program, blob, key, signature) -> Entry: loads a built kernel */
static PyObject *mod_cpu_entry(PyObject *module, PyObject *args) {
    ModState *st = state_of(module);
    PyObject *prog, *key, *sig;
    Py_buffer blob;
    if (!PyArg_ParseTuple(args, "O!y*O!U", st->ProgramType, &prog, &blob, &PyBytes_Type, &key,
                          &sig))
        return NULL;
    EntryObject *e = entry_new(st, prog, key, sig);
    if (!e) {
        PyBuffer_Release(&blob);
        return NULL;
    }
    kiln_ctx *ctx = kiln_ctx_new();
    TextSink t = {NULL, 0, 0, 0};
    kiln_ctx_set_diag(ctx, ext_text_diag, &t);
    e->cpu = kiln_cpu_load(ctx, blob.buf, (size_t)blob.len,
                           kiln_program_entry(((ProgramObject *)prog)->p));
    kiln_ctx_free(ctx);
    PyBuffer_Release(&blob);
    if (!e->cpu) {
        ext_raise_text(st, &t, "kiln: cannot load the kernel");
        PyMem_RawFree(t.buf);
        Py_DECREF(e);
        return NULL;
    }
    PyMem_RawFree(t.buf);
    return (PyObject *)e;
}

/* cuda_entry(program, image, key, signature, device, debug) -> Entry: loads a cubin or PTX */
static PyObject *mod_cuda_entry(PyObject *module, PyObject *args) {
    ModState *st = state_of(module);
    PyObject *prog, *image, *key, *sig;
    int device, debug;
    if (!PyArg_ParseTuple(args, "O!O!O!Uip", st->ProgramType, &prog, &PyBytes_Type, &image,
                          &PyBytes_Type, &key, &sig, &device, &debug))
        return NULL;
    if (ext_use_device(st, device) < 0) return NULL;
    EntryObject *e = entry_new(st, prog, key, sig);
    if (!e) return NULL;
    e->target = 1;
    e->device = device;
    e->debug = debug != 0;
    int rc = kiln_cuda_load(st->cuda, device, PyBytes_AS_STRING(image),
                            kiln_program_entry(((ProgramObject *)prog)->p), &e->cu);
    if (rc != 0) {
        Py_DECREF(e);
        return ext_cuda_error(st, rc, "loading the compiled kernel");
    }
    return (PyObject *)e;
}

/* parse_signature(text) -> (ret: bytes (empty for void), args: bytes) */
static PyObject *mod_parse_signature(PyObject *module, PyObject *arg) {
    ModState *st = state_of(module);
    const char *text = PyUnicode_AsUTF8(arg);
    if (!text) return NULL;
    kiln_ctx *ctx = kiln_ctx_new();
    Sink sink = {PyList_New(0), 0};
    kiln_ctx_set_diag(ctx, sink_diag, &sink);
    kiln_argtype ret, at[KILN_MAX_PARAMS];
    int n = kiln_parse_signature(ctx, text, &ret, at, KILN_MAX_PARAMS);
    kiln_ctx_free(ctx);
    PyObject *result = NULL;
    if (n < 0) {
        raise_compile_error(st, &sink, "invalid signature");
    } else {
        result = Py_BuildValue("(y#y#)", (const char *)&ret, ret.dtype == KILN_NDTYPES ? 0 : 4,
                               (const char *)at, (Py_ssize_t)(4 * n));
    }
    Py_XDECREF(sink.list);
    return result;
}

/* argtype_str(key) -> str: "float32[::1], int64" */
static PyObject *mod_argtype_str(PyObject *module, PyObject *key) {
    kiln_argtype at[KILN_MAX_PARAMS];
    int n = key_to_argtypes(key, at, KILN_MAX_PARAMS);
    if (n < 0) return NULL;
    PyObject *parts = PyList_New(0);
    if (!parts) return NULL;
    for (int i = 0; i < n; i++) {
        char buf[96];
        if (at[i].dtype >= KILN_NDTYPES || (at[i].is_array && (at[i].ndim < 1 || at[i].ndim > KILN_MAX_NDIM))) {
            snprintf(buf, sizeof buf, "?");
        } else {
            kiln_argtype_format(&at[i], buf, sizeof buf);
        }
        PyObject *s = PyUnicode_FromString(buf);
        if (!s || PyList_Append(parts, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(parts);
            return NULL;
        }
        Py_DECREF(s);
    }
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *r = sep ? PyUnicode_Join(sep, parts) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(parts);
    return r;
}

/* key_of(*args) -> bytes: the type key a launch with these arguments uses */
static PyObject *mod_key_of(PyObject *module, PyObject *const *args, Py_ssize_t n) {
    if (n > KILN_MAX_PARAMS) {
        PyErr_SetString(PyExc_TypeError, "too many arguments");
        return NULL;
    }
    uint8_t key[4 * KILN_MAX_PARAMS];
    for (Py_ssize_t i = 0; i < n; i++) {
        Arg a;
        int rc = classify(ext_state(module), args[i], &a, NULL, NULL, (int)i, NULL);
        release_arg(&a);
        if (rc < 0) return NULL;
        memcpy(key + 4 * i, &a.t, 4);
    }
    return PyBytes_FromStringAndSize((const char *)key, 4 * n);
}

static PyObject *mod_cpu_compiler(PyObject *module, PyObject *unused) {
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) return PyErr_NoMemory();
    PyObject *r = PyUnicode_FromString(kiln_cpu_compiler(ctx));
    kiln_ctx_free(ctx);
    return r;
}

static PyMethodDef mod_methods[] = {
    {"translate", mod_translate, METH_VARARGS,
     "translate(text, filename, first_line, key, options, resolver, scope) -> Program"},
    {"infer_return", mod_infer_return, METH_VARARGS,
     "infer_return(text, filename, first_line, key, resolver, scope) -> bytes"},
    {"cpu_build", mod_cpu_build, METH_VARARGS,
     "cpu_build(source, name='', cache=True) -> (shared object, cache key, hit)"},
    {"cpu_entry", mod_cpu_entry, METH_VARARGS, "cpu_entry(program, blob, key, signature) -> Entry"},
    {"cuda_entry", mod_cuda_entry, METH_VARARGS,
     "cuda_entry(program, image, key, signature, device, debug) -> Entry"},
    {"parse_signature", mod_parse_signature, METH_O, "parse_signature(text) -> (ret, args)"},
    {"argtype_str", mod_argtype_str, METH_O, "argtype_str(key) -> str"},
    {"key_of", (PyCFunction)(void (*)(void))mod_key_of, METH_FASTCALL, "key_of(*args) -> bytes"},
    {"cpu_compiler", mod_cpu_compiler, METH_NOARGS, "the C compiler command of the CPU target"},
    {NULL, NULL, 0, NULL}};

/* ---- module ------------------------------------------------------------------------------------- */

static int mod_exec(PyObject *m) {
    ModState *st = state_of(m);
    st->CompileError = PyErr_NewExceptionWithDoc(
        "kiln.CompileError",
        "A kernel could not be compiled; the message gives file:line:col, the line, a caret "
        "and a hint.",
        PyExc_Exception, NULL);
    if (!st->CompileError || PyModule_AddObjectRef(m, "CompileError", st->CompileError) < 0)
        return -1;
    st->CudaError = PyErr_NewExceptionWithDoc(
        "kiln.CudaError", "The CUDA driver reported an error; the message has its name and text.",
        PyExc_RuntimeError, NULL);
    if (!st->CudaError || PyModule_AddObjectRef(m, "CudaError", st->CudaError) < 0) return -1;
    st->PerformanceWarning = PyErr_NewExceptionWithDoc(
        "kiln.PerformanceWarning",
        "A launch ran slower than it could (host arrays copied for a GPU launch, ...).",
        PyExc_UserWarning, NULL);
    if (!st->PerformanceWarning ||
        PyModule_AddObjectRef(m, "PerformanceWarning", st->PerformanceWarning) < 0)
        return -1;
    if (ext_devarray_types(m, st) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_devarray_functions) < 0) return -1;
    if (ext_host_types(m, st) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_host_functions) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_gpu_functions) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_cache_functions) < 0) return -1;
    pthread_mutex_init(&st->cache_warn_mu, NULL);
    st->CacheWarning = PyErr_NewExceptionWithDoc(
        "kiln.CacheWarning",
        "A cache tier could not be used (and is off for this process), or an entry failed its "
        "checks and is rebuilt.",
        PyExc_UserWarning, NULL);
    if (!st->CacheWarning || PyModule_AddObjectRef(m, "CacheWarning", st->CacheWarning) < 0)
        return -1;
    st->CacheError = PyErr_NewExceptionWithDoc(
        "kiln.CacheError", "A cache bundle could not be exported or imported.",
        PyExc_RuntimeError, NULL);
    if (!st->CacheError || PyModule_AddObjectRef(m, "CacheError", st->CacheError) < 0)
        return -1;
    st->ProgramType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &program_spec, NULL);
    st->EntryType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &entry_spec, NULL);
    st->DispatcherType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &disp_spec, NULL);
    st->LauncherType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &launcher_spec, NULL);
    if (!st->ProgramType || !st->EntryType || !st->DispatcherType || !st->LauncherType) return -1;
    if (PyModule_AddType(m, st->ProgramType) < 0 || PyModule_AddType(m, st->EntryType) < 0 ||
        PyModule_AddType(m, st->DispatcherType) < 0 || PyModule_AddType(m, st->LauncherType) < 0)
        return -1;
    st->str_compile_key = PyUnicode_InternFromString("_compile_key");
    st->str_resolve_target = PyUnicode_InternFromString("_resolve_target");
    st->str_cai = PyUnicode_InternFromString("__cuda_array_interface__");
    st->str_dlpack = PyUnicode_InternFromString("__dlpack__");
    st->str_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
    if (!st->str_compile_key || !st->str_resolve_target || !st->str_cai || !st->str_dlpack ||
        !st->str_dlpack_device)
        return -1;
    if (PyModule_AddStringConstant(m, "version", kiln_version()) < 0) return -1;
    return 0;
}

static int mod_traverse(PyObject *m, visitproc visit, void *arg) {
    ModState *st = state_of(m);
    Py_VISIT(st->CudaError);
    Py_VISIT(st->PerformanceWarning);
    Py_VISIT(st->CacheWarning);
    Py_VISIT(st->CacheError);
    Py_VISIT(st->DeviceArrayType);
    Py_VISIT(st->AllocType);
    Py_VISIT(st->StreamType);
    Py_VISIT(st->EventType);
    Py_VISIT(st->PinnedType);
    Py_VISIT(st->device_array_class);
    for (int i = 0; i < EXT_MAX_DEVICES; i++) Py_VISIT(st->err_files[i]);
    Py_VISIT(st->CompileError);
    Py_VISIT(st->ProgramType);
    Py_VISIT(st->EntryType);
    Py_VISIT(st->DispatcherType);
    Py_VISIT(st->LauncherType);
    return 0;
}

static int mod_clear(PyObject *m) {
    ModState *st = state_of(m);
    Py_CLEAR(st->CudaError);
    Py_CLEAR(st->PerformanceWarning);
    Py_CLEAR(st->CacheWarning);
    Py_CLEAR(st->CacheError);
    Py_CLEAR(st->DeviceArrayType);
    Py_CLEAR(st->AllocType);
    Py_CLEAR(st->StreamType);
    Py_CLEAR(st->EventType);
    Py_CLEAR(st->PinnedType);
    Py_CLEAR(st->device_array_class);
    for (int i = 0; i < EXT_MAX_DEVICES; i++) Py_CLEAR(st->err_files[i]);
    Py_CLEAR(st->str_resolve_target);
    Py_CLEAR(st->str_cai);
    Py_CLEAR(st->str_dlpack);
    Py_CLEAR(st->str_dlpack_device);
    Py_CLEAR(st->CompileError);
    Py_CLEAR(st->ProgramType);
    Py_CLEAR(st->EntryType);
    Py_CLEAR(st->DispatcherType);
    Py_CLEAR(st->LauncherType);
    Py_CLEAR(st->str_compile_key);
    return 0;
}

static void mod_free(void *m) {
    mod_clear((PyObject *)m);
    ext_cache_free(state_of((PyObject *)m));
}

static PyModuleDef_Slot mod_slots[] = {{Py_mod_exec, mod_exec}, {0, NULL}};

static struct PyModuleDef kiln_module = {
    PyModuleDef_HEAD_INIT, "kiln._kiln", "kiln's C core: translation, builds and the launch path.",
    sizeof(ModState), mod_methods, mod_slots, mod_traverse, mod_clear, mod_free};

PyMODINIT_FUNC PyInit__kiln(void);
PyMODINIT_FUNC PyInit__kiln(void) { return PyModuleDef_Init(&kiln_module); }
