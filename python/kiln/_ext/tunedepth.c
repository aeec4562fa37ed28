/* tunedepth.c: whether this thread runs a max-autotune step (docs/modes.md).
 *
 * kiln.compile(fn, mode="max-autotune") calls fn through tune_call, which raises this
 * thread's depth while fn runs; the launches whose configuration kiln chooses ask
 * tuning() and then time candidates (_autotune.py).  Both are on the path of every
 * tuned call after its search, where threading.local's attribute protocol cost more than
 * the rest of the call's Python (0.5 to 1 us on host-bound steps), so the depth is a C
 * thread-local: one per thread, as the steps are. */
#include "tunedepth.h"

static _Thread_local long depth;

/* tune_call(fn, *args, **kwargs): fn(*args, **kwargs) with this thread's depth raised */
static PyObject *f_tune_call(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
    (void)m;
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "tune_call(fn, *args, **kwargs) needs fn");
        return NULL;
    }
    depth++;
    PyObject *r = PyObject_Vectorcall(args[0], args + 1, (size_t)(nargs - 1), kwnames);
    depth--;
    return r;
}

bool ext_tuning(void) { return depth > 0; }

static PyObject *f_tuning(PyObject *m, PyObject *unused) {
    (void)m;
    (void)unused;
    return PyBool_FromLong(depth > 0);
}

PyMethodDef ext_tunedepth_functions[] = {
    {"tune_call", (PyCFunction)(void (*)(void))f_tune_call, METH_FASTCALL | METH_KEYWORDS,
     "tune_call(fn, *args, **kwargs): fn's result, called with this thread inside a "
     "max-autotune step"},
    {"tuning", f_tuning, METH_NOARGS, "whether this thread is inside a max-autotune step"},
    {NULL, NULL, 0, NULL}};
