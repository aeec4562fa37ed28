/* ipc.h: GPU memory shared between processes, as bytes (ipc.c). */
#ifndef KILN_EXT_IPC_H
#define KILN_EXT_IPC_H

#include "state.h"

enum {
    /* pools imported from other processes that one process keeps (one per exporting
     * process and device); one more is an error that says so (docs/limits.md) */
    EXT_IPC_POOLS = 64,
};

/* ipc_export(ptr) -> (handle bytes, offset, allocation bytes, device);
 * ipc_open(handle bytes) -> (ptr, device, kind to close or 0, allocation bytes);
 * ipc_close(kind, device, ptr); mem_info(device) -> (free, total) */
extern PyMethodDef ext_ipc_functions[];

#endif
