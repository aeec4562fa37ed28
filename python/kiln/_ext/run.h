/* run.h: running a CPU entry once its arguments are packed (run.c).
 *
 * Shared by the launch path (launch.c) and the replay of a recorded step
 * (record.c), so both pick the entry's code the same way (tier 0's until the
 * optimising build is in, table.h), stop the same way on Ctrl-C and report a
 * kernel's error the same way. */
#ifndef KILN_EXT_RUN_H
#define KILN_EXT_RUN_H

#include "table.h"

/* Runs CPU entry e over grid x block with packed slots, the GIL released
 * around the kernel.  par: the kernel's parallel threshold.  ts, when not
 * NULL, gets the clock (ext_obs_ns) at the kernel's start and end.  0, or -1
 * with an exception set (the kernel's error, KeyboardInterrupt, a warning
 * made an error). */
int ext_cpu_run(ModState *st, EntryObject *e, const int64_t grid[3], const int64_t block[3],
                int64_t shmem, int64_t par, const int64_t *slots, int64_t ts[2]);

#endif
