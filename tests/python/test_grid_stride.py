"""Grid-stride loops on the CPU target (src/emit/plan_stride.c): a kernel whose last
statement is `for i in range(cuda.grid(1), n, cuda.gridsize(1))` (or start/stride locals)
and whose iterations share nothing runs the positions [0, n) as one flat loop, each once.
Results must equal NumPy's for any grid (one block, fewer threads than elements, more,
2-D launches), on both CPU tiers; kernels whose iterations do share something (a local
carried from one to the next, the thread's position read in the body, a break, a return)
keep the loop as written."""
import numpy as np
import pytest

import kiln
from kiln import _compile, _kiln


def source(k, sig):
    return _compile._translate(k, _kiln.parse_signature(sig)[1], 0).source


def flat(src):
    return "const i64 NX_ = xhi_," in src


@kiln.jit
def saxpy_inline(out, x, y, a):
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        out[i] = a * x[i] + y[i]


@kiln.jit
def saxpy_locals(out, x, y, a):
    start = kiln.grid(1)
    stride = kiln.gridsize(1)
    n = x.shape[0]
    scale = a * 2.0
    for i in range(start, n - 1, stride):
        v = x[i]
        if v > 0.5:
            w = v * scale
        else:
            w = -v
        acc = 0.0
        for k in range(3):
            acc += w * k
        out[i] = acc + y[i]


@kiln.jit
def hist(h, x, nb):
    for i in range(kiln.grid(1), x.size, kiln.gridsize(1)):
        b = int(x[i] * nb)
        kiln.atomic.add(h, min(b, nb - 1), 1)


@kiln.jit
def carried(out, x):
    acc = 0.0
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        acc += x[i]
        out[i] = acc


@kiln.jit
def reads_position(out, x):
    t = kiln.grid(1)
    for i in range(t, x.shape[0], kiln.gridsize(1)):
        out[i] = x[i] + t


@kiln.jit
def position_before(out, x):
    t = kiln.grid(1)
    u = t * 2
    for i in range(t, x.shape[0], kiln.gridsize(1)):
        out[i] = x[i] + u


@kiln.jit
def breaks(out, x):
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        if x[i] < 0:
            break
        out[i] = x[i]


@kiln.jit
def set_on_one_path(out, x):
    w = 0.0
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        if x[i] > 0.5:
            w = x[i]
        out[i] = w


@kiln.jit
def partial_sums(res, x):
    acc = 0.0
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        if x[i] > 0.5:
            acc += x[i]
        else:
            acc -= 1.0
    kiln.atomic.add(res, 0, acc)


@kiln.jit
def last_value(res, x):
    acc = 0.0
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        acc = x[i]             # not an accumulator: each thread adds its last element
    kiln.atomic.add(res, 0, acc)


@kiln.jit
def not_from_zero(res, x):
    acc = 1.0
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        acc += x[i]
    kiln.atomic.add(res, 0, acc)


F64 = "float64[::1]"


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_partial_sums_added_after_the_loop(monkeypatch, tiers):
    monkeypatch.setenv("KILN_TIERS", tiers)
    assert flat(source(partial_sums, f"void({F64}, {F64})"))
    assert not flat(source(last_value, f"void({F64}, {F64})"))
    assert not flat(source(not_from_zero, f"void({F64}, {F64})"))
    rng = np.random.default_rng(9)
    x = rng.random(10007)
    want = np.where(x > 0.5, x, -1.0).sum()
    for grid, block in ((1, 1), (3, 32), (64, 256)):
        res = np.zeros(1)
        kiln.jit(target="cpu", cache=False)(partial_sums.py_func)[grid, block](res, x)
        assert np.isclose(res[0], want)
        res = np.zeros(1)
        kiln.jit(target="cpu", cache=False)(last_value.py_func)[grid, block](res, x)
        s = grid * block
        last = [x[t + (len(x) - 1 - t) // s * s] for t in range(min(s, len(x)))]
        assert np.isclose(res[0], sum(last))
        res = np.zeros(1)
        kiln.jit(target="cpu", cache=False)(not_from_zero.py_func)[grid, block](res, x)
        assert np.isclose(res[0], x.sum() + s)


def test_which_kernels_run_flat():
    assert flat(source(saxpy_inline, f"void({F64}, {F64}, {F64}, float64)"))
    assert flat(source(saxpy_locals, f"void({F64}, {F64}, {F64}, float64)"))
    assert flat(source(hist, f"void(int64[::1], {F64}, int64)"))
    for k in (carried, reads_position, position_before, breaks, set_on_one_path):
        assert not flat(source(k, f"void({F64}, {F64})")), k.__name__


@pytest.mark.parametrize("tiers", ["0", "tcc"])
@pytest.mark.parametrize("grid, block", [(1, 1), (1, 64), (3, 32), (64, 256), (4096, 128),
                                         ((2, 3), (32, 2))])
def test_grid_stride_results(monkeypatch, tiers, grid, block):
    monkeypatch.setenv("KILN_TIERS", tiers)
    rng = np.random.default_rng(5)
    for n in (0, 1, 1000, 100003):
        x, y = rng.random(n), rng.random(n)
        for k in (saxpy_inline, saxpy_locals):
            out = np.full(n, -7.0)
            kiln.jit(target="cpu", cache=False)(k.py_func)[grid, block](out, x, y, 1.5)
            if k is saxpy_inline:
                want = 1.5 * x + y
            else:
                w = np.where(x > 0.5, x * 3.0, -x)
                want = w * 3.0 + y
                want[n - 1:] = -7.0
            np.testing.assert_allclose(out, want)
        h = np.zeros(16, np.int64)
        kiln.jit(target="cpu", cache=False)(hist.py_func)[grid, block](h, x, 16)
        per_copy = np.bincount(np.minimum((x * 16).astype(np.int64), 15), minlength=16)
        rows = np.prod(grid[1:] if isinstance(grid, tuple) else ()) * \
            np.prod(block[1:] if isinstance(block, tuple) else ())
        assert (h == per_copy * rows).all()  # a 2-D launch runs grid(1)'s loop per row
    # the loops kept as written still compute what the GPU would
    x = np.ones(1000)
    out = np.zeros(1000)
    kiln.jit(target="cpu", cache=False)(carried.py_func)[1, 4](out, x)
    assert (out == np.arange(1000) // 4 + 1).all()
    out = np.zeros(1000)
    kiln.jit(target="cpu", cache=False)(reads_position.py_func)[2, 8](out, x)
    assert (out == 1 + np.arange(1000) % 16).all()


@kiln.jit
def sum_into(res, x):
    acc = 0.0
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        acc += x[i]
    kiln.atomic.add(res, 0, acc)


@kiln.jit
def prefix_load(out, x):
    b = x[0]
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        out[i] = b
        x[i] = -1.0


@kiln.jit
def chain(a):
    for i in range(kiln.grid(1), a.shape[0], kiln.gridsize(1)):
        if i > 0:
            a[i] += a[i - 1]


@kiln.jit
def reads_its_sum(h, seen, x):
    acc = 0
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        seen[i] = h[0]
        acc += 1
    kiln.atomic.add(h, 0, acc)


@kiln.jit
def shift(out, x):
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        if i > 0:
            out[i] = x[i - 1]


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_what_a_gpu_thread_would_see_in_order(monkeypatch, tiers):
    # hunt34: each gave a result no GPU can, run flat
    monkeypatch.setenv("KILN_TIERS", tiers)
    j = lambda k: kiln.jit(target="cpu", cache=False)(k.py_func)  # noqa: E731
    # 1. a float64 sum into an int32 (or float32) array: the thread's sum is converted once
    assert not flat(source(sum_into, "void(int32[::1], float64[::1])"))
    assert flat(source(sum_into, "void(float64[::1], float64[::1])"))
    r = np.zeros(1, np.int32)
    j(sum_into)[1, 1](r, np.full(1000, 0.5))
    assert r[0] == 500
    r = np.zeros(1, np.float32)
    j(sum_into)[1, 1](r, np.array([1e8, 1.0, -1e8]))
    assert r[0] == 1.0
    # 2. a load before the loop happens once, before the loop's writes
    assert not flat(source(prefix_load, f"void({F64}, {F64})"))
    x, out = np.ones(40), np.zeros(40)
    j(prefix_load)[1, 1](out, x)
    assert (out == 1.0).all() and (x == -1.0).all()
    # 3. one thread's iterations run in order: a chain through memory
    assert not flat(source(chain, f"void({F64})"))
    a = np.ones(40)
    j(chain)[1, 1](a)
    assert (a == np.arange(1, 41)).all()
    # 4. partial sums whose array the loop reads
    assert not flat(source(reads_its_sum, f"void(int64[::1], int64[::1], {F64})"))
    h, seen = np.zeros(1, np.int64), np.full(40, -1, np.int64)
    j(reads_its_sum)[1, 1](h, seen, np.ones(40))
    assert h[0] == 40 and (seen == 0).all()
    # an array written through one name and read through another: the loop as written
    assert flat(source(shift, f"void({F64}, {F64})"))
    a = np.arange(40.0)
    j(shift)[1, 1](a, a)
    assert (a == 0.0).all()
    b, o = np.arange(40.0), np.zeros(40)
    j(shift)[1, 1](o, b)
    assert (o[1:] == b[:-1]).all() and o[0] == 0.0


# ---- the same loops written as `while i < n: ...; i += stride` (perfhunt s29) -----------

@kiln.jit
def while_sum(res, x):
    i = kiln.grid(1)
    acc = 0.0
    stride = kiln.gridsize(1)
    while i < x.size:
        acc += x[i]
        i += stride
    kiln.atomic.add(res, 0, acc)


@kiln.jit
def while_square(out, x):
    i = kiln.grid(1)
    while i < x.shape[0]:
        t = x[i] * 2.0
        out[i] = t * t
        i += kiln.gridsize(1)


@kiln.jit
def while_reads_start(out, x):
    i = kiln.grid(1)
    j = i                      # the thread's first position, kept: not flat
    while i < x.shape[0]:
        out[i] = x[i] + j
        i += kiln.gridsize(1)


@kiln.jit
def while_continue(out, x):
    i = kiln.grid(1)
    while i < x.shape[0]:
        out[i] = x[i]
        i += kiln.gridsize(1)
        if x[0] > 2.0:
            continue


@kiln.jit
def while_step_two(out, x):
    i = kiln.grid(1)
    while i < x.shape[0]:
        out[i] = x[i]
        i += 2 * kiln.gridsize(1)


# max/min tails: the thread's max (or min) of its positions, from the identity
@kiln.jit
def max_min_tails(res, x):
    m = -np.inf
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        m = max(m, x[i])
    kiln.atomic.max(res, 0, m)


@kiln.jit
def min_while(res, x):
    i = kiln.grid(1)
    m = 9223372036854775807
    while i < x.shape[0]:
        m = min(x[i], m)
        i += kiln.gridsize(1)
    kiln.atomic.min(res, 0, m)


@kiln.jit
def max_from_minus_five(res, x):
    m = -5                     # not max's identity: every thread's tail adds it, not flat
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        m = max(m, x[i])
    kiln.atomic.max(res, 0, m)


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_while_loops_and_max_min_tails(monkeypatch, tiers):
    monkeypatch.setenv("KILN_TIERS", tiers)
    assert flat(source(while_sum, f"void({F64}, {F64})"))
    assert flat(source(while_square, f"void({F64}, {F64})"))
    assert flat(source(max_min_tails, f"void({F64}, {F64})"))
    assert flat(source(min_while, "void(int64[::1], int64[::1])"))
    for k in (while_reads_start, while_continue, while_step_two):
        assert not flat(source(k, f"void({F64}, {F64})")), k.__name__
    assert not flat(source(max_from_minus_five, "void(int64[::1], int64[::1])"))
    rng = np.random.default_rng(11)
    x = rng.standard_normal(10007)
    x[17] = np.nan            # max ignores a NaN, as the thread's max(m, x) does
    xi = rng.integers(-50, 50, 10007)
    cpu = lambda k: kiln.jit(target="cpu", cache=False)(k.py_func)  # noqa: E731
    for grid, block in ((1, 1), (3, 32), (64, 256)):
        s = grid * block
        res = np.zeros(1)
        cpu(while_sum)[grid, block](res, np.nan_to_num(x))
        assert np.isclose(res[0], np.nan_to_num(x).sum())
        out = np.zeros_like(x)
        cpu(while_square)[grid, block](out, x)
        np.testing.assert_array_equal(out, (2 * x) ** 2)
        out = np.zeros_like(x)
        cpu(while_reads_start)[grid, block](out, x)
        np.testing.assert_array_equal(out, x + np.arange(x.size) % s)
        out = np.zeros_like(x)
        cpu(while_step_two)[grid, block](out, x)
        done = (np.arange(x.size) % (2 * s)) < s
        np.testing.assert_array_equal(out, np.where(done, x, 0.0))
        res = np.array([-np.inf])
        cpu(max_min_tails)[grid, block](res, x)
        assert res[0] == np.nanmax(x)
        res = np.array([100])
        cpu(min_while)[grid, block](res, xi)
        assert res[0] == min(100, xi.min())
        for arr, start in ((xi, -1000), (xi[:0], -1000)):
            res = np.array([start])
            cpu(max_from_minus_five)[grid, block](res, arr)
            assert res[0] == max(start, -5, arr.max() if arr.size else -5)
    # no position at all: the tails add their identity, which changes nothing
    res = np.array([-7.0])
    cpu(max_min_tails)[4, 32](res, x[:0])
    assert res[0] == -7.0
