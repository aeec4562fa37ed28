# rejected: kiln.const.array_like (Numba's cuda.const.array_like) takes a global NumPy array,
# whose elements are known when compiling; an argument's are not
import numpy as np
import kiln as cuda


@cuda.jit
def k(out, table):
    c = cuda.const.array_like(table)
    i = cuda.grid(1)
    if i < out.size:
        out[i] = c[i % 4]


def main():
    k[1, 8](np.zeros(8), np.arange(4.0))
