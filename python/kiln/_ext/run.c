/* run.c: running a CPU entry once its arguments are packed (see run.h). */
#include "run.h"

#include "errors.h"
#include "signals.h"

int ext_cpu_run(ModState *st, EntryObject *e, const int64_t grid[3], const int64_t block[3],
                int64_t shmem, int64_t par, const int64_t *slots, int64_t ts[2]) {
    /* the code, read once: tier 0's until the optimising build stores its own (tier.h) */
    kiln_cpu_module *code = __atomic_load_n(&e->cpu, __ATOMIC_ACQUIRE);
    double t0 = 0;
    int pool = 0; /* tier 0's threads (tcc.c) */
    if (__builtin_expect(code == e->cpu0, 0)) {
        /* a large launch may wait for the optimised build; a fork, a failure */
        int nt = ext_tier_threads(st, e->job, e->cpu0, grid, block);
        if (ext_tier_poll(st, e->job, nt, grid, block) < 0) return -1;
        code = __atomic_load_n(&e->cpu, __ATOMIC_ACQUIRE);
        if (code == e->cpu0) {
            par = KILN_PAR_NEVER; /* tcc's code has no OpenMP to start */
            pool = nt;
            t0 = ext_tier_clock();
        }
    }
    kiln_kernel_error err;
    memset(&err, 0, sizeof err);
    kiln_cpu_launch L = {0}; /* fields added to the struct later stay off */
    memcpy(L.grid, grid, sizeof L.grid);
    memcpy(L.block, block, sizeof L.block);
    L.par_threshold = par;
    L.dyn_shared = shmem > 0 ? shmem : 0;
    L.err = &err;
    if (ext_cpu_launch_begin(&L, par, st->PerformanceWarning) < 0) return -1;
    if (pool > 1) { /* tier 0's own threads take the parallel path: no OpenMP there */
        L.par_threshold = 0;
        L.pool_nt = pool;
    }
    if (ts) ts[0] = ext_obs_ns();
    Py_BEGIN_ALLOW_THREADS
    kiln_cpu_launch_kernel(code, &L, slots);
    Py_END_ALLOW_THREADS
    if (ts) ts[1] = ext_obs_ns();
    if (t0 > 0) ext_tier_ran(st, e->job, pool, grid, block, t0);
    if (ext_cpu_launch_end(&L, &err) < 0) return -1; /* Ctrl-C stopped it */
    if (err.code != 0) {
        ext_raise_kernel_error(&err, e->files);
        return -1;
    }
    return 0;
}
