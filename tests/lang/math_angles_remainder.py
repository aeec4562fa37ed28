# math.degrees/radians (and NumPy's degrees, radians, rad2deg, deg2rad), math.remainder
# (IEEE: the nearest multiple, ties to even, NaN for 0/0) and math/np.nextafter, both
# float widths, against Python's math and NumPy.  Angles are x times the ratio rounded to
# x's width, as Numba computes them (NumPy's float32 loop rounds differently in the last bit)
import math

import numpy as np
import kiln


@kiln.jit
def k(out, x, y, i, j):
    out[0] = math.degrees(x)
    out[1] = math.radians(x)
    out[2] = np.rad2deg(x) - np.degrees(x)
    out[3] = np.deg2rad(x) - np.radians(x)
    out[4] = math.remainder(x, y)
    out[5] = math.remainder(i, j)
    out[6] = math.nextafter(x, y)
    out[7] = np.nextafter(x, 0.0)


def check(dt, x, y, i, j):
    out = np.zeros(8, dt)
    x, y = dt(x), dt(y)
    k[1, 1](out, x, y, i, j)
    want = [x * dt(180 / math.pi), x * dt(math.pi / 180), 0, 0, math.remainder(x, y),
            math.remainder(i, j) if j else math.nan, np.nextafter(x, y), np.nextafter(x, dt(0))]
    got = [dt(v) for v in out]
    same = [g == dt(w) or (math.isnan(g) and math.isnan(w)) for g, w in zip(got, want)]
    print(np.dtype(dt).name, all(same), [float(v) for v in got[4:6]])


def main():
    check(np.float64, 1.25, 0.5, 7, 2)
    check(np.float64, -3.0, 2.0, 0, 0)
    check(np.float32, 2.5, 1.0, 5, 2)
    check(np.float32, 1e-30, -1.0, -9, 4)
    print(k.inspect_types(file=False), end="")
