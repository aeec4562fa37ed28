/* signals.h: Ctrl-C and fork around CPU launches (signals.c).
 *
 * A CPU launch calls ext_cpu_launch_begin before it releases the GIL and
 * ext_cpu_launch_end after it takes it back.  The hot path is inline: a
 * thread comparison, two loads and a counter; the rest is out of line. */
#ifndef KILN_EXT_SIGNALS_H
#define KILN_EXT_SIGNALS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>

#include "kiln.h"
#include "state.h"

/* How often a launch on the main thread checks that kiln's SIGINT handler is
 * still installed (signal.signal(SIGINT, f) replaces it): every this many
 * launches, a sigaction call (about 0.2 us) paid once per 256 launches. */
enum { KILN_SIGINT_RECHECK = 256 };

/* The most threads the OpenMP team probe (ext_omp_team) makes. */
enum { KILN_OMP_PROBE_MAX = 256 };

/* How long an idle OpenMP thread spins for the next parallel region before it
 * sleeps, in libgomp's spin iterations (GOMP_SPINCOUNT), unless the user set
 * GOMP_SPINCOUNT or OMP_WAIT_POLICY.  libgomp's own default, 300000, is about 3.5 ms
 * here: after every launch each team thread burns that long, and in a process's first
 * tens of milliseconds (about 25 ms here), while NumPy's OpenBLAS threads spin on
 * the other processors, the team thread waits for a time slice that the launching
 * thread gives up only when its own spin at the region's end runs out (a warm first
 * call of 8.5 ms).  10000 is about 0.5 ms here: in that window a launch waits at most
 * that long (30000, about 1.5 ms, made the second launch of a process take 1.5 ms
 * where 10000 takes 0.5 and a process without the OpenBLAS threads 0.02); after it, a
 * launch within 0.5 ms of the last finds the team awake (5 us), a later one wakes it
 * (about 30 us; with 30000 the same from 1.5 ms on). */
#define KILN_OMP_SPINCOUNT "10000"

/* Loads GCC's OpenMP runtime, once, if the process has not: with GOMP_SPINCOUNT
 * set to KILN_OMP_SPINCOUNT while libgomp reads its environment (and removed after,
 * so no child process sees it), unless the user set GOMP_SPINCOUNT or
 * OMP_WAIT_POLICY.  A runtime already loaded (by another library) keeps its
 * settings.  With the GIL, from the first Dispatcher's init (dispatcher.c). */
void ext_omp_load(void);

/* ExtSignals and ext_sig, the process-wide state signals.c owns: state.h (errors.c
 * reads which thread is the main one). */

/* Whether this thread's OpenMP team can start (0: not tried yet, 1: yes, -1: no).
 * GCC's OpenMP runtime starts a team for each thread that enters a parallel region
 * and ends the process (exit(1), one line on stderr) when it cannot create one of
 * its threads (ulimit -u, a small RLIMIT_AS); the first large launch of a thread
 * creates that many threads itself first, and if it cannot, this thread's kernels
 * run on one thread, with one PerformanceWarning. */
extern __thread int ext_omp_team;

/* Once per process, at module init: notes the main thread, installs the
 * SIGINT handler (when SIGINT has a handler function: Python's), registers
 * the fork handler.  0, or -1 with an exception set. */
int ext_signals_init(void);

/* The out-of-line parts of the two calls below. */
int ext_launch_begin_slow(kiln_cpu_launch *L, int64_t threads, int64_t par_threshold,
                          PyObject *warning);
int ext_launch_stopped(const kiln_cpu_launch *L, const kiln_kernel_error *err);

/* Before a CPU launch, with the GIL: sets L->stop (the SIGINT word on the main
 * thread; none elsewhere, as Python delivers KeyboardInterrupt only there) and
 * L->par_threshold (KILN_PAR_NEVER in a child forked after OpenMP started,
 * with one `warning` (kiln.PerformanceWarning) saying why).  Runs Python's
 * handler for a SIGINT that arrived since the last launch.  0, or -1 with an
 * exception set (KeyboardInterrupt, or the warning made an error). */
static inline int ext_cpu_launch_begin(kiln_cpu_launch *L, int64_t par_threshold,
                                       PyObject *warning) {
    const int64_t threads =
        L->grid[0] * L->grid[1] * L->grid[2] * L->block[0] * L->block[1] * L->block[2];
    L->stop = NULL;
    L->par_threshold = par_threshold;
    if (pthread_equal(pthread_self(), ext_sig.main)) {
        L->stop = &ext_sig.sigint;
        if (__builtin_expect(__atomic_load_n(&ext_sig.sigint, __ATOMIC_RELAXED) != 0 ||
                                 ++ext_sig.launches % KILN_SIGINT_RECHECK == 1,
                             0))
            return ext_launch_begin_slow(L, threads, par_threshold, warning);
    }
    if (threads >= par_threshold / KILN_PAR_WEIGHT_MAX) {
        if (ext_sig.omp_dead || ext_omp_team <= 0)
            return ext_launch_begin_slow(L, threads, par_threshold, warning);
        if (!__atomic_load_n(&ext_sig.omp_started, __ATOMIC_RELAXED))
            __atomic_store_n(&ext_sig.omp_started, 1, __ATOMIC_RELAXED);
    }
    return 0;
}

/* After the launch, with the GIL: when SIGINT stopped the kernel (or arrived
 * while it ran), runs Python's handler, which raises KeyboardInterrupt; a
 * stopped kernel whose handler raised nothing raises KeyboardInterrupt
 * itself, since its work is unfinished.  0, or -1 with an exception set. */
static inline int ext_cpu_launch_end(const kiln_cpu_launch *L, const kiln_kernel_error *err) {
    if (__builtin_expect(err->code == KILN_ERR_STOPPED ||
                             (L->stop && __atomic_load_n(L->stop, __ATOMIC_RELAXED) != 0),
                         0))
        return ext_launch_stopped(L, err);
    return 0;
}

#endif
