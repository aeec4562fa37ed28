/* tcc.c: tier 0 of the CPU target: the generated C compiled in this process
 * by libtcc, so the first call of a new kernel runs within milliseconds
 * while the optimising build (cpu.c) goes on elsewhere.
 *
 * The source is the same text cpu.c gives the system compiler; rt_cpu.h's
 * __TINYC__ section makes it tcc's C: no headers (tcc takes about 4 ms to
 * read glibc's <math.h>, four times the rest of a typical kernel), no OpenMP
 * (the pragmas vanish; kiln_cpu_quick_run below calls the entry once per share
 * of a launch, on threads it starts, and the parallel region reads its share
 * from the launch record as OpenMP's thread number and count), GCC's
 * __atomic builtins as calls of kiln_tcc_atomic and kiln_tcc_cas below.  It
 * compiles with -Werror, so anything tcc only warns about (a call of an
 * undeclared function above all, which tcc would let return int) refuses the
 * kernel instead: the caller then builds it with the system compiler, as
 * without tier 0.  tcc relocates the code into a mapping of kiln's own, made
 * read-only and executable, and the TCCState is deleted at once; unloading
 * (cpu.c) unmaps it.
 *
 * libtcc (Debian's 0.9.27+git20200814, checked in its source) keeps the
 * compiler's state in globals and guards them with a process-wide semaphore:
 * tcc_compile holds it throughout, and an error reported outside a compile
 * (an undefined symbol at relocation) takes it around the report.  The
 * semaphore is created lazily, unguarded, by the first thread to want it, and
 * a fork while another thread holds it leaves it held in the child forever;
 * so the caller must not let calls overlap or be cut by fork: the Python
 * extension holds a lock of its module state around them and across fork.
 * Two faults remain fatal inside libtcc outside a compile, as in tcc's own
 * driver: malloc failing, and mprotect refusing executable pages; the second
 * is probed first, here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compiler.h"
#include "target/cpu_module.h"
#include "target/vecops.h"

#ifdef KILN_HAVE_TCC
#include <libtcc.h>

/* libc's stdout, stderr and environ as the build's copy of libtcc.a names them
 * (meson.build: Debian's archive reaches them in a way a shared object cannot
 * link); libtcc prints to them only without an error function, so the values
 * of the first load serve. */
__attribute__((visibility("hidden"))) FILE *kiln_tcc_stdout;
__attribute__((visibility("hidden"))) FILE *kiln_tcc_stderr;
__attribute__((visibility("hidden"))) char **kiln_tcc_environ;
extern char **environ;

/* How much of tcc's messages a refusal keeps. */
enum { KILN_TCC_MESSAGES_MAX = 4096 };

/* The runtime directory (libtcc1.a) when KILN_TCC_DIR does not name one. */
#ifndef KILN_TCC_DIR_DEFAULT
#define KILN_TCC_DIR_DEFAULT "/usr/lib/x86_64-linux-gnu/tcc"
#endif

typedef struct {
    Buf text; /* tcc's messages */
} Errors;

static void on_error(void *ud, const char *msg) {
    Errors *e = ud;
    if (e->text.len < KILN_TCC_MESSAGES_MAX) {
        if (e->text.len) buf_putc(&e->text, '\n');
        buf_puts(&e->text, msg);
    }
}

/* The generated code's runtime under tcc (rt_cpu.h's __TINYC__ section). */
static unsigned long long tcc_atomic(void *p, int size, int op, unsigned long long v) {
#define AT(T)                                                                     \
    {                                                                             \
        T *q = p, x = (T)v;                                                       \
        switch (op) {                                                             \
        case 0: return __atomic_load_n(q, __ATOMIC_SEQ_CST);                      \
        case 1: __atomic_store_n(q, x, __ATOMIC_SEQ_CST); return x;               \
        case 2: return __atomic_exchange_n(q, x, __ATOMIC_SEQ_CST);               \
        case 3: return __atomic_fetch_add(q, x, __ATOMIC_SEQ_CST);                \
        case 4: return __atomic_fetch_sub(q, x, __ATOMIC_SEQ_CST);                \
        case 5: return __atomic_fetch_and(q, x, __ATOMIC_SEQ_CST);                \
        case 6: return __atomic_fetch_or(q, x, __ATOMIC_SEQ_CST);                 \
        default: return __atomic_fetch_xor(q, x, __ATOMIC_SEQ_CST);               \
        }                                                                         \
    }
    switch (size) {
    case 1: AT(uint8_t)
    case 2: AT(uint16_t)
    case 4: AT(uint32_t)
    default: AT(uint64_t)
    }
#undef AT
}

static int tcc_cas(void *p, int size, void *e, unsigned long long v) {
    switch (size) {
    case 1: return __atomic_compare_exchange_n((uint8_t *)p, (uint8_t *)e, (uint8_t)v, 0,
                                               __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    case 2: return __atomic_compare_exchange_n((uint16_t *)p, (uint16_t *)e, (uint16_t)v, 0,
                                               __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    case 4: return __atomic_compare_exchange_n((uint32_t *)p, (uint32_t *)e, (uint32_t)v, 0,
                                               __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    default: return __atomic_compare_exchange_n((uint64_t *)p, (uint64_t *)e, (uint64_t)v, 0,
                                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
}

static void tcc_fence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static const char *runtime_dir(void) {
    const char *env = getenv("KILN_TCC_DIR");
    return env && *env ? env : KILN_TCC_DIR_DEFAULT;
}

static void add_symbol(TCCState *s, const char *name, void (*fn)(void)) {
    void *p;
    memcpy(&p, &fn, sizeof p); /* POSIX: function and object pointers convert */
    tcc_add_symbol(s, name, p);
}

kiln_cpu_module *kiln_cpu_quick_load(kiln_ctx *ctx, const char *src, size_t len,
                                     const char *entry) {
    kiln_tcc_stdout = stdout;
    kiln_tcc_stderr = stderr;
    kiln_tcc_environ = environ;
    const char *dir = runtime_dir();
    char lib[4200];
    snprintf(lib, sizeof lib, "%s/libtcc1.a", dir);
    if (access(lib, R_OK) != 0) {
        diag_plain(ctx, KILN_ERROR, "install the package 'tcc' (its runtime directory), or set "
                   "KILN_TCC_DIR to the directory holding libtcc1.a",
                   "tier 0 is off: tcc's runtime %s cannot be read: %s", lib, strerror(errno));
        return NULL;
    }
    char *text = malloc(len + 1);
    kiln_cpu_module *m = calloc(1, sizeof *m);
    TCCState *s = tcc_new();
    Errors errs;
    buf_init(&errs.text);
    void *mem = MAP_FAILED;
    size_t size = 0;
    const char *what = "cannot compile it";
    if (!text || !m || !s) {
        what = "out of memory";
        goto fail;
    }
    memcpy(text, src, len);
    text[len] = 0;
    tcc_set_error_func(s, &errs, on_error);
    tcc_set_lib_path(s, dir);
    /* no headers (rt_cpu.h declares what it uses); a warning refuses the kernel */
    tcc_set_options(s, "-nostdinc -Werror");
    tcc_set_output_type(s, TCC_OUTPUT_MEMORY);
    if (tcc_compile_string(s, text) < 0) goto fail;
    /* a warning of the link below stays one: an error out of a compile ends the process */
    tcc_set_options(s, "-Wno-error");
    add_symbol(s, "kiln_tcc_atomic", (void (*)(void))tcc_atomic);
    add_symbol(s, "kiln_tcc_cas", (void (*)(void))tcc_cas);
    add_symbol(s, "kiln_tcc_fence", tcc_fence);
    for (int i = 0; i < kv_nsymbols; i++) add_symbol(s, kv_symbols[i].name, kv_symbols[i].fn);
    what = "cannot link it";
    int need = tcc_relocate(s, NULL);
    if (need > 0) {
        size = (size_t)need;
        mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        /* libtcc makes the pages writable and executable, and exits when it cannot */
        if (mem != MAP_FAILED &&
            mprotect(mem, size, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
            buf_printf(&errs.text, "%sthe system refuses executable memory: %s",
                       errs.text.len ? "\n" : "", strerror(errno));
            munmap(mem, size);
            mem = MAP_FAILED;
        } else if (mem == MAP_FAILED) {
            buf_printf(&errs.text, "%scannot map %zu bytes: %s", errs.text.len ? "\n" : "",
                       size, strerror(errno));
        } else if (tcc_relocate(s, mem) < 0) {
            munmap(mem, size);
            mem = MAP_FAILED;
        }
    }
    if (mem == MAP_FAILED) goto fail;
    void *sym = tcc_get_symbol(s, entry);
    if (!sym) {
        buf_printf(&errs.text, "%sno symbol '%s'", errs.text.len ? "\n" : "", entry);
        goto fail;
    }
    /* the code is in place: no more writes (kernels have no writable statics) */
    mprotect(mem, size, PROT_READ | PROT_EXEC);
    memcpy(&m->entry, &sym, sizeof sym);
    m->pool = tcc_get_symbol(s, "kiln_pool_ok_") != NULL;
    m->vector = tcc_get_symbol(s, "kiln_vector_entry_") != NULL;
    m->fd = -1;
    m->code = mem;
    m->code_len = size;
    tcc_delete(s);
    free(text);
    buf_free(&errs.text);
    return m;

fail:
    diag_plain(ctx, KILN_ERROR, "the first call builds it with the C compiler instead",
               "tier 0 (libtcc) %s:\n%s", what, errs.text.len ? errs.text.p : "(no message)");
    if (mem != MAP_FAILED) munmap(mem, size);
    if (s) tcc_delete(s);
    free(text);
    free(m);
    buf_free(&errs.text);
    return NULL;
}

int kiln_cpu_quick_available(void) { return 1; }

const char *kiln_cpu_quick_dir(void) { return runtime_dir(); }

int kiln_cpu_quick_vector(const kiln_cpu_module *m) { return m && m->code && m->vector; }

int kiln_cpu_quick_threads(const kiln_cpu_module *m) {
    if (!m || !m->code || !m->pool) return 1;
    int n = 1;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
    const char *omp = getenv("OMP_NUM_THREADS");
    if (omp && *omp >= '1' && *omp <= '9') {
        long v = strtol(omp, NULL, 10);
        if (v >= 1 && v < n) n = (int)v;
    }
    return n < 1 ? 1 : n > KILN_TIER0_MAX_THREADS ? KILN_TIER0_MAX_THREADS : n;
}

#else /* built without libtcc */

int kiln_cpu_quick_vector(const kiln_cpu_module *m) {
    (void)m;
    return 0;
}

int kiln_cpu_quick_threads(const kiln_cpu_module *m) {
    (void)m;
    return 1;
}

kiln_cpu_module *kiln_cpu_quick_load(kiln_ctx *ctx, const char *src, size_t len,
                                     const char *entry) {
    (void)src;
    (void)len;
    (void)entry;
    diag_plain(ctx, KILN_ERROR, "install libtcc-dev and tcc and build kiln again",
               "tier 0 is off: kiln was built without libtcc");
    return NULL;
}

int kiln_cpu_quick_available(void) { return 0; }

const char *kiln_cpu_quick_dir(void) { return NULL; }

#endif

/* ---- tier 0's threads ------------------------------------------------------------
 * tcc has no OpenMP, so a large launch runs on threads started for it.  The launch
 * is cut into KILN_TIER0_SHARES_PER_THREAD shares a thread; each share is one call
 * of the entry with its own copy of the launch record (pool_me of pool_nt,
 * rt_cpu.h), and the calling thread and the started ones claim shares in turn
 * until none is left.  So a thread that starts late (its processor busy, or its
 * shares' first touches of new memory slower) costs only its last share: the
 * others take what it has not, and the launch returns once every claimed share
 * has run, whether or not every started thread has even begun.  The record the
 * threads share is counted and freed by its last user; a thread that starts after
 * the launch returned finds no share, so it never calls the entry, whose module
 * the launch holds only while it runs.  A thread that cannot start changes
 * nothing but the pace.  The threads block every signal: a SIGINT reaches the
 * launching thread, whose handler sets the stop word every share polls. */

typedef struct {
    kiln_cpu_module *m;
    kiln_cpu_launch L;
    const int64_t *params;
    int64_t nshares;
    int64_t next; /* the next share to claim (atomic) */
    int64_t done; /* shares run (atomic; under mu when it reaches nshares) */
    int refs;     /* the launching thread and each started one (atomic) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} Shares;

static void run_shares(Shares *r) {
    for (;;) {
        const int64_t k = __atomic_fetch_add(&r->next, 1, __ATOMIC_ACQ_REL);
        if (k >= r->nshares) return;
        kiln_cpu_launch L = r->L;
        L.pool_me = k;
        L.pool_nt = r->nshares;
        r->m->entry(&L, r->params);
        if (__atomic_add_fetch(&r->done, 1, __ATOMIC_ACQ_REL) == r->nshares) {
            pthread_mutex_lock(&r->mu);
            pthread_cond_broadcast(&r->cv);
            pthread_mutex_unlock(&r->mu);
        }
    }
}

static void shares_release(Shares *r) {
    if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

static void *share_main(void *arg) {
    run_shares(arg);
    shares_release(arg);
    return NULL;
}

void kiln_cpu_quick_run(kiln_cpu_module *m, const kiln_cpu_launch *launch,
                        const int64_t *params) {
    int64_t nt = m->pool ? launch->pool_nt : 1;
    if (nt > KILN_TIER0_MAX_THREADS) nt = KILN_TIER0_MAX_THREADS;
    Shares *r = nt > 1 ? calloc(1, sizeof *r) : NULL;
    if (!r) { /* alone */
        kiln_cpu_launch L = *launch;
        L.pool_me = 0;
        L.pool_nt = 1;
        m->entry(&L, params);
        return;
    }
    r->m = m;
    r->L = *launch;
    r->params = params;
    r->nshares = nt * KILN_TIER0_SHARES_PER_THREAD;
    r->refs = 1;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    pthread_attr_t at;
    const bool attr = pthread_attr_init(&at) == 0;
    if (attr) pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (int64_t k = 1; k < nt && attr; k++) {
        __atomic_add_fetch(&r->refs, 1, __ATOMIC_ACQ_REL);
        pthread_t th;
        if (pthread_create(&th, &at, share_main, r) != 0) {
            __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL);
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (attr) pthread_attr_destroy(&at);
    run_shares(r);
    /* every share is claimed: wait for those still running elsewhere */
    pthread_mutex_lock(&r->mu);
    while (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) < r->nshares)
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    shares_release(r);
}
