/* tunedepth.c: whether this thread runs a max-autotune step (docs/modes.md).
 *
 * kiln.compile(fn, mode="max-autotune") calls fn through tune_call, which raises this
 * thread's depth while fn runs; the launches whose configuration kiln chooses ask
 * tuning() and then time candidates (_autotune.py).  Both are on the path of every
 * tuned call after its search, where threading.local's attribute protocol cost more than
 * the rest of the call's Python (0.5 to 1 us on host-bound steps), so the depth is a C
 * thread-local: one per thread, as the steps are. */
#include "tunedepth.h"

#include <stddef.h>
#include <structmember.h>

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

/* ---- kiln._kiln.StepBase: kiln.compile's object, called from C ---------------------------
 *
 * kiln.compile(fn, mode=...) returns a Compiled (_modes.py), a subclass of this: a
 * default step calls fn, a max-autotune step calls fn with this thread's depth raised,
 * and a reduce-overhead step calls the Python method _call (its guards and records).
 * The first two cost one C call over fn's own (a Python __call__ cost 0.3 us). */

enum { STEP_DEFAULT, STEP_REDUCE_OVERHEAD, STEP_MAX_AUTOTUNE }; /* _modes.MODES' order */

typedef struct {
    PyObject_HEAD
    PyObject *fn;
    int how; /* the mode, an index into _modes.MODES */
} StepObject;

static int step_traverse(StepObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->fn);
    return 0;
}

static int step_clear(StepObject *self) {
    Py_CLEAR(self->fn);
    return 0;
}

static void step_dealloc(StepObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (tp->tp_clear) tp->tp_clear((PyObject *)self); /* a subclass's __dict__ too */
    step_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *step_call(StepObject *self, PyObject *args, PyObject *kw) {
    if (self->how == STEP_REDUCE_OVERHEAD || !self->fn) {
        PyObject *call = PyObject_GetAttrString((PyObject *)self, "_call");
        if (!call) return NULL;
        PyObject *r = PyObject_Call(call, args, kw);
        Py_DECREF(call);
        return r;
    }
    PyObject *fn = Py_NewRef(self->fn); /* the step may replace self.fn */
    if (self->how == STEP_MAX_AUTOTUNE) depth++;
    PyObject *r = PyObject_Call(fn, args, kw);
    if (self->how == STEP_MAX_AUTOTUNE) depth--;
    Py_DECREF(fn);
    return r;
}

static PyMemberDef step_members[] = {
    {"fn", T_OBJECT_EX, offsetof(StepObject, fn), 0, "the step's function"},
    {"_how", T_INT, offsetof(StepObject, how), 0, "the mode's index in _modes.MODES"},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot step_slots[] = {
    {Py_tp_dealloc, step_dealloc},
    {Py_tp_traverse, step_traverse},
    {Py_tp_clear, step_clear},
    {Py_tp_call, step_call},
    {Py_tp_members, step_members},
    {Py_tp_doc, (void *)"Base of kiln.compile's objects: calls the step in its mode."},
    {0, NULL}};

static PyType_Spec step_spec = {"kiln._kiln.StepBase", sizeof(StepObject), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                                step_slots};

int ext_tunedepth_init(PyObject *module) {
    PyTypeObject *tp = (PyTypeObject *)PyType_FromModuleAndSpec(module, &step_spec, NULL);
    if (!tp) return -1;
    int rc = PyModule_AddType(module, tp);
    Py_DECREF(tp);
    return rc;
}

PyMethodDef ext_tunedepth_functions[] = {
    {"tune_call", (PyCFunction)(void (*)(void))f_tune_call, METH_FASTCALL | METH_KEYWORDS,
     "tune_call(fn, *args, **kwargs): fn's result, called with this thread inside a "
     "max-autotune step"},
    {"tuning", f_tuning, METH_NOARGS, "whether this thread is inside a max-autotune step"},
    {NULL, NULL, 0, NULL}};
