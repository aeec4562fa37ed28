# math.floor/ceil/trunc of a typed integer are int64 (uint64 for an unsigned one) and
# round() of one is int64, as Numba types them, so a narrow integer does not wrap after:
# floor(int8 100) + 100 is 200, not -56
import math

import numpy as np
import kiln


@kiln.jit
def k(o, x8, u8, b, u64):
    o[0] = math.floor(x8[0]) + 100
    o[1] = math.ceil(x8[0]) + 100
    o[2] = math.trunc(x8[0]) + 100
    o[3] = round(x8[0]) + 100
    o[4] = math.floor(u8[0]) + 200
    o[5] = math.floor(b[0]) + 1
    r = math.floor(u64[0])
    o[6] = r


def main():
    o = np.zeros(7, np.int64)
    k[1, 1](o, np.array([100], np.int8), np.array([200], np.uint8), np.array([True]),
            np.array([5], np.uint64))
    print(o.tolist())
    print([l.strip() for l in k.inspect_types(file=False).splitlines()
           if l.strip().startswith("r:")])
