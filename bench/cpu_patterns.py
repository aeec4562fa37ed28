"""Access patterns and kernel styles bench/cpu.py does not cover: kiln's CPU target against
Numba @njit(parallel=True) with prange, on the same machine, in one run.

    PYTHONPATH=python .venv/bin/python bench/cpu_patterns.py [--quick] [--only NAME[,NAME]] [--list]

bench/cpu.py measures a dozen classic kernels against Numba, NumPy and a C + OpenMP limit.
This file widens the net to about fifty cases, one per pattern a Numba-CUDA user writes:
a row or a column of a 2-D array per thread (reductions, softmax, scans; C and F order),
strided, reversed and transposed views, tall-skinny and short-wide 2-D grids, small arrays
(launch overhead), integer bit tricks, float32 transcendentals, complex arithmetic,
branches and early returns, data-dependent while loops, local arrays, float16 and int8,
shared memory with syncthreads, convolutions and atomics (add, max/min, CAS loops).  It is
the regression net for the CPU target's code generation (lane mode, grid-stride rewrites,
block/fiber mode, spin points): a ratio that drops shows where.

Each case is a kiln kernel written the way a Numba-CUDA user writes it (`kiln.grid`,
`kiln.atomic`, `kiln.shared.array`, realistic block shapes) and the natural Numba
`@njit(parallel=True)` loop with `prange`.  Numba's CPU target has no atomics and no shared
memory, so for those cases the Numba side computes the same result with another algorithm
(per-thread partial arrays, a prange reduction, a naive matmul); the description says so.

Both results are checked against a NumPy float64 reference (or a pure-Python run of the
Numba function on a prefix) before anything is timed; a wrong result or a failure to compile
is a failed row, printed loudly and not timed (Numba's missing float16 arithmetic is an
expected failure).  Timings are warm: after the checked run and one warm-up, kiln and Numba
run alternately BENCH_REPEATS times (7 by default, 3 with --quick), the order swapping every
round, and the table gives medians in milliseconds (per call for the small-array cases,
which time 200 calls per sample).  kiln/Numba is numba_ms / kiln_ms: above 1 means kiln is
faster.  The last row is the geometric mean over the cases where both ran.

--quick uses sizes about 1/16 of the full ones (the small-array cases keep theirs): a smoke
test that every case compiles and checks, whose timings mean little.

Both runtimes get the same thread count: $OMP_NUM_THREADS if set, else every core this
process may run on; OMP_NUM_THREADS, NUMBA_NUM_THREADS, OPENBLAS_NUM_THREADS and
MKL_NUM_THREADS are set to it before anything starts a thread pool.  KILN_TARGET defaults to
cpu, KILN_TIERS to 0 (the optimised code from the first call on).
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
import cmath  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import zlib  # noqa: E402

import numpy as np  # noqa: E402

import kiln  # noqa: E402

try:
    import numba
    from numba import njit, prange
except ImportError:  # pragma: no cover
    sys.exit("numba is needed: make bench installs it (.venv/bin/pip install numba)")

TPB = 256


def blocks(n, tpb=TPB):
    return (n + tpb - 1) // tpb


# ======================================================================================
# Checks and sizes
# ======================================================================================
def close(rtol, atol=0.0):
    def check(got, ref):
        dt = np.result_type(ref, np.float64) if np.iscomplexobj(ref) else np.float64
        np.testing.assert_allclose(np.asarray(got, dtype=dt), ref, rtol=rtol, atol=atol)
    return check


def exact(got, ref):
    np.testing.assert_array_equal(np.asarray(got), ref)


def e2(Q, e):
    """A 1-D size 2^e; 2^(e-4) with --quick."""
    return 1 << (e - 4 if Q else e)


def d2(Q, r, c):
    """A 2-D shape; each side a quarter of it with --quick."""
    return (r // 4, c // 4) if Q else (r, c)


def p2(n):
    return f"2^{n.bit_length() - 1}"


CASES = {}      # name -> builder(Q, rng) returning a case dict, in table order
FAMILY = {}     # name -> pattern family (for --list)
_family = ""


def family(name):
    global _family
    _family = name


def case(f):
    """Registers c_<name>(Q, rng).  The builder returns dict(desc, kiln, numba, kget, nget,
    ref, check[, inner][, numba_xfail]): kiln()/numba() compute, kget()/nget() return what
    check(got, ref) compares with the reference; inner calls make one timed sample;
    numba_xfail says why Numba is expected to fail."""
    name = f.__name__[2:]
    CASES[name] = f
    FAMILY[name] = _family
    return f


def ew(desc, kern, nfun, outs_k, outs_n, args, ref, check, n):
    """An elementwise case: one thread per element, blocks of TPB threads."""
    return dict(desc=desc,
                kiln=lambda: kern[blocks(n), TPB](*outs_k, *args), numba=lambda: nfun(*outs_n, *args),
                kget=lambda: outs_k[0] if len(outs_k) == 1 else np.concatenate(outs_k),
                nget=lambda: outs_n[0] if len(outs_n) == 1 else np.concatenate(outs_n),
                ref=ref, check=check)


# ======================================================================================
# Row per thread: reductions and scans along a row of a C-order array
# ======================================================================================
family("row per thread")


@kiln.jit
def k_softmax(out, x):
    r = kiln.grid(1)
    if r < x.shape[0]:
        m = x[r, 0]
        for j in range(1, x.shape[1]):
            m = max(m, x[r, j])
        s = np.float32(0.0)
        for j in range(x.shape[1]):
            e = math.exp(x[r, j] - m)
            out[r, j] = e
            s += e
        inv = np.float32(1.0) / s
        for j in range(x.shape[1]):
            out[r, j] *= inv


@njit(parallel=True, cache=True)
def n_softmax(out, x):
    for r in prange(x.shape[0]):
        m = x[r, 0]
        for j in range(1, x.shape[1]):
            m = max(m, x[r, j])
        s = np.float32(0.0)
        for j in range(x.shape[1]):
            e = math.exp(x[r, j] - m)
            out[r, j] = e
            s += e
        inv = np.float32(1.0) / s
        for j in range(x.shape[1]):
            out[r, j] *= inv


def softmax_ref(x):
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


@case
def c_softmax_rows(Q, rng):
    R, C = d2(Q, 8192, 1024)
    x = rng.standard_normal((R, C)).astype(np.float32)
    ko, no = np.empty_like(x), np.empty_like(x)
    return dict(desc=f"softmax per row, thread=row, {R}x{C} f32",
                kiln=lambda: k_softmax[blocks(R), TPB](ko, x), numba=lambda: n_softmax(no, x),
                kget=lambda: ko, nget=lambda: no, ref=softmax_ref(x), check=close(1e-4, 1e-7))


@kiln.jit
def k_layernorm(out, x, g, b, eps):
    r = kiln.grid(1)
    if r < x.shape[0]:
        n = x.shape[1]
        s = 0.0
        for j in range(n):
            s += x[r, j]
        mu = s / n
        v = 0.0
        for j in range(n):
            d = x[r, j] - mu
            v += d * d
        inv = 1.0 / math.sqrt(v / n + eps)
        for j in range(n):
            out[r, j] = (x[r, j] - mu) * inv * g[j] + b[j]


@njit(parallel=True, cache=True)
def n_layernorm(out, x, g, b, eps):
    for r in prange(x.shape[0]):
        n = x.shape[1]
        s = 0.0
        for j in range(n):
            s += x[r, j]
        mu = s / n
        v = 0.0
        for j in range(n):
            d = x[r, j] - mu
            v += d * d
        inv = 1.0 / math.sqrt(v / n + eps)
        for j in range(n):
            out[r, j] = (x[r, j] - mu) * inv * g[j] + b[j]


@case
def c_layernorm_rows(Q, rng):
    R, C = d2(Q, 8192, 1024)
    x = rng.standard_normal((R, C))
    g = rng.random(C)
    b = rng.random(C)
    mu = x.mean(1, keepdims=True)
    var = x.var(1, keepdims=True)
    ref = (x - mu) / np.sqrt(var + 1e-5) * g + b
    ko, no = np.empty_like(x), np.empty_like(x)
    return dict(desc=f"layernorm per row, thread=row, {R}x{C} f64",
                kiln=lambda: k_layernorm[blocks(R), TPB](ko, x, g, b, 1e-5),
                numba=lambda: n_layernorm(no, x, g, b, 1e-5),
                kget=lambda: ko, nget=lambda: no, ref=ref, check=close(1e-9, 1e-9))


@kiln.jit
def k_rowmaxsum(mx, sm, x):
    r = kiln.grid(1)
    if r < x.shape[0]:
        m = x[r, 0]
        s = 0.0
        for j in range(x.shape[1]):
            v = x[r, j]
            m = max(m, v)
            s += v
        mx[r] = m
        sm[r] = s


@njit(parallel=True, cache=True)
def n_rowmaxsum(mx, sm, x):
    for r in prange(x.shape[0]):
        m = x[r, 0]
        s = 0.0
        for j in range(x.shape[1]):
            v = x[r, j]
            m = max(m, v)
            s += v
        mx[r] = m
        sm[r] = s


@case
def c_rowmaxsum(Q, rng):
    R, C = d2(Q, 16384, 1024)
    x = rng.standard_normal((R, C))
    ref = np.concatenate([x.max(1), x.sum(1)])
    k = (np.empty(R), np.empty(R))
    n = (np.empty(R), np.empty(R))
    return dict(desc=f"row max+sum, thread=row, {R}x{C} f64",
                kiln=lambda: k_rowmaxsum[blocks(R), TPB](*k, x), numba=lambda: n_rowmaxsum(*n, x),
                kget=lambda: np.concatenate(k), nget=lambda: np.concatenate(n),
                ref=ref, check=close(1e-9, 1e-9))


@kiln.jit
def k_rowscan(out, x):
    r = kiln.grid(1)
    if r < x.shape[0]:
        s = 0.0
        for j in range(x.shape[1]):
            s += x[r, j]
            out[r, j] = s


@njit(parallel=True, cache=True)
def n_rowscan(out, x):
    for r in prange(x.shape[0]):
        s = 0.0
        for j in range(x.shape[1]):
            s += x[r, j]
            out[r, j] = s


@case
def c_rowscan(Q, rng):
    R, C = d2(Q, 8192, 1024)
    x = rng.random((R, C))
    ko, no = np.empty((R, C)), np.empty((R, C))
    return dict(desc=f"per-row inclusive cumsum, thread=row, {R}x{C} f64",
                kiln=lambda: k_rowscan[blocks(R), TPB](ko, x), numba=lambda: n_rowscan(no, x),
                kget=lambda: ko, nget=lambda: no, ref=np.cumsum(x, 1), check=close(1e-10))


# ======================================================================================
# Column per thread: strided across a thread's loop on C order, unit stride on F order
# ======================================================================================
family("column per thread")


@kiln.jit
def k_colsum(out, x):
    j = kiln.grid(1)
    if j < x.shape[1]:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i, j]
        out[j] = s


@njit(parallel=True, cache=True)
def n_colsum(out, x):
    for j in prange(x.shape[1]):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i, j]
        out[j] = s


@case
def c_colsum(Q, rng):
    R, C = d2(Q, 4096, 4096)
    x = rng.standard_normal((R, C))
    ko, no = np.empty(C), np.empty(C)
    return dict(desc=f"column sum, thread=column, C-order {R}x{C} f64",
                kiln=lambda: k_colsum[blocks(C), TPB](ko, x), numba=lambda: n_colsum(no, x),
                kget=lambda: ko, nget=lambda: no, ref=x.sum(0), check=close(1e-9, 1e-9))


@kiln.jit
def k_colmax(out, x):
    j = kiln.grid(1)
    if j < x.shape[1]:
        m = x[0, j]
        for i in range(1, x.shape[0]):
            m = max(m, x[i, j])
        out[j] = m


@njit(parallel=True, cache=True)
def n_colmax(out, x):
    for j in prange(x.shape[1]):
        m = x[0, j]
        for i in range(1, x.shape[0]):
            m = max(m, x[i, j])
        out[j] = m


@case
def c_colmax_corder(Q, rng):
    R, C = d2(Q, 4096, 4096)
    x = rng.standard_normal((R, C)).astype(np.float32)
    ko, no = np.empty(C, np.float32), np.empty(C, np.float32)
    return dict(desc=f"column max, thread=column, C-order {R}x{C} f32",
                kiln=lambda: k_colmax[blocks(C), TPB](ko, x), numba=lambda: n_colmax(no, x),
                kget=lambda: ko, nget=lambda: no, ref=x.max(0), check=exact)


@case
def c_colmax_forder(Q, rng):
    # F order: each thread's column is contiguous, so the loop is a sequential reduction
    R, C = d2(Q, 4096, 4096)
    x = np.asfortranarray(rng.standard_normal((R, C)).astype(np.float32))
    ko, no = np.empty(C, np.float32), np.empty(C, np.float32)
    return dict(desc=f"column max, thread=column, F-order {R}x{C} f32",
                kiln=lambda: k_colmax[blocks(C), TPB](ko, x), numba=lambda: n_colmax(no, x),
                kget=lambda: ko, nget=lambda: no, ref=x.max(0).astype(np.float64), check=exact)


@kiln.jit
def k_colscan(out, x):
    j = kiln.grid(1)
    if j < x.shape[1]:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i, j]
            out[i, j] = s


@njit(parallel=True, cache=True)
def n_colscan(out, x):
    for j in prange(x.shape[1]):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i, j]
            out[i, j] = s


@case
def c_colscan(Q, rng):
    R, C = d2(Q, 2048, 4096)
    x = rng.random((R, C))
    ko, no = np.empty((R, C)), np.empty((R, C))
    return dict(desc=f"per-column cumsum, thread=column, C-order {R}x{C} f64",
                kiln=lambda: k_colscan[blocks(C), TPB](ko, x), numba=lambda: n_colscan(no, x),
                kget=lambda: ko, nget=lambda: no, ref=np.cumsum(x, 0), check=close(1e-10))


# ======================================================================================
# Strided and negative-stride 1-D views
# ======================================================================================
family("strided 1-D views")


@kiln.jit
def k_axpy(out, x, y, a):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@njit(parallel=True, cache=True)
def n_axpy(out, x, y, a):
    for i in prange(out.size):
        out[i] = a * x[i] + y[i]


def _axpy(desc, ko, no, x, y, ref):
    n = ko.size
    return dict(desc=desc,
                kiln=lambda: k_axpy[blocks(n), TPB](ko, x, y, 2.5), numba=lambda: n_axpy(no, x, y, 2.5),
                kget=lambda: ko, nget=lambda: no, ref=ref, check=close(1e-14))


@case
def c_axpy_stride2(Q, rng):
    n = e2(Q, 23)
    xb = rng.random(2 * n)
    yb = rng.random(2 * n)
    x, y = xb[::2], yb[1::2]
    return _axpy(f"axpy with x=a[::2], y=b[1::2] views, {p2(n)} f64",
                 np.empty(n), np.empty(n), x, y, 2.5 * x + y)


@case
def c_axpy_reversed(Q, rng):
    n = e2(Q, 24)
    xb = rng.random(n)
    yb = rng.random(n)
    x = xb[::-1]
    return _axpy(f"axpy with x=a[::-1] (negative stride), {p2(n)} f64",
                 np.empty(n), np.empty(n), x, yb, 2.5 * x + yb)


@case
def c_axpy_outrev(Q, rng):
    n = e2(Q, 24)
    x = rng.random(n)
    y = rng.random(n)
    return _axpy(f"axpy writing out=o[::-1] (negative stride), {p2(n)} f64",
                 np.empty(n)[::-1], np.empty(n)[::-1], x, y, 2.5 * x + y)


# ======================================================================================
# 2-D elementwise on F-order, transposed and strided 2-D inputs (j, i = grid(2))
# ======================================================================================
family("2-D layouts")


@kiln.jit
def k_add2d(out, a, b):
    j, i = kiln.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = 2.0 * a[i, j] + b[i, j]


@njit(parallel=True, cache=True)
def n_add2d(out, a, b):
    for i in prange(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = 2.0 * a[i, j] + b[i, j]


def _add2d(desc, ko, no, a, b, grid, block):
    return dict(desc=desc,
                kiln=lambda: k_add2d[grid, block](ko, a, b), numba=lambda: n_add2d(no, a, b),
                kget=lambda: ko, nget=lambda: no, ref=2.0 * a + b, check=close(1e-14))


@case
def c_add2d_Tinput(Q, rng):
    n = 1024 if Q else 4096
    A = rng.random((n, n))
    b = rng.random((n, n))
    return _add2d(f"out = 2*a.T + b, j,i=grid(2), {n}^2 f64 (a.T is F-order)",
                  np.empty((n, n)), np.empty((n, n)), A.T, b, (n // 16, n // 16), (16, 16))


@case
def c_add2d_allF(Q, rng):
    n = 1024 if Q else 4096
    a = np.asfortranarray(rng.random((n, n)))
    b = np.asfortranarray(rng.random((n, n)))
    return _add2d(f"out = 2*a + b, all F-order, j,i=grid(2), {n}^2 f64",
                  np.empty((n, n), order="F"), np.empty((n, n), order="F"), a, b,
                  (n // 16, n // 16), (16, 16))


@case
def c_add2d_strided2d(Q, rng):
    n = 1024 if Q else 4096
    A = rng.random((n, 2 * n))
    B = rng.random((2 * n, n))
    return _add2d(f"out = 2*A[:, ::2] + B[::2, :], j,i=grid(2), {n}^2 f64",
                  np.empty((n, n)), np.empty((n, n)), A[:, ::2], B[::2, :],
                  (n // 16, n // 16), (16, 16))


# ======================================================================================
# Tall-skinny and short-wide 2-D grids (the same k_add2d); CUDA's limit y <= 65535 on
# the grid holds on the CPU target too, hence 1,000,000 rows rather than 2^21
# ======================================================================================
family("tall-skinny / short-wide grids")


@case
def c_add2d_tallskinny(Q, rng):
    R, C = (62500 if Q else 1000000), 8
    a, b = rng.random((R, C)), rng.random((R, C))
    return _add2d(f"out = 2*a + b, j,i=grid(2), block (8,32), {R}x{C} f64",
                  np.empty((R, C)), np.empty((R, C)), a, b, (1, blocks(R, 32)), (8, 32))


@case
def c_add2d_tallskinny_b16(Q, rng):
    R, C = (62500 if Q else 1000000), 8
    a, b = rng.random((R, C)), rng.random((R, C))
    return _add2d(f"out = 2*a + b, j,i=grid(2), block (16,16) (half idle), {R}x{C} f64",
                  np.empty((R, C)), np.empty((R, C)), a, b, (1, blocks(R, 16)), (16, 16))


@case
def c_add2d_shortwide(Q, rng):
    R, C = 8, e2(Q, 21)
    a, b = rng.random((R, C)), rng.random((R, C))
    return _add2d(f"out = 2*a + b, j,i=grid(2), block (256,1), {R}x{p2(C)} f64",
                  np.empty((R, C)), np.empty((R, C)), a, b, (C // 256, R), (256, 1))


@case
def c_add2d_shortwide_b16(Q, rng):
    R, C = 8, e2(Q, 21)
    a, b = rng.random((R, C)), rng.random((R, C))
    return _add2d(f"out = 2*a + b, j,i=grid(2), block (16,16) (half idle), {R}x{p2(C)} f64",
                  np.empty((R, C)), np.empty((R, C)), a, b, (C // 16, 1), (16, 16))


# ======================================================================================
# Small arrays: per-launch overhead (200 calls per timed sample; the table gives ms per call)
# ======================================================================================
family("small arrays")
SMALL_CALLS = 200


@kiln.jit
def k_saxpy32(out, x, y, a):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@njit(parallel=True, cache=True)
def n_saxpy32(out, x, y, a):
    for i in prange(out.size):
        out[i] = a * x[i] + y[i]


def _small(rng, e):
    n = 1 << e
    x = rng.random(n, np.float32)
    y = rng.random(n, np.float32)
    a = np.float32(2.5)
    ko, no = np.empty(n, np.float32), np.empty(n, np.float32)
    return dict(desc=f"saxpy small, 2^{e} f32 (ms per call, {SMALL_CALLS} calls/sample)",
                inner=SMALL_CALLS,
                kiln=lambda: k_saxpy32[blocks(n), TPB](ko, x, y, a), numba=lambda: n_saxpy32(no, x, y, a),
                kget=lambda: ko, nget=lambda: no, ref=2.5 * x.astype(np.float64) + y, check=close(1e-6))


@case
def c_small_2e10(Q, rng):
    return _small(rng, 10)


@case
def c_small_2e14(Q, rng):
    return _small(rng, 14)


@case
def c_small_softmax_64(Q, rng):
    R, C = 64, 64
    x = rng.standard_normal((R, C)).astype(np.float32)
    ko, no = np.empty_like(x), np.empty_like(x)
    return dict(desc=f"softmax small, {R}x{C} f32, [1, 64] (ms per call, {SMALL_CALLS} calls/sample)",
                inner=SMALL_CALLS,
                kiln=lambda: k_softmax[1, 64](ko, x), numba=lambda: n_softmax(no, x),
                kget=lambda: ko, nget=lambda: no, ref=softmax_ref(x), check=close(1e-4, 1e-7))


# ======================================================================================
# Integer bit operations: 64-bit hashing with a SWAR popcount, 32-bit variable rotates
# ======================================================================================
family("integer bit ops")
M1 = np.uint64(0xff51afd7ed558ccd)
M2 = np.uint64(0xc4ceb9fe1a85ec53)
S33 = np.uint64(33)
K5 = np.uint64(0x5555555555555555)
K3 = np.uint64(0x3333333333333333)
K0F = np.uint64(0x0f0f0f0f0f0f0f0f)
K01 = np.uint64(0x0101010101010101)
U1, U2, U4, U56 = np.uint64(1), np.uint64(2), np.uint64(4), np.uint64(56)


@kiln.jit
def k_hash(out, x):
    i = kiln.grid(1)
    if i < x.size:
        h = x[i]
        h ^= h >> S33
        h *= M1
        h ^= h >> S33
        h *= M2
        h ^= h >> S33
        c = h - ((h >> U1) & K5)
        c = (c & K3) + ((c >> U2) & K3)
        c = (c + (c >> U4)) & K0F
        c = (c * K01) >> U56
        out[i] = h ^ c


@njit(parallel=True, cache=True)
def n_hash(out, x):
    for i in prange(x.size):
        h = x[i]
        h ^= h >> S33
        h *= M1
        h ^= h >> S33
        h *= M2
        h ^= h >> S33
        c = h - ((h >> U1) & K5)
        c = (c & K3) + ((c >> U2) & K3)
        c = (c + (c >> U4)) & K0F
        c = (c * K01) >> U56
        out[i] = h ^ c


def np_hash(x):
    with np.errstate(over="ignore"):
        h = x.copy()
        h ^= h >> S33
        h *= M1
        h ^= h >> S33
        h *= M2
        h ^= h >> S33
        c = h - ((h >> U1) & K5)
        c = (c & K3) + ((c >> U2) & K3)
        c = (c + (c >> U4)) & K0F
        c = (c * K01) >> U56
    return h ^ c


@case
def c_hash64_popcount(Q, rng):
    n = e2(Q, 24)
    x = rng.integers(0, 2**63, n, dtype=np.uint64)
    ko, no = np.empty(n, np.uint64), np.empty(n, np.uint64)
    return ew(f"murmur fmix64 + SWAR popcount, {p2(n)} uint64", k_hash, n_hash,
              (ko,), (no,), (x,), np_hash(x), exact, n)


@kiln.jit
def k_xorshift32(out, x):
    i = kiln.grid(1)
    if i < x.size:
        s = x[i]
        for _ in range(16):
            s ^= s << np.uint32(13)
            s ^= s >> np.uint32(17)
            s ^= s << np.uint32(5)
            r = s & np.uint32(31)
            s = (s << r) | (s >> ((np.uint32(32) - r) & np.uint32(31)))
        out[i] = s


@njit(parallel=True, cache=True)
def n_xorshift32(out, x):
    # Numba widens uint32 shifts to 64 bits: the np.uint32(...) truncations keep it 32-bit
    for i in prange(x.size):
        s = x[i]
        for _ in range(16):
            s = np.uint32(s ^ np.uint32(s << np.uint32(13)))
            s = np.uint32(s ^ (s >> np.uint32(17)))
            s = np.uint32(s ^ np.uint32(s << np.uint32(5)))
            r = s & np.uint32(31)
            s = np.uint32(np.uint32(s << r) | (s >> ((np.uint32(32) - r) & np.uint32(31))))
        out[i] = s


def np_xorshift32(x):
    s = x.astype(np.uint64)
    M = np.uint64(0xFFFFFFFF)
    for _ in range(16):
        s ^= (s << np.uint64(13)) & M
        s ^= s >> np.uint64(17)
        s ^= (s << np.uint64(5)) & M
        r = s & np.uint64(31)
        s = ((s << r) & M) | (s >> ((np.uint64(32) - r) & np.uint64(31)))
    return s.astype(np.uint32)


@case
def c_xorshift32_rot(Q, rng):
    n = e2(Q, 22)
    x = rng.integers(1, 2**32, n, dtype=np.uint64).astype(np.uint32)
    ko, no = np.empty(n, np.uint32), np.empty(n, np.uint32)
    return ew(f"16 rounds xorshift32 + variable rotate, {p2(n)} uint32", k_xorshift32, n_xorshift32,
              (ko,), (no,), (x,), np_xorshift32(x), exact, n)


# ======================================================================================
# float32 transcendentals (Numba here has no SVML: its vector math is scalar libm calls)
# ======================================================================================
family("float32 math")


@kiln.jit
def k_exp(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = math.exp(x[i])


@njit(parallel=True, cache=True)
def n_exp(out, x):
    for i in prange(x.size):
        out[i] = math.exp(x[i])


@kiln.jit
def k_log(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = math.log(x[i])


@njit(parallel=True, cache=True)
def n_log(out, x):
    for i in prange(x.size):
        out[i] = math.log(x[i])


@kiln.jit
def k_sin(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = math.sin(x[i])


@njit(parallel=True, cache=True)
def n_sin(out, x):
    for i in prange(x.size):
        out[i] = math.sin(x[i])


@kiln.jit
def k_tanh(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = math.tanh(x[i])


@njit(parallel=True, cache=True)
def n_tanh(out, x):
    for i in prange(x.size):
        out[i] = math.tanh(x[i])


@kiln.jit
def k_pow(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = x[i] ** np.float32(1.7)


@njit(parallel=True, cache=True)
def n_pow(out, x):
    for i in prange(x.size):
        out[i] = x[i] ** np.float32(1.7)


@kiln.jit
def k_erf(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = math.erf(x[i])


@njit(parallel=True, cache=True)
def n_erf(out, x):
    for i in prange(x.size):
        out[i] = math.erf(x[i])


@kiln.jit
def k_gelu(out, x):
    i = kiln.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = np.float32(0.5) * v * (np.float32(1.0) + math.tanh(
            np.float32(0.7978845608) * (v + np.float32(0.044715) * v * v * v)))


@njit(parallel=True, cache=True)
def n_gelu(out, x):
    for i in prange(x.size):
        v = x[i]
        out[i] = np.float32(0.5) * v * (np.float32(1.0) + math.tanh(
            np.float32(0.7978845608) * (v + np.float32(0.044715) * v * v * v)))


# name: (what the kernel computes, float64 reference, input range)
F32_CASES = {
    "exp": ("math.exp(v)", np.exp, (-10, 10)),
    "log": ("math.log(v)", np.log, (0.01, 100)),
    "sin": ("math.sin(v)", np.sin, (-100, 100)),
    "tanh": ("math.tanh(v)", np.tanh, (-5, 5)),
    "pow": ("v ** np.float32(1.7)", lambda v: v ** 1.7, (0.01, 100)),
    "erf": ("math.erf(v)", np.vectorize(math.erf), (-3, 3)),
    "gelu": ("tanh-GELU",
             lambda v: 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v ** 3))), (-5, 5)),
}


def _f32(name):
    expr, reff, (lo, hi) = F32_CASES[name]
    kern, nfun = globals()["k_" + name], globals()["n_" + name]

    def build(Q, rng):
        n = e2(Q, 24)
        x = rng.uniform(lo, hi, n).astype(np.float32)
        ko, no = np.empty(n, np.float32), np.empty(n, np.float32)
        return ew(f"float32 {expr}, {p2(n)}", kern, nfun, (ko,), (no,), (x,),
                  reff(x.astype(np.float64)), close(1e-5, 1e-6), n)
    build.__name__ = "c_f32_" + name
    return build


for _name in F32_CASES:
    case(_f32(_name))


# ======================================================================================
# Complex arithmetic
# ======================================================================================
family("complex")


@kiln.jit
def k_cpoly(out, z, c):
    i = kiln.grid(1)
    if i < z.size:
        w = z[i]
        for _ in range(8):
            w = w * w * 0.5 + c[i]
        out[i] = abs(w) + (w * w.conjugate()).real


@njit(parallel=True, cache=True)
def n_cpoly(out, z, c):
    for i in prange(z.size):
        w = z[i]
        for _ in range(8):
            w = w * w * 0.5 + c[i]
        out[i] = abs(w) + (w * w.conjugate()).real


def np_cpoly(z, c):
    w = z.copy()
    for _ in range(8):
        w = w * w * 0.5 + c
    return np.abs(w) + (w * w.conj()).real


def _cpoly(Q, rng, dt, rdt):
    n = e2(Q, 22)
    z = (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(dt) * 0.8
    c = (rng.uniform(-.3, .3, n) + 1j * rng.uniform(-.3, .3, n)).astype(dt)
    ref = np_cpoly(z.astype(np.complex128), c.astype(np.complex128))
    ko, no = np.empty(n, rdt), np.empty(n, rdt)
    return ew(f"complex w = w*w*0.5 + c (8x), abs, {np.dtype(dt).name}, {p2(n)}", k_cpoly, n_cpoly,
              (ko,), (no,), (z, c), ref, close(1e-4 if dt == np.complex64 else 1e-10, 1e-5), n)


@case
def c_complex128_poly(Q, rng):
    return _cpoly(Q, rng, np.complex128, np.float64)


@case
def c_complex64_poly(Q, rng):
    return _cpoly(Q, rng, np.complex64, np.float32)


@kiln.jit
def k_cexp(out, z):
    i = kiln.grid(1)
    if i < z.size:
        out[i] = cmath.exp(z[i]) * cmath.sqrt(z[i])


@njit(parallel=True, cache=True)
def n_cexp(out, z):
    for i in prange(z.size):
        out[i] = cmath.exp(z[i]) * cmath.sqrt(z[i])


@case
def c_complex128_exp_sqrt(Q, rng):
    n = e2(Q, 22)
    z = rng.uniform(-2, 2, n) + 1j * rng.uniform(-2, 2, n)
    ko, no = np.empty(n, np.complex128), np.empty(n, np.complex128)
    return ew(f"cmath.exp(z)*cmath.sqrt(z), complex128 {p2(n)}", k_cexp, n_cexp, (ko,), (no,), (z,),
              np.exp(z) * np.sqrt(z), close(1e-12, 1e-12), n)


# ======================================================================================
# Branches: a device function with early returns, early returns in the kernel itself
# ======================================================================================
family("branches")


@kiln.jit(device=True)
def k_pw(x):
    if x < -1.0:
        return -x * x
    if x < 0.0:
        return x
    if x < 1.0:
        return math.sqrt(x)
    return 2.0 - 1.0 / x


@kiln.jit
def k_piecewise(out, a):
    i = kiln.grid(1)
    if i < a.size:
        out[i] = k_pw(a[i])


@njit(cache=True)
def n_pw(x):
    if x < -1.0:
        return -x * x
    if x < 0.0:
        return x
    if x < 1.0:
        return math.sqrt(x)
    return 2.0 - 1.0 / x


@njit(parallel=True, cache=True)
def n_piecewise(out, a):
    for i in prange(a.size):
        out[i] = n_pw(a[i])


@case
def c_piecewise_devfn(Q, rng):
    n = e2(Q, 24)
    a = rng.uniform(-3, 3, n)
    ref = np.where(a < -1, -a * a, np.where(a < 0, a, np.where(a < 1, np.sqrt(np.abs(a)), 2 - 1 / a)))
    ko, no = np.empty(n), np.empty(n)
    return ew(f"piecewise 4-branch device fn w/ early return, {p2(n)} f64", k_piecewise, n_piecewise,
              (ko,), (no,), (a,), ref, close(1e-14), n)


@kiln.jit
def k_clampret(out, a, lo, hi):
    i = kiln.grid(1)
    if i >= a.size:
        return
    v = a[i]
    if v < lo:
        out[i] = lo
        return
    if v > hi:
        out[i] = hi
        return
    out[i] = v * v * (3.0 - 2.0 * v)


@njit(parallel=True, cache=True)
def n_clampret(out, a, lo, hi):
    for i in prange(a.size):
        v = a[i]
        if v < lo:
            out[i] = lo
        elif v > hi:
            out[i] = hi
        else:
            out[i] = v * v * (3.0 - 2.0 * v)


@case
def c_early_return_kernel(Q, rng):
    n = e2(Q, 24)
    a = rng.uniform(-0.5, 1.5, n)
    ref = np.where(a < 0, 0.0, np.where(a > 1, 1.0, a * a * (3 - 2 * a)))
    ko, no = np.empty(n), np.empty(n)
    return ew(f"smoothstep with early returns in kernel, {p2(n)} f64", k_clampret, n_clampret,
              (ko,), (no,), (a, 0.0, 1.0), ref, close(1e-14), n)


# ======================================================================================
# While loops with a data-dependent trip count
# ======================================================================================
family("while loops")


@kiln.jit
def k_collatz(out, a):
    i = kiln.grid(1)
    if i < a.size:
        n = a[i]
        steps = 0
        while n != 1:
            if n & 1:
                n = 3 * n + 1
            else:
                n = n >> 1
            steps += 1
        out[i] = steps


@njit(parallel=True, cache=True)
def n_collatz(out, a):
    for i in prange(a.size):
        n = a[i]
        steps = 0
        while n != 1:
            if n & 1:
                n = 3 * n + 1
            else:
                n = n >> 1
            steps += 1
        out[i] = steps


def prefix_check(k):
    """Compares the first k elements (the reference is a pure-Python run on a prefix)."""
    def check(got, ref):
        np.testing.assert_array_equal(np.asarray(got)[:k], ref[:k])
    return check


@case
def c_collatz_while(Q, rng):
    n = e2(Q, 20)
    a = rng.integers(1, 1 << 30, n, dtype=np.int64)
    ref = np.empty(2000, np.int64)
    n_collatz.py_func(ref, a[:2000])
    ko, no = np.empty(n, np.int64), np.empty(n, np.int64)
    return ew(f"Collatz steps (while, data-dep trip count), {p2(n)} int64", k_collatz, n_collatz,
              (ko,), (no,), (a,), ref, prefix_check(2000), n)


@kiln.jit
def k_newton(out, a):
    i = kiln.grid(1)
    if i < a.size:
        x = a[i]
        y = x if x > 1.0 else 1.0
        while abs(y * y - x) > 1e-12 * x:
            y = 0.5 * (y + x / y)
        out[i] = y


@njit(parallel=True, cache=True)
def n_newton(out, a):
    for i in prange(a.size):
        x = a[i]
        y = x if x > 1.0 else 1.0
        while abs(y * y - x) > 1e-12 * x:
            y = 0.5 * (y + x / y)
        out[i] = y


@case
def c_newton_while(Q, rng):
    n = e2(Q, 22)
    a = np.exp(rng.uniform(-10, 20, n))
    ko, no = np.empty(n), np.empty(n)
    return ew(f"Newton sqrt, while abs(y*y-x) > tol, {p2(n)} f64", k_newton, n_newton,
              (ko,), (no,), (a,), np.sqrt(a), close(1e-11), n)


# ======================================================================================
# Local arrays: per-thread scratch (Numba: a small np.empty/np.zeros per iteration)
# ======================================================================================
family("local arrays")


@kiln.jit
def k_median9(out, a):
    i = kiln.grid(1)
    if 4 <= i < a.size - 4:
        w = kiln.local.array(9, kiln.float32)
        for k in range(9):
            w[k] = a[i - 4 + k]
        for k in range(1, 9):
            v = w[k]
            j = k - 1
            while j >= 0 and w[j] > v:
                w[j + 1] = w[j]
                j -= 1
            w[j + 1] = v
        out[i] = w[4]


@njit(parallel=True, cache=True)
def n_median9(out, a):
    for i in prange(4, a.size - 4):
        w = np.empty(9, np.float32)
        for k in range(9):
            w[k] = a[i - 4 + k]
        for k in range(1, 9):
            v = w[k]
            j = k - 1
            while j >= 0 and w[j] > v:
                w[j + 1] = w[j]
                j -= 1
            w[j + 1] = v
        out[i] = w[4]


@case
def c_median9_localarray(Q, rng):
    n = e2(Q, 22)
    a = rng.random(n, np.float32)
    ref = np.median(np.lib.stride_tricks.sliding_window_view(a, 9), axis=1).astype(np.float64)
    ko, no = np.zeros(n, np.float32), np.zeros(n, np.float32)
    c = ew(f"9-pt median filter, local.array(9) + insertion sort, {p2(n)} f32", k_median9, n_median9,
           (ko,), (no,), (a,), ref, exact, n)
    c["kget"] = lambda: ko[4:-4]
    c["nget"] = lambda: no[4:-4]
    return c


@kiln.jit
def k_digits(out, a):
    i = kiln.grid(1)
    if i < a.size:
        cnt = kiln.local.array(10, kiln.int32)
        for k in range(10):
            cnt[k] = 0
        v = a[i]
        while v > 0:
            cnt[v % 10] += 1
            v //= 10
        best = 0
        for k in range(10):
            if cnt[k] > cnt[best]:
                best = k
        out[i] = best


@njit(parallel=True, cache=True)
def n_digits(out, a):
    for i in prange(a.size):
        cnt = np.zeros(10, np.int32)
        v = a[i]
        while v > 0:
            cnt[v % 10] += 1
            v //= 10
        best = 0
        for k in range(10):
            if cnt[k] > cnt[best]:
                best = k
        out[i] = best


@case
def c_digit_mode_localarray(Q, rng):
    n = e2(Q, 22)
    a = rng.integers(0, 10**15, n, dtype=np.int64)
    ref = np.empty(3000, np.int64)
    n_digits.py_func(ref, a[:3000])
    ko, no = np.empty(n, np.int64), np.empty(n, np.int64)
    return ew(f"most frequent decimal digit, local.array(10) int32 counts, {p2(n)} int64",
              k_digits, n_digits, (ko,), (no,), (a,), ref, prefix_check(3000), n)


# ======================================================================================
# Narrow types: float16, int8 with int32 accumulation and saturation
# ======================================================================================
family("float16 / int8")


@kiln.jit
def k_f16(out, a, b, c):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a[i] * b[i] + c[i]


@njit(parallel=True, cache=True)
def n_f16(out, a, b, c):
    for i in prange(out.size):
        out[i] = a[i] * b[i] + c[i]


@case
def c_float16_fma_like(Q, rng):
    n = e2(Q, 24)
    a, b, c = (rng.random(n).astype(np.float16) for _ in range(3))
    ko, no = np.empty(n, np.float16), np.empty(n, np.float16)
    cs = ew(f"float16 a*b+c, {p2(n)}", k_f16, n_f16, (ko,), (no,), (a, b, c),
            (a * b + c).astype(np.float64), exact, n)
    cs["numba_xfail"] = "Numba's @njit has no float16 arithmetic"
    return cs


@kiln.jit
def k_i8mv(out, A, v):
    r = kiln.grid(1)
    if r < A.shape[0]:
        acc = np.int32(0)
        for k in range(A.shape[1]):
            acc += np.int32(A[r, k]) * np.int32(v[k])
        out[r] = acc


@njit(parallel=True, cache=True)
def n_i8mv(out, A, v):
    for r in prange(A.shape[0]):
        acc = np.int32(0)
        for k in range(A.shape[1]):
            acc += np.int32(A[r, k]) * np.int32(v[k])
        out[r] = acc


@case
def c_int8_matvec(Q, rng):
    R, C = d2(Q, 16384, 8192)
    A = rng.integers(-128, 128, (R, C), dtype=np.int8)
    v = rng.integers(-128, 128, C, dtype=np.int8)
    ko, no = np.empty(R, np.int32), np.empty(R, np.int32)
    return dict(desc=f"int8 matvec, int32 acc, thread=row, {R}x{C}",
                kiln=lambda: k_i8mv[blocks(R), TPB](ko, A, v), numba=lambda: n_i8mv(no, A, v),
                kget=lambda: ko, nget=lambda: no,
                ref=A.astype(np.int32) @ v.astype(np.int32), check=exact)


@kiln.jit
def k_i8sat(out, a, b):
    i = kiln.grid(1)
    if i < out.size:
        p = np.int32(a[i]) * np.int32(b[i])
        p = p >> 6
        out[i] = np.int8(min(127, max(-128, p)))


@njit(parallel=True, cache=True)
def n_i8sat(out, a, b):
    for i in prange(out.size):
        p = np.int32(a[i]) * np.int32(b[i])
        p = p >> 6
        out[i] = np.int8(min(127, max(-128, p)))


@case
def c_int8_saturating_mul(Q, rng):
    n = e2(Q, 26)
    a = rng.integers(-128, 128, n, dtype=np.int8)
    b = rng.integers(-128, 128, n, dtype=np.int8)
    ref = np.clip((a.astype(np.int32) * b) >> 6, -128, 127).astype(np.int8)
    ko, no = np.empty(n, np.int8), np.empty(n, np.int8)
    return ew(f"int8*int8 -> int32 >>6, saturate to int8, {p2(n)}", k_i8sat, n_i8sat,
              (ko,), (no,), (a, b), ref, exact, n)


# ======================================================================================
# Shared memory + syncthreads (block mode: a fiber per thread); the naive matmul is the
# control.  Numba: a naive prange matmul and a prange reduction.
# ======================================================================================
family("shared memory")
TILE = 16


@kiln.jit
def k_smatmul(A, B, C):
    # the Numba-CUDA documentation's fast_matmul
    sA = kiln.shared.array(shape=(TILE, TILE), dtype=kiln.float32)
    sB = kiln.shared.array(shape=(TILE, TILE), dtype=kiln.float32)
    x, y = kiln.grid(2)
    tx = kiln.threadIdx.x
    ty = kiln.threadIdx.y
    bpg = kiln.gridDim.x
    tmp = np.float32(0.0)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TILE) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TILE]
        if x < B.shape[1] and (ty + i * TILE) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TILE, x]
        kiln.syncthreads()
        for j in range(TILE):
            tmp += sA[ty, j] * sB[j, tx]
        kiln.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


@kiln.jit
def k_nmatmul32(A, B, C):
    x, y = kiln.grid(2)
    if y < C.shape[0] and x < C.shape[1]:
        tmp = np.float32(0.0)
        for k in range(A.shape[1]):
            tmp += A[y, k] * B[k, x]
        C[y, x] = tmp


@njit(parallel=True, cache=True)
def n_matmul32(A, B, C):
    for i in prange(C.shape[0]):
        for j in range(C.shape[1]):
            tmp = np.float32(0.0)
            for k in range(A.shape[1]):
                tmp += A[i, k] * B[k, j]
            C[i, j] = tmp


def _mm(Q, rng, kern, label):
    n = 128 if Q else 512
    A = rng.random((n, n), np.float32)
    B = rng.random((n, n), np.float32)
    ko, no = np.empty((n, n), np.float32), np.empty((n, n), np.float32)
    g = (n // TILE, n // TILE)
    return dict(desc=f"matmul {label}, {n}^2 f32 (Numba: naive prange i, j, k)",
                kiln=lambda: kern[g, (TILE, TILE)](A, B, ko), numba=lambda: n_matmul32(A, B, no),
                kget=lambda: ko, nget=lambda: no, ref=A.astype(np.float64) @ B, check=close(1e-4))


@case
def c_matmul_shared_tiled(Q, rng):
    return _mm(Q, rng, k_smatmul, "shared-memory 16x16 tiles + syncthreads")


@case
def c_matmul_naive_f32(Q, rng):
    return _mm(Q, rng, k_nmatmul32, "naive x, y = grid(2)")


@kiln.jit
def k_blocksum(res, a):
    s = kiln.shared.array(256, kiln.float64)
    tid = kiln.threadIdx.x
    i = kiln.grid(1)
    acc = 0.0
    stride = kiln.gridsize(1)
    while i < a.size:
        acc += a[i]
        i += stride
    s[tid] = acc
    kiln.syncthreads()
    step = 128
    while step > 0:
        if tid < step:
            s[tid] += s[tid + step]
        kiln.syncthreads()
        step //= 2
    if tid == 0:
        kiln.atomic.add(res, 0, s[0])


@njit(parallel=True, cache=True)
def n_sum(a):
    s = 0.0
    for i in prange(a.size):
        s += a[i]
    return s


@case
def c_shared_tree_reduction(Q, rng):
    n = e2(Q, 24)
    a = rng.random(n)
    kr, nr = np.zeros(1), np.zeros(1)

    def rk():
        kr[0] = 0.0
        k_blocksum[256, 256](kr, a)

    def rn():
        nr[0] = n_sum(a)
    return dict(desc=f"sum: grid-stride + shared tree reduction + atomic per block, 256x256, "
                     f"{p2(n)} f64 (Numba: prange reduction)",
                kiln=rk, numba=rn, kget=lambda: kr, nget=lambda: nr,
                ref=np.array([math.fsum(a)]), check=close(1e-10))


# ======================================================================================
# 1-D convolution: a filter passed as an array, a filter in a global tuple
# ======================================================================================
family("convolution")


@kiln.jit
def k_conv1d(out, x, w):
    i = kiln.grid(1)
    if i < out.size:
        s = np.float32(0.0)
        for k in range(w.size):
            s += w[k] * x[i + k]
        out[i] = s


@njit(parallel=True, cache=True)
def n_conv1d(out, x, w):
    for i in prange(out.size):
        s = np.float32(0.0)
        for k in range(w.size):
            s += w[k] * x[i + k]
        out[i] = s


@case
def c_conv1d_7tap(Q, rng):
    n, K = e2(Q, 24), 7
    x = rng.random(n + K - 1, np.float32)
    w = rng.random(K, np.float32)
    ref = np.correlate(x.astype(np.float64), w.astype(np.float64), "valid")
    ko, no = np.empty(n, np.float32), np.empty(n, np.float32)
    return dict(desc=f"1-D conv, 7-tap filter (runtime array), {p2(n)} f32",
                kiln=lambda: k_conv1d[blocks(n), TPB](ko, x, w), numba=lambda: n_conv1d(no, x, w),
                kget=lambda: ko, nget=lambda: no, ref=ref, check=close(1e-5))


W7 = (0.1, 0.2, 0.15, 0.1, 0.15, 0.2, 0.1)


@kiln.jit
def k_conv1d_const(out, x):
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        for k in range(7):
            s += W7[k] * x[i + k]
        out[i] = s


@njit(parallel=True, cache=True)
def n_conv1d_const(out, x):
    for i in prange(out.size):
        s = 0.0
        for k in range(7):
            s += W7[k] * x[i + k]
        out[i] = s


@case
def c_conv1d_7tap_const(Q, rng):
    n = e2(Q, 24)
    x = rng.random(n + 6)
    ko, no = np.empty(n), np.empty(n)
    return dict(desc=f"1-D conv, 7-tap global-tuple filter, {p2(n)} f64",
                kiln=lambda: k_conv1d_const[blocks(n), TPB](ko, x), numba=lambda: n_conv1d_const(no, x),
                kget=lambda: ko, nget=lambda: no, ref=np.correlate(x, np.array(W7), "valid"),
                check=close(1e-12))


# ======================================================================================
# Atomics: max/min after a grid-stride while loop, one atomic.max per element, a CAS loop.
# Numba has no atomics: a prange reduction or per-thread partial arrays instead.
# ======================================================================================
family("atomics")


@kiln.jit
def k_amax(res, a):
    i = kiln.grid(1)
    m = -np.inf
    mn = np.inf
    stride = kiln.gridsize(1)
    while i < a.size:
        m = max(m, a[i])
        mn = min(mn, a[i])
        i += stride
    kiln.atomic.max(res, 0, m)
    kiln.atomic.min(res, 1, mn)


@njit(parallel=True, cache=True)
def n_amax(a):
    m = -np.inf
    mn = np.inf
    for i in prange(a.size):
        m = max(m, a[i])
        mn = min(mn, a[i])
    return m, mn


@case
def c_atomic_maxmin_gridstride(Q, rng):
    n = e2(Q, 24)
    a = rng.standard_normal(n)
    kr, nr = np.zeros(2), np.zeros(2)

    def rk():
        kr[0] = -np.inf
        kr[1] = np.inf
        k_amax[1024, 256](kr, a)

    def rn():
        nr[:] = n_amax(a)
    return dict(desc=f"max & min: grid-stride + atomic.max/min per thread, 1024x256, {p2(n)} f64 "
                     "(Numba: prange reduction)",
                kiln=rk, numba=rn, kget=lambda: kr, nget=lambda: nr,
                ref=np.array([a.max(), a.min()]), check=exact)


@kiln.jit
def k_binmax(res, key, val):
    i = kiln.grid(1)
    if i < key.size:
        kiln.atomic.max(res, key[i], val[i])


@njit(parallel=True, cache=True)
def n_binmax(key, val, nbins, nt):
    n = key.size
    part = np.full((nt, nbins), np.iinfo(np.int32).min, np.int32)
    chunk = (n + nt - 1) // nt
    for t in prange(nt):
        for i in range(t * chunk, min(n, (t + 1) * chunk)):
            k = key[i]
            if val[i] > part[t, k]:
                part[t, k] = val[i]
    out = np.full(nbins, np.iinfo(np.int32).min, np.int32)
    for t in range(nt):
        for b in range(nbins):
            out[b] = max(out[b], part[t, b])
    return out


@case
def c_atomic_max_perbin(Q, rng):
    n, NB = e2(Q, 24), 1024
    key = rng.integers(0, NB, n).astype(np.int32)
    val = rng.integers(-10**9, 10**9, n).astype(np.int32)
    ref = np.full(NB, np.iinfo(np.int32).min, np.int64)
    np.maximum.at(ref, key, val)
    kr = np.empty(NB, np.int32)
    got = {}
    nt = numba.get_num_threads()

    def rk():
        kr[:] = np.iinfo(np.int32).min
        k_binmax[blocks(n), TPB](kr, key, val)

    def rn():
        got["n"] = n_binmax(key, val, NB, nt)
    return dict(desc=f"per-bin max, atomic.max per element, {NB} bins, {p2(n)} int32 "
                     "(Numba: per-thread partials)",
                kiln=rk, numba=rn, kget=lambda: kr, nget=lambda: got["n"], ref=ref, check=exact)


@kiln.jit
def k_cas(bins, key, val):
    # CUDA's compare-and-swap retry loop, here adding squares into int64 bins
    i = kiln.grid(1)
    if i < key.size:
        b = key[i]
        v = val[i] * val[i]
        old = bins[b]
        while True:
            assumed = old
            old = kiln.atomic.compare_and_swap(bins[b:b + 1], assumed, assumed + v)
            if old == assumed:
                break


@njit(parallel=True, cache=True)
def n_cas(key, val, nbins, nt):
    n = key.size
    part = np.zeros((nt, nbins), np.int64)
    chunk = (n + nt - 1) // nt
    for t in prange(nt):
        for i in range(t * chunk, min(n, (t + 1) * chunk)):
            part[t, key[i]] += val[i] * val[i]
    return part.sum(0)


@case
def c_cas_loop_bins(Q, rng):
    n, NB = e2(Q, 22), 1024
    key = rng.integers(0, NB, n).astype(np.int32)
    val = rng.integers(-1000, 1000, n).astype(np.int64)
    ref = np.bincount(key, weights=(val * val).astype(np.float64), minlength=NB).astype(np.int64)
    kr = np.zeros(NB, np.int64)
    got = {}
    nt = numba.get_num_threads()

    def rk():
        kr[:] = 0
        k_cas[blocks(n), TPB](kr, key, val)

    def rn():
        got["n"] = n_cas(key, val, NB, nt)
    return dict(desc=f"CAS-loop add into {NB} int64 bins, {p2(n)} (Numba: per-thread partials)",
                kiln=rk, numba=rn, kget=lambda: kr, nget=lambda: got["n"], ref=ref, check=exact)


# ======================================================================================
# Running
# ======================================================================================
SIDES = ("kiln", "numba")


def loud(msg):
    bar = "!" * 78
    print(f"\n{bar}\n{msg}\n{bar}", file=sys.stderr, flush=True)


def poison(get):
    """Fills an output with NaN (all ones for integers) before its checked run, so that no
    check passes on what the memory held before."""
    try:
        got = get()
    except Exception:  # nothing made yet (a result the run returns)
        return
    for g in got if isinstance(got, tuple) else (got,):
        if isinstance(g, np.ndarray) and g.flags.writeable:
            g[...] = np.nan if g.dtype.kind in "fc" else ~np.zeros((), g.dtype)


def run_case(name, c, repeats):
    """Checks both implementations once, then times the good ones alternately.
    Returns ({side: median ms per call}, {side: failure text}, {side: expected-failure text})."""
    failed, xfailed = {}, {}
    for side in SIDES:
        run, get = c[side], c["kget" if side == "kiln" else "nget"]
        poison(get)
        try:
            run()
        except Exception as e:  # a compile error or a crash of the call: a failed row
            why = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
            if side == "numba" and c.get("numba_xfail"):
                xfailed[side] = f"{c['numba_xfail']} ({why[:120]})"
                print(f"\n  {name}/{side}: expected failure: {xfailed[side]}", end="",
                      file=sys.stderr, flush=True)
            else:
                failed[side] = why
                loud(f"FAILED {name}/{side}: {why}\n{traceback.format_exc()}")
            continue
        try:
            c["check"](get(), c["ref"])
        except Exception as e:
            failed[side] = "wrong result: " + " ".join(str(e).split())[:300]
            loud(f"FAILED {name}/{side}: {failed[side]}")
    good = [s for s in SIDES if s not in failed and s not in xfailed]
    for s in good:  # one more warm-up each
        c[s]()
    inner = c.get("inner", 1)
    times = {s: [] for s in good}
    for r in range(repeats):
        for s in (good if r % 2 == 0 else good[::-1]):
            run = c[s]
            t = time.perf_counter()
            for _ in range(inner):
                run()
            times[s].append((time.perf_counter() - t) / inner)
    return {s: statistics.median(v) * 1e3 for s, v in times.items()}, failed, xfailed


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit():
    try:
        out = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "describe",
                              "--always", "--dirty"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def command_line():
    env = " ".join(f"{v}={shlex.quote(os.environ[v])}" for v in ("KILN_TARGET", "KILN_TIERS",
                                                                   "OMP_NUM_THREADS", "BENCH_REPEATS")
                   if v in os.environ)
    py = sys.executable
    if py.startswith(os.getcwd() + os.sep):
        py = os.path.relpath(py)
    return f"{env} {py} {shlex.join(sys.argv)}"


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def fmt_ms(v):
    return "—" if v is None else (f"{v:.4f}" if v < 0.1 else f"{v:.3f}" if v < 1
                                  else f"{v:.2f}" if v < 100 else f"{v:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes about 1/16, 3 repeats: a smoke test")
    ap.add_argument("--only", help="comma-separated case names (substrings), see --list")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    args = ap.parse_args()
    if args.list:
        for name in CASES:
            print(f"{name:28} {FAMILY[name]}")
        return 0
    repeats = int(os.environ.get("BENCH_REPEATS", "3" if args.quick else "7"))
    names = list(CASES)
    if args.only:
        want = [w.strip() for w in args.only.split(",") if w.strip()]
        names = [n for n in names if any(w in n for w in want)]
        if not names:
            sys.exit(f"--only {args.only}: no such case (see --list)")

    start = datetime.datetime.now()
    load0 = os.getloadavg()
    rows, failures, expected = [], [], []
    for name in names:
        print(f"... {name}", end="", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        # each case its own seed: --only gives the same inputs as a full run
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        try:
            c = CASES[name](args.quick, rng)
        except Exception as e:
            why = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
            loud(f"FAILED {name} (setup): {why}\n{traceback.format_exc()}")
            rows.append((name, "(setup failed)", {}, {"kiln": why, "numba": why}, {}))
            failures.append((name, "setup", why))
            continue
        med, failed, xfailed = run_case(name, c, repeats)
        print(f" {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        rows.append((name, c["desc"], med, failed, xfailed))
        failures += [(name, s, why) for s, why in failed.items()]
        expected += [(name, s, why) for s, why in xfailed.items()]
        del c
        gc.collect()
    load1 = os.getloadavg()
    elapsed = (datetime.datetime.now() - start).total_seconds()

    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "not started"
    print(f"\n# kiln CPU target against Numba: access patterns, {start:%Y-%m-%d %H:%M}"
          f"{' (--quick)' if args.quick else ''}\n")
    print(f"- machine: {cpu_model()}, {os.cpu_count()} cores ({platform.machine()}, "
          f"{platform.system()} {platform.release()}); load average {load0[0]:.2f} at start, "
          f"{load1[0]:.2f} at end")
    print(f"- threads: {THREADS} for both runtimes (kiln's OpenMP, Numba's {layer} layer)")
    print(f"- kiln {kiln.__version__} (commit {git_commit()}, {os.path.dirname(kiln.__file__)}), "
          f"numba {numba.__version__}, numpy {np.__version__}, Python {platform.python_version()}")
    print(f"- command: `{command_line()}`")
    print(f"- median of {repeats} warm runs per cell, kiln and Numba alternating; whole run "
          f"{elapsed:.0f} s; every cell was checked against a NumPy float64 reference first\n")
    print("| case | description | kiln ms | Numba ms | kiln/Numba |")
    print("| --- | --- | ---: | ---: | ---: |")
    ratios = []
    for name, desc, med, failed, xfailed in rows:
        cells = []
        for s in SIDES:
            cells.append("FAILED" if s in failed else "n/a" if s in xfailed else fmt_ms(med.get(s)))
        k, nb = med.get("kiln"), med.get("numba")
        q = "—"
        if k and nb:
            ratios.append(nb / k)
            q = f"{nb / k:.2f}x"
        desc = desc.replace("|", "\\|")  # a bare | would split the markdown cell
        print(f"| {name} | {desc} | {' | '.join(cells)} | {q} |")
    print(f"| **geometric mean** | {len(ratios)} cases where both ran | | | **{geomean(ratios):.2f}x** |")
    if expected:
        print("\nExpected failures (not timed):\n")
        for name, side, why in expected:
            print(f"- {name}, {side}: {why}")
    if failures:
        print("\nFailed cells (not timed):\n")
        for name, side, why in failures:
            print(f"- {name}, {side}: {why}")
        loud(f"{len(failures)} FAILED cell(s): see the end of the table")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
