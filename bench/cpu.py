"""CPU target against NumPy and Numba @njit(parallel=True), side by side in one run.

    make bench            (installs numba into .venv, then runs this)

Each workload is run warm (compiled, caches hot) `REPEATS` times; the table gives
medians in milliseconds and the ratio numba/kiln (> 1 means kiln is faster).
Every result is checked against NumPy before it is timed.
"""
import math
import os
import platform
import statistics
import sys
import time

import numpy as np

import kiln

try:
    import numba
    from numba import njit, prange
except ImportError:  # pragma: no cover
    sys.exit("numba is needed: make bench installs it")

REPEATS = int(os.environ.get("BENCH_REPEATS", "9"))


def timeit(fn):
    fn()
    fn()
    ts = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


# ---- Black-Scholes ------------------------------------------------------------------
A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
RSQRT2PI = 0.3989422804014327


@kiln.jit(device=True)
def k_cnd(d):
    K = 1.0 / (1.0 + 0.2316419 * abs(d))
    r = RSQRT2PI * math.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    return 1.0 - r if d > 0 else r


@kiln.jit
def k_bs(call, put, s, x, t, r, v):
    i = kiln.grid(1)
    if i < s.size:
        sqrt_t = math.sqrt(t[i])
        d1 = (math.log(s[i] / x[i]) + (r + 0.5 * v * v) * t[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        e = math.exp(-r * t[i])
        c1, c2 = k_cnd(d1), k_cnd(d2)
        call[i] = s[i] * c1 - x[i] * e * c2
        put[i] = x[i] * e * (1.0 - c2) - s[i] * (1.0 - c1)


@njit(fastmath=False)
def n_cnd(d):
    K = 1.0 / (1.0 + 0.2316419 * abs(d))
    r = RSQRT2PI * math.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    return 1.0 - r if d > 0 else r


@njit(parallel=True)
def n_bs(call, put, s, x, t, r, v):
    for i in prange(s.size):
        sqrt_t = math.sqrt(t[i])
        d1 = (math.log(s[i] / x[i]) + (r + 0.5 * v * v) * t[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        e = math.exp(-r * t[i])
        c1, c2 = n_cnd(d1), n_cnd(d2)
        call[i] = s[i] * c1 - x[i] * e * c2
        put[i] = x[i] * e * (1.0 - c2) - s[i] * (1.0 - c1)


def np_cnd(d):
    K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    r = RSQRT2PI * np.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    return np.where(d > 0, 1.0 - r, r)


def np_bs(call, put, s, x, t, r, v):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    e = np.exp(-r * t)
    c1, c2 = np_cnd(d1), np_cnd(d2)
    call[:] = s * c1 - x * e * c2
    put[:] = x * e * (1.0 - c2) - s * (1.0 - c1)


# ---- saxpy -------------------------------------------------------------------------------
@kiln.jit
def k_saxpy(out, x, y, a):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@njit(parallel=True)
def n_saxpy(out, x, y, a):
    for i in prange(out.size):
        out[i] = a * x[i] + y[i]


# ---- 2-D 5-point stencil ----------------------------------------------------------------------
@kiln.jit
def k_stencil(out, a):
    j, i = kiln.grid(2)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]


@njit(parallel=True)
def n_stencil(out, a):
    for i in prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]


def np_stencil(out, a):
    out[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]) - a[1:-1, 1:-1]


# ---- mandelbrot ---------------------------------------------------------------------------------
MAXIT = 200


@kiln.jit
def k_mandel(out, x0, y0, dx, dy):
    j, i = kiln.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        cr = x0 + j * dx
        ci = y0 + i * dy
        zr = 0.0
        zi = 0.0
        n = 0
        while n < MAXIT and zr * zr + zi * zi <= 4.0:
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            n += 1
        out[i, j] = n


@njit(parallel=True)
def n_mandel(out, x0, y0, dx, dy):
    for i in prange(out.shape[0]):
        for j in range(out.shape[1]):
            cr = x0 + j * dx
            ci = y0 + i * dy
            zr = 0.0
            zi = 0.0
            n = 0
            while n < MAXIT and zr * zr + zi * zi <= 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                n += 1
            out[i, j] = n


def np_mandel(out, x0, y0, dx, dy):
    c = (x0 + np.arange(out.shape[1]) * dx)[None, :] + 1j * (y0 + np.arange(out.shape[0]) * dy)[:, None]
    z = np.zeros_like(c)
    n = np.zeros(out.shape, np.int32)
    alive = np.ones(out.shape, bool)
    for _ in range(MAXIT):
        alive &= np.abs(z) <= 2.0
        n += alive
        z[alive] = z[alive] * z[alive] + c[alive]
    out[:] = n


def main():
    rng = np.random.default_rng()
    rows = []

    n = 1 << 24
    s = rng.uniform(5, 30, n).astype(np.float32)
    x = rng.uniform(1, 100, n).astype(np.float32)
    t = rng.uniform(0.25, 10, n).astype(np.float32)
    r, v = np.float32(0.02), np.float32(0.30)
    outs = {k: (np.empty(n, np.float32), np.empty(n, np.float32)) for k in ("np", "nb", "k")}
    blocks = (n + 255) // 256
    np_bs(*outs["np"], s, x, t, r, v)
    n_bs(*outs["nb"], s, x, t, r, v)
    k_bs[blocks, 256](*outs["k"], s, x, t, r, v)
    for k in ("nb", "k"):
        for o, ref in zip(outs[k], outs["np"]):
            np.testing.assert_allclose(o, ref, rtol=1e-3, atol=1e-3)
    rows.append(("Black-Scholes, 2^24 float32",
                 timeit(lambda: np_bs(*outs["np"], s, x, t, r, v)),
                 timeit(lambda: n_bs(*outs["nb"], s, x, t, r, v)),
                 timeit(lambda: k_bs[blocks, 256](*outs["k"], s, x, t, r, v))))

    xa = rng.random(n, np.float32)
    ya = rng.random(n, np.float32)
    o1, o2, o3 = (np.empty(n, np.float32) for _ in range(3))
    a = np.float32(2.5)
    n_saxpy(o2, xa, ya, a)
    k_saxpy[blocks, 256](o3, xa, ya, a)
    np.testing.assert_allclose(o3, a * xa + ya, rtol=1e-6)
    np.testing.assert_allclose(o2, a * xa + ya, rtol=1e-6)
    rows.append(("saxpy, 2^24 float32",
                 timeit(lambda: np.add(np.multiply(a, xa, out=o1), ya, out=o1)),
                 timeit(lambda: n_saxpy(o2, xa, ya, a)),
                 timeit(lambda: k_saxpy[blocks, 256](o3, xa, ya, a))))

    m = 4096
    g = rng.random((m, m), np.float32)
    s1, s2, s3 = (np.zeros((m, m), np.float32) for _ in range(3))
    grid2 = ((m + 255) // 256, m)
    np_stencil(s1, g)
    n_stencil(s2, g)
    k_stencil[grid2, (256, 1)](s3, g)
    np.testing.assert_allclose(s2, s1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s3, s1, rtol=1e-5, atol=1e-5)
    rows.append(("5-point stencil, 4096^2 float32",
                 timeit(lambda: np_stencil(s1, g)),
                 timeit(lambda: n_stencil(s2, g)),
                 timeit(lambda: k_stencil[grid2, (256, 1)](s3, g))))

    h, w = 768, 1024
    x0, y0, dx, dy = -2.0, -1.2, 3.0 / w, 2.4 / h
    m1, m2, m3 = (np.zeros((h, w), np.int32) for _ in range(3))
    gm = ((w + 63) // 64, h)
    np_mandel(m1, x0, y0, dx, dy)
    n_mandel(m2, x0, y0, dx, dy)
    k_mandel[gm, (64, 1)](m3, x0, y0, dx, dy)
    assert (m2 == m3).mean() > 0.999 and (m1 == m3).mean() > 0.999
    rows.append((f"mandelbrot {w}x{h}, {MAXIT} iterations",
                 timeit(lambda: np_mandel(m1, x0, y0, dx, dy)),
                 timeit(lambda: n_mandel(m2, x0, y0, dx, dy)),
                 timeit(lambda: k_mandel[gm, (64, 1)](m3, x0, y0, dx, dy))))

    print(f"# CPU: kiln {kiln.__version__}, numba {numba.__version__}, numpy {np.__version__}, "
          f"{os.cpu_count()} cores ({platform.processor() or platform.machine()}), "
          f"median of {REPEATS}\n")
    print("| workload | NumPy ms | Numba parallel ms | kiln ms | kiln vs Numba |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, tnp, tnb, tk in rows:
        print(f"| {name} | {tnp:.2f} | {tnb:.2f} | {tk:.2f} | {tnb / tk:.2f}x |")


if __name__ == "__main__":
    main()
