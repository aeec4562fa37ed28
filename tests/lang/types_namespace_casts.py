# kiln.types.NAME(x) in a kernel (Numba's cuda.types.float16(1.0)) is kiln.NAME(x): the
# types namespace under kiln names the same scalar types
import math

import numpy as np
import kiln


@kiln.jit
def casts(r):
    x = kiln.types.float16(1.0)
    r[0] = math.sin(x)
    r[1] = kiln.types.int32(2.7)
    r[2] = kiln.types.float32(0.1) + kiln.float32(0.2)
    r[3] = kiln.types.uint8(300 % 256)


def main():
    r = np.zeros(4, np.float32)
    casts[1, 1](r)
    print(r.tolist())
    print(r[0] == np.float32(np.sin(np.float16(1.0))))
