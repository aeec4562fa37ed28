# == and != on tuples, as Python compares them: element by element (nested too); tuples of
# other lengths are never equal.  a.shape against a tuple written out, tuple variables of
# mixed element types, the empty tuple; diffed against Python.
import numpy as np
import kiln


@kiln.jit
def k(a, n, out):
    out[0] = a.shape == (n, 3)
    out[1] = a.shape != (n, 3)
    out[2] = a.shape == (n,)
    t = (1, 2.5)
    u = (n - 3, 2.5)
    out[3] = t == u
    out[4] = t != u
    out[5] = (1, (2, 3)) == (1, (2, 4))
    out[6] = () == ()
    out[7] = a.shape == (4, 3)


def main():
    a = np.zeros((4, 3))
    for n in (4, 5):
        o = np.zeros(8, np.int64)
        k[1, 1](a, n, o)
        t, u = (1, 2.5), (n - 3, 2.5)
        want = [a.shape == (n, 3), a.shape != (n, 3), a.shape == (n,), t == u, t != u,
                (1, (2, 3)) == (1, (2, 4)), () == (), a.shape == (4, 3)]
        print(n, o.tolist() == [int(w) for w in want])
