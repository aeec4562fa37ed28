/* dlpack.h: DLPack's structs (dlpack.h, ABI version 0.8), the exchange format
 * of GPU tensors; types only. */
#ifndef KILN_EXT_DLPACK_H
#define KILN_EXT_DLPACK_H

#include <stdint.h>

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

enum { DLPACK_CUDA = 2 }; /* kDLCUDA */

#endif
