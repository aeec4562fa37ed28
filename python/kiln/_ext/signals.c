/* signals.c: Ctrl-C during a CPU kernel, and launches in a forked child.
 *
 * A CPU kernel runs with the GIL released in generated code, where Python's
 * signal handling never looks: Python's C handler only notes the signal for
 * the eval loop to act on later.  So kiln installs its own C handler for
 * SIGINT at module init, over Python's, that first calls the handler it
 * replaced (Python's: its flag is tripped, so KeyboardInterrupt follows as
 * usual) and then sets ext_sig.sigint, a word the generated code polls at
 * every `while` iteration and between blocks (rt_cpu.h).  The kernel records
 * KILN_ERR_STOPPED and returns; the launch, back with the GIL, clears the
 * word and runs Python's handlers (PyErr_CheckSignals), which raise.
 *
 * The handler is async-signal-safe: an atomic fetch-add, a call of the
 * previous handler, one relaxed atomic store.  Only launches on Python's main
 * thread pass the word: Python raises KeyboardInterrupt only there, so
 * kernels on other threads, like Python code on them, run on.
 *
 * signal.signal(SIGINT, f) later replaces kiln's handler with Python's again.
 * Main-thread launches look every KILN_SIGINT_RECHECK launches (the first
 * one included) and install it again, chaining to whatever is there, as long
 * as that is a handler function: SIG_IGN and SIG_DFL are the user's choice
 * and stay.  Handlers replaced meanwhile are kept, never freed, so a signal
 * that arrives during a reinstallation calls a complete record.
 *
 * fork: GCC's OpenMP runtime keeps its thread pool across parallel regions,
 * and a forked child inherits the pool's bookkeeping but not its threads, so
 * the child's first parallel region waits for them forever.  A pthread_atfork
 * handler marks a child of a process that started a parallel region; its
 * launches take the serial path (par_threshold KILN_PAR_NEVER, on which the
 * entry calls nothing of libgomp) and warn once.
 *
 * All of this is process-wide, as dispositions and fork are, so its state is
 * one global (ext_sig), the only one in the extension.
 */
#include "signals.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ExtSignals ext_sig;

/* Handlers kiln has replaced, at most this many different ones; beyond it
 * kiln stops reinstalling its own (docs/limits.md). */
enum { KILN_SIGINT_CHAIN_MAX = 16 };
static struct sigaction prev_handlers[KILN_SIGINT_CHAIN_MAX];
static int nprev;
static struct sigaction *prev; /* the one to chain to; published atomically */
static int handler_depth;      /* re-entry guard: a handler that chains back to kiln's */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_error;

static void on_sigint(int sig, siginfo_t *info, void *uc) {
    int saved = errno;
    if (__atomic_fetch_add(&handler_depth, 1, __ATOMIC_ACQ_REL) == 0) {
        const struct sigaction *p = __atomic_load_n(&prev, __ATOMIC_ACQUIRE);
        if (p && (p->sa_flags & SA_SIGINFO)) p->sa_sigaction(sig, info, uc);
        else if (p && p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) p->sa_handler(sig);
    }
    __atomic_fetch_sub(&handler_depth, 1, __ATOMIC_ACQ_REL);
    /* after Python's flag: a launch that finds the word clear and starts has not
     * missed a signal whose Python half is already done (see ext_launch_begin_slow) */
    __atomic_store_n(&ext_sig.sigint, 1, __ATOMIC_RELAXED);
    errno = saved;
}

static bool is_ours(const struct sigaction *sa) {
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_sigint;
}

/* Installs on_sigint over the current handler when that is a function (not
 * SIG_DFL, SIG_IGN or on_sigint itself).  With the GIL (one caller at a time). */
static void install(void) {
    struct sigaction cur;
    if (sigaction(SIGINT, NULL, &cur) != 0 || is_ours(&cur)) return;
    if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_DFL || cur.sa_handler == SIG_IGN))
        return;
    /* keep each different handler once; records are never rewritten once published */
    struct sigaction *slot = NULL;
    for (int i = 0; i < nprev && !slot; i++)
        if (prev_handlers[i].sa_flags == cur.sa_flags &&
            (cur.sa_flags & SA_SIGINFO ? prev_handlers[i].sa_sigaction == cur.sa_sigaction
                                       : prev_handlers[i].sa_handler == cur.sa_handler))
            slot = &prev_handlers[i];
    if (!slot) {
        if (nprev == KILN_SIGINT_CHAIN_MAX) return;
        prev_handlers[nprev] = cur;
        slot = &prev_handlers[nprev++];
    }
    __atomic_store_n(&prev, slot, __ATOMIC_RELEASE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigint;
    sa.sa_mask = cur.sa_mask;
    /* Python's flags (no SA_RESTART: PEP 475 relies on EINTR), with siginfo */
    sa.sa_flags = (cur.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    sigaction(SIGINT, &sa, NULL);
}

__thread int ext_omp_team;

/* How many threads an OpenMP team adds to the thread that starts it: OMP_NUM_THREADS's
 * first number, else the processors online, less one. */
static long team_size(void) {
    const char *env = getenv("OMP_NUM_THREADS");
    long n = env ? strtol(env, NULL, 10) : 0;
    if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 0 : n > KILN_OMP_PROBE_MAX ? KILN_OMP_PROBE_MAX - 1 : n - 1;
}

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
} TeamProbe;

static void *probe_wait(void *p) {
    TeamProbe *t = p;
    pthread_mutex_lock(&t->mu);
    while (!t->go) pthread_cond_wait(&t->cv, &t->mu);
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* Whether a team's threads can all exist at once now: made, then ended. */
static bool team_can_start(void) {
    long n = team_size();
    pthread_t th[KILN_OMP_PROBE_MAX];
    TeamProbe t = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    long made = 0;
    while (made < n && pthread_create(&th[made], NULL, probe_wait, &t) == 0) made++;
    pthread_mutex_lock(&t.mu);
    t.go = 1;
    pthread_cond_broadcast(&t.cv);
    pthread_mutex_unlock(&t.mu);
    for (long i = 0; i < made; i++) pthread_join(th[i], NULL);
    return made == n;
}

void ext_omp_load(void) {
    static bool loaded;
    if (loaded) return;
    loaded = true;
    if (dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD)) return; /* someone's: theirs */
    const bool ours = !getenv("GOMP_SPINCOUNT") && !getenv("OMP_WAIT_POLICY");
    if (ours) setenv("GOMP_SPINCOUNT", KILN_OMP_SPINCOUNT, 0);
    dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
    if (ours) unsetenv("GOMP_SPINCOUNT");
}

static void after_fork_child(void) {
    /* the forking thread is the child's main thread (Python says so too) */
    ext_sig.main = pthread_self();
    if (__atomic_load_n(&ext_sig.omp_started, __ATOMIC_RELAXED)) ext_sig.omp_dead = 1;
    ext_sig.warned = 0;
    ext_sig.team_warned = 0;
    ext_sig.launches = 0;
    __atomic_store_n(&ext_sig.sigint, 0, __ATOMIC_RELAXED); /* the parent's, not ours */
}

static void init_once(void) {
    if (pthread_atfork(NULL, NULL, after_fork_child) != 0) init_error = 1;
}

int ext_signals_init(void) {
    pthread_once(&once, init_once);
    if (init_error) {
        PyErr_SetString(PyExc_RuntimeError, "kiln: cannot register its fork handler");
        return -1;
    }
    /* Python's main thread, which may not be the importing one.  Another thread exists
     * only through threading (or _thread, which nobody starts by hand), so with threading
     * not yet imported the importing thread is the main one; importing threading here
     * would cost `import kiln` 3 ms. */
    ext_sig.main = pthread_self();
    PyObject *name = PyUnicode_FromString("threading");
    PyObject *threading = name ? PyImport_GetModule(name) : NULL;
    Py_XDECREF(name);
    PyObject *mt = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
    PyObject *ident = mt ? PyObject_GetAttrString(mt, "ident") : NULL;
    if (ident && PyLong_Check(ident)) {
        unsigned long id = PyLong_AsUnsignedLong(ident);
        if (!PyErr_Occurred()) ext_sig.main = (pthread_t)id;
    }
    Py_XDECREF(ident);
    Py_XDECREF(mt);
    Py_XDECREF(threading);
    if (PyErr_Occurred()) return -1;
    install();
    return 0;
}

int ext_launch_begin_slow(kiln_cpu_launch *L, int64_t threads, int64_t par_threshold,
                          PyObject *warning) {
    if (L->stop == &ext_sig.sigint) {
        if (ext_sig.launches % KILN_SIGINT_RECHECK == 1) install();
        /* A SIGINT since the last launch: Python's half may have run already (the
         * eval loop), or not; either way the word is stale now.  Clear it, then
         * let Python act: a signal arriving after the clear sets it again and
         * stops the kernel at its first poll. */
        if (__atomic_exchange_n(&ext_sig.sigint, 0, __ATOMIC_RELAXED) && PyErr_CheckSignals() < 0)
            return -1;
    }
    if (threads < par_threshold / KILN_PAR_WEIGHT_MAX) return 0; /* never parallel */
    if (!ext_sig.omp_dead && ext_omp_team == 0) ext_omp_team = team_can_start() ? 1 : -1;
    if (!ext_sig.omp_dead && ext_omp_team < 0) {
        L->par_threshold = KILN_PAR_NEVER;
        if (ext_sig.team_warned || threads < par_threshold) return 0;
        ext_sig.team_warned = 1;
        return PyErr_WarnEx(warning,
                            "kiln: this thread cannot start OpenMP's threads (the process is "
                            "out of threads or address space: ulimit -u, ulimit -v); its "
                            "kernels run on one thread (set OMP_NUM_THREADS lower, or raise "
                            "the limit)",
                            1);
    }
    if (!ext_sig.omp_dead) {
        __atomic_store_n(&ext_sig.omp_started, 1, __ATOMIC_RELAXED);
        return 0;
    }
    L->par_threshold = KILN_PAR_NEVER;
    if (ext_sig.warned || threads < par_threshold) return 0; /* warned, or was small anyway */
    ext_sig.warned = 1;
    return PyErr_WarnEx(warning,
                        "kiln: this process was forked from one that had run kernels on OpenMP "
                        "threads; GCC's OpenMP runtime cannot start its threads again after "
                        "fork, so kernels run on one thread in this process (start workers "
                        "with multiprocessing's 'spawn' or 'forkserver' method, or launch "
                        "large kernels only after forking)",
                        1);
}

int ext_launch_stopped(const kiln_cpu_launch *L, const kiln_kernel_error *err) {
    if (L->stop == &ext_sig.sigint) __atomic_store_n(&ext_sig.sigint, 0, __ATOMIC_RELAXED);
    if (PyErr_CheckSignals() < 0) return -1;
    if (err->code != KILN_ERR_STOPPED) return 0; /* it finished before the signal */
    /* the SIGINT handler raised nothing, but the kernel's work is unfinished */
    PyErr_SetString(PyExc_KeyboardInterrupt,
                    "the kernel was stopped by SIGINT before it finished (the SIGINT handler "
                    "raised nothing)");
    return -1;
}
