# rejected: syncthreads on the CPU target
import numpy as np
import kiln


@kiln.jit
def k(a):
    kiln.syncthreads()


def main():
    k[1, 1](np.zeros(4))
