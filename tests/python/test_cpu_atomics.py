"""Atomics on the CPU target made private per thread (src/emit/plan.h): an array updated only
by statement-level atomic add/sub gets a zeroed copy per OpenMP thread (a scalar reduction
variable when one constant index is used), merged with atomics at the end of the thread's
share.  Results must equal NumPy's for sums, histograms, strided outputs, arrays too large to
copy, serial and parallel launches, and kernels where the rule must not apply."""
import numpy as np
import pytest

import kiln


@kiln.jit
def asum(a, out):
    i = kiln.grid(1)
    if i < a.size:
        kiln.atomic.add(out, 0, a[i])


@kiln.jit
def asum_last(a, out):
    i = kiln.grid(1)
    if i < a.size:
        kiln.atomic.add(out, -1, a[i])
        kiln.atomic.sub(out, -1, 1)


@kiln.jit
def asum2d(a, out):
    i, j = kiln.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        kiln.atomic.add(out, 0, a[i, j])


@kiln.jit
def hist(a, h, nb):
    i = kiln.grid(1)
    if i < a.size:
        b = int(a[i] * nb)
        if b >= nb:
            b = nb - 1
        kiln.atomic.add(h, b, 1)


@kiln.jit
def hist_blocks(a, h, nb):
    i = kiln.threadIdx.x + kiln.blockIdx.x * kiln.blockDim.x
    if i < a.size:
        kiln.atomic.add(h, int(a[i] * nb) % nb, 1.0)


@kiln.jit
def sum_and_read(a, out, seen):
    i = kiln.grid(1)
    if i < a.size:
        kiln.atomic.add(out, 0, a[i])
        if i == 0:
            seen[0] = out[1]  # a read of out: no private copy


@kiln.jit
def sum_used(a, out, olds):
    i = kiln.grid(1)
    if i < a.size:
        olds[i] = kiln.atomic.add(out, 0, 1)  # the old value is used: no private copy


@kiln.jit
def sum_and_max(a, out, m):
    i = kiln.grid(1)
    if i < a.size:
        kiln.atomic.add(out, 0, a[i])
        kiln.atomic.max(m, 0, a[i])


SIZES = [1000, 300001]  # serial and parallel launches


def launch(n, threads=256):
    return (n + threads - 1) // threads, threads


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint32])
def test_sum(rng, n, dtype):
    a = (rng.random(n) * 100).astype(dtype)
    out = np.zeros(3, dtype)
    asum[launch(n)](a, out)
    if np.issubdtype(dtype, np.integer):
        assert out[0] == a.sum(dtype=dtype)  # wraps as the atomics would
    else:
        np.testing.assert_allclose(out[0], a.sum(dtype=np.float64), rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert out[1] == 0 and out[2] == 0


@pytest.mark.parametrize("n", SIZES)
def test_negative_index_and_sub(rng, n):
    a = rng.integers(0, 1000, n)
    out = np.full(4, 7, np.int64)
    asum_last[launch(n)](a, out)
    np.testing.assert_array_equal(out, [7, 7, 7, 7 + a.sum() - n])


@pytest.mark.parametrize("shape", [(30, 40), (700, 513)])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_sum_2d(rng, shape, layout):
    a = rng.random(shape)
    if layout == "F":
        a = np.asfortranarray(a)
    elif layout == "strided":
        a = np.zeros((shape[0], 2 * shape[1]))[:, ::2]
        a[...] = rng.random(shape)
    out = np.zeros(1)
    asum2d[((shape[0] + 15) // 16, (shape[1] + 15) // 16), (16, 16)](a, out)
    np.testing.assert_allclose(out[0], a.sum(), rtol=1e-12)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("nb", [1, 7, 256])
def test_histogram(rng, n, nb):
    a = rng.random(n).astype(np.float32)
    h = np.zeros(nb, np.int64)
    hist[launch(n)](a, h, nb)
    ref = np.bincount(np.minimum((a * np.float32(nb)).astype(np.int64), nb - 1), minlength=nb)
    np.testing.assert_array_equal(h, ref)


def test_histogram_into_strided_and_reversed_arrays(rng):
    n = 200003
    a = rng.random(n)
    ref = np.bincount((a * 64).astype(np.int64) % 64, minlength=64).astype(np.float64)
    base = np.full(128, 5.0)
    hist_blocks[launch(n)](a, base[::2], 64)
    np.testing.assert_array_equal(base[::2], ref + 5.0)
    np.testing.assert_array_equal(base[1::2], 5.0)
    back = np.zeros(64)
    hist_blocks[launch(n)](a, back[::-1], 64)
    np.testing.assert_array_equal(back[::-1], ref)


def test_histogram_too_large_to_copy_keeps_atomics(rng):
    nb = (4 << 20) // 8 + 1  # one element past the per-thread copy limit
    n = 100000
    a = rng.random(n)
    h = np.zeros(nb, np.int64)
    hist[launch(n)](a, h, nb)
    ref = np.bincount(np.minimum((a * nb).astype(np.int64), nb - 1), minlength=nb)
    np.testing.assert_array_equal(h, ref)


@pytest.mark.parametrize("n", SIZES)
def test_kernels_the_rule_does_not_apply_to(rng, n):
    a = rng.random(n)
    out = np.array([0.0, 42.0])
    seen = np.zeros(1)
    sum_and_read[launch(n)](a, out, seen)
    np.testing.assert_allclose(out[0], a.sum(), rtol=1e-12)
    assert seen[0] == 42.0
    cnt = np.zeros(1, np.int64)
    olds = np.full(n, -1, np.int64)
    sum_used[launch(n)](a, cnt, olds)
    assert cnt[0] == n
    np.testing.assert_array_equal(np.sort(olds), np.arange(n))  # each old value once
    out = np.zeros(1)
    m = np.full(1, -1.0)
    sum_and_max[launch(n)](a, out, m)
    np.testing.assert_allclose(out[0], a.sum(), rtol=1e-12)
    assert m[0] == a.max()


def _source(k, sig):
    k.compile(sig)  # the tests may run in any order, or alone (pytest -n)
    return k.inspect_source(sig)


def test_plan_in_the_source():
    s = _source(asum, "void(float64[::1], float64[::1])")
    assert "reduction(+:ac1_0_)" in s and "kiln_atomic_add_f64(&p1.data" in s
    s = _source(hist, "void(float32[::1], int64[::1], int64)")
    assert "calloc" in s and "simd reduction(" not in s
    s = _source(sum_and_read, "void(float64[::1], float64[::1], float64[::1])")
    assert "calloc" not in s and "ac1_0_" not in s
    s = _source(sum_used, "void(float64[::1], int64[::1], int64[::1])")
    assert "calloc" not in s and "ac1_0_" not in s
    s = _source(sum_and_max, "void(float64[::1], float64[::1], float64[::1])")
    # the max into one element is a reduction variable too (it kept the loop scalar before)
    assert "omp simd reduction(+:ac1_0_) reduction(max:ac2_0_)" in s


def test_debug_keeps_checked_atomics(rng):
    dbg = kiln.jit(debug=True)(asum.py_func)
    a = rng.random(5000)
    out = np.zeros(1)
    dbg[launch(a.size)](a, out)
    np.testing.assert_allclose(out[0], a.sum(), rtol=1e-12)
    assert "ac1_0_" not in dbg.inspect_source("void(float64[::1], float64[::1])")


def _own_then_read(h, view, out):
    i = kiln.grid(1)
    if i < out.shape[0]:
        kiln.atomic.add(h, i, 7)      # thread i's own element
        out[i] = view[i]              # the same memory when view is h: it sees the add


def _add_then_max(a, b):
    kiln.atomic.add(a, 0, 5)          # one constant index: a reduction variable
    kiln.atomic.max(b, 0, 3)          # b is a: max(5, 3)


def _total_then_read(a, view, out):
    i = kiln.grid(1)
    if i < out.shape[0]:
        kiln.atomic.add(a, 0, 1)
        out[i] = view[0] >= 1         # every thread has added before its own read


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_an_array_passed_twice_keeps_its_atomics(monkeypatch, tiers):
    # hunt33 2: the private copy ignored that another argument was the same buffer, so
    # the read through it saw the value from before the launch (0, not 7), and
    # add-then-max gave 8
    monkeypatch.setenv("KILN_TIERS", tiers)
    own = kiln.jit(target="cpu", cache=False)(_own_then_read)
    for n, block in ((4, 4), (100000, 256)):  # serial and parallel launches
        h = np.zeros(n, np.int64)
        out = np.full(n, -1, np.int64)
        own[(n + block - 1) // block, block](h, h, out)
        assert (h == 7).all() and (out == 7).all()
        # a view of the same bytes as another dtype counts too, and a disjoint array keeps
        # the private copy
        h = np.zeros(n, np.int64)
        out = np.full(n, -1, np.int64)
        own[(n + block - 1) // block, block](h, h.view(np.uint64)[::-1][::-1], out)
        assert (h == 7).all() and (out == 7).all()
        other = np.arange(n, dtype=np.int64)
        h = np.zeros(n, np.int64)
        own[(n + block - 1) // block, block](h, other, out)
        assert (h == 7).all() and (out == other).all()
    am = kiln.jit(target="cpu", cache=False)(_add_then_max)
    x = np.zeros(1, np.int64)
    am[1, 1](x, x)
    assert x[0] == 5
    tr = kiln.jit(target="cpu", cache=False)(_total_then_read)
    a = np.zeros(1, np.int64)
    out = np.zeros(64, np.bool_)
    tr[1, 64](a, a, out)
    assert a[0] == 64 and out.all()


def _guarded_total(a, view, out, n):
    i = kiln.grid(1)
    if i < n:                         # folded into the loops' bounds, but for a shared array
        kiln.atomic.add(a, 0, 1)
        out[i] = view[0] >= 1


def _sregs_total(a, view, out):
    i = kiln.threadIdx.x + kiln.blockIdx.x * kiln.blockDim.x
    if i < out.size:
        kiln.atomic.add(a, 0, 2)
        out[i] = view[0] >= 2


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_an_accumulated_array_passed_twice_runs_the_kernel_as_written(monkeypatch, tiers):
    # the scalar reduction of atomics into one element (plan.acc) has a body of its own for
    # a launch where that array is another argument too: every add reaches memory at once,
    # the guard stays in it (the grid is larger than n), with or without threadIdx
    monkeypatch.setenv("KILN_TIERS", tiers)
    g = kiln.jit(target="cpu", cache=False)(_guarded_total)
    for n, grid in ((5, (1, 8)), (70000, (300, 256))):
        a = np.zeros(1, np.int64)
        out = np.zeros(grid[0] * grid[1], np.bool_)
        g[grid](a, a, out, n)
        assert a[0] == n and out[:n].all() and not out[n:].any()
        b = np.zeros(1, np.int64)
        out[:] = False
        g[grid](b, np.ones(1, np.int64), out, n)   # disjoint: the reduction, the same count
        assert b[0] == n and out[:n].all()
    t = kiln.jit(target="cpu", cache=False)(_sregs_total)
    a = np.zeros(1, np.int64)
    out = np.zeros(1000, np.bool_)
    t[4, 256](a, a, out)
    assert a[0] == 2000 and out.all()


def _punned(bits, vals, out):
    bits[0] = 0x3F800000              # the bits of 1.0f
    out[0] = vals[0]                  # the same bytes as float32
    bits[0] = 0


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_a_view_of_another_dtype_sees_the_store_before_it(monkeypatch, tiers):
    # hunt33 1: gcc -O3's strict aliasing moved the float load above the int store (the
    # gcc build read 0.0; tier 0 read 1.0): the CPU build has -fno-strict-aliasing
    monkeypatch.setenv("KILN_TIERS", tiers)
    k = kiln.jit(target="cpu", cache=False)(_punned)
    buf = np.zeros(1, np.int32)
    out = np.zeros(1, np.float32)
    k[1, 1](buf, buf.view(np.float32), out)
    assert out[0] == 1.0 and buf[0] == 0


def _hist2d(h, x, y, nb):
    i = kiln.grid(1)
    if i < x.size:
        by = min(int(y[i] * nb), nb - 1)
        bx = min(int(x[i] * nb), nb - 1)
        kiln.atomic.add(h, (by, bx), 1)


def _cube_counts(h, x):
    i = kiln.grid(1)
    if i < x.size:
        v = int(x[i] * 27)
        kiln.atomic.sub(h, (v // 9, v // 3 % 3, v % 3), 2)


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_atomics_into_arrays_of_several_dimensions_get_private_copies(monkeypatch, tiers):
    # perf33 6: a 2-D histogram's atomics took a locked add per element (0.23-0.84x
    # Numba); an N-D array updated only by atomic add/sub now gets a C-ordered private
    # copy per thread, merged into the array's own layout (C, F, strided, reversed)
    from kiln import _compile, _kiln

    monkeypatch.setenv("KILN_TIERS", tiers)
    src = _compile._translate(kiln.jit(_hist2d), _kiln.parse_signature(
        "void(int64[:, ::1], float64[::1], float64[::1], int64)")[1], 0).source
    assert "pb0_ = (i64 *)calloc((size_t)nq0_" in src
    rng = np.random.default_rng(11)
    h2 = kiln.jit(target="cpu", cache=False)(_hist2d)
    cube = kiln.jit(target="cpu", cache=False)(_cube_counts)
    for n in (1, 999, 200003):
        x, y = rng.random(n), rng.random(n)
        want = np.zeros((8, 8), np.int64)
        np.add.at(want, (np.minimum((y * 8).astype(int), 7), np.minimum((x * 8).astype(int), 7)), 1)
        for h in (np.zeros((8, 8), np.int64), np.zeros((8, 8), np.int64, order="F"),
                  np.zeros((16, 24), np.int64)[::2, ::-3]):
            h2[(n + 255) // 256, 256](h, x, y, 8)
            assert (h == want).all()
        c = np.zeros((3, 3, 3), np.int32)
        cube[(n + 127) // 128, 128](c, x)
        w = np.zeros(27, np.int32)
        np.add.at(w, (x * 27).astype(int), -2)
        assert (c.ravel() == w).all()


def _maxabs(mx, mn, a):
    i = kiln.grid(1)
    if i < a.size:
        kiln.atomic.max(mx, 0, abs(a[i]))
        kiln.atomic.min(mn, 1, a[i])


def _range_into_one_array(res, a):
    # a max and a min of one array at two elements: a reduction variable each (perfhunt
    # s29: 0.10x Numba when the two kinds on one array kept every atomic)
    i = kiln.grid(1)
    if i < a.size:
        kiln.atomic.max(res, 0, a[i])
        kiln.atomic.min(res, 1, a[i])
        kiln.atomic.add(res, 2, 1)


def _mixed_kinds(res, a):
    i = kiln.grid(1)
    if i < a.size:
        kiln.atomic.add(res, 0, a[i])
        kiln.atomic.max(res, 0, a[i])


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_kinds_at_several_elements_of_one_array_reduce(monkeypatch, tiers):
    from kiln import _compile, _kiln

    monkeypatch.setenv("KILN_TIERS", tiers)
    src = _compile._translate(kiln.jit(_range_into_one_array), _kiln.parse_signature(
        "void(float64[::1], float64[::1])")[1], 0).source
    assert "reduction(max:ac0_0_) reduction(min:ac0_1_) reduction(+:ac0_2_)" in src
    k = kiln.jit(target="cpu", cache=False)(_range_into_one_array)
    rng = np.random.default_rng(5)
    for n, grid in ((1, (1, 1)), (999, (8, 128)), (300001, (1200, 256))):
        a = rng.standard_normal(n)
        a[n // 3] = np.nan     # never taken by atomic max or min
        res = np.array([-10.0, 10.0, 0.5])
        k[grid](res, a)
        assert res[0] == max(-10.0, np.nanmax(a)) and res[1] == min(10.0, np.nanmin(a))
        assert res[2] == n + 0.5


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_max_and_min_into_one_element_reduce(monkeypatch, tiers):
    # perf33 7: atomic.max into one element took a compare-and-swap per element (0.72x
    # Numba); it is a reduction variable now, with the atomics' own NaN rule (a NaN value is
    # never taken, a NaN already in the element stays)
    from kiln import _compile, _kiln

    monkeypatch.setenv("KILN_TIERS", tiers)
    src = _compile._translate(kiln.jit(_maxabs), _kiln.parse_signature(
        "void(float64[::1], float64[::1], float64[::1])")[1], 0).source
    assert "reduction(max:ac0_0_) reduction(min:ac1_0_)" in src and "kiln_accmax_f64(ra0_0_" in src
    k = kiln.jit(target="cpu", cache=False)(_maxabs)
    rng = np.random.default_rng(4)
    for n, grid in ((1, (1, 1)), (999, (8, 128)), (300001, (1200, 256))):
        for dt in (np.float32, np.float64, np.int32, np.int64):
            a = (rng.standard_normal(n) * 100).astype(dt)
            mx, mn = np.array([-1], dt), np.array([0, 10**6], dt)
            k[grid](mx, mn, a)
            assert mx[0] == max(np.abs(a).max(), -1) and mn[1] == a.min() and mn[0] == 0
        a = rng.standard_normal(n)
        a[n // 2] = np.nan
        mx, mn = np.array([-1.0]), np.array([0.0, 1e6])
        k[grid](mx, mn, a)
        assert mx[0] == max(np.nanmax(np.abs(a)) if n > 1 else -1.0, -1.0)
        assert mn[1] == (np.nanmin(a) if n > 1 else 1e6)
        mx = np.array([np.nan])
        k[grid](mx, mn, np.abs(a))
        assert np.isnan(mx[0])
    m = kiln.jit(target="cpu", cache=False)(_mixed_kinds)
    a = rng.random(1000)
    res = np.zeros(1)
    m[8, 128](res, a)  # no private copy for two kinds: each atomic in turn, in any order
    assert a.max() <= res[0] <= a.sum() + 1e-9
