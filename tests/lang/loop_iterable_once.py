# A for loop's iterable is evaluated once, as Python evaluates it: a body that writes what
# the iterable read (x[1] of a tuple written out, range(y[0])'s bound, the index of a
# slice) does not change the loop, while an array view is still read at each iteration, as
# NumPy's iteration reads it (hunt20 2); the rewritten loops' len/min/range are Python's
# builtins whatever the module or the kernel binds to those names (hunt20 3).
import numpy as np
import kiln as cuda


def min(a, b):  # a module-level helper that happens to be called min
    return a + b


@cuda.jit
def k(out, x, y, idx, z, w):
    j = 0
    for v in (x[0], x[1], x[2]):
        x[1] = 100.0
        out[j] = v
        j += 1
    for i in reversed(range(int(y[0]))):
        y[0] = 1
        out[j] = i
        j += 1
    for i, v in enumerate(range(int(y[1]), 10, 3)):
        y[1] = 9
        out[j] = v
        j += 1
    for v in x[idx[0]:idx[0] + 2]:
        idx[0] = 0
        out[j] = v
        j += 1
    for a, b in zip(z, w):
        out[j] = a * 10 + b
        j += 1
    len = 5
    for v in z:
        out[j] = v + len
        j += 1
    for v in x[0:2]:  # a view: the write to x[1] is seen, as in NumPy
        x[1] = -7.0
        out[j] = v
        j += 1


def python(x, y, idx, z, w):
    o = []
    for v in (x[0], x[1], x[2]):
        x[1] = 100.0
        o.append(v)
    for i in reversed(range(int(y[0]))):
        y[0] = 1
        o.append(i)
    for i, v in enumerate(range(int(y[1]), 10, 3)):
        y[1] = 9
        o.append(v)
    for v in x[idx[0]:idx[0] + 2]:
        idx[0] = 0
        o.append(v)
    for a, b in zip(z, w):
        o.append(a * 10 + b)
    for v in z:
        o.append(v + 5)
    for v in x[0:2]:
        x[1] = -7.0
        o.append(v)
    return o


def args():
    return (np.array([1.0, 2.0, 3.0]), np.array([5.0, 1.0]), np.array([1]), np.arange(2.0),
            np.arange(3.0))


def main():
    out = np.zeros(24)
    k[1, 1](out, *args())
    want = python(*args())
    print(out[:len(want)].tolist() == [float(v) for v in want], out[:len(want)].tolist())
