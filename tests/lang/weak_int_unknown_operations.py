# A Python int whose value kiln cannot know (here w, -1 or a product computed in a loop) is
# int64 when it meets a narrower typed integer, as Numba types it, in // % << >> as in
# + - * and min/max: w // u32[i] is Python's -1 // d, not (uint32)(-1) // d (a known value
# is range-checked instead, as NumPy does).  int() and math.ceil of NaN, inf and floats
# past int64 are x86's INT64_MIN, the same on tier 0 and in the optimised build
# (tests/python/test_tiers.py runs every case through both)
import math

import numpy as np
import kiln


@kiln.jit
def k(o, u32, u8, f):
    i = kiln.grid(1)
    if i < u32.size:
        y = 1
        for _ in range(u8[i]):
            y *= 70000
        w = -1 if u8[i] < 100 else y  # -1 at run time, a value kiln cannot know
        o[i, 0] = w // u32[i]
        o[i, 1] = w % u32[i]
        o[i, 2] = (w >> u8[i]) & 0xFF
        o[i, 3] = int(f[i])
        o[i, 4] = math.ceil(f[i])


def main():
    u32 = np.array([2147483648, 5, 7], np.uint32)
    u8 = np.array([1, 0, 3], np.uint8)
    f = np.array([np.nan, np.inf, 1e19])
    o = np.zeros((3, 5), np.int64)
    k[1, 4](o, u32, u8, f)
    w = -1  # Python's integers
    want = [[w // int(d), w % int(d), (w >> int(s)) & 0xFF, -2**63, -2**63]
            for d, s in zip(u32, u8)]
    print(o.tolist() == want, o[:, 3].tolist())
