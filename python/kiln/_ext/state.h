/* state.h: the module state, which every file of the extension reads.
 *
 * The files of kiln's Python extension call one way, each down to the files
 * whose headers it includes (docs/architecture.md has the map):
 *
 *   module.c      init: registers the types and functions of the files below
 *   ufunc.c       kiln.vectorize's repeated call on device arrays, launched from C
 *   dispatcher.c  the Dispatcher: k[config] finds or makes a Launcher
 *   launch.c      the Launcher: classify, look up (or build) the entry, pack, run
 *   record_add.c  a launch added to the recording in progress
 *   record.c      reduce-overhead: records of a step's launches, replayed (CUDA graphs)
 *   record_int.h  (types) what the two share: a record's layout, array spans
 *   run.c         running a CPU entry once its arguments are packed
 *   core.c        the bridge to the C core: translate, build, load (Program, Entry)
 *   resolve.c     the resolver bridge: Python's descriptions of globals as kiln_values
 *   pack.c        classified arguments packed into an entry's 8-byte slots
 *   args.c        call arguments: their 4-byte types and values
 *   interop.c     foreign arrays: __cuda_array_interface__ and DLPack
 *   host.c        events, page-locked memory, device attributes
 *   layoutsig.c   the argument signatures that pick a kiln.fuse call's plan
 *   devarray.c    device memory: Alloc, DeviceArray, DLPack export
 *   stream.c      Stream, and a launch's stream argument from any library
 *   recorder.c    the recording in progress: what refuses it, what it allocated
 *   nvrtc.c       NVRTC builds through the cache, and its warm-up thread
 *   ipc.c         GPU memory shared between processes (IPC handles' bytes)
 *   tunedepth.c   whether this thread runs a max-autotune step; kiln.compile's call
 *   driver.c      the CUDA driver: opening it, devices, kernel error records
 *   signals.c     Ctrl-C during CPU kernels, launches in a forked child
 *   exectext.c    the text given to exec and compile, kept by an audit hook
 *   table.c       the specialisation table and its reference-counted entries
 *   tier.c        tiered CPU builds: tier 0 (libtcc), the optimising builds' workers
 *   cache.c       the artifact cache: cached builds, kiln.cache's functions
 *   obs.c         kiln.metrics()' counters, what goes into traces and logs
 *   trace.c       the trace's event buffer, KILN_LOG's lines, NVTX ranges
 *   records.c     structured dtypes: the process's record layouts, by id
 *   errors.c      diagnostics and kernel errors as Python exceptions
 *   state.c       this: the module state
 */
#ifndef KILN_EXT_STATE_H
#define KILN_EXT_STATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "kiln.h"

enum { EXT_MAX_DEVICES = 64 };
/* NumPy scalar types (np.float32, np.int64, ...) args.c remembers, with where their
 * value sits, so that a launch reads one without the buffer protocol */
enum { EXT_NP_SCALAR_TYPES = 24 };

/* Process-wide by nature (signal dispositions and fork are the process's): the one
 * piece of global state of the extension, owned and written by signals.c (signals.h);
 * errors.c reads `main` (only the main thread looks for Ctrl-C in a wait). */
typedef struct {
    int sigint;          /* the stop word of main-thread launches: set by the handler */
    int omp_started;     /* a launch large enough to start OpenMP's threads ran */
    int omp_dead;        /* this process was forked after that: launches stay serial */
    int warned;          /* the serial launches' PerformanceWarning was given */
    int team_warned;     /* the one for a thread whose OpenMP team cannot start */
    unsigned launches;   /* main-thread launches, for KILN_SIGINT_RECHECK */
    pthread_t main;      /* Python's main thread, the one that runs signal handlers */
} ExtSignals;
extern ExtSignals ext_sig;

/* Diagnostics that arrive while the GIL is released, collected as text. */
typedef struct {
    char *buf; /* PyMem_Raw-owned */
    size_t n, cap;
    int nerrors;
} TextSink;

typedef struct {
    PyObject *CompileError;
    PyObject *CudaError;
    PyObject *CudaErrorCompat; /* CudaError and cuda.core's CUDAError (driver.c), made once */
    PyObject *PerformanceWarning;
    PyObject *enum_tags;            /* int subclasses seen as arguments -> their tag (args.c) */
    int enum_ntags;                 /* tags given to enum classes so far */
    struct {                        /* NumPy scalar types met as arguments (args.c) */
        PyTypeObject *tp;           /* a strong reference */
        uint8_t dtype, off;         /* its kiln dtype; its value's offset in it */
    } np_scalar[EXT_NP_SCALAR_TYPES];
    int n_np_scalar;
    PyObject *CacheWarning;
    PyObject *CacheError;
    PyTypeObject *ProgramType;
    PyTypeObject *EntryType;
    PyTypeObject *DispatcherType;
    PyTypeObject *LauncherType;
    PyTypeObject *UfuncType;        /* kiln.vectorize's C base (ufunc.c) */
    PyTypeObject *RecordType;
    PyTypeObject *DeviceArrayType;  /* the C base */
    PyTypeObject *AllocType;
    PyTypeObject *StreamType;
    PyTypeObject *EventType;
    PyTypeObject *PinnedType;
    PyObject *device_array_class;   /* kiln.DeviceArray, the Python subclass */
    PyTypeObject *mapped_class;     /* kiln's ndarray subclass over mapped or managed memory:
                                     * GPU launches take it by __cuda_array_interface__ */
    PyObject *str_compile_key;
    PyObject *str_resolve_target;
    PyObject *str_ufunc_call;       /* "_call": a ufunc call that ufunc.c does not take */
    PyObject *str_cai;              /* "__cuda_array_interface__" */
    PyObject *str_dlpack;
    PyObject *str_dlpack_device;
    PyObject *str_cai_shape, *str_cai_typestr, *str_cai_data; /* its keys */
    PyObject *str_cai_strides, *str_cai_stream, *str_cai_mask;
    /* CUDA, opened at first use */
    kiln_cuda *cuda;
    const char *cuda_why;           /* why not, when cuda is NULL after trying */
    char cuda_why_buf[512];         /* ... when it names the KILN_CUDA_DRIVER set */
    bool cuda_tried;
    kiln_nvrtc *nvrtc;
    kiln_nvjitlink *nvjitlink;      /* opened at the first link of compiled device code */
    int current_device;             /* kiln.select_device */
    uint64_t errbuf[EXT_MAX_DEVICES];    /* per device: the kernels' error record */
    bool err_pending[EXT_MAX_DEVICES];   /* a kernel that may fail ran since the last check */
    PyObject *err_files[EXT_MAX_DEVICES];/* its source files, to name the place */
    int shared_limit[EXT_MAX_DEVICES];   /* shared memory per block: 0 not asked yet, -1 unknown */
    /* the artifact cache, opened at the first build */
    kiln_cache *cache;
    kiln_ctx *cache_ctx;            /* its diagnostics go to cache_warn */
    pthread_mutex_t cache_warn_mu;
    TextSink cache_warn;            /* warnings waiting for the GIL */
    /* tiered CPU builds (tier.c): tier 0's lock, the optimising builds' jobs */
    struct ExtTiers *tiers;
    /* what kiln shows of itself (obs.h): the launch path's countdown to its slow
     * path (GIL), the flags (atomic: workers read them), the rest */
    int obs_countdown;
    int obs_flags;
    struct ExtObs *obs;
    /* kiln.compile's reduce-overhead mode (recorder.h, record.c): the recording in
     * progress, and counts of records made, replays, graphs instantiated and graph
     * nodes updated with new arguments */
    struct ExtRecorder *rec;
    long rec_counts[4];
    /* GPU memory shared between processes (ipc.c): this process's descriptor server,
     * the pools it imported; made at first use, never freed (the server's thread
     * lives as long as the process) */
    struct ExtIpc *ipc;
} ModState;

ModState *ext_state(PyObject *module);
/* The state of the module that made tp or the first of its bases that a module
 * made (a Python subclass of DispatcherBase has no module of its own); NULL
 * with an exception set when there is none. */
ModState *ext_state_of_type(PyTypeObject *tp);
/* The module's m_traverse and m_clear: the Python objects the state holds. */
int ext_state_traverse(ModState *st, visitproc visit, void *arg);
void ext_state_clear(ModState *st);

#endif
