/* record_int.h: what record.c (the Record object: begin, end, replay) and
 * record_add.c (a launch added to the recording) share: the record's layout
 * and the arithmetic of array spans.  See record.h. */
#ifndef KILN_EXT_RECORD_INT_H
#define KILN_EXT_RECORD_INT_H

#include "args.h"
#include "devarray.h"
#include "recorder.h"

enum {
    REC_MAX_LAUNCHES = 4096, /* launches in one record */
    REC_MAX_INPUTS = 64,     /* arguments of a recorded function */
    REC_MAX_TEMPS = 256,     /* temporaries whose first contents a record restores */
    REC_SEEN = 16            /* pointer sets remembered: one seen again gets its own graph copy */
};

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
    bool dirty;     /* replay: a pointer differs from the executable copy's node */
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
    /* GPU graph: row x < KILN_CUDA_GRAPH_EXECS holds the np pointer values the nodes of
     * executable copy x hold; row KILN_CUDA_GRAPH_EXECS the graph's own, as recorded */
    uint64_t *xv;
    uint64_t xuse[KILN_CUDA_GRAPH_EXECS]; /* the replay that last ran each copy (LRU) */
    uint64_t xclock;
    uint64_t xseen[REC_SEEN]; /* hashes of the pointer sets of recent replays (a ring) */
    int xnext;
    PyObject *why;    /* str: why it cannot be replayed, or None */
    bool busy;
} RecordObject;

/* The bytes an array argument reaches around its element 0. */
static inline void span_of(const Arg *a, int64_t *lo, int64_t *hi) {
    int64_t isz = ext_dtype_size(a->t.dtype);
    ext_byte_span(isz, a->t.ndim, a->shape, a->strides, isz, lo, hi);
}

static inline uint64_t base_of(const Arg *a) {
    return a->on_gpu ? a->dptr : (uint64_t)(uintptr_t)a->view.buf;
}

static inline bool same_input(const RecInput *r, const Arg *a) {
    if (memcmp(&r->t, &a->t, sizeof r->t) != 0) return false;
    if (!r->t.is_array) return memcmp(&r->v, &a->v, sizeof r->v) == 0;
    if (r->on_gpu != a->on_gpu || r->device != a->device || r->readonly != a->readonly)
        return false;
    size_t nd = sizeof(int64_t) * r->t.ndim;
    return memcmp(r->shape, a->shape, nd) == 0 && memcmp(r->strides, a->strides, nd) == 0;
}

static inline bool overlaps(uint64_t b1, int64_t l1, int64_t h1, uint64_t b2, int64_t l2,
                            int64_t h2) {
    return h1 > l1 && h2 > l2 && (int64_t)(b1 - b2) + l1 < h2 && (int64_t)(b2 - b1) + l2 < h1;
}

#endif
