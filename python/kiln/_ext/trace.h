/* trace.h: where what kiln shows of itself goes (trace.c): the trace's event
 * buffer, KILN_LOG's lines on stderr, NVTX ranges.  obs.c decides what to
 * record; this file only keeps and writes it. */
#ifndef KILN_EXT_TRACE_H
#define KILN_EXT_TRACE_H

#include "state.h"

enum {
    TRACE_MAX_EVENTS = 1 << 20, /* events one trace keeps (about 300 bytes each) */
    TRACE_MAX_THREADS = 256,    /* threads named in one trace; later ones unnamed */
    TRACE_LINE = 2048,          /* one log line or trace event, at most */
    TRACE_GPU_PID = 1000000000, /* a GPU's track is this pid plus its number */
};

/* A trace's events as Chrome trace-event JSON, separated by commas, under mu
 * (tier workers add to it without the GIL); and the NVTX library. */
typedef struct ExtTrace {
    pthread_mutex_t mu;
    char *buf; /* PyMem_Raw */
    size_t n, cap;
    int64_t nevents, dropped;
    long tids[TRACE_MAX_THREADS]; /* the threads named since the last take */
    int ntids;
    bool pid_named, gpu_named[EXT_MAX_DEVICES];
    void *nvtx_lib;
    int (*nvtx_push)(const char *);
    int (*nvtx_pop)(void);
    char nvtx_why[300];
} ExtTrace;

/* The mutex, and the fork handlers: a child starts with an empty buffer. */
void ext_trace_init(ExtTrace *t);
void ext_trace_free(ExtTrace *t);

/* s as the inside of a JSON string, cut to fit cap. */
void ext_json_esc(char *dst, size_t cap, const char *s);
/* This thread's OS id (gettid), cached per thread. */
long ext_trace_tid(void);
/* One complete event on this thread's track of this process: args is the
 * inside of the args object (may be empty); the metadata that names the
 * process and the thread comes first, once per trace. */
void ext_trace_host(ExtTrace *t, const char *cat, const char *name, double ts_us, double dur_us,
                    const char *args);
/* One event on GPU device's track (ev is the whole event), named
 * "GPU device: name" once per trace. */
void ext_trace_gpu(ExtTrace *t, int device, const char *name, const char *ev);
/* (bytes of the events, dropped count); empties the buffer.  The metadata
 * comes again with the next events, for the next taker. */
PyObject *ext_trace_take(ExtTrace *t);

/* One line to stderr, in one write so lines of threads do not mix. */
void ext_log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Loads libnvToolsExt ($KILN_NVTX_LIB) once; false with nvtx_why saying why not. */
bool ext_nvtx_load(ExtTrace *t);

#endif
