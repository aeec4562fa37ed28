# A Python int reached other than as a literal token keeps its value: a variable only ever
# assigned constants, a conditional expression, abs() or math.trunc() of a literal, and the
# operands of and/or compare exactly with narrow typed integers (as the literal does), and
# and/or/if-else test and give the unconverted value (Python's, and Numba's)
import math

import numpy as np
import kiln


@kiln.jit
def k(o, i16, u8, u64, i8, b):
    i = kiln.grid(1)
    if i < 1:
        x = 40000
        o[0] = i16[i] <= x
        y = x + 1
        o[1] = i16[i] < y
        n = -1
        o[2] = u64[i] > n
        o[3] = u8[i] > n
        o[4] = i16[i] <= (40000 if i == 0 else 1)
        o[5] = (256 and u8[i])
        o[6] = (256 or u8[i])
        o[7] = (u8[i] and 256)
        o[8] = (256 if b[i] else u8[i])
        o[9] = i16[i] <= abs(40000)
        o[10] = i8[i] == math.trunc(1e10)
        m = 7
        if b[i]:
            m = 70000
        o[11] = i16[i] < m


def main():
    o = np.zeros(12, np.int64)
    k[1, 1](o, np.array([2], np.int16), np.array([7], np.uint8), np.array([5], np.uint64),
            np.array([0], np.int8), np.array([True]))
    print(o.tolist())
