# Tuples sliced with constant bounds (t[1:], t[::-2], t[-2:], a.shape[1:], an empty slice) and
# joined with + (a written-out tuple, a.shape, the empty tuple, slices of slices); diffed
# against Python's own slicing and concatenation.
import numpy as np
import kiln


@kiln.jit
def k(a, out):
    t = (1.0, 2.0, 3.0, 4.0, 5.0)
    u = t[1:]
    v = t[::-2]
    w = a.shape[1:]
    out[0] = u[0] + u[3] * 10
    out[1] = v[0] + v[2] * 10
    out[2] = w[0] + w[1] * 10
    out[3] = len(t[2:2])
    out[4] = t[-2:][0]
    x = (a[0, 0, 0], 7.0, 8.0)
    out[5] = x[:2][1]
    j = t[3:] + (9.0,)
    out[6] = j[0] + j[2] * 10 + len(j) * 100
    s = a.shape + t[:1]
    out[7] = s[2] + s[3] * 10 + len(s) * 100
    e = () + t[4:]
    out[8] = e[0]
    z = t[1:2] + t[:1]
    out[9] = z[0] * 10 + z[1]


def main():
    a = np.zeros((2, 3, 4))
    o = np.zeros(10)
    k[1, 1](a, o)
    t = (1.0, 2.0, 3.0, 4.0, 5.0)
    u, v, w = t[1:], t[::-2], a.shape[1:]
    j, s, e, z = t[3:] + (9.0,), a.shape + t[:1], () + t[4:], t[1:2] + t[:1]
    want = [u[0] + u[3] * 10, v[0] + v[2] * 10, w[0] + w[1] * 10, len(t[2:2]), t[-2:][0], 7.0,
            j[0] + j[2] * 10 + len(j) * 100, s[2] + s[3] * 10 + len(s) * 100, e[0],
            z[0] * 10 + z[1]]
    print("slices and joins:", o.tolist() == want)
