/* launch.c: kiln._kiln.Launcher, a kernel with its launch configuration.
 *
 * Calling a Launcher is the hot path, and costs close to nothing over the
 * kernel: a vectorcall classifies each argument (args.c) into 4 bytes of the
 * type key, adds the target and device, looks the key up in the kernel's
 * specialisation table (table.h), packs the parameters into 8-byte slots on
 * the stack (docs/abi.md) and runs the entry: on the CPU with the GIL
 * released, on the GPU through cuLaunchKernel (host arrays staged in and out,
 * the wide entry for large 1-D launches that may take it).
 *
 * While a step is being recorded on this thread (kiln.compile's reduce-overhead
 * mode, record.h), the packed launch is added to the record before it runs:
 * one load and a predictable branch when nothing records.
 *
 * A miss calls the dispatcher's Python method _compile_key(key), which
 * translates, builds and loads the kernel (core.c) and returns an Entry; the
 * table keeps the first entry inserted under a key.  The launch holds a
 * reference to the entry it runs from lookup to return (table.h), and the
 * Launcher holds references to its dispatcher and its stream object.
 *
 * What the launch shows of itself (obs.h): one plain increment of the entry's
 * launch counter, and one predictable branch on a countdown that sends every
 * OBS_SAMPLE-th launch (or every launch while a trace, KILN_LOG=launch, device
 * timing or NVTX is on) down the slow path, which reads the clock around the
 * kernel and tells obs.c.
 */
#include "launch.h"

#include <structmember.h>
#include <time.h>

#include "args.h"
#include "devarray.h"
#include "driver.h"
#include "errors.h"
#include "record.h"
#include "run.h"
#include "signals.h"
#include "tier.h"

enum { STACK_ARGS = 16, STACK_SLOTS = 256, MEMO_KEY_BYTES = 4 * STACK_ARGS + 2 + LC_KEY_BYTES };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *disp;      /* the Dispatcher object, which owns *k */
    Kernel *k;
    int64_t grid[3], block[3];
    PyObject *stream;    /* the configuration's stream object (None: the default) */
    void *stream_handle; /* its CUstream */
    int64_t shmem;
    long repeat;         /* bench hook: launch this many times back to back in C */
    double repeat_s;     /* ... and the seconds per launch it took */
    bool last_wide;      /* the last launch took the kernel's wide entry (tests) */
    PyObject *callbacks; /* Numba's pre_launch_callbacks: a list made when first read */
    /* The last launch's type key and entry, so that a launch with the same argument
     * types skips the hash and the table probe.  The entry is borrowed: the table holds
     * it for as long as its generation is memo_gen (entries leave a table only by a
     * clear, which bumps the generation). */
    PyObject *memo_entry;
    uint64_t memo_gen;
    int memo_len;
    uint8_t memo_key[MEMO_KEY_BYTES];
} LauncherObject;

static int launcher_traverse(LauncherObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->disp);
    Py_VISIT(self->stream);
    Py_VISIT(self->callbacks);
    return 0;
}

static int launcher_clear(LauncherObject *self) {
    Py_CLEAR(self->disp);
    Py_CLEAR(self->stream);
    Py_CLEAR(self->callbacks);
    return 0;
}

static void launcher_dealloc(LauncherObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    launcher_clear(self);
    PyObject_GC_Del(self);
    Py_DECREF(tp);
}



/* Numba's pre_launch_callbacks: each called as callback(kernel, launch) once the launch's
 * specialisation is known (kernel: its Entry, what overloads[sig] gives), before anything
 * runs; a callback's exception ends the launch.  Over a copy of the list, so a callback
 * may change it for later launches. */
static int run_callbacks(LauncherObject *self, PyObject *entry) {
    PyObject *cbs = PySequence_Tuple(self->callbacks);
    if (!cbs) return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cbs) && rc == 0; i++) {
        PyObject *r = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(cbs, i), entry,
                                                   (PyObject *)self, NULL);
        if (!r) rc = -1;
        Py_XDECREF(r);
    }
    Py_DECREF(cbs);
    return rc;
}

/* The byte span [lo, hi) of a host array's elements around element 0. */
static void host_span(const Arg *a, int64_t *lo, int64_t *hi) {
    int64_t isz = (int64_t)a->view.itemsize;
    ext_byte_span(isz, a->t.ndim, a->shape, a->strides, isz, lo, hi);
}

/* Host arrays in a GPU launch: copied in before and back after (if written). */
static int stage_host_arrays(ModState *st, Kernel *d, Arg *a, int n, void *stream) {
    for (int i = 0; i < n; i++) {
        if (!a[i].t.is_array || a[i].on_gpu) continue;
        if (!d->warned) {
            d->warned = true;
            char desc[256];
            ext_arg_desc(desc, sizeof desc, d->names, d->kname, i);
            if (PyErr_WarnFormat(st->PerformanceWarning, 1,
                                 "%s is a host array, so kernel '%U' copies its host arrays to the "
                                 "GPU and back at every launch (Host array used in CUDA kernel "
                                 "will incur copy overhead to/from device); pass kiln.to_device() "
                                 "arrays",
                                 desc, d->kname) < 0)
                return -1;
        }
        int64_t lo, hi;
        host_span(&a[i], &lo, &hi);
        a[i].tmp_lo = lo;
        a[i].tmp_size = (size_t)(hi - lo);
        int rc = kiln_cuda_alloc(st->cuda, &a[i].tmp, a[i].tmp_size, stream);
        if (rc == 0)
            rc = kiln_cuda_copy_htod(st->cuda, a[i].tmp, (char *)a[i].view.buf + lo, a[i].tmp_size,
                                     stream);
        if (rc != 0) {
            ext_cuda_error(st, rc, "copying a host array to the GPU");
            return -1;
        }
    }
    return 0;
}

static int unstage_host_arrays(ModState *st, EntryObject *e, Arg *a, int n, void *stream) {
    int err = 0;
    for (int i = 0; i < n; i++) {
        if (!a[i].tmp) continue;
        int rc = 0;
        if (e && e->written[i] && !err)
            rc = kiln_cuda_copy_dtoh(st->cuda, (char *)a[i].view.buf + a[i].tmp_lo, a[i].tmp,
                                     a[i].tmp_size, stream);
        kiln_cuda_free(st->cuda, a[i].tmp, stream);
        a[i].tmp = 0;
        if (rc != 0 && !err) {
            ext_cuda_error(st, rc, "copying an array back from the GPU");
            err = -1;
        }
    }
    return err;
}

/* The bytes of the packed array arguments' spans: what a launch reads or writes
 * at least once, for GB/s (the slow path only). */
static uint64_t launch_bytes(const EntryObject *e, const int64_t *slots, const int *off) {
    uint64_t total = 0;
    for (int i = 0; i < e->nparams; i++) {
        const kiln_argtype *pt = &e->ptypes[i];
        if (!pt->is_array) continue;
        const int64_t *p = &slots[off[i]];
        int64_t isz = ext_dtype_size(pt->dtype), l, h;
        ext_byte_span(isz, pt->ndim, p + 1, p + 1 + pt->ndim, isz, &l, &h);
        total += (uint64_t)(h - l);
    }
    return total;
}

/* Whether the packed arrays of a GPU launch may take the wide entry's
 * __restrict__ pointers: no array the kernel writes shares a byte with
 * another array argument.  Byte spans from the packed data pointer, shape and
 * strides (in elements). */
static bool arrays_disjoint(const EntryObject *e, const int64_t *slots, const int *off) {
    enum { MAXA = 16 };
    int64_t lo[MAXA], hi[MAXA];
    bool w[MAXA];
    int na = 0;
    for (int i = 0; i < e->nparams; i++) {
        const kiln_argtype *pt = &e->ptypes[i];
        if (!pt->is_array) continue;
        if (na == MAXA) return false;
        const int64_t *p = &slots[off[i]]; /* data, shape[ndim], strides[ndim] */
        int64_t isz = ext_dtype_size(pt->dtype), l, h;
        ext_byte_span(isz, pt->ndim, p + 1, p + 1 + pt->ndim, isz, &l, &h);
        if (h == l) continue; /* empty: touches nothing */
        lo[na] = p[0] + l;
        hi[na] = p[0] + h;
        w[na++] = e->written[i] != 0;
    }
    for (int i = 0; i < na; i++)
        for (int j = i + 1; j < na; j++)
            if ((w[i] || w[j]) && lo[i] < hi[j] && lo[j] < hi[i]) return false;
    return true;
}

/* The slow path's state: the clock at the call, the kernel's start and end (ns), the
 * handle of ext_obs_launch_begin, whether the launch compiled. */
typedef struct {
    int64_t t[3];
    int h;
    bool compiled;
} ObsLaunch;

__attribute__((cold, noinline)) static void obs_start(ModState *st, ObsLaunch *ol) {
    ext_obs_rearm(st);
    memset(ol, 0, sizeof *ol);
    ol->h = -1;
    ol->t[0] = ext_obs_ns();
}

__attribute__((cold, noinline)) static void obs_kernel_start(ModState *st, EntryObject *e,
                                                             ObsLaunch *ol, void *stream) {
    ol->h = ext_obs_launch_begin(st, &e->obs, stream);
    ol->t[1] = ext_obs_ns();
}

/* Tells obs.c about a launch that reached its kernel (ol->t[1] set). */
__attribute__((cold, noinline)) static void obs_end(LauncherObject *self, EntryObject *e,
                                                    ObsLaunch *ol, bool ok, const int64_t *slots,
                                                    const int *off) {
    if (!e || !ol->t[1]) return;
    int64_t t3 = ext_obs_ns();
    ext_obs_launch_end(e->st, &e->obs, (PyObject *)e, ol->h, self->stream_handle,
                       ok && !ol->compiled, ol->t[0], ol->t[1], ol->t[2] ? ol->t[2] : t3, t3,
                       self->grid, self->block, launch_bytes(e, slots, off));
}

/* A launch with a tuple among its arguments: the dispatcher's _launch_tuples flattens
 * the tuples into a kernel of their leaves (python/kiln/_dispatch.py), off the hot path. */
__attribute__((cold, noinline)) static PyObject *tuple_launch(LauncherObject *self,
                                                              PyObject *const *args,
                                                              Py_ssize_t n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(t, i, args[i]);
    }
    PyObject *r = PyObject_CallMethod(self->disp, "_launch_tuples", "OO", (PyObject *)self, t);
    Py_DECREF(t);
    return r;
}

/* A launch with an argument the launch path cannot classify (a TypeError): the
 * dispatcher's _launch_hinted converts Numba's argument hints (kiln.args: In, Out, InOut)
 * and launches again, off the hot path; it returns NotImplemented when there is none, and
 * then the TypeError stands. */
__attribute__((cold, noinline)) static PyObject *hinted_launch(LauncherObject *self,
                                                               PyObject *const *args,
                                                               Py_ssize_t n) {
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    PyObject *t = PyTuple_New(n);
    PyObject *r = NULL;
    if (t) {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_INCREF(args[i]);
            PyTuple_SET_ITEM(t, i, args[i]);
        }
        r = PyObject_CallMethod(self->disp, "_launch_hinted", "OO", (PyObject *)self, t);
        Py_DECREF(t);
    }
    if (r == Py_NotImplemented) {
        Py_DECREF(r);
        PyErr_Restore(et, ev, etb);
        return NULL;
    }
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(etb);
    return r;
}

/* Appends the launch configuration to the type key of a launch-config sensitive kernel
 * (the key's first len bytes); returns the new length. */
static int lc_key(const LauncherObject *self, uint8_t *key, int len) {
    int64_t cfg[7] = {self->grid[0],  self->grid[1],  self->grid[2], self->block[0],
                      self->block[1], self->block[2], self->shmem};
    memcpy(key + len, cfg, sizeof cfg);
    return len + (int)sizeof cfg;
}

/* A miss: the dispatcher's _compile_key(type key, launcher, arguments), which runs
 * _compile_for_args with the launch configuration current (kiln/launchconfig.py).  New
 * reference, or NULL with an exception set. */
static PyObject *compile_key(LauncherObject *self, const uint8_t *key, int len,
                             PyObject *const *args, Py_ssize_t n) {
    PyObject *kb = PyBytes_FromStringAndSize((const char *)key, len);
    PyObject *t = PyTuple_New(n);
    PyObject *r = NULL;
    if (kb && t) {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_INCREF(args[i]);
            PyTuple_SET_ITEM(t, i, args[i]);
        }
        r = PyObject_CallMethodObjArgs(self->disp, self->k->st->str_compile_key, kb,
                                       (PyObject *)self, t, NULL);
    }
    Py_XDECREF(kb);
    Py_XDECREF(t);
    return r;
}

static PyObject *launcher_call(PyObject *selfobj, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames);

/* Whether two type keys of n bytes are equal, 8 bytes a step (a launch's key is short;
 * the library's memcmp call cost more than the compare). */
static inline bool key_eq(const uint8_t *x, const uint8_t *y, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t u, v;
        memcpy(&u, x + i, 8);
        memcpy(&v, y + i, 8);
        if (u != v) return false;
    }
    for (; i < n; i++)
        if (x[i] != y[i]) return false;
    return true;
}

/* Remembers the entry the table holds for key (borrowed; see memo_entry). */
static void memo(LauncherObject *self, const Kernel *d, const uint8_t *key, int len,
                 PyObject *entry) {
    if (len > MEMO_KEY_BYTES) {
        self->memo_entry = NULL;
        return;
    }
    memcpy(self->memo_key, key, (size_t)len);
    self->memo_len = len;
    self->memo_gen = d->tab.gen;
    self->memo_entry = entry;
}

/* A launch given fewer arguments than the kernel has parameters: the missing last ones
 * take the Python function's defaults, as Numba's dispatcher fills them (the kernel is
 * then typed for the values given); otherwise the count is wrong. */
__attribute__((cold, noinline)) static PyObject *launch_with_defaults(PyObject *selfobj,
                                                                     PyObject *const *args,
                                                                     Py_ssize_t n) {
    LauncherObject *self = (LauncherObject *)selfobj;
    Kernel *d = self->k;
    PyObject *fn = n < d->nparams ? PyObject_GetAttrString(self->disp, "py_func") : NULL;
    PyObject *defs = fn ? PyObject_GetAttrString(fn, "__defaults__") : NULL;
    Py_XDECREF(fn);
    PyErr_Clear();
    Py_ssize_t nd = defs && PyTuple_Check(defs) ? PyTuple_GET_SIZE(defs) : 0;
    if (n >= d->nparams || n + nd < d->nparams) {
        Py_XDECREF(defs);
        ext_arg_count_error(d->names, d->kname, d->nparams, n);
        return NULL;
    }
    PyObject *full[KILN_MAX_PARAMS];
    for (Py_ssize_t i = 0; i < n; i++) full[i] = args[i];
    for (Py_ssize_t i = n; i < d->nparams; i++)
        full[i] = PyTuple_GET_ITEM(defs, nd - (d->nparams - i));
    PyObject *r = launcher_call(selfobj, full, (size_t)d->nparams, NULL);
    Py_DECREF(defs);
    return r;
}

static PyObject *launcher_call(PyObject *selfobj, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
    LauncherObject *self = (LauncherObject *)selfobj;
    Kernel *d = self->k;
    ModState *st = d->st;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames && PyTuple_GET_SIZE(kwnames)) {
        PyErr_Format(PyExc_TypeError, "kernel '%U' takes positional arguments only", d->kname);
        return NULL;
    }
    if (n != d->nparams) return launch_with_defaults(selfobj, args, n);
    /* the one branch observation costs a launch that is not sampled (obs.h); ol is
     * set and read only when slow */
    bool slow = __builtin_expect(--st->obs_countdown <= 0, 0);
    ObsLaunch ol;
    if (slow) obs_start(st, &ol);
    Arg stack_args[STACK_ARGS];
    Arg *a = n <= STACK_ARGS ? stack_args : PyMem_Malloc(sizeof(Arg) * (size_t)n);
    uint8_t keybuf[4 * STACK_ARGS + 2 + LC_KEY_BYTES];
    uint8_t *key = n <= STACK_ARGS ? keybuf : PyMem_Malloc(4 * (size_t)n + 2 + LC_KEY_BYTES);
    int64_t stack_slots[STACK_SLOTS];
    int64_t *slots = stack_slots;
    int stack_off[STACK_ARGS + 1];
    int *off = n <= STACK_ARGS ? stack_off : PyMem_Malloc(sizeof(int) * (size_t)(n + 1));
    void *stack_pp[STACK_ARGS + 2];
    void *stack_wpp[STACK_SLOTS];
    void **pp = n <= STACK_ARGS ? stack_pp : PyMem_Malloc(sizeof(void *) * (size_t)(n + 2));
    PyObject *ret = NULL;
    EntryObject *e = NULL;
    int classified = 0;
    bool staged = false;
    if (!a || !key || !off || !pp) {
        PyErr_NoMemory();
        goto done;
    }
    int gpu_dev = -1, gpu_arg = -1;
    bool host_arrays = false; /* a GPU launch stages them (stage_host_arrays) */
    for (int i = 0; i < n; i++) {
        classified = i + 1;
        if (ext_classify(st, args[i], &a[i], d->names, d->kname, i, self->stream_handle) < 0) {
            if (PyTuple_Check(args[i]) && PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                for (int j = 0; j < classified; j++) ext_release_arg(&a[j]);
                classified = 0;
                ret = tuple_launch(self, args, n);
            } else if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                for (int j = 0; j < classified; j++) ext_release_arg(&a[j]);
                classified = 0;
                ret = hinted_launch(self, args, n);
            }
            goto done;
        }
        memcpy(key + 4 * i, &a[i].t, 4);
        if (a[i].time && ext_time_clash(a, i, args, d->names, d->kname) < 0) goto done;
        if (!a[i].on_gpu) {
            host_arrays |= a[i].t.is_array;
            continue;
        }
        if (gpu_dev < 0) {
            gpu_dev = a[i].device;
            gpu_arg = i;
        } else if (a[i].device != gpu_dev) {
            char d1[256], d2[256];
            ext_arg_desc(d1, sizeof d1, d->names, d->kname, gpu_arg);
            ext_arg_desc(d2, sizeof d2, d->names, d->kname, i);
            PyErr_Format(PyExc_ValueError, "%s is on GPU %d but %s is on GPU %d; copy one of them",
                         d1, gpu_dev, d2, a[i].device);
            goto done;
        }
    }
    int target, device = 0;
    if (gpu_dev >= 0) {
        if (d->explicit_cpu) {
            char desc[256];
            ext_arg_desc(desc, sizeof desc, d->names, d->kname, gpu_arg);
            PyErr_Format(PyExc_TypeError,
                         "%s is a GPU array, but the kernel was asked to run on the CPU "
                         "(target='cpu'); copy it with .copy_to_host()",
                         desc);
            goto done;
        }
        target = 1;
        device = gpu_dev;
    } else {
        if (d->target < 0) {
            PyObject *t = PyObject_CallMethodNoArgs(self->disp, st->str_resolve_target);
            if (!t) goto done;
            long v = PyLong_AsLong(t);
            Py_DECREF(t);
            if (v == -1 && PyErr_Occurred()) goto done;
            d->target = v ? 1 : 0;
        }
        target = d->target;
        if (target) device = st->current_device;
    }
    key[4 * n] = (uint8_t)target;
    key[4 * n + 1] = (uint8_t)device;
    int klen = 4 * (int)n + 2, base_len = klen;
    if (d->lc_sensitive) klen = lc_key(self, key, base_len);
    /* The launch holds its own reference to the entry from here to its return:
     * the GIL is released while the kernel runs, and another thread may clear
     * the table meanwhile; the code is unloaded only by the last reference. */
    PyObject *entry = NULL;
    uint64_t h = 0;
    if (self->memo_entry && self->memo_gen == d->tab.gen && self->memo_len == klen &&
        key_eq(self->memo_key, key, klen)) {
        entry = self->memo_entry;
    } else {
        h = ext_key_hash(key, klen);
        entry = ext_table_get(&d->tab, key, klen, h);
        if (entry) memo(self, d, key, klen, entry);
    }
    if (entry) {
        Py_INCREF(entry);
    } else {
        if (slow) ol.compiled = true; /* its time is mostly the compile's: not a sample */
        entry = compile_key(self, key, base_len, args, n);
        if (!entry) goto done;
        if (!Py_IS_TYPE(entry, st->EntryType)) {
            Py_DECREF(entry);
            PyErr_SetString(PyExc_TypeError, "_compile_key must return an Entry");
            goto done;
        }
        if (d->lc_sensitive && klen == base_len) { /* this compile marked it */
            klen = lc_key(self, key, base_len);
            h = ext_key_hash(key, klen);
        }
        /* another thread's first call may have inserted one meanwhile: use that */
        PyObject *kept = ext_table_insert(&d->tab, key, klen, h, entry);
        Py_XINCREF(kept);
        Py_DECREF(entry);
        if (!kept) goto done;
        entry = kept;
        memo(self, d, key, klen, entry);
    }
    e = (EntryObject *)entry;
    if (self->callbacks && PyList_GET_SIZE(self->callbacks) > 0 &&
        run_callbacks(self, entry) < 0)
        goto done;
    if (e->nslots > STACK_SLOTS) {
        slots = PyMem_Malloc(sizeof(int64_t) * (size_t)e->nslots);
        if (!slots) {
            PyErr_NoMemory();
            goto done;
        }
    }
    if (e->target == 0) {
        if (ext_pack(e, a, (int)n, d->names, d->kname, slots, off, false) < 0) goto done;
        if (st->rec && ext_record_add(st, e, d->names, d->kname, self->grid, self->block, 0,
                                      self->stream, NULL, d->par_threshold, args, a, (int)n,
                                      slots, off, false, 0) < 0)
            goto done;
        if (slow) ol.h = ext_obs_launch_begin(st, &e->obs, NULL);
        int rc = ext_cpu_run(st, e, self->grid, self->block, self->shmem, d->par_threshold,
                             slots, slow ? &ol.t[1] : NULL);
        ext_unstage_cpu(e, a, (int)n); /* misaligned arrays' copies (pack.c) */
        if (rc < 0) goto done;
    } else {
        if (ext_use_device(st, e->device) < 0) goto done;
        if (self->shmem > EXT_SHARED_ALWAYS && ext_check_shared(st, e->device, self->shmem) < 0)
            goto done;
        uint64_t errp;
        if (ext_errbuf(st, e->device, &errp) < 0) goto done;
        staged = true;
        if (host_arrays) {
            if (stage_host_arrays(st, d, a, (int)n, self->stream_handle) < 0) goto done;
            for (int i = 0; i < n; i++) {
                if (!a[i].tmp) continue;
                e->obs.h2d += a[i].tmp_size; /* kiln's copies of host arrays, both ways */
                if (e->written[i]) e->obs.d2h += a[i].tmp_size;
            }
        }
        if (ext_pack(e, a, (int)n, d->names, d->kname, slots, off, true) < 0) goto done;
        pp[0] = &errp;
        for (int i = 0; i < n; i++) pp[1 + i] = &slots[off[i]];
        pp[1 + n] = NULL; /* the driver does not need it; tests/fake_cuda does */
        /* the wide entry's parameters: each slot on its own, then the thread count */
        void **wpp = NULL;
        int64_t nthreads = 0;
        self->last_wide = false;
        if (kiln_cuda_widens(e->cu, self->grid, self->block) && e->nslots + 3 <= STACK_SLOTS &&
            arrays_disjoint(e, slots, off)) {
            nthreads = self->grid[0] * self->block[0];
            wpp = stack_wpp;
            wpp[0] = &errp;
            for (int j = 0; j < e->nslots; j++) wpp[1 + j] = &slots[j];
            wpp[1 + e->nslots] = &nthreads;
            wpp[2 + e->nslots] = NULL;
            self->last_wide = true;
        }
        if (st->rec && ext_record_add(st, e, d->names, d->kname, self->grid, self->block,
                                      self->shmem, self->stream, self->stream_handle, 0, args, a,
                                      (int)n, slots, off, wpp != NULL, errp) < 0)
            goto done;
        int rc;
        if (slow) obs_kernel_start(st, e, &ol, self->stream_handle);
        if (self->repeat > 1) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            rc = 0;
            for (long r = 0; r < self->repeat && rc == 0; r++)
                rc = kiln_cuda_launch(st->cuda, e->cu, self->grid, self->block,
                                      (unsigned)self->shmem, self->stream_handle, pp, wpp);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            self->repeat_s = ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9) /
                             (double)self->repeat;
        } else {
            /* cuLaunchKernel queues the work and returns; releasing the GIL around it
             * would cost more than the call saves (CuPy and Numba keep it too) */
            rc = kiln_cuda_launch(st->cuda, e->cu, self->grid, self->block, (unsigned)self->shmem,
                                  self->stream_handle, pp, wpp);
        }
        if (slow) ol.t[2] = ext_obs_ns();
        if (rc != 0) {
            ext_cuda_launch_error(st, rc, e->cu, self->grid, self->block, (unsigned)self->shmem);
            goto done;
        }
        if (e->can_fail) {
            st->err_pending[e->device] = true;
            Py_INCREF(e->files);
            Py_XSETREF(st->err_files[e->device], e->files);
        }
        staged = false;
        bool copied = false; /* host arrays went in: the copies back wait for the kernel */
        for (int i = 0; i < n && host_arrays && !copied; i++) copied = a[i].tmp != 0;
        if (host_arrays && unstage_host_arrays(st, e, a, (int)n, self->stream_handle) < 0)
            goto done;
        /* debug=True checks every launch; a launch that copied host arrays back has waited
         * anyway, so its error (a.reshape's ValueError...) is raised here, at its own call,
         * and not by a later launch or synchronize() */
        if ((e->debug || (copied && e->can_fail)) && ext_check_kernel_error(st, e->device) < 0)
            goto done;
    }
    e->obs.launches++;
    ret = Py_None;
    Py_INCREF(ret);
done:
    if (slow) obs_end(self, e, &ol, ret != NULL, slots, off);
    if (staged) {
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        unstage_host_arrays(st, NULL, a, (int)n, self->stream_handle);
        PyErr_Restore(t, v, tb);
    }
    for (int i = 0; i < classified; i++) ext_release_arg(&a[i]);
    if (a && a != stack_args) PyMem_Free(a);
    if (key && key != keybuf) PyMem_Free(key);
    if (off && off != stack_off) PyMem_Free(off);
    if (pp && pp != stack_pp) PyMem_Free(pp);
    if (slots != stack_slots) PyMem_Free(slots);
    Py_XDECREF(e);
    return ret;
}

static PyMemberDef launcher_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(LauncherObject, vectorcall), READONLY, NULL},
    {"dispatcher", T_OBJECT, offsetof(LauncherObject, disp), READONLY, NULL},
    {"_last_wide", T_BOOL, offsetof(LauncherObject, last_wide), READONLY,
     "whether the last launch ran several grid positions per thread"},
    {NULL, 0, 0, 0, NULL}};

static PyObject *launcher_config(LauncherObject *self, void *c) {
    return Py_BuildValue("((LLL)(LLL)OL)", (long long)self->grid[0], (long long)self->grid[1],
                         (long long)self->grid[2], (long long)self->block[0],
                         (long long)self->block[1], (long long)self->block[2], self->stream,
                         (long long)self->shmem);
}

/* A benchmark hook's count, its first argument; 0 with an exception set when there is
 * none or it is not positive. */
static long hook_count(const char *usage, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, usage);
        return 0;
    }
    long count = PyLong_AsLong(args[0]);
    if (count < 1) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "count must be positive");
        return 0;
    }
    return count;
}

/* _raw_launches(count, *args): launches count times from a C loop with the
 * arguments packed once; returns the seconds per launch (the driver's floor). */
static PyObject *launcher_raw(PyObject *selfobj, PyObject *const *args, Py_ssize_t nargs) {
    LauncherObject *self = (LauncherObject *)selfobj;
    long count = hook_count("_raw_launches(count, *args)", args, nargs);
    if (count < 1) return NULL;
    self->repeat = count;
    self->repeat_s = 0;
    PyObject *r = launcher_call(selfobj, args + 1, (size_t)(nargs - 1), NULL);
    self->repeat = 0;
    if (!r) return NULL;
    Py_DECREF(r);
    return PyFloat_FromDouble(self->repeat_s);
}

/* _path_launches(count, *args): the whole launch path (classification, lookup, packing,
 * launch) called count times from a C loop; returns the seconds per launch.  Against
 * _raw_launches it is kiln's own host cost without the Python interpreter's call. */
static PyObject *launcher_path(PyObject *selfobj, PyObject *const *args, Py_ssize_t nargs) {
    long count = hook_count("_path_launches(count, *args)", args, nargs);
    if (count < 1) return NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long r = 0; r < count; r++) {
        PyObject *v = launcher_call(selfobj, args + 1, (size_t)(nargs - 1), NULL);
        if (!v) return NULL;
        Py_DECREF(v);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return PyFloat_FromDouble(((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9) /
                              (double)count);
}

static PyMethodDef launcher_methods[] = {
    {"_raw_launches", (PyCFunction)(void (*)(void))launcher_raw, METH_FASTCALL,
     "benchmark hook: the driver's own cost per launch"},
    {"_path_launches", (PyCFunction)(void (*)(void))launcher_path, METH_FASTCALL,
     "benchmark hook: the whole launch path's cost per launch, from a C loop"},
    {NULL, NULL, 0, NULL}};

static PyObject *launcher_griddim(LauncherObject *self, void *c) {
    return Py_BuildValue("(LLL)", (long long)self->grid[0], (long long)self->grid[1],
                         (long long)self->grid[2]);
}

static PyObject *launcher_blockdim(LauncherObject *self, void *c) {
    return Py_BuildValue("(LLL)", (long long)self->block[0], (long long)self->block[1],
                         (long long)self->block[2]);
}

/* The list is the launcher's own: once it is read, the kernel's cache of launchers lets
 * this one go, so a later k[g, b] is a new launch without its callbacks, as in Numba
 * (where every k[g, b] is a new object). */
static PyObject *launcher_callbacks(LauncherObject *self, void *c) {
    if (!self->callbacks) {
        if (!(self->callbacks = PyList_New(0))) return NULL;
        Kernel *k = self->k;
        for (int i = 0; i < LAUNCH_CACHE; i++)
            if (k->lc[i] == (PyObject *)self) Py_CLEAR(k->lc[i]);
    }
    Py_INCREF(self->callbacks);
    return self->callbacks;
}

/* Numba's args of a configured launch: this thread's arguments while a launch through
 * this launcher compiles (kiln/launchconfig.py), else None. */
static PyObject *launcher_args(LauncherObject *self, void *c) {
    return PyObject_CallMethod(self->disp, "_launch_args", "O", (PyObject *)self);
}

static PyGetSetDef launcher_getset[] = {
    {"config", (getter)launcher_config, NULL, "(griddim, blockdim, stream, shared bytes)", NULL},
    {"griddim", (getter)launcher_griddim, NULL, "the grid's 3 extents (Numba's)", NULL},
    {"blockdim", (getter)launcher_blockdim, NULL, "the block's 3 extents (Numba's)", NULL},
    {"args", (getter)launcher_args, NULL,
     "the arguments of this thread's launch while it compiles, else None (Numba's)", NULL},
    {"pre_launch_callbacks", (getter)launcher_callbacks, NULL,
     "callables run as f(kernel, launch) before each launch (Numba's)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot launcher_slots[] = {
    {Py_tp_dealloc, launcher_dealloc},
    {Py_tp_traverse, launcher_traverse},
    {Py_tp_clear, launcher_clear},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_members, launcher_members},
    {Py_tp_methods, launcher_methods},
    {Py_tp_getset, launcher_getset},
    {Py_tp_doc, (void *)"A kernel with its launch configuration; call it with the arguments."},
    {0, NULL}};

static PyType_Spec launcher_spec = {"kiln._kiln.Launcher", sizeof(LauncherObject), 0,
                                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                                        Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_IMMUTABLETYPE |
                                        Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                    launcher_slots};

PyObject *ext_launcher_get(PyObject *disp, Kernel *k, const int64_t g[3], const int64_t b[3],
                           PyObject *stream, void *handle, int64_t shmem) {
    for (int i = 0; i < LAUNCH_CACHE; i++) {
        LauncherObject *l = (LauncherObject *)k->lc[i];
        if (l && memcmp(l->grid, g, sizeof l->grid) == 0 &&
            memcmp(l->block, b, sizeof l->block) == 0 && l->stream == stream &&
            l->shmem == shmem) {
            Py_INCREF(l);
            return (PyObject *)l;
        }
    }
    LauncherObject *l = PyObject_GC_New(LauncherObject, k->st->LauncherType);
    if (!l) return NULL;
    l->vectorcall = launcher_call;
    Py_INCREF(disp);
    l->disp = disp;
    l->k = k;
    memcpy(l->grid, g, sizeof l->grid);
    memcpy(l->block, b, sizeof l->block);
    Py_INCREF(stream);
    l->stream = stream;
    l->stream_handle = handle;
    l->shmem = shmem;
    l->repeat = 0;
    l->repeat_s = 0;
    l->last_wide = false;
    l->callbacks = NULL;
    l->memo_entry = NULL; /* PyObject_GC_New does not zero the object */
    l->memo_gen = 0;
    l->memo_len = 0;
    PyObject_GC_Track(l);
    Py_INCREF(l);
    Py_XSETREF(k->lc[k->lnext], (PyObject *)l);
    k->lnext = (k->lnext + 1) % LAUNCH_CACHE;
    return (PyObject *)l;
}

int ext_launch_init(PyObject *module, ModState *st) {
    st->LauncherType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &launcher_spec, NULL);
    if (!st->LauncherType || PyModule_AddType(module, st->LauncherType) < 0) return -1;
    st->str_compile_key = PyUnicode_InternFromString("_compile_key");
    st->str_resolve_target = PyUnicode_InternFromString("_resolve_target");
    if (!st->str_compile_key || !st->str_resolve_target) return -1;
    return 0;
}
