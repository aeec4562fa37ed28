# Without fastmath the CPU rounds after each operation, as NumPy and Numba do: a * b + c is
# not contracted into one fused multiply-add (whose single rounding gives -2**-60 here);
# with fastmath=True the C compiler may fuse it
import numpy as np
import kiln


@kiln.jit
def k(o, a, b, c):
    i = kiln.grid(1)
    if i < a.size:
        o[i] = a[i] * b[i] + c[i]


def main():
    n = 64
    a = np.full(n, 1 + 2.0**-30)
    b = np.full(n, 1 - 2.0**-30)
    c = np.full(n, -1.0)
    o = np.ones(n)
    k[1, n](o, a, b, c)
    print("rounded after each operation:", bool((o == a * b + c).all()), o[0])
