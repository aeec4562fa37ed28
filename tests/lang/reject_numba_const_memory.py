# rejected: Numba names kiln does not have inside kernels say what to write instead
import numpy as np
import kiln as cuda

TABLE = np.arange(4.0)


@cuda.jit
def k(out):
    c = cuda.const.array_like(TABLE)
    i = cuda.grid(1)
    if i < out.size:
        out[i] = c[i % 4]


def main():
    k[1, 8](np.zeros(8))
