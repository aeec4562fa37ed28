# comparisons including chains, and/or short-circuit with Python's values
import numpy as np
import kiln


@kiln.jit(device=True)
def bump(c, i):
    c[i] += 1
    return c[i]


@kiln.jit
def k(out, c):
    x = 5
    out[0] = 1 < x < 10
    out[1] = 1 < x > 10
    out[2] = 0 < bump(c, 0) < 2 < bump(c, 1)
    out[3] = (0 or 7)
    out[4] = (3 and 0)
    out[5] = (2 and 9)
    out[6] = x > 3 or bump(c, 2) > 0
    out[7] = x < 3 and bump(c, 2) > 0


def main():
    out = np.zeros(8, np.int64)
    c = np.zeros(3, np.int64)
    k[1, 1](out, c)
    print(out.tolist(), c.tolist())
