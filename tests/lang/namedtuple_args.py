# namedtuples in kernels: passed as arguments (Numba's test_namedtuple and
# test_namedunituple), nested in tuples and in one another, and made in kernels by calling
# the class (by position or field name); fields read by name and by index, passed to device
# functions.  Then the errors: a missing field, an unknown one, a field the type lacks.
from collections import namedtuple

import numpy as np
import kiln

Point = namedtuple("Point", ("x", "y", "r"))
Pair = namedtuple("Pair", ("a", "b"))


@kiln.jit(device=True)
def norm2(p):
    return p.x * p.x + p.y * p.y


def k(out, p, q):
    out[0] = p.x
    out[1] = p[1]
    out[2] = p.r
    out[3] = norm2(p)
    out[4] = q[0].a.x + q[0].b + q[1]
    made = Pair(b=p.r, a=Point(q[1], 2, 0.5))
    out[5] = made.a.x + made.a[2] + made.b


def missing(out):
    out[0] = Pair(1).a


def unknown(out):
    out[0] = Pair(1, c=2).a


def no_field(out, p):
    out[0] = p.z


def main():
    out = np.zeros(6)
    kiln.jit(k)[1, 1](out, Point(3, 4, 2.5), (Pair(Point(1, 1, 1), 2.0), 7))
    print(out.tolist())
    for f, args in ((missing, ()), (unknown, ()), (no_field, (Point(1, 2, 3),))):
        try:
            kiln.jit(f)[1, 1](np.zeros(1), *args)
        except kiln.CompileError as e:
            print(str(e).splitlines()[0].split("error: ")[1])
