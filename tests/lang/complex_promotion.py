# NumPy 2 (NEP 50) promotion with complex numbers: a Python complex takes the precision of
# the typed value it meets; complex64 with int16 or float32 stays complex64, with int32 or
# float64 it becomes complex128; cmath and abs() keep the precision
import cmath
import numpy as np
import kiln


@kiln.jit
def k(c64, c128, f32, f64, i16, i32, out):
    a = c64[0] * 1j
    b = f32[0] + 2j
    c = i32[0] + 2j
    d = c64[0] + f64[0]
    e = c64[0] + i16[0]
    f = c64[0] + i32[0]
    g = c64[0] * c128[0]
    h = 1 + 2j
    m = abs(c64[0])
    n = cmath.sqrt(c64[0])
    p = cmath.exp(f32[0])
    q = np.complex64(f64[0])
    r = c64[0].real + c128[0].imag
    s = complex(f32[0], 1)
    t = cmath.phase(c64[0])
    u = np.sqrt(c128[0])
    out[0] = a + b + c + d + e + f + g + h + m + n + p + q + r + s + t + u


def main():
    k[1, 1](np.ones(1, np.complex64), np.ones(1, np.complex128), np.ones(1, np.float32),
            np.ones(1, np.float64), np.ones(1, np.int16), np.ones(1, np.int32),
            np.zeros(1, np.complex128))
    print(k.inspect_types(file=False), end="")
