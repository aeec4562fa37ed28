# signatures built from type objects, as Numba spells them: calling a type, tuples of
# argument types, kiln.types.Array; explicit signatures resolved by the conversions
# they need, and an ambiguous choice refused naming the candidates
import numpy as np
import kiln
from kiln import types


@kiln.jit(types.float64(types.float64, types.float64), device=True)
def hyp(a, b):
    return (a * a + b * b) ** 0.5


@kiln.jit([kiln.void(types.Array(kiln.float64, 1, "C"), kiln.float64, kiln.float64),
           (kiln.float64[::1], kiln.float32, kiln.float32),
           kiln.void(kiln.int64[:], kiln.int64, kiln.int32)])
def k(r, x, y):
    r[0] = hyp(x, y)


def add(r, x, y):
    r[0] = x + y


def main():
    r = np.zeros(1)
    k[1, 1](r, 3.0, 4.0)
    print(r.tolist(), k.signatures)
    k[1, 1](r, np.float32(6), np.float32(8))
    print(r.tolist(), k.signatures)
    ri = np.zeros(1, np.int64)
    k[1, 1](ri, 5, np.int32(12))
    print(ri.tolist())
    a = kiln.jit(["(float64[::1], float32, float64)", "(float64[::1], float64, float32)",
                  "(float64[::1], int64, int64)"])(add)
    a[1, 1](r, 1, 2)
    print(r.tolist())
    try:
        a[1, 1](r, 1.0, 2.0)
    except TypeError as e:
        print("TypeError:", str(e).replace(hex(id(add)), "0x..."))
    v = kiln.vectorize([kiln.float32(kiln.float32, kiln.float32)])(lambda x, y: x - y)
    print(v(np.ones(3, np.float32), np.float32(0.5)).tolist())
