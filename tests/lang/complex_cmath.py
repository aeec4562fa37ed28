# cmath's functions against Python's cmath, special values (zeros of both signs, infinities,
# NaN) included: complex128 within 4 ulp, complex64 within float32's precision; a value
# cmath refuses (ValueError) is left out, and a NaN in both results is a match whatever the
# other part, as in Numba's own tests (assertPreciseEqual)
import cmath
import itertools
import math
import numpy as np
import kiln

NAMES = ["exp", "log", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
         "cosh", "tanh", "asinh", "acosh", "atanh", "phase", "rect", "isnan", "isinf",
         "isfinite", "log_base", "polar"]


@kiln.jit
def funcs(z, w, out):
    i = kiln.grid(1)
    if i < z.size:
        x = z[i]
        out[i, 0] = cmath.exp(x)
        out[i, 1] = cmath.log(x)
        out[i, 2] = cmath.log10(x)
        out[i, 3] = cmath.sqrt(x)
        out[i, 4] = cmath.sin(x)
        out[i, 5] = cmath.cos(x)
        out[i, 6] = cmath.tan(x)
        out[i, 7] = cmath.asin(x)
        out[i, 8] = cmath.acos(x)
        out[i, 9] = cmath.atan(x)
        out[i, 10] = cmath.sinh(x)
        out[i, 11] = cmath.cosh(x)
        out[i, 12] = cmath.tanh(x)
        out[i, 13] = cmath.asinh(x)
        out[i, 14] = cmath.acosh(x)
        out[i, 15] = cmath.atanh(x)
        out[i, 16] = cmath.phase(x)
        out[i, 17] = cmath.rect(x.real, x.imag)
        out[i, 18] = cmath.isnan(x)
        out[i, 19] = cmath.isinf(x)
        out[i, 20] = cmath.isfinite(x)
        out[i, 21] = cmath.log(x, w[i])
        r, p = cmath.polar(x)
        out[i, 22] = complex(r, p)


def expected(name, z, w):
    if name == "log_base":
        return cmath.log(z, w)
    if name == "rect":
        return cmath.rect(z.real, z.imag)
    if name == "polar":
        return complex(*cmath.polar(z))
    return getattr(cmath, name)(z)


def close(got, want, eps, ulps):
    if cmath.isnan(got) and cmath.isnan(want):
        return True
    for g, e in ((got.real, want.real), (got.imag, want.imag)):
        if math.isnan(e):
            if not math.isnan(g):
                return False
        elif math.isinf(e) or e == 0:
            if g != e:
                return False
        elif abs(g - e) > ulps * eps * max(abs(e), 1e-300):
            return False
    return True


def main():
    reals = [-0.0, 0.0, 1.0, -1.0, 1.5, -3.5, math.pi, -math.pi, 1e-3, 5e-324, -3e-320, float("inf"),
             float("-inf"), float("nan")]
    values = [complex(x, y) for x, y in itertools.product(reals, reals)]
    for dt, eps, ulps in ((np.complex128, 2.0 ** -52, 4), (np.complex64, 2.0 ** -23, 4)):
        z = np.array(values, dt)
        w = np.roll(z, 5)
        out = np.zeros((z.size, len(NAMES)), np.complex128)
        funcs[1, z.size](z, w, out)
        bad = {}
        for j, name in enumerate(NAMES):
            for i in range(z.size):
                # what the kernel computed from: the inputs rounded to dt
                zi, wi = complex(z[i]), complex(w[i])
                try:
                    want = complex(expected(name, zi, wi))
                except (ValueError, ZeroDivisionError, OverflowError):
                    continue
                if dt == np.complex64:
                    want = complex(np.complex64(want))
                if name == "tanh" or name == "tan" or name == "atanh":
                    # zeros' signs may differ, as upstream allows (ignore_sign_on_zero)
                    want = complex(want.real or 0.0, want.imag or 0.0)
                    got = complex(out[i, j].real or 0.0, out[i, j].imag or 0.0)
                else:
                    got = complex(out[i, j])
                if not close(got, want, eps, ulps):
                    bad.setdefault(name, []).append((zi, got, want))
        print(np.dtype(dt).name, "functions off:", sorted(bad) or "none")
        for name, cases in sorted(bad.items()):
            for zi, got, want in cases[:3]:
                print("   ", name, zi, got, want)
