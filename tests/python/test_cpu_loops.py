"""The CPU target's thread loops: guards folded into loop bounds, flat loops for kernels that
use only kiln.grid(), block loops otherwise; serial and parallel launches."""
import numpy as np
import pytest

import kiln


@kiln.jit
def guard_lt(out, n):
    i = kiln.grid(1)
    if i < n:
        out[i] += 1


@kiln.jit
def guard_reversed(out, lo, hi):
    i = kiln.grid(1)
    if hi > i and i >= lo:
        out[i] += 1


@kiln.jit
def guard_chain_and_other(out, m):
    i = kiln.grid(1)
    if 2 <= i < out.size - 3 and i % m != 0:
        out[i] += 1


@kiln.jit
def guard_eq(out, k):
    i = kiln.grid(1)
    if i == k:
        out[i] += 1


@kiln.jit
def guard_with_else(out, n):
    i = kiln.grid(1)
    if i < n:
        out[i] += 1
    else:
        if i < out.size:
            out[i] -= 1


@kiln.jit
def guard_prefix_side_effect(out, n, count):
    i = kiln.grid(1)
    kiln.atomic.add(count, 0, 1)
    if i < n:
        out[i] += 1


@kiln.jit
def raw_indices(out, n):
    i = kiln.threadIdx.x + kiln.blockIdx.x * kiln.blockDim.x
    if i < n:
        out[i] = kiln.threadIdx.x * 1000 + kiln.blockIdx.x


@pytest.mark.parametrize("size", [100, 70000])          # serial and parallel launches
def test_guards(size):
    blocks, threads = (size + 127) // 128, 128
    total = blocks * threads
    idx = np.arange(size)
    for n in [0, 1, size // 2, size, -5]:
        out = np.zeros(size, np.int64)
        guard_lt[blocks, threads](out, n)
        np.testing.assert_array_equal(out, (idx < n).astype(np.int64))
    out = np.zeros(size, np.int64)
    guard_reversed[blocks, threads](out, 3, size - 7)
    np.testing.assert_array_equal(out, ((idx >= 3) & (idx < size - 7)).astype(np.int64))
    out = np.zeros(size, np.int64)
    guard_chain_and_other[blocks, threads](out, 3)
    np.testing.assert_array_equal(out, ((idx >= 2) & (idx < size - 3) & (idx % 3 != 0)).astype(np.int64))
    out = np.zeros(size, np.int64)
    guard_eq[blocks, threads](out, size // 3)
    assert out.sum() == 1 and out[size // 3] == 1
    out = np.zeros(size, np.int64)
    guard_with_else[blocks, threads](out, size // 2)
    np.testing.assert_array_equal(out, np.where(idx < size // 2, 1, -1))
    out = np.zeros(size, np.int64)
    count = np.zeros(1, np.int64)
    guard_prefix_side_effect[blocks, threads](out, size // 4, count)
    assert count[0] == total   # every thread ran the statement before the guard
    np.testing.assert_array_equal(out, (idx < size // 4).astype(np.int64))
    out = np.zeros(size, np.int64)
    raw_indices[blocks, threads](out, size)
    np.testing.assert_array_equal(out, (idx % threads) * 1000 + idx // threads)


@kiln.jit
def guard2d(out, a):
    j, i = kiln.grid(2)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        out[i, j] = a[i - 1, j] + a[i, j + 1]


@kiln.jit
def grid3d(out):
    i, j, k = kiln.grid(3)
    if i < out.shape[2] and j < out.shape[1] and k < out.shape[0]:
        out[k, j, i] = i + 10 * j + 100 * k


@pytest.mark.parametrize("shape", [(5, 9), (300, 301)])
def test_2d_and_3d_grids(rng, shape):
    a = rng.random(shape)
    out = np.zeros(shape)
    guard2d[((shape[1] + 31) // 32, shape[0]), (32, 1)](out, a)
    ref = np.zeros(shape)
    ref[1:-1, 1:-1] = a[:-2, 1:-1] + a[1:-1, 2:]
    np.testing.assert_allclose(out, ref)
    o3 = np.zeros((7, shape[0] // 2 + 1, shape[1]), np.int64)
    grid3d[((shape[1] + 15) // 16, (o3.shape[1] + 3) // 4, 7), (16, 4, 1)](o3)
    k, j, i = np.indices(o3.shape)
    np.testing.assert_array_equal(o3, i + 10 * j + 100 * k)


@kiln.jit
def strided_loop(out, n):
    start = kiln.grid(1)
    stride = kiln.gridsize(1)
    for i in range(start, n, stride):
        out[i] += i


def test_grid_stride_loop():
    out = np.zeros(100003, np.int64)
    strided_loop[7, 64](out, out.size)
    np.testing.assert_array_equal(out, np.arange(out.size))


# ---- a loop that only folds a max or a min: an OpenMP reduction of kiln's own max ---------

@kiln.jit
def col_max_min(out, x, k):
    j = kiln.grid(1)
    if j < x.shape[1]:
        m = x[0, j]
        for i in range(1, x.shape[0]):
            m = max(m, x[i, j])
        lo = x[0, j]
        for i in range(x.shape[0]):
            lo = min(x[i, j] * k, lo)
        out[0, j] = m
        out[1, j] = lo


@pytest.mark.parametrize("tiers", ["0", "tcc"])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64])
def test_loops_that_fold_a_max_or_a_min(monkeypatch, tiers, dt):
    # perfhunt s29: a chain of scalar maxima ran at 0.29x Numba; the fold vectorises with
    # kiln's rules kept: a NaN is ignored, -0.0 is below 0.0
    from kiln import _compile, _kiln

    monkeypatch.setenv("KILN_TIERS", tiers)
    name = np.dtype(dt).name
    src = _compile._translate(col_max_min, _kiln.parse_signature(
        f"void({name}[:, :], {name}[::1, :], {name})")[1], 0).source
    assert "omp simd reduction(kmax_" in src and "omp simd reduction(kmin_" in src
    rng = np.random.default_rng(7)
    for rows, cols in ((1, 5), (37, 19), (300, 64)):
        if np.dtype(dt).kind == "f":
            x = rng.standard_normal((rows, cols)).astype(dt)
            x[rng.random((rows, cols)) < 0.05] = np.nan
            x[rng.random((rows, cols)) < 0.05] = -0.0
            x[rng.random((rows, cols)) < 0.05] = 0.0
            x[:, 0] = np.nan                        # a column of NaN only
        else:
            x = rng.integers(0, 1000, (rows, cols)).astype(dt)
        x = np.asfortranarray(x)
        out = np.zeros((2, cols), dt)
        kiln.jit(target="cpu", cache=False)(col_max_min.py_func)[1, 64](out, x, dt(1))
        ref = np.zeros((2, cols), dt)
        kiln.jit(target="cpu", cache=False, debug=True)(col_max_min.py_func)[1, 64](ref, x, dt(1))
        np.testing.assert_array_equal(out, ref)     # NaN where both are
        assert np.array_equal(np.signbit(out[:2]), np.signbit(ref[:2]))
