# math.ldexp, math.frexp and math.modf in both float widths: values as Python's math gives
# them, with inf and NaN (frexp's exponent is 0 there, as in Python), huge exponents for
# ldexp, and the parts unpacked straight into arrays
import math

import numpy as np
import kiln


@kiln.jit
def k(m, e, fr, ip, x, n):
    m[0], e[0] = math.frexp(x)
    fr[0], ip[0] = math.modf(x)
    m[1] = math.ldexp(x, n)
    t = math.frexp(x)
    m[2] = math.ldexp(t[0], t[1])  # round trip


def py(x, n):
    try:
        ld = math.ldexp(x, n)
    except OverflowError:
        ld = math.copysign(math.inf, x)
    return math.frexp(x), math.modf(x), ld


def main():
    for dt in (np.float64, np.float32):
        for x, n in [(3.1415, 2), (-0.5, -3), (1e-300, 10), (math.inf, 1), (-math.inf, 5),
                     (math.nan, 1), (0.0, 7), (-2.75, 10**9), (1.5, -10**9)]:
            m, fr, ip = np.zeros(3, dt), np.zeros(1, dt), np.zeros(1, dt)
            e = np.zeros(1, np.int32)
            xd = dt(x)
            k[1, 1](m, e, fr, ip, xd, n)
            (pm, pe), (pf, pi), pl = py(float(xd), n)
            want = [dt(pm), pe, dt(pf), dt(pi), dt(pl), xd]
            got = [m[0], e[0], fr[0], ip[0], m[1], m[2]]
            ok = all(g == w or (math.isnan(g) and math.isnan(w)) for g, w in zip(got, want))
            print(np.dtype(dt).name, x, n, ok, [float(v) for v in got])
