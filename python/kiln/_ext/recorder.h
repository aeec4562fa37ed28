/* recorder.h: the recording in progress on one thread (recorder.c).
 *
 * kiln.compile(mode="reduce-overhead") runs a step once under a recording
 * (record.c): the launches it makes are kept to be replayed.  What the step
 * does besides launches and cannot be replayed (a copy between host and
 * device, a memset) refuses the recording with the reason, which the
 * Python layer gives as one kiln.PerformanceWarning; device memory the step
 * allocates is noted, since its first contents need no restoring.  These
 * hooks sit below devarray.c, which calls them, and record.c, which owns the
 * recording; one recording at a time per module, on the thread that began
 * it (launches on other threads meanwhile are not recorded).
 */
#ifndef KILN_EXT_RECORDER_H
#define KILN_EXT_RECORDER_H

#include "state.h"

enum { REC_WHY = 256 }; /* the reason's bytes */

struct ExtRecorder {
    unsigned long thread; /* PyThread_get_thread_ident of the recording thread */
    char why[REC_WHY];    /* why the step cannot be replayed ("" while it can) */
    uint64_t *fresh;      /* device allocations made while recording: [start, end) pairs */
    int nfresh, capfresh;
    struct RecordObject *r; /* the record being made (record.c) */
};

/* The recording of the calling thread, or NULL (the common case: one load). */
static inline struct ExtRecorder *ext_recording(ModState *st) {
    struct ExtRecorder *rec = st->rec;
    if (__builtin_expect(rec == NULL, 1)) return NULL;
    return rec->thread == PyThread_get_thread_ident() ? rec : NULL;
}

/* Refuses the calling thread's recording, if any, with the first reason given
 * (printf-style). */
void ext_record_refuse(ModState *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Notes device memory [ptr, ptr + size) allocated while recording. */
void ext_record_fresh(ModState *st, uint64_t ptr, uint64_t size);
/* Whether [lo, hi) lies in memory noted by ext_record_fresh. */
bool ext_record_is_fresh(const struct ExtRecorder *rec, uint64_t lo, uint64_t hi);

#endif
