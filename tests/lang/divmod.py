# divmod(x, y) is (x // y, x % y) with Python's floor division and modulo: integers of both
# signs and types, floats, unpacked into array elements; diffed against Python's divmod.
import numpy as np
import kiln


@kiln.jit
def k(a, b, q, r, f):
    i = kiln.grid(1)
    if i < a.size:
        q[i], r[i] = divmod(a[i], b[i])
        x, y = divmod(a[i] * 1.5, 2.0)
        f[i] = x * 10 + y


def main():
    for dt in (np.int64, np.int32, np.int8):
        a = np.array([7, -7, 7, -7, 0, 5], dt)
        b = np.array([2, 2, -2, -2, 3, 5], dt)
        q, r, f = np.zeros(6, dt), np.zeros(6, dt), np.zeros(6)
        k[1, 6](a, b, q, r, f)
        want = [divmod(int(x), int(y)) for x, y in zip(a, b)]
        fw = [divmod(int(x) * 1.5, 2.0) for x in a]
        print(dt.__name__, [(int(x), int(y)) for x, y in zip(q, r)] == want,
              np.allclose(f, [x * 10 + y for x, y in fw]))
