/* launch.h: the Launcher, a kernel with its launch configuration (launch.c). */
#ifndef KILN_EXT_LAUNCH_H
#define KILN_EXT_LAUNCH_H

#include "table.h"

enum { LAUNCH_CACHE = 8 }; /* launchers kept per kernel, one per recent configuration */

/* What a launch reads and updates of its kernel: a part of the Dispatcher
 * object (dispatcher.c), which owns it and the references in it. */
typedef struct {
    int nparams;
    PyObject *names;   /* tuple of parameter names */
    PyObject *kname;   /* the kernel's name */
    SpecTable tab;     /* the specialisations: type key -> Entry */
    PyObject *lc[LAUNCH_CACHE]; /* recent Launchers */
    int lnext;
    ModState *st;
    int64_t par_threshold;
    int target;        /* for host-only arguments: 0 CPU, 1 CUDA, -1 not resolved yet */
    bool explicit_cpu; /* target='cpu' was asked for: GPU arrays are an error */
    bool warned;       /* the host-array PerformanceWarning was given */
    bool grid_warned;  /* the low-occupancy PerformanceWarning was given, or will not be */
    bool lc_sensitive; /* launch-config sensitive (kiln/launchconfig.py): the type key
                        * also holds the grid, block and dynamic shared memory */
} Kernel;

/* The bytes a launch-config sensitive kernel adds to its type key: grid[3], block[3]
 * and the dynamic shared memory, as int64. */
enum { LC_KEY_BYTES = 7 * 8 };

/* The Launcher of kernel k (part of the dispatcher object disp) for a
 * configuration: the cached one, else a new one that holds references to disp
 * and stream.  New reference, or NULL with an exception set. */
PyObject *ext_launcher_get(PyObject *disp, Kernel *k, const int64_t grid[3],
                           const int64_t block[3], PyObject *stream, void *stream_handle,
                           int64_t shmem);

/* Creates kiln._kiln.Launcher and interns the method names it calls. */
int ext_launch_init(PyObject *module, ModState *st);

#endif
