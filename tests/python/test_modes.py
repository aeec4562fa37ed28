"""kiln.compile's modes on the CPU target (the GPU's graphs: test_modes_gpu.py on the fake
driver, test_gpu_modes.py on a GPU).  reduce-overhead records a step's launches once per
guard and replays them without the step's Python; every test compares a replay with the
step run eagerly on fresh random inputs."""
import threading
import warnings

import numpy as np
import pytest

import kiln
from kiln import _kiln


@kiln.jit
def axpy(out, a, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@kiln.jit
def scale(x, s):
    i = kiln.grid(1)
    if i < x.size:
        x[i] *= s


@kiln.jit
def hist(h, x):
    i = kiln.grid(1)
    if i < x.size:
        kiln.atomic.add(h, int(x[i] * 16) % 16, 1)


@kiln.jit
def add2(out, x):
    i, j = kiln.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = x[i, j] + 2 * out[i, j]


CALLS = []


def step(x, y, a):
    CALLS.append(1)
    n = x.size
    t = np.empty_like(x)
    axpy[(n + 127) // 128, 128](t, a, x, y)
    scale[(n + 127) // 128, 128](t, 2.0)
    out = np.empty_like(x)
    axpy[(n + 127) // 128, 128](out, 1.0, t, y)
    return out


def rand(n, dt=np.float64, rng=np.random.default_rng()):
    return rng.random(n).astype(dt)


def counts():
    return dict(zip(("made", "replays", "graphs", "updates"), _kiln.record_counts()))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_replay_equals_eager_and_skips_the_python(dt):
    f = kiln.compile(step, mode="reduce-overhead")
    c0 = counts()
    for k in range(5):
        x, y = rand(1000, dt), rand(1000, dt)
        before = len(CALLS)
        r = f(x, y, 3.0)
        ran = len(CALLS) - before
        assert ran == (1 if k == 0 else 0), "the step's Python runs at the first call only"
        np.testing.assert_allclose(r, step(x, y, 3.0), rtol=1e-6)
        assert r.dtype == dt
    c1 = counts()
    assert c1["made"] - c0["made"] == 1 and c1["replays"] - c0["replays"] == 4
    assert len(f.records) == 1 and f.records[0].launches == 3 and f.records[0].target == "cpu"


def test_returned_arrays_are_new_at_each_call():
    f = kiln.compile(step, mode="reduce-overhead")
    x, y = rand(300), rand(300)
    r1 = f(x, y, 1.0)
    keep = r1.copy()
    r2 = f(rand(300), y, 1.0)
    r3 = f(x, y, 1.0)
    assert r1 is not r2 and r2 is not r3
    np.testing.assert_array_equal(r1, keep)   # a later replay did not write into r1
    np.testing.assert_array_equal(r3, keep)


def test_guards_shapes_dtypes_layouts_and_scalars():
    f = kiln.compile(step, mode="reduce-overhead")
    base = rand(2000)
    cases = [(rand(100), rand(100), 2.0), (rand(101), rand(101), 2.0),
             (rand(100), rand(100), 5.0), (rand(100, np.float32), rand(100, np.float32), 2.0),
             (base[::2], rand(1000), 2.0), (base[::-2], rand(1000), 2.0)]
    for _ in range(2):
        for x, y, a in cases:
            np.testing.assert_allclose(f(x, y, a), step(x, y, a), rtol=1e-6)
    assert len(f.records) == len(cases)


def test_strided_2d_and_fortran_inputs():
    def two(x, o):
        add2[((x.shape[0] + 7) // 8, (x.shape[1] + 7) // 8), (8, 8)](o, x)
        return o

    f = kiln.compile(two, mode="reduce-overhead")
    for order in "CF":
        for _ in range(3):
            x = np.asfortranarray(rand(35 * 19).reshape(35, 19)) if order == "F" \
                else rand(35 * 40).reshape(35, 40)[:, ::2]
            o = np.ones((35, x.shape[1]), order=order)
            want = x + 2
            got = f(x, o)
            assert got is o                    # an argument returned is the new argument
            np.testing.assert_allclose(o, want)


def test_a_temporary_accumulator_starts_from_its_first_contents():
    def histogram(x):
        h = np.zeros(16, np.int64)            # zeros made by NumPy, added to by the kernel
        hist[(x.size + 63) // 64, 64](h, x)
        return h

    f = kiln.compile(histogram, mode="reduce-overhead")
    for _ in range(4):
        x = rand(5000)
        want = np.bincount((x * 16).astype(np.int64) % 16, minlength=16)
        np.testing.assert_array_equal(f(x), want)


def test_past_the_record_limit_runs_eagerly_with_one_warning():
    f = kiln.compile(step, mode="reduce-overhead", max_records=2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in (10, 11, 12, 13, 12):
            x, y = rand(n), rand(n)
            np.testing.assert_allclose(f(x, y, 1.5), step(x, y, 1.5))
    msgs = [str(m.message) for m in w if issubclass(m.category, kiln.PerformanceWarning)]
    assert len(msgs) == 1 and "more than 2 different guards" in msgs[0], msgs
    assert len(f.records) == 2


def test_a_host_value_inside_the_step_is_never_replayed():
    total = kiln.reduce(lambda a, b: a + b)

    def normalise(x):
        s = total(x)                          # read on the host: the next launch depends on it
        out = np.empty_like(x)
        axpy[(x.size + 127) // 128, 128](out, 1.0 / s, x, np.zeros_like(x))
        return out

    f = kiln.compile(normalise, mode="reduce-overhead")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            x = rand(500)
            np.testing.assert_allclose(f(x), x / x.sum(), rtol=1e-9)
    msgs = [str(m.message) for m in w if issubclass(m.category, kiln.PerformanceWarning)]
    assert len(msgs) == 1 and "kiln.reduce reads its result on the host" in msgs[0], msgs


def test_a_returned_number_is_never_replayed():
    def mean(x):
        out = np.empty_like(x)
        scale[(x.size + 127) // 128, 128](x, 1.0)
        return float(x.sum())

    f = kiln.compile(mean, mode="reduce-overhead")
    with pytest.warns(kiln.PerformanceWarning, match="returns a float"):
        f(rand(10))
    x = rand(10)
    assert f(x) == float(x.sum())


def test_unguardable_arguments_run_eagerly():
    def first(xs):
        out = np.empty_like(xs[0])
        axpy[1, 64](out, 1.0, xs[0], xs[1])
        return out

    f = kiln.compile(first, mode="reduce-overhead")
    with pytest.warns(kiln.PerformanceWarning, match="argument 1 is a list"):
        a, b = rand(50), rand(50)
        np.testing.assert_allclose(f([a, b]), a + b)
    a, b = rand(50), rand(50)
    np.testing.assert_allclose(f([a, b]), a + b)


def test_aliased_arguments_are_a_guard():
    def inplace(x, y):
        axpy[(x.size + 63) // 64, 64](x, 2.0, y, x)   # x = 2 y + x
        return x

    f = kiln.compile(inplace, mode="reduce-overhead")
    x, y = rand(200), rand(200)
    want = 2 * y + x
    np.testing.assert_allclose(f(x, y), want)
    x = rand(200)
    want = 3 * x
    np.testing.assert_allclose(f(x, x), want)
    assert len(f.records) == 2


def test_a_raising_step_records_nothing():
    def bad(x, n):
        scale[1, 64](x, 2.0)
        if n > 1:
            raise ValueError("no")
        return x

    f = kiln.compile(bad, mode="reduce-overhead")
    with pytest.raises(ValueError):
        f(rand(10), 2)
    assert f.records == []
    x = rand(10)
    want = 2 * x
    np.testing.assert_allclose(f(x, 1), want)


def test_keywords_default_mode_and_bad_modes():
    f = kiln.compile(step, mode="reduce-overhead")
    x, y = rand(64), rand(64)
    np.testing.assert_allclose(f(x, y=y, a=2.0), step(x, y, 2.0))
    np.testing.assert_allclose(f(y=y, x=x, a=2.0), step(x, y, 2.0))
    g = kiln.compile(step)
    np.testing.assert_allclose(g(x, y, 2.0), step(x, y, 2.0))
    with pytest.raises(ValueError, match="mode must be one of"):
        kiln.compile(step, mode="fast")
    # with a signature, kiln.compile is Numba's compiler entry (kiln.compiler)
    with pytest.raises(TypeError, match="has 1 arguments but 'step' takes 3"):
        kiln.compile(step, "void(float32[:])")
    with pytest.raises(TypeError, match="mode= and max_records= are for"):
        kiln.compile(step, "(float32[:], float32[:], float32)", mode="reduce-overhead")

    @kiln.compile(mode="reduce-overhead")
    def deco(x, y):
        return step(x, y, 1.0)

    np.testing.assert_allclose(deco(x, y), step(x, y, 1.0))


def test_default_and_max_autotune_steps_call_fn_from_c():
    # StepBase (tunedepth.c) calls a default step's fn, and a max-autotune step's inside
    # the thread's tuning depth, without _call; the depth falls back when fn raises
    seen = []

    def fn(x, y=1):
        seen.append((x, y, _kiln.tuning()))
        if x == "raise":
            raise KeyError("from the step")
        return x

    def no_python(*a, **k):
        raise AssertionError("took _call")

    d = kiln.compile(fn)
    t = kiln.compile(fn, mode="max-autotune")
    d._call = t._call = no_python
    assert d(1, y=2) == 1 and t(3) == 3 and d.mode == "default" and t.mode == "max-autotune"
    assert seen == [(1, 2, False), (3, 1, True)]
    with pytest.raises(KeyError, match="from the step"):
        t("raise")
    assert not _kiln.tuning()
    assert d.__name__ == "fn" and d.__wrapped__ is fn
    r = kiln.compile(fn, mode="reduce-overhead")
    r._call = lambda *a, **k: "python"
    assert r(1) == "python"


def test_a_step_inside_a_recorded_step_is_recorded_with_it():
    inner = kiln.compile(lambda x, y: step(x, y, 2.0), mode="reduce-overhead")

    def outer(x, y):
        t = inner(x, y)
        out = np.empty_like(x)
        axpy[(x.size + 127) // 128, 128](out, 1.0, t, y)
        return out

    f = kiln.compile(outer, mode="reduce-overhead")
    for _ in range(3):
        x, y = rand(100), rand(100)
        np.testing.assert_allclose(f(x, y), step(x, y, 2.0) + y)
    assert f.records[0].launches == 4


def test_vectorize_and_fuse_inside_a_step():
    @kiln.vectorize
    def mul(a, b):
        return a * b

    @kiln.fuse
    def fused(a, b):
        return np.exp(-a * a) * np.where(b > 0.5, b, 0.1 * b)

    def s(x, y):
        return fused(mul(x, y), y)

    f = kiln.compile(s, mode="reduce-overhead")
    for _ in range(3):
        x, y = rand(777), rand(777)
        want = np.exp(-(x * y) ** 2) * np.where(y > 0.5, y, 0.1 * y)
        np.testing.assert_allclose(f(x, y), want, rtol=1e-12)
    assert f.records[0].why is None and f.records[0].launches == 2


def test_threads_replaying_one_record():
    f = kiln.compile(step, mode="reduce-overhead")
    f(rand(4096), rand(4096), 2.0)
    bad = []

    def work():
        for _ in range(30):
            x, y = rand(4096), rand(4096)
            if not np.allclose(f(x, y, 2.0), 2 * (2 * x + y) + y):
                bad.append(1)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad and len(f.records) == 1


def test_metrics_count_records_and_replays():
    f = kiln.compile(step, mode="reduce-overhead")
    before = kiln.metrics()["recorded_steps"]
    for _ in range(3):
        f(rand(64), rand(64), 1.0)
    after = kiln.metrics()["recorded_steps"]
    assert after["records"] - before["records"] == 1
    assert after["replays"] - before["replays"] == 2
    assert after["graphs"] == before["graphs"]          # the CPU makes no graph


def test_an_array_returned_twice_is_one_array_at_each_replay():
    # (out, out): one array made per replay, returned twice (hunt18 3: the second was a
    # second, unwritten array)
    def twice(x):
        out = np.empty_like(x)
        axpy[(x.size + 63) // 64, 64](out, 1.0, x, x)
        return out, out
    f = kiln.compile(twice, mode="reduce-overhead")
    for k in range(3):
        x = rand(100)
        r = f(x)
        assert r[0] is r[1]
        np.testing.assert_array_equal(r[1], 2 * x)
    assert len(f.records) == 1


def test_a_step_returning_a_reshaped_temporary_replays():
    # kiln.fuse returns its 2-D results as a reshape of a flat array it made; a view of all
    # of an array the step made is rebuilt at each replay like the array (hunt18 10: such a
    # step ran eagerly for good, with a warning)
    fz = kiln.fuse(lambda x, y: x * 2 + y)
    f = kiln.compile(lambda x, y: fz(x, y), mode="reduce-overhead")
    c0 = counts()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in range(3):
            x, y = rand(60).reshape(6, 10), rand(60).reshape(6, 10)
            r = f(x, y)
            assert r.shape == (6, 10)
            np.testing.assert_allclose(r, x * 2 + y)
    assert len(f.records) == 1 and counts()["replays"] - c0["replays"] == 2


def test_a_returned_view_of_an_argument_runs_eagerly():
    # x.reshape(...) of an argument is the argument's memory: a replay that made a new array
    # for it returned memory no kernel wrote (review17 1); two views of one temporary would
    # be two arrays at a replay (review17 2).  Both run eagerly, with one warning.
    def view_of_arg(x):
        scale[(x.size + 127) // 128, 128](x, 2.0)
        return x.reshape(2, -1)

    def two_views(x):
        out = np.empty_like(x)
        axpy[(x.size + 63) // 64, 64](out, 1.0, x, x)
        return out, out.reshape(2, -1)

    for step_, check in ((view_of_arg, lambda r, x0: np.array_equal(r.ravel(), 2 * x0)),
                         (two_views, lambda r, x0: np.array_equal(r[0], 2 * x0) and
                          np.shares_memory(r[0], r[1]))):
        f = kiln.compile(step_, mode="reduce-overhead")
        with pytest.warns(kiln.PerformanceWarning, match="view"):
            for k in range(3):
                x = rand(60)
                x0 = x.copy()
                assert check(f(x), x0)


def _replays_like_eager(step_, make, match, calls=3):
    """Calls a compiled step_ on make(k) for k < calls: every result equals step_'s own
    on a copy, and one PerformanceWarning matching match says why it ran eagerly."""
    f = kiln.compile(step_, mode="reduce-overhead")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for k in range(calls):
            args = make(k)
            want = step_(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            got = f(*args)
            np.testing.assert_array_equal(got, want)
    msgs = [str(m.message) for m in w if issubclass(m.category, kiln.PerformanceWarning)]
    assert len(msgs) == 1 and match in msgs[0], msgs
    # the warning points at the caller's line, not at kiln's
    assert [m.filename for m in w if issubclass(m.category, kiln.PerformanceWarning)] == [__file__]


def test_a_returned_array_no_launch_wrote_runs_eagerly():
    # t.copy(), t * 2: NumPy made the returned array on the host; a replay, which runs only
    # the launches, returned it unfilled (huntE 05)
    def copy_of_temp(x):
        t = np.empty_like(x)
        axpy[(x.size + 63) // 64, 64](t, 1.0, x, x)
        return t * 2

    _replays_like_eager(copy_of_temp, lambda k: (rand(50),), "none of its kiln launches used")


def test_vectorize_and_guvectorize_host_work_runs_eagerly():
    # casts to a signature's dtype, an out= of another dtype or overlapping an input: kiln
    # did them with NumPy on the host, which a replay did not repeat (huntE 07-10)
    add = kiln.vectorize(lambda a, b: a + b)
    add_f8 = kiln.vectorize(["float64(float64, float64)"])(lambda a, b: a + b)

    @kiln.guvectorize(["void(float64[:], float64[:])"], "(n)->()")
    def rowsum(a, out):
        s = 0.0
        for v in a:
            s += v
        out[0] = s

    def overlap(x):
        add(x[1:], 1.0, out=x[:-1])
        return x

    def cast_in(x):
        return add_f8(x, 1.0)

    def other_out(x, o):
        add(x, x, out=o)
        return o

    def gu_cast(x):
        return rowsum(x)

    def gu_out(x, o):
        rowsum(x, o)
        return o

    _replays_like_eager(overlap, lambda k: (np.arange(6.0) * (k + 1),), "through a temporary")
    _replays_like_eager(cast_in, lambda k: (np.arange(4, dtype=np.float32) + 10 * k,),
                        "converts an input")
    _replays_like_eager(other_out, lambda k: (np.arange(4.0) + k, np.zeros(4, np.float32)),
                        "through a temporary")
    _replays_like_eager(gu_cast, lambda k: (np.arange(8, dtype=np.float32).reshape(2, 4) + k,),
                        "converts input 1")
    _replays_like_eager(gu_out, lambda k: (np.arange(8.0).reshape(2, 4) + k,
                                           np.zeros(2, np.float32)), "output 1 through")
