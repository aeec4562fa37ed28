# bad calls: argument count, unsupported objects, dtypes outside a signature, read-only writes
import numpy as np
import kiln


@kiln.jit
def k(a, n):
    a[0] = n


@kiln.jit("void(float32[::1], int64)")
def typed(a, n):
    a[0] = n


def attempt(f):
    try:
        f()
        print("ok")
    except Exception as e:
        print(f"{type(e).__name__}: {e}")


def main():
    attempt(lambda: k[1, 1](np.zeros(2)))
    attempt(lambda: k[1, 1](np.zeros(2), "3"))
    attempt(lambda: k[1, 1]([1, 2], 3))
    attempt(lambda: k[1, 1](np.zeros(2, np.longdouble), 3))
    attempt(lambda: typed[1, 1](np.zeros(2, np.float64), 3))
    ro = np.zeros(2)
    ro.flags.writeable = False
    attempt(lambda: k[1, 1](ro, 3))
    attempt(lambda: k[1, 1](np.zeros(2), 3))
