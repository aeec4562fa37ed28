# `x in (a, b, c)` and `not in` over a tuple written out: (x == a) or ... as Python compares,
# with a typed left side, Python numbers and floats in the tuple, an empty tuple, and a long
# tuple (a balanced tree of or); diffed against Python's own `in`.
import numpy as np
import kiln

PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83,
          89, 97)


@kiln.jit
def member(a, f, out):
    i = kiln.grid(1)
    if i < a.size:
        out[i, 0] = a[i] in (1, 3, 5)
        out[i, 1] = a[i] not in (1, 3, 5)
        out[i, 2] = a[i] in ()
        out[i, 3] = a[i] not in ()
        out[i, 4] = f[i] in (0.5, 1.5, 2.0)
        out[i, 5] = a[i] in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61,
                             67, 71, 73, 79, 83, 89, 97)
        if a[i] % 10 in (0, 5) and a[i] > 0:
            out[i, 6] = 1


def main():
    a = np.arange(-3, 100, dtype=np.int32)
    f = (np.arange(a.size) % 5 * 0.5).astype(np.float32)
    out = np.zeros((a.size, 7), np.int64)
    member[(a.size + 63) // 64, 64](a, f, out)
    want = np.array([[x in (1, 3, 5), x not in (1, 3, 5), False, True, y in (0.5, 1.5, 2.0),
                      x in PRIMES, x % 10 in (0, 5) and x > 0] for x, y in zip(a.tolist(), f.tolist())])
    print("in and not in:", bool((out == want).all()))
