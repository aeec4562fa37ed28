# unary - + ~ not, & | ^ << >> (shifts past the width give 0, as NumPy)
import numpy as np
import kiln


@kiln.jit
def k(out, x, s):
    out[0] = -x
    out[1] = +x
    out[2] = ~x
    out[3] = not x
    out[4] = x & 6
    out[5] = x | 8
    out[6] = x ^ 5
    out[7] = x << s
    out[8] = x >> 1
    out[9] = 1 << 70 - s * 0 if s > 100 else x << 64


def main():
    out = np.zeros(10, np.int64)
    k[1, 1](out, 12, 2)
    print(out.tolist())
