# rejected: raise with an argument computed in the kernel (an exception takes constants)
import numpy as np
import kiln


@kiln.jit
def k(a):
    raise ValueError(a[0])


def main():
    k[1, 1](np.zeros(4))
