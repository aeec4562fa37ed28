/* ext.h: what the files of kiln's Python extension share.
 *
 * module.c      the module, translation wrappers, Dispatcher and Launcher
 * devarray.c    DeviceArray, device allocations, streams, DLPack
 * gpu.c         the CUDA state of the module, foreign GPU arrays, GPU launches
 * cache.c       the artifact cache: cached builds, kiln.cache's functions
 */
#ifndef KILN_EXT_H
#define KILN_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "kiln.h"

enum { EXT_MAX_DEVICES = 64 };

/* Diagnostics that arrive while the GIL is released, collected as text. */
typedef struct {
    char *buf; /* PyMem_Raw-owned */
    size_t n, cap;
    int nerrors;
} TextSink;

typedef struct {
    PyObject *CompileError;
    PyObject *CudaError;
    PyObject *PerformanceWarning;
    PyObject *CacheWarning;
    PyObject *CacheError;
    PyTypeObject *ProgramType;
    PyTypeObject *EntryType;
    PyTypeObject *DispatcherType;
    PyTypeObject *LauncherType;
    PyTypeObject *DeviceArrayType;  /* the C base */
    PyTypeObject *AllocType;
    PyTypeObject *StreamType;
    PyTypeObject *EventType;
    PyTypeObject *PinnedType;
    PyObject *device_array_class;   /* kiln.DeviceArray, the Python subclass */
    PyObject *str_compile_key;
    PyObject *str_resolve_target;
    PyObject *str_cai;              /* "__cuda_array_interface__" */
    PyObject *str_dlpack;
    PyObject *str_dlpack_device;
    /* CUDA, opened at first use */
    kiln_cuda *cuda;
    const char *cuda_why;           /* why not, when cuda is NULL after trying */
    bool cuda_tried;
    kiln_nvrtc *nvrtc;
    int current_device;             /* kiln.select_device */
    uint64_t errbuf[EXT_MAX_DEVICES];    /* per device: the kernels' error record */
    bool err_pending[EXT_MAX_DEVICES];   /* a kernel that may fail ran since the last check */
    PyObject *err_files[EXT_MAX_DEVICES];/* its source files, to name the place */
    /* the artifact cache, opened at the first build */
    kiln_cache *cache;
    kiln_ctx *cache_ctx;            /* its diagnostics go to cache_warn */
    pthread_mutex_t cache_warn_mu;
    TextSink cache_warn;            /* warnings waiting for the GIL */
} ModState;

/* module.c */
ModState *ext_state(PyObject *module);

void ext_text_diag(void *ud, const kiln_diag *d);
/* kiln_interrupt_fn for contexts used with the GIL released: on the main thread,
 * takes the GIL and runs Python's signal handlers; nonzero when one raised
 * (KeyboardInterrupt), which stays set for the caller to return. */
int ext_interrupted(void *ud);
/* Raises kiln.CompileError with the sink's text (or fallback), unless an
 * exception (an interrupt's) is already set. */
void ext_raise_text(ModState *st, TextSink *t, const char *fallback);

/* gpu.c */
/* Opens CUDA if needed; NULL with CudaError set when no GPU can be used. */
kiln_cuda *ext_cuda(ModState *st);
/* NVRTC, opened at first use (thread-safe); NULL with kiln.CompileError set. */
kiln_nvrtc *ext_nvrtc(ModState *st);
/* The same without the GIL: NULL after reporting through ctx. */
kiln_nvrtc *ext_nvrtc_nogil(ModState *st, kiln_ctx *ctx);
/* Raises kiln.CudaError for a CUresult; returns NULL. */
PyObject *ext_cuda_error(ModState *st, int rc, const char *what);
/* Makes device dev current on this thread; -1 with an exception set. */
int ext_use_device(ModState *st, int dev);
/* The driver, with device dev current on this thread; NULL with an exception set. */
kiln_cuda *ext_cuda_on(ModState *st, int dev);
/* Reports (and clears) an error that a kernel recorded on device dev: -1 with
 * the exception set, 0 when there was none.  Synchronises the device. */
int ext_check_kernel_error(ModState *st, int dev);
/* The device pointer of device dev's error record, allocating it at first use. */
int ext_errbuf(ModState *st, int dev, uint64_t *ptr);
PyObject *ext_raise_kernel_error(const kiln_kernel_error *err, PyObject *files);

/* cache.c */
/* An artifact from the cache or a build. */
typedef struct {
    void *blob; /* malloc'd; the caller frees it */
    size_t len;
    char kind[16];
    char key[33];
    int hit;
} ExtArtifact;
/* Builds blob from what ud describes; runs without the GIL; reports through ctx. */
typedef int (*ext_build_fn)(void *ud, kiln_ctx *ctx, void **blob, size_t *len, char kind[16]);
/* The artifact for source built for target: from the cache's tiers, else built
 * once across processes (single flight) and stored.  target NULL skips the
 * cache; key_flags go to kiln_cache_key_of.  0, or -1 with kiln.CompileError
 * set (a failed build is not cached). */
int ext_cached_build(ModState *st, const char *src, size_t len, const char *target,
                     int key_flags, const char *short_target, const char *name,
                     ext_build_fn build, void *ud, ExtArtifact *out);
void ext_cache_free(ModState *st);
/* The cache, opened at first use; with or without the GIL.  NULL only when
 * out of memory. */
kiln_cache *ext_get_cache(ModState *st);
extern PyMethodDef ext_cache_functions[];

/* devarray.c */
typedef struct {
    PyObject_HEAD
    uint64_t ptr;                    /* address of element (0, ..., 0) */
    int ndim;
    int64_t shape[KILN_MAX_NDIM];
    int64_t strides[KILN_MAX_NDIM];  /* bytes */
    uint8_t dtype;                   /* kiln_dtype */
    uint8_t layout;                  /* 'C', 'F', 'A', or 0 if strides are not element multiples */
    int64_t estrides[KILN_MAX_NDIM]; /* element strides (contiguous ones for C and F) */
    int device;
    PyObject *owner;                 /* what keeps the memory alive */
    PyObject *weakrefs;
    PyObject *dict;
} DeviceArrayObject;

typedef struct {
    PyObject_HEAD
    uint64_t ptr;
    size_t size;
    int device;
    ModState *st;
} AllocObject;

typedef struct {
    PyObject_HEAD
    void *handle;  /* CUstream; NULL for the default stream */
    int device;
    bool owned;    /* created by kiln.stream(): destroyed with the object */
    ModState *st;
} StreamObject;

int ext_devarray_types(PyObject *module, ModState *st);
int ext_host_types(PyObject *module, ModState *st);
extern PyMethodDef ext_host_functions[];
extern PyMethodDef ext_devarray_functions[];
/* A new DeviceArray of class st->device_array_class (or the base). */
DeviceArrayObject *ext_devarray_new(ModState *st, uint64_t ptr, int ndim, const int64_t *shape,
                                    const int64_t *strides, int dtype, int device,
                                    PyObject *owner);
int ext_dtype_size(int dtype);
/* The byte span [lo, hi) around element 0 that an array's elements cover (both 0
 * when it has none); strides are multiplied by stride_unit (1 for byte strides,
 * the item size for element strides). */
void ext_byte_span(int64_t itemsize, int ndim, const int64_t *shape, const int64_t *strides,
                   int64_t stride_unit, int64_t *lo, int64_t *hi);
/* The CUstream a launch configuration's stream object names; -1 with an
 * exception for objects that are not streams. */
int ext_stream_handle(ModState *st, PyObject *obj, void **handle);

/* DLPack's structs (dlpack.h, ABI version 0.8): the exchange format of GPU tensors */
typedef struct {
    int32_t device_type, device_id;
} DLDevice;
typedef struct {
    uint8_t code, bits;
    uint16_t lanes;
} DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *);
} DLManagedTensor;

/* gpu.c: foreign GPU arrays (__cuda_array_interface__, DLPack) */
typedef struct {
    uint64_t ptr;
    int ndim;
    int64_t shape[KILN_MAX_NDIM];
    int64_t strides[KILN_MAX_NDIM]; /* bytes */
    int dtype;
    int device;
    bool readonly;
    PyObject *keep;                 /* a reference to hold during the launch (DLPack) */
} ForeignArray;
/* 1 if o is a GPU array (filled in), 0 if it is not one, -1 with an exception. */
int ext_foreign_array(ModState *st, PyObject *o, void *launch_stream, ForeignArray *fa);
void ext_foreign_release(ForeignArray *fa);
extern PyMethodDef ext_gpu_functions[];

#endif
