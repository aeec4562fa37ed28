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

#include "driver.h"

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

/* attribute(attr) -> int: cuFuncGetAttribute of a GPU entry (attr a CUfunction_attribute:
 * 0 max threads per block, 1 static shared bytes, 2 constant bytes, 3 local bytes per
 * thread, 4 registers per thread); None for a CPU entry */
static PyObject *entry_attribute(EntryObject *self, PyObject *arg) {
    long attr = PyLong_AsLong(arg);
    if (attr == -1 && PyErr_Occurred()) return NULL;
    if (attr < 0 || attr > 64) {
        PyErr_Format(PyExc_ValueError, "unknown kernel attribute %ld", attr);
        return NULL;
    }
    if (!self->cu) Py_RETURN_NONE;
    kiln_cuda *cu = self->st->cuda;
    int v = 0, rc = kiln_cuda_use(cu, self->device);
    if (rc == 0) rc = kiln_cuda_func_attribute(cu, self->cu, (int)attr, &v);
    if (rc != 0) return ext_cuda_error(self->st, rc, "reading the kernel's attributes");
    return PyLong_FromLong(v);
}

static PyMethodDef entry_methods[] = {
    {"attribute", (PyCFunction)entry_attribute, METH_O,
     "attribute(attr) -> int: cuFuncGetAttribute of a GPU entry; None on the CPU"},
    {NULL, NULL, 0, NULL}};

/* Numba's overload._type_annotation: kiln._types.type_annotation(program), made when
 * asked (an introspection path, off the launch path) */
static PyObject *entry_type_annotation(EntryObject *self, void *c) {
    PyObject *mod = PyImport_ImportModule("kiln._types");
    if (!mod) return NULL;
    PyObject *r = PyObject_CallMethod(mod, "type_annotation", "O", self->program);
    Py_DECREF(mod);
    return r;
}

static PyGetSetDef entry_getset[] = {
    {"tier", (getter)entry_tier, NULL, "0: tier 0's quick code runs; 1: the optimised code", NULL},
    {"_type_annotation", (getter)entry_type_annotation, NULL,
     "each variable's type as kiln type objects (Numba's typemap)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef entry_members[] = {
    {"program", T_OBJECT, offsetof(EntryObject, program), READONLY, "the translated Program"},
    {"signature", T_OBJECT, offsetof(EntryObject, signature), READONLY, "compiled signature"},
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
}

int ext_table_init(PyObject *module, ModState *st) {
    st->EntryType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &entry_spec, NULL);
    if (!st->EntryType || PyModule_AddType(module, st->EntryType) < 0) return -1;
    return 0;
}
