/* records.c: NumPy structured dtypes, registered as kiln record layouts.
 *
 * A launch's type key gives each argument one byte of dtype, so a structured dtype is
 * named there by a small id: KILN_RECORD0 + its index in this registry.  The registry
 * maps each distinct dtype (NumPy's equality: names, field types, offsets, itemsize) to
 * its id and keeps the layout the C core compiles with (kiln_options.records): field
 * names, dtypes, subarray shapes and NumPy's offsets, never recomputed.  Type keys live
 * in every dispatcher's table for the life of the process, so the registry does too: it
 * is static, written and read under the GIL, and entries are never removed or changed
 * (at most KILN_MAX_RECORDS layouts; docs/limits.md).  Python's kiln._records describes
 * a dtype (and refuses what kernels cannot take) the first time one is seen.
 */
#include "records.h"

#include <string.h>

static kiln_record recs[KILN_MAX_RECORDS];
static int aligns[KILN_MAX_RECORDS];
static int times[KILN_MAX_RECORDS]; /* datetime64/timedelta64: the unit code, else 0 */
static PyObject *dtypes[KILN_MAX_RECORDS];
static int nrecs;
static PyObject *ids; /* dict: dtype -> int */

/* Builds record k from describe()'s (itemsize, align, ((name, code, offset, shape),...),
 * time unit). */
static int build(int k, PyObject *desc) {
    long long itemsize;
    int align, time = 0;
    PyObject *fields;
    if (!PyArg_ParseTuple(desc, "LiO!|i", &itemsize, &align, &PyTuple_Type, &fields, &time))
        return -1;
    Py_ssize_t nf = PyTuple_GET_SIZE(fields);
    if (nf > KILN_MAX_FIELDS) {
        PyErr_Format(PyExc_TypeError, "a record of %zd fields; kernels take at most %d", nf,
                     KILN_MAX_FIELDS);
        return -1;
    }
    kiln_field *f = PyMem_RawCalloc((size_t)(nf ? nf : 1), sizeof *f);
    if (!f) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < nf; i++) {
        const char *name;
        int code;
        long long off;
        PyObject *shape;
        int chars = 0;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fields, i), "siLO!|i", &name, &code, &off,
                              &PyTuple_Type, &shape, &chars))
            goto fail;
        Py_ssize_t nd = PyTuple_GET_SIZE(shape);
        if (code < 0 || code >= KILN_NDTYPES || nd > KILN_MAX_NDIM) {
            PyErr_SetString(PyExc_ValueError, "bad record field description");
            goto fail;
        }
        char *nm = PyMem_RawMalloc(strlen(name) + 1);
        if (!nm) {
            PyErr_NoMemory();
            goto fail;
        }
        strcpy(nm, name);
        f[i].name = nm;
        f[i].dtype = (uint8_t)code;
        f[i].ndim = (uint8_t)nd;
        f[i].chars = (uint8_t)chars;
        f[i].offset = off;
        for (Py_ssize_t d = 0; d < nd; d++) {
            f[i].shape[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
            if (f[i].shape[d] < 0 && PyErr_Occurred()) goto fail;
        }
    }
    recs[k].itemsize = itemsize;
    recs[k].nfields = (int)nf;
    recs[k].fields = f;
    aligns[k] = align > 0 ? align : 1;
    times[k] = time;
    return 0;
fail:
    for (Py_ssize_t i = 0; i < nf; i++) PyMem_RawFree((void *)f[i].name);
    PyMem_RawFree(f);
    return -1;
}

int ext_record_id(PyObject *dtype) {
    if (!ids && !(ids = PyDict_New())) return -1;
    PyObject *v = PyDict_GetItemWithError(ids, dtype);
    if (v) return (int)PyLong_AsLong(v);
    if (PyErr_Occurred()) return -1;
    if (nrecs == KILN_MAX_RECORDS) {
        PyErr_Format(PyExc_TypeError,
                     "kernels in one process take at most %d record dtypes; this is one more",
                     KILN_MAX_RECORDS);
        return -1;
    }
    PyObject *mod = PyImport_ImportModule("kiln._records");
    PyObject *desc = mod ? PyObject_CallMethod(mod, "describe", "O", dtype) : NULL;
    Py_XDECREF(mod);
    if (!desc) return -1;
    int k = nrecs;
    int rc = PyTuple_Check(desc) ? build(k, desc) : -1;
    if (rc < 0 && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "bad record description");
    Py_DECREF(desc);
    if (rc < 0) return -1;
    PyObject *id = PyLong_FromLong(k);
    if (!id || PyDict_SetItem(ids, dtype, id) < 0) {
        Py_XDECREF(id);
        return -1;
    }
    Py_DECREF(id);
    Py_INCREF(dtype);
    dtypes[k] = dtype;
    nrecs++;
    return k;
}

int64_t ext_record_size(int id) { return id >= 0 && id < nrecs ? recs[id].itemsize : 0; }
int ext_record_align(int id) { return id >= 0 && id < nrecs ? aligns[id] : 1; }
int ext_record_time(int id) { return id >= 0 && id < nrecs ? times[id] : 0; }

const kiln_record *ext_records(int *n) {
    *n = nrecs;
    return recs;
}

/* record_id(dtype) -> int: the id of a structured dtype (kiln.from_dtype, signatures) */
static PyObject *mod_record_id(PyObject *module, PyObject *dtype) {
    (void)module;
    int k = ext_record_id(dtype);
    return k < 0 ? NULL : PyLong_FromLong(k);
}

/* record_dtype(id) -> dtype: the dtype registered under an id */
static PyObject *mod_record_dtype(PyObject *module, PyObject *arg) {
    (void)module;
    long k = PyLong_AsLong(arg);
    if (k == -1 && PyErr_Occurred()) return NULL;
    if (k < 0 || k >= nrecs) {
        PyErr_Format(PyExc_ValueError, "no record dtype has id %ld", k);
        return NULL;
    }
    return Py_NewRef(dtypes[k]);
}

PyMethodDef ext_records_functions[] = {
    {"record_id", mod_record_id, METH_O, "record_id(dtype) -> int"},
    {"record_dtype", mod_record_dtype, METH_O, "record_dtype(id) -> numpy.dtype"},
    {NULL, NULL, 0, NULL}};
