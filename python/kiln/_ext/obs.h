/* obs.h: what kiln shows of its own work (obs.c): the counters behind
 * kiln.metrics(), the trace of kiln.profile() and KILN_TRACE, KILN_LOG's
 * lines and NVTX ranges.
 *
 * The launch path pays for it with one predictable branch: launch.c counts
 * down st->obs_countdown and takes its slow path (timing, trace, log, NVTX,
 * device events) when it reaches zero, which is every OBS_SAMPLE-th launch
 * (to time the host-side cost), or every launch while a flag of
 * OBS_LAUNCH_SLOW is on.  Every launch adds one to its entry's plain counter,
 * with the GIL held (the interpreter has one: 3.11), so no atomics sit on
 * the launch path.  Compiles and cache look-ups, which may run on a tier
 * worker without the GIL, add to the process totals with atomics.
 */
#ifndef KILN_EXT_OBS_H
#define KILN_EXT_OBS_H

#include "state.h"

enum {
    OBS_TRACE = 1 << 0,         /* a profile or KILN_TRACE is recording */
    OBS_LOG_COMPILE = 1 << 1,   /* KILN_LOG=compile ... */
    OBS_LOG_CACHE = 1 << 2,
    OBS_LOG_LAUNCH = 1 << 3,
    OBS_LOG_RECOMPILE = 1 << 4,
    OBS_DEVTIME = 1 << 5,       /* GPU launches are timed with events */
    OBS_NVTX = 1 << 6,          /* NVTX ranges (the library is loaded) */
    /* the flags that put every launch on the slow path */
    OBS_LAUNCH_SLOW = OBS_TRACE | OBS_LOG_LAUNCH | OBS_DEVTIME | OBS_NVTX,
};

/* One launch in this many is timed for the mean host-side cost while no flag
 * asks for every launch: two clock reads per launch would cost about 10% of a
 * CPU launch's overhead (bench/launch_cpu.py). */
enum { OBS_SAMPLE = 64 };

typedef enum { OBS_FRONT, OBS_SEMA, OBS_EMIT, OBS_CC, OBS_NVRTC, OBS_LOAD, OBS_NSTAGES } ObsStage;

/* A loaded specialisation's counters and names, a part of its Entry.  The
 * launch counters are plain and touched with the GIL held. */
typedef struct ExtObsEntry {
    struct ExtObsEntry *prev, *next; /* the registry of live entries (GIL) */
    bool listed;
    uint64_t launches;
    uint64_t timed, host_ns, run_ns;  /* the sampled launches: host-side cost, CPU run */
    uint64_t h2d, d2h;                /* bytes kiln copied for host arrays (GPU launches) */
    uint64_t dev_ns, dev_n, dev_bytes; /* device time from events; bytes of those launches */
    uint64_t bytes;                   /* array bytes of the last launch (for GB/s) */
    double stage_ms[OBS_NSTAGES];
    int compiles;                     /* 1, or 0 when its code came from a cache tier */
    int tier;                         /* 0 built here, else KILN_CACHE_MEMORY/_DISK/_REMOTE */
    int target, device;
    char *kernel, *spec, *loc;        /* PyMem_Raw: qualified name, signature, file:line */
    const char *name;                 /* the short name: kernel's last component */
} ExtObsEntry;

/* Module init (st->obs) and teardown; the functions kiln._kiln.obs_* */
int ext_obs_init(ModState *st);
void ext_obs_free(ModState *st);
extern PyMethodDef ext_obs_functions[];

/* Microseconds and nanoseconds of the monotonic clock (the trace's time base). */
double ext_obs_us(void);
int64_t ext_obs_ns(void);

static inline int ext_obs_flags(ModState *st) {
    return __atomic_load_n(&st->obs_flags, __ATOMIC_RELAXED);
}

/* ---- compiles: with or without the GIL, any thread ---- */

/* A stage of a compile took ms from t0 (ext_obs_us): counted in the process
 * totals and, on the thread whose compile kiln._kiln.obs_begin opened, in the
 * specialisation's; a trace event and a log line when on.  detail: "tcc" for
 * tier 0's compiler, "background" for a tier worker's build, or NULL. */
void ext_obs_stage(ModState *st, ObsStage s, double t0, double ms, const char *detail);
/* A cache look-up of key (hex) found it in tier (KILN_CACHE_*, 0 a miss);
 * looked: the tiers looked in (kiln_cache_get_tier's bits).  t0, ms as above. */
void ext_obs_cache(ModState *st, int tier, int looked, const char *key, double t0, double ms);
/* This thread runs a tiered compile's optimised build of kernel name (tier.c; NULL: no
 * more): its log lines name it, its cache look-up is not counted again. */
void ext_obs_background(const char *name);
/* Bytes copied between host and device outside launches (to_device,
 * copy_to_host): counted, traced.  h2d: the direction. */
void ext_obs_copy(ModState *st, bool h2d, int64_t bytes, int device, double t0, double ms);
/* A synchronisation (kiln.synchronize, a stream's) that waited from t0 for ms. */
void ext_obs_sync(ModState *st, const char *what, double t0, double ms);

/* ---- launches: with the GIL ---- */

/* The entry's registration: what kiln._kiln.obs_register does, from core.c
 * (which knows the Entry): the thread's compile record, the names, listed. */
int ext_obs_register(ModState *st, ExtObsEntry *o, PyObject *kernel, PyObject *spec,
                     PyObject *loc, int target, int device);
/* The entry is going: its counters go into the process totals. */
void ext_obs_entry_gone(ModState *st, ExtObsEntry *o);

/* The slow path around one launch (launch.c), after the entry is known:
 * begin (NVTX range, device start event) returns a handle for end, which
 * adds the timing (t0 call, t1 kernel start, t2 kernel end, t3 return, in
 * ns; timed false when the launch also compiled), the trace event and log
 * line, and resets the countdown.  owner: the Entry object (device timings
 * still pending hold a reference to it). */
int ext_obs_launch_begin(ModState *st, ExtObsEntry *o, void *stream);
void ext_obs_launch_end(ModState *st, ExtObsEntry *o, PyObject *owner, int handle, void *stream,
                        bool timed, int64_t t0, int64_t t1, int64_t t2, int64_t t3,
                        const int64_t grid[3], const int64_t block[3], uint64_t bytes);
/* The countdown's next value: 1 while a flag wants every launch. */
static inline void ext_obs_rearm(ModState *st) {
    st->obs_countdown = (ext_obs_flags(st) & OBS_LAUNCH_SLOW) ? 1 : OBS_SAMPLE;
}

#endif
