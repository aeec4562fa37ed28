# rejected, with the reason: an int64 times a uint64 is float64 (NumPy's promotion; Numba
# gives int64), so an index computed from a uint64 parameter is a float; the hint says where
# the float came from and what to convert (a k-means kernel with uint64 sizes, hunt25 5)
import numpy as np
import kiln


@kiln.jit("void(float64[:], uint64)")
def k(a, d):
    g = kiln.grid(1)
    gid = g * d
    a[gid + 1] = 1.0


def main():
    k[1, 4](np.zeros(8), np.uint64(1))
