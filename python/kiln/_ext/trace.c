/* trace.c: where what kiln shows of itself goes: the trace's events as
 * Chrome trace-event JSON (docs/observability.md has the schema) in one
 * growable buffer under a mutex, KILN_LOG's lines, and NVTX ranges through
 * libnvToolsExt, loaded with dlopen when asked.
 *
 * The buffer keeps at most TRACE_MAX_EVENTS events; later ones are counted as
 * dropped, so a long run traced by mistake grows to about 300 MiB and stops.
 * Each process and thread is named (metadata events) before its first event
 * of a trace.  fork: the child re-makes the mutex and starts with an empty
 * buffer (the parent's events are the parent's) and its own thread ids.
 */
#include "trace.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Thread_local long my_tid;
static ExtTrace *fork_trace; /* for the fork handlers */

void ext_json_esc(char *dst, size_t cap, const char *s) {
    size_t n = 0;
    for (; s && *s && n + 7 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            dst[n++] = '\\';
            dst[n++] = (char)ch;
        } else if (ch < 0x20) {
            n += (size_t)snprintf(dst + n, cap - n, "\\u%04x", ch);
        } else {
            dst[n++] = (char)ch;
        }
    }
    dst[n] = 0;
}

long ext_trace_tid(void) {
    if (!my_tid) my_tid = (long)syscall(SYS_gettid);
    return my_tid;
}

void ext_log_line(const char *fmt, ...) {
    char line[TRACE_LINE];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}

static bool grow(ExtTrace *t, size_t more) {
    if (t->n + more + 1 <= t->cap) return true;
    size_t ncap = t->cap ? t->cap * 2 : 1 << 16;
    while (ncap < t->n + more + 1) ncap *= 2;
    char *nb = PyMem_RawRealloc(t->buf, ncap);
    if (!nb) return false;
    t->buf = nb;
    t->cap = ncap;
    return true;
}

/* Appends one event's JSON; with mu held. */
static void put_locked(ExtTrace *t, const char *ev) {
    size_t len = strlen(ev);
    if (t->nevents >= TRACE_MAX_EVENTS || !grow(t, len + 2)) {
        t->dropped++;
        return;
    }
    if (t->n) t->buf[t->n++] = ',';
    memcpy(t->buf + t->n, ev, len);
    t->n += len;
    t->buf[t->n++] = '\n';
    t->nevents++;
}

/* The metadata that names this process and thread, once per trace; with mu. */
static void name_thread_locked(ExtTrace *t, long pid, long tid) {
    char ev[TRACE_LINE];
    if (!t->pid_named) {
        t->pid_named = true;
        snprintf(ev, sizeof ev,
                 "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"tid\":0,"
                 "\"args\":{\"name\":\"kiln host (pid %ld)\"}}", pid, pid);
        put_locked(t, ev);
    }
    for (int i = 0; i < t->ntids; i++)
        if (t->tids[i] == tid) return;
    if (t->ntids == TRACE_MAX_THREADS) return;
    t->tids[t->ntids++] = tid;
    char name[64] = "", e[160];
    if (pthread_getname_np(pthread_self(), name, sizeof name) != 0 || !name[0])
        snprintf(name, sizeof name, "thread");
    ext_json_esc(e, sizeof e, name);
    snprintf(ev, sizeof ev,
             "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%ld,"
             "\"args\":{\"name\":\"%s%s (tid %ld)\"}}",
             pid, tid, tid == pid ? "main: " : "", e, tid);
    put_locked(t, ev);
}

void ext_trace_host(ExtTrace *t, const char *cat, const char *name, double ts, double dur_us,
                    const char *args) {
    char ev[TRACE_LINE], en[256];
    ext_json_esc(en, sizeof en, name);
    long pid = (long)getpid(), tid = ext_trace_tid();
    snprintf(ev, sizeof ev,
             "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%ld,"
             "\"tid\":%ld,\"args\":{%s}}",
             cat, en, ts, dur_us < 0 ? 0 : dur_us, pid, tid, args);
    pthread_mutex_lock(&t->mu);
    name_thread_locked(t, pid, tid);
    put_locked(t, ev);
    pthread_mutex_unlock(&t->mu);
}

void ext_trace_gpu(ExtTrace *t, int device, const char *name, const char *ev) {
    pthread_mutex_lock(&t->mu);
    if (device >= 0 && device < EXT_MAX_DEVICES && !t->gpu_named[device]) {
        t->gpu_named[device] = true;
        char m[TRACE_LINE], de[200];
        ext_json_esc(de, sizeof de, name);
        snprintf(m, sizeof m,
                 "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"tid\":0,"
                 "\"args\":{\"name\":\"GPU %d: %s\"}}",
                 (long)TRACE_GPU_PID + device, device, de);
        put_locked(t, m);
    }
    put_locked(t, ev);
    pthread_mutex_unlock(&t->mu);
}

PyObject *ext_trace_take(ExtTrace *t) {
    pthread_mutex_lock(&t->mu);
    PyObject *r = Py_BuildValue("(y#L)", t->buf ? t->buf : "", (Py_ssize_t)t->n,
                                (long long)t->dropped);
    t->n = 0;
    t->nevents = t->dropped = 0;
    t->pid_named = false;
    t->ntids = 0;
    memset(t->gpu_named, 0, sizeof t->gpu_named);
    pthread_mutex_unlock(&t->mu);
    return r;
}

bool ext_nvtx_load(ExtTrace *t) {
    if (t->nvtx_lib) return true;
    const char *env = getenv("KILN_NVTX_LIB");
    /* NVTX 2's library, then CUDA 12.x/13's libnvtx3interop (the toolkit ships no
     * libnvToolsExt since NVTX became header-only; the interop library exports the same
     * nvtxRangePushA/nvtxRangePop), by name and where the toolkit keeps it */
    const char *names[] = {env && *env ? env : "libnvToolsExt.so.1", "libnvToolsExt.so",
                           "libnvtx3interop.so.1", "/usr/local/cuda/lib64/libnvtx3interop.so.1"};
    int tries = env && *env ? 1 : (int)(sizeof names / sizeof names[0]);
    for (int i = 0; i < tries; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *err = dlerror();
            snprintf(t->nvtx_why, sizeof t->nvtx_why, "%s", err ? err : names[i]);
            continue;
        }
        void *push = dlsym(h, "nvtxRangePushA"), *pop = dlsym(h, "nvtxRangePop");
        if (!push || !pop) {
            snprintf(t->nvtx_why, sizeof t->nvtx_why, "%s has no nvtxRangePushA/nvtxRangePop",
                     names[i]);
            dlclose(h);
            continue;
        }
        t->nvtx_lib = h;
        memcpy(&t->nvtx_push, &push, sizeof push); /* object to function pointer */
        memcpy(&t->nvtx_pop, &pop, sizeof pop);
        t->nvtx_why[0] = 0;
        return true;
    }
    return false;
}

static void fork_prepare(void) {
    if (fork_trace) pthread_mutex_lock(&fork_trace->mu);
}

static void fork_parent(void) {
    if (fork_trace) pthread_mutex_unlock(&fork_trace->mu);
}

static void fork_child(void) {
    my_tid = 0; /* the forking thread is a new thread of a new process */
    ExtTrace *t = fork_trace;
    if (!t) return;
    pthread_mutex_init(&t->mu, NULL);
    t->n = 0;
    t->nevents = t->dropped = 0;
    t->pid_named = false;
    t->ntids = 0;
    memset(t->gpu_named, 0, sizeof t->gpu_named);
}

static void register_fork(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

void ext_trace_init(ExtTrace *t) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_mutex_init(&t->mu, NULL);
    fork_trace = t;
    pthread_once(&once, register_fork);
}

void ext_trace_free(ExtTrace *t) {
    PyMem_RawFree(t->buf);
    t->buf = NULL;
    t->n = t->cap = 0;
}
