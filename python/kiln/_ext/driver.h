/* driver.h: the CUDA driver as the extension uses it (driver.c). */
#ifndef KILN_EXT_DRIVER_H
#define KILN_EXT_DRIVER_H

#include "errors.h"

/* The "device" of host-backed device arrays, streams and events: with
 * KILN_TARGET=cpu, kiln's device API (to_device, device_array, stream, event...)
 * works on host memory, as Numba's simulator does (docs/cpu-device-api.md).  The
 * Python package picks it (kiln/_cuda.py); every function of devarray.c, stream.c
 * and host.c that takes a device ordinal serves it without the driver. */
enum { EXT_HOST_DEVICE = -1 };

/* Opens CUDA if needed; NULL with CudaError set when no GPU can be used. */
kiln_cuda *ext_cuda(ModState *st);
/* Raises kiln.CudaError for a CUresult; returns NULL. */
PyObject *ext_cuda_error(ModState *st, int rc, const char *what);
/* A failed launch of module m: ext_cuda_error's, except a cooperative grid too large to be
 * resident (KILN_CUDA_COOP_TOO_LARGE), which is a ValueError naming the most blocks. */
PyObject *ext_cuda_launch_error(ModState *st, int rc, kiln_cuda_module *m, const int64_t grid[3],
                                const int64_t block[3], unsigned shmem);
/* Makes device dev current on this thread; -1 with an exception set. */
int ext_use_device(ModState *st, int dev);
/* The driver, with device dev current on this thread; NULL with an exception set. */
kiln_cuda *ext_cuda_on(ModState *st, int dev);
/* Reports (and clears) an error that a kernel recorded on device dev: -1 with
 * the exception set, 0 when there was none.  Synchronises the device. */
int ext_check_kernel_error(ModState *st, int dev);
/* The device pointer of device dev's error record, allocating it at first use. */
int ext_errbuf(ModState *st, int dev, uint64_t *ptr);

/* Dynamic shared memory every CUDA GPU gives a block (48 KiB); a launch that
 * asks for more is checked against its device's limit first. */
enum { EXT_SHARED_ALWAYS = 48 * 1024 };
/* 0 if a block on device dev may have bytes of dynamic shared memory (as far as
 * the driver says: a kernel's static shared arrays count against the same
 * limit); -1 with a ValueError that states the limit and the request. */
int ext_check_shared(ModState *st, int dev, int64_t bytes);

/* cuda_available, cuda_info, select_device, current_device, synchronize */
extern PyMethodDef ext_driver_functions[];

#endif
