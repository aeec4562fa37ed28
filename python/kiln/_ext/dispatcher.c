/* dispatcher.c: kiln._kiln.DispatcherBase, the C half of every kiln kernel.
 *
 * A Dispatcher owns its kernel's launch state (Kernel, launch.h): the
 * parameter names, the specialisation table (and through it one reference to
 * each Entry), the resolved target, and the Launchers of its last
 * LAUNCH_CACHE configurations, so a repeated `k[g, b]` allocates nothing.
 * `k[griddim, blockdim, stream, shared_bytes]` is parsed and checked here,
 * once per configuration; the launch itself is launch.c's.  kiln.Dispatcher
 * (_dispatch.py) subclasses this type and adds the Python-facing methods;
 * _compile_key, called on a miss, is one of them.
 */
#include "dispatcher.h"

#include <structmember.h>

#include "devarray.h"
#include "launch.h"
#include "signals.h"

/* The launch configuration's limits, checked once per configuration.  CUDA's
 * own, so a configuration the CPU runs would also run on any GPU; dynamic
 * shared memory only has a bound far above any GPU's here (it fits the
 * driver's unsigned), and is checked against the device's own limit when a
 * launch goes to a GPU (launch.c). */
enum {
    EXT_MAX_BLOCK_THREADS = KILN_MAX_BLOCK_THREADS, /* threads per block, blockdim x and y */
    EXT_MAX_BLOCK_Z = KILN_MAX_BLOCK_Z,
    EXT_MAX_GRID_YZ = KILN_MAX_GRID_YZ, /* griddim y and z; x goes to KILN_MAX_GRID_X */
    EXT_MAX_DYNAMIC_SHARED = 1 << 30
};

/* A GPU launch configured with fewer blocks than this gets one PerformanceWarning
 * per kernel, as Numba-CUDA warns (its NumbaPerformanceWarning, with its
 * threshold: about twice the SMs of a large GPU; an H100 has 132). */
enum { EXT_LOW_OCCUPANCY_BLOCKS = 128 };

typedef struct {
    PyObject_HEAD
    PyObject *dict;
    PyObject *weakrefs;
    int is_device;
    Kernel k; /* what the launch path reads; the references in it are this object's */
} DispatcherObject;

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
    Py_XSETREF(self->k.names, names);
    Py_INCREF(name);
    Py_XSETREF(self->k.kname, name);
    self->k.nparams = (int)PyTuple_GET_SIZE(names);
    self->is_device = is_device;
    self->k.par_threshold = 16384;
    self->k.target = -1;
    self->k.st = ext_state_of_type(Py_TYPE(self));
    ext_omp_load(); /* once: OpenMP's runtime, with kiln's spin count (signals.h) */
    return self->k.st ? 0 : -1;
}

static int disp_traverse(DispatcherObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->dict);
    Py_VISIT(self->k.names);
    Py_VISIT(self->k.kname);
    for (int i = 0; i < self->k.tab.cap; i++)
        if (self->k.tab.slots[i].hash) Py_VISIT(self->k.tab.slots[i].entry);
    for (int i = 0; i < LAUNCH_CACHE; i++) Py_VISIT(self->k.lc[i]);
    return 0;
}

static int disp_clear(DispatcherObject *self) {
    Py_CLEAR(self->dict);
    Py_CLEAR(self->k.names);
    Py_CLEAR(self->k.kname);
    ext_table_clear(&self->k.tab);
    for (int i = 0; i < LAUNCH_CACHE; i++) Py_CLEAR(self->k.lc[i]);
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
            /* Numba's own phrase follows kiln's, so code matching Numba's text still works */
            PyObject *l = PySequence_List(o);
            if (l) {
                PyErr_Format(PyExc_ValueError,
                             "%s must have 1 to 3 dimensions, got %zd (%s must be a sequence of "
                             "1, 2 or 3 integers, got %R)", what, sz, what, l);
                Py_DECREF(l);
            }
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
        PyObject *ix = PyFloat_Check(x) || !PyIndex_Check(x) ? NULL : PyNumber_Index(x);
        if (!ix && PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
        PyErr_Clear(); /* an array of one int has __index__, and refuses it: say what is taken */
        if (!ix) {
            PyObject *l = n == 1 && items[0] == o ? Py_BuildValue("[O]", o) : PySequence_List(o);
            if (l) {
                PyErr_Format(PyExc_TypeError,
                             "%s must be a positive int or a tuple of up to 3 positive ints, not "
                             "%.100s (%s must be a sequence of integers, got %R)",
                             what, Py_TYPE(x)->tp_name, what, l);
                Py_DECREF(l);
            }
            return -1;
        }
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(ix, &overflow);
        Py_DECREF(ix);
        if (overflow > 0) v = INT64_MAX; /* past every limit: the caller says which */
        else if (overflow < 0 || v <= 0) {
            if (PyErr_Occurred()) return -1;
            PyErr_Format(PyExc_ValueError, "%s must be positive, got %R in dimension %d", what, x,
                         i);
            return -1;
        }
        out[i] = v;
    }
    return 0;
}

/* The low-occupancy warning of a kernel's first GPU configuration under
 * EXT_LOW_OCCUPANCY_BLOCKS blocks, when KILN_LOW_OCCUPANCY_WARNINGS=1 (or Numba's
 * NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=1 when kiln's is unset) asks for it: off by
 * default, since small grids are common and legitimate (Numba's own test suite
 * turns its warning off, and checks that small launches warn of nothing).  Decided
 * once per kernel, so later configurations cost one test; a kernel that runs on
 * the CPU is never warned about. */
static int warn_low_occupancy(DispatcherObject *self, const int64_t g[3]) {
    Kernel *k = &self->k;
    k->grid_warned = true;
    if (k->explicit_cpu) return 0;
    static const char *const names[] = {"KILN_LOW_OCCUPANCY_WARNINGS",
                                        "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"};
    bool on = false;
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(names[i]);
        if (!v || !*v) continue;
        if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0) {
            on = v[0] == '1';
            break;
        }
        k->grid_warned = false;
        PyErr_Format(PyExc_ValueError, "%s must be 0 or 1, not '%.40s'", names[i], v);
        return -1;
    }
    if (!on) return 0;
    if (k->target < 0) {
        PyObject *t = PyObject_CallMethodNoArgs((PyObject *)self, k->st->str_resolve_target);
        if (!t) { /* target 'cuda' without a GPU: the launch says so */
            PyErr_Clear();
            return 0;
        }
        long v = PyLong_AsLong(t);
        Py_DECREF(t);
        if (v == -1 && PyErr_Occurred()) return -1;
        k->target = v ? 1 : 0;
    }
    if (k->target != 1) return 0;
    long long n = (long long)(g[0] * g[1] * g[2]);
    return PyErr_WarnFormat(k->st->PerformanceWarning, 1,
                            "kernel '%U' is configured with %lld block%s, which leaves most of a "
                            "GPU idle: give it at least %d blocks (Grid size %lld will likely "
                            "result in GPU under-utilization due to low occupancy)",
                            k->kname, n, n == 1 ? "" : "s", EXT_LOW_OCCUPANCY_BLOCKS, n);
}

/* The ValueError of a launch dimension past its limits: the dimensions as parsed, or as
 * given when one is past int64 (parse_dims keeps INT64_MAX for it). */
static PyObject *dims_too_large(const char *what, const int64_t d[3], PyObject *given,
                                const char *limits) {
    if (d[0] == INT64_MAX || d[1] == INT64_MAX || d[2] == INT64_MAX)
        PyErr_Format(PyExc_ValueError, "%s %R exceeds the limits %s", what, given, limits);
    else
        PyErr_Format(PyExc_ValueError, "%s (%lld, %lld, %lld) exceeds the limits %s", what,
                     (long long)d[0], (long long)d[1], (long long)d[2], limits);
    return NULL;
}

static PyObject *disp_getitem(DispatcherObject *self, PyObject *cfg) {
    if (self->is_device) {
        PyErr_Format(PyExc_RuntimeError,
                     "device function '%U' cannot be launched; call it from a kernel "
                     "(Cannot compile a device function as a kernel)", self->k.kname);
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
    if (b[0] > EXT_MAX_BLOCK_THREADS || b[1] > EXT_MAX_BLOCK_THREADS || b[2] > EXT_MAX_BLOCK_Z ||
        b[0] * b[1] * b[2] > EXT_MAX_BLOCK_THREADS)
        return dims_too_large("blockdim", b, PyTuple_GET_ITEM(cfg, 1),
                              "of 1024 threads per block (x, y <= 1024, z <= 64)");
    if (g[0] > KILN_MAX_GRID_X || g[1] > EXT_MAX_GRID_YZ || g[2] > EXT_MAX_GRID_YZ)
        return dims_too_large("griddim", g, PyTuple_GET_ITEM(cfg, 0),
                              "(x <= 2**31-1, y, z <= 65535)");
    PyObject *stream = Py_None;
    void *handle = NULL;
    if (PyTuple_GET_SIZE(cfg) >= 3) {
        stream = PyTuple_GET_ITEM(cfg, 2);
        if (PyLong_Check(stream) && PyObject_Not(stream) == 1) stream = Py_None; /* 0 */
        if (ext_stream_handle(self->k.st, stream, &handle) < 0) return NULL;
    }
    if (PyTuple_GET_SIZE(cfg) == 4) {
        PyObject *s0 = PyTuple_GET_ITEM(cfg, 3);
        /* an int, or an integer that says so (numpy.int64: n * x.itemsize), never a float */
        PyObject *s = PyLong_Check(s0) ? Py_NewRef(s0)
                      : PyFloat_Check(s0) || !PyIndex_Check(s0) ? NULL : PyNumber_Index(s0);
        if (!s) {
            if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "dynamic_shared_bytes must be an int, not %.100s",
                             Py_TYPE(s0)->tp_name);
            }
            return NULL;
        }
        int overflow;
        shmem = PyLong_AsLongLongAndOverflow(s, &overflow);
        Py_DECREF(s); /* the messages below name the value given */
        s = s0;
        if (shmem == -1 && PyErr_Occurred()) return NULL;
        if (overflow < 0 || (!overflow && shmem < 0)) {
            PyErr_Format(PyExc_ValueError,
                         "dynamic_shared_bytes (the configuration's 4th value) must be >= 0, "
                         "got %S",
                         s);
            return NULL;
        }
        if (overflow > 0 || shmem > EXT_MAX_DYNAMIC_SHARED) {
            PyErr_Format(PyExc_ValueError,
                         "dynamic_shared_bytes is %S, over kiln's limit of %d bytes (a GPU gives "
                         "a block at most its shared memory per block: 227 KiB on an H100)",
                         s, EXT_MAX_DYNAMIC_SHARED);
            return NULL;
        }
    }
    if (!self->k.grid_warned && g[0] * g[1] * g[2] < EXT_LOW_OCCUPANCY_BLOCKS &&
        warn_low_occupancy(self, g) < 0)
        return NULL;
    return ext_launcher_get((PyObject *)self, &self->k, g, b, stream, handle, shmem);
}

PyObject *ext_disp_launcher(ModState *st, PyObject *disp, int64_t blocks, int64_t threads) {
    if (!PyObject_TypeCheck(disp, st->DispatcherType) || ((DispatcherObject *)disp)->is_device) {
        PyErr_SetString(PyExc_TypeError, "a kernel's dispatcher was expected");
        return NULL;
    }
    DispatcherObject *self = (DispatcherObject *)disp;
    const int64_t g[3] = {blocks, 1, 1}, b[3] = {threads, 1, 1};
    if (blocks < 1 || blocks > KILN_MAX_GRID_X || threads < 1 || threads > EXT_MAX_BLOCK_THREADS) {
        PyErr_Format(PyExc_ValueError, "launch of %lld blocks of %lld threads is out of range",
                     (long long)blocks, (long long)threads);
        return NULL;
    }
    if (!self->k.grid_warned && blocks < EXT_LOW_OCCUPANCY_BLOCKS && warn_low_occupancy(self, g) < 0)
        return NULL;
    return ext_launcher_get(disp, &self->k, g, b, Py_None, NULL, 0);
}

static PyObject *disp_call(DispatcherObject *self, PyObject *args, PyObject *kw) {
    if (self->is_device)
        PyErr_Format(PyExc_TypeError,
                     "device function '%U' can only be called from kernels", self->k.kname);
    else
        PyErr_Format(PyExc_ValueError,
                     "kernel '%U' needs a launch configuration: %U[blocks, threads](...) "
                     "(launch configuration was not specified)",
                     self->k.kname, self->k.kname);
    return NULL;
}

static PyObject *disp_lookup(DispatcherObject *self, PyObject *key) {
    if (!PyBytes_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "key must be bytes");
        return NULL;
    }
    const uint8_t *k = (const uint8_t *)PyBytes_AS_STRING(key);
    int n = (int)PyBytes_GET_SIZE(key);
    PyObject *e = ext_table_get(&self->k.tab, k, n, ext_key_hash(k, n));
    if (!e) Py_RETURN_NONE;
    Py_INCREF(e);
    return e;
}

static PyObject *disp_insert(DispatcherObject *self, PyObject *args) {
    PyObject *key, *entry;
    if (!PyArg_ParseTuple(args, "O!O!", &PyBytes_Type, &key, self->k.st->EntryType, &entry))
        return NULL;
    const uint8_t *k = (const uint8_t *)PyBytes_AS_STRING(key);
    int n = (int)PyBytes_GET_SIZE(key);
    PyObject *kept = ext_table_insert(&self->k.tab, k, n, ext_key_hash(k, n), entry);
    Py_XINCREF(kept);
    return kept;
}

static PyObject *disp_entries(DispatcherObject *self, PyObject *unused) {
    PyObject *l = PyList_New(0);
    if (!l) return NULL;
    for (int i = 0; i < self->k.tab.cap; i++) {
        Slot *s = &self->k.tab.slots[i];
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
    ext_table_clear(&self->k.tab);
    Py_RETURN_NONE;
}

static PyObject *disp_get_name(DispatcherObject *self, void *c) {
    if (!self->k.kname) Py_RETURN_NONE;
    Py_INCREF(self->k.kname);
    return self->k.kname;
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
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, "instance attributes", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef disp_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(DispatcherObject, dict), READONLY, NULL},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(DispatcherObject, weakrefs), READONLY, NULL},
    {"_nparams", T_INT, offsetof(DispatcherObject, k.nparams), READONLY, NULL},
    {"_is_device", T_INT, offsetof(DispatcherObject, is_device), READONLY, NULL},
    {"_par_threshold", T_LONGLONG, offsetof(DispatcherObject, k.par_threshold), 0,
     "CPU target: launches with fewer threads in all run on one core"},
    {"_target", T_INT, offsetof(DispatcherObject, k.target), 0,
     "target of launches with host arguments: 0 CPU, 1 CUDA, -1 unresolved"},
    {"_explicit_cpu", T_BOOL, offsetof(DispatcherObject, k.explicit_cpu), 0,
     "target='cpu' was given"},
    {"_grid_warned", T_BOOL, offsetof(DispatcherObject, k.grid_warned), 0,
     "the low-occupancy warning was given or is not wanted (kiln's own kernels)"},
    {"_lc_sensitive", T_BOOL, offsetof(DispatcherObject, k.lc_sensitive), 0,
     "launch-config sensitive: specialisations are per launch configuration too"},
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

int ext_dispatcher_init(PyObject *module, ModState *st) {
    st->DispatcherType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &disp_spec, NULL);
    if (!st->DispatcherType || PyModule_AddType(module, st->DispatcherType) < 0) return -1;
    return 0;
}
