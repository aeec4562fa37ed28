/* exectext.c: the text given to exec and compile, kept for kiln's source reader.
 *
 * kiln compiles a function from its source text.  A function made by exec from a
 * string has the file name '<string>' and Python keeps no text for it; _source.py
 * looks for the string in the frames above the decoration, but a helper that built
 * the function and returned it has taken the string with it (Numba's own tests do
 * this).  Python announces every compilation of a string with the audit event
 * "compile" (source, filename), so a C audit hook keeps the recent sources whose file
 * name starts with '<' and that define a function, in a bounded ring: at most
 * EXEC_TEXTS of them and EXEC_TEXT_BUDGET bytes in all, none over EXEC_TEXT_MAX
 * (docs/limits.md).  _source.py tries them when the frames hold no text.
 *
 * The hook is a C function: for every other audit event it costs one compare of the
 * event's first characters (CPython builds the event's argument tuple for any hook;
 * a hook written in Python would cost a call per event).  Audit hooks are process-wide
 * and cannot be removed, so the ring is too: it is static, guarded by the GIL (hooks
 * run with it held), and lives as long as the process.
 */
#include "exectext.h"

#include <string.h>

enum {
    EXEC_TEXTS = 256,               /* sources kept */
    EXEC_TEXT_MAX = 1 << 20,        /* bytes of one source; longer ones are not kept */
    EXEC_TEXT_BUDGET = 8 << 20      /* bytes of all the sources kept */
};

static PyObject *ring[EXEC_TEXTS]; /* bytes or str, oldest at head */
static int head, count;
static Py_ssize_t kept_bytes;
static bool installed;

static Py_ssize_t text_size(PyObject *o) {
    return PyBytes_Check(o) ? PyBytes_GET_SIZE(o) : PyUnicode_GET_LENGTH(o);
}

static bool defines_function(PyObject *src) {
    if (PyBytes_Check(src)) {
        const char *p = PyBytes_AS_STRING(src);
        Py_ssize_t n = PyBytes_GET_SIZE(src);
        return memmem(p, (size_t)n, "def ", 4) != NULL || memmem(p, (size_t)n, "lambda", 6) != NULL;
    }
    static const char *const words[] = {"def ", "lambda"};
    for (int i = 0; i < 2; i++) {
        PyObject *w = PyUnicode_FromString(words[i]);
        if (!w) return false;
        Py_ssize_t at = PyUnicode_Find(src, w, 0, PyUnicode_GET_LENGTH(src), 1);
        Py_DECREF(w);
        if (at >= 0) return true;
    }
    return false;
}

static void drop_oldest(void) {
    PyObject *o = ring[head];
    ring[head] = NULL;
    head = (head + 1) % EXEC_TEXTS;
    count--;
    kept_bytes -= text_size(o);
    Py_DECREF(o);
}

static int exec_hook(const char *event, PyObject *args, void *data) {
    (void)data;
    if (event[0] != 'c' || strcmp(event, "compile") != 0) return 0;
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 2) return 0;
    PyObject *src = PyTuple_GET_ITEM(args, 0), *fname = PyTuple_GET_ITEM(args, 1);
    if (!PyUnicode_Check(fname) || PyUnicode_GET_LENGTH(fname) < 1 ||
        PyUnicode_READ_CHAR(fname, 0) != '<')
        return 0; /* a real file: kiln reads it */
    if (!PyBytes_Check(src) && !PyUnicode_Check(src)) return 0; /* an AST: no text */
    Py_ssize_t n = text_size(src);
    if (n > EXEC_TEXT_MAX || !defines_function(src)) {
        PyErr_Clear();
        return 0;
    }
    while (count && (count == EXEC_TEXTS || kept_bytes + n > EXEC_TEXT_BUDGET)) drop_oldest();
    Py_INCREF(src);
    ring[(head + count) % EXEC_TEXTS] = src;
    count++;
    kept_bytes += n;
    return 0;
}

int ext_exectext_init(void) {
    if (installed) return 0;
    if (PySys_AddAuditHook(exec_hook, NULL) < 0) return -1;
    installed = true;
    return 0;
}

/* exec_texts() -> list of str: the sources kept, newest first. */
static PyObject *mod_exec_texts(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (int i = count - 1; i >= 0; i--) {
        PyObject *o = ring[(head + i) % EXEC_TEXTS];
        PyObject *s = PyBytes_Check(o) ? PyUnicode_DecodeUTF8(PyBytes_AS_STRING(o),
                                                               PyBytes_GET_SIZE(o), "replace")
                                       : Py_NewRef(o);
        if (!s || PyList_Append(out, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(s);
    }
    return out;
}

PyMethodDef ext_exectext_functions[] = {
    {"exec_texts", mod_exec_texts, METH_NOARGS,
     "exec_texts() -> list of str: recent text given to exec/compile that defines functions"},
    {NULL, NULL, 0, NULL}};
