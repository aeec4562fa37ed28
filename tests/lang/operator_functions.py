# the operator module's binary operators as functions: passed as values (as Numba's tests
# do) or called through the module, typed and computed as the operator itself
import operator
from operator import floordiv

import numpy as np
import kiln

OPS = (operator.add, operator.sub, operator.mul, operator.truediv, floordiv, operator.mod,
       operator.pow, operator.iadd)


def make(op):
    @kiln.jit
    def k(a, b):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = op(a[i], b[i])
    return k


@kiln.jit
def bits(out, x, y):
    out[0] = operator.and_(x, y) + operator.or_(x, y) + operator.xor(x, y)
    out[1] = operator.lshift(x, 2) - operator.rshift(y, 1)
    out[2] = operator.mul(np.float16(1.5), np.float16(3))


@kiln.jit
def unknown(out, x):
    out[0] = operator.lt(x, x)


def main():
    b = np.array([2.0, -3.0, 0.5, 7.0])
    for op in OPS:
        a = np.array([1.5, 4.0, -2.0, 3.0])
        with np.errstate(all="ignore"):
            want = op(a.copy(), b)
        make(op)[1, 4](a, b)
        print(op.__name__, a.tolist(), np.array_equal(a, want, equal_nan=True))
    out = np.zeros(3, np.int64)
    bits[1, 1](out, 12, 10)
    print(out.tolist())
    print(bits.inspect_types(file=False), end="")
    unknown[1, 1](np.zeros(1), 1.0)
