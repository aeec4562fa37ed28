/* cuda_int.h: the driver's table of functions and kiln's state of it, shared by
 * cuda.c (load, launch, memory) and cuda_ipc.c (memory shared between processes).
 * Only the types the functions need are declared: integers and opaque pointers. */
#ifndef KILN_TARGET_CUDA_INT_H
#define KILN_TARGET_CUDA_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;
typedef void *CUgraph;
typedef void *CUgraphNode;
typedef void *CUgraphExec;

/* CUDA_KERNEL_NODE_PARAMS as the unversioned graph functions take it (v1). */
typedef struct {
    CUfunction func;
    unsigned grid[3], block[3], shmem;
    void **params;
    void **extra;
} KernelNodeParams;

enum {
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
    CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1,
    CU_MEM_ALLOCATION_TYPE_PINNED = 1,
    CU_MEM_LOCATION_TYPE_DEVICE = 1,
    CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE = 2, /* CU_LAUNCH_ATTRIBUTE_COOPERATIVE */
};

enum { MAX_DEVICES = 64 };

/* CUmemPoolProps (v1: 88 bytes) */
typedef struct {
    int allocType;
    int handleTypes;
    struct {
        int type, id;
    } location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
} CUmemPoolProps;

/* CUipcMemHandle, passed by value */
typedef struct {
    char reserved[64];
} CUipcMemHandle;

struct kiln_cuda {
    void *lib;
    int ndev;
    int driver;
    CUcontext ctx[MAX_DEVICES];  /* retained primary contexts, NULL until used */
    int arch[MAX_DEVICES];
    int64_t fill[MAX_DEVICES];   /* threads resident when every SM is full, 0 if unknown */
    bool async_alloc;            /* cuMemAllocAsync works */
    bool pools;                  /* the memory pool functions below were found */
    void *pool[MAX_DEVICES];     /* each used device's pool, once configured: kiln's own */
    bool own_pool[MAX_DEVICES];  /* (exportable, cuda_ipc.c), else the device's default */
    int pool_fd[MAX_DEVICES];    /* own pool's shared descriptor once exported, else -1 */
    CUresult (*Init)(unsigned);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    /* the driver's linker (optional: kiln_cuda_link), for when nvJitLink is missing */
    bool has_link;
    CUresult (*LinkCreate)(unsigned, int *, void **, void **);
    CUresult (*LinkAddData)(void *, int, void *, size_t, const char *, unsigned, int *, void **);
    CUresult (*LinkComplete)(void *, void **, size_t *);
    CUresult (*LinkDestroy)(void *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*FuncSetAttribute)(CUfunction, int, int);
    CUresult (*FuncGetAttribute)(int *, int, CUfunction);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
    /* optional: cooperative kernels (kiln.cg) and their occupancy */
    CUresult (*LaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, unsigned, unsigned, CUstream, void **);
    CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
    bool coop, occupancy;
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemAllocAsync)(CUdeviceptr *, size_t, CUstream);
    CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
    CUresult (*DeviceGetDefaultMemPool)(void **, CUdevice);
    CUresult (*MemPoolSetAttribute)(void *, int, void *);
    CUresult (*MemPoolTrimTo)(void *, size_t);
    bool ipc; /* exportable pools (below; CUDA 11.2 and newer) */
    CUresult (*MemPoolCreate)(void **, const CUmemPoolProps *);
    CUresult (*MemAllocFromPoolAsync)(CUdeviceptr *, size_t, void *, CUstream);
    CUresult (*MemPoolExportToShareableHandle)(void *, void *, int, unsigned long long);
    CUresult (*MemPoolImportFromShareableHandle)(void **, void *, int, unsigned long long);
    CUresult (*MemPoolExportPointer)(void *, CUdeviceptr);
    CUresult (*MemPoolImportPointer)(CUdeviceptr *, void *, void *);
    bool legacy_ipc; /* the driver's IPC handles and address ranges */
    CUresult (*MemGetAddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
    CUresult (*IpcGetMemHandle)(CUipcMemHandle *, CUdeviceptr);
    CUresult (*IpcOpenMemHandle)(CUdeviceptr *, CUipcMemHandle, unsigned);
    CUresult (*IpcCloseMemHandle)(CUdeviceptr);
    CUresult (*MemGetInfo)(size_t *, size_t *); /* optional */
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*PointerGetAttribute)(void *, int, CUdeviceptr);
    CUresult (*EventCreate)(void **, unsigned);
    CUresult (*EventDestroy)(void *);
    CUresult (*EventRecord)(void *, CUstream);
    CUresult (*EventSynchronize)(void *);
    CUresult (*EventQuery)(void *);
    CUresult (*EventElapsedTime)(float *, void *, void *);
    CUresult (*StreamWaitEvent)(CUstream, void *, unsigned);
    CUresult (*MemHostAlloc)(void **, size_t, unsigned);
    CUresult (*MemFreeHost)(void *);
    CUresult (*MemAllocManaged)(CUdeviceptr *, size_t, unsigned); /* optional */
    CUresult (*MemHostRegister)(void *, size_t, unsigned);
    CUresult (*MemHostUnregister)(void *);
    CUresult (*GetErrorName)(CUresult, const char **);
    CUresult (*GetErrorString)(CUresult, const char **);
    bool graphs; /* the graph functions below were found (CUDA 11.4 and newer) */
    CUresult (*GraphCreate)(CUgraph *, unsigned);
    CUresult (*GraphDestroy)(CUgraph);
    CUresult (*GraphAddKernelNode)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                   const KernelNodeParams *);
    CUresult (*GraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*GraphExecKernelNodeSetParams)(CUgraphExec, CUgraphNode, const KernelNodeParams *);
    CUresult (*GraphLaunch)(CUgraphExec, CUstream);
    CUresult (*GraphExecDestroy)(CUgraphExec);
    bool graph_coop; /* cooperative kernel nodes (below) */
    CUresult (*GraphKernelNodeSetAttribute)(CUgraphNode, int, const void *);
};

struct kiln_cuda_module {
    CUmodule mod;
    CUfunction fn;
    CUfunction wide;  /* the entry named <entry>_wide, or NULL */
    int64_t wide_min; /* the fewest threads of a launch that takes it */
    int dyn_smem_max; /* the dynamic shared memory the function is set up for */
    int dev;          /* the device it is loaded on */
    bool coop;        /* launched cooperatively (kiln_cuda_module_set_cooperative) */
};

#endif
