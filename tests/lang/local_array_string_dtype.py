# kiln.local.array's dtype written as NumPy's string ("int32", "f8", "u1"), and a string
# that names no dtype, refused with Numba's phrase after kiln's words
import numpy as np
import kiln


@kiln.jit
def k(x):
    a = kiln.local.array(4, dtype="int32")
    b = kiln.local.array((2, 2), "f8")
    c = kiln.local.array(3, dtype='u1')
    a[0] = 7
    b[1, 1] = 0.5
    c[2] = 300 - 45
    x[0] = a[0] + b[1, 1] + c[2]


@kiln.jit
def bad(x):
    a = kiln.local.array(4, dtype="int33")
    x[0] = a[0]


def main():
    x = np.zeros(1)
    k[1, 1](x)
    print(x[0])
    print(k.inspect_types(file=False), end="")
    try:
        bad[1, 1](x)
    except kiln.CompileError as e:
        print(f"CompileError: {e}")
