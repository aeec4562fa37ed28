# rejected: a.reshape() of an array that is not C-contiguous (a view of it in C order would
# need a copy; NumPy copies, a kernel cannot allocate)
import numpy as np
import kiln


@kiln.jit
def k(a, out):
    v = a.reshape(6)
    out[0] = v[0]


def main():
    k[1, 1](np.zeros((2, 3), order="F"), np.zeros(1))
