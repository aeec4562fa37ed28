/* host.c: the rest of Numba's host API that needs the driver: events
 * (kiln.event, Event.record/synchronize/query/wait/elapsed_time), page-locked
 * host memory (kiln.pinned_array), device attributes (kiln.get_current_device).
 *
 * Events on EXT_HOST_DEVICE (KILN_TARGET=cpu) need no driver: the work queued
 * before a record() is done when record() runs (CPU launches and host copies
 * are synchronous), so an event is the monotonic clock's time at its record().
 */
#include "host.h"

#include <time.h>

/* ---- Event ------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    void *handle; /* CUevent; NULL on EXT_HOST_DEVICE */
    int device;
    bool timing;
    bool recorded; /* EXT_HOST_DEVICE: ms holds the time of the last record() */
    double ms;
    ModState *st;
} EventObject;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void event_dealloc(EventObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    if (self->handle && self->st->cuda && kiln_cuda_use(self->st->cuda, self->device) == 0)
        kiln_cuda_event_free(self->st->cuda, self->handle);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static kiln_cuda *event_cuda(EventObject *self) { return ext_cuda_on(self->st, self->device); }

/* record(stream=0): the event completes when the work queued before it on stream does */
static PyObject *event_record(EventObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {(char *)"stream", NULL};
    PyObject *stream = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &stream)) return NULL;
    void *h = NULL;
    if (self->device == EXT_HOST_DEVICE) {
        if (stream && ext_stream_handle(self->st, stream, &h) < 0) return NULL;
        self->ms = now_ms();
        self->recorded = true;
        Py_RETURN_NONE;
    }
    kiln_cuda *cu = event_cuda(self);
    if (!cu) return NULL;
    if (stream && ext_stream_handle(self->st, stream, &h) < 0) return NULL;
    int rc = kiln_cuda_event_record(cu, self->handle, h);
    if (rc != 0) return ext_cuda_error(self->st, rc, "recording an event");
    Py_RETURN_NONE;
}

static PyObject *event_synchronize(EventObject *self, PyObject *unused) {
    (void)unused;
    if (self->device == EXT_HOST_DEVICE) Py_RETURN_NONE;
    kiln_cuda *cu = event_cuda(self);
    if (!cu) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = kiln_cuda_event_sync(cu, self->handle);
    Py_END_ALLOW_THREADS
    if (rc != 0) return ext_cuda_error(self->st, rc, "waiting for an event");
    if (ext_check_kernel_error(self->st, self->device) < 0) return NULL;
    Py_RETURN_NONE;
}

/* query() -> True when the work before the event is done */
static PyObject *event_query(EventObject *self, PyObject *unused) {
    (void)unused;
    if (self->device == EXT_HOST_DEVICE) Py_RETURN_TRUE;
    kiln_cuda *cu = event_cuda(self);
    if (!cu) return NULL;
    int rc = kiln_cuda_event_query(cu, self->handle);
    if (rc == 600) Py_RETURN_FALSE; /* CUDA_ERROR_NOT_READY */
    if (rc != 0) return ext_cuda_error(self->st, rc, "querying an event");
    Py_RETURN_TRUE;
}

/* wait(stream=0): work queued on stream afterwards waits for the event */
static PyObject *event_wait(EventObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {(char *)"stream", NULL};
    PyObject *stream = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &stream)) return NULL;
    void *h = NULL;
    if (self->device == EXT_HOST_DEVICE) { /* the event's work is done already */
        if (stream && ext_stream_handle(self->st, stream, &h) < 0) return NULL;
        Py_RETURN_NONE;
    }
    kiln_cuda *cu = event_cuda(self);
    if (!cu) return NULL;
    if (stream && ext_stream_handle(self->st, stream, &h) < 0) return NULL;
    int rc = kiln_cuda_stream_wait_event(cu, h, self->handle);
    if (rc != 0) return ext_cuda_error(self->st, rc, "making a stream wait for an event");
    Py_RETURN_NONE;
}

static PyObject *elapsed(ModState *st, PyObject *a, PyObject *b) {
    if (!Py_IS_TYPE(a, st->EventType) || !Py_IS_TYPE(b, st->EventType)) {
        PyErr_SetString(PyExc_TypeError, "elapsed_time takes two kiln events");
        return NULL;
    }
    EventObject *s = (EventObject *)a, *e = (EventObject *)b;
    if (!s->timing || !e->timing) {
        PyErr_SetString(PyExc_ValueError,
                        "an event made with kiln.event(timing=False) cannot be timed");
        return NULL;
    }
    if (s->device != e->device) {
        PyErr_Format(PyExc_ValueError, "the events are on devices %d and %d", s->device, e->device);
        return NULL;
    }
    if (s->device == EXT_HOST_DEVICE) {
        if (!s->recorded || !e->recorded) {
            PyErr_Format(st->CudaError, "%s event was never recorded (while timing two events: "
                         "record both first)", s->recorded ? "the end" : "the start");
            return NULL;
        }
        return PyFloat_FromDouble(e->ms - s->ms);
    }
    kiln_cuda *cu = event_cuda(s);
    if (!cu) return NULL;
    float ms = 0;
    int rc = kiln_cuda_event_elapsed(cu, &ms, s->handle, e->handle);
    if (rc != 0) return ext_cuda_error(st, rc, "timing two events (record and synchronize both first)");
    return PyFloat_FromDouble(ms);
}

/* start.elapsed_time(end) -> milliseconds between the two recorded events */
static PyObject *event_elapsed_time(EventObject *self, PyObject *end) {
    return elapsed(self->st, (PyObject *)self, end);
}

static PyObject *event_handle(EventObject *self, void *c) {
    (void)c;
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)self->handle);
}

static PyMethodDef event_methods[] = {
    /* "name($self, ...)\n--\n\n": the text signature help() and the docs show */
    {"record", (PyCFunction)(void (*)(void))event_record, METH_VARARGS | METH_KEYWORDS,
     "record($self, /, stream=0)\n--\n\nMarks the point after the work queued so far on stream."},
    {"synchronize", (PyCFunction)event_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\nWaits until the event completes."},
    {"query", (PyCFunction)event_query, METH_NOARGS,
     "query($self, /)\n--\n\nWhether the event has completed."},
    {"wait", (PyCFunction)(void (*)(void))event_wait, METH_VARARGS | METH_KEYWORDS,
     "wait($self, /, stream=0)\n--\n\nMakes later work on stream wait for this event."},
    {"elapsed_time", (PyCFunction)event_elapsed_time, METH_O,
     "elapsed_time($self, end, /)\n--\n\nMilliseconds from this event to end (both recorded, "
     "made with timing=True)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef event_getset[] = {
    {"handle", (getter)event_handle, NULL, "the CUevent as an int", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot event_slots[] = {
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_methods, event_methods},
    {Py_tp_getset, event_getset},
    {Py_tp_doc, (void *)"A CUDA event: kiln.event() makes one (Numba's cuda.event)."},
    {0, NULL}};

static PyType_Spec event_spec = {"kiln.Event", sizeof(EventObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                 event_slots};

/* event(device, timing) -> Event */
static PyObject *f_event(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    int device, timing;
    if (!PyArg_ParseTuple(args, "ip", &device, &timing)) return NULL;
    kiln_cuda *cu = NULL;
    void *h = NULL;
    if (device != EXT_HOST_DEVICE) {
        if (!(cu = ext_cuda_on(st, device))) return NULL;
        int rc = kiln_cuda_event_new(cu, &h, timing);
        if (rc != 0) return ext_cuda_error(st, rc, "creating an event");
    }
    EventObject *e = PyObject_New(EventObject, st->EventType);
    if (!e) {
        if (cu) kiln_cuda_event_free(cu, h);
        return NULL;
    }
    e->recorded = false;
    e->ms = 0;
    e->handle = h;
    e->device = device;
    e->timing = timing != 0;
    e->st = st;
    return (PyObject *)e;
}

static PyObject *f_event_elapsed_time(PyObject *m, PyObject *args) {
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO", &a, &b)) return NULL;
    return elapsed(ext_state(m), a, b);
}

/* ---- page-locked host memory --------------------------------------------------------------- */

/* The owner of a page-locked, mapped or managed block (kiln_cuda_host_alloc's kinds):
 * exposes it as a writable byte buffer, frees it when the last NumPy array over it goes. */
typedef struct {
    PyObject_HEAD
    void *ptr;
    Py_ssize_t size;
    int device;
    int kind;
    ModState *st;
} PinnedObject;

static void pinned_dealloc(PinnedObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    if (self->ptr && self->st->cuda && kiln_cuda_use(self->st->cuda, self->device) == 0)
        kiln_cuda_host_free(self->st->cuda, self->ptr, self->kind);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static int pinned_getbuffer(PinnedObject *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->ptr, self->size, 0, flags);
}

static PyType_Slot pinned_slots[] = {
    {Py_tp_dealloc, pinned_dealloc},
    {Py_bf_getbuffer, pinned_getbuffer},
    {Py_tp_doc, (void *)"Page-locked host memory behind a kiln.pinned_array."},
    {0, NULL}};

static PyType_Spec pinned_spec = {"kiln._kiln.PinnedMemory", sizeof(PinnedObject), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                  pinned_slots};

/* pinned_alloc(device, nbytes, kind=0) -> an object with the buffer protocol; kind is
 * 0 page-locked, 1 mapped into the device's address space, 2 managed (unified memory) */
static PyObject *f_pinned_alloc(PyObject *m, PyObject *args) {
    static const char *const what[] = {"allocating page-locked host memory",
                                       "allocating mapped host memory", "allocating managed memory"};
    ModState *st = ext_state(m);
    int device, kind = KILN_HOST_PINNED;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "in|i", &device, &n, &kind)) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "negative size");
        return NULL;
    }
    if (kind < KILN_HOST_PINNED || kind > KILN_HOST_MANAGED) {
        PyErr_Format(PyExc_ValueError, "unknown host memory kind %d", kind);
        return NULL;
    }
    kiln_cuda *cu = ext_cuda_on(st, device);
    if (!cu) return NULL;
    void *p = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = kiln_cuda_host_alloc(cu, &p, (size_t)n, kind);
    Py_END_ALLOW_THREADS
    if (rc != 0) return ext_cuda_error(st, rc, what[kind]);
    PinnedObject *o = PyObject_New(PinnedObject, st->PinnedType);
    if (!o) {
        kiln_cuda_host_free(cu, p, kind);
        return NULL;
    }
    o->ptr = p;
    o->size = n;
    o->device = device;
    o->kind = kind;
    o->st = st;
    return (PyObject *)o;
}

/* set_mapped_class(cls): kiln's ndarray subclass over mapped and managed memory, whose
 * arrays a GPU launch takes in place (ext_classify) */
static PyObject *f_set_mapped_class(PyObject *m, PyObject *cls) {
    ModState *st = ext_state(m);
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "expected a class");
        return NULL;
    }
    Py_INCREF(cls);
    Py_XSETREF(st->mapped_class, (PyTypeObject *)cls);
    Py_RETURN_NONE;
}

/* host_register(device, buffer, on) -> whether this call changed the pinning: pins (on)
 * or unpins the writable, contiguous buffer's memory; pinning memory that is already
 * pinned returns False and leaves it to its owner */
static PyObject *f_host_register(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    int device, on;
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "iOp", &device, &obj, &on)) return NULL;
    kiln_cuda *cu = ext_cuda_on(st, device);
    if (!cu) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS) < 0) return NULL;
    int rc = 0;
    if (view.len > 0) {
        Py_BEGIN_ALLOW_THREADS
        rc = on ? kiln_cuda_host_register(cu, view.buf, (size_t)view.len)
                : kiln_cuda_host_unregister(cu, view.buf);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    if (on && rc == 712) Py_RETURN_FALSE; /* CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED */
    if (rc != 0) return ext_cuda_error(st, rc, on ? "page-locking host memory" : "unpinning host memory");
    if (view.len == 0) Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

/* device_attribute(device, attr) -> int (a CUdevice_attribute) */
static PyObject *f_device_attribute(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    int device, attr;
    if (!PyArg_ParseTuple(args, "ii", &device, &attr)) return NULL;
    kiln_cuda *cu = ext_cuda(st);
    if (!cu) return NULL;
    int v = 0, rc = kiln_cuda_device_attribute(cu, device, attr, &v);
    if (rc != 0) return ext_cuda_error(st, rc, "reading a device attribute");
    return PyLong_FromLong(v);
}

PyMethodDef ext_host_functions[] = {
    {"event", f_event, METH_VARARGS, "event(device, timing) -> Event"},
    {"event_elapsed_time", f_event_elapsed_time, METH_VARARGS,
     "event_elapsed_time(start, end) -> milliseconds"},
    {"set_mapped_class", f_set_mapped_class, METH_O, "register kiln's mapped-array class"},
    {"pinned_alloc", f_pinned_alloc, METH_VARARGS, "pinned_alloc(device, nbytes, kind=0) -> buffer"},
    {"device_attribute", f_device_attribute, METH_VARARGS, "device_attribute(device, attr) -> int"},
    {"host_register", f_host_register, METH_VARARGS, "host_register(device, buffer, on) -> bool"},
    {NULL, NULL, 0, NULL}};

int ext_host_types(PyObject *module, ModState *st) {
    st->EventType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &event_spec, NULL);
    st->PinnedType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &pinned_spec, NULL);
    if (!st->EventType || !st->PinnedType) return -1;
    if (PyModule_AddType(module, st->EventType) < 0) return -1;
    return 0;
}
