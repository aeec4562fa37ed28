# thread and block indices, grid, gridsize, warpsize and threadfence on the CPU target
import numpy as np
import kiln


@kiln.jit
def k(out):
    i = kiln.grid(1)
    if i < out.shape[0]:
        out[i, 0] = kiln.threadIdx.x
        out[i, 1] = kiln.blockIdx.x
        out[i, 2] = kiln.blockDim.x
        out[i, 3] = kiln.gridDim.x
        out[i, 4] = kiln.gridsize(1)
        out[i, 5] = kiln.warpsize
        kiln.threadfence()


def main():
    out = np.zeros((6, 6), np.int64)
    k[3, 2](out)
    print(out.tolist())
