"""Lane mode on the CPU target (src/emit/plan.h): a grid-only kernel with a loop in its
body gets a second body, kiln_body_lanes, that runs KILN_LANES consecutive positions of the
innermost grid dimension at once (varying locals as arrays of lanes, the kernel's own uniform
loops around vectorised loops over the lanes).  Each kernel runs against a NumPy float64
reference on fresh random inputs, on sizes that are not multiples of the lane count, serial
and parallel launches; the generated source shows which kernels took lane mode.  Kernels
lane mode must leave alone (break or return under varying conditions, loops in varying
loops, kiln.grid() in a device function, atomics, varying bounds, loops under varying ifs,
local arrays) keep the one body and stay correct."""
import importlib.util
import math
import os
import random
import re
import types
import warnings

import numpy as np
import pytest

import kiln
from kiln import _compile, _kiln

from conftest import layouts


def grid2(n0, n1, block=(16, 16)):
    return ((n0 + block[0] - 1) // block[0], (n1 + block[1] - 1) // block[1]), block


def blocks1(n, tpb=128):
    return (n + tpb - 1) // tpb, tpb


def lanes_of(src):
    """KILN_LANES of a source with a lane body, else None."""
    m = re.search(r"#define KILN_LANES (\d+)\n", src)
    return int(m.group(1)) if m and "kiln_body_lanes(" in src else None


def source(k, sig):
    """The C that kernel k translates to for signature sig (nothing is built)."""
    _, argkey = _kiln.parse_signature(sig)
    return _compile._translate(k, argkey, 0).source


def out_like(kind, shape, dtype):
    if kind == "F":
        return np.zeros(shape, dtype, order="F")
    if kind == "strided":
        return np.zeros(tuple(2 * s for s in shape), dtype)[::2, ::2]
    if kind == "negative":
        return np.zeros(shape, dtype)[::-1, ::-1]
    return np.zeros(shape, dtype)


def close(got, ref, dtype):
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(got, ref)
    else:
        tol = 2e-4 if np.dtype(dtype) == np.float32 else 1e-12
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.abs(ref).max())


# ---- kernels that take lane mode ----------------------------------------------------------

@kiln.jit
def matmul(A, B, C):
    i, j = kiln.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


@kiln.jit
def imatmul(A, B, C):
    i, j = kiln.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


EPS2 = 0.01


@kiln.jit
def nbody(ax, ay, az, x, y, z, m):
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


def np_nbody(x, y, z, m):
    x, y, z, m = (np.asarray(v, np.float64) for v in (x, y, z, m))
    dx = x[None, :] - x[:, None]
    dy = y[None, :] - y[:, None]
    dz = z[None, :] - z[:, None]
    r2 = dx * dx + dy * dy + dz * dz + EPS2
    s = m[None, :] / (r2 * np.sqrt(r2))
    return (dx * s).sum(axis=1), (dy * s).sum(axis=1), (dz * s).sum(axis=1)


@kiln.jit
def clipped(out, a, lim):
    # a varying if (and elif) inside a uniform loop; the local v is private to its run
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        n = 0
        for k in range(a.shape[1]):
            v = a[i, k]
            if v > lim:
                s += lim
                n += 1
            elif v < -lim:
                s -= v * 0.5
            else:
                s += v
        out[i] = s + n


def np_clipped(a, lim):
    a = np.asarray(a, np.float64)
    s = np.where(a > lim, lim, np.where(a < -lim, -a * 0.5, a)).sum(axis=1)
    return s + (a > lim).sum(axis=1)


@kiln.jit
def alternating(out, a, b, w):
    # uniform ifs (on the loop counter), uniform locals and loads at uniform indices
    # from an array the kernel never writes, a tuple assignment of varying values
    i, j = kiln.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        s = 0.0
        t = 0.0
        for k in range(a.shape[1]):
            wk = w[k] * 2.0
            if k % 2 == 0:
                s += wk * a[i, k] * b[k, j]
            elif k % 3 == 0:
                s -= a[i, k] * b[k, j]
            else:
                p, q = a[i, k], b[k, j]
                t += p * q
        out[i, j] = s + t


def np_alternating(a, b, w):
    a, b, w = (np.asarray(v, np.float64) for v in (a, b, w))
    k = np.arange(a.shape[1])
    coef = np.where(k % 2 == 0, 2.0 * w, np.where(k % 3 == 0, -1.0, 1.0))
    return (a * coef[None, :]) @ b


@kiln.jit
def batched(out, a, w, flag):
    # three grid dimensions, the lanes along the last; a kept guard conjunct (uniform)
    i, j, k = kiln.grid(3)
    if i < out.shape[0] and j < out.shape[1] and k < out.shape[2] and flag > 0:
        s = 0.0
        for t in range(a.shape[2]):
            s += a[i, j, t] * w[t, k]
        out[i, j, k] = s


@kiln.jit
def matmul_t(A, B, C):
    # C is stored transposed: the innermost dimension still strides somewhere, so the
    # nest is tiled, with chunks of lanes inside each tile
    i, j = kiln.grid(2)
    if i < C.shape[1] and j < C.shape[0]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[j, i] = tmp


@kiln.jit
def varying_carry(out, a, n):
    # a varying local that lives across loop iterations and is updated conditionally,
    # a nested uniform loop, and a local assigned under a varying if then read after it
    i = kiln.grid(1)
    if i < out.size:
        acc = a[i]
        last = 0.0
        for r in range(n):
            for c in range(3):
                acc = acc * 0.5 + c
                if acc > 1.0:
                    last = acc
        out[i] = acc + last


def np_varying_carry(a, n):
    acc = np.asarray(a, np.float64).copy()
    last = np.zeros_like(acc)
    for _ in range(n):
        for c in range(3):
            acc = acc * 0.5 + c
            last = np.where(acc > 1.0, acc, last)
    return acc + last


@kiln.jit
def uniform_while(out, a):
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        k = 0
        while k < a.shape[1]:
            s += a[i, k]
            k += 1
        out[i] = s


@kiln.jit
def uniform_exits(out, a, stop, skip):
    # break, continue, return and for-else under uniform conditions
    i = kiln.grid(1)
    if i < out.size:
        if stop < 0:
            return
        s = 0.0
        for k in range(a.shape[1]):
            if k == skip:
                continue
            if k >= stop:
                break
            s += a[i, k]
        else:
            s += 100.0
        out[i] = s


def np_uniform_exits(a, stop, skip):
    if stop < 0:
        return np.zeros(a.shape[0])
    keep = [k for k in range(min(stop, a.shape[1])) if k != skip]
    return a[:, keep].sum(axis=1) + (100.0 if stop >= a.shape[1] else 0.0)


@kiln.jit
def varying_while(out, a, flip):
    # a while loop with a varying condition (its second part reads a[i, k] only
    # while k is in range), a varying if and a uniform if in its body
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        k = 0
        while k < a.shape[1] and s < 2.0:
            v = a[i, k]
            if v > 0.9:
                v = 0.9
            if flip:
                v = -v
            s += abs(v)
            k += 1
        out[i] = s + k * 1000


def np_varying_while(a):
    out = np.zeros(a.shape[0])
    for r in range(a.shape[0]):
        k = 0
        while k < a.shape[1] and out[r] < 2.0:
            out[r] += min(a[r, k], 0.9)
            k += 1
        out[r] += k * 1000
    return out


MAXIT = 60


@kiln.jit
def mandel(out, x0, y0, dx, dy):
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


def np_mandel(h, w, x0, y0, dx, dy):
    cr = np.broadcast_to((x0 + np.arange(w) * dx)[None, :], (h, w))
    ci = np.broadcast_to((y0 + np.arange(h) * dy)[:, None], (h, w))
    zr, zi = np.zeros((h, w)), np.zeros((h, w))
    n = np.zeros((h, w), np.int32)
    alive = np.ones((h, w), bool)
    for _ in range(MAXIT):
        alive &= zr * zr + zi * zi <= 4.0
        n += alive
        zr, zi = (np.where(alive, zr * zr - zi * zi + cr, zr),
                  np.where(alive, 2.0 * zr * zi + ci, zi))
    return n


@kiln.jit(device=True)
def twice(v):
    return 2.0 * v


@kiln.jit(device=True)
def row_sum(a, i, upto):
    # a loop and an early return inside the callee
    t = 0.0
    for k in range(a.shape[1]):
        if k >= upto:
            return t
        t += a[i, k]
    return t


@kiln.jit(device=True)
def store_half(out, i, v):
    out[i] = v * 0.5


@kiln.jit
def with_calls(out, a, upto):
    # device functions called with varying and uniform arguments, one that stores
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        for k in range(a.shape[1]):
            s += twice(a[i, k]) + twice(k)
        store_half(out, i, s + row_sum(a, i, upto))


def np_with_calls(a, upto):
    n = a.shape[1]
    return 0.5 * (2.0 * a.sum(axis=1) + n * (n - 1) + a[:, :upto].sum(axis=1))


@kiln.jit
def matmul_early(A, B, C, flag):
    # the early-return idiom: its bounds fold into the loops, the uniform rest stays
    i, j = kiln.grid(2)
    if i >= C.shape[0] or j >= C.shape[1] or flag < 0:
        return
    tmp = 0.
    for k in range(A.shape[1]):
        tmp += A[i, k] * B[k, j]
    C[i, j] = tmp


@kiln.jit
def early_varying(out, a):
    # a disjunct that depends on the position stays: per position, so no lane mode
    i = kiln.grid(1)
    if i >= out.size or a[i, 0] < 0.0:
        return
    s = 0.0
    for k in range(a.shape[1]):
        s += a[i, k]
    out[i] = s


@kiln.jit
def early_blocks(out, a):
    # thread indices: the block loops, with the early return's bound folded
    i = kiln.grid(1)
    if i >= out.size:
        return
    out[i] = a[i] + kiln.threadIdx.x


# ---- kernels that must keep the one body ---------------------------------------------------

@kiln.jit
def loop_in_varying_while(out, a):
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        while s < 1.0:
            for k in range(a.shape[1]):
                s += abs(a[i, k]) + 0.01
        out[i] = s


@kiln.jit
def break_in_varying_while(out, a):
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        k = 0
        while k < a.shape[1]:
            if a[i, k] > 0.5:
                break
            s += a[i, k]
            k += 1
        out[i] = s


@kiln.jit
def with_break(out, a, lim):
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        for k in range(a.shape[1]):
            if a[i, k] > lim:
                break
            s += a[i, k]
        out[i] = s


@kiln.jit
def with_return(out, a):
    # the early return folds into the loop's bounds: lane mode
    i = kiln.grid(1)
    if i >= out.size:
        return
    s = 0.0
    for k in range(a.shape[1]):
        s += a[i, k]
    out[i] = s


@kiln.jit(device=True)
def where_grid(a, k):
    # kiln.grid() in a device function: it would see the chunk's base position
    return a[kiln.grid(1), k]


@kiln.jit
def grid_in_callee(out, a):
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        for k in range(a.shape[1]):
            s += where_grid(a, k)
        out[i] = s


@kiln.jit
def with_atomic(out, total, a):
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        for k in range(a.shape[1]):
            s += a[i, k]
            kiln.atomic.add(total, k, a[i, k])
        out[i] = s


@kiln.jit
def triangular(out, a):
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        for k in range(i + 1):  # a varying bound
            s += a[i, k]
        out[i] = s


@kiln.jit
def loop_under_varying_if(out, a):
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        if a[i, 0] > 0.0:
            for k in range(a.shape[1]):
                s += a[i, k]
        out[i] = s


@kiln.jit
def with_local_array(out, a):
    i = kiln.grid(1)
    if i < out.size:
        buf = kiln.local.array(4, kiln.float64)
        for k in range(4):
            buf[k] = a[i, k] * k
        s = 0.0
        for k in range(4):
            s += buf[k]
        out[i] = s


@kiln.jit
def varying_guard(out, a, b):
    # the guard keeps a conjunct that depends on the innermost coordinate
    i, j = kiln.grid(2)
    if i < out.shape[0] and j < out.shape[1] and (i + j) % 2 == 0:
        s = 0.0
        for k in range(a.shape[1]):
            s += a[i, k] * b[k, j]
        out[i, j] = s


@kiln.jit
def no_loop(out, a):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a[i] * 2.0


# ---- grid-stride loops (lane for loops) and atomics in lane mode -------------------------

@kiln.jit
def gs_sum(res, a):
    start = kiln.grid(1)
    stride = kiln.gridsize(1)
    acc = a[0] * 0
    for i in range(start, a.size, stride):
        acc += a[i]
    kiln.atomic.add(res, 0, acc)


@kiln.jit
def gs_map(out, a, c):
    start = kiln.grid(1)
    for i in range(start + 0, out.size, kiln.gridsize(1)):
        v = a[i]
        if v > c:
            v = v * 2
        out[i] = v


@kiln.jit
def gs_offset(out, a, off):
    # a constant step and a start past the position: lane l's counter is j + l + off;
    # the threads' ranges overlap (the step is not the grid's size), so they add atomically
    j = kiln.grid(1)
    for i in range(j + off, out.size, 5):
        kiln.atomic.add(out, i, a[i - off])


@kiln.jit
def gs_hist(hist, x, lo, width):
    # a private copy of hist per thread: statement-level atomics at computed indices
    start = kiln.grid(1)
    for i in range(start, x.size, kiln.gridsize(1)):
        b = int((x[i] - lo) / width)
        if b >= 0 and b < hist.size:
            kiln.atomic.add(hist, b, 1)


@kiln.jit
def gs_minmax(ext, a):
    start = kiln.grid(1)
    for i in range(start, a.size, kiln.gridsize(1)):
        kiln.atomic.max(ext, 0, a[i])
        kiln.atomic.min(ext, 1, a[i])


@kiln.jit
def gs_nested(out, a, n):
    # a uniform loop and a varying while inside the lane for loop, a uniform break
    start = kiln.grid(1)
    for i in range(start, out.size, kiln.gridsize(1)):
        s = 0.0
        for k in range(n):
            if k > 2:
                break
            s += a[i, k]
        t = i % 4
        while t > 0:
            s += 1.0
            t -= 1
        out[i] = s


@kiln.jit
def gs_counter_after(out, a):
    # the counter read after the loop: each position's last value, one body
    i = 0
    for i in range(kiln.grid(1), a.size, kiln.gridsize(1)):
        out[i] = a[i]
    if kiln.grid(1) < out.size:
        out[kiln.grid(1)] += 0 * i


@kiln.jit
def gs_return(out, a, stop):
    start = kiln.grid(1)
    for i in range(start, a.size, kiln.gridsize(1)):
        if stop > 0:
            return
        out[i] = a[i]


@kiln.jit
def gs_exch(out, flags, a):
    # an exchange's value tells the order of the lanes: one body
    start = kiln.grid(1)
    for i in range(start, a.size, kiln.gridsize(1)):
        old = kiln.atomic.exch(flags, i % flags.size, 1)
        out[i] = a[i] + old * 0


@kiln.jit(device=True)
def add_to(total, v):
    kiln.atomic.add(total, 0, v)


@kiln.jit
def gs_atomic_in_callee(total, a):
    start = kiln.grid(1)
    for i in range(start, a.size, kiln.gridsize(1)):
        add_to(total, a[i])


# ---- tests -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["C", "F", "strided", "negative"])
@pytest.mark.parametrize("shape", [(45, 33, 70), (3, 5, 7), (130, 17, 200)])  # serial, parallel
def test_matmul_layouts(rng, kind, shape):
    n, p, m = shape
    a = layouts(rng.random((n, p)))[kind]
    b = layouts(rng.random((p, m)))[kind]
    c = out_like(kind, (n, m), np.float64)
    matmul[grid2(n, m)](a, b, c)
    close(c, np.asarray(a) @ np.asarray(b), np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint16])
def test_matmul_dtypes(rng, dtype):
    n, p, m = 37, 29, 83
    if np.dtype(dtype).kind == "f":
        a = rng.random((n, p)).astype(dtype)
        b = rng.random((p, m)).astype(dtype)
        kern = matmul
    else:
        a = rng.integers(0, 50, (n, p)).astype(dtype)
        b = rng.integers(0, 40, (p, m)).astype(dtype)
        kern = imatmul
    c = np.zeros((n, m), dtype)
    kern[grid2(n, m)](a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    close(c, ref.astype(dtype) if np.dtype(dtype).kind in "iu" else ref, dtype)
    assert lanes_of(kern.inspect_source())


def test_one_row_launch(rng):
    # one row in y: the flat loop over x runs (the lanes are along y): the plain body
    a, b = rng.random((40, 9)), rng.random((9, 1))
    c = np.zeros((40, 1))
    matmul[(3, 1), (16, 1)](a, b, c)
    close(c, a @ b, np.float64)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1000, 37, 5])
def test_nbody(rng, dtype, n):
    x, y, z = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    m = rng.uniform(0.5, 1.5, n).astype(dtype)
    out = [np.full(n, np.nan, dtype) for _ in range(3)]
    nbody[blocks1(n)](*out, x, y, z, m)
    for got, ref in zip(out, np_nbody(x, y, z, m)):
        if dtype == np.float32:
            np.testing.assert_allclose(got, ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())
        else:
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1003, 11])
def test_varying_if_in_uniform_loop(rng, dtype, n):
    a = rng.uniform(-2, 2, (n, 23)).astype(dtype)
    out = np.zeros(n, dtype)
    clipped[blocks1(n)](out, a, 1.0)
    close(out, np_clipped(a, 1.0), dtype)


@pytest.mark.parametrize("shape", [(21, 19, 45), (150, 13, 133)])
def test_uniform_ifs(rng, shape):
    n, p, m = shape
    a, b, w = rng.random((n, p)), rng.random((p, m)), rng.random(p)
    out = np.zeros((n, m))
    alternating[grid2(n, m)](out, a, b, w)
    close(out, np_alternating(a, b, w), np.float64)


def test_three_dimensions_and_kept_guard(rng):
    a, w = rng.random((5, 7, 11)), rng.random((11, 35))
    out = np.zeros((5, 7, 35))
    batched[(2, 2, 5), (4, 4, 8)](out, a, w, 1)
    close(out, a @ w, np.float64)
    out = np.zeros((5, 7, 35))
    batched[(2, 2, 5), (4, 4, 8)](out, a, w, 0)
    assert not out.any()


@pytest.mark.parametrize("shape", [(100, 30, 90), (9, 4, 17)])
def test_tiled(rng, shape):
    n, p, m = shape
    a, b = rng.random((n, p)), rng.random((p, m))
    c = np.zeros((m, n))
    matmul_t[grid2(n, m)](a, b, c)
    close(c, (a @ b).T, np.float64)


@pytest.mark.parametrize("n", [517, 3])
def test_varying_carry(rng, n):
    a = rng.uniform(-3, 3, n)
    out = np.zeros(n)
    varying_carry[blocks1(n)](out, a, 4)
    close(out, np_varying_carry(a, 4), np.float64)


@pytest.mark.parametrize("shape", [(45, 33, 70), (3, 4, 5)])
def test_early_return(rng, shape):
    n, p, m = shape
    a, b = rng.random((n, p)), rng.random((p, m))
    c = np.full((n, m), -1.0)
    matmul_early[grid2(n + 5, m + 7)](a, b, c, 1)
    close(c, a @ b, np.float64)
    c = np.full((n, m), -1.0)
    matmul_early[grid2(n, m)](a, b, c, -1)
    assert (c == -1.0).all()
    x = rng.uniform(-1, 1, (n, p))
    out = np.full(n, -1.0)
    early_varying[blocks1(n)](out, x)
    close(out, np.where(x[:, 0] < 0, -1.0, x.sum(axis=1)), np.float64)
    v = rng.random(n * 40)
    out = np.full(n * 40, -1.0)
    early_blocks[blocks1(n * 40, 64)](out, v)
    close(out, v + np.arange(n * 40) % 64, np.float64)


def test_early_return_folds():
    f64_2 = "float64[:, ::1]"
    src = source(matmul_early, f"void({f64_2}, {f64_2}, {f64_2}, int64)")
    assert lanes_of(src)
    # both bounds folded into the loops, the flag kept as a uniform early return
    assert src.count("if (e_ < xhi_) xhi_ = e_;") == 1 and src.count("if (e_ < yhi_) yhi_ = e_;") == 1
    assert re.search(r"if \(\(v\d+_flag < 0LL\)\) \{ return; \}", src)
    src = source(early_blocks, "void(float64[::1], float64[::1])")
    assert src.count("if (e_ < xhi_) xhi_ = e_;") == 1 and "return;" not in src.split("kiln_body(")[1].split("}")[0]


@pytest.mark.parametrize("n", [301, 5])
def test_device_functions(rng, n):
    a = rng.uniform(-1, 1, (n, 10))
    for upto in (4, 20):
        out = np.zeros(n)
        with_calls[blocks1(n)](out, a, upto)
        close(out, np_with_calls(a, upto), np.float64)


@pytest.mark.parametrize("n", [130, 7])
def test_uniform_while_and_exits(rng, n):
    a = rng.uniform(-1, 1, (n, 12))
    out = np.zeros(n)
    uniform_while[blocks1(n)](out, a)
    close(out, a.sum(axis=1), np.float64)
    for stop, skip in [(-1, 0), (5, 2), (12, 0), (40, 11), (0, 3)]:
        out = np.zeros(n)
        uniform_exits[blocks1(n)](out, a, stop, skip)
        close(out, np_uniform_exits(a, stop, skip), np.float64)


@pytest.mark.parametrize("n", [301, 9])
def test_varying_while(rng, n):
    a = rng.uniform(0, 1, (n, 12))
    for flip in (0, 1):
        out = np.zeros(n)
        varying_while[blocks1(n)](out, a, flip)
        close(out, np_varying_while(a), np.float64)


@kiln.jit
def collatz(out, a):
    # trip counts that differ from lane to lane: the last lanes left finish one at a
    # time (emit_stmt.c, lane_while's tail)
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


def np_collatz(a):
    out = np.zeros(a.size, np.int64)
    for j, n in enumerate(a.tolist()):
        while n != 1:
            n = 3 * n + 1 if n & 1 else n >> 1
            out[j] += 1
    return out


@pytest.mark.parametrize("tiers", ["0", "tcc"])
@pytest.mark.parametrize("n", [1, 37, 1000])
def test_varying_while_finishes_its_last_lanes_alone(monkeypatch, rng, tiers, n):
    monkeypatch.setenv("KILN_TIERS", tiers)
    src = source(collatz, "void(int64[::1], int64[::1])")
    assert lanes_of(src) and "KILN_LANE_TAIL_DIV" in src
    a = rng.integers(1, 1 << 16, n)
    a[0] = 1                      # no pass at all for that lane
    if n > 2:
        a[1] = 77031              # 350 steps: alone long after the others
    for grid, block in (blocks1(n), (n, 1), ((n + 6) // 7, 7)):
        out = np.full(n, -1, np.int64)
        kiln.jit(target="cpu", cache=False)(collatz.py_func)[grid, block](out, a)
        np.testing.assert_array_equal(out, np_collatz(a))


@kiln.jit
def digit_sum(out, a, m):
    # int64 % and // in a varying while: x86 divides lanes one at a time, so the lanes'
    # masks only add work (plan_lanes.c, loop_divides); int32 by a constant and int64
    # by a power of two keep lane mode
    i = kiln.grid(1)
    if i < a.size:
        v = a[i]
        s = 0
        while v > 0:
            s += v % m
            v //= m
        out[i] = s


@kiln.jit
def halvings(out, a):
    i = kiln.grid(1)
    if i < a.size:
        v = a[i]
        s = 0
        while v > 0:
            s += v % 2
            v //= 4
        out[i] = s


def test_varying_while_dividing_int64_takes_no_lanes(rng):
    assert lanes_of(source(digit_sum, "void(int64[::1], int64[::1], int64)")) is None
    assert lanes_of(source(halvings, "void(int64[::1], int64[::1])"))
    a = rng.integers(0, 1 << 62, 1000)
    for m in (10, 7):
        out = np.zeros_like(a)
        digit_sum[blocks1(a.size)](out, a, m)
        want = [0] * a.size
        for j, v in enumerate(a.tolist()):
            while v > 0:
                want[j] += v % m
                v //= m
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("shape", [(77, 101), (5, 3), (130, 300)])
def test_mandelbrot(shape):
    h, w = shape
    args = (-2.0, -1.2, 3.0 / w, 2.4 / h)
    out = np.full((h, w), -1, np.int32)
    mandel[grid2(w, h)](out, *args)
    ref = np_mandel(h, w, *args)
    # near the set's edge an orbit is chaotic: the C compiler's fused multiply-adds
    # may change where a few escape (as in bench/cpu.py)
    assert (out != ref).mean() < 1e-3


def test_kernels_without_lane_mode_stay_correct(rng):
    n = 301
    a = rng.uniform(-1, 1, (n, 12))
    out = np.zeros(n)
    loop_in_varying_while[blocks1(n)](out, a)
    per = (np.abs(a) + 0.01).sum(axis=1)
    close(out, per * np.ceil(1.0 / per), np.float64)
    out = np.zeros(n)
    break_in_varying_while[blocks1(n)](out, a)
    ref = np.array([r[:np.argmax(r > 0.5)].sum() if (r > 0.5).any() else r.sum() for r in a])
    close(out, ref, np.float64)
    out = np.zeros(n)
    with_break[blocks1(n)](out, a, 0.5)
    ref = np.array([r[:np.argmax(r > 0.5)].sum() if (r > 0.5).any() else r.sum() for r in a])
    close(out, ref, np.float64)
    out = np.zeros(n)
    with_return[blocks1(n)](out, a)
    close(out, a.sum(axis=1), np.float64)
    out = np.zeros(n)
    grid_in_callee[blocks1(n)](out, a)
    close(out, a.sum(axis=1), np.float64)
    out, total = np.zeros(n), np.zeros(12)
    with_atomic[blocks1(n)](out, total, a)
    close(out, a.sum(axis=1), np.float64)
    close(total, a.sum(axis=0), np.float64)
    sq = rng.random((n, n))
    out = np.zeros(n)
    triangular[blocks1(n)](out, sq)
    close(out, np.tril(sq).sum(axis=1), np.float64)
    out = np.zeros(n)
    loop_under_varying_if[blocks1(n)](out, a)
    close(out, np.where(a[:, 0] > 0, a.sum(axis=1), 0.0), np.float64)
    out = np.zeros(n)
    with_local_array[blocks1(n)](out, a)
    close(out, a[:, :4] @ np.arange(4.0), np.float64)
    b = rng.random((12, 40))
    out = np.zeros((n, 40))
    varying_guard[grid2(n, 40)](out, a, b)
    i, j = np.indices((n, 40))
    close(out, np.where((i + j) % 2 == 0, a @ b, 0.0), np.float64)
    out = np.zeros(n)
    no_loop[blocks1(n)](out, a[:, 0].copy())
    close(out, 2.0 * a[:, 0], np.float64)


def test_which_kernels_take_lane_mode():
    f64_2, f32_2 = "float64[:, ::1]", "float32[:, ::1]"
    f64_1, f32_1 = "float64[::1]", "float32[::1]"
    take = {
        matmul: f"void({f64_2}, {f64_2}, {f64_2})",
        nbody: f"void({', '.join([f64_1] * 7)})",
        clipped: f"void({f64_1}, {f64_2}, float64)",
        alternating: f"void({f64_2}, {f64_2}, {f64_2}, {f64_1})",
        batched: "void(float64[:, :, ::1], float64[:, :, ::1], float64[:, ::1], int64)",
        matmul_t: f"void({f64_2}, {f64_2}, {f64_2})",
        varying_carry: f"void({f64_1}, {f64_1}, int64)",
        uniform_while: f"void({f64_1}, {f64_2})",
        varying_while: f"void({f64_1}, {f64_2}, int64)",
        mandel: "void(int32[:, ::1], float64, float64, float64, float64)",
        with_calls: f"void({f64_1}, {f64_2}, int64)",
        matmul_early: f"void({f64_2}, {f64_2}, {f64_2}, int64)",
        with_return: f"void({f64_1}, {f64_2})",
        uniform_exits: f"void({f64_1}, {f64_2}, int64, int64)",
    }
    for k, sig in take.items():
        assert lanes_of(source(k, sig)), k
    # as many lanes as fit 512 bytes of varying values (from 64 down to two 64-byte
    # vectors of the widest): matmul's one sum, n-body's eleven varying values
    assert lanes_of(source(matmul, f"void({f64_2}, {f64_2}, {f64_2})")) == 64
    assert lanes_of(source(matmul, f"void({f32_2}, {f32_2}, {f32_2})")) == 64
    assert lanes_of(source(nbody, f"void({', '.join([f64_1] * 7)})")) == 16
    assert lanes_of(source(nbody, f"void({', '.join([f32_1] * 7)})")) == 32
    # rows of a C array, one per lane, are gathers: the fewest lanes; columns of an F
    # array are unit stride along the lanes
    assert lanes_of(source(with_return, f"void({f64_1}, {f64_2})")) == 16
    assert lanes_of(source(with_return, f"void({f64_1}, float64[::1, :])")) == 64
    # a varying while's mask is as wide as the widest varying value
    src = source(mandel, "void(int32[:, ::1], float64, float64, float64, float64)")
    assert re.search(r"i64 wm\d+\[KILN_LANES\];", src)
    src = source(matmul, f"void({f64_2}, {f64_2}, {f64_2})")
    # tmp is an array of lanes, j the chunk's base plus the lane, A[i, k] a uniform load
    assert "f64 v5_tmp[KILN_LANES]" in src
    assert "(v4_j + l_)" in src
    src = source(nbody, f"void({', '.join([f64_1] * 7)})")
    assert re.search(r"for \(int l_ = 0; l_ < nl_; l_\+\+\) \{\n\s+f64 v\d+_dx = 0;", src)
    leave = {
        loop_in_varying_while: f"void({f64_1}, {f64_2})",
        break_in_varying_while: f"void({f64_1}, {f64_2})",
        with_break: f"void({f64_1}, {f64_2}, float64)",
        grid_in_callee: f"void({f64_1}, {f64_2})",
        early_varying: f"void({f64_1}, {f64_2})",
        triangular: f"void({f64_1}, {f64_2})",
        loop_under_varying_if: f"void({f64_1}, {f64_2})",
        with_local_array: f"void({f64_1}, {f64_2})",
        varying_guard: f"void({f64_2}, {f64_2}, {f64_2})",
        no_loop: f"void({f64_1}, {f64_1})",
    }
    for k, sig in leave.items():
        src = source(k, sig)
        assert "kiln_body_lanes" not in src and "KILN_LANES" not in src, k
    # debug=True checks every index in the one body
    dbg = kiln.jit(debug=True)(matmul.py_func)
    assert "kiln_body_lanes" not in source(dbg, f"void({f64_2}, {f64_2}, {f64_2})")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize("n,grid", [(1, (1, 1)), (1000, (3, 32)), (4099, (7, 64)), (50, (4, 64)),
                                    (100003, (16, 128))])
def test_grid_stride_sum(rng, dtype, n, grid):
    a = (rng.uniform(-1, 1, n) if np.dtype(dtype).kind == "f" else
         rng.integers(-1000, 1000, n)).astype(dtype)
    res = np.zeros(1, dtype)
    gs_sum[grid](res, a)
    ref = np.array([a.astype(np.float64).sum()])
    if np.dtype(dtype).kind == "f":
        # a sum's rounding error scales with sum(|a|), not with the sum, which cancels
        # (a seed gave 0.134 from 100003 terms, and 6e-5 of float32 error is within bounds)
        scale = 8 * np.finfo(dtype).eps * np.abs(a.astype(np.float64)).sum()
        np.testing.assert_allclose(res, ref.astype(dtype), rtol=0, atol=scale)
    else:
        close(res, ref.astype(dtype), dtype)


@pytest.mark.parametrize("n,grid", [(1, (1, 1)), (777, (2, 64)), (4097, (8, 128)), (300, (8, 128))])
def test_grid_stride_map_and_offsets(rng, n, grid):
    a = rng.uniform(-1, 1, n)
    out = np.zeros(n)
    gs_map[grid](out, a, 0.25)
    close(out, np.where(a > 0.25, 2 * a, a), np.float64)
    for off in (0, 3, 70):
        out = np.zeros(n)
        gs_offset[grid](out, a, off)
        nthreads = grid[0] * grid[1]
        ref = np.zeros(n)
        for j in range(nthreads):  # the Python meaning, thread by thread
            for i in range(j + off, n, 5):
                ref[i] += a[i - off]
        close(out, ref, np.float64)


def test_grid_stride_atomics(rng):
    x = rng.uniform(-0.1, 1.1, 50001)
    for grid in [(1, 1), (5, 64), (40, 128)]:
        hist = np.zeros(17, np.int64)
        gs_hist[grid](hist, x, 0.0, 1.0 / 17)
        b = ((x - 0.0) / (1.0 / 17)).astype(np.int64)  # int() truncates, as C does
        ref = np.bincount(b[(b >= 0) & (b < 17)], minlength=17)
        assert np.array_equal(hist, ref)
        ext = np.array([-np.inf, np.inf])
        gs_minmax[grid](ext, x)
        assert ext[0] == x.max() and ext[1] == x.min()


def test_grid_stride_nested_and_one_body_cases(rng):
    n = 1111
    a = rng.uniform(-1, 1, (n, 6))
    out = np.zeros(n)
    gs_nested[(3, 64)](out, a, 5)
    close(out, a[:, :3].sum(axis=1) + np.arange(n) % 4, np.float64)
    v = rng.uniform(-1, 1, n)
    out = np.zeros(n)
    gs_counter_after[(3, 64)](out, v)
    close(out, v, np.float64)
    for stop, ref in [(0, v), (1, np.zeros(n))]:
        out = np.zeros(n)
        gs_return[(3, 64)](out, v, stop)
        close(out, ref, np.float64)
    out, flags = np.zeros(n), np.zeros(7, np.int64)
    gs_exch[(3, 64)](out, flags, v)
    close(out, v, np.float64)
    total = np.zeros(1)
    gs_atomic_in_callee[(3, 64)](total, v)
    close(total, np.array([v.sum()]), np.float64)


def test_grid_stride_loops_take_lane_mode():
    f64_1 = "float64[::1]"
    take = {
        gs_sum: f"void({f64_1}, {f64_1})",
        gs_map: f"void({f64_1}, {f64_1}, float64)",
        gs_offset: f"void({f64_1}, {f64_1}, int64)",
        gs_hist: f"void(int64[::1], {f64_1}, float64, float64)",
        gs_minmax: f"void({f64_1}, {f64_1})",
        gs_nested: f"void({f64_1}, float64[:, ::1], int64)",
        with_atomic: f"void({f64_1}, {f64_1}, float64[:, ::1])",
    }
    for k, sig in take.items():
        src = source(k, sig)
        # (or run flat, each position once: a grid-stride loop whose iterations share
        # nothing, tests/python/test_grid_stride.py)
        assert lanes_of(src) or "const i64 NX_ = xhi_," in src, k
    # a pass per base value of the counter, over the prefix of lanes still in the loop;
    # the loads along the counter are unit stride (the base plus the lane)
    src = source(gs_sum, f"void({f64_1}, {f64_1})")
    assert re.search(r"const int nl_ = sp\d+ - it\d+ < nlo\d+", src)
    assert re.search(r"v\d+_a\.data\[\(v\d+_i \+ l_\)\]", src)
    # the atomic's statement runs in a lane loop that is not `omp simd`: lanes may
    # update one element
    lane_body = src[src.index("kiln_lanes_("):]
    atomic_loop = re.search(r"(.*)\n\s*for \(int l_ = 0; l_ < nl_; l_\+\+\) \{\n[^\n]*\n\s*\(void\)\(\(void\)\(\*ra0_0_",
                            lane_body)
    assert atomic_loop and "omp simd" not in atomic_loop.group(1).splitlines()[-1]
    leave = {
        gs_counter_after: f"void({f64_1}, {f64_1})",
        gs_return: f"void({f64_1}, {f64_1}, int64)",
        gs_exch: f"void({f64_1}, int64[::1], {f64_1})",
        gs_atomic_in_callee: f"void({f64_1}, {f64_1})",
    }
    for k, sig in leave.items():
        src = source(k, sig)
        assert "kiln_body_lanes" not in src and "KILN_LANES" not in src, k


def chain_kernel(tmp_path, m):
    """A kernel whose local a<m> turns varying only through m assignments that run
    backwards through its loop: the uniformity analysis needs m + 1 passes."""
    body = "".join(f"            a{j} = a{j - 1} * 0.5\n" for j in range(m, 1, -1))
    inits = "".join(f"        a{j} = 0.0\n" for j in range(1, m + 1))
    text = (f"import kiln\n\n\n@kiln.jit\ndef chain(out, x, n):\n    i = kiln.grid(1)\n"
            f"    if i < out.size:\n{inits}        for k in range(n):\n{body}"
            f"            a1 = x[i] + k\n        out[i] = a{m}\n")
    path = tmp_path / f"chain{m}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"chain{m}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.chain


def np_chain(x, n, m):
    a = [np.zeros_like(x) for _ in range(m + 1)]
    for k in range(n):
        for j in range(m, 1, -1):
            a[j] = a[j - 1] * 0.5
        a[1] = x + k
    return a[m]


def test_analysis_passes_limit(tmp_path, rng):
    # PLAN_LANE_PASSES (16): a chain of 15 converges in 16 passes and takes lane mode,
    # one of 16 needs 17 and keeps the one body; both compute the same
    x = rng.random(300)
    for m, lanes in [(15, True), (16, False)]:
        k = chain_kernel(tmp_path, m)
        assert (lanes_of(source(k, "void(float64[::1], float64[::1], int64)")) is not None) == lanes
        out = np.zeros(300)
        k[blocks1(300)](out, x, m + 3)
        close(out, np_chain(x, m + 3, m), np.float64)


class KernelGen:
    """Random integer kernels for lane mode: loops with uniform ranges and conditions,
    while loops with varying conditions, ifs of both kinds, uniform break and continue,
    loads at computed indices, stores to the position's own element, grid-stride loops
    (lane for loops) that add along their counter, atomic adds and subs into a
    private-copy array (computed indices) and a reduction array (index 0)."""

    def __init__(self, rnd, dims, depth=3):
        self.r, self.dims, self.lines, self.n, self.depth = rnd, dims, [], 0, depth
        self.vars, self.uniform = ["v0", "v1", "v2", "v3"], []

    def atom(self, varying):
        pool = ["n", "m", str(self.r.randint(-5, 9)), "kiln.int64(3037000500)"] + self.uniform
        if varying:
            pool += self.vars + (["i", "j"] if self.dims == 2 else ["i"])
        return self.r.choice(pool)

    def expr(self, varying=True, d=0):
        r = self.r
        if d > 2 or r.random() < 0.3:
            if r.random() < 0.25:
                return (f"a[({self.expr(varying, d + 1)}) % a.shape[0], "
                        f"({self.expr(varying, d + 1)}) % a.shape[1]]")
            return self.atom(varying)
        x, y = self.expr(varying, d + 1), self.expr(varying, d + 1)
        return r.choice([f"({x} + {y})", f"({x} - {y})", f"({x} * {y})", f"min({x}, {y})",
                         f"max({x}, {y})", f"abs({x})", f"(({x}) % {r.randint(1, 7)})",
                         f"(({x}) // {r.randint(1, 7)})", f"(1 if {x} < {y} else 2)"])

    def cond(self, varying=True):
        op = self.r.choice(["<", "<=", ">", "==", "!="])
        return f"{self.expr(varying, 1)} {op} {self.expr(varying, 1)}"

    def emit(self, ind, s):
        self.lines.append("    " * ind + s)

    def block(self, ind, depth, in_for, straight):
        for _ in range(self.r.randint(1, 3)):
            self.stmt(ind, depth, in_for, straight)

    def stmt(self, ind, depth, in_for, straight):
        r = self.r
        kinds = ["assign", "assign", "aug", "mul", "store", "if", "atomic"]
        if depth < self.depth and not straight:
            kinds += ["for", "for", "uwhile", "vwhile", "uif", "gfor"]
        if in_for and not straight:
            kinds.append("exit")
        kind, v = r.choice(kinds), r.choice(self.vars[:4])
        own = "i, j" if self.dims == 2 else "i, 0"
        # values grow and wrap around int64 (products of products): %, // and indices
        # must follow Python on the wrapped values.  The variables are int64 from the
        # start (kiln.int64), so that the Python reference (simulate) wraps them too;
        # what stays a Python int there (literals, loop counters) stays far below 2**63
        if kind == "assign":
            self.emit(ind, f"{v} = kiln.int64({self.expr()})")
        elif kind == "aug":
            self.emit(ind, f"{v} += {self.expr()}")
        elif kind == "mul":  # two of these pass 2**63
            self.emit(ind, f"{v} *= {self.expr()} + kiln.int64(3037000500)")
        elif kind == "store":
            self.emit(ind, f"out2[{own}] = (out2[{own}] + {self.expr()}) % 10007")
        elif kind in ("if", "uif"):
            self.emit(ind, f"if {self.cond(kind == 'if')}:")
            # a varying if's blocks must be straight-line for lane mode, mostly
            inner = straight or (kind == "if" and r.random() < 0.7)
            self.block(ind + 1, depth + 1, in_for, inner)
            if r.random() < 0.5:
                self.emit(ind, "else:")
                self.block(ind + 1, depth + 1, in_for, inner)
        elif kind == "for":
            k = f"k{self.n}"
            self.n += 1
            hi = r.choice(["n % 5 + 1", str(r.randint(1, 6)), "m % 4"])
            self.emit(ind, f"for {k} in range({r.randint(0, 4)}, {hi}):")
            self.uniform.append(k)
            self.block(ind + 1, depth + 1, True, straight)
            self.uniform.pop()
        elif kind == "atomic":
            op = r.choice(["add", "sub"])
            if r.random() < 0.5:
                self.emit(ind, f"kiln.atomic.{op}(tot, abs({self.expr()}) % tot.size, {self.expr()})")
            else:
                self.emit(ind, f"kiln.atomic.{op}(red, 0, {self.expr()})")
        elif kind == "gfor":
            # a grid-stride loop over out3's elements (n * 20 of them), added to with
            # atomics (threads' ranges overlap when the step is not the grid's size)
            g = f"g{self.n}"
            self.n += 1
            inner = "j" if self.dims == 2 else "i"
            lo = r.choice([inner, f"{inner} + {r.randint(0, 3)}", f"{r.randint(0, 3)} + {inner}"])
            step = r.choice(["kiln.gridsize(1)" if self.dims == 1 else "kiln.gridsize(2)[1]",
                             str(r.randint(1, 4)), "m % 3 + 1"])
            self.emit(ind, f"for {g} in range({lo}, n * 20, {step}):")
            self.vars.append(g)
            self.emit(ind + 1, f"kiln.atomic.add(out3, {g}, {self.expr()})")
            self.block(ind + 1, depth + 1, True, straight)
            self.vars.pop()
        elif kind == "uwhile":
            w = f"w{self.n}"
            self.n += 1
            self.emit(ind, f"{w} = 0")
            self.emit(ind, f"while {w} < {r.randint(1, 4)}:")
            self.uniform.append(w)
            self.block(ind + 1, depth + 1, False, straight)
            self.uniform.pop()
            self.emit(ind + 1, f"{w} += 1")
        elif kind == "vwhile":
            t = f"t{self.n}"
            self.n += 1
            self.emit(ind, f"{t} = abs({self.expr()}) % 6")
            self.emit(ind, f"while {t} > 0:")
            self.vars.append(t)
            self.block(ind + 1, depth + 1, False, True)
            self.vars.pop()
            self.emit(ind + 1, f"{t} -= 1")
        else:
            self.emit(ind, f"if {self.cond(False)}:")
            self.emit(ind + 1, r.choice(["break", "continue"]))

    def text(self):
        head = "i, j = kiln.grid(2)" if self.dims == 2 else "i = kiln.grid(1)"
        guard = "and j < out.shape[1]" if self.dims == 2 else ""
        self.emit(0, "@kiln.jit")
        self.emit(0, "def k(out, out2, a, n, m, out3, tot, red):")
        self.emit(1, head)
        self.emit(1, f"if i < out.shape[0] {guard}:")
        for v in self.vars[:3]:
            self.emit(2, f"{v} = kiln.int64({self.r.randint(-3, 3)})")
        self.emit(2, f"{self.vars[3]} = kiln.int64(3037000500) * (i + kiln.int64(3037000500))")
        self.block(2, 0, False, False)
        self.block(2, 0, False, False)
        self.emit(2, f"out[i, {'j' if self.dims == 2 else '0'}] = v0 + v1 + v2 + v3")
        return "import kiln\n\n\n" + "\n".join(self.lines) + "\n"


def test_random_kernels_match_the_one_body(tmp_path, monkeypatch):
    # lane mode against debug=True (one body, no lane mode) on random integer kernels;
    # through tier 0 (libtcc) when kiln has it: the same generated C, compiled at once
    monkeypatch.setenv("KILN_TIERS", "tcc")
    # CPU lane mode only: NVRTC takes 0.1-6 s per random kernel (its CUDA, loops unrolled
    # by unroll.h, is long), 160 compiles here; the CUDA emitter has tests of its own
    monkeypatch.delenv("KILN_CHECK_CUDA", raising=False)
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"kernel seed: {seed}")
    lanes = 0
    for s in range(seed, seed + 40):
        rnd = random.Random(s)
        dims = rnd.choice([1, 2])
        path = tmp_path / f"rk{s}.py"
        path.write_text(KernelGen(rnd, dims).text())
        spec = importlib.util.spec_from_file_location(f"rk{s}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sig = ("void(int64[:, ::1], int64[:, ::1], int64[:, ::1], int64, int64, int64[::1], "
               "int64[::1], int64[::1])")
        lanes += lanes_of(source(mod.k, sig)) is not None
        rng = np.random.default_rng(s)
        h, w = int(rng.integers(1, 30)), int(rng.integers(1, 150))
        a = rng.integers(-20, 20, (7, 5))
        got = []
        for kern in (mod.k, kiln.jit(debug=True)(mod.k.py_func)):
            out = np.zeros((h, w) if dims == 2 else (w, 1), np.int64)
            out2 = np.zeros_like(out)
            extra = (np.zeros(140, np.int64), np.zeros(5, np.int64), np.zeros(1, np.int64))
            if dims == 2:
                kern[((h + 7) // 8, (w + 15) // 16), (8, 16)](out, out2, a, 7, 9, *extra)
            else:
                kern[(w + 31) // 32, 32](out, out2, a, 7, 9, *extra)
            got.append((out, out2) + extra)
        for x, y in zip(got[0], got[1]):
            assert np.array_equal(x, y), path.read_text()
    # many take lane mode (not those whose varying while divides int64: loop_divides)
    assert lanes >= 4


def wrap_int64(x):
    """kiln.int64 in the reference: Python's int wrapped to int64, as kiln's arithmetic."""
    return np.int64(((int(x) + 2**63) % 2**64) - 2**63)


def simulate(k, dims, grid, block, args):
    """Runs kernel k's Python function thread by thread with kiln's intrinsics in NumPy:
    int64 scalars wrap as kiln's integers do and %, // and indexing are Python's on the
    wrapped values, so this is the reference for exact int64 semantics.  Threads only
    share the atomics' arrays, whose adds commute."""
    pos = [np.int64(0), np.int64(0)]
    size = (np.int64(grid[0] * block[0]), np.int64(grid[1] * block[1]) if dims == 2 else 1)

    def add(arr, idx, v):
        arr[idx] += v

    def sub(arr, idx, v):
        arr[idx] -= v

    fake = types.SimpleNamespace(
        grid=lambda d: pos[0] if d == 1 else tuple(pos), int64=wrap_int64,
        gridsize=lambda d: size[0] if d == 1 else size,
        atomic=types.SimpleNamespace(add=add, sub=sub))
    f = k.py_func
    fn = types.FunctionType(f.__code__, {**f.__globals__, "kiln": fake})
    with np.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's scalar overflow warning
        for x in range(size[0]):
            for y in range(size[1]):
                pos[0], pos[1] = np.int64(x), np.int64(y)
                fn(*args)


def test_random_kernels_match_wrapped_int64(tmp_path, monkeypatch):
    # the random kernels' values overflow int64: kiln (lane mode where it applies) against
    # a thread-by-thread NumPy run of the same function (simulate), on small grids
    monkeypatch.setenv("KILN_TIERS", "tcc")
    monkeypatch.delenv("KILN_CHECK_CUDA", raising=False)
    seed = int(os.environ.get("KILN_TEST_SEED") or int.from_bytes(os.urandom(4), "little"))
    print(f"kernel seed: {seed}")
    wrapped = 0
    for s in range(seed, seed + 30):
        rnd = random.Random(s)
        dims = rnd.choice([1, 2])
        path = tmp_path / f"wk{s}.py"
        # two levels of loops at most, and n = 2 (grid-stride loops to 40): the reference
        # runs every thread's loops in Python
        path.write_text(KernelGen(rnd, dims, depth=2).text())
        spec = importlib.util.spec_from_file_location(f"wk{s}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        rng = np.random.default_rng(s)
        h, w = int(rng.integers(1, 5)), int(rng.integers(1, 20))
        a = rng.integers(-20, 20, (7, 5))
        if dims == 2:
            grid, block = ((h + 3) // 4, (w + 7) // 8), (4, 8)
        else:
            grid, block = ((w + 7) // 8, 1), (8, 1)
        got = []
        for run in ("kiln", "ref"):
            out = np.zeros((h, w) if dims == 2 else (w, 1), np.int64)
            out2 = np.zeros_like(out)
            extra = (np.zeros(140, np.int64), np.zeros(5, np.int64), np.zeros(1, np.int64))
            args = (out, out2, a, np.int64(2), np.int64(9)) + extra
            if run == "kiln":
                mod.k[grid if dims == 2 else grid[0], block if dims == 2 else block[0]](*args)
            else:
                simulate(mod.k, dims, grid, block, args)
            got.append((out, out2) + extra)
        for x, y in zip(got[0], got[1]):
            assert np.array_equal(x, y), path.read_text()
        wrapped += any(np.abs(x).max() > 2**40 for x in got[1])
    assert wrapped >= 1  # the values do wrap (v3 starts past 2**63)


@kiln.jit
def row_prefix(out, a):
    i = kiln.grid(1)
    if i < a.shape[0]:
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j]
            out[i, j] = s


@kiln.jit
def row_dot(out, a, x):
    i = kiln.grid(1)
    if i < a.shape[0]:
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j] * x[j]
        out[i] = s


def test_rows_of_a_c_array_that_scatter_or_gather_narrow_elements_take_no_lanes(rng):
    # perf33 1: lanes made every a[i, j] of a row per thread a gather across rows, and
    # every out[i, j] a scatter: a prefix sum ran at 0.11x Numba, a float32 matvec 0.5x
    f64_2, f32_2 = "float64[:, ::1]", "float32[:, ::1]"
    assert not lanes_of(source(row_prefix, f"void({f64_2}, {f64_2})"))
    assert not lanes_of(source(row_dot, f"void(float32[::1], {f32_2}, float32[::1])"))
    # float64 rows read (a gather of 8-byte elements keeps up), and F-order columns, keep them
    assert lanes_of(source(row_dot, f"void(float64[::1], {f64_2}, float64[::1])"))
    assert lanes_of(source(row_prefix, "void(float64[::1, :], float64[::1, :])"))
    # a short constant loop does not decide it
    assert lanes_of(source(gs_nested, "void(float64[::1], float64[:, ::1], int64)")) or \
        "const i64 NX_ = xhi_," in source(gs_nested, "void(float64[::1], float64[:, ::1], int64)")
    for order in ("C", "F"):
        a = np.asarray(rng.random((300, 77)), order=order)
        out = np.zeros_like(a)
        row_prefix[3, 128](out, a)
        close(out, np.cumsum(a, axis=1), np.float64)
        a32 = a.astype(np.float32)
        x = rng.random(77).astype(np.float32)
        o = np.zeros(300, np.float32)
        row_dot[3, 128](o, a32, x)
        np.testing.assert_allclose(o, a32 @ x, rtol=1e-5)
