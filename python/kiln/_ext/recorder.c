/* recorder.c: the recording in progress on one thread (see recorder.h). */
#include "recorder.h"

#include <stdarg.h>
#include <stdio.h>

void ext_record_refuse(ModState *st, const char *fmt, ...) {
    struct ExtRecorder *rec = ext_recording(st);
    if (!rec || rec->why[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rec->why, sizeof rec->why, fmt, ap);
    va_end(ap);
}

void ext_record_fresh(ModState *st, uint64_t ptr, uint64_t size) {
    struct ExtRecorder *rec = ext_recording(st);
    if (!rec) return;
    if (rec->nfresh == rec->capfresh) {
        int cap = rec->capfresh ? 2 * rec->capfresh : 16;
        uint64_t *f = PyMem_Realloc(rec->fresh, sizeof *f * 2 * (size_t)cap);
        if (!f) return; /* not noted: its first contents get restored, which is only slower */
        rec->fresh = f;
        rec->capfresh = cap;
    }
    rec->fresh[2 * rec->nfresh] = ptr;
    rec->fresh[2 * rec->nfresh + 1] = ptr + size;
    rec->nfresh++;
}

bool ext_record_is_fresh(const struct ExtRecorder *rec, uint64_t lo, uint64_t hi) {
    for (int i = 0; i < rec->nfresh; i++)
        if (rec->fresh[2 * i] <= lo && hi <= rec->fresh[2 * i + 1]) return true;
    return false;
}
