"""kiln.vectorize and kiln.reduce on the CPU target."""
import cmath
import math

import numpy as np
import pytest

import kiln
from conftest import random_array


@kiln.vectorize
def rel_diff(a, b):
    return (a - b) / (abs(a) + abs(b) + 1.0)


def test_vectorize_same_shape(rng):
    a, b = rng.random(1000), rng.random(1000)
    np.testing.assert_allclose(rel_diff(a, b), (a - b) / (np.abs(a) + np.abs(b) + 1))


def test_vectorize_broadcasting_and_layouts(rng):
    a = rng.random((7, 1, 5))
    b = rng.random((4, 1))[::-1]
    out = rel_diff(a, b)
    assert out.shape == (7, 4, 5)
    np.testing.assert_allclose(out, (a - b) / (np.abs(a) + np.abs(b) + 1))
    f = np.asfortranarray(rng.random((6, 9)))
    np.testing.assert_allclose(rel_diff(f, 0.5), (f - 0.5) / (np.abs(f) + 0.5 + 1))


def test_vectorize_python_scalars_are_weak(rng):
    a = rng.random(100).astype(np.float32)
    out = rel_diff(a, 2.0)
    assert out.dtype == np.float32        # NEP 50: the Python float takes float32
    out = rel_diff(a.astype(np.int32), 2.0)
    assert out.dtype == np.float64


def test_vectorize_scalars_only():
    r = rel_diff(3.0, 1.0)
    assert isinstance(r, np.floating)
    assert abs(r - 2.0 / 5.0) < 1e-15
    # 0-d arrays alone give a NumPy scalar too, as a NumPy ufunc's call (huntE 13)
    r = rel_diff(np.array(3.0), np.float64(1.0))
    assert type(r) is np.float64 and r == rel_diff(3.0, 1.0)
    # an int past 64 bits with no array beside it (huntE 11: AttributeError)
    sq = kiln.vectorize(lambda a: a * a)
    with pytest.raises(TypeError, match=r"the Python int 1180591620717411303424 does not fit "
                                        r"64 bits"):
        sq(2**70)


def test_vectorize_out(rng):
    a, b = rng.random(50), rng.random(50)
    out = np.empty(50)
    r = rel_diff(a, b, out=out)
    assert r is out
    np.testing.assert_allclose(out, (a - b) / (np.abs(a) + np.abs(b) + 1))
    with pytest.raises(ValueError, match="out= has shape"):
        rel_diff(a, b, out=np.empty(3))



@kiln.vectorize(["float32(float32, float32)", "int64(int64, int64)"])
def addmul(a, b):
    return a * 2 + b


def test_vectorize_signatures(rng):
    a = rng.random(10).astype(np.float32)
    r = addmul(a, a)
    assert r.dtype == np.float32
    np.testing.assert_allclose(r, a * 3, rtol=1e-6)
    i = np.arange(10)
    assert addmul(i, i).dtype == np.int64
    with pytest.raises(TypeError, match="was compiled for"):
        addmul(np.zeros(3, np.complex64), np.zeros(3, np.complex64))


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint64, np.float32, np.float64])
def test_vectorize_dtypes(rng, dtype):
    a = random_array(rng, 300, dtype)
    b = random_array(rng, 300, dtype)
    np.testing.assert_array_equal(twice_plus(a, b), a * 2 + b)


@kiln.vectorize
def twice_plus(a, b):
    return a * 2 + b


@kiln.reduce
def add(a, b):
    return a + b


@kiln.reduce
def biggest(a, b):
    return max(a, b)


def test_reduce_sum(rng):
    a = rng.random(100003)
    np.testing.assert_allclose(add(a), a.sum(), rtol=1e-12)
    i = rng.integers(-1000, 1000, 5000)
    assert add(i) == i.sum()


def test_reduce_max_init_and_multid(rng):
    a = rng.random((30, 40))
    assert biggest(a) == a.max()
    assert biggest(a, init=5.0) == 5.0
    assert add(a, init=1.0) == pytest.approx(a.sum() + 1.0)
    assert add(np.arange(10), size=4) == 6


def test_reduce_empty():
    assert add(np.zeros(0), init=7.0) == 7.0
    with pytest.raises(ValueError, match="empty array"):
        add(np.zeros(0))
    # init as the type a call with elements returns, res= written (huntE 15)
    for arr, init in ((np.zeros(0), 7), (np.arange(3.0)[:0], 7), (np.zeros(0, np.int64), 0.5)):
        got, want = add(arr, init=init), add(np.zeros(1, arr.dtype), init=init)
        assert type(got) is type(want) and got == want, (got, want)
    res = np.zeros(1)
    assert add(np.zeros(0), init=2.5, res=res) is None and res[0] == 2.5
    for bad in (np.zeros(()), np.zeros(0), [0.0]):
        with pytest.raises(ValueError, match="res= is an array of at least one element"):
            add(np.ones(3), res=bad)

    class Iface:  # an array seen only through its interface
        def __init__(self, a):
            self.a = a
            self.__array_interface__ = a.__array_interface__
    with pytest.raises(ValueError, match=r"not Iface of shape \(\)"):
        add(np.ones(3), res=Iface(np.zeros(())))
    res = Iface(np.zeros(2))
    assert add(np.ones(3), res=res) is None and res.a[0] == 3


def test_reduce_size_takes_numpy_integers():
    # arr.shape arithmetic gives NumPy integers; Numba's reduce takes them (huntE 12)
    assert add(np.arange(10), size=np.int64(4)) == 6
    assert add(np.arange(10), size=np.uint8(0), init=1) == 1
    for bad in (-1, 2.0, True, "3"):
        with pytest.raises(ValueError, match="size must be a non-negative int"):
            add(np.arange(10), size=bad)


def test_numbas_Reduce_folds_init_0_by_default(rng):
    # numba.cuda.Reduce's __call__ has init=0: folded into every result, and the result of
    # an empty array; kiln.reduce's own default folds nothing
    s = kiln.Reduce(lambda a, b: a + b)
    p = kiln.Reduce(lambda a, b: a * b)
    a = rng.random(100) + 1
    assert s(np.zeros(0)) == 0.0
    assert s(a) == pytest.approx(a.sum())
    assert s(a, init=3) == pytest.approx(a.sum() + 3)
    assert p(a) == 0.0                       # Numba: init=0 is folded into a product too
    assert p(a, init=1) == pytest.approx(a.prod())
    with pytest.raises(ValueError, match="empty array"):
        kiln.reduce(lambda a, b: a + b)(np.zeros(0))


def test_reduce_into_res_returns_none(rng):
    a = rng.random(1000)
    res = np.zeros(1)
    assert add(a, res=res) is None  # numba.cuda.reduce's contract
    np.testing.assert_allclose(res[0], a.sum(), rtol=1e-12)


def test_reduce_float32_stays_float32(rng):
    a = rng.random(1000).astype(np.float32)
    r = add(a)
    assert r.dtype == np.float32
    np.testing.assert_allclose(r, a.astype(np.float64).sum(), rtol=1e-4)


@kiln.vectorize
def plus_one(x):
    return x + 1.0


@kiln.vectorize
def two_x_plus(x, y):
    return 2.0 * x + y


@pytest.mark.parametrize("n", [1000, 100000])
def test_out_overlapping_an_input_matches_numpy(rng, n):
    # NumPy computes as if every input were read before out is written (it copies an
    # input that overlaps out other than element for element); so must kiln
    views = {
        "shifted up": (lambda a: (a[:-1],), lambda a: a[1:]),
        "shifted down": (lambda a: (a[1:],), lambda a: a[:-1]),
        "reversed": (lambda a: (a[::-1],), lambda a: a),
        "strided": (lambda a: (a[: n // 2],), lambda a: a[::2]),
    }
    for name, (ins, out) in views.items():
        a = rng.random(n)
        b = a.copy()
        plus_one(*ins(a), out=out(a))
        np.add(*ins(b), 1.0, out=out(b))
        np.testing.assert_array_equal(a, b, err_msg=name)
    a, c = rng.random(n), rng.random(n)
    b = a.copy()
    two_x_plus(a[1:], a[:-1], out=a[:-1])
    np.add(2.0 * b[1:], b[:-1], out=b[:-1])
    np.testing.assert_array_equal(a, b)
    a = rng.random(n)
    b = a.copy()
    r = two_x_plus(a, c, out=a)  # the same elements: computed in place, as NumPy does
    assert r is a
    np.testing.assert_array_equal(a, 2.0 * b + c)
    m = rng.random((60, 60))
    m2 = m.copy()
    plus_one(m.T, out=m)  # a transpose of itself
    np.add(m2.T, 1.0, out=m2)
    np.testing.assert_array_equal(m, m2)


def test_f_ordered_inputs_give_an_f_ordered_result_as_numpy():
    f = kiln.vectorize(lambda a, b: a * 2 + b)
    x = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    y = np.asfortranarray(np.ones((3, 4)))
    r = f(x, y)
    assert r.flags.f_contiguous and not r.flags.c_contiguous
    np.testing.assert_array_equal(r, x * 2 + y)
    r = f(x, np.ones((3, 4)))           # mixed layouts: C, as NumPy's ufuncs here
    assert r.flags.c_contiguous
    np.testing.assert_array_equal(r, x * 2 + 1)


@kiln.vectorize(["complex128(complex128, float64)"], target="cpu")
def _crot(z, th):
    return z * cmath.exp(1j * th)


@kiln.vectorize(["float64(float64, int64)"], target="cpu")
def _scale_pow(x, n):
    return x * 2.0 ** n


def test_python_scalars_of_another_kind_take_the_signature_as_numba():
    # NEP 50 would type 0.5 next to a complex128 array as complex128 and 3 next to a float64
    # one as float64, which no signature takes; Numba's resolution takes them as they are
    # (hunt8.md 3).  A NumPy float64 is no Python scalar: it is matched by its dtype.
    z = np.array([1 + 1j, 2 - 1j])
    want = z * np.exp(0.5j)
    for th in (0.5, np.float64(0.5), np.float32(0.5)):
        np.testing.assert_allclose(_crot(z, th), want)
    x = np.array([1.0, 3.0])
    np.testing.assert_allclose(_scale_pow(x, 3), [8.0, 24.0])
    np.testing.assert_allclose(_scale_pow(x, np.int64(3)), [8.0, 24.0])
    with pytest.raises(TypeError, match="cannot take"):
        _scale_pow(x, 2**70)  # no int64 holds it


def test_vectorize_errors_point_at_the_function_not_kilns_loop():
    # hunt7.md 2.1: both were reported in kiln's generated wrapper (<kiln __kiln_vectorize_v>)
    def noreturn(x):
        y = x  # noqa: F841

    with pytest.raises(kiln.CompileError, match=r"test_ufunc.py:\d+: error: 'noreturn' returns "
                                                r"nothing; a vectorized or reduced function"):
        kiln.vectorize(["float32(float32)"], target="cpu")(noreturn)

    def two(x, y):
        return x + y

    with pytest.raises(TypeError, match=r"vectorize signature 'float32\(float32\)' has 1 "
                                        r"argument but 'two' takes 2"):
        kiln.vectorize(["float32(float32)"], target="cpu")(two)


def test_a_python_int_too_large_for_the_arrays_is_a_type_error():
    # hunt9.md 8: NumPy's OverflowError ("too large to convert to C long") leaked
    @kiln.vectorize(["int64(int64, int64)"], target="cpu")
    def add(x, y):
        return x + y

    with pytest.raises(TypeError, match=r"the Python int 9223372036854775808 is too large for "
                                        r"the arrays of this call \(int64\)"):
        add(np.arange(3), 2**63)


def test_signatures_without_a_return_type_infer_it():
    """'(int16, int16)': Numba infers the return type from the function (numba-examples'
    zero_suppression, hunt25 3); kiln does the same, per signature."""
    @kiln.vectorize(["(int16, int16)", "(float32, float32)"])
    def zs(v, t):
        if abs(v) < t:
            return 0
        return v

    a = np.array([1, -20, 30, 5], np.int16)
    r = zs(a, np.int16(10))
    assert r.tolist() == [0, -20, 30, 0] and r.dtype == np.int64  # 0 and int16: int64, as Numba
    r = zs(a.astype(np.float32), np.float32(10))
    assert r.tolist() == [0, -20, 30, 0] and r.dtype == np.float32
    with pytest.raises(TypeError, match="has 1 argument but 'zs' takes 2"):
        kiln.vectorize(["(int16)"])(zs.py_func)


def test_arrays_of_exact_types_take_their_loop_with_python_scalars_converted():
    """Numba-CUDA's GPU ufuncs match arrays exactly and convert Python scalars to the
    signature (the gtc2017 course's zero_suppress(int16 data, 15.0), hunt25 4): the int16
    loop, not NumPy's float64 one; a scalar that would be cut (15.5) is refused."""
    @kiln.vectorize(["int16(int16, int16)", "float32(float32, float32)",
                     "float64(float64, float64)"])
    def zs(v, t):
        if abs(v) < t:
            return 0
        return v

    a = np.array([1, -20, 30, 5], np.int16)
    r = zs(a, 15.0)
    assert r.dtype == np.int16 and r.tolist() == [0, -20, 30, 0]
    r = zs(a.astype(np.float32), 15)
    assert r.dtype == np.float32 and r.tolist() == [0, -20, 30, 0]
    one = kiln.vectorize(["int16(int16, int16)"])(zs.py_func)
    assert one(a, 15.0).dtype == np.int16
    with pytest.raises(TypeError, match="cannot take"):
        one(a, 15.5)


def test_repeated_calls_on_device_arrays_launch_from_c_and_match_numpy(monkeypatch, rng):
    # KILN_TARGET=cpu: kiln arrays are host-backed, so the memoised launch of UfuncBase's
    # __call__ (ufunc.c) runs for real; what it does not take goes to _call (Python)
    monkeypatch.setenv("KILN_TARGET", "cpu")

    @kiln.vectorize
    def f(x, y):
        return x * y - 1.5 * x

    took = []
    python_path = f._call
    f._call = lambda *a, **k: took.append(1) or python_path(*a, **k)

    def check(want_python, *args, **kw):
        n = len(took)
        r = f(*args, **kw)
        assert len(took) - n == want_python, (want_python, len(took) - n)
        h = [x.copy_to_host() if isinstance(x, kiln.DeviceArray) else x for x in args]
        want = h[0] * h[1] - 1.5 * h[0]
        got = r.copy_to_host()
        assert isinstance(r, kiln.DeviceArray) and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
        return r

    for shape, dtype in (((1000,), np.float32), ((20, 50), np.float64), ((3, 4, 5), np.int32)):
        a, b, c = (kiln.to_device((rng.random(shape) * 100).astype(dtype)) for _ in range(3))
        check(1, a, b)                       # first: typed and memoised in Python
        r = check(0, c, b)                   # then C, with new buffers and a new result
        assert r.shape == shape and r.is_c_contiguous()
        o = kiln.device_array(shape, r.dtype)
        check(1, a, b, out=o)                # out= is another key: Python once
        r = check(0, b, c, out=o)            # then C, into out
        assert r is o
        if len(shape) > 1:
            check(1, kiln.to_device(np.asfortranarray(a.copy_to_host())), b)  # F: Python
        check(1, a, b, stream=kiln.stream())  # a stream: Python
    with pytest.raises(TypeError, match="'f' got an unexpected keyword argument 'outt'"):
        f(a, b, outt=o)
    with pytest.raises(TypeError, match="'f' got an unexpected keyword argument 'where'"):
        f(np.ones(3), np.ones(3), where=True)
    # broadcasting and scalars are never the memoised launch
    a = kiln.to_device(rng.random((4, 5)))
    check(1, a, kiln.to_device(rng.random(5)))
    check(1, a, 2.0)


def test_repeated_calls_on_numpy_arrays_launch_from_c_and_match_numpy(rng):
    # NumPy arrays of one shape in C order: the second call of a key launches from
    # UfuncBase's C (ufunc.c, kind b"N"); anything that needs the Python path's care
    # (casts, broadcasting, an out= overlapping an input, subclasses, F order) goes there
    @kiln.vectorize
    def f(x, y):
        return x * y - 1.5 * x

    @kiln.vectorize(["float32(float32, float32)"])
    def g(x, y):
        return x * y - 1.5 * x

    took = []
    for u in (f, g):
        python_path = u._call
        u._call = (lambda p: lambda *a, **k: took.append(1) or p(*a, **k))(python_path)

    def check(u, want_python, x, y, **kw):
        want = (x * y - 1.5 * x) if u is f else (   # before the call: out= may be x
            x.astype(np.float32) * y.astype(np.float32) - np.float32(1.5) * x.astype(np.float32))
        n = len(took)
        r = u(x, y, **kw)
        assert len(took) - n == want_python, (want_python, len(took) - n)
        assert type(r) is np.ndarray and r.shape == np.broadcast_shapes(x.shape, y.shape)
        np.testing.assert_allclose(r, want, rtol=1e-6)
        return r

    for shape in ((1000,), (20, 50), (3, 4, 5)):
        a, b, c = (rng.random(shape) * 10 for _ in range(3))
        check(f, 1, a, b)
        r = check(f, 0, c, b)
        assert r.flags.c_contiguous and r.dtype == np.float64
        o = np.empty(shape)
        check(f, 1, a, b, out=o)
        assert check(f, 0, b, c, out=o) is o
        assert check(f, 0, a, b, out=a) is a          # element for element: C's
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        check(g, 1, a32, b32)
        check(g, 0, b32, a32)
        check(g, 1, a, b)                             # cast to the signature: Python's
        check(g, 1, a, b)
        if len(shape) > 1:
            check(f, 1, np.asfortranarray(a), np.asfortranarray(b))
    big = rng.random(21)
    x, o = big[:20], big[1:]                          # out one element on from x
    for _ in range(2):                                # overlapping: Python's, each time
        big[:] = np.linspace(1, 2, 21)
        want = big[:20] * 1.0 - 1.5 * big[:20]        # as NumPy: the inputs read first
        n = len(took)
        f(x, np.ones(20), out=o)
        assert len(took) == n + 1
        np.testing.assert_allclose(o, want, rtol=1e-12)
    check(f, 1, rng.random((4, 5)), rng.random(5))   # broadcasting

    class Sub(np.ndarray):
        pass

    s = rng.random(8).view(Sub)
    n = len(took)
    f(s, s)
    f(s, s)
    assert len(took) == n + 2


def test_cpu_reduce_keeps_the_array_order_at_every_size(rng):
    # one pass below _REDUCE_SERIAL_BELOW, chunks above; each part folded as four quarters
    # side by side, then in order: a function that is associative but not commutative
    # (the first or the last of two) still gives the array's first or last element
    from kiln import _ufunc

    @kiln.reduce
    def last(p, q):
        return q

    @kiln.reduce
    def first(p, q):
        return p

    @kiln.reduce
    def total(p, q):
        return p + q

    big = _ufunc._REDUCE_SERIAL_BELOW
    for n in (1, 2, 3, 4, 15, 16, 17, 31, 100, big - 1, big, big + 13, 3 * big + 7):
        a = rng.random(n)
        assert last(a) == a[-1] and first(a) == a[0], n
        np.testing.assert_allclose(total(a), a.sum(), rtol=1e-12)
        assert total(a, init=2.0) == pytest.approx(a.sum() + 2.0, rel=1e-12)
