# int() and math.trunc/floor/ceil of a float give an int64, so a result of 0 reads back as
# +0.0 (x / math.trunc(x) for x in (-1, 0) is -inf, as in Python and Numba: the C compiler
# would otherwise fold (double)(long)trunc(x) into trunc(x), which keeps -0.0); int() of a
# uint64 keeps its value (Numba types it uint64)
import math

import numpy as np
import kiln


@kiln.jit
def k(o, x, u):
    i = kiln.grid(1)
    if i < 1:
        o[0] = x[i] / math.trunc(x[i])
        o[1] = x[i] / int(x[i])
        o[2] = math.copysign(1.0, math.trunc(x[i]))
        o[3] = math.copysign(1.0, math.ceil(x[i]))
        o[4] = float(int(u[i]))
        o[5] = int(u[i]) > 0


def main():
    o = np.zeros(6)
    k[1, 1](o, np.array([-0.25]), np.array([2**64 - 2], np.uint64))
    print(o.tolist())
