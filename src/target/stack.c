/* stack.c: how deep a recursive device function may go on the calling thread's stack
 * (kiln_cpu_stack_floor, kiln.h).
 *
 * The generated code bounds a recursion by its first frame less KILN_REC_STACK (1 MiB,
 * rt_cpu.h), which assumes the thread has that much stack below the kernel.  A Python
 * thread made after threading.stack_size(512 KiB), or the main thread under
 * `ulimit -s 512`, has less: the recursion ran off the stack into the guard page
 * (SIGSEGV) before the bound was reached.  The floor returned here is the thread's own
 * stack's low end plus a margin, which the generated code takes when it is higher. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>

#include "kiln.h"

/* Bytes kept above the low end of a thread's stack when a recursion is stopped: the
 * deepest frame that passes the check (a device function's locals, spilled registers),
 * the calls it makes (libm, the error path's kiln_fail) and the unwinding back out.
 * docs/limits.md, KILN_REC_MARGIN. */
enum { KILN_REC_MARGIN = 64 << 10 };

/* The thread's answer, once: the stack of a thread does not move.  A cache of what the
 * system says of this thread, not state of kiln's: each thread has its own. */
static _Thread_local char *floor_of_thread;
static _Thread_local int floor_known; /* 1: floor_of_thread holds the answer (NULL: none) */

char *kiln_cpu_stack_floor(void) {
    if (floor_known) return floor_of_thread;
    char *floor = NULL;
    pthread_attr_t at;
    if (pthread_getattr_np(pthread_self(), &at) == 0) {
        void *lo = NULL;
        size_t size = 0;
        if (pthread_attr_getstack(&at, &lo, &size) == 0 && lo && size > KILN_REC_MARGIN)
            floor = (char *)lo + KILN_REC_MARGIN;
        pthread_attr_destroy(&at);
    }
    floor_of_thread = floor;
    floor_known = 1;
    return floor;
}
