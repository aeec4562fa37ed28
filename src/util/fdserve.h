/* fdserve.h: handing file descriptors to other processes of the same user.
 *
 * A process that shares GPU memory (kiln's IPC handles, cuda_ipc.c) must give
 * the importing process a file descriptor of its memory pool; a descriptor
 * cannot travel in bytes (a pickle), only over a Unix socket (SCM_RIGHTS), as
 * CUDA's own IPC samples pass them.  The exporting process runs one server
 * thread on an abstract Unix socket named for its pid and a random tag; an
 * importing process connects, presents the secret token that came with the
 * handle's bytes and a slot number (the device), and receives that slot's
 * descriptor.  Both sides check the other's user id (SO_PEERCRED): abstract
 * socket names are visible to every user of the machine, so a name alone
 * proves nothing.  Every wait is bounded (KILN_FDSERVE_TIMEOUT_MS).  The
 * server thread never touches Python; it lives until the process ends.  A
 * forked child that shares memory starts a server of its own (its pid differs).
 */
#ifndef KILN_UTIL_FDSERVE_H
#define KILN_UTIL_FDSERVE_H

#include <stdint.h>

enum {
    /* the longest a connect, request or reply between two processes may take; past it
     * the importing side reports the exporting process as not answering */
    KILN_FDSERVE_TIMEOUT_MS = 5000,
    KILN_FDSERVE_NAME = 64,  /* bytes of a server's name, its terminating NUL included */
    KILN_FDSERVE_TOKEN = 16, /* bytes of the secret an importer presents */
    KILN_FDSERVE_SLOTS = 64, /* descriptors one server offers (one per device) */
};

typedef struct kiln_fdserver kiln_fdserver;

/* Starts the server thread of this process: its name and token are written to name
 * and token.  NULL, with *why set to a static reason, when it cannot start. */
kiln_fdserver *kiln_fdserver_start(char name[KILN_FDSERVE_NAME],
                                   uint8_t token[KILN_FDSERVE_TOKEN], const char **why);
/* The process that started s: a forked child must start its own. */
int kiln_fdserver_pid(const kiln_fdserver *s);
/* In a forked child (whose copy of s has no thread): closes the listening socket it
 * inherited, so that connections meant for the parent are refused once the parent has
 * ended rather than left waiting, and frees s. */
void kiln_fdserver_forget(kiln_fdserver *s);
/* Offers fd in slot (0 <= slot < KILN_FDSERVE_SLOTS); the caller keeps fd open
 * while the process lives.  0, or -1 for a bad slot. */
int kiln_fdserver_offer(kiln_fdserver *s, int slot, int fd);
/* Asks the server `name` for slot's descriptor, presenting token; waits at most
 * KILN_FDSERVE_TIMEOUT_MS.  The descriptor (close-on-exec, the caller's to close),
 * or -1 with *why set to a static reason. */
int kiln_fdserve_fetch(const char *name, const uint8_t token[KILN_FDSERVE_TOKEN], int slot,
                       const char **why);

#endif
