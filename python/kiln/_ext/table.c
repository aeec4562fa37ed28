/* table.c: the specialisation table: type key -> Entry (a loaded kernel).
 *
 * The hot path's lookup (ext_table_get, inline in table.h) is an FNV hash of
 * the key and open addressing with linear probing; keys are 4 bytes per
 * argument plus the target and device, so a lookup touches one or two cache
 * lines.  The ownership rule (table.h) makes concurrent first calls safe: the
 * table keeps the first entry inserted for a key, and each launch holds its
 * own reference to the entry it runs, so an entry's code is unloaded (in
 * entry_dealloc) only after the last launch that runs it has returned.
 */
#include "table.h"

#include <structmember.h>

/* The one place a kernel's code is unloaded: the last reference (the table's or
 * a launch's) is gone, so nothing runs it. */
static void entry_dealloc(EntryObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    ext_tier_detach(self->st, self->job); /* from here on, no build swaps self->cpu */
    ext_obs_entry_gone(self->st, &self->obs);
    if (self->cpu != self->cpu0) kiln_cpu_unload(self->cpu0);
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

/* 0 while the entry runs tier 0's code, 1 once it runs optimised code (every
 * entry not made by tier 0, CUDA's included) */
static PyObject *entry_tier(EntryObject *self, void *c) {
    kiln_cpu_module *m = __atomic_load_n(&self->cpu, __ATOMIC_ACQUIRE);
    return PyLong_FromLong(self->cpu0 && m == self->cpu0 ? 0 : 1);
}

/* Numba's overload._type_annotation: kiln._types.type_annotation(program), made when
 * asked (an introspection path, off the launch path) */
static PyObject *entry_type_annotation(EntryObject *self, void *c) {
    PyObject *mod = PyImport_ImportModule("kiln._types");
    if (!mod) return NULL;
    PyObject *r = PyObject_CallMethod(mod, "type_annotation", "O", self->program);
    Py_DECREF(mod);
    return r;
}


/* Threads per block from Numba's blockdim: an int or a tuple of up to 3 ints; -1 with an
 * exception set. */
static long long block_threads(PyObject *b) {
    long long n = 1;
    if (PyLong_Check(b)) {
        n = PyLong_AsLongLong(b);
    } else if (PyTuple_Check(b) && PyTuple_GET_SIZE(b) >= 1 && PyTuple_GET_SIZE(b) <= 3) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(b) && n > 0; i++) {
            long long d = PyLong_AsLongLong(PyTuple_GET_ITEM(b, i));
            if (d == -1 && PyErr_Occurred()) return -1;
            n = d > 0 && d <= KILN_MAX_BLOCK_THREADS ? n * d : -1;
        }
    } else {
        PyErr_SetString(PyExc_TypeError, "blockdim is an int or a tuple of 1 to 3 ints");
        return -1;
    }
    if (n == -1 && PyErr_Occurred()) return -1;
    if (n < 1 || n > KILN_MAX_BLOCK_THREADS) {
        PyErr_Format(PyExc_ValueError, "a block has 1 to %d threads, not %lld",
                     KILN_MAX_BLOCK_THREADS, n);
        return -1;
    }
    return n;
}

/* Numba's max_cooperative_grid_blocks(blockdim, dynsmemsize=0): the most blocks of this
 * shape a cooperative launch of the kernel may have.  On the GPU, the occupancy API's
 * resident blocks per multiprocessor times the multiprocessors; on the CPU, whose
 * cooperative grids run all their threads as fibers at once, KILN_CG_MAX_THREADS over
 * the block's threads. */
static PyObject *entry_max_coop_blocks(EntryObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = {(char *)"blockdim", (char *)"dynsmemsize", NULL};
    PyObject *b;
    long long dyn = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|L", names, &b, &dyn)) return NULL;
    long long nt = block_threads(b);
    if (nt < 0) return NULL;
    if (dyn < 0) {
        PyErr_SetString(PyExc_ValueError, "dynsmemsize must be >= 0");
        return NULL;
    }
    if (self->target == 0) return PyLong_FromLongLong(KILN_CG_MAX_THREADS / nt);
    kiln_cuda *cu = self->st->cuda;
    int rc = cu ? kiln_cuda_use(cu, self->device) : 0;
    int64_t most = 0;
    if (cu && rc == 0) rc = kiln_cuda_max_coop_blocks(cu, self->cu, (int)nt, (size_t)dyn, &most);
    if (!cu || rc != 0) {
        PyErr_Format(PyExc_RuntimeError, "the driver cannot say how many blocks are resident "
                     "(cuOccupancyMaxActiveBlocksPerMultiprocessor: CUresult %d)", rc);
        return NULL;
    }
    return PyLong_FromLongLong((long long)most);
}

static PyMethodDef entry_methods[] = {
    {"max_cooperative_grid_blocks", (PyCFunction)(void (*)(void))entry_max_coop_blocks,
     METH_VARARGS | METH_KEYWORDS,
     "max_cooperative_grid_blocks(blockdim, dynsmemsize=0): the most blocks of blockdim "
     "threads a cooperative launch may have (Numba's name)"},
    {NULL, NULL, 0, NULL}};

/* Numba's _Kernel.launch_config_sensitive: an Entry may serve several dispatchers of the
 * same code, so a sensitive dispatcher's overloads mark it instead (_dispatch.py _Sensitive) */
static PyObject *entry_lc_sensitive(PyObject *self, void *c) { Py_RETURN_FALSE; }

static PyGetSetDef entry_getset[] = {
    {"launch_config_sensitive", (getter)entry_lc_sensitive, NULL,
     "False: a launch-config sensitive dispatcher's overloads say True", NULL},
    {"tier", (getter)entry_tier, NULL, "0: tier 0's quick code runs; 1: the optimised code", NULL},
    {"_type_annotation", (getter)entry_type_annotation, NULL,
     "each variable's type as kiln type objects (Numba's typemap)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef entry_members[] = {
    {"program", T_OBJECT, offsetof(EntryObject, program), READONLY, "the translated Program"},
    {"signature", T_OBJECT, offsetof(EntryObject, signature), READONLY, "compiled signature"},
    {"cooperative", T_BOOL, offsetof(EntryObject, cooperative), READONLY,
     "whether it uses kiln.cg, and so is launched cooperatively (Numba's name)"},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot entry_slots[] = {
    {Py_tp_dealloc, entry_dealloc},
    {Py_tp_members, entry_members},
    {Py_tp_getset, entry_getset},
    {Py_tp_methods, entry_methods},
    {Py_tp_doc, (void *)"A compiled, loaded specialisation of a kernel."},
    {0, NULL}};

static PyType_Spec entry_spec = {"kiln._kiln.Entry", sizeof(EntryObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                     Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                 entry_slots};

/* Inserts entry under key unless the key has one already; returns the entry the
 * table holds for the key (borrowed), or NULL with an exception set.  A live
 * entry is never replaced: every thread's first call then runs the same
 * specialisation, and code another launch may be running stays loaded. */
PyObject *ext_table_insert(SpecTable *t, const uint8_t *key, int len, uint64_t h,
                           PyObject *entry) {
    PyObject *had = ext_table_get(t, key, len, h);
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

void ext_table_clear(SpecTable *t) {
    for (int i = 0; i < t->cap; i++) {
        if (!t->slots[i].hash) continue;
        PyMem_Free(t->slots[i].key);
        Py_CLEAR(t->slots[i].entry);
    }
    PyMem_Free(t->slots);
    t->slots = NULL;
    t->cap = t->n = 0;
    t->gen++;
}

int ext_table_init(PyObject *module, ModState *st) {
    st->EntryType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &entry_spec, NULL);
    if (!st->EntryType || PyModule_AddType(module, st->EntryType) < 0) return -1;
    /* the CPU's bound on a cooperative grid (max_cooperative_grid_blocks, docs/limits.md) */
    return PyModule_AddIntConstant(module, "CG_MAX_THREADS", KILN_CG_MAX_THREADS);
}
