# numpy.fmod of integers is NumPy's integer loop: the remainder with the dividend's sign, of
# the operands' promoted type (int8 for two bools), 0 for a zero divisor (math.fmod stays
# a float, as in Python); Numba-CUDA types np.fmod of ints the same way
import math

import numpy as np
import kiln


@kiln.jit
def k(o, f, a, b, u, bb):
    i = kiln.grid(1)
    if i < a.size:
        o[i, 0] = np.fmod(a[i], b[i])
        o[i, 1] = np.fmod(u[i], 7)
        o[i, 2] = np.fmod(bb[i], bb[i])
        o[i, 3] = np.fmod(a[i], -3)
        f[i] = math.fmod(a[i], 4)


@kiln.jit
def typed(o8, o16, a8, a16):
    i = kiln.grid(1)
    if i < a8.size:
        o8[i] = np.fmod(a8[i], np.int8(5))
        o16[i] = np.fmod(a16[i], a8[i])


def main():
    a = np.array([-9, 9, 20, -20, 7, -2**63], np.int64)
    b = np.array([7, -7, 0, 6, -1, -1], np.int64)
    u = np.array([200, 3, 2**64 - 1, 0, 14, 1], np.uint64)
    bb = np.array([True, False, True, False, True, True])
    o = np.zeros((6, 4), np.int64)
    f = np.zeros(6)
    k[1, 8](o, f, a, b, u, bb)
    with np.errstate(divide="ignore"):
        want = np.stack([np.fmod(a, b), np.fmod(u, 7).astype(np.int64), np.fmod(bb, bb),
                         np.fmod(a, -3)], axis=1)
    print(o.tolist() == want.tolist(), o.tolist())
    print(f.tolist() == [math.fmod(x, 4) for x in a.tolist()], f.tolist())
    a8 = np.array([-128, 127, -5, 9], np.int8)
    a16 = np.array([-300, 301, 7, -7], np.int16)
    o8, o16 = np.zeros(4, np.int8), np.zeros(4, np.int16)
    typed[1, 4](o8, o16, a8, a16)
    print(o8.tolist() == np.fmod(a8, np.int8(5)).tolist(), o16.tolist() == np.fmod(a16, a8).tolist())
