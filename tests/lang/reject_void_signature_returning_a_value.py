# rejected: a device function whose signature says void returns a value (Numba: a typing
# error); a bare `return` and running off the end stay void
import numpy as np
import kiln


@kiln.jit("void(float64[:], int64)", device=True)
def fine(a, i):
    a[i] = 2.0
    return


@kiln.jit("void(float32)", device=True)
def doubled(x):
    return x * 2


@kiln.jit
def k(a):
    fine(a, 0)
    a[1] = doubled(1.5)


def main():
    k[1, 1](np.zeros(4))
