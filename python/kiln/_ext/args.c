/* args.c: a launch's arguments, classified.
 *
 * Each argument becomes 4 bytes of the type key (array flag, dtype, ndim,
 * layout) and a value: float, int and bool by their type pointers (the common
 * case costs a few compares), a kiln DeviceArray from its C struct (a host-backed
 * one, KILN_TARGET=cpu, as a host array), else the
 * buffer protocol (NumPy arrays and scalars, memoryviews), else a foreign GPU
 * array (interop.c).  Scalars are converted to the compiled dtype at packing,
 * exactly or with an OverflowError.  Nothing here keeps state: an Arg lives on
 * the launching thread's stack and holds what it borrowed (a buffer view, a
 * DLPack tensor) until ext_release_arg.  pack.c packs them into an entry's slots.
 */
#include "args.h"

#include "records.h"

#include <string.h>

static const char *const dtype_names[KILN_NDTYPES] = {
    "bool", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64", "float16", "float32", "float64", "complex64", "complex128",
    "bfloat16"};

const char *ext_dtype_name(int d) { return d >= 0 && d < KILN_NDTYPES ? dtype_names[d] : "?"; }

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
    if (fmt[0] == 'Z' && (fmt[1] == 'f' || fmt[1] == 'd') && !fmt[2]) { /* complex */
        if (itemsize != (fmt[1] == 'f' ? 8 : 16)) return -1;
        *out = fmt[1] == 'f' ? KILN_COMPLEX64 : KILN_COMPLEX128;
        return 0;
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
        if (itemsize == 2) *out = KILN_FLOAT16;
        else if (itemsize == 4) *out = KILN_FLOAT32;
        else if (itemsize == 8) *out = KILN_FLOAT64;
        else return -1;
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

/* Whether a buffer format is a struct's ("T{...}"): a NumPy structured dtype. */
static bool is_record_format(const char *fmt) {
    if (!fmt) return false;
    if (*fmt == '@' || *fmt == '=' || *fmt == '<' || *fmt == '>' || *fmt == '!') fmt++;
    return fmt[0] == 'T' && fmt[1] == '{';
}

/* A NumPy fixed-width string's buffer format: "12s" (bytes), "12w" (UCS-4). */
static bool is_chars_format(const char *fmt) {
    if (!fmt) return false;
    if (*fmt == '@' || *fmt == '=' || *fmt == '<' || *fmt == '>' || *fmt == '!') fmt++;
    while (*fmt >= '0' && *fmt <= '9') fmt++;
    return (fmt[0] == 's' || fmt[0] == 'w') && !fmt[1];
}

static PyObject *param_name(PyObject *names, int i);

/* A NumPy array or scalar of ml_dtypes.bfloat16, whose buffer NumPy refuses to export
 * (a user dtype): the buffer of its uint16 view, the same bytes.  With the buffer's
 * error set on entry; true with it cleared and *v filled, false with it kept. */
static bool bf16_host_view(PyObject *o, Py_buffer *v) {
    PyObject *t, *ev, *tb;
    PyErr_Fetch(&t, &ev, &tb);
    bool ok = false;
    PyObject *dt = PyObject_GetAttrString(o, "dtype");
    PyObject *name = dt ? PyObject_GetAttrString(dt, "name") : NULL;
    const char *s = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (s && strcmp(s, "bfloat16") == 0) {
        PyObject *view = PyObject_CallMethod(o, "view", "s", "uint16");
        ok = view && PyObject_GetBuffer(view, v, PyBUF_RECORDS_RO) == 0 && v->itemsize == 2;
        if (!ok && view && v->obj) PyBuffer_Release(v);
        Py_XDECREF(view); /* the buffer holds the view, the view its array */
    }
    Py_XDECREF(dt);
    Py_XDECREF(name);
    if (ok) {
        Py_XDECREF(t);
        Py_XDECREF(ev);
        Py_XDECREF(tb);
    } else {
        PyErr_Clear();
        PyErr_Restore(t, ev, tb);
    }
    return ok;
}

/* The record id of a buffer of struct format, from its object's NumPy dtype; -1 with the
 * exception set (naming the argument) and the view released. */
static int record_of(PyObject *o, Py_buffer *v, PyObject *names, PyObject *kname, int i) {
    PyObject *dt = PyObject_GetAttrString(o, "dtype");
    int id = dt ? ext_record_id(dt) : -1;
    Py_XDECREF(dt);
    if (id >= 0 && ext_record_size(id) != v->itemsize) {
        PyErr_SetString(PyExc_TypeError, "its buffer's item size is not its dtype's");
        id = -1;
    }
    if (id >= 0) return id;
    char d[256];
    ext_arg_desc(d, sizeof d, names, kname, i);
    PyObject *t, *ev, *tb;
    PyErr_Fetch(&t, &ev, &tb);
    PyErr_NormalizeException(&t, &ev, &tb);
    PyErr_Format(PyExc_TypeError, "%s has a structured dtype kernels cannot take: %S", d,
                 ev ? ev : Py_None);
    Py_XDECREF(t);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
    PyBuffer_Release(v);
    return -1;
}

static PyObject *param_name(PyObject *names, int i) {
    if (names && PyTuple_Check(names) && i < PyTuple_GET_SIZE(names))
        return PyTuple_GET_ITEM(names, i);
    return NULL;
}

/* Formats "argument 'x' of kernel 'k'" into buf. */
void ext_arg_desc(char *buf, size_t n, PyObject *names, PyObject *kname, int i) {
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

void ext_arg_count_error(PyObject *names, PyObject *kname, int nparams, Py_ssize_t n) {
    /* a kernel defined as a method: nothing binds its self (Numba's neither) */
    char first[64];
    ext_arg_desc(first, sizeof first, names, kname, 0);
    PyErr_Format(PyExc_TypeError, "kernel '%U' takes %d argument%s but %zd were given%s", kname,
                 nparams, nparams == 1 ? "" : "s", n,
                 n == nparams - 1 && strncmp(first, "argument 'self' ", 16) == 0
                     ? " (its first parameter is 'self': a kernel is not bound to an instance, "
                       "so pass every argument, or define it outside the class)"
                     : "");
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
    case KILN_FLOAT16: { uint16_t x; memcpy(&x, p, 2); v->f = kiln_f16_to_f64(x); return 0; }
    case KILN_BFLOAT16: { uint16_t x; memcpy(&x, p, 2); v->f = kiln_bf16_to_f64(x); return 0; }
    case KILN_FLOAT32: { float x; memcpy(&x, p, 4); v->f = x; return 0; }
    case KILN_FLOAT64: { double x; memcpy(&x, p, 8); v->f = x; return 0; }
    default: return -1;
    }
}

/* Remembers the type of o, a NumPy scalar whose buffer v lies inside it (NumPy's scalar
 * objects hold their value after the object header: PyArrayScalar_VAL), so that the next
 * argument of that exact type is read in place.  Only NumPy's own types ("numpy.*"; a
 * subclass of one is named after its module) and only numbers: a record or a time is
 * read through its buffer each time. */
static void remember_np_scalar(ModState *st, PyObject *o, const Py_buffer *v, kiln_dtype dt) {
    PyTypeObject *tp = Py_TYPE(o);
    const ptrdiff_t off = (const char *)v->buf - (const char *)o;
    if (st->n_np_scalar >= EXT_NP_SCALAR_TYPES || dt > KILN_COMPLEX128 ||
        strncmp(tp->tp_name, "numpy.", 6) != 0 || off < (ptrdiff_t)sizeof(PyObject) ||
        off > 255 || off + v->itemsize > tp->tp_basicsize || v->itemsize != ext_dtype_size(dt))
        return;
    for (int k = 0; k < st->n_np_scalar; k++)
        if (st->np_scalar[k].tp == tp) return;
    st->np_scalar[st->n_np_scalar].tp = (PyTypeObject *)Py_NewRef((PyObject *)tp);
    st->np_scalar[st->n_np_scalar].dtype = (uint8_t)dt;
    st->np_scalar[st->n_np_scalar].off = (uint8_t)off;
    st->n_np_scalar++;
}

/* A complex scalar's parts from NumPy's layout (real, imaginary). */
static void complex_from_memory(const void *p, kiln_dtype d, Arg *a) {
    if (d == KILN_COMPLEX64) {
        float x[2];
        memcpy(x, p, 8);
        a->v.f = x[0];
        a->im = x[1];
    } else {
        double x[2];
        memcpy(x, p, 16);
        a->v.f = x[0];
        a->im = x[1];
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

#define EXT_GENERIC_UNIT 1 /* kiln/_records.py's GENERIC_UNIT */

/* NumPy's datetime64 and timedelta64: kernels take them as int64 counts of their unit
 * (Numba's datetime arithmetic within one unit), and the arguments of one launch must
 * share it (ext_time_clash).  The unit code of o's dtype (kiln/_records.py), registering
 * the dtype as records.c does; 0 when o is not of such a dtype, -1 with an exception. */
static int time_unit_of(PyObject *o) {
    PyObject *dt = PyObject_GetAttrString(o, "dtype");
    if (!dt) {
        PyErr_Clear();
        return 0;
    }
    PyObject *k = PyObject_GetAttrString(dt, "kind");
    const char *ks = k && PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
    bool time = ks && (ks[0] == 'M' || ks[0] == 'm') && !ks[1];
    Py_XDECREF(k);
    PyErr_Clear();
    int id = time ? ext_record_id(dt) : -2;
    Py_DECREF(dt);
    if (id == -2) return 0;
    return id < 0 ? -1 : ext_record_time(id);
}

/* Whether o is a NumPy array (or of a subclass): a 0-d one is an array, a[()], as Numba
 * passes it, where a NumPy scalar, whose buffer is 0-d too, is a value. */
static bool is_ndarray(PyObject *o) {
    for (PyTypeObject *t = Py_TYPE(o); t; t = t->tp_base)
        if (strcmp(t->tp_name, "numpy.ndarray") == 0) return true;
    return false;
}

/* A datetime64 or timedelta64 array (which exports no buffer): v views its int64 counts
 * (a.view('int64'), the same memory).  The unit code, 0 when o is no such array (the
 * pending exception kept), or -1 with an exception. */
static int time_buffer(PyObject *o, Py_buffer *v) {
    if (strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") != 0) return 0;
    PyObject *t, *ev, *tb;
    PyErr_Fetch(&t, &ev, &tb);
    int unit = time_unit_of(o);
    if (unit <= 0) {
        if (unit == 0) PyErr_Restore(t, ev, tb);
        else {
            Py_XDECREF(t);
            Py_XDECREF(ev);
            Py_XDECREF(tb);
        }
        return unit;
    }
    Py_XDECREF(t);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
    if (unit == EXT_GENERIC_UNIT) {
        PyErr_SetString(PyExc_TypeError,
                        "a datetime64 or timedelta64 array without a unit: kernels take them "
                        "with a unit (datetime64[D], timedelta64[ns]...)");
        return -1;
    }
    PyObject *iv = PyObject_CallMethod(o, "view", "s", "int64");
    if (!iv) return -1;
    int rc = PyObject_GetBuffer(iv, v, PyBUF_RECORDS_RO); /* the buffer keeps iv */
    Py_DECREF(iv);
    return rc < 0 ? -1 : unit;
}

int ext_time_clash(const Arg *a, int i, PyObject *const *args, PyObject *names,
                   PyObject *kname) {
    for (int j = 0; j < i; j++) {
        if (!a[j].time || a[j].time == a[i].time || a[j].time == EXT_GENERIC_UNIT ||
            a[i].time == EXT_GENERIC_UNIT)
            continue; /* NaT without a unit matches any */
        char d1[256], d2[256];
        ext_arg_desc(d1, sizeof d1, names, kname, j);
        ext_arg_desc(d2, sizeof d2, names, kname, i);
        PyObject *t1 = PyObject_GetAttrString(args[j], "dtype");
        PyObject *t2 = t1 ? PyObject_GetAttrString(args[i], "dtype") : NULL;
        if (t2)
            PyErr_Format(PyExc_TypeError,
                         "%s is %S but %s is %S: kernels take datetime64 and timedelta64 as "
                         "int64 counts of their unit, so the arguments of one launch share one "
                         "unit; convert with a.astype(...)",
                         d1, t1, d2, t2);
        Py_XDECREF(t1);
        Py_XDECREF(t2);
        return -1;
    }
    return 0;
}

static void contiguous_strides(Arg *a);

/* Whether a record scalar's memory is read-only: its buffer says so even for an element
 * of a writable array, so NumPy's flags decide (a view of a read-only array, of bytes or
 * of a read-only mapping is not writeable); an object without them, its buffer.  1, 0,
 * or -1 with an exception. */
static int record_readonly(PyObject *o, const Py_buffer *v) {
    PyObject *flags = PyObject_GetAttrString(o, "flags");
    if (!flags) {
        PyErr_Clear();
        return v->readonly != 0;
    }
    PyObject *w = PyObject_GetAttrString(flags, "writeable");
    Py_DECREF(flags);
    if (!w) {
        PyErr_Clear();
        return v->readonly != 0;
    }
    int t = PyObject_IsTrue(w);
    Py_DECREF(w);
    return t < 0 ? -1 : !t;
}

/* A device array's byte strides as element strides, and its layout. */
static int device_layout(Arg *a, const int64_t *bstrides, int isz, PyObject *names,
                         PyObject *kname, int i) {
    if (isz <= 0) {
        char d[256];
        ext_arg_desc(d, sizeof d, names, kname, i);
        PyErr_Format(PyExc_TypeError, "%s has elements of 0 bytes, which kernels cannot take", d);
        return -1;
    }
    for (int k = 0; k < a->t.ndim; k++) {
        if (bstrides[k] % isz != 0) {
            char d[256];
            ext_arg_desc(d, sizeof d, names, kname, i);
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

/* A mapped or managed array (kiln's MappedArray) made without a stream: its device
 * address is its host address (unified addressing, as its __cuda_array_interface__
 * says), read from its buffer here; building that interface's dict in Python cost 2 us
 * a launch.  1 with fa filled in, 0 to take the interface's path (an array made on a
 * stream, whose rule the interface applies, or a dtype the buffer does not name), -1
 * with an exception. */
static int mapped_array(ModState *st, PyObject *o, ForeignArray *fa) {
    PyObject *s = PyObject_GetAttrString(o, "stream");
    if (!s) return -1;
    int plain = PyLong_CheckExact(s) && PyLong_AsLong(s) == 0;
    Py_DECREF(s);
    if (!plain) return 0;
    Py_buffer v;
    if (PyObject_GetBuffer(o, &v, PyBUF_RECORDS_RO) < 0) {
        PyErr_Clear();
        return 0;
    }
    kiln_dtype dt;
    int ok = v.ndim > 0 && v.ndim <= KILN_MAX_NDIM && format_dtype(v.format, v.itemsize, &dt) == 0;
    if (ok) {
        fa->keep = NULL;
        fa->ptr = (uint64_t)(uintptr_t)v.buf;
        fa->ndim = v.ndim;
        fa->dtype = dt;
        fa->device = st->current_device; /* mapped memory is portable to every device */
        fa->readonly = v.readonly;
        int64_t e = v.itemsize;
        for (int k = v.ndim - 1; k >= 0; k--) {
            fa->shape[k] = v.shape[k];
            fa->strides[k] = v.strides ? v.strides[k] : e;
            e *= v.shape[k];
        }
    }
    PyBuffer_Release(&v);
    return ok;
}

/* a->t in one 4-byte store (see ext_classify): GCC splits a struct assignment of bytes
 * into byte stores, so the word is built in a register */
static inline void set_t(Arg *a, uint8_t is_array, uint8_t dtype, uint8_t ndim, uint8_t layout) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t w = (uint32_t)is_array | (uint32_t)dtype << 8 | (uint32_t)ndim << 16 |
                 (uint32_t)layout << 24;
    _Static_assert(offsetof(kiln_argtype, is_array) == 0 && offsetof(kiln_argtype, dtype) == 1 &&
                       offsetof(kiln_argtype, ndim) == 2 && offsetof(kiln_argtype, layout) == 3,
                   "kiln_argtype's bytes");
    memcpy(&a->t, &w, 4);
#else
    a->t = (kiln_argtype){is_array, dtype, ndim, layout};
#endif
}

/* The tag of an int subclass that is an enum (IntEnum, IntFlag: it has _member_map_): 1 to
 * KILN_MAX_ENUM_TAGS, the same for every member of one class in this process; 0 for other
 * int subclasses (and classes past the limit, which then compare as plain ints); -1 with an
 * exception.  Kernels tell members of two classes apart by it (`a is b`, sema_expr.c). */
static int enum_tag(ModState *st, PyTypeObject *tp) {
    if (!st->enum_tags && !(st->enum_tags = PyDict_New())) return -1;
    PyObject *got = PyDict_GetItemWithError(st->enum_tags, (PyObject *)tp);
    if (got) return (int)PyLong_AsLong(got);
    if (PyErr_Occurred()) return -1;
    int tag = 0;
    if (PyObject_HasAttrString((PyObject *)tp, "_member_map_") &&
        st->enum_ntags < KILN_MAX_ENUM_TAGS)
        tag = ++st->enum_ntags;
    PyObject *v = PyLong_FromLong(tag);
    if (!v || PyDict_SetItem(st->enum_tags, (PyObject *)tp, v) < 0) {
        Py_XDECREF(v);
        return -1;
    }
    Py_DECREF(v);
    return tag;
}

int ext_classify(ModState *st, PyObject *o, Arg *a, PyObject *names, PyObject *kname, int i,
                 void *stream) {
    a->has_view = false;
    a->on_gpu = false;
    a->misaligned = false;
    a->stage = NULL;
    a->stage0 = NULL;
    a->has_foreign = false;
    a->tmp = 0;
    a->time = 0;
    /* a->t is written whole (one 4-byte store) on the common paths: the launch copies it
     * into the type key with one 4-byte load, which waits for byte stores to retire
     * (a store-forwarding stall per argument) but forwards from a word store */
    set_t(a, 0, 0, 0, 0);
    /* the exact types first (a pointer compare each); a failed PyObject_TypeCheck costs a
     * walk of the type's bases */
    if (PyFloat_CheckExact(o)) {
        set_t(a, 0, KILN_FLOAT64, 0, 0);
        a->v.f = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    /* a DeviceArray (exactly), else the scalars, before the walk of the type's bases that
     * the check for a DeviceArray subclass makes */
    const bool dev = st && ((PyObject *)Py_TYPE(o) == st->device_array_class ||
                            Py_IS_TYPE(o, st->DeviceArrayType));
    if (!dev) {
        /* a NumPy scalar of a type met before: its value where it sits */
        for (int k = 0; st && k < st->n_np_scalar; k++)
            if (Py_TYPE(o) == st->np_scalar[k].tp) {
                const kiln_dtype dt = (kiln_dtype)st->np_scalar[k].dtype;
                const char *p = (const char *)o + st->np_scalar[k].off;
                set_t(a, 0, dt, 0, 0);
                if (dt == KILN_COMPLEX64 || dt == KILN_COMPLEX128) complex_from_memory(p, dt, a);
                else scalar_from_memory(p, dt, &a->v);
                return 0;
            }
        if (PyBool_Check(o)) {
            set_t(a, 0, KILN_BOOL, 0, 0);
            a->v.i = o == Py_True;
            return 0;
        }
        if (PyLong_Check(o)) {
            int overflow;
            long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
            /* an IntEnum member: its value, tagged with its class (kiln_argtype's ndim) */
            int tag = PyLong_CheckExact(o) ? 0 : enum_tag(st, Py_TYPE(o));
            if (tag < 0) return -1;
            if (overflow == 0) {
                if (x == -1 && PyErr_Occurred()) return -1;
                set_t(a, 0, KILN_INT64, (uint8_t)tag, 0);
                a->v.i = x;
                return 0;
            }
            if (overflow > 0) {
                unsigned long long u = PyLong_AsUnsignedLongLong(o);
                if (!PyErr_Occurred()) {
                    set_t(a, 0, KILN_UINT64, (uint8_t)tag, 0);
                    a->v.u = u;
                    return 0;
                }
                PyErr_Clear();
            }
            char d[256];
            ext_arg_desc(d, sizeof d, names, kname, i);
            PyErr_Format(PyExc_OverflowError, "%s is an int too large for 64 bits", d);
            return -1;
        }
        if (PyFloat_Check(o)) {
            a->t.dtype = KILN_FLOAT64;
            a->v.f = PyFloat_AsDouble(o);
            return 0;
        }
        if (PyComplex_Check(o)) {
            a->t.dtype = KILN_COMPLEX128;
            a->v.f = PyComplex_RealAsDouble(o);
            a->im = PyComplex_ImagAsDouble(o);
            return 0;
        }
    }
    if (dev || (st && PyObject_TypeCheck(o, st->DeviceArrayType))) {
        DeviceArrayObject *d = (DeviceArrayObject *)o;
        if (d->device == EXT_HOST_DEVICE) {
            /* host memory (KILN_TARGET=cpu): a host array, as a NumPy array's buffer
             * would be; a GPU launch stages it like one (launch.c reads the view) */
            a->view.buf = (void *)(uintptr_t)d->ptr;
            a->view.itemsize = ext_dtype_size(d->dtype);
        } else {
            a->on_gpu = true;
            a->dptr = d->ptr;
            a->device = d->device;
        }
        a->readonly = false;
        uint8_t dt = d->dtype;
        if (d->dtype >= KILN_RECORD0 && (a->time = ext_record_time(d->dtype - KILN_RECORD0)))
            dt = KILN_INT64; /* datetime64/timedelta64: its int64 counts */
        if (d->ndim == 0) { /* a 0-d array: its one element, read and written as a[()] */
            set_t(a, 1, dt, 0, KILN_LAYOUT_C);
            return 0;
        }
        /* element loops, not memcpy: ndim is small, and the library call cost more */
        for (int k = 0; k < d->ndim; k++) a->shape[k] = d->shape[k];
        if (d->layout) { /* computed when the array was made */
            set_t(a, 1, dt, (uint8_t)d->ndim, d->layout);
            for (int k = 0; k < d->ndim; k++) a->strides[k] = d->estrides[k];
            return 0;
        }
        set_t(a, 1, dt, (uint8_t)d->ndim, 0);
        return device_layout(a, d->strides, ext_dtype_size(d->dtype), names, kname, i);
    }
    if (PyObject_CheckBuffer(o)) {
        Py_buffer *v = &a->view;
        bool bf16 = false;
        /* a mapped or managed array: the GPU reads and writes it where it is, through the
         * device address its __cuda_array_interface__ gives (no copy) */
        if (st && st->mapped_class && PyObject_TypeCheck(o, st->mapped_class)) {
            int rc = mapped_array(st, o, &a->fa);
            if (rc == 0) rc = ext_foreign_array(st, o, stream, &a->fa);
            if (rc == 1) goto foreign;
            if (rc < 0) goto foreign_error;
        }
        if (PyObject_GetBuffer(o, v, PyBUF_RECORDS_RO) < 0) {
            int unit = time_buffer(o, v);
            if (unit < 0) return -1;
            if (unit > 0) {
                a->time = unit;
                goto have_buffer;
            }
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
            if (bf16_host_view(o, v)) {
                bf16 = true;
                goto have_buffer;
            }
            char d[256];
            ext_arg_desc(d, sizeof d, names, kname, i);
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
    have_buffer:;
        kiln_dtype dt;
        int rc = format_dtype(v->format, v->itemsize, &dt);
        if (bf16 && rc == 0 && dt == KILN_UINT16) dt = KILN_BFLOAT16;
        int recid = -1;
        if (rc < 0 && (is_record_format(v->format) || (is_chars_format(v->format) && v->ndim > 0))) {
            recid = record_of(o, v, names, kname, i);
            if (recid < 0) return -1;
            rc = 0;
            dt = (kiln_dtype)(KILN_RECORD0 + recid);
        }
        if (rc < 0) {
            char d[256];
            ext_arg_desc(d, sizeof d, names, kname, i);
            if (rc == -2)
                PyErr_Format(PyExc_TypeError,
                             "%s has a non-native byte order; convert it with a.astype(a.dtype.newbyteorder('='))",
                             d);
            else
                PyErr_Format(PyExc_TypeError,
                             "%s has element format '%s', which kernels do not support (use bool, "
                             "int8..int64, uint8..uint64, float16, float32, float64, complex64 or "
                             "complex128)",
                             d, v->format ? v->format : "B");
            PyBuffer_Release(v);
            return -1;
        }
        a->t.dtype = (uint8_t)dt;
        if (dt == KILN_UINT8 && v->ndim == 1 && v->len == 8 &&
            strncmp(Py_TYPE(o)->tp_name, "numpy.", 6) == 0) {
            /* a datetime64 or timedelta64 scalar exports its 8 bytes: its int64 count */
            int unit = time_unit_of(o);
            if (unit != 0) {
                if (unit > 0) {
                    memcpy(&a->v.i, v->buf, 8);
                    a->t.dtype = KILN_INT64;
                    a->time = unit;
                }
                PyBuffer_Release(v);
                return unit < 0 ? -1 : 0;
            }
        }
        if (v->ndim == 0 && recid >= 0) {
            /* a record (numpy.void, numpy.record): passed by reference, as Numba does, so
             * the kernel's writes land in the memory it views (a record taken from an
             * array is a view of that array's element, though its buffer says read-only) */
            a->has_view = true;
            a->t.is_array = 1;
            a->t.layout = 0; /* as a signature's record parses */
            int ro = record_readonly(o, v);
            if (ro < 0) return -1;
            a->readonly = ro != 0;
            if ((uintptr_t)v->buf % (uintptr_t)ext_record_align(recid) != 0) {
                char d[256];
                ext_arg_desc(d, sizeof d, names, kname, i);
                PyErr_Format(PyExc_ValueError, "%s is a record not aligned to %d bytes; pass a copy",
                             d, ext_record_align(recid));
                return -1;
            }
            return 0;
        }
        if (v->ndim == 0 && !is_ndarray(o)) { /* a NumPy scalar (np.float32(2)): its value */
            if (dt == KILN_COMPLEX64 || dt == KILN_COMPLEX128) complex_from_memory(v->buf, dt, a);
            else scalar_from_memory(v->buf, dt, &a->v);
            if (st && !bf16 && !a->time) remember_np_scalar(st, o, v, dt);
            PyBuffer_Release(v);
            return 0;
        }
        a->has_view = true;
        if (v->ndim > KILN_MAX_NDIM) {
            char d[256];
            ext_arg_desc(d, sizeof d, names, kname, i);
            PyErr_Format(PyExc_TypeError, "%s has %d dimensions; kernels take at most %d", d,
                         v->ndim, KILN_MAX_NDIM);
            return -1;
        }
        Py_ssize_t isz = v->itemsize;
        if (isz <= 0) {
            char d[256];
            ext_arg_desc(d, sizeof d, names, kname, i);
            PyErr_Format(PyExc_TypeError, "%s has elements of 0 bytes, which kernels cannot take", d);
            PyBuffer_Release(v);
            return -1;
        }
        /* records need their fields' alignment, not their size's */
        Py_ssize_t align = recid >= 0 ? ext_record_align(recid) : isz;
        /* a GPU launch copies the bytes into aligned memory, and so does a CPU launch
         * (ext_pack), which otherwise reads the memory in place */
        a->misaligned = ((uintptr_t)v->buf % (uintptr_t)align) != 0;
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
                ext_arg_desc(d, sizeof d, names, kname, i);
                PyErr_Format(PyExc_ValueError,
                             "%s has strides that are not a multiple of its element size; pass a copy",
                             d);
                return -1;
            }
            a->strides[k] = s / isz;
        }
        a->readonly = v->readonly != 0;
        uint8_t lay = (uint8_t)layout_of(v->ndim, a->shape, a->strides);
        set_t(a, 1, a->t.dtype, (uint8_t)v->ndim, lay);
        if (lay != 'A') contiguous_strides(a);
        return 0;
    }
    if (st) {
        int rc = ext_foreign_array(st, o, stream, &a->fa);
        if (rc < 0) {
        foreign_error:;
            char d[256];
            ext_arg_desc(d, sizeof d, names, kname, i);
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
            if (a->fa.ndim == 0) { /* a 0-d array: its one element, a[()] */
                a->t.layout = KILN_LAYOUT_C;
                return 0;
            }
            memcpy(a->shape, a->fa.shape, sizeof(int64_t) * (size_t)a->fa.ndim);
            return device_layout(a, a->fa.strides, ext_dtype_size(a->fa.dtype), names, kname, i);
        }
    }
    char d[256];
    ext_arg_desc(d, sizeof d, names, kname, i);
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
