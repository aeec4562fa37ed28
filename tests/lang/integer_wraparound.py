# integer overflow wraps (two's complement), as NumPy's does
import numpy as np
import kiln


@kiln.jit
def k(a, b):
    a[0] = a[0] + 1
    a[1] = a[1] * 2
    b[0] = b[0] - 1


def main():
    a = np.array([127, 100], np.int8)
    b = np.array([0], np.uint16)
    k[1, 1](a, b)
    print(a.tolist(), b.tolist())
