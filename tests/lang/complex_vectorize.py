# kiln.vectorize with complex signatures (Numba's test_vectorize_complex on the CPU) and
# with complex dtypes found at the call
import cmath
import numpy as np
import kiln


@kiln.vectorize(["complex128(complex128)", "complex64(complex64)"])
def square_plus_one(a):
    return a * a + 1.0


@kiln.vectorize
def magnitude_and_phase(z, w):
    return abs(z) + cmath.phase(w)


def main():
    a = np.arange(5, dtype=np.complex128) - 2j
    r = square_plus_one(a)
    print(r.dtype, np.allclose(r, a * a + 1.0))
    r = square_plus_one(a.astype(np.complex64))
    print(r.dtype, np.allclose(r, (a * a + 1.0).astype(np.complex64)))
    r = magnitude_and_phase(a, a * 1j)
    print(r.dtype, np.allclose(r, abs(a) + np.angle(a * 1j)))
    r = magnitude_and_phase(a.astype(np.complex64), a.astype(np.complex64))
    print(r.dtype, np.allclose(r, abs(a) + np.angle(a), rtol=1e-6))
