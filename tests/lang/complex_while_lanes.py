# complex128 and complex64 values in a while loop whose condition differs per thread, in a
# flat kernel (lane mode on the CPU: the loop's lane mask is as wide as the widest value, at
# most 8 bytes): the textbook Mandelbrot and Newton's fractal, diffed against Python complex.
import numpy as np
import kiln


@kiln.jit
def mandel(cre, cim, maxit, out):
    i = kiln.grid(1)
    if i < cre.size:
        c = complex(cre[i], cim[i])
        z = 0j
        n = 0
        while n < maxit and abs(z) <= 2.0:
            z = z * z + c
            n += 1
        out[i] = n


@kiln.jit
def newton(zr, zi, out):
    i = kiln.grid(1)
    if i < zr.size:
        z = np.complex64(complex(zr[i], zi[i]))
        it = 0
        while abs(z ** 3 - 1) > 1e-4 and it < 50:
            z = z - (z ** 3 - 1) / (3 * z ** 2)
            it += 1
        out[i] = it


def ref_mandel(cre, cim, maxit):
    r = []
    for a, b in zip(cre, cim):
        c, z, n = complex(a, b), 0j, 0
        while n < maxit and abs(z) <= 2.0:
            z = z * z + c
            n += 1
        r.append(n)
    return np.array(r)


def main():
    rng = np.random.default_rng(5)
    n = 1000
    cre = rng.uniform(-2, 0.6, n)
    cim = rng.uniform(-1.2, 1.2, n)
    out = np.zeros(n, np.int64)
    mandel[(n + 127) // 128, 128](cre, cim, 100, out)
    # points on the set's boundary may take another count if the C compiler contracts a*b-c*d
    print("mandelbrot complex128:", bool((out == ref_mandel(cre, cim, 100)).mean() > 0.99))
    zr = rng.uniform(-2, 2, 300).astype(np.float32)
    zi = rng.uniform(-2, 2, 300).astype(np.float32)
    it = np.zeros(300, np.int64)
    newton[3, 128](zr, zi, it)
    print("newton complex64 converges:", bool(((it > 0) & (it < 50)).mean() > 0.95))
