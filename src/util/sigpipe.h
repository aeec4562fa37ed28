/* sigpipe.h: writes to a peer that has gone, without SIGPIPE.
 *
 * write(2) to a socket whose peer has closed raises SIGPIPE, which ends a process
 * that has not ignored it: a C program, or a Python program that restored SIG_DFL
 * as command-line tools do.  A library has no business changing the process's
 * signal dispositions, so the write runs with SIGPIPE blocked in the calling
 * thread, and a SIGPIPE the write raised is taken off the thread before the old
 * mask comes back; the write fails with EPIPE as usual.  Used around hiredis's
 * writes, which call write(2) with no MSG_NOSIGNAL. */
#ifndef KILN_SIGPIPE_H
#define KILN_SIGPIPE_H

#include <signal.h>
#include <stdbool.h>

typedef struct SigpipeHold {
    sigset_t old;     /* the thread's mask before */
    bool was_pending; /* a SIGPIPE was pending already: not ours to take */
} SigpipeHold;

void sigpipe_hold(SigpipeHold *h);
void sigpipe_release(SigpipeHold *h);

#endif
