"""Unrolled loops on the GPU (pytest -m gpu; the code is in test_unroll_codegen.py):
results against NumPy at sizes that are not multiples of the unroll factor, with the
arrays apart (the main loop runs) and overlapping (the loop as written runs)."""
import math

import numpy as np
import pytest

import kiln
import test_unroll_codegen as U

pytestmark = pytest.mark.gpu


def bs_ref(s, x, t, r, v):
    s, x, t = (a.astype(np.float64) for a in (s, x, t))
    cdf = np.vectorize(lambda z: 0.5 * math.erfc(-z / math.sqrt(2)))
    sq = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sq)
    d2 = d1 - v * sq
    e = np.exp(-r * t)
    return s * cdf(d1) - x * e * cdf(d2), x * e * (1 - cdf(d2)) - s * (1 - cdf(d1))


@pytest.mark.parametrize("n,grid", [(1, 1), (3, 1), (4 * 64 + 1, 1), (4 * 64 * 7 + 2, 7),
                                    (10007, 5), (4 * 128 * 3 - 1, 3)])
def test_grid_stride_loop_every_tail(rng, n, grid):
    s = rng.uniform(5, 30, n).astype(np.float32)
    x = rng.uniform(1, 100, n).astype(np.float32)
    t = rng.uniform(0.25, 10, n).astype(np.float32)
    r, v = np.float32(0.02), np.float32(0.3)
    call = kiln.to_device(np.full(n, np.nan, np.float32))
    put = kiln.to_device(np.full(n, np.nan, np.float32))
    U.bs_stride[grid, 64](call, put, kiln.to_device(s), kiln.to_device(x), kiln.to_device(t), r, v)
    rc, rp = bs_ref(s, x, t, r, v)
    for got, ref in ((call.copy_to_host(), rc), (put.copy_to_host(), rp)):
        assert np.isfinite(got).all()
        assert np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1.0)) < 1e-5


@pytest.mark.parametrize("cols", [1, 3, 4, 5, 8, 131])
def test_row_loop_every_tail(rng, cols):
    rows = 1000
    a = np.asfortranarray(rng.uniform(-1, 1, (rows, cols)).astype(np.float32))
    w = rng.uniform(-1, 1, cols).astype(np.float32)
    out = kiln.to_device(np.asfortranarray(np.full((rows, cols), np.nan, np.float32)))
    U.row_scale[(rows + 127) // 128, 128](out, kiln.to_device(a), kiln.to_device(w))
    # against float64: the GPU fuses a * w + 1 into one rounding (NumPy's float32 rounds twice)
    ref = a.astype(np.float64) * w + 1
    np.testing.assert_allclose(out.copy_to_host(), ref, rtol=1e-6, atol=1e-7)


def test_carried_local_in_order(rng):
    m, n = 37, 37 * 11 + 5
    a = rng.random(n)
    out = kiln.device_array(m, np.float64)
    U.running_sum[1, 64](out, kiln.to_device(a), n)
    ref = np.zeros(m)
    for i in range(m):
        s = 0.0
        for j in range(i, n, m):
            s = s * 0.5 + a[j]
        ref[i] = s
    np.testing.assert_allclose(out.copy_to_host(), ref, rtol=1e-12)


@kiln.jit
def shift(out, a, n):
    for i in range(kiln.grid(1), n, kiln.gridsize(1)):
        out[i] = a[i] + 1


def test_overlapping_arrays_run_the_loop_as_written():
    # out is a shifted by one element: iteration i reads what iteration i - 1 wrote, in
    # the one thread of the launch.  Loads hoisted across the pass would read old values.
    n = 103
    base = kiln.to_device(np.zeros(n + 1, np.float32))
    shift[1, 1](base[1:], base[:n], n)
    np.testing.assert_array_equal(base.copy_to_host(), np.arange(n + 1, dtype=np.float32))
    # apart: the same kernel takes the main loop
    a = np.arange(n, dtype=np.float32)
    out = kiln.device_array(n, np.float32)
    shift[1, 1](out, kiln.to_device(a), n)
    np.testing.assert_array_equal(out.copy_to_host(), a + 1)


@kiln.jit
def gather_k(out, a, idx, n):
    for i in range(kiln.grid(1), n, kiln.gridsize(1)):
        out[i] = a[idx[i]] + a[(i + 3) % 7]


def test_gather_through_hoisted_index(rng):
    n = 4097
    a = rng.random(n).astype(np.float32)
    idx = rng.permutation(n).astype(np.int64)
    out = kiln.device_array(n, np.float32)
    gather_k[3, 32](out, kiln.to_device(a), kiln.to_device(idx), n)
    i = np.arange(n)
    np.testing.assert_array_equal(out.copy_to_host(), a[idx] + a[(i + 3) % 7])


@kiln.jit
def from_negative(out, a, n):
    for j in range(-3, n):  # a start below 0: the 32-bit main loop is skipped
        out[j + 3] = a[j + 3] * 2


def test_ranges_outside_32_bits_run_the_loop_as_written(rng):
    n = 1001
    a = rng.random(n + 3).astype(np.float32)
    out = kiln.device_array(n + 3, np.float32)
    from_negative[1, 1](out, kiln.to_device(a), n)
    np.testing.assert_array_equal(out.copy_to_host(), a * 2)
