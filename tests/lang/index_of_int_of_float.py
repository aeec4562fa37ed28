# int() of a float written straight into an index (a subscript's, an atomic's) converts
# without the trunc that keeps an integer's 0 a +0.0 when it becomes a float again
# (kiln_f2i64ix): truncation toward zero, -0.5 -> 0, -1.5 -> -1 (the last element), on
# float32 and float64; the same int() kept in a variable still reads back as +0.0
import math

import numpy as np
import kiln


@kiln.jit
def k(o, h, a, x, y):
    i = kiln.grid(1)
    if i < x.size:
        o[i] = a[int(x[i])] + 10.0 * a[int(y[i] * 2.0)]
        kiln.atomic.add(h, int(y[i] * 4.0), 1)
        j = int(x[i])
        o[x.size + i] = math.copysign(1.0, j)


def main():
    a = np.arange(8.0)
    x = np.array([-0.5, 0.9, 2.99, -1.5, 7.0], np.float64)
    y = np.array([0.25, -0.2, 1.5, -0.5, 3.9], np.float32)
    o = np.zeros(10)
    h = np.zeros(16, np.int32)
    k[1, 8](o, h, a, x, y)
    print(o.tolist())
    print(h.tolist())
