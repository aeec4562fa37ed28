# A tuple of tuples of one type (namedtuples of one class, passed as an argument or built in the
# kernel; plain pairs) indexed at run time and looped over, short and long (past the length
# whose tuples are read as arrays); an index out of range is Python's IndexError.
from collections import namedtuple

import numpy as np
import kiln

Pt = namedtuple("Pt", "x y")


@kiln.jit
def by_index(pts, out):
    i = kiln.grid(1)
    if i < len(pts):
        p = pts[i]
        out[i] = p.x * p.y


@kiln.jit
def by_loop(pts, out):
    j = 0
    for p in pts:
        out[j] = p.x - p.y
        j += 1


@kiln.jit
def pairs(a, k, out):
    t = ((a[0], a[1]), (a[2], a[3]), (a[4], a[5]))
    i = kiln.grid(1)
    if i < 3:
        out[i] = t[i][0] * 10 + t[i][1]
    if i == 0:
        out[3] = t[k][1]


def main():
    for n in (3, 20):
        pts = tuple(Pt(float(i), float(i) + 0.5) for i in range(n))
        o1, o2 = np.zeros(n), np.zeros(n)
        by_index[1, 32](pts, o1)
        by_loop[1, 1](pts, o2)
        print(n, np.allclose(o1, [p.x * p.y for p in pts]), np.allclose(o2, [p.x - p.y for p in pts]))
    a = np.arange(6.0)
    o = np.zeros(4)
    pairs[1, 4](a, -1, o)
    print("pairs", o.tolist())
    try:
        pairs[1, 4](a, 3, o)
    except IndexError as e:
        print("IndexError:", str(e).split(": ", 1)[1])
