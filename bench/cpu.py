"""The CPU target against Numba, NumPy and hand-written C + OpenMP, in one run.

    make bench                                     (installs numba into .venv, runs this)
    PYTHONPATH=python .venv/bin/python bench/cpu.py [--quick] [--only NAME[,NAME]] [--list]

Every kernel is written four ways: in kiln's dialect the way a Numba-CUDA user writes it
(`kiln.grid`, `kiln.atomic.add`, realistic block shapes), as an idiomatic Numba
`@njit(parallel=True)` loop with `prange`, as the natural NumPy expression, and as the loop
an expert writes in C with OpenMP (bench/cpu_c/kernels.c, compiled once per run with
`cc -O3 -march=native -fopenmp -fno-math-errno -ffp-contract=off` into a temporary shared
object and called through ctypes): the "limit".  -ffp-contract=off makes it round after each
operation, as NumPy, Numba and kiln without fastmath do (kiln since session 15): an FMA-fused
limit would compute other numbers.

Every implementation's result is checked against a NumPy float64 reference before it is
timed; a wrong result or a failure to compile is a failed row, printed loudly and not timed.
Timings are warm (compiled, caches hot): each group of implementations runs round-robin
BENCH_REPEATS times (7 by default, 3 with --quick), the order rotating every round, and the
table gives medians in milliseconds.  kiln/Numba is numba_ms / kiln_ms and kiln/limit is
limit_ms / kiln_ms: above 1 means kiln is faster.

All parallel runtimes get the same thread count: $OMP_NUM_THREADS if set, else every core
this process may run on; OMP_NUM_THREADS, NUMBA_NUM_THREADS and OPENBLAS_NUM_THREADS are set
to it before anything starts a thread pool.  KILN_TARGET defaults to cpu, KILN_TIERS to 0
(the optimised code from the first call on).
"""
import os
import sys

THREADS = int(os.environ.get("OMP_NUM_THREADS") or len(os.sched_getaffinity(0)))
for _var in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(THREADS)
os.environ.setdefault("KILN_TARGET", "cpu")
# Warm timings measure the optimised code: without tiers a kernel's first call returns with
# it loaded, so the check run and one warm-up are enough (bench/startup.py measures tier 0).
os.environ.setdefault("KILN_TIERS", "0")

import argparse  # noqa: E402
import ctypes  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

import numpy as np  # noqa: E402

import kiln  # noqa: E402

try:
    import numba
    from numba import njit, prange
except ImportError:  # pragma: no cover
    sys.exit("numba is needed: make bench installs it (.venv/bin/pip install numba)")

HERE = os.path.dirname(os.path.abspath(__file__))
C_SOURCE = os.path.join(HERE, "cpu_c", "kernels.c")
CFLAGS = ["-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-ffp-contract=off"]
COLUMNS = ("kiln", "numba", "numpy", "c")

# ======================================================================================
# Kernels.  Each section: the kiln kernel(s), the Numba prange version, the NumPy version.
# ======================================================================================

# ---- Black-Scholes, float32 -----------------------------------------------------------
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


@njit(cache=True)
def n_cnd(d):
    K = 1.0 / (1.0 + 0.2316419 * abs(d))
    r = RSQRT2PI * math.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    return 1.0 - r if d > 0 else r


@njit(parallel=True, cache=True)
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


# ---- saxpy, float32 -------------------------------------------------------------------
@kiln.jit
def k_saxpy(out, x, y, a):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@njit(parallel=True, cache=True)
def n_saxpy(out, x, y, a):
    for i in prange(out.size):
        out[i] = a * x[i] + y[i]


def np_saxpy(out, x, y, a):
    np.multiply(a, x, out=out)
    out += y


# ---- a chain of 6 operations, float64 ------------------------------------------------------
@kiln.jit
def k_chain6(out, a, b, c):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = ((a[i] * b[i] + c[i]) * a[i] - b[i]) / (c[i] + 1.0)


@njit(parallel=True, cache=True)
def n_chain6(out, a, b, c):
    for i in prange(out.size):
        out[i] = ((a[i] * b[i] + c[i]) * a[i] - b[i]) / (c[i] + 1.0)


def np_chain6(out, a, b, c):
    np.divide((a * b + c) * a - b, c + 1.0, out=out)


# ---- 2-D 5-point stencil, float64, both index orders --------------------------------------
@kiln.jit
def k_stencil2d_ij(out, a):
    i, j = kiln.grid(2)           # i, the fastest thread index, is the row: strided on C arrays
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]


@kiln.jit
def k_stencil2d_ji(out, a):
    j, i = kiln.grid(2)           # j, the fastest thread index, is the column: unit stride
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]


@njit(parallel=True, cache=True)
def n_stencil2d(out, a):
    for i in prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]


def np_stencil2d(out, a):
    out[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]) - a[1:-1, 1:-1]


# ---- 3-D 7-point stencil, float64, both index orders --------------------------------------
C0, C1 = 0.4, 0.1


@kiln.jit
def k_stencil3d_ijk(out, a):
    i, j, k = kiln.grid(3)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1 and 0 < k < a.shape[2] - 1:
        out[i, j, k] = C0 * a[i, j, k] + C1 * (a[i - 1, j, k] + a[i + 1, j, k] + a[i, j - 1, k]
                                               + a[i, j + 1, k] + a[i, j, k - 1] + a[i, j, k + 1])


@kiln.jit
def k_stencil3d_kji(out, a):
    k, j, i = kiln.grid(3)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1 and 0 < k < a.shape[2] - 1:
        out[i, j, k] = C0 * a[i, j, k] + C1 * (a[i - 1, j, k] + a[i + 1, j, k] + a[i, j - 1, k]
                                               + a[i, j + 1, k] + a[i, j, k - 1] + a[i, j, k + 1])


@njit(parallel=True, cache=True)
def n_stencil3d(out, a):
    for i in prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            for k in range(1, a.shape[2] - 1):
                out[i, j, k] = C0 * a[i, j, k] + C1 * (a[i - 1, j, k] + a[i + 1, j, k] + a[i, j - 1, k]
                                                       + a[i, j + 1, k] + a[i, j, k - 1] + a[i, j, k + 1])


def np_stencil3d(out, a):
    c = a[1:-1, 1:-1, 1:-1]
    out[1:-1, 1:-1, 1:-1] = C0 * c + C1 * (a[:-2, 1:-1, 1:-1] + a[2:, 1:-1, 1:-1] + a[1:-1, :-2, 1:-1]
                                           + a[1:-1, 2:, 1:-1] + a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:])


# ---- transpose, float64, both index orders ------------------------------------------------
@kiln.jit
def k_transpose_ij(out, a):
    i, j = kiln.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[j, i] = a[i, j]


@kiln.jit
def k_transpose_ji(out, a):
    j, i = kiln.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[j, i] = a[i, j]


@njit(parallel=True, cache=True)
def n_transpose(out, a):
    for j in prange(a.shape[1]):
        for i in range(a.shape[0]):
            out[j, i] = a[i, j]


def np_transpose(out, a):
    out[:] = a.T


# ---- sum: grid-stride loop, one atomic per thread, float64 ----------------------------------
@kiln.jit
def k_sum(res, a):
    start = kiln.grid(1)
    stride = kiln.gridsize(1)
    acc = 0.0
    for i in range(start, a.size, stride):
        acc += a[i]
    kiln.atomic.add(res, 0, acc)


@njit(parallel=True, cache=True)
def n_sum(a):
    s = 0.0
    for i in prange(a.size):
        s += a[i]
    return s


# ---- histogram: one atomic per element, 256 bins of float32 values in [0, 1) ----------------
NBINS = 256


@kiln.jit
def k_hist(hist, x):
    i = kiln.grid(1)
    if i < x.size:
        kiln.atomic.add(hist, int(x[i] * NBINS), 1)


@njit(parallel=True, cache=True)
def n_hist(x, nt):
    # prange over nt chunks with private bins: `hist[b] += 1` inside prange would race
    chunk = (x.size + nt - 1) // nt
    local = np.zeros((nt, NBINS), np.int64)
    for t in prange(nt):
        for i in range(t * chunk, min(x.size, (t + 1) * chunk)):
            local[t, int(x[i] * NBINS)] += 1
    return local.sum(axis=0)


def np_hist(x):
    return np.bincount((x * NBINS).astype(np.intp), minlength=NBINS)


# ---- matrix multiply, naive, one thread per output element (Numba-CUDA's docs), float64 ----
@kiln.jit
def k_matmul(A, B, C):
    i, j = kiln.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


@njit(parallel=True, cache=True)
def n_matmul(A, B, C):
    for i in prange(C.shape[0]):
        for j in range(C.shape[1]):
            tmp = 0.
            for k in range(A.shape[1]):
                tmp += A[i, k] * B[k, j]
            C[i, j] = tmp


# ---- gather and scatter through a permutation, float64 --------------------------------------
@kiln.jit
def k_gather(out, a, idx):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a[idx[i]]


@kiln.jit
def k_scatter(out, a, idx):
    i = kiln.grid(1)
    if i < a.size:
        out[idx[i]] = a[i]


@njit(parallel=True, cache=True)
def n_gather(out, a, idx):
    for i in prange(out.size):
        out[i] = a[idx[i]]


@njit(parallel=True, cache=True)
def n_scatter(out, a, idx):
    for i in prange(a.size):
        out[idx[i]] = a[i]


# ---- Mandelbrot, float64, both index orders ---------------------------------------------------
MAXIT = 200


@kiln.jit
def k_mandel_xy(out, x0, y0, dx, dy):
    x, y = kiln.grid(2)
    if y < out.shape[0] and x < out.shape[1]:
        cr = x0 + x * dx
        ci = y0 + y * dy
        zr = 0.0
        zi = 0.0
        n = 0
        while n < MAXIT and zr * zr + zi * zi <= 4.0:
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            n += 1
        out[y, x] = n


@kiln.jit
def k_mandel_yx(out, x0, y0, dx, dy):
    y, x = kiln.grid(2)
    if y < out.shape[0] and x < out.shape[1]:
        cr = x0 + x * dx
        ci = y0 + y * dy
        zr = 0.0
        zi = 0.0
        n = 0
        while n < MAXIT and zr * zr + zi * zi <= 4.0:
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            n += 1
        out[y, x] = n


@njit(parallel=True, cache=True)
def n_mandel(out, x0, y0, dx, dy):
    for y in prange(out.shape[0]):
        for x in range(out.shape[1]):
            cr = x0 + x * dx
            ci = y0 + y * dy
            zr = 0.0
            zi = 0.0
            n = 0
            while n < MAXIT and zr * zr + zi * zi <= 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                n += 1
            out[y, x] = n


def np_mandel(out, x0, y0, dx, dy):
    h, w = out.shape
    cr = np.broadcast_to((x0 + np.arange(w) * dx)[None, :], (h, w))
    ci = np.broadcast_to((y0 + np.arange(h) * dy)[:, None], (h, w))
    zr = np.zeros((h, w))
    zi = np.zeros((h, w))
    n = np.zeros((h, w), np.int32)
    alive = np.ones((h, w), bool)
    for _ in range(MAXIT):
        alive &= zr * zr + zi * zi <= 4.0
        n += alive
        zr, zi = np.where(alive, zr * zr - zi * zi + cr, zr), np.where(alive, 2.0 * zr * zi + ci, zi)
    out[:] = n


# ---- n-body: all-pairs accelerations, float64 ------------------------------------------------
EPS2 = 0.01


@kiln.jit
def k_nbody(ax, ay, az, x, y, z, m):
    i = kiln.grid(1)
    if i < x.size:
        xi = x[i]
        yi = y[i]
        zi = z[i]
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for j in range(x.size):
            dx = x[j] - xi
            dy = y[j] - yi
            dz = z[j] - zi
            r2 = dx * dx + dy * dy + dz * dz + EPS2
            s = m[j] / (r2 * math.sqrt(r2))
            sx += dx * s
            sy += dy * s
            sz += dz * s
        ax[i] = sx
        ay[i] = sy
        az[i] = sz


@njit(parallel=True, cache=True)
def n_nbody(ax, ay, az, x, y, z, m):
    for i in prange(x.size):
        xi = x[i]
        yi = y[i]
        zi = z[i]
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for j in range(x.size):
            dx = x[j] - xi
            dy = y[j] - yi
            dz = z[j] - zi
            r2 = dx * dx + dy * dy + dz * dz + EPS2
            s = m[j] / (r2 * math.sqrt(r2))
            sx += dx * s
            sy += dy * s
            sz += dz * s
        ax[i] = sx
        ay[i] = sy
        az[i] = sz


def np_nbody(ax, ay, az, x, y, z, m):
    dx = x[None, :] - x[:, None]
    dy = y[None, :] - y[:, None]
    dz = z[None, :] - z[:, None]
    r2 = dx * dx + dy * dy + dz * dz + EPS2
    s = m[None, :] / (r2 * np.sqrt(r2))
    ax[:] = (dx * s).sum(axis=1)
    ay[:] = (dy * s).sum(axis=1)
    az[:] = (dz * s).sum(axis=1)


# ======================================================================================
# The C limit
# ======================================================================================
P, I64, F64, F32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double, ctypes.c_float
C_SIGNATURES = {
    "black_scholes": ([P, P, P, P, P, F32, F32, I64], None),
    "saxpy": ([P, P, P, F32, I64], None),
    "chain6": ([P, P, P, P, I64], None),
    "stencil2d": ([P, P, I64, I64], None),
    "stencil3d": ([P, P, I64, I64, I64, F64, F64], None),
    "transpose": ([P, P, I64, I64], None),
    "sum": ([P, I64], F64),
    "histogram": ([P, P, I64, I64], None),
    "matmul": ([P, P, P, I64, I64, I64], None),
    "gather": ([P, P, P, I64], None),
    "scatter": ([P, P, P, I64], None),
    "mandelbrot": ([P, I64, I64, F64, F64, F64, F64, I64], None),
    "nbody": ([P, P, P, P, P, P, P, I64, F64], None),
}


def build_c():
    """Compiles kernels.c into a temporary shared object and loads it; the file is removed
    once loaded.  Returns (library, compiler line)."""
    cc = os.environ.get("CC", "cc")
    tmp = tempfile.mkdtemp(prefix="kiln-bench-c-")
    try:
        so = os.path.join(tmp, "limit.so")
        cmd = [cc, *CFLAGS, "-shared", "-fPIC", "-o", so, C_SOURCE, "-lm"]
        subprocess.run(cmd, check=True)
        lib = ctypes.CDLL(so)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for name, (args, res) in C_SIGNATURES.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res
    return lib, " ".join([cc, *CFLAGS])


def ptr(a):
    assert a.flags.c_contiguous
    return a.ctypes.data


# ======================================================================================
# Groups: inputs, a float64 reference, the implementations, the rows they make
# ======================================================================================
class Group:
    """Implementations of one computation on shared inputs.  impls maps a key to
    (run, result): run() computes into the group's output (one for all of them, made with
    dict.fromkeys: see poison), result() returns
    what is compared against ref by check(got, ref).  rows: (title, {column: key}); keys
    shared by several rows are run and timed once."""

    def __init__(self, ref, check, rows, impls):
        self.ref, self.check, self.rows, self.impls = ref, check, rows, impls


def close(rtol, atol=0.0):
    def check(got, ref):
        got = got if isinstance(got, tuple) else (got,)
        ref = ref if isinstance(ref, tuple) else (ref,)
        for g, r in zip(got, ref):
            np.testing.assert_allclose(np.asarray(g, np.float64), r, rtol=rtol, atol=atol)
    return check


def exact(got, ref):
    np.testing.assert_array_equal(np.asarray(got), ref)


def mostly_equal(frac):
    """Mandelbrot: the iteration count of points on the set's boundary depends on the last
    bit of a rounding (fused multiply-add or not), so a tiny fraction may differ."""
    def check(got, ref):
        same = float((np.asarray(got) == ref).mean())
        assert same >= frac, f"only {same:.5f} of the pixels match the reference (need {frac})"
    return check


def blocks1(n, tpb=256):
    return (n + tpb - 1) // tpb


def g_black_scholes(Q, rng, lib):
    n = 1 << (16 if Q else 24)
    s = rng.uniform(5, 30, n).astype(np.float32)
    x = rng.uniform(1, 100, n).astype(np.float32)
    t = rng.uniform(0.25, 10, n).astype(np.float32)
    r, v = np.float32(0.02), np.float32(0.30)
    ref_call, ref_put = np.empty(n), np.empty(n)
    np_bs(ref_call, ref_put, s.astype(np.float64), x.astype(np.float64), t.astype(np.float64),
          float(r), float(v))
    o = dict.fromkeys(COLUMNS, (np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32)))
    b = blocks1(n)
    pc, pp = ptr(o["c"][0]), ptr(o["c"][1])
    ps, px, pt = ptr(s), ptr(x), ptr(t)
    impls = {
        "kiln": (lambda: k_bs[b, 256](*o["kiln"], s, x, t, r, v), lambda: o["kiln"]),
        "numba": (lambda: n_bs(*o["numba"], s, x, t, r, v), lambda: o["numba"]),
        "numpy": (lambda: np_bs(*o["numpy"], s, x, t, r, v), lambda: o["numpy"]),
        "c": (lambda: lib.black_scholes(pc, pp, ps, px, pt, r, v, n), lambda: o["c"]),
    }
    return Group((ref_call, ref_put), close(1e-4, 1e-3),
                 [(f"Black-Scholes, 2^{n.bit_length() - 1} float32", dict(zip(COLUMNS, COLUMNS)))],
                 impls)


def g_saxpy(Q, rng, lib):
    n = 1 << (16 if Q else 24)
    x = rng.random(n, np.float32)
    y = rng.random(n, np.float32)
    a = np.float32(2.5)
    ref = float(a) * x.astype(np.float64) + y
    o = dict.fromkeys(COLUMNS, np.full(n, np.nan, np.float32))
    b = blocks1(n)
    po, px, py = ptr(o["c"]), ptr(x), ptr(y)
    impls = {
        "kiln": (lambda: k_saxpy[b, 256](o["kiln"], x, y, a), lambda: o["kiln"]),
        "numba": (lambda: n_saxpy(o["numba"], x, y, a), lambda: o["numba"]),
        "numpy": (lambda: np_saxpy(o["numpy"], x, y, a), lambda: o["numpy"]),
        "c": (lambda: lib.saxpy(po, px, py, a, n), lambda: o["c"]),
    }
    return Group(ref, close(1e-6), [(f"saxpy, 2^{n.bit_length() - 1} float32",
                                     dict(zip(COLUMNS, COLUMNS)))], impls)


def g_chain6(Q, rng, lib):
    n = 1 << (16 if Q else 24)
    a, b_, c = (rng.random(n) for _ in range(3))
    ref = ((a * b_ + c) * a - b_) / (c + 1.0)
    o = dict.fromkeys(COLUMNS, np.full(n, np.nan))
    b = blocks1(n)
    po, pa, pb, pc = ptr(o["c"]), ptr(a), ptr(b_), ptr(c)
    impls = {
        "kiln": (lambda: k_chain6[b, 256](o["kiln"], a, b_, c), lambda: o["kiln"]),
        "numba": (lambda: n_chain6(o["numba"], a, b_, c), lambda: o["numba"]),
        "numpy": (lambda: np_chain6(o["numpy"], a, b_, c), lambda: o["numpy"]),
        "c": (lambda: lib.chain6(po, pa, pb, pc, n), lambda: o["c"]),
    }
    return Group(ref, close(1e-12, 1e-14), [(f"6-op chain ((a*b+c)*a-b)/(c+1), 2^{n.bit_length() - 1} float64",
                                      dict(zip(COLUMNS, COLUMNS)))], impls)


def g_stencil2d(Q, rng, lib):
    n = 256 if Q else 4096
    a = rng.random((n, n))
    ref = np.zeros((n, n))
    np_stencil2d(ref, a)
    ref = ref[1:-1, 1:-1]
    keys = ("kiln_ij", "kiln_ji", "numba", "numpy", "c")
    o = dict.fromkeys(keys, np.full((n, n), np.nan))
    g = ((n + 15) // 16, (n + 15) // 16)
    po, pa = ptr(o["c"]), ptr(a)
    impls = {
        "kiln_ij": (lambda: k_stencil2d_ij[g, (16, 16)](o["kiln_ij"], a), lambda: o["kiln_ij"][1:-1, 1:-1]),
        "kiln_ji": (lambda: k_stencil2d_ji[g, (16, 16)](o["kiln_ji"], a), lambda: o["kiln_ji"][1:-1, 1:-1]),
        "numba": (lambda: n_stencil2d(o["numba"], a), lambda: o["numba"][1:-1, 1:-1]),
        "numpy": (lambda: np_stencil2d(o["numpy"], a), lambda: o["numpy"][1:-1, 1:-1]),
        "c": (lambda: lib.stencil2d(po, pa, n, n), lambda: o["c"][1:-1, 1:-1]),
    }
    same = {"numba": "numba", "numpy": "numpy", "c": "c"}
    return Group(ref, close(1e-12, 1e-12), [
        (f"2-D 5-point stencil, i, j = grid(2), {n}^2 float64", {"kiln": "kiln_ij", **same}),
        (f"2-D 5-point stencil, j, i = grid(2), {n}^2 float64", {"kiln": "kiln_ji", **same}),
    ], impls)


def g_stencil3d(Q, rng, lib):
    n = 32 if Q else 256
    a = rng.random((n, n, n))
    ref = np.zeros((n, n, n))
    np_stencil3d(ref, a)
    ref = ref[1:-1, 1:-1, 1:-1]
    keys = ("kiln_ijk", "kiln_kji", "numba", "numpy", "c")
    o = dict.fromkeys(keys, np.full((n, n, n), np.nan))
    g = ((n + 7) // 8,) * 3
    po, pa = ptr(o["c"]), ptr(a)
    inner = (slice(1, -1),) * 3
    impls = {
        "kiln_ijk": (lambda: k_stencil3d_ijk[g, (8, 8, 8)](o["kiln_ijk"], a), lambda: o["kiln_ijk"][inner]),
        "kiln_kji": (lambda: k_stencil3d_kji[g, (8, 8, 8)](o["kiln_kji"], a), lambda: o["kiln_kji"][inner]),
        "numba": (lambda: n_stencil3d(o["numba"], a), lambda: o["numba"][inner]),
        "numpy": (lambda: np_stencil3d(o["numpy"], a), lambda: o["numpy"][inner]),
        "c": (lambda: lib.stencil3d(po, pa, n, n, n, C0, C1), lambda: o["c"][inner]),
    }
    same = {"numba": "numba", "numpy": "numpy", "c": "c"}
    return Group(ref, close(1e-12, 1e-12), [
        (f"3-D 7-point stencil, i, j, k = grid(3), {n}^3 float64", {"kiln": "kiln_ijk", **same}),
        (f"3-D 7-point stencil, k, j, i = grid(3), {n}^3 float64", {"kiln": "kiln_kji", **same}),
    ], impls)


def g_transpose(Q, rng, lib):
    n0, n1 = (320, 256) if Q else (4096, 4096)
    a = rng.random((n0, n1))
    ref = a.T.copy()
    keys = ("kiln_ij", "kiln_ji", "numba", "numpy", "c")
    o = dict.fromkeys(keys, np.full((n1, n0), np.nan))
    po, pa = ptr(o["c"]), ptr(a)
    gij = ((n0 + 15) // 16, (n1 + 15) // 16)
    gji = ((n1 + 15) // 16, (n0 + 15) // 16)
    impls = {
        "kiln_ij": (lambda: k_transpose_ij[gij, (16, 16)](o["kiln_ij"], a), lambda: o["kiln_ij"]),
        "kiln_ji": (lambda: k_transpose_ji[gji, (16, 16)](o["kiln_ji"], a), lambda: o["kiln_ji"]),
        "numba": (lambda: n_transpose(o["numba"], a), lambda: o["numba"]),
        "numpy": (lambda: np_transpose(o["numpy"], a), lambda: o["numpy"]),
        "c": (lambda: lib.transpose(po, pa, n0, n1), lambda: o["c"]),
    }
    same = {"numba": "numba", "numpy": "numpy", "c": "c"}
    size = f"{n0}x{n1}"
    return Group(ref, exact, [
        (f"transpose out[j, i] = a[i, j], i, j = grid(2), {size} float64", {"kiln": "kiln_ij", **same}),
        (f"transpose out[j, i] = a[i, j], j, i = grid(2), {size} float64", {"kiln": "kiln_ji", **same}),
    ], impls)


def g_sum(Q, rng, lib):
    n = 1 << (16 if Q else 24)
    a = rng.random(n)
    ref = math.fsum(a)
    blocks = min(1024, blocks1(n))
    res = {k: np.zeros(1) for k in ("kiln", "numba", "numpy", "c")}
    pa = ptr(a)

    def run_kiln():
        res["kiln"][0] = 0.0
        k_sum[blocks, 256](res["kiln"], a)

    def put(k, v):
        res[k][0] = v

    impls = {
        "kiln": (run_kiln, lambda: res["kiln"][0]),
        "numba": (lambda: put("numba", n_sum(a)), lambda: res["numba"][0]),
        "numpy": (lambda: put("numpy", np.sum(a)), lambda: res["numpy"][0]),
        "c": (lambda: put("c", lib.sum(pa, n)), lambda: res["c"][0]),
    }
    return Group(ref, close(1e-10), [(f"sum, grid-stride loop + 1 atomic.add per thread, "
                                      f"{blocks}x256 threads, 2^{n.bit_length() - 1} float64",
                                      dict(zip(COLUMNS, COLUMNS)))], impls)


def g_histogram(Q, rng, lib):
    n = 1 << (16 if Q else 24)
    x = rng.random(n, np.float32)
    ref = np.bincount((x.astype(np.float64) * NBINS).astype(np.intp), minlength=NBINS)
    hist = {"kiln": np.zeros(NBINS, np.int32), "c": np.zeros(NBINS, np.int32)}
    got = {}
    b = blocks1(n)
    ph, px = ptr(hist["c"]), ptr(x)
    nt = numba.get_num_threads()

    def run_kiln():
        hist["kiln"][:] = 0
        k_hist[b, 256](hist["kiln"], x)

    def put(k, v):
        got[k] = v

    impls = {
        "kiln": (run_kiln, lambda: hist["kiln"]),
        "numba": (lambda: put("numba", n_hist(x, nt)), lambda: got["numba"]),
        "numpy": (lambda: put("numpy", np_hist(x)), lambda: got["numpy"]),
        "c": (lambda: lib.histogram(ph, px, n, NBINS), lambda: hist["c"]),
    }
    return Group(ref, exact, [(f"histogram, atomic.add per element, {NBINS} bins, "
                               f"2^{n.bit_length() - 1} float32", dict(zip(COLUMNS, COLUMNS)))], impls)


def g_matmul(Q, rng, lib):
    n = 64 if Q else 512
    A = rng.random((n, n))
    B = rng.random((n, n))
    ref = A @ B
    o = dict.fromkeys(COLUMNS, np.full((n, n), np.nan))
    g = ((n + 15) // 16, (n + 15) // 16)
    pC, pA, pB = ptr(o["c"]), ptr(A), ptr(B)
    impls = {
        "kiln": (lambda: k_matmul[g, (16, 16)](A, B, o["kiln"]), lambda: o["kiln"]),
        "numba": (lambda: n_matmul(A, B, o["numba"]), lambda: o["numba"]),
        "numpy": (lambda: np.matmul(A, B, out=o["numpy"]), lambda: o["numpy"]),
        "c": (lambda: lib.matmul(pC, pA, pB, n, n, n), lambda: o["c"]),
    }
    return Group(ref, close(1e-12), [(f"matmul, naive, i, j = grid(2), {n}^2 float64 "
                                      "(NumPy: BLAS)", dict(zip(COLUMNS, COLUMNS)))], impls)


def g_permute(Q, rng, lib, kind):
    """Gather or scatter through a permutation: one group each, so that neither runs just
    after the other's random writes (their write-backs would land in its time)."""
    n = 1 << (16 if Q else 24)
    a = rng.random(n)
    idx = rng.permutation(n).astype(np.int64)
    if kind == "gather":
        ref = a[idx]
    else:
        ref = np.empty(n)
        ref[idx] = a
    keys = ("kiln", "numba", "numpy", "c")
    out = dict.fromkeys(keys, np.full(n, np.nan))
    b = blocks1(n)
    pa, pi, po = ptr(a), ptr(idx), ptr(out["c"])

    def np_scatter():
        out["numpy"][idx] = a

    if kind == "gather":
        impls = {
            "kiln": (lambda: k_gather[b, 256](out["kiln"], a, idx), lambda: out["kiln"]),
            "numba": (lambda: n_gather(out["numba"], a, idx), lambda: out["numba"]),
            "numpy": (lambda: np.take(a, idx, out=out["numpy"]), lambda: out["numpy"]),
            "c": (lambda: lib.gather(po, pa, pi, n), lambda: out["c"]),
        }
        title = "gather out[i] = a[idx[i]]"
    else:
        impls = {
            "kiln": (lambda: k_scatter[b, 256](out["kiln"], a, idx), lambda: out["kiln"]),
            "numba": (lambda: n_scatter(out["numba"], a, idx), lambda: out["numba"]),
            "numpy": (np_scatter, lambda: out["numpy"]),
            "c": (lambda: lib.scatter(po, pa, pi, n), lambda: out["c"]),
        }
        title = "scatter out[idx[i]] = a[i]"
    e = n.bit_length() - 1
    return Group(ref, exact, [(f"{title}, permutation, 2^{e} float64", {k: k for k in keys})],
                 impls)


def g_mandelbrot(Q, rng, lib):
    h, w = (96, 128) if Q else (768, 1024)
    x0, y0, dx, dy = -2.0, -1.2, 3.0 / w, 2.4 / h
    ref = np.zeros((h, w), np.int32)
    np_mandel(ref, x0, y0, dx, dy)
    keys = ("kiln_xy", "kiln_yx", "numba", "numpy", "c")
    o = dict.fromkeys(keys, np.full((h, w), -1, np.int32))
    gxy = ((w + 15) // 16, (h + 15) // 16)
    gyx = ((h + 15) // 16, (w + 15) // 16)
    po = ptr(o["c"])
    impls = {
        "kiln_xy": (lambda: k_mandel_xy[gxy, (16, 16)](o["kiln_xy"], x0, y0, dx, dy), lambda: o["kiln_xy"]),
        "kiln_yx": (lambda: k_mandel_yx[gyx, (16, 16)](o["kiln_yx"], x0, y0, dx, dy), lambda: o["kiln_yx"]),
        "numba": (lambda: n_mandel(o["numba"], x0, y0, dx, dy), lambda: o["numba"]),
        "numpy": (lambda: np_mandel(o["numpy"], x0, y0, dx, dy), lambda: o["numpy"]),
        "c": (lambda: lib.mandelbrot(po, h, w, x0, y0, dx, dy, MAXIT), lambda: o["c"]),
    }
    same = {"numba": "numba", "numpy": "numpy", "c": "c"}
    return Group(ref, mostly_equal(0.995), [
        (f"Mandelbrot, x, y = grid(2), {w}x{h}, {MAXIT} iterations", {"kiln": "kiln_xy", **same}),
        (f"Mandelbrot, y, x = grid(2), {w}x{h}, {MAXIT} iterations", {"kiln": "kiln_yx", **same}),
    ], impls)


def g_nbody(Q, rng, lib):
    n = 256 if Q else 4096
    x, y, z = (rng.standard_normal(n) for _ in range(3))
    m = rng.uniform(0.5, 1.5, n)
    ref = tuple(np.empty(n) for _ in range(3))
    np_nbody(*ref, x, y, z, m)
    o = dict.fromkeys(COLUMNS, tuple(np.full(n, np.nan) for _ in range(3)))
    b = blocks1(n)
    pc = [ptr(v) for v in o["c"]]
    pin = [ptr(v) for v in (x, y, z, m)]
    impls = {
        "kiln": (lambda: k_nbody[b, 256](*o["kiln"], x, y, z, m), lambda: o["kiln"]),
        "numba": (lambda: n_nbody(*o["numba"], x, y, z, m), lambda: o["numba"]),
        "numpy": (lambda: np_nbody(*o["numpy"], x, y, z, m), lambda: o["numpy"]),
        "c": (lambda: lib.nbody(*pc, *pin, n, EPS2), lambda: o["c"]),
    }
    return Group(ref, close(1e-9, 1e-9), [(f"n-body all pairs, {n} bodies float64",
                                           dict(zip(COLUMNS, COLUMNS)))], impls)


GROUPS = {
    "black_scholes": g_black_scholes,
    "saxpy": g_saxpy,
    "chain6": g_chain6,
    "stencil2d": g_stencil2d,
    "stencil3d": g_stencil3d,
    "transpose": g_transpose,
    "sum": g_sum,
    "histogram": g_histogram,
    "matmul": g_matmul,
    "gather": lambda Q, rng, lib: g_permute(Q, rng, lib, "gather"),
    "scatter": lambda Q, rng, lib: g_permute(Q, rng, lib, "scatter"),
    "mandelbrot": g_mandelbrot,
    "nbody": g_nbody,
}


# ======================================================================================
# Running
# ======================================================================================
def loud(msg):
    bar = "!" * 78
    print(f"\n{bar}\n{msg}\n{bar}", file=sys.stderr, flush=True)


def poison(result):
    """Fills an implementation's output with NaN (-1 for integers) before its checked run.
    The implementations of a group write into one output (dict.fromkeys in the g_
    functions): two fresh 128 MB arrays may differ 2x in how fast this VM writes them
    (their pages' backing), which per-implementation outputs turned into ratios; so
    each one's check must not pass on the previous one's results."""
    try:
        got = result()
    except Exception:  # nothing made yet (a result the run returns)
        return
    for g in got if isinstance(got, tuple) else (got,):
        if isinstance(g, np.ndarray) and g.flags.writeable:
            g.fill(np.nan if g.dtype.kind in "fc" else -1)


def run_group(name, group, repeats):
    """Checks every implementation once, then times the good ones round-robin.
    Returns {key: median ms} and {key: failure text}."""
    failed = {}
    for key, (run, result) in group.impls.items():
        poison(result)
        try:
            run()
        except Exception as e:  # a compile error or a crash of the call: a failed row
            failed[key] = f"{type(e).__name__}: {e}"
            loud(f"FAILED {name}/{key}: {failed[key]}\n{traceback.format_exc()}")
            continue
        try:
            group.check(result(), group.ref)
        except AssertionError as e:
            failed[key] = "wrong result: " + " ".join(str(e).split())[:300]
            loud(f"FAILED {name}/{key}: {failed[key]}")
    keys = [k for k in group.impls if k not in failed]
    for k in keys:  # one more warm-up each
        group.impls[k][0]()
    times = {k: [] for k in keys}
    shuffle = random.Random(len(keys)).shuffle  # the same orders in every run
    for r in range(repeats):
        # a new order every round: a rotation would keep each one after the same other
        order = list(keys)
        shuffle(order)
        for k in order:
            run = group.impls[k][0]
            t = time.perf_counter()
            run()
            times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}, failed


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cc_version():
    try:
        out = subprocess.run([os.environ.get("CC", "cc"), "--version"], capture_output=True, text=True)
        return out.stdout.splitlines()[0]
    except (OSError, IndexError):
        return "?"


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def fmt_ms(v):
    return "—" if v is None else (f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, 3 repeats: a smoke test")
    ap.add_argument("--only", help="comma-separated group names (substrings), see --list")
    ap.add_argument("--list", action="store_true", help="list the groups and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(GROUPS))
        return 0
    repeats = int(os.environ.get("BENCH_REPEATS", "3" if args.quick else "7"))
    names = list(GROUPS)
    if args.only:
        want = [w.strip() for w in args.only.split(",") if w.strip()]
        names = [n for n in names if any(w in n for w in want)]
        if not names:
            sys.exit(f"--only {args.only}: no such group (have: {', '.join(GROUPS)})")

    start = datetime.datetime.now()
    load0 = os.getloadavg()
    lib, cline = build_c()
    rng = np.random.default_rng(12345)
    rows, failures = [], []
    for name in names:
        print(f"... {name}", end="", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        group = GROUPS[name](args.quick, rng, lib)
        med, failed = run_group(name, group, repeats)
        print(f" {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        for title, cols in group.rows:
            cells = {}
            for col in COLUMNS:
                key = cols[col]
                cells[col] = med.get(key)
                if key in failed:
                    failures.append((title, col, failed[key]))
            rows.append((title, cells, {c: failed.get(cols[c]) for c in COLUMNS}))
        del group
        gc.collect()
    load1 = os.getloadavg()
    elapsed = (datetime.datetime.now() - start).total_seconds()

    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "not started"
    print(f"# kiln CPU benchmark, {start:%Y-%m-%d %H:%M}{' (--quick)' if args.quick else ''}\n")
    print(f"- machine: {cpu_model()}, {os.cpu_count()} cores ({platform.machine()}, "
          f"{platform.system()} {platform.release()}); load average {load0[0]:.2f} at start, "
          f"{load1[0]:.2f} at end")
    print(f"- threads: {THREADS} for every parallel runtime (OpenMP, Numba {layer} layer, OpenBLAS)")
    print(f"- kiln {kiln.__version__} ({os.path.dirname(kiln.__file__)}), numba {numba.__version__}, "
          f"numpy {np.__version__}, Python {platform.python_version()}")
    print(f"- C limit: bench/cpu_c/kernels.c, {cline} ({cc_version()})")
    print(f"- median of {repeats} warm runs per cell, implementations interleaved (a new "
          f"seeded random order every round); whole run {elapsed:.0f} s; KILN_TIERS={os.environ['KILN_TIERS']}")
    print("- the rows of one kernel in two index orders share their Numba, NumPy and C cells "
          "(timed once); every cell was checked against a NumPy float64 reference first\n")
    print("| kernel | kiln ms | Numba ms | NumPy ms | C limit ms | kiln/Numba | kiln/limit |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    r_nb, r_lim = [], []
    for title, cells, fails in rows:
        shown = [("FAILED" if fails[c] else fmt_ms(cells[c])) for c in COLUMNS]
        k, nb, lim = cells["kiln"], cells["numba"], cells["c"]
        q_nb = f"{nb / k:.2f}x" if k and nb else "—"
        q_lim = f"{lim / k:.2f}x" if k and lim else "—"
        if k and nb:
            r_nb.append(nb / k)
        if k and lim:
            r_lim.append(lim / k)
        print(f"| {title} | {' | '.join(shown)} | {q_nb} | {q_lim} |")
    print(f"| **geometric mean** ({len(r_nb)} rows) | | | | | **{geomean(r_nb):.2f}x** | "
          f"**{geomean(r_lim):.2f}x** |")
    if failures:
        print("\nFailed cells (not timed):\n")
        for title, col, why in failures:
            print(f"- {title}, {col}: {why}")
        loud(f"{len(failures)} FAILED cell(s): see the end of the table")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
