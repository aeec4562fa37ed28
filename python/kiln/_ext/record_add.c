/* record_add.c: a launch added to the recording in progress (see record.h).
 *
 * Each array pointer of the launch is placed: inside an argument of the step
 * (replaced at replay), or in memory the step made, whose first contents are
 * kept to be restored (temporaries allocated by kiln while recording need
 * none).  What cannot be replayed refuses the recording with the reason. */
#include <string.h>

#include "record.h"

#include "driver.h"
#include "record_int.h"

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
    for (int i = 0; i < n; i++) {
        if (a[i].stage) { /* the copy is gone after the launch: nothing to replay into */
            ext_record_refuse(st, "a kernel reads a misaligned array through a copy");
            ret = 0;
            goto out;
        }
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

