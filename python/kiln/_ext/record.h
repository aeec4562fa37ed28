/* record.h: records of a step's launches, replayed (record.c).
 *
 * kiln.compile(fn, mode="reduce-overhead") calls record_begin(args, ...), runs
 * fn, and calls record_end(result, ...), which returns a Record: the guard of
 * the call (each array argument's type, shape, strides, device and how the
 * arrays overlap; each scalar's type and value; the identity of other
 * objects), the launches fn made with their packed arguments, and where each
 * array pointer of those came from: an argument of fn (replaced by the new
 * argument's pointer at replay), a temporary fn made (kept by the record, its
 * first contents restored at each replay), or a temporary fn returns (made
 * anew at each replay, so results of earlier calls stay the caller's).
 * Record.replay(args) checks the guard and, when it holds, runs the launches
 * without fn's Python: on the CPU one after the other through run.c, on the
 * GPU as one CUDA graph whose kernel nodes get the new pointers in place
 * (cuGraphExecKernelNodeSetParams), never built again.
 */
#ifndef KILN_EXT_RECORD_H
#define KILN_EXT_RECORD_H

#include "args.h"
#include "recorder.h"

/* Adds a launch to the calling thread's recording, if any, after its
 * arguments are packed and before it runs.  args/a: the launch's arguments and
 * their classification; names/kname: the kernel's, for messages; errp: the
 * device's error record (GPU); wide: the GPU launch takes the wide entry.  0,
 * or -1 with an exception set. */
int ext_record_add(ModState *st, EntryObject *e, PyObject *names, PyObject *kname,
                   const int64_t grid[3], const int64_t block[3], int64_t shmem,
                   PyObject *stream, void *stream_handle, int64_t par, PyObject *const *args,
                   const Arg *a, int n, const int64_t *slots, const int *off, bool wide,
                   uint64_t errp);

/* Creates kiln._kiln.Record and adds record_begin, record_end, record_counts. */
int ext_record_init(PyObject *module, ModState *st);

#endif
