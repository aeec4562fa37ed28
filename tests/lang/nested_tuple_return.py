# A device function may return nested tuples of scalars (Numba's UniTuple of UniTuples), unpacked
# at the call or indexed; a function returning another's nested result inside a tuple.
import numpy as np
import kiln


@kiln.jit(device=True)
def minmax_pair(a, b):
    return (min(a, b), max(a, b)), (a + b, a - b)


@kiln.jit(device=True)
def deeper(a):
    p = minmax_pair(a, 2.0)
    return (p, a), 3


@kiln.jit
def k(a, out):
    i = kiln.grid(1)
    if i < a.shape[0]:
        (lo, hi), (s, d) = minmax_pair(a[i, 0], a[i, 1])
        out[i, 0] = lo + hi * 10 + s * 100 + d * 1000
        ((pp, q), r) = deeper(a[i, 0])
        out[i, 1] = pp[1][0] + q + r


def main():
    a = np.array([[3.0, 5.0], [-1.0, 0.5], [2.0, 2.0]])
    o = np.zeros((3, 2))
    k[1, 4](a, o)
    want = [[min(x, y) + max(x, y) * 10 + (x + y) * 100 + (x - y) * 1000, x + 2.0 + x + 3]
            for x, y in a.tolist()]
    print("nested tuple returns:", np.allclose(o, want))
