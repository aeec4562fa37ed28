# a device function with several explicit signatures: each call from a kernel takes the one
# needing the fewest unsafe conversions, then the fewest safe ones, the first on a tie (as
# Numba resolves them); the chosen signature converts the arguments and sets the return
# type; a call no signature accepts is refused, naming its argument types
import numpy as np
import kiln


def add(x, y):
    return x + y


f = kiln.jit(["(int64, int64)", "float64(float64, float64)", "(float32, float32)"],
             device=True)(add)


@kiln.jit
def k(r, a, b, c):
    r[0] = f(1, 2)            # int64: exact
    r[1] = f(1.5, 2)          # float64: one exact, one safe
    r[2] = f(a, a)            # float32 arguments: the float32 signature, exact
    r[3] = f(b, b)            # int32: int64 safe, float64 safe: the first
    r[4] = f(c, 1.0)          # uint64, Python float: float64
    r[5] = f(a, 2.0 ** -25)   # float32 and a Python float: float64 keeps the small part


only_ints = kiln.jit(["(int32, int32)"], device=True)(add)


@kiln.jit
def truncates(r):
    r[0] = only_ints(1.75, 2.75)   # unsafe, but the only one: truncated


@kiln.jit(["(int64[:], int64)"], device=True)
def first(a, i):
    return a[i]


@kiln.jit
def refused(r, x):
    r[0] = first(x, 0)


def main():
    r = np.zeros(6)
    k[1, 1](r, np.float32(1), np.int32(3), np.uint64(4))
    print(r.tolist())
    print(sorted(f.overloads))
    t = np.zeros(1)
    truncates[1, 1](t)
    print(t.tolist())
    try:
        refused[1, 1](np.zeros(1), np.zeros(3, np.float32))
    except kiln.CompileError as e:
        print(f"CompileError: {e}")
