# `x and y` / `x or y` give an operand's value, as Python: with complex operands (true when
# either part is nonzero), mixed with integers and floats, read through a name and not
import numpy as np
import kiln


@kiln.jit
def k(o, a, z):
    i = kiln.grid(1)
    if i < a.size:
        o[i, 0] = a[i] and z[i]
        o[i, 1] = a[i] or z[i]
        o[i, 2] = z[i] and a[i]
        o[i, 3] = (z[i] * 2) or 7.5
        w = z[i]
        o[i, 4] = w and 3


def main():
    a = np.array([0, 1, 2, 0], np.int8)
    z = np.array([1 + 2j, 0j, 3j, 0j])
    o = np.zeros((4, 5), np.complex128)
    k[1, 8](o, a, z)
    want = [[x and y, x or y, y and x, (y * 2) or 7.5, y and 3] for x, y in zip(a.tolist(), z.tolist())]
    print(o.tolist() == np.array(want, np.complex128).tolist())
