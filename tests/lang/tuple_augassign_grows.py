# `t += (x,)` makes a new, longer tuple (Python's and Numba's meaning): the new t is a
# variable of its own; in a loop, where the lengths would meet, it is an error (Numba
# cannot unify them either)
import numpy as np
import kiln


@kiln.jit
def k(a, out):
    t = (1, 2)
    t += (a[0],)
    t += (4, 5)
    out[0] = t[2]
    out[1] = len(t) * 100 + t[4]
    u = (1, 2)
    u += (3,)
    s = 0
    for v in u:
        s += v
    out[2] = s


def main():
    a = np.array([7.0])
    o = np.zeros(3)
    k[1, 1](a, o)
    t = (1, 2) + (7.0,) + (4, 5)
    print("grown:", list(o) == [t[2], len(t) * 100 + t[4], 6])
