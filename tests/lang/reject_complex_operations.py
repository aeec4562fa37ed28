# rejected: what Python and NumPy do not define for complex numbers, and conversions that
# would drop the imaginary part silently
import math
import numpy as np
import kiln


@kiln.jit
def ordered(a):
    a[0] = 1 if a[0] < a[1] else 0


@kiln.jit
def floordiv(a):
    a[0] = a[0] // a[1]


@kiln.jit
def store_real(a, f):
    f[0] = a[0]


@kiln.jit
def to_int(a, f):
    f[0] = int(a[0])


@kiln.jit
def math_of_complex(a):
    a[0] = math.sqrt(a[0])


@kiln.jit
def cast_to_float(a, f):
    f[0] = np.float64(a[0])


@kiln.jit
def min_of_complex(a):
    a[0] = min(a[0], a[1])


@kiln.jit
def bit_op(a):
    a[0] = a[0] & 1


@kiln.jit
def declared_real(a, f):
    f[0] = real_sig(a[0])


@kiln.jit("float64(complex128)", device=True)
def real_sig(x):
    return x * 2


def attempt(f):
    try:
        f()
    except Exception as e:
        print(f"{type(e).__name__}: {e}")


def main():
    c = np.ones(2, np.complex128)
    f = np.zeros(2)
    attempt(lambda: ordered[1, 1](c))
    attempt(lambda: floordiv[1, 1](c))
    attempt(lambda: store_real[1, 1](c, f))
    attempt(lambda: to_int[1, 1](c, f))
    attempt(lambda: math_of_complex[1, 1](c))
    attempt(lambda: cast_to_float[1, 1](c, f))
    attempt(lambda: min_of_complex[1, 1](c))
    attempt(lambda: bit_op[1, 1](c))
    attempt(lambda: declared_real[1, 1](c, f))
