/* build_dir.h: the private directory one C compile runs in (build_dir.c).
 *
 * Each build gets $TMPDIR/kiln-PID-XXXXXX, removed when it ends.  A process that ends
 * in the middle (os._exit in a forked multiprocessing worker, SIGKILL) cannot remove
 * its own; the compiler's supervisor removes it on SIGTERM (util/spawn.h), and the next
 * build of any kiln process of this user removes those of processes that have ended,
 * once they are BUILD_DIR_STALE_S old (a directory of a live process in another PID
 * namespace sharing TMPDIR is never that old: a build is bounded by KILN_CC_TIMEOUT). */
#ifndef KILN_BUILD_DIR_H
#define KILN_BUILD_DIR_H

#include <stddef.h>

enum { BUILD_DIR_STALE_S = 3600 };

/* Makes a build directory under tmp into dir (size n): 0, or -1 with errno set.
 * Sweeps stale ones first (best effort, silent). */
int build_dir_make(char *dir, size_t n, const char *tmp);

/* Removes a build directory and the files in it. */
void build_dir_remove(const char *dir);

#endif
