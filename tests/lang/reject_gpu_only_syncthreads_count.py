# rejected: syncthreads_count (like syncthreads_and and syncthreads_or) on the CPU target
import numpy as np
import kiln


@kiln.jit
def k(a, out):
    i = kiln.grid(1)
    out[i] = kiln.syncthreads_count(a[i] > 0)


def main():
    k[1, 4](np.zeros(4), np.zeros(4, np.int32))
