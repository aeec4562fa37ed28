/* sigpipe.c: see sigpipe.h. */
#include "util/sigpipe.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

static bool pipe_pending(void) {
    sigset_t pending;
    sigemptyset(&pending);
    return sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

void sigpipe_hold(SigpipeHold *h) {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    h->was_pending = pipe_pending();
    pthread_sigmask(SIG_BLOCK, &pipe_only, &h->old);
}

void sigpipe_release(SigpipeHold *h) {
    if (!h->was_pending && pipe_pending()) {
        /* raised by the write, directed at this thread: take it back */
        sigset_t pipe_only;
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &h->old, NULL);
}
