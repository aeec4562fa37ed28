# a run-time index into a tuple is checked always (tuples are small, the check is
# cheap): out of range it is an IndexError naming the line, the index and the length,
# where it read item 0, even with debug=True.  Negative indices wrap as in Python.
# A global tuple of 30,000 items compiles to one static array, in a second (gcc
# took minutes on the whole tuple written at each use).
import numpy as np
import kiln

PRIMES = (2, 3, 5, 7, 11)
BIG = tuple(float(i) * 0.5 for i in range(29998)) + (float("inf"), float("nan"))


@kiln.jit
def local_tuple(a, i):
    t = (10, 20, 30)
    a[0] = t[i]


@kiln.jit(debug=True)
def local_tuple_debug(a, i):
    t = (10, 20, 30)
    a[0] = t[i]


@kiln.jit
def global_tuple(a, i):
    a[0] = PRIMES[i] + PRIMES[-1]


@kiln.jit
def big_tuple(a, idx):
    j = kiln.grid(1)
    if j < idx.size:
        a[j] = BIG[idx[j]] + BIG[3] + len(BIG)


@kiln.jit
def as_value(a, i):
    t = PRIMES
    x, y, z, u, v = PRIMES
    a[0] = t[i] + x + v


def attempt(k, *args, grid=1):
    try:
        k[grid, 1](*args)
        print(k.__name__, "ok", args[0].tolist()[:4])
    except Exception as e:
        print(f"{k.__name__} {type(e).__name__}: {e}")


def main():
    a = np.zeros(1, np.int64)
    for i in (0, 2, -1, -3, 3, -4, 1 << 40):
        attempt(local_tuple, a, i)
    attempt(local_tuple_debug, a, 3)
    for i in (4, -5, 5, -6):
        attempt(global_tuple, a, i)
    idx = np.array([0, 1, 29997, -2, 12345], np.int64)
    out = np.zeros(5)
    attempt(big_tuple, out, idx, grid=5)
    print((out == np.array([BIG[i] for i in idx]) + 1.5 + 30000).all())
    attempt(big_tuple, out, np.array([-1]), grid=1)
    attempt(big_tuple, out, np.array([30000]), grid=1)
    attempt(as_value, a, 4)
    attempt(as_value, a, 5)
