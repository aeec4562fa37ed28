# complex64 and complex128: arithmetic, parts, literals, scalar arguments, local arrays and
# the .real/.imag views of arrays, each against NumPy (complex64 within float32's precision)
import numpy as np
import kiln


@kiln.jit
def arith(out, a, b, s):
    i = kiln.grid(1)
    if i < out.shape[0]:
        x = a[i]
        y = b[i]
        out[i, 0] = x + y
        out[i, 1] = x - y * 2
        out[i, 2] = x * y
        out[i, 3] = x / y
        out[i, 4] = x ** 2 + x ** y
        out[i, 5] = -x + x.conjugate() + abs(x) + x.real - x.imag * 1j
        out[i, 6] = s * x + 1.5 - 2j
        out[i, 7] = complex(x.imag, y.real) + (1 if x == y else 0) + (2 if x != y else 0)
        z = x
        z += y
        z *= 1j
        out[i, 8] = z if z else 3j


def reference(a, b, s):
    dt = a.dtype
    out = np.empty((a.size, 9), dt)
    out[:, 0] = a + b
    out[:, 1] = a - b * 2
    out[:, 2] = a * b
    out[:, 3] = a / b
    out[:, 4] = a ** 2 + a ** b
    out[:, 5] = -a + np.conj(a) + abs(a) + a.real - a.imag * dt.type(1j)
    out[:, 6] = dt.type(s) * a + 1.5 - 2j
    out[:, 7] = (a.imag + 1j * b.real) + np.where(a == b, 1, 0) + np.where(a != b, 2, 0)
    z = (a + b) * dt.type(1j)
    out[:, 8] = np.where(z != 0, z, 3j)
    return out


@kiln.jit
def local_copy(a, b):
    c = kiln.local.array(16, dtype=kiln.complex128)
    for i in range(c.shape[0]):
        c[i] = a[i]
    for i in range(c.shape[0]):
        b[i] = c[i].conjugate()


@kiln.jit
def parts(values, re, im):
    i = kiln.grid(1)
    if i < values.size:
        kiln.atomic.add(values.real, i, 1)
        kiln.atomic.add(values.imag, i, 2)
        re[i] = values.real[i]
        im[i] = values[i].imag


@kiln.jit("void(complex128[:], complex128, complex64)")
def typed_args(a, b, c):
    i = kiln.grid(1)
    if i < a.size:
        a[i] += b + c


def main():
    rng = np.random.default_rng(7)
    for dt, tol in ((np.complex64, 2e-6), (np.complex128, 1e-13)):
        a = (rng.standard_normal(32) + 1j * rng.standard_normal(32)).astype(dt)
        b = (rng.standard_normal(32) + 1j * rng.standard_normal(32)).astype(dt)
        b[:4] = a[:4]
        out = np.zeros((32, 9), dt)
        for s in (0.5 - 0.25j, dt(0.5 - 0.25j)):
            arith[1, 32](out, a, b, s)
            ref = reference(a, b, s)
            err = np.abs(out - ref) / np.maximum(np.abs(ref), 1)
            print(np.dtype(dt).name, type(s).__name__, "columns within", tol, (err.max(axis=0) < tol).all())
    a = (np.arange(16) - 1) / 2j
    b = np.zeros_like(a)
    local_copy[1, 1](a, b)
    print("local array:", np.array_equal(b, np.conj(a)))
    v = np.arange(8) + np.arange(8) * 1j
    re = np.zeros(8)
    im = np.zeros(8)
    parts[1, 8](v, re, im)
    print("atomics on .real/.imag:", np.array_equal(v, np.arange(8) + 1 + (np.arange(8) + 2) * 1j),
          np.array_equal(re, v.real), np.array_equal(im, v.imag))
    a = np.arange(5, dtype=np.complex128)
    typed_args[1, 5](a, 2j, np.complex64(1 + 1j))
    print("typed scalar arguments:", a.tolist())
