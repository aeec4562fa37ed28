# f(*t): a tuple unpacked into a call's positional arguments, as in Python: a tuple
# written out, a tuple-valued name or argument, a builtin's result (cmath.polar), mixed
# with other arguments, into device functions, builtins, complex() and range() (print(*t): tests/python/test_print.py)
import cmath

import numpy as np
import kiln


@kiln.jit(device=True)
def add3(a, b, c):
    return a + b * 10 + c * 100


@kiln.jit
def k(out, z, t):
    i = kiln.grid(1)
    if i < out.size:
        p = (1.0, 2.0, 3.0)
        w = complex(*cmath.polar(z[i]))
        out[i, 0] = add3(*p)
        out[i, 1] = add3(*t)
        out[i, 2] = add3(1.0, *(2.0, 3.0))
        out[i, 3] = w.real + w.imag
        out[i, 4] = max(*(i, 0.5))
        out[i, 5] = add3(i, *(7, 8))
        r = (1, 4)
        for j in range(*r):
            out[i, 5] += j * 1000


@kiln.jit
def of_tuples(out, t, a):
    # min and max of one tuple are of its items, as Numba lowers them
    u = (a[0], a[1], -2.5)
    one = (a[2],)
    out[0] = min(u)
    out[1] = max(u)
    out[2] = max(t)
    out[3] = min((a[1], 7.0))
    out[4] = max(one)


def main():
    out = np.zeros(5)
    of_tuples[1, 1](out, (3, 9, -4), np.array([1.5, 8.0, -6.0]))
    print("min/max of tuples:", out.tolist())
    z = np.array([1 + 1j, 2 - 3j, -0.5 + 0j])
    out = np.zeros((3, 6))
    k[1, 3](out, z, (4.0, 5.0, 6.0))
    for i in range(3):
        r, phi = cmath.polar(z[i])
        want = [321.0, 654.0, 321.0, r + phi, max(i, 0.5), i + 870.0 + 6000.0]
        print(i, np.allclose(out[i], want, rtol=1e-12, atol=0), out[i, :3].tolist())
