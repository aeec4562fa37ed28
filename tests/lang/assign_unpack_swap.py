# assignment, chained assignment, tuple unpacking and swaps
import numpy as np
import kiln


@kiln.jit
def k(out):
    a = b = 3
    x, y = 1.5, 2
    x, y = y, x
    (p, q), r = (1, 2), 3
    out[0], out[1] = x, y
    out[2] = a + b + p + q + r


def main():
    out = np.zeros(3)
    k[1, 1](out)
    print(out.tolist())
    print(k.inspect_types(file=False), end="")
