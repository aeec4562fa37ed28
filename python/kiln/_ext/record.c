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

#include "devarray.h"
#include "driver.h"
#include "errors.h"
#include "run.h"

/* Where an array pointer of a recorded launch comes from at replay. */
enum { FROM_TEMP = -1 }; /* kept as recorded; <= -2: returned temporary -2 - k */

typedef struct {
    int launch, slot; /* the launch and the slot that holds the pointer */
    int src;          /* >= 0: argument src of the step; FROM_TEMP; or a returned temporary */
    int64_t off;      /* bytes from the source's element 0 */
    int64_t lo, hi;   /* the bytes the launch's array reaches around the pointer */
} RecPtr;

typedef struct {
    EntryObject *e; /* strong */
    int64_t grid[3], block[3], shmem, par;
    void *stream;
    int nslots;
    int64_t *slots; /* patched at each replay */
    void **pp;      /* GPU: the parameter pointers into slots (and nthreads) */
    bool wide;
    int64_t nthreads;
    uint64_t errp;
    bool dirty;     /* a pointer changed since the graph's node was last set */
} RecLaunch;

typedef struct {
    char kind;      /* 'a': classified (an array or a scalar), 'e': equal, 'i': identical */
    kiln_argtype t;
    bool on_gpu, readonly;
    int device;
    int64_t shape[KILN_MAX_NDIM], strides[KILN_MAX_NDIM];
    Scalar v;
    int64_t lo, hi; /* arrays: bytes around element 0 */
    uint64_t base;  /* arrays: element 0 when recorded */
    PyObject *obj;  /* 'e' and 'i': the object (strong) */
} RecInput;

/* First contents of a temporary, restored before each replay. */
typedef struct {
    uint64_t lo, hi; /* bytes when recorded */
    int src;         /* FROM_TEMP, or a returned temporary (off from its element 0) */
    int64_t off;
    void *copy;      /* CPU: the bytes */
    uint64_t dcopy;  /* GPU: a device copy (0: fresh memory, nothing to restore) */
} RecTemp;

typedef struct RecordObject {
    PyObject_HEAD
    ModState *st;
    int target; /* 0 CPU, 1 GPU, -1 no launch */
    int device;
    void *stream;
    PyObject *names, *fname;
    int nin;
    RecInput *in;
    uint8_t *overlap; /* nin * nin: arrays i and j share bytes */
    int nl, capl;
    RecLaunch *l;
    int np, capp;
    RecPtr *p;
    int nt;
    RecTemp t[REC_MAX_TEMPS];
    PyObject *keep;   /* list: objects whose memory the launches use */
    int nfresh;
    PyObject *fresh;  /* list of callables making each returned temporary anew */
    uint64_t *fbase;  /* their element 0, span lo and hi when recorded */
    int64_t *flo, *fhi;
    bool tuple;       /* the step returns a tuple of nres items */
    int nres;
    int *res;         /* >= 0: argument; -1: None; <= -2: returned temporary -2 - k */
    kiln_cuda_graph *graph;
    PyObject *why;    /* str: why it cannot be replayed, or None */
    bool busy;
} RecordObject;

/* ---- the guard --------------------------------------------------------------------- */

static void span_of(const Arg *a, int64_t *lo, int64_t *hi) {
    int64_t isz = ext_dtype_size(a->t.dtype);
    ext_byte_span(isz, a->t.ndim, a->shape, a->strides, isz, lo, hi);
}

static uint64_t base_of(const Arg *a) {
    return a->on_gpu ? a->dptr : (uint64_t)(uintptr_t)a->view.buf;
}

static bool same_input(const RecInput *r, const Arg *a) {
    if (memcmp(&r->t, &a->t, sizeof r->t) != 0) return false;
    if (!r->t.is_array) return memcmp(&r->v, &a->v, sizeof r->v) == 0;
    if (r->on_gpu != a->on_gpu || r->device != a->device || r->readonly != a->readonly)
        return false;
    size_t nd = sizeof(int64_t) * r->t.ndim;
    return memcmp(r->shape, a->shape, nd) == 0 && memcmp(r->strides, a->strides, nd) == 0;
}

static bool overlaps(uint64_t b1, int64_t l1, int64_t h1, uint64_t b2, int64_t l2, int64_t h2) {
    return h1 > l1 && h2 > l2 && (int64_t)(b1 - b2) + l1 < h2 && (int64_t)(b2 - b1) + l2 < h1;
}

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

/* ---- recording ------------------------------------------------------------------------ */

static void *grow(void *v, int *cap, size_t size) {
    int c = *cap ? 2 * *cap : 16;
    void *p = PyMem_Realloc(v, size * (size_t)c);
    if (p) *cap = c;
    return p;
}

/* The temporary memory [lo, hi) of a launch: its first contents are kept to be
 * restored, unless it lies in memory kept already or allocated while recording. */
static int note_temp(RecordObject *r, struct ExtRecorder *rec, uint64_t lo, uint64_t hi,
                     const char *what) {
    if (hi <= lo) return 0;
    for (int i = 0; i < r->nt; i++) {
        if (r->t[i].lo <= lo && hi <= r->t[i].hi) return 0;
        if (lo < r->t[i].hi && r->t[i].lo < hi) {
            ext_record_refuse(r->st, "it passes %s, which overlaps part of an array it made", what);
            return 0;
        }
    }
    if (r->nt == REC_MAX_TEMPS) {
        ext_record_refuse(r->st, "it uses more than %d arrays it made (REC_MAX_TEMPS)",
                          REC_MAX_TEMPS);
        return 0;
    }
    RecTemp *t = &r->t[r->nt];
    memset(t, 0, sizeof *t);
    t->lo = lo;
    t->hi = hi;
    t->src = FROM_TEMP;
    if (r->target == 0) {
        t->copy = PyMem_Malloc(hi - lo);
        if (!t->copy) return PyErr_NoMemory(), -1;
        memcpy(t->copy, (void *)(uintptr_t)lo, hi - lo);
    } else if (!ext_record_is_fresh(rec, lo, hi)) {
        kiln_cuda *cu = ext_cuda_on(r->st, r->device);
        if (!cu) return -1;
        int rc = kiln_cuda_alloc(cu, &t->dcopy, hi - lo, r->stream);
        if (rc == 0) rc = kiln_cuda_copy_dtod(cu, t->dcopy, lo, hi - lo, r->stream);
        if (rc != 0) return ext_cuda_error(r->st, rc, "keeping an array a recorded step made"),
                            -1;
    }
    r->nt++;
    return 0;
}

int ext_record_add(ModState *st, EntryObject *e, PyObject *names, PyObject *kname,
                   const int64_t grid[3], const int64_t block[3], int64_t shmem,
                   PyObject *stream, void *stream_handle, int64_t par, PyObject *const *args,
                   const Arg *a, int n, const int64_t *slots, const int *off, bool wide,
                   uint64_t errp) {
    struct ExtRecorder *rec = ext_recording(st);
    if (!rec || rec->why[0]) return 0;
    RecordObject *r = rec->r;
    const char *kn = PyUnicode_AsUTF8(kname);
    if (!kn) return -1;
    int ret = -1;
    if (r->target < 0) {
        r->target = e->target;
        r->device = e->device;
        r->stream = stream_handle;
    } else if (r->target != e->target || (e->target && r->device != e->device)) {
        ext_record_refuse(st, "it launches kernels on %s", r->target != e->target
                                                              ? "both the CPU and the GPU"
                                                              : "more than one GPU");
        ret = 0;
        goto out;
    }
    if (r->nl == REC_MAX_LAUNCHES) {
        ext_record_refuse(st, "it makes more than %d launches (REC_MAX_LAUNCHES)",
                          REC_MAX_LAUNCHES);
        ret = 0;
        goto out;
    }
    if (r->nl == r->capl) {
        RecLaunch *l = grow(r->l, &r->capl, sizeof *l);
        if (!l) goto nomem;
        r->l = l;
    }
    RecLaunch *L = &r->l[r->nl];
    memset(L, 0, sizeof *L);
    L->slots = PyMem_Malloc(sizeof(int64_t) * (size_t)(e->nslots ? e->nslots : 1));
    if (!L->slots) goto nomem;
    r->nl++; /* owned from here: record_dealloc frees it */
    Py_INCREF(e);
    L->e = e;
    memcpy(L->grid, grid, sizeof L->grid);
    memcpy(L->block, block, sizeof L->block);
    L->shmem = shmem;
    L->par = par;
    L->stream = stream_handle;
    L->nslots = e->nslots;
    memcpy(L->slots, slots, sizeof(int64_t) * (size_t)e->nslots);
    L->wide = wide;
    L->nthreads = grid[0] * block[0];
    L->errp = errp;
    if (PyList_Append(r->keep, stream ? stream : Py_None) < 0) goto fail;
    for (int i = 0; i < n; i++) {
        if (!e->ptypes[i].is_array) continue;
        char desc[256];
        ext_arg_desc(desc, sizeof desc, names, kname, i);
        if (a[i].tmp) {
            ext_record_refuse(st, "it passes a host array to GPU kernel '%s' (%s), which kiln "
                                  "copies at each launch", kn, desc);
            ret = 0;
            goto out;
        }
        if (PyList_Append(r->keep, args[i]) < 0) goto fail;
        uint64_t p = (uint64_t)slots[off[i]];
        int64_t lo, hi;
        span_of(&a[i], &lo, &hi);
        int src = FROM_TEMP;
        int64_t d = 0;
        for (int j = 0; j < r->nin && src == FROM_TEMP; j++) {
            const RecInput *in = &r->in[j];
            if (in->kind != 'a' || !in->t.is_array || in->on_gpu != a[i].on_gpu) continue;
            int64_t rel = (int64_t)(p - in->base);
            if ((hi > lo && rel + lo >= in->lo && rel + hi <= in->hi) || (hi == lo && rel == 0)) {
                src = j;
                d = rel;
            } else if (overlaps(p, lo, hi, in->base, in->lo, in->hi)) {
                ext_record_refuse(st, "%s reaches past argument '%s' of the step", desc,
                                  PyUnicode_AsUTF8(PyTuple_GET_ITEM(r->names, j)));
                ret = 0;
                goto out;
            }
        }
        if (src == FROM_TEMP && note_temp(r, rec, p + (uint64_t)lo, p + (uint64_t)hi, desc) < 0)
            goto fail;
        if (r->np == r->capp) {
            RecPtr *np = grow(r->p, &r->capp, sizeof *np);
            if (!np) goto nomem;
            r->p = np;
        }
        r->p[r->np++] = (RecPtr){r->nl - 1, off[i], src, d, lo, hi};
    }
    if (e->target) {
        /* the parameters as kiln_cuda_launch takes them, pointing into the record's slots */
        int np = wide ? e->nslots + 3 : n + 2;
        L->pp = PyMem_Malloc(sizeof(void *) * (size_t)np);
        if (!L->pp) goto nomem;
        L->pp[0] = &L->errp;
        if (wide) {
            for (int j = 0; j < e->nslots; j++) L->pp[1 + j] = &L->slots[j];
            L->pp[1 + e->nslots] = &L->nthreads;
        } else {
            for (int i = 0; i < n; i++) L->pp[1 + i] = &L->slots[off[i]];
        }
        L->pp[np - 1] = NULL;
    }
    ret = 0;
    goto out;
nomem:
    PyErr_NoMemory();
fail:
    ret = -1;
out:
    return ret;
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
    for (int i = 0; i < nc; i++) ext_release_arg(&a[i]);
    PyMem_Free(a);
    rec->thread = PyThread_get_thread_ident();
    rec->r = r;
    Py_INCREF(r);
    st->rec = rec;
    return (PyObject *)r;
fail:
    for (int i = 0; i < nc; i++) ext_release_arg(&a[i]);
    PyMem_Free(a);
    PyMem_Free(rec);
    Py_DECREF(r);
    return NULL;
}

/* Builds the CUDA graph of a GPU record: one kernel node per launch, in order. */
static int build_graph(RecordObject *r) {
    kiln_cuda *cu = ext_cuda_on(r->st, r->device);
    if (!cu) return -1;
    if (!kiln_cuda_graphs(cu)) return 0; /* replayed launch by launch */
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
    return 0;
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
    bool partial = false;
    for (int k = 0; k < r->nfresh; k++) {
        uint64_t lo = r->fbase[k] + (uint64_t)r->flo[k], hi = r->fbase[k] + (uint64_t)r->fhi[k];
        for (int i = 0; i < r->np; i++) {
            RecPtr *p = &r->p[i];
            uint64_t v = (uint64_t)r->l[p->launch].slots[p->slot];
            if (p->src != FROM_TEMP) continue;
            if (p->hi > p->lo ? v + (uint64_t)p->lo >= lo && v + (uint64_t)p->hi <= hi
                              : v >= lo && v < hi) {
                p->src = -2 - k;
                p->off = (int64_t)(v - r->fbase[k]);
            } else if (p->hi > p->lo && v + (uint64_t)p->lo < hi && lo < v + (uint64_t)p->hi) {
                partial = true;
            }
        }
        for (int i = 0; i < r->nt; i++)
            if (r->t[i].lo >= lo && r->t[i].hi <= hi) {
                r->t[i].src = -2 - k;
                r->t[i].off = (int64_t)(r->t[i].lo - r->fbase[k]);
            } else if (r->t[i].lo < hi && lo < r->t[i].hi) {
                partial = true;
            }
    }
    if (partial && !rec->why[0])
        snprintf(rec->why, sizeof rec->why,
                 "it returns part of an array it made, and its kernels use more of that array");
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
    for (int i = 0; i < r->nl && rc == 0; i++) {
        RecLaunch *L = &r->l[i];
        void **pp = L->wide ? NULL : L->pp, **wpp = L->wide ? L->pp : NULL;
        if (!r->graph) {
            rc = kiln_cuda_launch(cu, L->e->cu, L->grid, L->block, (unsigned)L->shmem, L->stream,
                                  pp, wpp);
        } else if (L->dirty) {
            rc = kiln_cuda_graph_set(cu, r->graph, i, L->e->cu, L->grid, L->block,
                                     (unsigned)L->shmem, pp, wpp);
            st->rec_counts[3]++;
        }
        L->dirty = false;
    }
    if (rc == 0 && r->graph) rc = kiln_cuda_graph_launch(cu, r->graph, r->stream);
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
    PyObject **fnew = r->nfresh <= STACK_IN ? stack_f : PyMem_Calloc((size_t)r->nfresh, sizeof *fnew);
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
        RecLaunch *L = &r->l[p->launch];
        if ((uint64_t)L->slots[p->slot] != v) {
            L->slots[p->slot] = (int64_t)v;
            L->dirty = true;
        }
    }
    r->busy = true;
    int rc = restore_temps(r, cu, fb);
    if (rc == 0 && r->target == 1) {
        rc = run_gpu(r, cu);
    } else if (rc == 0) {
        for (int i = 0; i < r->nl && rc == 0; i++) {
            RecLaunch *L = &r->l[i];
            rc = ext_cpu_run(st, L->e, L->grid, L->block, L->par, L->slots, NULL);
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

static PyObject *record_get_graph(RecordObject *r, void *c) { return PyBool_FromLong(r->graph != NULL); }

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
    {"record_counts", f_record_counts, METH_NOARGS, "record_counts() -> (made, replays, graphs, updates)"},
    {"record_refuse", f_record_refuse, METH_O, "record_refuse(why)"},
    {"recording", f_recording, METH_NOARGS, "recording() -> bool"},
    {NULL, NULL, 0, NULL}};

int ext_record_init(PyObject *module, ModState *st) {
    st->RecordType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &record_spec, NULL);
    if (!st->RecordType) return -1;
    if (PyModule_AddType(module, st->RecordType) < 0) return -1;
    return PyModule_AddFunctions(module, record_functions);
}
