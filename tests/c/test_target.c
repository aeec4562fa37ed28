/* test_target.c: the CPU target's run paths that need no compiler: tier 0's shares. */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "target/cpu_module.h"
#include "test.h"

enum { MAX_SHARES = KILN_TIER0_MAX_THREADS * KILN_TIER0_SHARES_PER_THREAD };

static int64_t hits[MAX_SHARES], seen_nt, calls;
static pthread_t ran_on[MAX_SHARES];

static void sleep_ms(int ms) {
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* an entry that records which shares ran where; share 0 (the first claimed) is slow */
static void entry(const kiln_cpu_launch *L, const int64_t *params) {
    (void)params;
    const int64_t k = L->pool_me;
    __atomic_store_n(&seen_nt, L->pool_nt, __ATOMIC_RELAXED);
    __atomic_fetch_add(&calls, 1, __ATOMIC_ACQ_REL);
    if (k == 0 && L->pool_nt > 1) sleep_ms(50);
    if (k >= 0 && k < MAX_SHARES) {
        ran_on[k] = pthread_self();
        __atomic_fetch_add(&hits[k], 1, __ATOMIC_RELEASE);
    }
}

static int64_t run(int pool, int64_t nt) {
    memset(hits, 0, sizeof hits);
    seen_nt = calls = 0;
    kiln_cpu_module m = {.fd = -1, .entry = entry, .pool = pool};
    kiln_cpu_launch L = {0};
    L.pool_nt = nt;
    kiln_cpu_quick_run(&m, &L, NULL);
    return __atomic_load_n(&seen_nt, __ATOMIC_ACQUIRE);
}

TEST(tier0_shares_each_run_once_before_the_launch_returns) {
    /* alone: one call, share 0 of 1 */
    CHECK(run(0, 4) == 1 && hits[0] == 1 && calls == 1);
    CHECK(run(1, 1) == 1 && hits[0] == 1 && calls == 1);
    for (int rep = 0; rep < 6; rep++) {
        const int64_t nt = 2 + rep % 3, n = nt * KILN_TIER0_SHARES_PER_THREAD;
        CHECK(run(1, nt) == n);
        /* every share exactly once, all done when the launch returns */
        int64_t once = 0, others = 0;
        for (int64_t k = 0; k < MAX_SHARES; k++) once += k < n ? hits[k] == 1 : hits[k] == 0;
        CHECK(once == MAX_SHARES && calls == n);
        /* the slow share held one thread; the others took shares meanwhile */
        for (int64_t k = 1; k < n; k++) others += !pthread_equal(ran_on[k], ran_on[0]);
        CHECK(others > 0);
    }
    /* more threads asked for than kiln starts: capped, the shares still all run */
    CHECK(run(1, 1000) == MAX_SHARES && calls == MAX_SHARES);
}
