# rejected: a shared array's shape that is not a constant; the message adds Numba's words for
# the same rejection ("No implementation of function Function(<function shared.array>) found
# for signature: ... array(shape=..., dtype=...)") with the arguments in Numba's type names,
# for code written against Numba's messages
import numpy as np
import kiln


@kiln.jit
def k(a):
    sa = kiln.shared.array(shape=(1, a[0]), dtype=kiln.float32)
    i, j = kiln.grid(2)
    a[i, j] = sa[i, j]


def main():
    k[1, 1](np.zeros((2, 2), np.float32)[:, ::2])
