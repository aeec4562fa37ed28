/* obs.c: what kiln shows of its own work: kiln.metrics()' counters, the
 * trace events of kiln.profile() and KILN_TRACE, KILN_LOG's lines, NVTX
 * ranges (obs.h has the cost rule for the launch path).
 *
 * Counters: each Entry carries an ExtObsEntry (launches, sampled host cost,
 * bytes, device time, its compile's stages and cache tier), listed in a
 * registry while it lives; when it goes, its counts join the process's
 * "gone" totals, so kiln.metrics() adds up whatever ran.  A compile's stages
 * are collected in a thread-local record that kiln._kiln.obs_begin opens
 * (Python's build of one specialisation, on one thread) and obs_register
 * copies into the new Entry; stages outside such a record (a tier worker's
 * optimising build, KILN_CHECK_CUDA's NVRTC runs) count in the totals only.
 *
 * Trace: events are formatted here as JSON text (Chrome's trace-event format,
 * docs/observability.md) and kept by trace.c, which also writes KILN_LOG's
 * lines and NVTX ranges; Python takes the text and writes the file.
 * GPU launches traced or timed get two events each; their device time is read
 * when metrics or the trace ask (or when OBS_MAX_PENDING are waiting), and
 * placed on the GPU's track from a reference event recorded and waited for
 * once per device.
 *
 * fork: the child starts with no pending GPU events (the parent's belong to its
 * CUDA context); trace.c empties the trace.
 */
#include "obs.h"

#include "trace.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { OBS_MAX_PENDING = 4096 }; /* GPU launches whose device time is not read yet */

typedef struct {
    PyObject *owner; /* the Entry, kept alive until its time is read */
    ExtObsEntry *e;
    void *ev0, *ev1;
    int device;
    uintptr_t stream;
    uint64_t bytes;
} Pending;

typedef struct ExtObs {
    ExtObsEntry head; /* the registry's sentinel (GIL) */
    ExtObsEntry gone; /* the counts of entries that went (GIL) */
    /* process totals, atomics: any thread */
    int64_t stage_ns[OBS_NSTAGES], stage_n[OBS_NSTAGES];
    int64_t hits[4], misses[4]; /* by KILN_CACHE_* tier */
    int64_t builds, h2d, d2h;
    int64_t lookups, found; /* cache look-ups, and those some tier answered */
    ExtTrace tr; /* where events, lines and NVTX ranges go (trace.c) */
    /* GPU timings (GIL) */
    Pending pend[OBS_MAX_PENDING];
    int npend;
    void *ref_ev[EXT_MAX_DEVICES];
    double ref_us[EXT_MAX_DEVICES];
} ExtObs;

/* The compile this thread is doing (kiln._kiln.obs_begin .. obs_register). */
typedef struct {
    bool open;
    double stage_ms[OBS_NSTAGES];
    int tier, builds;
    char kernel[256], spec[512], loc[512], name[256];
} Compile;

static _Thread_local Compile cur;
/* A tiered CPU compile's optimised build on a worker thread (tier.c): its kernel, named
 * in its log lines; its cache look-up repeats the first call's, which counted already */
static _Thread_local char bg_name[256];

void ext_obs_background(const char *name) {
    snprintf(bg_name, sizeof bg_name, "%s", name ? name : "");
}
static ExtObs *fork_obs; /* for the fork handler */

static const char *const stage_names[OBS_NSTAGES] = {"front", "sema", "emit", "cc", "nvrtc", "load"};
static const char *const tier_names[4] = {"none", "memory", "disk", "remote"};

double ext_obs_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int64_t ext_obs_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}


static void add(int64_t *p, int64_t v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static int64_t get(int64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

/* "kernel":..,"spec":..,"loc":.. of this thread's compile, or nothing */
static void compile_args(char *out, size_t cap) {
    out[0] = 0;
    if (!cur.open) return;
    char k[300], s[600], l[600];
    ext_json_esc(k, sizeof k, cur.kernel);
    ext_json_esc(s, sizeof s, cur.spec);
    ext_json_esc(l, sizeof l, cur.loc);
    snprintf(out, cap, "\"kernel\":\"%.299s\",\"spec\":\"%.599s\",\"loc\":\"%.599s\",", k, s, l);
}

/* ---- compiles and the cache ------------------------------------------------------- */

void ext_obs_stage(ModState *st, ObsStage s, double t0, double ms, const char *detail) {
    ExtObs *o = st->obs;
    if (!o) return;
    add(&o->stage_ns[s], (int64_t)(ms * 1e6));
    add(&o->stage_n[s], 1);
    if (s == OBS_CC || s == OBS_NVRTC) add(&o->builds, 1);
    if (cur.open) {
        cur.stage_ms[s] += ms;
        if (s == OBS_CC || s == OBS_NVRTC) cur.builds++;
    }
    int f = ext_obs_flags(st);
    if (!(f & (OBS_TRACE | OBS_LOG_COMPILE))) return;
    if (f & OBS_TRACE) {
        char a[1600], d[64] = "";
        compile_args(a, sizeof a);
        if (detail) snprintf(d, sizeof d, ",\"compiler\":\"%s\"", detail);
        char args[1800];
        snprintf(args, sizeof args, "%s\"stage\":\"%s\"%s", a, stage_names[s], d);
        ext_trace_host(&st->obs->tr, "compile", cur.open ? cur.name : "compile", t0, ms * 1e3, args);
    }
    /* a compile with a record gets one line when it is registered */
    if ((f & OBS_LOG_COMPILE) && !cur.open)
        ext_log_line("kiln compile: %s%s%s %.2f ms%s%s", bg_name,
                 bg_name[0] ? " (optimised build) " : "", stage_names[s], ms, detail ? " " : "",
                 detail ? detail : "");
}

void ext_obs_cache(ModState *st, int tier, int looked, const char *key, double t0, double ms) {
    ExtObs *o = st->obs;
    if (!o) return;
    /* the tiers looked in before the one that had it missed */
    bool on[4] = {false, true, (looked & 1 << KILN_CACHE_DISK) != 0,
                  (looked & 1 << KILN_CACHE_REMOTE) != 0};
    int last = tier ? tier : 3;
    for (int t = 1; t <= last && !bg_name[0]; t++) {
        if (!on[t]) continue;
        if (t == tier) add(&o->hits[t], 1);
        else add(&o->misses[t], 1);
    }
    if (!bg_name[0]) {
        add(&o->lookups, 1);
        if (tier) add(&o->found, 1);
    }
    if (cur.open) cur.tier = tier;
    int f = ext_obs_flags(st);
    if (f & OBS_TRACE) {
        char a[1600], args[1800];
        compile_args(a, sizeof a);
        snprintf(args, sizeof args, "%s\"tier\":\"%s\",\"hit\":%s,\"key\":\"%s\"", a,
                 tier_names[tier], tier ? "true" : "false", key ? key : "");
        ext_trace_host(&st->obs->tr, "cache", cur.open ? cur.name : "cache", t0, ms * 1e3, args);
    }
    if (f & OBS_LOG_CACHE)
        ext_log_line("kiln cache: %s%s%s%s%s%s (key %s, %.2f ms)", cur.open ? cur.kernel : bg_name,
                 cur.open ? cur.spec : "", cur.open ? " " : bg_name[0] ? " (optimised build) " : "",
                 tier ? tier_names[tier] : "", tier ? " hit" : "miss in every tier",
                 !cur.open && bg_name[0] && !tier ? ", built now" : "", key ? key : "", ms);
}

void ext_obs_copy(ModState *st, bool h2d, int64_t bytes, int device, double t0, double ms) {
    ExtObs *o = st->obs;
    if (!o) return;
    add(h2d ? &o->h2d : &o->d2h, bytes);
    if (ext_obs_flags(st) & OBS_TRACE) {
        char args[128];
        snprintf(args, sizeof args, "\"bytes\":%lld,\"device\":%d,\"gbps\":%.3f", (long long)bytes,
                 device, ms > 0 ? (double)bytes / (ms * 1e6) : 0.0);
        ext_trace_host(&st->obs->tr, "copy", h2d ? "host to device" : "device to host", t0, ms * 1e3, args);
    }
}

void ext_obs_sync(ModState *st, const char *what, double t0, double ms) {
    if (st->obs && (ext_obs_flags(st) & OBS_TRACE)) ext_trace_host(&st->obs->tr, "sync", what, t0, ms * 1e3, "");
}

/* ---- entries ------------------------------------------------------------------------ */

static char *raw_utf8(PyObject *s) {
    const char *u = s && PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : "";
    if (!u) {
        PyErr_Clear();
        u = "?";
    }
    size_t n = strlen(u) + 1;
    char *r = PyMem_RawMalloc(n);
    if (r) memcpy(r, u, n);
    return r;
}

int ext_obs_register(ModState *st, ExtObsEntry *e, PyObject *kernel, PyObject *spec,
                     PyObject *loc, int target, int device) {
    ExtObs *o = st->obs;
    if (e->listed) return 0;
    e->kernel = raw_utf8(kernel);
    e->spec = raw_utf8(spec);
    e->loc = raw_utf8(loc);
    if (!e->kernel || !e->spec || !e->loc) {
        PyErr_NoMemory();
        return -1;
    }
    const char *dot = strrchr(e->kernel, '.');
    e->name = dot ? dot + 1 : e->kernel;
    e->target = target;
    e->device = device;
    if (cur.open) {
        memcpy(e->stage_ms, cur.stage_ms, sizeof e->stage_ms);
        e->tier = cur.builds ? 0 : cur.tier;
        e->compiles = 1;
    }
    if (cur.open && (ext_obs_flags(st) & OBS_LOG_COMPILE)) {
        char stages[400] = "";
        size_t n = 0;
        for (int s = 0; s < OBS_NSTAGES; s++)
            if (e->stage_ms[s] > 0)
                n += (size_t)snprintf(stages + n, sizeof stages - n, "%s%s %.2f ms", n ? ", " : "",
                                      stage_names[s], e->stage_ms[s]);
        char tg[32];
        if (target) snprintf(tg, sizeof tg, "cuda:%d", device);
        else snprintf(tg, sizeof tg, "cpu");
        ext_log_line("kiln compile: %s%s for %s: %s%s%s (%s)", e->kernel, e->spec, tg, stages, e->tier ? ", code from the " : "", e->tier ? tier_names[e->tier] : "",
                 e->loc);
    }
    if (cur.open && o->tr.nvtx_pop && (ext_obs_flags(st) & OBS_NVTX)) o->tr.nvtx_pop();
    cur.open = false;
    e->next = o->head.next;
    e->prev = &o->head;
    o->head.next->prev = e;
    o->head.next = e;
    e->listed = true;
    return 0;
}

static void fold(ExtObsEntry *into, const ExtObsEntry *e) {
    into->launches += e->launches;
    into->timed += e->timed;
    into->host_ns += e->host_ns;
    into->run_ns += e->run_ns;
    into->h2d += e->h2d;
    into->d2h += e->d2h;
    into->dev_ns += e->dev_ns;
    into->dev_n += e->dev_n;
    into->dev_bytes += e->dev_bytes;
}

void ext_obs_entry_gone(ModState *st, ExtObsEntry *e) {
    ExtObs *o = st->obs;
    if (o && e->listed) {
        fold(&o->gone, e);
        e->prev->next = e->next;
        e->next->prev = e->prev;
        e->listed = false;
    }
    PyMem_RawFree(e->kernel);
    PyMem_RawFree(e->spec);
    PyMem_RawFree(e->loc);
    e->kernel = e->spec = e->loc = NULL;
}

/* ---- launches ------------------------------------------------------------------------ */

/* Reads the device times of the pending GPU launches (all of them when wait,
 * else those that finished), and traces them on their GPU's track.  GIL. */
static void resolve(ModState *st, bool wait) {
    ExtObs *o = st->obs;
    int keep = 0;
    for (int i = 0; i < o->npend; i++) {
        Pending *p = &o->pend[i];
        kiln_cuda *cu = st->cuda;
        bool done = cu && kiln_cuda_use(cu, p->device) == 0 &&
                    (wait ? kiln_cuda_event_sync(cu, p->ev1) == 0
                          : kiln_cuda_event_query(cu, p->ev1) == 0);
        if (!done && !wait && cu) {
            o->pend[keep++] = *p;
            continue;
        }
        float ms = 0, off = 0;
        if (done && kiln_cuda_event_elapsed(cu, &ms, p->ev0, p->ev1) == 0) {
            ExtObsEntry *e = p->e;
            e->dev_ns += (uint64_t)((double)ms * 1e6);
            e->dev_n++;
            e->dev_bytes += p->bytes;
            if ((ext_obs_flags(st) & OBS_TRACE) && o->ref_ev[p->device] &&
                kiln_cuda_event_elapsed(cu, &off, o->ref_ev[p->device], p->ev0) == 0) {
                char ev[TRACE_LINE], k[300], s[600], l[600];
                ext_json_esc(k, sizeof k, e->kernel);
                ext_json_esc(s, sizeof s, e->spec);
                ext_json_esc(l, sizeof l, e->loc);
                double us = (double)ms * 1e3;
                long pid = TRACE_GPU_PID + p->device;
                snprintf(ev, sizeof ev,
                         "{\"ph\":\"X\",\"cat\":\"launch\",\"name\":\"%s\",\"ts\":%.3f,"
                         "\"dur\":%.3f,\"pid\":%ld,\"tid\":%llu,\"args\":{\"kernel\":\"%s\","
                         "\"spec\":\"%s\",\"loc\":\"%s\",\"device_us\":%.3f,\"bytes\":%llu,"
                         "\"gbps\":%.3f}}",
                         e->name, o->ref_us[p->device] + (double)off * 1e3, us, pid,
                         (unsigned long long)p->stream, k, s, l, us, (unsigned long long)p->bytes,
                         us > 0 ? (double)p->bytes / (us * 1e3) : 0.0);
                char dn[128] = "GPU";
                kiln_cuda_device_name(cu, p->device, dn, sizeof dn);
                ext_trace_gpu(&o->tr, p->device, dn, ev);
            }
        }
        if (cu) {
            kiln_cuda_event_free(cu, p->ev0);
            kiln_cuda_event_free(cu, p->ev1);
        }
        Py_DECREF(p->owner);
    }
    o->npend = keep;
}

int ext_obs_launch_begin(ModState *st, ExtObsEntry *e, void *stream) {
    ExtObs *o = st->obs;
    int f = ext_obs_flags(st);
    if ((f & OBS_NVTX) && o->tr.nvtx_push) {
        char r[300];
        snprintf(r, sizeof r, "kiln launch %s", e->name ? e->name : "?");
        o->tr.nvtx_push(r);
    }
    if (!(f & (OBS_DEVTIME | OBS_TRACE)) || e->target != 1 || !st->cuda) return -1;
    if (o->npend == OBS_MAX_PENDING) resolve(st, false);
    if (o->npend == OBS_MAX_PENDING) resolve(st, true);
    kiln_cuda *cu = st->cuda;
    int d = e->device;
    if (d < 0 || d >= EXT_MAX_DEVICES) return -1;
    if (!o->ref_ev[d]) {
        /* the device's time zero on the host's clock: recorded, waited for, read */
        if (kiln_cuda_event_new(cu, &o->ref_ev[d], 1) != 0) return -1;
        if (kiln_cuda_event_record(cu, o->ref_ev[d], NULL) != 0 ||
            kiln_cuda_event_sync(cu, o->ref_ev[d]) != 0) {
            kiln_cuda_event_free(cu, o->ref_ev[d]);
            o->ref_ev[d] = NULL;
            return -1;
        }
        o->ref_us[d] = ext_obs_us();
    }
    Pending *p = &o->pend[o->npend];
    if (kiln_cuda_event_new(cu, &p->ev0, 1) != 0) return -1;
    if (kiln_cuda_event_new(cu, &p->ev1, 1) != 0 ||
        kiln_cuda_event_record(cu, p->ev0, stream) != 0) {
        kiln_cuda_event_free(cu, p->ev0);
        if (p->ev1) kiln_cuda_event_free(cu, p->ev1);
        return -1;
    }
    return o->npend;
}

void ext_obs_launch_end(ModState *st, ExtObsEntry *e, PyObject *owner, int h, void *stream,
                        bool timed, int64_t t0, int64_t t1, int64_t t2, int64_t t3,
                        const int64_t grid[3], const int64_t block[3], uint64_t bytes) {
    ExtObs *o = st->obs;
    int f = ext_obs_flags(st);
    e->bytes = bytes;
    if (timed) {
        e->timed++;
        e->host_ns += (uint64_t)((t1 - t0) + (t3 - t2));
        e->run_ns += (uint64_t)(t2 - t1);
    }
    if (h >= 0 && h == o->npend) {
        Pending *p = &o->pend[o->npend];
        if (kiln_cuda_event_record(st->cuda, p->ev1, stream) == 0) {
            Py_INCREF(owner);
            p->owner = owner;
            p->e = e;
            p->device = e->device;
            p->stream = (uintptr_t)stream;
            p->bytes = bytes;
            o->npend++;
        } else {
            kiln_cuda_event_free(st->cuda, p->ev0);
            kiln_cuda_event_free(st->cuda, p->ev1);
        }
    }
    if ((f & OBS_NVTX) && o->tr.nvtx_pop) o->tr.nvtx_pop();
    if (f & OBS_TRACE) {
        char k[300], s[600], l[600], args[1800];
        ext_json_esc(k, sizeof k, e->kernel);
        ext_json_esc(s, sizeof s, e->spec);
        ext_json_esc(l, sizeof l, e->loc);
        snprintf(args, sizeof args,
                 "\"kernel\":\"%s\",\"spec\":\"%s\",\"loc\":\"%s\",\"target\":\"%s\","
                 "\"grid\":[%lld,%lld,%lld],\"block\":[%lld,%lld,%lld],\"bytes\":%llu,"
                 "\"run_us\":%.3f",
                 k, s, l, e->target ? "cuda" : "cpu", (long long)grid[0], (long long)grid[1],
                 (long long)grid[2], (long long)block[0], (long long)block[1],
                 (long long)block[2], (unsigned long long)bytes, (double)(t2 - t1) / 1e3);
        ext_trace_host(&st->obs->tr, "launch", e->name, (double)t0 / 1e3, (double)(t3 - t0) / 1e3, args);
    }
    if (f & OBS_LOG_LAUNCH)
        ext_log_line("kiln launch: %s%s on %s grid (%lld, %lld, %lld) block (%lld, %lld, %lld): "
                 "%.1f us",
                 e->kernel, e->spec, e->target ? "cuda" : "cpu", (long long)grid[0],
                 (long long)grid[1], (long long)grid[2], (long long)block[0],
                 (long long)block[1], (long long)block[2], (double)(t3 - t0) / 1e3);
    if (o->npend > OBS_MAX_PENDING / 2) resolve(st, false);
}

/* ---- kiln._kiln.obs_* -------------------------------------------------------------------- */

/* obs_set(flags) -> the flags before.  OBS_NVTX is kept only if the library loads. */
static PyObject *f_obs_set(PyObject *m, PyObject *arg) {
    ModState *st = ext_state(m);
    long f = PyLong_AsLong(arg);
    if (f == -1 && PyErr_Occurred()) return NULL;
    if ((f & OBS_NVTX) && !ext_nvtx_load(&st->obs->tr)) f &= ~OBS_NVTX;
    int old = ext_obs_flags(st);
    __atomic_store_n(&st->obs_flags, (int)f, __ATOMIC_RELAXED);
    st->obs_countdown = 0; /* the next launch takes the slow path and re-arms */
    return PyLong_FromLong(old);
}

/* obs_nvtx() -> (loaded, why not) */
static PyObject *f_obs_nvtx(PyObject *m, PyObject *unused) {
    ExtObs *o = ext_state(m)->obs;
    return Py_BuildValue("(Os)", o->tr.nvtx_lib ? Py_True : Py_False, o->tr.nvtx_why);
}

/* obs_begin(kernel, spec, loc): this thread's compile of one specialisation starts */
static PyObject *f_obs_begin(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    const char *k, *s, *l;
    if (!PyArg_ParseTuple(args, "sss", &k, &s, &l)) return NULL;
    memset(&cur, 0, sizeof cur);
    cur.open = true;
    snprintf(cur.kernel, sizeof cur.kernel, "%s", k);
    snprintf(cur.spec, sizeof cur.spec, "%s", s);
    snprintf(cur.loc, sizeof cur.loc, "%s", l);
    const char *dot = strrchr(cur.kernel, '.');
    snprintf(cur.name, sizeof cur.name, "%s", dot ? dot + 1 : cur.kernel);
    ExtObs *o = st->obs;
    if ((ext_obs_flags(st) & OBS_NVTX) && o->tr.nvtx_push) {
        char r[300];
        snprintf(r, sizeof r, "kiln compile %s", cur.name);
        o->tr.nvtx_push(r);
    }
    Py_RETURN_NONE;
}

/* obs_end(): the compile failed; its record closes without an entry */
static PyObject *f_obs_end(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    if (cur.open && st->obs->tr.nvtx_pop && (ext_obs_flags(st) & OBS_NVTX)) st->obs->tr.nvtx_pop();
    cur.open = false;
    Py_RETURN_NONE;
}

/* obs_log(flag, text): one KILN_LOG line from Python (recompile reasons) */
static PyObject *f_obs_log(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    int flag;
    const char *text;
    if (!PyArg_ParseTuple(args, "is", &flag, &text)) return NULL;
    if (ext_obs_flags(st) & flag) ext_log_line("%s", text);
    Py_RETURN_NONE;
}

/* obs_trace_take() -> (bytes: the events as JSON separated by commas, dropped count);
 * empties the buffer (device times pending are read first).  The metadata naming
 * processes and threads comes again with the next events, for the next taker. */
static PyObject *f_obs_trace_take(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    ExtObs *o = st->obs;
    resolve(st, true);
    return ext_trace_take(&o->tr);
}

/* d[k] = v, v's reference taken over; -1 when v is NULL or the store fails */
static int set_num(PyObject *d, const char *k, PyObject *v) {
    if (!v) return -1;
    int rc = PyDict_SetItemString(d, k, v);
    Py_DECREF(v);
    return rc;
}

/* {"front": ms, ..., "total": ms} */
static PyObject *stages_dict(const double *ms) {
    PyObject *d = PyDict_New();
    double total = 0;
    for (int s = 0; d && s < OBS_NSTAGES; s++) {
        total += ms[s];
        if (set_num(d, stage_names[s], PyFloat_FromDouble(ms[s])) < 0) Py_CLEAR(d);
    }
    if (d && set_num(d, "total", PyFloat_FromDouble(total)) < 0) Py_CLEAR(d);
    return d;
}

static double mean_us(uint64_t ns, uint64_t n) { return n ? (double)ns / 1e3 / (double)n : 0; }

/* the launch fields of an entry or of the totals, into d */
static int launch_fields(PyObject *d, const ExtObsEntry *e, bool devtime) {
    if (set_num(d, "launches", PyLong_FromUnsignedLongLong(e->launches)) < 0 ||
        set_num(d, "timed_launches", PyLong_FromUnsignedLongLong(e->timed)) < 0 ||
        set_num(d, "host_us", PyFloat_FromDouble(mean_us(e->host_ns, e->timed))) < 0 ||
        set_num(d, "run_us", PyFloat_FromDouble(mean_us(e->run_ns, e->timed))) < 0 ||
        set_num(d, "h2d_bytes", PyLong_FromUnsignedLongLong(e->h2d)) < 0 ||
        set_num(d, "d2h_bytes", PyLong_FromUnsignedLongLong(e->d2h)) < 0)
        return -1;
    if (!devtime) return 0;
    if (set_num(d, "device_launches", PyLong_FromUnsignedLongLong(e->dev_n)) < 0 ||
        set_num(d, "device_ms", PyFloat_FromDouble((double)e->dev_ns / 1e6)) < 0 ||
        set_num(d, "device_bytes", PyLong_FromUnsignedLongLong(e->dev_bytes)) < 0)
        return -1;
    if (e->dev_ns && e->dev_bytes) /* bytes per ns are GB/s */
        return set_num(d, "gbps", PyFloat_FromDouble((double)e->dev_bytes / (double)e->dev_ns));
    return PyDict_SetItemString(d, "gbps", Py_None);
}

static void zero_counts(ExtObsEntry *e) {
    e->launches = e->timed = e->host_ns = e->run_ns = e->h2d = e->d2h = 0;
    e->dev_ns = e->dev_n = e->dev_bytes = 0;
    memset(e->stage_ms, 0, sizeof e->stage_ms);
    e->compiles = 0;
}

static PyObject *text(const char *s) {
    return PyUnicode_DecodeUTF8(s ? s : "", (Py_ssize_t)strlen(s ? s : ""), "replace");
}

static PyObject *entry_dict(const ExtObsEntry *e, bool devtime) {
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    char tg[32];
    if (e->target) snprintf(tg, sizeof tg, "cuda:%d", e->device);
    else snprintf(tg, sizeof tg, "cpu");
    if (set_num(d, "kernel", text(e->kernel)) < 0 || set_num(d, "spec", text(e->spec)) < 0 ||
        set_num(d, "loc", text(e->loc)) < 0 || set_num(d, "target", PyUnicode_FromString(tg)) < 0 ||
        set_num(d, "compiles", PyLong_FromLong(e->compiles)) < 0 ||
        set_num(d, "compile_ms", stages_dict(e->stage_ms)) < 0 ||
        (e->tier ? set_num(d, "cache_tier", PyUnicode_FromString(tier_names[e->tier]))
                 : PyDict_SetItemString(d, "cache_tier", Py_None)) < 0 ||
        launch_fields(d, e, devtime) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *cache_dict(ExtObs *o) {
    PyObject *c = PyDict_New();
    for (int t = 1; c && t <= 3; t++) {
        PyObject *td = Py_BuildValue("{s:L,s:L}", "hits", (long long)get(&o->hits[t]), "misses",
                                     (long long)get(&o->misses[t]));
        if (set_num(c, tier_names[t], td) < 0) Py_CLEAR(c);
    }
    int64_t lk = get(&o->lookups), found = get(&o->found);
    if (c && (set_num(c, "lookups", PyLong_FromLongLong(lk)) < 0 ||
              set_num(c, "hits", PyLong_FromLongLong(found)) < 0 ||
              set_num(c, "misses", PyLong_FromLongLong(lk - found)) < 0 ||
              (lk ? set_num(c, "hit_rate", PyFloat_FromDouble((double)found / (double)lk))
                  : PyDict_SetItemString(c, "hit_rate", Py_None)) < 0))
        Py_CLEAR(c);
    return c;
}

static void reset_all(ExtObs *o) {
    zero_counts(&o->gone);
    for (ExtObsEntry *e = o->head.next; e != &o->head; e = e->next) zero_counts(e);
    for (int s = 0; s < OBS_NSTAGES; s++) {
        __atomic_store_n(&o->stage_ns[s], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&o->stage_n[s], 0, __ATOMIC_RELAXED);
    }
    for (int t = 0; t < 4; t++) {
        __atomic_store_n(&o->hits[t], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&o->misses[t], 0, __ATOMIC_RELAXED);
    }
    int64_t *z[] = {&o->builds, &o->h2d, &o->d2h, &o->lookups, &o->found};
    for (size_t i = 0; i < sizeof z / sizeof *z; i++) __atomic_store_n(z[i], 0, __ATOMIC_RELAXED);
}

/* obs_metrics(reset, device_time) -> dict (kiln.metrics(); docs/observability.md) */
static PyObject *f_obs_metrics(PyObject *m, PyObject *args) {
    ModState *st = ext_state(m);
    ExtObs *o = st->obs;
    int reset = 0, devtime = 0;
    if (!PyArg_ParseTuple(args, "pp", &reset, &devtime)) return NULL;
    if (devtime) resolve(st, true);
    ExtObsEntry tot;
    memset(&tot, 0, sizeof tot);
    fold(&tot, &o->gone);
    PyObject *list = PyList_New(0), *d = PyDict_New();
    if (!list || !d) goto fail;
    for (ExtObsEntry *e = o->head.next; e != &o->head; e = e->next) {
        fold(&tot, e);
        PyObject *ed = entry_dict(e, devtime);
        if (!ed || PyList_Append(list, ed) < 0) {
            Py_XDECREF(ed);
            goto fail;
        }
        Py_DECREF(ed);
    }
    double ms[OBS_NSTAGES];
    for (int s = 0; s < OBS_NSTAGES; s++) ms[s] = (double)get(&o->stage_ns[s]) / 1e6;
    if (set_num(d, "compiles", PyLong_FromLongLong(get(&o->stage_n[OBS_FRONT]))) < 0 ||
        set_num(d, "builds", PyLong_FromLongLong(get(&o->builds))) < 0 ||
        set_num(d, "compile_ms", stages_dict(ms)) < 0 || set_num(d, "cache", cache_dict(o)) < 0 ||
        launch_fields(d, &tot, devtime) < 0 ||
        /* the process's copies: kiln's for host arrays in launches, and to_device & co */
        set_num(d, "h2d_bytes", PyLong_FromLongLong((long long)tot.h2d + get(&o->h2d))) < 0 ||
        set_num(d, "d2h_bytes", PyLong_FromLongLong((long long)tot.d2h + get(&o->d2h))) < 0 ||
        PyDict_SetItemString(d, "kernels", list) < 0)
        goto fail;
    Py_DECREF(list);
    if (reset) reset_all(o);
    return d;
fail:
    Py_XDECREF(list);
    Py_XDECREF(d);
    return NULL;
}

static PyObject *f_obs_flags(PyObject *m, PyObject *unused) {
    return PyLong_FromLong(ext_obs_flags(ext_state(m)));
}

static PyObject *f_obs_now(PyObject *m, PyObject *unused) { return PyFloat_FromDouble(ext_obs_us()); }

/* obs_devices() -> [name of each GPU], [] when CUDA was never opened (a trace's
 * metadata must not open it) */
static PyObject *f_obs_devices(PyObject *m, PyObject *unused) {
    ModState *st = ext_state(m);
    PyObject *l = PyList_New(0);
    int n = st->cuda ? kiln_cuda_device_count(st->cuda) : 0;
    for (int d = 0; l && d < n && d < EXT_MAX_DEVICES; d++) {
        char name[128] = "GPU";
        kiln_cuda_device_name(st->cuda, d, name, sizeof name);
        PyObject *s = text(name);
        if (!s || PyList_Append(l, s) < 0) Py_CLEAR(l);
        Py_XDECREF(s);
    }
    return l;
}

PyMethodDef ext_obs_functions[] = {
    {"obs_set", f_obs_set, METH_O, "obs_set(flags) -> the flags before"},
    {"obs_flags", f_obs_flags, METH_NOARGS, "the flags on"},
    {"obs_nvtx", f_obs_nvtx, METH_NOARGS, "(NVTX loaded, why not)"},
    {"obs_begin", f_obs_begin, METH_VARARGS, "obs_begin(kernel, spec, loc): a compile starts"},
    {"obs_end", f_obs_end, METH_NOARGS, "the compile ended without an entry"},
    {"obs_log", f_obs_log, METH_VARARGS, "obs_log(flag, text): a KILN_LOG line"},
    {"obs_trace_take", f_obs_trace_take, METH_NOARGS, "(events JSON, dropped); empties it"},
    {"obs_metrics", f_obs_metrics, METH_VARARGS, "obs_metrics(reset, device_time) -> dict"},
    {"obs_now", f_obs_now, METH_NOARGS, "the trace clock, in microseconds"},
    {"obs_devices", f_obs_devices, METH_NOARGS, "the names of the GPUs CUDA has opened"},
    {NULL, NULL, 0, NULL}};

/* ---- init, fork, teardown ------------------------------------------------------------ */

static void fork_child(void) {
    ExtObs *o = fork_obs;
    if (!o) return;
    /* the parent's events belong to its CUDA context: forgotten, not freed (the
     * entries they hold stay referenced, a small leak in a child that used a GPU) */
    o->npend = 0;
    memset(o->ref_ev, 0, sizeof o->ref_ev);
}

static void register_fork(void) { pthread_atfork(NULL, NULL, fork_child); }

int ext_obs_init(ModState *st) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    ExtObs *o = PyMem_RawCalloc(1, sizeof *o);
    if (!o) {
        PyErr_NoMemory();
        return -1;
    }
    o->head.next = o->head.prev = &o->head;
    ext_trace_init(&o->tr);
    st->obs = o;
    st->obs_countdown = OBS_SAMPLE;
    fork_obs = o;
    pthread_once(&once, register_fork);
    return 0;
}

void ext_obs_free(ModState *st) {
    ExtObs *o = st->obs;
    if (!o) return;
    for (int i = 0; i < o->npend; i++) Py_CLEAR(o->pend[i].owner);
    o->npend = 0;
    ext_trace_free(&o->tr);
}
