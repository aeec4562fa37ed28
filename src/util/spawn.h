/* spawn.h: starting a compiler that does not outlive kiln, and stopping it.
 *
 * posix_spawn cannot ask for a parent-death signal, and a compiler in a
 * process group of its own gets no signal when the process that started it is
 * killed (SIGTERM from `timeout`, systemd or Kubernetes, SIGKILL, a closed
 * terminal): it ran on, and a hung one ran for ever.  spawn_start starts the
 * program as posix_spawn does (a vfork child, all signals blocked around it,
 * handled signals back to their defaults in the child, raw system calls
 * there) and sets PR_SET_PDEATHSIG to SIGTERM before the exec, so the
 * compiler is told when the thread that started it ends; that thread waits
 * for the compiler, so it ends early only with the process.  A compiler in a
 * group of its own runs under a supervising shell, which passes SIGTERM to
 * the whole group (gcc's driver removes its temporaries on SIGTERM, but its
 * cc1 and as would run on) and removes the build's directory.
 *
 * spawn_stop ends a running compiler the same way: SIGTERM to it (and its
 * group), SPAWN_GRACE_MS to exit and clean up, then SIGKILL; it reaps it. */
#ifndef KILN_SPAWN_H
#define KILN_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

/* How long a stopped compiler gets between SIGTERM and SIGKILL. */
enum { SPAWN_GRACE_MS = 200 };

/* Starts argv[0] (looked up on PATH) with stdout and stderr on out_fd and
 * stdin on /dev/null; own_group puts it in a process group of its own, under
 * a supervising /bin/sh that ends the whole group on SIGTERM and then removes
 * dir (NULL: nothing).  Returns 0 and sets *pid, or an errno value. */
int spawn_start(char **argv, int out_fd, bool own_group, const char *dir, pid_t *pid);

/* Stops a started program that has not been reaped and reaps it; *status
 * gets its wait status. */
void spawn_stop(pid_t pid, bool own_group, int *status);

#endif
