/* stream.c: kiln.Stream, a CUstream as a Python object (devarray.c's kiln.stream() makes
 * them), and the launch's reading of a stream argument: a
 * kiln.Stream, or another library's (CuPy's .ptr, PyTorch's .cuda_stream, Numba's
 * .handle.value, a raw int).  On EXT_HOST_DEVICE a Stream has no handle: its work ran
 * when it was queued. */
#include "stream.h"

#include "driver.h"
#include "errors.h"
#include "obs.h"

static void stream_dealloc(StreamObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    if (self->owned && self->handle && self->st->cuda &&
        kiln_cuda_use(self->st->cuda, self->device) == 0)
        kiln_cuda_stream_free(self->st->cuda, self->handle);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *stream_synchronize(StreamObject *self, PyObject *unused) {
    ModState *st = self->st;
    if (self->device == EXT_HOST_DEVICE) Py_RETURN_NONE; /* its work ran when it was queued */
    kiln_cuda *cu = ext_cuda_on(st, self->device);
    if (!cu) return NULL;
    int rc;
    double t0 = ext_obs_us();
    Py_BEGIN_ALLOW_THREADS
    rc = kiln_cuda_stream_sync(cu, self->handle);
    Py_END_ALLOW_THREADS
    ext_obs_sync(st, "stream.synchronize", t0, (ext_obs_us() - t0) / 1e3);
    if (rc != 0) return ext_cuda_error(st, rc, "synchronizing a stream");
    if (ext_check_kernel_error(st, self->device) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *stream_handle(StreamObject *self, void *c) {
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)self->handle);
}

/* Numba's Stream.external: a stream another library made (kiln.external_stream, or one a
 * CUDA Array Interface names), which kiln neither created nor frees; CUDA's special
 * handles 0, 1 (legacy default) and 2 (per-thread default) are not external. */
static PyObject *stream_external(StreamObject *self, void *c) {
    uintptr_t h = (uintptr_t)self->handle;
    return PyBool_FromLong(!self->owned && h > 2);
}

static PyObject *stream_repr(StreamObject *self) {
    if (self->device == EXT_HOST_DEVICE)
        return PyUnicode_FromFormat("<kiln %sstream on the host (KILN_TARGET=cpu)>",
                                    self->owned || self->handle ? "" : "default ");
    if (!self->handle) return PyUnicode_FromFormat("<kiln default stream on device %d>", self->device);
    return PyUnicode_FromFormat("<kiln stream %p on device %d>", self->handle, self->device);
}

/* `with stream.auto_synchronize():` (Numba's): the stream itself is the context,
 * synchronized when the block ends without an exception (as Numba's generator-based
 * context manager, which an exception leaves at its yield). */
static PyObject *stream_enter(StreamObject *self, PyObject *unused) {
    return Py_NewRef((PyObject *)self);
}

static PyObject *stream_exit(StreamObject *self, PyObject *args) {
    PyObject *type = Py_None;
    if (PyTuple_GET_SIZE(args) > 0) type = PyTuple_GET_ITEM(args, 0);
    if (type == Py_None) {
        PyObject *r = stream_synchronize(self, NULL);
        if (!r) return NULL;
        Py_DECREF(r);
    }
    Py_RETURN_FALSE;
}

static PyMethodDef stream_methods[] = {
    {"synchronize", (PyCFunction)stream_synchronize, METH_NOARGS,
     "waits for the work queued on the stream"},
    {"auto_synchronize", (PyCFunction)stream_enter, METH_NOARGS,
     "a context that synchronizes the stream when it ends: `with s.auto_synchronize():`"},
    {"__enter__", (PyCFunction)stream_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)stream_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef stream_getset[] = {
    {"handle", (getter)stream_handle, NULL, "the CUstream as an int", NULL},
    {"ptr", (getter)stream_handle, NULL, "the CUstream as an int (CuPy's name)", NULL},
    {"external", (getter)stream_external, NULL,
     "whether another library made the stream (kiln neither created nor frees it)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot stream_slots[] = {
    {Py_tp_dealloc, stream_dealloc},
    {Py_tp_methods, stream_methods},
    {Py_tp_getset, stream_getset},
    {Py_tp_repr, stream_repr},
    {Py_tp_doc, (void *)"A CUDA stream: kiln.stream() makes one."},
    {0, NULL}};

static PyType_Spec stream_spec = {"kiln.Stream", sizeof(StreamObject), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                  stream_slots};

int ext_stream_handle(ModState *st, PyObject *obj, void **handle) {
    *handle = NULL;
    if (obj == Py_None) return 0;
    if (Py_IS_TYPE(obj, st->StreamType)) {
        *handle = ((StreamObject *)obj)->handle;
        return 0;
    }
    PyObject *v = NULL;
    if (PyLong_Check(obj)) {
        v = obj;
        Py_INCREF(v);
    } else if (PyObject_HasAttrString(obj, "cuda_stream")) { /* PyTorch */
        v = PyObject_GetAttrString(obj, "cuda_stream");
    } else if (PyObject_HasAttrString(obj, "ptr")) { /* CuPy */
        v = PyObject_GetAttrString(obj, "ptr");
    } else if (PyObject_HasAttrString(obj, "handle")) { /* Numba: handle.value */
        PyObject *h = PyObject_GetAttrString(obj, "handle");
        if (h && PyObject_HasAttrString(h, "value")) {
            v = PyObject_GetAttrString(h, "value");
            Py_DECREF(h);
        } else {
            v = h;
        }
    }
    if (!v || !PyLong_Check(v)) {
        Py_XDECREF(v);
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError,
                         "the launch's stream must be a kiln.stream(), a CuPy or PyTorch stream, a "
                         "raw CUstream int, 0 or None, not %.100s",
                         Py_TYPE(obj)->tp_name);
        return -1;
    }
    unsigned long long h = PyLong_AsUnsignedLongLong(v);
    if (h == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError, "a stream's CUstream handle is an int from 0 to "
                     "2**64-1, not %R", v);
        Py_DECREF(v);
        return -1;
    }
    Py_DECREF(v);
    *handle = (void *)(uintptr_t)h;
    return 0;
}

PyTypeObject *ext_stream_type(PyObject *module) {
    return (PyTypeObject *)PyType_FromModuleAndSpec(module, &stream_spec, NULL);
}
