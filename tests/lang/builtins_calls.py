# abs, min, max, int, float, bool, round, len and dtype constructors
import numpy as np
import kiln


@kiln.jit
def k(out, a):
    out[0] = abs(-3)
    out[1] = min(4, 2, 8)
    out[2] = max(1.5, -2, 3)
    out[3] = int(7.9)
    out[4] = int(-7.9)
    out[5] = float(3)
    out[6] = bool(0.0)
    out[7] = round(2.5)
    out[8] = round(3.5)
    out[9] = round(2.675, 2)
    out[10] = len(a)
    out[11] = kiln.float32(0.1)
    out[12] = np.int8(100) + np.int8(100)
    out[13] = kiln.uint8(300 - 100)


@kiln.jit
def round_big(out, x, nd):
    # x * 10**nd past float64's range: x is returned unchanged, as Python does
    out[0] = round(x[0], nd)
    out[1] = round(x[1], nd)


def main():
    out = np.zeros(14)
    k[1, 1](out, np.zeros((6, 2)))
    print(out.tolist())
    for dt in (np.float32, np.float64):
        big = np.array([np.finfo(dt).max, -np.finfo(dt).max / 3], dt)
        r = np.zeros(2, dt)
        round_big[1, 1](r, big, 300)
        print(dt.__name__, (r == big).all(), r[0] == round(float(big[0]), 300))
