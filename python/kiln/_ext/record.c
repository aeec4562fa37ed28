/* record.c: records of a step's launches, replayed (see record.h).
 *
 * A record is made on one thread while the GIL is held throughout, except in
 * the CPU kernels themselves; a replay holds the record busy (another thread
 * replaying the same record meanwhile runs the step eagerly instead, which
 * gives the same results).  The record holds references to every entry it
 * launches (table.h: the code stays loaded while the record may run it) and
 * to every object whose memory its launches use.
 */
#include "record.h"

#include <string.h>

#include "driver.h"
#include "errors.h"
#include "record_int.h"
#include "run.h"

/* ---- the guard --------------------------------------------------------------------- */

/* Classifies the step's arguments into a (n of them); -1 with an exception. */
static int classify_inputs(RecordObject *r, PyObject *args, Arg *a, int *nclassified) {
    *nclassified = 0;
    for (int i = 0; i < r->nin; i++) {
        if (r->in[i].kind != 'a') continue;
        if (ext_classify(r->st, PyTuple_GET_ITEM(args, i), &a[i], r->names, r->fname, i, NULL) < 0)
            return -1;
        *nclassified = i + 1;
    }
    return 0;
}

/* Whether an array argument is misaligned: kiln reads it through a copy (pack.c), whose
 * address a record cannot replay, so the step runs eagerly. */
static bool any_misaligned(const RecordObject *r, const Arg *a) {
    for (int i = 0; i < r->nin; i++)
        if (r->in[i].kind == 'a' && a[i].misaligned) return true;
    return false;
}

/* ---- the Record object ------------------------------------------------------------------ */

static int record_traverse(RecordObject *r, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(r));
    Py_VISIT(r->keep);
    Py_VISIT(r->fresh);
    return 0;
}

static int record_clear(RecordObject *r) {
    Py_CLEAR(r->keep);
    Py_CLEAR(r->fresh);
    return 0;
}

static void record_dealloc(RecordObject *r) {
    PyTypeObject *tp = Py_TYPE(r);
    PyObject_GC_UnTrack(r);
    kiln_cuda *cu = r->target == 1 && r->st->cuda && kiln_cuda_use(r->st->cuda, r->device) == 0
                        ? r->st->cuda
                        : NULL;
    if (cu) kiln_cuda_graph_free(cu, r->graph);
    PyMem_Free(r->xv);
    for (int i = 0; i < r->nt; i++) {
        PyMem_Free(r->t[i].copy);
        if (cu && r->t[i].dcopy) kiln_cuda_free(cu, r->t[i].dcopy, NULL);
    }
    for (int i = 0; i < r->nl; i++) {
        Py_XDECREF(r->l[i].e);
        PyMem_Free(r->l[i].slots);
        PyMem_Free(r->l[i].pp);
    }
    for (int i = 0; i < r->nin; i++) Py_XDECREF(r->in[i].obj);
    PyMem_Free(r->l);
    PyMem_Free(r->p);
    PyMem_Free(r->in);
    PyMem_Free(r->overlap);
    PyMem_Free(r->fbase);
    PyMem_Free(r->flo);
    PyMem_Free(r->fhi);
    PyMem_Free(r->res);
    Py_XDECREF(r->names);
    Py_XDECREF(r->fname);
    Py_XDECREF(r->why);
    record_clear(r);
    PyObject_GC_Del(r);
    Py_DECREF(tp);
}

/* record_begin(args, names, fname, kinds): classifies the step's arguments
 * (kinds[i]: 'a' an array or a number, 'e' compared with ==, 'i' compared by
 * identity) and starts recording on this thread.  Returns the Record being made,
 * or None when another recording is in progress (the step then runs eagerly). */
static PyObject *f_record_begin(PyObject *m, PyObject *const *argv, Py_ssize_t nargs) {
    ModState *st = ext_state(m);
    if (nargs != 4 || !PyTuple_Check(argv[0]) || !PyTuple_Check(argv[1]) ||
        !PyUnicode_Check(argv[2]) || !PyUnicode_Check(argv[3])) {
        PyErr_SetString(PyExc_TypeError, "record_begin(args, names, fname, kinds)");
        return NULL;
    }
    if (st->rec) Py_RETURN_NONE;
    PyObject *args = argv[0];
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    const char *kinds = PyUnicode_AsUTF8(argv[3]);
    if (!kinds) return NULL;
    if (n > REC_MAX_INPUTS || (Py_ssize_t)strlen(kinds) != n || PyTuple_GET_SIZE(argv[1]) != n) {
        PyErr_Format(PyExc_ValueError, "a recorded step takes at most %d arguments, one kind each",
                     REC_MAX_INPUTS);
        return NULL;
    }
    RecordObject *r = PyObject_GC_New(RecordObject, st->RecordType);
    if (!r) return NULL;
    memset((char *)r + sizeof(PyObject), 0, sizeof *r - sizeof(PyObject));
    r->st = st;
    r->target = -1;
    r->nin = (int)n;
    Py_INCREF(argv[1]);
    r->names = argv[1];
    Py_INCREF(argv[2]);
    r->fname = argv[2];
    r->keep = PyList_New(0);
    r->fresh = PyList_New(0);
    r->in = PyMem_Calloc((size_t)n + 1, sizeof *r->in);
    r->overlap = PyMem_Calloc((size_t)(n * n) + 1, 1);
    Arg *a = PyMem_Calloc((size_t)n + 1, sizeof *a);
    struct ExtRecorder *rec = PyMem_Calloc(1, sizeof *rec);
    PyObject_GC_Track(r);
    int nc = 0;
    if (!r->keep || !r->fresh || !r->in || !r->overlap || !a || !rec) {
        PyErr_NoMemory();
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        RecInput *in = &r->in[i];
        in->kind = kinds[i];
        if (in->kind != 'a') {
            Py_INCREF(PyTuple_GET_ITEM(args, i));
            in->obj = PyTuple_GET_ITEM(args, i);
        }
    }
    if (classify_inputs(r, args, a, &nc) < 0) goto fail;
    for (int i = 0; i < n; i++) {
        RecInput *in = &r->in[i];
        if (in->kind != 'a') continue;
        in->t = a[i].t;
        in->v = a[i].v;
        in->on_gpu = a[i].on_gpu;
        in->device = a[i].device;
        in->readonly = a[i].readonly;
        memcpy(in->shape, a[i].shape, sizeof in->shape);
        memcpy(in->strides, a[i].strides, sizeof in->strides);
        if (in->t.is_array) {
            span_of(&a[i], &in->lo, &in->hi);
            in->base = base_of(&a[i]);
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const RecInput *x = &r->in[i], *y = &r->in[j];
            r->overlap[i * n + j] = x->kind == 'a' && y->kind == 'a' && x->t.is_array &&
                                    y->t.is_array && i != j &&
                                    overlaps(x->base, x->lo, x->hi, y->base, y->lo, y->hi);
        }
    bool misaligned = any_misaligned(r, a);
    for (int i = 0; i < nc; i++) ext_release_arg(&a[i]);
    PyMem_Free(a);
    rec->thread = PyThread_get_thread_ident();
    rec->r = r;
    Py_INCREF(r);
    st->rec = rec;
    if (misaligned) ext_record_refuse(st, "a kernel reads a misaligned array through a copy");
    return (PyObject *)r;
fail:
    for (int i = 0; i < nc; i++) ext_release_arg(&a[i]);
    PyMem_Free(a);
    PyMem_Free(rec);
    Py_DECREF(r);
    return NULL;
}

/* Builds the CUDA graph of a GPU record: one kernel node per launch, in order. */
/* A hash of n pointer values (0 is never one: it marks an empty place of xseen). */
static uint64_t ptr_hash(const uint64_t *v, int n) {
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < n; i++) h = (h ^ v[i]) * 0xff51afd7ed558ccdu, h ^= h >> 32;
    return h ? h : 1;
}

static int build_graph(RecordObject *r) {
    kiln_cuda *cu = ext_cuda_on(r->st, r->device);
    if (!cu) return -1;
    if (!kiln_cuda_graphs(cu)) return 0; /* replayed launch by launch */
    for (int i = 0; i < r->nl; i++) /* a cooperative node needs CUDA 11.7's attribute */
        if (kiln_cuda_module_cooperative(r->l[i].e->cu) && !kiln_cuda_graph_coop(cu)) return 0;
    int rc = kiln_cuda_graph_new(cu, &r->graph);
    for (int i = 0; rc == 0 && i < r->nl; i++) {
        RecLaunch *L = &r->l[i];
        rc = kiln_cuda_graph_add(cu, r->graph, L->e->cu, L->grid, L->block, (unsigned)L->shmem,
                                 L->wide ? NULL : L->pp, L->wide ? L->pp : NULL);
    }
    if (rc == 0) rc = kiln_cuda_graph_instantiate(cu, r->graph);
    if (rc != 0) {
        kiln_cuda_graph_free(cu, r->graph);
        r->graph = NULL;
        ext_cuda_error(r->st, rc, "making the CUDA graph of a recorded step");
        return -1;
    }
    r->st->rec_counts[2]++;
    /* the pointers the graph's nodes hold: the recorded ones, in copy 0 as in the graph */
    r->xv = PyMem_Calloc((size_t)(KILN_CUDA_GRAPH_EXECS + 1) * (size_t)(r->np ? r->np : 1),
                         sizeof *r->xv);
    if (!r->xv) {
        kiln_cuda_graph_free(cu, r->graph);
        r->graph = NULL;
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < r->np; i++) {
        uint64_t v = (uint64_t)r->l[r->p[i].launch].slots[r->p[i].slot];
        r->xv[i] = r->xv[(size_t)KILN_CUDA_GRAPH_EXECS * (size_t)r->np + (size_t)i] = v;
    }
    r->xuse[0] = r->xclock = 1;
    r->xseen[0] = ptr_hash(r->xv, r->np);
    r->xnext = 1;
    return 0;
}

/* The executable copy of r's graph to run with the pointers now in the launches' slots:
 * one whose nodes hold them all; else, for a set of pointers seen in one of the last
 * REC_SEEN calls (buffers that take turns), a new copy while there is room (instantiated
 * from the graph as recorded); else the copy least recently run.  The nodes of the copy
 * whose pointers differ are set (each an update counted in rec_counts[3]).  -1 with an
 * exception set. */
static int exec_for(RecordObject *r, kiln_cuda *cu) {
    int n = kiln_cuda_graph_execs(r->graph), x = -1;
    for (int k = 0; k < n && x < 0; k++) {
        const uint64_t *row = r->xv + (size_t)k * (size_t)r->np;
        bool same = true;
        for (int i = 0; i < r->np && same; i++)
            same = row[i] == (uint64_t)r->l[r->p[i].launch].slots[r->p[i].slot];
        if (same) x = k;
    }
    bool again = false;
    if (x < 0) {
        uint64_t stack[64], *v = r->np <= 64 ? stack : PyMem_Malloc(sizeof *v * (size_t)r->np);
        if (!v) return PyErr_NoMemory(), -1;
        for (int i = 0; i < r->np; i++) v[i] = (uint64_t)r->l[r->p[i].launch].slots[r->p[i].slot];
        uint64_t h = ptr_hash(v, r->np);
        if (v != stack) PyMem_Free(v);
        for (int k = 0; k < REC_SEEN && !again; k++) again = r->xseen[k] == h;
        if (!again) {
            r->xseen[r->xnext] = h;
            r->xnext = (r->xnext + 1) % REC_SEEN;
        }
    }
    if (x < 0 && again && n < KILN_CUDA_GRAPH_EXECS) {
        int rc = kiln_cuda_graph_instantiate(cu, r->graph);
        if (rc != 0) return ext_cuda_error(r->st, rc, "making a copy of a step's CUDA graph"), -1;
        r->st->rec_counts[2]++;
        x = n;
        memcpy(r->xv + (size_t)x * (size_t)r->np,
               r->xv + (size_t)KILN_CUDA_GRAPH_EXECS * (size_t)r->np,
               sizeof *r->xv * (size_t)r->np);
    }
    if (x < 0) {
        x = 0;
        for (int k = 1; k < n; k++)
            if (r->xuse[k] < r->xuse[x]) x = k;
    }
    uint64_t *row = r->xv + (size_t)x * (size_t)r->np;
    for (int i = 0; i < r->np; i++) {
        const RecPtr *p = &r->p[i];
        if (row[i] != (uint64_t)r->l[p->launch].slots[p->slot]) r->l[p->launch].dirty = true;
    }
    int rc = 0;
    for (int i = 0; i < r->nl; i++) {
        RecLaunch *L = &r->l[i];
        if (!L->dirty) continue;
        L->dirty = false;
        if (rc == 0) {
            rc = kiln_cuda_graph_set(cu, r->graph, x, i, L->e->cu, L->grid, L->block,
                                     (unsigned)L->shmem, L->wide ? NULL : L->pp,
                                     L->wide ? L->pp : NULL);
            if (rc == 0) r->st->rec_counts[3]++;
        }
    }
    /* the pointers the copy's nodes now hold; after a failed update, none it could match
     * (its nodes are set again, all of them, when it is next chosen) */
    for (int i = 0; i < r->np; i++)
        row[i] = rc == 0 ? (uint64_t)r->l[r->p[i].launch].slots[r->p[i].slot] : UINT64_MAX;
    if (rc != 0) return ext_cuda_error(r->st, rc, "replaying a recorded step"), -1;
    r->xuse[x] = ++r->xclock;
    return x;
}

/* record_end(result, res, fresh): ends this thread's recording.  res: how the
 * result is rebuilt at replay, a tuple of ints (>= 0 argument, -1 None, <= -2
 * returned temporary), and whether it is a tuple (res is then a list); fresh:
 * for each returned temporary, (the array, a callable that makes another like
 * it).  why: a reason from the Python layer not to replay, or None.  Returns
 * the record's reason not to replay (a str), or None when it replays. */
static PyObject *f_record_end(PyObject *m, PyObject *const *argv, Py_ssize_t nargs) {
    ModState *st = ext_state(m);
    struct ExtRecorder *rec = ext_recording(st);
    if (!rec) {
        PyErr_SetString(PyExc_RuntimeError, "no recording in progress on this thread");
        return NULL;
    }
    st->rec = NULL;
    RecordObject *r = rec->r;
    if (rec->why[0] == 0 && nargs == 3 && argv[2] != Py_None) {
        if (!PyUnicode_Check(argv[2]) || !PyUnicode_AsUTF8(argv[2])) goto bad;
        snprintf(rec->why, sizeof rec->why, "%s", PyUnicode_AsUTF8(argv[2]));
    }
    if (nargs != 3 || !(PyTuple_Check(argv[0]) || PyList_Check(argv[0])) ||
        !PyTuple_Check(argv[1]))
        goto bad;
    r->tuple = PyList_Check(argv[0]);
    PyObject *res = argv[0];
    r->nres = (int)PySequence_Fast_GET_SIZE(res);
    r->res = PyMem_Calloc((size_t)r->nres + 1, sizeof *r->res);
    r->nfresh = (int)PyTuple_GET_SIZE(argv[1]);
    r->fbase = PyMem_Calloc((size_t)r->nfresh + 1, sizeof *r->fbase);
    r->flo = PyMem_Calloc((size_t)r->nfresh + 1, sizeof *r->flo);
    r->fhi = PyMem_Calloc((size_t)r->nfresh + 1, sizeof *r->fhi);
    if (!r->res || !r->fbase || !r->flo || !r->fhi) {
        PyErr_NoMemory();
        goto fail;
    }
    for (int i = 0; i < r->nres; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(res, i));
        if (v == -1 && PyErr_Occurred()) goto fail;
        if (v >= r->nin || v < -1 - r->nfresh) goto bad;
        r->res[i] = (int)v;
    }
    for (int k = 0; k < r->nfresh; k++) {
        PyObject *pair = PyTuple_GET_ITEM(argv[1], k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) goto bad;
        Arg a;
        memset(&a, 0, sizeof a);
        if (ext_classify(st, PyTuple_GET_ITEM(pair, 0), &a, NULL, r->fname, 0, NULL) < 0) {
            ext_release_arg(&a);
            goto fail;
        }
        r->fbase[k] = base_of(&a);
        span_of(&a, &r->flo[k], &r->fhi[k]);
        ext_release_arg(&a);
        if (PyList_Append(r->fresh, PyTuple_GET_ITEM(pair, 1)) < 0) goto fail;
    }
    /* the pointers and first contents inside a returned temporary follow it */
    bool partial = false, unused = false;
    for (int k = 0; k < r->nfresh; k++) {
        uint64_t lo = r->fbase[k] + (uint64_t)r->flo[k], hi = r->fbase[k] + (uint64_t)r->fhi[k];
        bool used = hi <= lo; /* an empty array is made anew empty: nothing to fill */
        for (int i = 0; i < r->np; i++) {
            RecPtr *p = &r->p[i];
            uint64_t v = (uint64_t)r->l[p->launch].slots[p->slot];
            if (p->src != FROM_TEMP) continue;
            if (p->hi > p->lo ? v + (uint64_t)p->lo >= lo && v + (uint64_t)p->hi <= hi
                              : v >= lo && v < hi) {
                p->src = -2 - k;
                p->off = (int64_t)(v - r->fbase[k]);
                used = true;
            } else if (p->hi > p->lo && v + (uint64_t)p->lo < hi && lo < v + (uint64_t)p->hi) {
                partial = true;
            }
        }
        for (int i = 0; i < r->nt; i++)
            if (r->t[i].lo >= lo && r->t[i].hi <= hi) {
                r->t[i].src = -2 - k;
                r->t[i].off = (int64_t)(r->t[i].lo - r->fbase[k]);
                used = true;
            } else if (r->t[i].lo < hi && lo < r->t[i].hi) {
                partial = true;
            }
        unused |= !used;
    }
    if (partial && !rec->why[0])
        snprintf(rec->why, sizeof rec->why,
                 "it returns part of an array it made, and its kernels use more of that array");
    /* an array no launch used was filled some other way (t.copy(), t * 2: NumPy on the
     * host), which a replay, running only the launches, would return unfilled */
    if (unused && !rec->why[0])
        snprintf(rec->why, sizeof rec->why,
                 "it returns an array that none of its kiln launches used (made by NumPy or "
                 "another library in the step), which a replay would not fill");
    if (!rec->why[0] && r->target == 1 && build_graph(r) < 0) goto fail;
    if (rec->why[0]) {
        r->why = PyUnicode_DecodeUTF8(rec->why, (Py_ssize_t)strlen(rec->why), "replace");
        if (!r->why) goto fail;
    } else {
        Py_INCREF(Py_None);
        r->why = Py_None;
        st->rec_counts[0]++;
    }
    PyMem_Free(rec->fresh);
    PyMem_Free(rec);
    PyObject *why = r->why;
    Py_INCREF(why);
    Py_DECREF(r);
    return why;
bad:
    PyErr_SetString(PyExc_TypeError, "record_end(result, fresh, why)");
fail:
    /* the record is unusable: it says so, and it runs the step eagerly */
    if (!r->why) {
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        r->why = PyUnicode_FromString("recording failed");
        PyErr_Restore(t, v, tb);
    }
    PyMem_Free(rec->fresh);
    PyMem_Free(rec);
    Py_DECREF(r);
    return NULL;
}

/* Restores the first contents of the record's temporaries. */
static int restore_temps(RecordObject *r, kiln_cuda *cu, const uint64_t *fnew) {
    for (int i = 0; i < r->nt; i++) {
        const RecTemp *t = &r->t[i];
        uint64_t dst = t->src == FROM_TEMP ? t->lo : fnew[-2 - t->src] + (uint64_t)t->off;
        if (t->copy) {
            memcpy((void *)(uintptr_t)dst, t->copy, t->hi - t->lo);
        } else if (t->dcopy) {
            int rc = kiln_cuda_copy_dtod(cu, dst, t->dcopy, t->hi - t->lo, r->stream);
            if (rc != 0) return ext_cuda_error(r->st, rc, "restoring a recorded step's array"),
                                -1;
        }
    }
    return 0;
}

/* Runs the launches of a GPU record: its graph, or launch by launch without one. */
static int run_gpu(RecordObject *r, kiln_cuda *cu) {
    ModState *st = r->st;
    int rc = 0;
    if (r->graph) {
        int x = exec_for(r, cu);
        if (x < 0) return -1;
        rc = kiln_cuda_graph_launch(cu, r->graph, x, r->stream);
    }
    for (int i = 0; !r->graph && i < r->nl && rc == 0; i++) {
        RecLaunch *L = &r->l[i];
        rc = kiln_cuda_launch(cu, L->e->cu, L->grid, L->block, (unsigned)L->shmem, L->stream,
                              L->wide ? NULL : L->pp, L->wide ? L->pp : NULL);
    }
    if (rc != 0) return ext_cuda_error(st, rc, "replaying a recorded step"), -1;
    bool debug = false;
    for (int i = 0; i < r->nl; i++) {
        EntryObject *e = r->l[i].e;
        e->obs.launches++;
        debug |= e->debug;
        if (e->can_fail) {
            st->err_pending[e->device] = true;
            Py_INCREF(e->files);
            Py_XSETREF(st->err_files[e->device], e->files);
        }
    }
    return debug ? ext_check_kernel_error(st, r->device) : 0;
}

static PyObject *result_of(RecordObject *r, PyObject *args, PyObject *const *fnew) {
    PyObject *out = r->tuple ? PyTuple_New(r->nres) : NULL;
    if (r->tuple && !out) return NULL;
    for (int i = 0; i < r->nres; i++) {
        int v = r->res[i];
        PyObject *o = v >= 0 ? PyTuple_GET_ITEM(args, v) : v == -1 ? Py_None : fnew[-2 - v];
        Py_INCREF(o);
        if (!r->tuple) return o;
        PyTuple_SET_ITEM(out, i, o);
    }
    if (!out) Py_RETURN_NONE;
    return out;
}

enum { STACK_IN = 16 };

/* replay(args): NotImplemented when the guard does not hold; Ellipsis when it
 * holds but the step must run itself (the record cannot be replayed, another
 * thread is replaying it, or this thread is recording); else runs the launches
 * and returns the result. */
static PyObject *record_replay(RecordObject *r, PyObject *args) {
    ModState *st = r->st;
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != r->nin || !r->why)
        Py_RETURN_NOTIMPLEMENTED;
    for (int i = 0; i < r->nin; i++) {
        const RecInput *in = &r->in[i];
        PyObject *o = PyTuple_GET_ITEM(args, i);
        if (in->kind == 'i' && o != in->obj) Py_RETURN_NOTIMPLEMENTED;
        if (in->kind == 'e' && o != in->obj) {
            int eq = Py_TYPE(o) == Py_TYPE(in->obj) ? PyObject_RichCompareBool(o, in->obj, Py_EQ)
                                                    : 0;
            if (eq < 0) return NULL;
            if (!eq) Py_RETURN_NOTIMPLEMENTED;
        }
    }
    Arg stack_a[STACK_IN];
    PyObject *stack_f[STACK_IN];
    uint64_t stack_b[STACK_IN];
    Arg *a = r->nin <= STACK_IN ? stack_a : PyMem_Calloc((size_t)r->nin, sizeof *a);
    PyObject **fnew =
        r->nfresh <= STACK_IN ? stack_f : PyMem_Calloc((size_t)r->nfresh, sizeof *fnew);
    uint64_t *fb = r->nfresh <= STACK_IN ? stack_b : PyMem_Calloc((size_t)r->nfresh, sizeof *fb);
    int nc = 0, nf = 0;
    PyObject *ret = NULL;
    if (!a || !fnew || !fb) {
        PyErr_NoMemory();
        goto done;
    }
    memset(a, 0, sizeof *a * (size_t)r->nin);
    if (classify_inputs(r, args, a, &nc) < 0) {
        /* an argument kiln cannot take now: not this record's call */
        PyErr_Clear();
        ret = Py_NotImplemented;
        Py_INCREF(ret);
        goto done;
    }
    if (any_misaligned(r, a)) { /* read through a copy: not this record's call */
        ret = Py_NotImplemented;
        Py_INCREF(ret);
        goto done;
    }
    for (int i = 0; i < r->nin; i++) {
        if (r->in[i].kind == 'a' && !same_input(&r->in[i], &a[i])) {
            ret = Py_NotImplemented;
            Py_INCREF(ret);
            goto done;
        }
    }
    for (int i = 0; i < r->nin; i++) {
        const RecInput *x = &r->in[i];
        if (x->kind != 'a' || !x->t.is_array) continue;
        for (int j = i + 1; j < r->nin; j++) {
            const RecInput *y = &r->in[j];
            if (y->kind != 'a' || !y->t.is_array) continue;
            if (overlaps(base_of(&a[i]), x->lo, x->hi, base_of(&a[j]), y->lo, y->hi) !=
                (bool)r->overlap[i * r->nin + j]) {
                ret = Py_NotImplemented;
                Py_INCREF(ret);
                goto done;
            }
        }
    }
    if (r->why != Py_None || r->busy || ext_recording(st)) {
        /* the guard holds, but this call runs the step itself */
        ret = Py_Ellipsis;
        Py_INCREF(ret);
        goto done;
    }
    kiln_cuda *cu = NULL;
    if (r->target == 1) {
        if (ext_use_device(st, r->device) < 0) goto done;
        cu = st->cuda;
    }
    for (; nf < r->nfresh; nf++) {
        fnew[nf] = PyObject_CallNoArgs(PyList_GET_ITEM(r->fresh, nf));
        if (!fnew[nf]) goto done;
        Arg fa;
        memset(&fa, 0, sizeof fa);
        int rc = ext_classify(st, fnew[nf], &fa, NULL, r->fname, 0, NULL);
        fb[nf] = base_of(&fa);
        ext_release_arg(&fa);
        if (rc < 0) {
            nf++;
            goto done;
        }
    }
    for (int i = 0; i < r->np; i++) {
        const RecPtr *p = &r->p[i];
        if (p->src == FROM_TEMP) continue;
        uint64_t v = (p->src >= 0 ? base_of(&a[p->src]) : fb[-2 - p->src]) + (uint64_t)p->off;
        r->l[p->launch].slots[p->slot] = (int64_t)v;
    }
    r->busy = true;
    int rc = restore_temps(r, cu, fb);
    if (rc == 0 && r->target == 1) {
        rc = run_gpu(r, cu);
    } else if (rc == 0) {
        for (int i = 0; i < r->nl && rc == 0; i++) {
            RecLaunch *L = &r->l[i];
            rc = ext_cpu_run(st, L->e, L->grid, L->block, L->shmem, L->par, L->slots, NULL);
            if (rc == 0) L->e->obs.launches++;
        }
    }
    r->busy = false;
    if (rc < 0) goto done;
    st->rec_counts[1]++;
    ret = result_of(r, args, fnew);
done:
    for (int i = 0; i < nc; i++) ext_release_arg(&a[i]);
    for (int i = 0; i < nf; i++) Py_XDECREF(fnew[i]);
    if (a && a != stack_a) PyMem_Free(a);
    if (fnew && fnew != stack_f) PyMem_Free(fnew);
    if (fb && fb != stack_b) PyMem_Free(fb);
    return ret;
}

static PyObject *record_get_why(RecordObject *r, void *c) {
    Py_INCREF(r->why ? r->why : Py_None);
    return r->why ? r->why : Py_None;
}

static PyObject *record_get_launches(RecordObject *r, void *c) { return PyLong_FromLong(r->nl); }

static PyObject *record_get_target(RecordObject *r, void *c) {
    return PyUnicode_FromString(r->target == 1 ? "cuda" : r->target == 0 ? "cpu" : "none");
}

static PyObject *record_get_graph(RecordObject *r, void *c) {
    return PyBool_FromLong(r->graph != NULL);
}

static PyGetSetDef record_getset[] = {
    {"why", (getter)record_get_why, NULL, "why the step cannot be replayed, or None", NULL},
    {"launches", (getter)record_get_launches, NULL, "the launches recorded", NULL},
    {"target", (getter)record_get_target, NULL, "'cpu', 'cuda' or 'none'", NULL},
    {"graph", (getter)record_get_graph, NULL, "whether it replays as a CUDA graph", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef record_methods[] = {
    {"replay", (PyCFunction)record_replay, METH_O,
     "replay(args): the step's result; NotImplemented: the guard does not hold; "
     "Ellipsis: run the step itself"},
    {NULL, NULL, 0, NULL}};

static PyType_Slot record_slots[] = {
    {Py_tp_dealloc, record_dealloc},
    {Py_tp_traverse, record_traverse},
    {Py_tp_clear, record_clear},
    {Py_tp_methods, record_methods},
    {Py_tp_getset, record_getset},
    {Py_tp_doc, (void *)"The launches of one step, replayed (kiln.compile, reduce-overhead)."},
    {0, NULL}};

static PyType_Spec record_spec = {"kiln._kiln.Record", sizeof(RecordObject), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                                      Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                  record_slots};

/* record_counts() -> (records made, replays, graphs instantiated, graph nodes updated) */
static PyObject *f_record_counts(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    return Py_BuildValue("(llll)", st->rec_counts[0], st->rec_counts[1], st->rec_counts[2],
                         st->rec_counts[3]);
}

/* record_refuse(why): the Python layer did something in the step that cannot be replayed. */
static PyObject *f_record_refuse(PyObject *m, PyObject *why) {
    const char *s = PyUnicode_Check(why) ? PyUnicode_AsUTF8(why) : NULL;
    if (!s) return NULL;
    ext_record_refuse(ext_state(m), "%s", s);
    Py_RETURN_NONE;
}

/* recording() -> whether this thread is recording a step */
static PyObject *f_recording(PyObject *m, PyObject *unused) {
    return PyBool_FromLong(ext_recording(ext_state(m)) != NULL);
}

static PyMethodDef record_functions[] = {
    {"record_begin", (PyCFunction)(void (*)(void))f_record_begin, METH_FASTCALL,
     "record_begin(args, names, fname, kinds) -> Record or None"},
    {"record_end", (PyCFunction)(void (*)(void))f_record_end, METH_FASTCALL,
     "record_end(res, fresh, why) -> why the record cannot replay, or None"},
    {"record_counts", f_record_counts, METH_NOARGS,
     "record_counts() -> (made, replays, graphs, updates)"},
    {"record_refuse", f_record_refuse, METH_O, "record_refuse(why)"},
    {"recording", f_recording, METH_NOARGS, "recording() -> bool"},
    {NULL, NULL, 0, NULL}};

int ext_record_init(PyObject *module, ModState *st) {
    st->RecordType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &record_spec, NULL);
    if (!st->RecordType) return -1;
    if (PyModule_AddType(module, st->RecordType) < 0) return -1;
    return PyModule_AddFunctions(module, record_functions);
}
