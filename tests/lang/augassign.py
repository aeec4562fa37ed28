# augmented assignment on variables and array elements, with every operator
import numpy as np
import kiln


@kiln.jit
def k(a, f):
    v = 100
    v += 5
    v -= 2
    v *= 3
    v //= 4
    v %= 50
    v **= 2
    v <<= 1
    v >>= 2
    v &= 0xFF
    v |= 0x100
    v ^= 3
    a[0] = v
    a[1] += 7
    a[2] -= 7
    f[0] /= 4
    f[1] += 0.5


def main():
    a = np.array([1, 2, 3])
    f = np.array([10.0, 1.0])
    k[1, 1](a, f)
    print(a.tolist(), f.tolist())
