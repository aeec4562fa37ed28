/* tier.c: tiered compilation on the CPU target.
 *
 * A first call whose optimised build is in no cache tier gets an Entry whose
 * code is tier 0 (libtcc compiles the same generated C in the process, under
 * tcc_mu, in a millisecond or two), and a job: the optimising build through
 * the cache (ext_cached_build_nogil -> kiln_cpu_build, which stores only
 * optimised code), run by a worker thread without the GIL.  When the job has
 * loaded the module it stores it into the Entry's code pointer with a release
 * store; a launch reads that pointer once, with acquire, so the next launch
 * runs the optimised code and a running one finishes on tier 0's.  Tier 0's
 * module stays loaded until entry_dealloc (no launch is ever left in
 * unloaded code).  The Entry and the job point at each other only through
 * the slot: ext_tier_detach (entry_dealloc) clears it under the lock, and a
 * job whose slot is gone unloads what it loaded.
 *
 * Jobs are reference-counted under `mu`: the Entry's reference, and the
 * queue's or the worker's.  At most KILN_TIER_WORKERS workers run; each takes
 * jobs until the queue is empty and ends, so no thread idles in a process
 * that is done compiling.  A worker's build polls `stopping` (the context's
 * interrupt hook) as kiln_cpu_build polls for Ctrl-C, so a cancelled build's
 * compiler is killed within KILN_POLL_MS.
 *
 * A launch expected to run longer on tier 0 than KILN_TIER0_BUDGET_MS (the
 * entry's last tier-0 time per thread, or a guess, times its threads) waits
 * for the optimised build instead: tcc's code is unvectorised and on one
 * thread, about 50x slower than cc's on Black-Scholes, so a large launch
 * finishes sooner after the wait.
 *
 * A failed build (a broken KILN_CC) leaves the entry on tier 0, correct but
 * slow, and the next launch reports it once as kiln.PerformanceWarning with
 * the build's message.  Interpreter exit (atexit, registered by _compile.py,
 * and module teardown) gives the pending builds KILN_TIER_EXIT_MS to finish
 * and be stored, so a short script still fills the cache for its next run,
 * then cancels them and waits for the workers.
 *
 * fork: the handlers hold `tcc_mu` and `mu` across fork(), so no thread is
 * inside libtcc (its semaphore would stay taken in the child) or the lists.
 * The child has no workers: its queued and running jobs become ORPHANED, and
 * the next tier-0 launch of their entry queues them again (or builds at once
 * when no thread can start); the parent's claim on the cache key makes the
 * child's build wait for the parent's result rather than repeat it.
 */
#include "tier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "errors.h"
#include "obs.h"

/* Optimising builds at once, per process (each runs one C compiler). */
enum { KILN_TIER_WORKERS = 2 };
/* At interpreter exit: how long the pending optimising builds may take to
 * finish and be stored before they are cancelled, in milliseconds. */
enum { KILN_TIER_EXIT_MS = 2000 };
/* After cancelling: how long exit waits for the workers to end (each polls
 * every KILN_POLL_MS). */
enum { KILN_TIER_STOP_MS = 2000 };
/* What a thread of a kernel is guessed to cost on tier 0 before its first
 * tier-0 launch has been timed, in nanoseconds (tcc's code for Black-Scholes
 * takes about 300, for saxpy about 3). */
enum { KILN_TIER0_GUESS_NS = 100 };
/* ... and with tier 0's vector entry (src/emit/emit_tier0.c: Black-Scholes about 10). */
enum { KILN_TIER0_VECTOR_GUESS_NS = 16 };
/* How long an optimising build waits for its entry's first tier-0 launch, in
 * milliseconds: that launch has the processors to itself (the C compiler would take
 * one of them, on two cores doubling the first call's time); the build starts when it
 * ends, when a launch waits for the build, or after this long. */
enum { KILN_TIER_HOLD_MS = 100 };
/* The longest a launch is expected to run on tier 0, in milliseconds: one
 * expected to take longer waits for the optimised build instead. */
enum { KILN_TIER0_BUDGET_MS = 100 };
/* A tier-0 launch expected to take at least this long on one thread, in
 * microseconds, runs on tier 0's own threads (kiln_cpu_quick_threads: the
 * processors it may use); a shorter one stays on the calling thread, where
 * starting threads would cost more than they save. */
enum { KILN_TIER0_POOL_MIN_US = 500 };
/* How much of tier 0's last refusal tier_stats keeps. */
enum { KILN_TIER_REFUSAL_MAX = 2048 };

typedef enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_FAILED, JOB_CANCELLED, JOB_ORPHANED } JobState;

struct ExtTierJob {
    ExtTierJob *prev, *next; /* every job not freed (T->all) */
    ExtTierJob *qnext;       /* the queue */
    int refs;                /* the entry's, the queue's or a worker's */
    JobState state;
    bool reported;           /* a failure's warning was given */
    kiln_cpu_module **slot;  /* the entry's code pointer; NULL once it is gone */
    kiln_ctx *ctx;           /* the build's: its compiler command, read at the first call */
    char *src, *target, *name, *entry;
    size_t len;
    char *error;             /* a failed build's message */
    double ns_per_thread;    /* the last tier-0 launch's time per thread (GIL) */
    bool vector;             /* tier 0 runs the vector entry: the smaller guess */
    bool held;               /* a worker waits to build it until its entry's first tier-0
                              * launch has run (ext_tier_ran) or until held_until */
    double held_until;
};

typedef struct {
    long long loads, refusals, swaps, failures, restarts, cancelled, waits;
    long long vector; /* loads of tier 0's vector entry */
    long long vector_refusals; /* ... and sources of it libtcc refused */
    double load_ms;
    char last_refusal[KILN_TIER_REFUSAL_MAX];
} TierStats;

struct ExtTiers {
    pthread_mutex_t mu;      /* everything below but tcc_mu */
    pthread_cond_t cv;       /* a job ended or a worker left */
    pthread_mutex_t tcc_mu;  /* libtcc: one compile at a time, and none across fork */
    ExtTierJob *all, *qhead, *qtail;
    int workers;
    bool closing;            /* exit began: no new jobs */
    int stopping;            /* atomic: cancel the running builds */
    ModState *st;
    TierStats n;             /* tier_stats */
    long long pooled;        /* tier-0 launches on more than one thread: atomic, not under mu */
};

static ExtTiers *fork_tiers; /* for the fork handlers: process-wide, as fork is */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- jobs ----------------------------------------------------------------------- */

/* Unlinks and frees j once the last reference is gone.  Under mu. */
static void job_unref(ExtTiers *T, ExtTierJob *j) {
    if (--j->refs > 0) return;
    if (j->prev) j->prev->next = j->next;
    else T->all = j->next;
    if (j->next) j->next->prev = j->prev;
    kiln_ctx_free(j->ctx);
    free(j->src);
    free(j->target);
    free(j->name);
    free(j->entry);
    free(j->error);
    free(j);
}

static int job_stopped(void *ud) {
    ExtTiers *T = ud;
    return __atomic_load_n(&T->stopping, __ATOMIC_RELAXED);
}

typedef struct {
    const char *src;
    size_t len;
} CpuSource;

static int build_cpu(void *ud, kiln_ctx *ctx, void **blob, size_t *len, char kind[16]) {
    CpuSource *b = ud;
    snprintf(kind, 16, "so");
    return kiln_cpu_build(ctx, b->src, b->len, blob, len);
}

/* Builds j, loads it and swaps it into the slot; without the GIL.  The caller
 * holds a reference for it (a worker's), dropped here. */
static void run_job(ExtTiers *T, ExtTierJob *j) {
    TextSink t = {NULL, 0, 0, 0};
    kiln_ctx_set_diag(j->ctx, ext_text_diag, &t);
    kiln_ctx_set_interrupt(j->ctx, job_stopped, T);
    CpuSource b = {j->src, j->len};
    ExtArtifact art;
    ext_obs_background(j->name);
    int rc = ext_cached_build_nogil(T->st, j->ctx, j->src, j->len, j->target, 0,
                                    kiln_cpu_target_name(), j->name, build_cpu, &b, &art);
    ext_obs_background(NULL);
    kiln_cpu_module *mod = NULL;
    bool wanted = false;
    if (rc == 0) {
        pthread_mutex_lock(&T->mu);
        wanted = j->slot != NULL;
        pthread_mutex_unlock(&T->mu);
        if (wanted) mod = kiln_cpu_load(j->ctx, art.blob, art.len, j->entry);
        free(art.blob);
    }
    pthread_mutex_lock(&T->mu);
    if (mod && j->slot) {
        __atomic_store_n(j->slot, mod, __ATOMIC_RELEASE);
        mod = NULL;
        j->state = JOB_DONE;
        T->n.swaps++;
    } else if (rc == 0 && (mod || !wanted)) {
        j->state = JOB_DONE; /* built and stored; its entry went away meanwhile */
    } else if (__atomic_load_n(&T->stopping, __ATOMIC_RELAXED)) {
        j->state = JOB_CANCELLED;
        T->n.cancelled++;
    } else {
        j->state = JOB_FAILED;
        free(j->error);
        j->error = strdup(t.n ? t.buf : "the optimised build failed, and said nothing");
        T->n.failures++;
    }
    /* the source and the compiler's context are needed no more: an ended job is never
     * run again (after fork, only queued and running ones are) */
    free(j->src);
    free(j->target);
    kiln_ctx_free(j->ctx);
    j->src = j->target = NULL;
    j->ctx = NULL;
    job_unref(T, j);
    pthread_cond_broadcast(&T->cv);
    pthread_mutex_unlock(&T->mu);
    kiln_cpu_unload(mod); /* built for an entry that is gone */
    PyMem_RawFree(t.buf);
}

/* Waits on cv for at most ms (and KILN_POLL_MS); under mu. */
static void cv_wait(ExtTiers *T, double ms) {
    if (ms > KILN_POLL_MS) ms = KILN_POLL_MS;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long ns = ts.tv_nsec + (long long)(ms * 1e6);
    ts.tv_sec += (time_t)(ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    pthread_cond_timedwait(&T->cv, &T->mu, &ts);
}

static void *worker_main(void *arg) {
    ExtTiers *T = arg;
    pthread_mutex_lock(&T->mu);
    while (T->qhead && !__atomic_load_n(&T->stopping, __ATOMIC_RELAXED)) {
        ExtTierJob *j = T->qhead;
        T->qhead = j->qnext;
        if (!T->qhead) T->qtail = NULL;
        j->qnext = NULL;
        j->state = JOB_RUNNING; /* the queue's reference is the worker's now */
        /* the first tier-0 launch first (KILN_TIER_HOLD_MS) */
        while (j->held && !__atomic_load_n(&T->stopping, __ATOMIC_RELAXED)) {
            double left = j->held_until - now_ms();
            if (left <= 0) break;
            cv_wait(T, left);
        }
        j->held = false;
        pthread_mutex_unlock(&T->mu);
        run_job(T, j);
        pthread_mutex_lock(&T->mu);
    }
    T->workers--;
    pthread_cond_broadcast(&T->cv);
    pthread_mutex_unlock(&T->mu);
    return NULL;
}

/* Queues j (the queue takes a reference) and starts a worker if fewer than
 * KILN_TIER_WORKERS run.  Under mu.  -1 when no worker runs and none can
 * start (j is then not queued). */
static int enqueue(ExtTiers *T, ExtTierJob *j) {
    j->state = JOB_QUEUED;
    j->refs++;
    j->qnext = NULL;
    if (T->qtail) T->qtail->qnext = j;
    else T->qhead = j;
    T->qtail = j;
    if (T->workers >= KILN_TIER_WORKERS) return 0;
    pthread_attr_t at;
    pthread_t th;
    int rc = pthread_attr_init(&at);
    if (rc == 0) {
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        rc = pthread_create(&th, &at, worker_main, T);
        pthread_attr_destroy(&at);
    }
    if (rc == 0) {
        T->workers++;
        return 0;
    }
    if (T->workers > 0) return 0; /* one that runs will take it */
    /* take it back off the queue's end */
    ExtTierJob **p = &T->qhead;
    while (*p != j) p = &(*p)->qnext;
    *p = NULL;
    T->qtail = NULL;
    for (ExtTierJob *q = T->qhead; q; q = q->qnext) T->qtail = q;
    j->refs--;
    j->state = JOB_ORPHANED;
    return -1;
}

/* ---- fork ------------------------------------------------------------------------- */

static void fork_prepare(void) {
    ExtTiers *T = fork_tiers;
    if (!T) return;
    pthread_mutex_lock(&T->tcc_mu);
    pthread_mutex_lock(&T->mu);
}

static void fork_parent(void) {
    ExtTiers *T = fork_tiers;
    if (!T) return;
    pthread_mutex_unlock(&T->mu);
    pthread_mutex_unlock(&T->tcc_mu);
}

static void fork_child(void) {
    ExtTiers *T = fork_tiers;
    if (!T) return;
    pthread_mutex_init(&T->mu, NULL);
    pthread_mutex_init(&T->tcc_mu, NULL);
    pthread_cond_init(&T->cv, NULL);
    /* the workers stayed in the parent: their jobs, and the queue's, wait for a launch */
    T->workers = 0;
    T->qhead = T->qtail = NULL;
    for (ExtTierJob *j = T->all, *next; j; j = next) {
        next = j->next;
        j->qnext = NULL;
        if (j->state == JOB_QUEUED || j->state == JOB_RUNNING) {
            j->state = JOB_ORPHANED;
            job_unref(T, j);
        }
    }
}

static void register_fork(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

/* ---- the extension's calls ------------------------------------------------------------ */

int ext_tier_init(ModState *st) {
    ExtTiers *T = calloc(1, sizeof *T);
    if (!T) {
        PyErr_NoMemory();
        return -1;
    }
    pthread_mutex_init(&T->mu, NULL);
    pthread_mutex_init(&T->tcc_mu, NULL);
    pthread_cond_init(&T->cv, NULL);
    T->st = st;
    st->tiers = T;
    pthread_once(&fork_once, register_fork);
    fork_tiers = T; /* the latest module's (one per process in practice) */
    return 0;
}

kiln_cpu_module *ext_tier0_load(ModState *st, const char *src, size_t len, const char *entry,
                                int mode) {
    bool raise = mode == TIER0_RAISE;
    ExtTiers *T = st->tiers;
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) {
        PyErr_NoMemory();
        return NULL;
    }
    TextSink t = {NULL, 0, 0, 0};
    kiln_ctx_set_diag(ctx, ext_text_diag, &t);
    kiln_cpu_module *m;
    double t0 = now_ms(), t0us = ext_obs_us();
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&T->tcc_mu);
    m = kiln_cpu_quick_load(ctx, src, len, entry);
    pthread_mutex_unlock(&T->tcc_mu);
    Py_END_ALLOW_THREADS
    double ms = now_ms() - t0;
    kiln_ctx_free(ctx);
    if (m) ext_obs_stage(st, OBS_CC, t0us, ms, "tcc");
    pthread_mutex_lock(&T->mu);
    if (m) {
        T->n.loads++;
        if (kiln_cpu_quick_vector(m)) T->n.vector++;
        T->n.load_ms += ms;
    } else if (mode == TIER0_VECTOR) {
        T->n.vector_refusals++; /* the caller tries the scalar entry next */
    } else {
        T->n.refusals++;
        snprintf(T->n.last_refusal, sizeof T->n.last_refusal, "%s", t.n ? t.buf : "?");
    }
    pthread_mutex_unlock(&T->mu);
    if (!m && raise) ext_raise_text(st, &t, "kiln: tier 0 (libtcc) refused the kernel");
    PyMem_RawFree(t.buf);
    return m;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

ExtTierJob *ext_tier_start(ModState *st, kiln_ctx *ctx, const char *src, size_t len,
                           const char *target, const char *name, const char *entry,
                           kiln_cpu_module **slot) {
    ExtTiers *T = st->tiers;
    ExtTierJob *j = calloc(1, sizeof *j);
    if (j) {
        j->src = malloc(len ? len : 1);
        j->target = dup_or_null(target);
        j->name = strdup(name);
        j->entry = strdup(entry);
    }
    if (!j || !j->src || (target && !j->target) || !j->name || !j->entry) {
        if (j) {
            free(j->src);
            free(j->target);
            free(j->name);
            free(j->entry);
            free(j);
        }
        kiln_ctx_free(ctx);
        return NULL;
    }
    memcpy(j->src, src, len);
    j->len = len;
    j->ctx = ctx;
    j->slot = slot;
    j->refs = 1; /* the entry's */
    j->held = true;
    j->held_until = now_ms() + KILN_TIER_HOLD_MS;
    pthread_mutex_lock(&T->mu);
    j->next = T->all;
    if (T->all) T->all->prev = j;
    T->all = j;
    if (T->closing || enqueue(T, j) < 0) {
        job_unref(T, j);
        j = NULL;
    }
    pthread_mutex_unlock(&T->mu);
    return j;
}

/* Lets j's worker build it now (KILN_TIER_HOLD_MS). */
static void release(ExtTiers *T, ExtTierJob *j) {
    pthread_mutex_lock(&T->mu);
    if (j->held) {
        j->held = false;
        pthread_cond_broadcast(&T->cv);
    }
    pthread_mutex_unlock(&T->mu);
}

/* Whether j is queued or running; under mu. */
static bool busy(const ExtTierJob *j) { return j->state == JOB_QUEUED || j->state == JOB_RUNNING; }

/* Waits, without the GIL, until j's build has ended; polls Ctrl-C every
 * KILN_POLL_MS.  0, or -1 with KeyboardInterrupt set. */
static int wait_for(ExtTiers *T, ExtTierJob *j) {
    for (;;) {
        bool b;
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&T->mu);
        double until = now_ms() + KILN_POLL_MS;
        while (busy(j) && now_ms() < until) cv_wait(T, until - now_ms());
        b = busy(j);
        pthread_mutex_unlock(&T->mu);
        Py_END_ALLOW_THREADS
        if (!b) return 0;
        if (PyErr_CheckSignals() < 0) return -1;
    }
}

/* A launch's grid positions, and the time one tier-0 thread is expected to take for
 * them (the entry's last measure, or a guess before the first). */
static double positions(const int64_t grid[3], const int64_t block[3]) {
    return (double)grid[0] * (double)grid[1] * (double)grid[2] * (double)block[0] *
           (double)block[1] * (double)block[2];
}

static double expected_ns(const ExtTierJob *j, const int64_t grid[3], const int64_t block[3]) {
    double ns = j && j->ns_per_thread > 0 ? j->ns_per_thread
                : j && j->vector               ? KILN_TIER0_VECTOR_GUESS_NS
                                               : KILN_TIER0_GUESS_NS;
    return positions(grid, block) * ns;
}

void ext_tier_vector(ExtTierJob *j, bool vector) {
    if (j) j->vector = vector;
}

int ext_tier_threads(ModState *st, const ExtTierJob *j, const kiln_cpu_module *m,
                     const int64_t grid[3], const int64_t block[3]) {
    if (expected_ns(j, grid, block) < KILN_TIER0_POOL_MIN_US * 1e3) return 1;
    int n = kiln_cpu_quick_threads(m);
    /* after the entry's first launch, while its optimising build runs, the build keeps
     * one processor: it then ends sooner, and every launch after it runs the faster code */
    if (j && n > 1 && j->ns_per_thread > 0) {
        ExtTiers *T = st->tiers;
        pthread_mutex_lock(&T->mu);
        if (busy(j)) n--;
        pthread_mutex_unlock(&T->mu);
    }
    return n;
}

int ext_tier_poll(ModState *st, ExtTierJob *j, int nt, const int64_t grid[3],
                  const int64_t block[3]) {
    if (!j) return 0;
    ExtTiers *T = st->tiers;
    bool now = false;
    pthread_mutex_lock(&T->mu);
    if (j->state == JOB_ORPHANED && !T->closing) {
        T->n.restarts++;
        if (enqueue(T, j) < 0) {
            j->state = JOB_RUNNING; /* no thread: this launch builds it */
            j->refs++;
            now = true;
        }
    }
    pthread_mutex_unlock(&T->mu);
    if (now) {
        Py_BEGIN_ALLOW_THREADS
        run_job(T, j);
        Py_END_ALLOW_THREADS
    }
    /* A launch expected to run longer on tier 0 than KILN_TIER0_BUDGET_MS waits for
     * the optimised code, which then runs it sooner than tier 0 would have. */
    if (expected_ns(j, grid, block) / (nt > 1 ? nt : 1) > KILN_TIER0_BUDGET_MS * 1e6) {
        pthread_mutex_lock(&T->mu);
        bool b = busy(j);
        if (b) T->n.waits++;
        j->held = false; /* built now: this launch waits for it */
        pthread_cond_broadcast(&T->cv);
        pthread_mutex_unlock(&T->mu);
        if (b && wait_for(T, j) < 0) return -1;
    }
    char *msg = NULL;
    pthread_mutex_lock(&T->mu);
    if (j->state == JOB_FAILED && !j->reported) {
        j->reported = true;
        msg = strdup(j->error ? j->error : "?");
    }
    pthread_mutex_unlock(&T->mu);
    if (!msg) return 0;
    int rc = PyErr_WarnFormat(st->PerformanceWarning, 1,
                              "kiln: the optimised build of %s failed, so it goes on running "
                              "tier 0's code (correct, but unvectorised); "
                              "the build said:\n%s",
                              j->name, msg);
    free(msg);
    return rc;
}

double ext_tier_clock(void) { return now_ms(); }

void ext_tier_ran(ModState *st, ExtTierJob *j, int nt, const int64_t grid[3],
                  const int64_t block[3], double t0) {
    if (nt > 1) __atomic_fetch_add(&st->tiers->pooled, 1, __ATOMIC_RELAXED);
    if (!j) return;
    release(st->tiers, j);
    double threads = positions(grid, block);
    if (threads >= 1) j->ns_per_thread = (now_ms() - t0) * 1e6 * (nt > 1 ? nt : 1) / threads;
}

void ext_tier_detach(ModState *st, ExtTierJob *j) {
    if (!j) return;
    ExtTiers *T = st->tiers;
    pthread_mutex_lock(&T->mu);
    j->slot = NULL;
    j->held = false;
    pthread_cond_broadcast(&T->cv);
    if (j->state == JOB_QUEUED) { /* nobody needs it built now */
        ExtTierJob **p = &T->qhead;
        while (*p && *p != j) p = &(*p)->qnext;
        if (*p) {
            *p = j->qnext;
            T->qtail = NULL;
            for (ExtTierJob *q = T->qhead; q; q = q->qnext) T->qtail = q;
            j->state = JOB_CANCELLED;
            j->refs--; /* the queue's; the entry's is still held */
        }
    }
    job_unref(T, j); /* the entry's */
    pthread_mutex_unlock(&T->mu);
}

/* Jobs queued or running in this process.  Under mu. */
static int pending(ExtTiers *T) {
    int n = 0;
    for (ExtTierJob *j = T->all; j; j = j->next) n += j->state == JOB_QUEUED || j->state == JOB_RUNNING;
    return n;
}

/* Waits on cv until pred(T) is false or ms pass; under mu. */
static void wait_while(ExtTiers *T, int (*pred)(ExtTiers *), double ms) {
    double until = now_ms() + ms;
    while (pred(T)) {
        double left = until - now_ms();
        if (left <= 0) break;
        cv_wait(T, left);
    }
}

static int has_workers(ExtTiers *T) { return T->workers > 0; }

int ext_tier_shutdown(ModState *st) {
    ExtTiers *T = st->tiers;
    if (!T) return 0;
    int left;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&T->mu);
    T->closing = true;
    wait_while(T, pending, KILN_TIER_EXIT_MS); /* the builds finish and are stored */
    __atomic_store_n(&T->stopping, 1, __ATOMIC_RELAXED);
    while (T->qhead) {
        ExtTierJob *j = T->qhead;
        T->qhead = j->qnext;
        j->qnext = NULL;
        j->state = JOB_CANCELLED;
        T->n.cancelled++;
        job_unref(T, j);
    }
    T->qtail = NULL;
    wait_while(T, has_workers, KILN_TIER_STOP_MS);
    left = T->workers;
    pthread_mutex_unlock(&T->mu);
    Py_END_ALLOW_THREADS
    return left ? -1 : 0;
}

/* ---- kiln._kiln.tier_* ------------------------------------------------------------ */

/* tier_wait(timeout_s) -> True when no optimising build is queued or running */
static PyObject *f_tier_wait(PyObject *m, PyObject *arg) {
    ExtTiers *T = ext_state(m)->tiers;
    double timeout = PyFloat_AsDouble(arg);
    if (timeout == -1 && PyErr_Occurred()) return NULL;
    double until = now_ms() + timeout * 1e3;
    for (;;) {
        int n;
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&T->mu);
        double left = until - now_ms();
        wait_while(T, pending, left < KILN_POLL_MS ? left : KILN_POLL_MS);
        n = pending(T);
        pthread_mutex_unlock(&T->mu);
        Py_END_ALLOW_THREADS
        if (n == 0) Py_RETURN_TRUE;
        if (now_ms() >= until) Py_RETURN_FALSE;
        if (PyErr_CheckSignals() < 0) return NULL;
    }
}

static PyObject *f_tier_stats(PyObject *m, PyObject *unused) {
    ExtTiers *T = ext_state(m)->tiers;
    /* copied under the lock, built after it: building may run the garbage collector,
     * which may free an Entry, whose dealloc takes the lock */
    pthread_mutex_lock(&T->mu);
    TierStats c = T->n;
    long long pooled = __atomic_load_n(&T->pooled, __ATOMIC_RELAXED);
    int workers = T->workers, queued = 0, running = 0;
    for (ExtTierJob *j = T->all; j; j = j->next) {
        queued += j->state == JOB_QUEUED;
        running += j->state == JOB_RUNNING;
    }
    pthread_mutex_unlock(&T->mu);
    return Py_BuildValue(
        "{s:O,s:L,s:L,s:L,s:d,s:L,s:s,s:L,s:L,s:L,s:L,s:L,s:L,s:i,s:i,s:i}", "available",
        kiln_cpu_quick_available() ? Py_True : Py_False, "tier0_loads", c.loads,
        "tier0_vector", c.vector, "tier0_vector_refusals", c.vector_refusals, "tier0_ms",
        c.load_ms, "tier0_refusals", c.refusals, "last_refusal", c.last_refusal, "swaps",
        c.swaps, "failures", c.failures, "restarts", c.restarts, "cancelled", c.cancelled,
        "waits", c.waits, "pooled", pooled, "queued", queued, "running", running, "workers", workers);
}

/* tier0_try(source, entry): tier 0 on any C text (tests: what a refusal says, and
 * that libtcc is usable after one); CompileError when refused. */
static PyObject *f_tier0_try(PyObject *m, PyObject *args) {
    const char *src, *entry;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "s#s", &src, &len, &entry)) return NULL;
    kiln_cpu_module *mod = ext_tier0_load(ext_state(m), src, (size_t)len, entry, TIER0_RAISE);
    if (!mod) return NULL;
    kiln_cpu_unload(mod);
    Py_RETURN_NONE;
}

static PyObject *f_tier_shutdown(PyObject *m, PyObject *unused) {
    ext_tier_shutdown(ext_state(m));
    Py_RETURN_NONE;
}

PyMethodDef ext_tier_functions[] = {
    {"tier_wait", f_tier_wait, METH_O,
     "tier_wait(timeout_s) -> whether every optimising build has ended"},
    {"tier_stats", f_tier_stats, METH_NOARGS, "tier 0 and the optimising builds: counters"},
    {"tier0_try", f_tier0_try, METH_VARARGS,
     "tier0_try(source, entry): compile C with tier 0 and unload it (tests)"},
    {"tier_shutdown", f_tier_shutdown, METH_NOARGS,
     "finish (briefly) or cancel the optimising builds: interpreter exit"},
    {NULL, NULL, 0, NULL}};
