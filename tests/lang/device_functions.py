# device functions: typed per call site, tuples of scalars, keyword and default arguments,
# an explicit device signature converting its arguments
import numpy as np
import kiln


@kiln.jit(device=True)
def scale(x, by=2):
    return x * by


@kiln.jit(device=True)
def minmax(a, b):
    if a < b:
        return a, b
    return b, a


@kiln.jit("float32(float32)", device=True)
def half(x):
    return x / 2


@kiln.jit
def k(out, f):
    out[0] = scale(3)
    out[1] = scale(3, by=5)
    lo, hi = minmax(9, 4)
    out[2] = lo * 10 + hi
    f[0] = scale(f[0], 0.5)
    f[1] = half(3)


def main():
    out = np.zeros(3, np.int64)
    f = np.array([8.0, 0.0], np.float32)
    k[1, 1](out, f)
    print(out.tolist(), f.tolist())
    print(k.inspect_types(file=False), end="")
