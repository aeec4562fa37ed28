# A float to a typed integer power is computed as Numba computes it: float32 stays float32
# (Numba's BinOpPower: "float32 ** int doesn't go through DP computations"; NumPy would
# give float64), by squarings and products in the float's type (int_power_impl), 1 / r in
# float64 for a negative power, pow() past 2**16; the results equal Numba's bit for bit
import math

import numpy as np
import kiln


@kiln.jit
def k(o32, o64, x32, x64, e32, e64, eu):
    i = kiln.grid(1)
    if i < x32.size:
        o32[i, 0] = x32[i] ** e32[i]
        o32[i, 1] = x32[i] ** e64[i]
        o32[i, 2] = x32[i] ** eu[i]
        o32[i, 3] = x32[i] ** np.int8(-3)
        o32[i, 4] = x32[i] ** 7
        o64[i, 0] = x64[i] ** e32[i]
        o64[i, 1] = x64[i] ** e64[i]
        o64[i, 2] = x64[i] ** eu[i]
        s = x32[i] * 0
        for j in range(4):
            s += x32[i] ** j        # stays float32: s is float32
        o64[i, 3] = s


def numba_pow(a, b, ft):
    """Numba's int_power_impl in type ft."""
    a = ft(a)
    r = ft(1)
    e = -b if b < 0 else b
    if e > 0x10000:
        return ft(math.pow(float(a), float(b)))
    while e:
        if e & 1:
            r = ft(r * a)
        e >>= 1
        a = ft(a * a)
    return ft(1.0 / float(r)) if b < 0 else r


def main():
    x32 = np.array([1.1, 0.7, -1.3, 2.9, 1.0001, -0.5], np.float32)
    x64 = x32.astype(np.float64) * 1.0000001
    e32 = np.array([5, -4, 13, 0, 70001, -3], np.int32)
    e64 = np.array([11, -1, 2, 19, -70001, 6], np.int64)
    eu = np.array([3, 17, 0, 9, 100000, 2], np.uint64)
    o32 = np.zeros((6, 5), np.float64)
    o64 = np.zeros((6, 4), np.float64)
    with np.errstate(over="ignore"):
        k[1, 8](o32, o64, x32, x64, e32, e64, eu)
        w32 = [[numba_pow(x, int(a), np.float32), numba_pow(x, int(b), np.float32),
                numba_pow(x, int(c), np.float32), numba_pow(x, -3, np.float32),
                numba_pow(x, 7, np.float32)] for x, a, b, c in zip(x32, e32, e64, eu)]
        w64 = [[numba_pow(x, int(a), np.float64), numba_pow(x, int(b), np.float64),
                numba_pow(x, int(c), np.float64)] for x, a, b, c in zip(x64, e32, e64, eu)]
        s = [sum((numba_pow(x, j, np.float32) for j in range(4)), np.float32(0)) for x in x32]
    print(np.array_equal(o32, np.array(w32, np.float64)), o32[:, :2].tolist())
    # past 2**16 the power is pow(), whose last bit may differ between libm and the GPU's
    w64 = np.array(w64)
    big = np.abs(np.stack([e32, e64, eu.astype(np.float64)], axis=1)) > 0x10000
    print(np.array_equal(o64[:, :3][~big], w64[~big]),
          np.allclose(o64[:, :3][big], w64[big], rtol=1e-15, atol=0), o64[~big[:, 0], 0].tolist())
    # the sum's last product may be contracted into an FMA on the GPU (as Numba-CUDA's is)
    print(np.allclose(o64[:, 3], np.array(s, np.float64), rtol=2.5e-7, atol=0),
          o64[:, 3].dtype, np.array_equal(o64[:, 3].astype(np.float32), o64[:, 3]))
