/* errors.c: what the core reports, as Python exceptions.
 *
 * Compile errors arrive as diagnostics (file:line:col, the line, a caret, a
 * hint) formatted once by the core: collected as a list of str with the GIL,
 * or as text without it (builds), and raised as kiln.CompileError.  Kernel
 * errors arrive as the record a kernel filled in (the CPU's on the launching
 * thread's stack, the GPU's in device memory) and become IndexError,
 * AssertionError, ZeroDivisionError or ValueError naming the kernel's line.
 */
#include <string.h>

#include "errors.h"

int ext_errors_init(PyObject *m, ModState *st) {
    st->CompileError = PyErr_NewExceptionWithDoc(
        "kiln.CompileError",
        "A kernel could not be compiled; the message gives file:line:col, the line, a caret "
        "and a hint.",
        PyExc_Exception, NULL);
    if (!st->CompileError || PyModule_AddObjectRef(m, "CompileError", st->CompileError) < 0)
        return -1;
    st->CudaError = PyErr_NewExceptionWithDoc(
        "kiln.CudaError", "The CUDA driver reported an error; the message has its name and text.",
        PyExc_RuntimeError, NULL);
    if (!st->CudaError || PyModule_AddObjectRef(m, "CudaError", st->CudaError) < 0) return -1;
    st->PerformanceWarning = PyErr_NewExceptionWithDoc(
        "kiln.PerformanceWarning",
        "A launch ran slower than it could (host arrays copied for a GPU launch, ...).",
        PyExc_UserWarning, NULL);
    if (!st->PerformanceWarning ||
        PyModule_AddObjectRef(m, "PerformanceWarning", st->PerformanceWarning) < 0)
        return -1;
    st->CacheWarning = PyErr_NewExceptionWithDoc(
        "kiln.CacheWarning",
        "A cache tier could not be used (and is off for this process), or an entry failed its "
        "checks and is rebuilt.",
        PyExc_UserWarning, NULL);
    if (!st->CacheWarning || PyModule_AddObjectRef(m, "CacheWarning", st->CacheWarning) < 0)
        return -1;
    st->CacheError = PyErr_NewExceptionWithDoc(
        "kiln.CacheError", "A cache bundle could not be exported or imported.",
        PyExc_RuntimeError, NULL);
    if (!st->CacheError || PyModule_AddObjectRef(m, "CacheError", st->CacheError) < 0)
        return -1;
    return 0;
}

/* ---- diagnostics with the GIL: a list ----------------------------------------------------- */

void ext_sink_diag(void *ud, const kiln_diag *d) {
    Sink *s = ud;
    if (d->severity == KILN_ERROR) s->nerrors++;
    if (!s->list) return;
    PyObject *t = PyUnicode_DecodeUTF8(d->formatted, (Py_ssize_t)strlen(d->formatted), "replace");
    if (t) {
        PyList_Append(s->list, t);
        Py_DECREF(t);
    } else {
        PyErr_Clear();
    }
}

void ext_raise_compile_error(ModState *st, Sink *s, const char *fallback) {
    if (PyErr_Occurred()) return;
    PyObject *sep = PyUnicode_FromString("\n");
    PyObject *msg = NULL;
    if (sep && s->list && PyList_GET_SIZE(s->list) > 0) msg = PyUnicode_Join(sep, s->list);
    if (!msg) msg = PyUnicode_FromString(fallback);
    Py_XDECREF(sep);
    if (!msg) return;
    PyObject *exc = PyObject_CallOneArg(st->CompileError, msg);
    if (exc) {
        if (s->list) PyObject_SetAttrString(exc, "diagnostics", s->list);
        PyErr_SetObject(st->CompileError, exc);
        Py_DECREF(exc);
    }
    Py_DECREF(msg);
}

/* ---- diagnostics without the GIL: text ----------------------------------------------------- */

void ext_text_diag(void *ud, const kiln_diag *d) {
    TextSink *t = ud;
    if (d->severity == KILN_ERROR) t->nerrors++;
    size_t len = strlen(d->formatted);
    if (t->n + len + 2 > t->cap) {
        size_t ncap = (t->cap + len + 2) * 2;
        char *nb = PyMem_RawRealloc(t->buf, ncap);
        if (!nb) return;
        t->buf = nb;
        t->cap = ncap;
    }
    if (t->n) t->buf[t->n++] = '\n';
    memcpy(t->buf + t->n, d->formatted, len);
    t->n += len;
    t->buf[t->n] = 0;
}

int ext_interrupted(void *ud) {
    (void)ud;
    /* Python runs signal handlers on the main thread only (PyErr_CheckSignals is
     * a no-op elsewhere): other threads' waits end by their own time limits, and
     * never take the GIL here, which a daemon thread must not do once the
     * interpreter has finalized (PyGILState_Ensure would crash). */
    if (!pthread_equal(pthread_self(), ext_sig.main)) return 0;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = 0;
    if (PyErr_Occurred()) stop = 1; /* an earlier poll's KeyboardInterrupt */
    else if (PyErr_CheckSignals() < 0) stop = 1; /* the exception stays set for the caller */
    PyGILState_Release(g);
    return stop;
}

void ext_raise_text(ModState *st, TextSink *t, const char *fallback) {
    if (PyErr_Occurred()) return; /* an interrupt's KeyboardInterrupt stands */
    PyObject *msg = t->n ? PyUnicode_DecodeUTF8(t->buf, (Py_ssize_t)t->n, "replace")
                         : PyUnicode_FromString(fallback);
    if (msg) {
        PyErr_SetObject(st->CompileError, msg);
        Py_DECREF(msg);
    }
}

/* ---- kernel errors ----------------------------------------------------------------------- */

/* A kernel's `raise E(...)`: kiln._compile.user_exception builds E from the raise site's
 * fields (the error's "file", sema_raise.c), the line, and the packed thread and block. */
static void raise_user_exception(const char *site, int line, long long thread, long long block) {
    if (strncmp(site, "\x01raise\x1f", 7) != 0) {
        PyErr_Format(PyExc_RuntimeError, "%s:%d: the kernel raised an exception", site, line);
        return;
    }
    PyObject *mod = PyImport_ImportModule("kiln._compile");
    PyObject *exc = mod ? PyObject_CallMethod(mod, "user_exception", "siLL", site, line, thread,
                                              block)
                        : NULL;
    Py_XDECREF(mod);
    if (!exc) return;
    if (PyExceptionInstance_Check(exc))
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    else
        PyErr_SetString(PyExc_RuntimeError, "user_exception did not return an exception");
    Py_DECREF(exc);
}

PyObject *ext_raise_kernel_error(const kiln_kernel_error *err, PyObject *files) {
    int fidx = err->line >> 20, line = err->line & 0xFFFFF;
    const char *file = "?";
    if (files && PyTuple_Check(files) && fidx < PyTuple_GET_SIZE(files)) {
        file = PyUnicode_AsUTF8(PyTuple_GET_ITEM(files, fidx));
        if (!file) {
            PyErr_Clear();
            file = "?";
        }
    }
    switch (err->code) {
    case KILN_ERR_INDEX:
        if (err->b == -1) { /* a tuple's item (emit_tuple_get), worded as Python's */
            PyErr_Format(PyExc_IndexError, "%s:%d: tuple index out of range (index %lld, length %lld)",
                         file, line, (long long)err->a, (long long)err->c);
            break;
        }
        PyErr_Format(PyExc_IndexError, "%s:%d: index %lld is out of bounds for axis %lld with size %lld",
                     file, line, (long long)err->a, (long long)err->b, (long long)err->c);
        break;
    case KILN_ERR_ASSERT: PyErr_Format(PyExc_AssertionError, "%s:%d: assertion failed", file, line); break;
    case KILN_ERR_ZERODIV: /* a: 0 integers, 1 float /, 2 float //, 3 float % */
        PyErr_Format(PyExc_ZeroDivisionError, "%s:%d: %s", file, line,
                     err->a == 1   ? "float division by zero"
                     : err->a == 2 ? "float floor division by zero"
                     : err->a == 3 ? "float modulo by zero"
                                   : "integer division or modulo by zero");
        break;
    case KILN_ERR_RANGE:
        PyErr_Format(PyExc_ValueError, "%s:%d: range() arg 3 must not be zero", file, line);
        break;
    case KILN_ERR_POW:
        PyErr_Format(PyExc_ValueError,
                     "%s:%d: integers to negative integer powers are not allowed (%lld ** %lld)",
                     file, line, (long long)err->a, (long long)err->b);
        break;
    case KILN_ERR_NOMEM:
        PyErr_Format(PyExc_MemoryError,
                     "the CPU could not map %lld bytes for a block's shared memory and the stacks "
                     "of its threads (a kernel with shared memory or barriers runs each thread "
                     "of a block on a stack of its own): use smaller blocks or fewer local arrays",
                     (long long)err->a);
        break;
    case KILN_ERR_RESHAPE:
        if (err->c > 1)
            PyErr_Format(PyExc_ValueError, "%s:%d: can only specify one unknown dimension (-1) in "
                         "a.reshape()", file, line);
        else
            PyErr_Format(PyExc_ValueError,
                         "%s:%d: cannot reshape array of size %lld into a shape of %s%lld elements",
                         file, line, (long long)err->a, err->c ? "a multiple of " : "",
                         (long long)err->b);
        break;
    case KILN_ERR_COOP:
        PyErr_Format(PyExc_ValueError,
                     "a cooperative launch of %lld blocks of %lld threads is too large: at most "
                     "%lld blocks of %lld threads can be co-resident on the CPU target "
                     "(KILN_CG_MAX_THREADS = %d threads; see max_cooperative_grid_blocks)",
                     (long long)err->a, (long long)err->c, (long long)err->b, (long long)err->c,
                     (int)KILN_CG_MAX_THREADS);
        break;
    case KILN_ERR_BROADCAST:
        PyErr_Format(PyExc_ValueError,
                     "%s:%d: operands could not be broadcast together: an operand's extent %lld "
                     "does not match the output's %lld on its axis %lld (nor is it 1)", file, line,
                     (long long)err->a, (long long)err->c, (long long)err->b);
        break;
    case KILN_ERR_EMPTY_REDUCE:
        PyErr_Format(PyExc_ValueError,
                     "%s:%d: zero-size array to reduction operation %s which has no identity", file,
                     line, err->a ? "maximum" : "minimum");
        break;
    case KILN_ERR_VIEW:
        PyErr_Format(PyExc_ValueError, "%s:%d: %s", file, line,
                     err->a == 0 ? "To change to a dtype of a different size, the last axis must "
                                   "be contiguous"
                     : err->a == 1 ? "When changing to a larger dtype, its size must be a divisor "
                                     "of the total size in bytes of the last axis of the array."
                                   : "a.view(dtype) in a kernel needs every axis's stride to be a "
                                     "whole number of the new dtype's items");
        break;
    case KILN_ERR_RAISE: raise_user_exception(file, line, err->b, err->c); break;
    case KILN_ERR_NONE_VALUE:
        PyErr_Format(PyExc_TypeError,
                     "%s:%d: expected a number, got None (a function's result that may be None, "
                     "used as a number; test 'is None' first)", file, line);
        break;
    case KILN_ERR_RECURSION:
        PyErr_Format(PyExc_RecursionError,
                     "%s:%d: maximum recursion depth exceeded: this recursive device function's "
                     "calls took more than the %s of stack kiln gives recursion on a CPU thread "
                     "(KILN_REC_STACK)%s",
                     file, line, err->a ? "32 KiB" : "1 MiB",
                     err->a ? "" : ", or all but 64 KiB of the thread's own stack where it has "
                                   "less (threading.stack_size, ulimit -s)");
        break;
    default: PyErr_Format(PyExc_RuntimeError, "%s:%d: kernel error %d", file, line, err->code); break;
    }
    return NULL;
}
