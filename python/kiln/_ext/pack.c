/* pack.c: classified arguments (args.c) packed into the 8-byte slots of an entry
 * (docs/abi.md): scalars converted to the compiled dtype exactly or with an
 * OverflowError, arrays as data pointer, shape and strides, pointers as addresses; and
 * the CPU target's aligned copies of misaligned host arrays.
 */
#include "args.h"

#include "devarray.h"
#include "records.h"

#include <string.h>

/* Stores a scalar argument converted to dtype d into an 8-byte slot (two for
 * complex128: docs/abi.md). */
static int pack_scalar(const Arg *a, kiln_dtype d, int64_t *slot, PyObject *names,
                       PyObject *kname, int i) {
    *slot = 0;
    kiln_dtype from = (kiln_dtype)a->t.dtype;
    bool from_complex = from == KILN_COMPLEX64 || from == KILN_COMPLEX128;
    if (d == KILN_COMPLEX64 || d == KILN_COMPLEX128) {
        bool ff = from == KILN_FLOAT16 || from == KILN_FLOAT32 || from == KILN_FLOAT64 ||
                  from == KILN_BFLOAT16 || from_complex;
        bool fu = from >= KILN_UINT8 && from <= KILN_UINT64;
        double re = ff ? a->v.f : fu ? (double)a->v.u : (double)a->v.i;
        double im = from_complex ? a->im : 0.0;
        if (d == KILN_COMPLEX64) {
            float x[2] = {(float)re, (float)im};
            memcpy(slot, x, 8);
        } else {
            double x[2] = {re, im};
            memcpy(slot, x, 16);
        }
        return 0;
    }
    if (from_complex) {
        char desc[256];
        ext_arg_desc(desc, sizeof desc, names, kname, i);
        PyErr_Format(PyExc_TypeError, "%s is complex, but the kernel was compiled for %s", desc,
                     ext_dtype_name(d));
        return -1;
    }
    bool from_float = from == KILN_FLOAT16 || from == KILN_FLOAT32 || from == KILN_FLOAT64 ||
                      from == KILN_BFLOAT16;
    bool from_unsigned = from >= KILN_UINT8 && from <= KILN_UINT64;
    double f = from_float ? a->v.f : from_unsigned ? (double)a->v.u : (double)a->v.i;
    if (d == KILN_FLOAT32) {
        float x = (float)f;
        memcpy(slot, &x, 4);
        return 0;
    }
    if (d == KILN_FLOAT16) {
        /* kernels hold a float16 in a float32 (rt_half.h): its value, rounded once */
        float x = (float)kiln_f16_to_f64(kiln_f16_from_f64(f));
        memcpy(slot, &x, 4);
        return 0;
    }
    if (d == KILN_BFLOAT16) { /* the same: a f32 that holds the value rounded once */
        float x = (float)kiln_bf16_to_f64(kiln_bf16_from_f64(f));
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
    /* An integer in the range of the unsigned type of the parameter's width is taken as
     * its bits, as C and Numba take a mask: 0xFFFFFFFF for an int32 is -1.  Anything
     * wider is still an OverflowError (Numba would wrap it silently). */
    if (!from_float && !neg) {
        bool bits = (d == KILN_INT8 && uv <= UINT8_MAX) || (d == KILN_INT16 && uv <= UINT16_MAX) ||
                    (d == KILN_INT32 && uv <= UINT32_MAX) || d == KILN_INT64;
        if (bits) {
            iv = d == KILN_INT8 ? (int8_t)(uint8_t)uv
                 : d == KILN_INT16 ? (int16_t)(uint16_t)uv
                 : d == KILN_INT32 ? (int32_t)(uint32_t)uv : (int64_t)uv;
            from_unsigned = false;
        }
    }
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
    ext_arg_desc(desc, sizeof desc, names, kname, i);
    PyErr_Format(PyExc_OverflowError, "%s does not fit the compiled type %s", desc,
                 ext_dtype_name(d));
    return -1;
}

/* A pointer parameter (KILN_LAYOUT_PTR, Numba's CPointer) takes an integer address,
 * packed as it is: 0 included (the kernel owns what it dereferences, as in C). */
static int pack_pointer(const Arg *a, int64_t *slot, PyObject *names, PyObject *kname, int i) {
    kiln_dtype from = (kiln_dtype)a->t.dtype;
    char desc[256];
    if (a->t.is_array || from < KILN_INT8 || from > KILN_UINT64) {
        ext_arg_desc(desc, sizeof desc, names, kname, i);
        PyErr_Format(PyExc_TypeError, "%s is a pointer (CPointer): pass an integer address, "
                     "such as __cuda_array_interface__['data'][0]", desc);
        return -1;
    }
    if (from <= KILN_INT64 && a->v.i < 0) {
        ext_arg_desc(desc, sizeof desc, names, kname, i);
        PyErr_Format(PyExc_OverflowError, "%s is a pointer, but the address %lld is negative",
                     desc, (long long)a->v.i);
        return -1;
    }
    memcpy(slot, &a->v.u, 8);
    return 0;
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
        int rc = ext_classify(ext_state(module), args[i], &a, NULL, NULL, (int)i, NULL);
        ext_release_arg(&a);
        if (rc < 0) return NULL;
        memcpy(key + 4 * i, &a.t, 4);
    }
    return PyBytes_FromStringAndSize((const char *)key, 4 * n);
}

/* scalar_types() -> [(type, dtype code, offset)]: the NumPy scalar types whose arguments
 * are read in place (args.c), for tests */
static PyObject *mod_scalar_types(PyObject *m, PyObject *unused) {
    (void)unused;
    ModState *st = ext_state(m);
    PyObject *l = PyList_New(0);
    for (int k = 0; l && k < st->n_np_scalar; k++) {
        PyObject *t = Py_BuildValue("(Oii)", (PyObject *)st->np_scalar[k].tp,
                                    st->np_scalar[k].dtype, st->np_scalar[k].off);
        if (!t || PyList_Append(l, t) < 0) Py_CLEAR(l);
        Py_XDECREF(t);
    }
    return l;
}

PyMethodDef ext_args_functions[] = {
    {"key_of", (PyCFunction)(void (*)(void))mod_key_of, METH_FASTCALL, "key_of(*args) -> bytes"},
    {"scalar_types", mod_scalar_types, METH_NOARGS,
     "scalar_types() -> [(type, dtype code, offset)]: NumPy scalar types read in place"},
    {NULL, NULL, 0, NULL}};

/* A misaligned host array of a CPU launch: its bytes copied into memory whose element 0
 * sits on a 64-byte boundary (so every element is aligned as its type needs). */
static int stage_cpu(Arg *a, int ndim, PyObject *names, PyObject *kname, int i) {
    for (int k = 0; k < ndim; k++)
        if (a->shape[k] == 0) return 0; /* no element: nothing is read through the pointer */
    int64_t lo, hi, isz = a->view.itemsize;
    ext_byte_span(isz, ndim, a->shape, a->strides, isz, &lo, &hi);
    size_t bytes = (size_t)(hi - lo);
    char *p = malloc(bytes + 64);
    if (!p) {
        char d[256];
        ext_arg_desc(d, sizeof d, names, kname, i);
        PyErr_Format(PyExc_MemoryError,
                     "%s is not aligned to its elements; the aligned copy the CPU target "
                     "reads instead needs %zu bytes, which could not be allocated",
                     d, bytes);
        return -1;
    }
    uintptr_t e0 = ((uintptr_t)p - (uintptr_t)lo + 63) & ~(uintptr_t)63;
    memcpy((char *)(e0 + (uintptr_t)lo), (const char *)a->view.buf + lo, bytes);
    a->stage = p;
    a->stage0 = (char *)e0;
    return 0;
}

void ext_unstage_cpu(const EntryObject *e, Arg *a, int n) {
    for (int i = 0; i < n; i++) {
        if (!a[i].stage) continue;
        const kiln_argtype *pt = &e->ptypes[i];
        int ndim = pt->ndim;
        if (e->written[i]) {
            int64_t isz = a[i].view.itemsize, idx[KILN_MAX_NDIM] = {0};
            for (;;) { /* every element, odometer order */
                int64_t off = 0;
                for (int k = 0; k < ndim; k++) off += idx[k] * a[i].strides[k] * isz;
                memcpy((char *)a[i].view.buf + off, a[i].stage0 + off, (size_t)isz);
                int k = ndim - 1;
                while (k >= 0 && ++idx[k] == a[i].shape[k]) idx[k--] = 0;
                if (k < 0) break;
            }
        }
        free(a[i].stage);
        a[i].stage = NULL;
        a[i].stage0 = NULL;
    }
}

int ext_pack(const EntryObject *e, Arg *a, int n, PyObject *names, PyObject *kname,
             int64_t *slots, int *off, bool gpu) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        const kiln_argtype *pt = &e->ptypes[i];
        off[i] = s;
        if (pt->is_array) {
            if (e->written[i] && a[i].readonly) {
                char desc[256];
                ext_arg_desc(desc, sizeof desc, names, kname, i);
                PyErr_Format(PyExc_ValueError,
                             "%s is read-only, but the kernel writes to it (a store, an atomic, "
                             "or ffi.from_buffer, whose pointer may be written through)",
                             desc);
                return -1;
            }
            if (gpu) {
                slots[s++] = (int64_t)(a[i].on_gpu ? a[i].dptr : a[i].tmp - (uint64_t)a[i].tmp_lo);
            } else if (a[i].misaligned) {
                if (!a[i].stage && stage_cpu(&a[i], pt->ndim, names, kname, i) < 0) return -1;
                slots[s++] = (int64_t)(uintptr_t)(a[i].stage0 ? a[i].stage0 : a[i].view.buf);
            } else {
                slots[s++] = (int64_t)(uintptr_t)a[i].view.buf;
            }
            for (int k = 0; k < pt->ndim; k++) slots[s++] = a[i].shape[k];
            for (int k = 0; k < pt->ndim; k++) slots[s++] = a[i].strides[k];
        } else if (pt->layout == KILN_LAYOUT_PTR) {
            if (pack_pointer(&a[i], &slots[s++], names, kname, i) < 0) return -1;
        } else {
            if (pack_scalar(&a[i], (kiln_dtype)pt->dtype, &slots[s], names, kname, i) < 0)
                return -1;
            s += pt->dtype == KILN_COMPLEX128 ? 2 : 1;
        }
    }
    return 0;
}
