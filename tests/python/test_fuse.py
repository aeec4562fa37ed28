"""kiln.fuse against NumPy: expressions x dtypes x layouts x broadcasting, errors with the
user's line and a caret, and the cache across processes.

Each fused function here is ordinary NumPy code, so the reference is the function itself
called on the same inputs.  The matrix runs on tier 0 (KILN_TIERS=tcc: libtcc compiles
each specialisation in about 2 ms); test_optimised_build_matches_numpy checks the cc
build.  With KILN_CHECK_CUDA=1 (make test) every fused kernel's CUDA version is compiled
by NVRTC for sm_80 and sm_90 as well.
"""

import json
import math
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln
from conftest import ALL_DTYPES, random_array, layouts

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(autouse=True)
def tier0(monkeypatch):
    monkeypatch.setenv("KILN_TIERS", "tcc")


# ---- the fused functions ---------------------------------------------------------------

@kiln.fuse
def arith(a, b):
    return a * b + a


@kiln.fuse
def where(a, b):
    return np.where(a > b, a, b * 2)


@kiln.fuse
def bits(a, b):
    return (a & b) ^ ~a | (b << 1)


@kiln.fuse
def minmax(a, b):
    t = np.maximum(a, b)
    return t - np.minimum(a, 1)


@kiln.fuse
def ufuncs(a, b):
    return np.sqrt(np.abs(a)) + np.exp(b * 0.01) - np.tanh(a) * np.floor(b)


@kiln.fuse
def divide(a, b):
    return a / (b + 1.5), (a // 3) % 5 + b


@kiln.fuse
def cast(a, b):
    x = a.astype(np.float32) * 2.5
    x += b
    return x


@kiln.fuse
def compare(a, b):
    return (a >= b) & (a != 0) | ~(b < 3)


@kiln.fuse
def row_sum(a, b):
    return np.sum(a * b, axis=-1)


@kiln.fuse
def row_max(a, b):
    return np.max(a - b, axis=-1, keepdims=True)


@kiln.fuse
def row_stats(a, b):
    return a.sum(axis=-1), np.mean(b, axis=-1), a.min(-1)


@kiln.fuse
def total(a, b):
    return np.sum(a) + np.max(b), np.mean(a)


@kiln.fuse
def total_keep(a, b):
    return np.min(a * b, keepdims=True)


@kiln.fuse
def issue(x, y):
    return np.sum(np.exp(-x * x / 2) * np.where(y > 0, y, 0.1 * y), axis=-1)


@kiln.fuse
def chain6(x, y):
    return np.sqrt(np.abs(x * y + 1.0)) * np.exp(-x) - np.maximum(y, 0.5) / 3.0


NO_BOOL = {"minmax", "ufuncs", "divide", "row_max", "total"}  # NumPy refuses bool - and floor
INT_ONLY = {"bits"}
SMALL_INT_FLOAT16 = {"ufuncs"}  # int8/uint8 into np.exp is float16 in NumPy


def _dtypes_for(name):
    out = []
    for dt in ALL_DTYPES:
        dt = np.dtype(dt)
        if name in NO_BOOL and dt.kind == "b":
            continue
        if name in INT_ONLY and dt.kind == "f":
            continue
        if name in SMALL_INT_FLOAT16 and dt.itemsize == 1:
            continue
        out.append(dt)
    return out


ALL_FUNCS = [arith, where, bits, minmax, ufuncs, divide, cast, compare, row_sum, row_max,
             row_stats, total, total_keep]


def _inputs(rng, dt, shape):
    a = random_array(rng, shape, dt)
    if dt.kind == "f":
        a = (a / 40).astype(dt)  # keep exp and products finite
    elif dt.kind in "iu":
        a = (a % 7).astype(dt)  # keep products and shifts inside every type
    return a


def _same(got, want, name=""):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, name)
        return
    assert type(got) is type(want), (name, type(got), type(want))
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert np.shape(got) == np.shape(want), (name, np.shape(got), np.shape(want))
    if want.dtype.kind == "f":
        rtol = 2e-5 if want.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 10, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def _reference(fn, *args):
    with np.errstate(all="ignore"):
        return fn.py_func(*args)


def _check(fn, *args, name=""):
    """fn(*args) is NumPy's result; where NumPy raises, kiln raises too (a ValueError or a
    CompileError); where NumPy's outputs have different shapes, kiln says it writes one."""
    try:
        want = _reference(fn, *args)
    except (ValueError, TypeError):
        with pytest.raises((ValueError, TypeError, kiln.CompileError)):
            fn(*args)
        return
    if isinstance(want, tuple) and len({np.shape(w) for w in want}) > 1:
        with pytest.raises((ValueError, kiln.CompileError), match="one shape"):
            fn(*args)
        return
    _same(fn(*args), want, name)


@pytest.mark.parametrize("fn", ALL_FUNCS, ids=lambda f: f.__name__)
def test_dtypes_match_numpy(fn, rng):
    """Every dtype kiln has, C arrays of one shape."""
    for dt in _dtypes_for(fn.__name__):
        a, b = _inputs(rng, dt, (5, 37)), _inputs(rng, dt, (5, 37))
        _check(fn, a, b, name=f"{fn.__name__} {dt}")


@pytest.mark.parametrize("fn", ALL_FUNCS, ids=lambda f: f.__name__)
def test_layouts_match_numpy(fn, rng):
    """C, F, strided and negatively strided inputs, mixed."""
    for dt in (np.dtype(np.float32), np.dtype(np.int32)):
        if dt.kind == "f" and fn.__name__ in INT_ONLY:
            dt = np.dtype(np.int64)
        a, b = _inputs(rng, dt, (6, 33)), _inputs(rng, dt, (6, 33))
        la, lb = layouts(a), layouts(b)
        for ka, kb in (("C", "F"), ("F", "F"), ("strided", "C"), ("negative", "strided"),
                       ("negative", "negative")):
            x, y = la[ka], lb[kb]
            _check(fn, x, y, name=f"{fn.__name__} {dt} {ka}/{kb}")


@pytest.mark.parametrize("fn", ALL_FUNCS, ids=lambda f: f.__name__)
def test_broadcasting_matches_numpy(fn, rng):
    """Rows, columns, leading dimensions, 0-d arrays, NumPy and Python scalars."""
    dt = np.dtype(np.int16) if fn.__name__ in INT_ONLY else np.dtype(np.float64)
    a = _inputs(rng, dt, (4, 7))
    cases = [
        (a, _inputs(rng, dt, (7,))),
        (a, _inputs(rng, dt, (4, 1))),
        (_inputs(rng, dt, (1, 7)), a),
        (_inputs(rng, dt, (3, 4, 7)), _inputs(rng, dt, (4, 1))),
        (a, np.array(_inputs(rng, dt, ()))),
        (a, dt.type(2)),
        (a, 3),
    ]
    if dt.kind == "f":
        cases.append((a, 1.25))
    for x, y in cases:
        _check(fn, x, y, name=f"{fn.__name__} {np.shape(x)} {np.shape(y)!r}")


def test_weak_scalars_keep_the_array_dtype(rng):
    """NEP 50: a Python float with float32 is float32, with int8 float64; a NumPy scalar is
    strong."""
    x8 = _inputs(rng, np.dtype(np.int8), (9,))
    x32 = _inputs(rng, np.dtype(np.float32), (9,))
    for x, y in ((x32, 0.5), (x8, 0.5), (x8, 3), (x32, np.float64(2)), (x8, np.int16(3)),
                 (x8, True)):
        _same(arith(x, y), _reference(arith, x, y), f"{x.dtype} {y!r}")


def test_python_ints_outside_the_array_type_compare_exactly():
    """NumPy 2 compares an integer array with any Python int exactly (u8 > -1 is all True,
    i8 == 300 all False), as a literal, on either side, or as an argument (huntE 02)."""
    mirror = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
    for dt in (np.int8, np.uint8, np.int16, np.uint32, np.int32, np.int64, np.uint64):
        info = np.iinfo(dt)
        x = np.array([info.min, 0, 1, info.max], dt)
        for c in (-1, 300, 2**40, -(2**40), 2**63, int(info.max), int(info.min)):
            for op in mirror:
                want = eval(f"x {op} ({c})")
                for text in (f"lambda x: x {op} ({c})", f"lambda x: ({c}) {mirror[op]} x"):
                    f = kiln.fuse(eval(text))
                    np.testing.assert_array_equal(f(x), want, err_msg=f"{dt.__name__}: {text}")
                # an argument: uint64 meets a negative one as uint64 (docs/modes.md)
                if -(2**63) <= c < 2**63 and not (dt is np.uint64 and c < 0):
                    g = kiln.fuse(eval(f"lambda x, y: x {op} y"))
                    np.testing.assert_array_equal(g(x, c), want,
                                                  err_msg=f"{dt.__name__}: x {op} y={c}")


def test_astype_takes_numpys_dtype_spellings():
    """np.intc, np.longlong, 'f4', '<i8', np.dtype('float32'): NumPy's names for the same
    dtypes (huntE 14); an unknown one is a CompileError naming it."""
    x = np.array([1.5, -2.5, 3.0])
    for spell in ("np.intc", "np.uintc", "np.longlong", "np.ulonglong", "np.short", "np.ubyte",
                  "np.int_", "np.long", "np.double", "np.single", "np.csingle", "np.bool",
                  "'f4'", "'<f8'", "'i1'", "'u2'", "'int'", "'float'", "'d'", "'?'", "'c16'",
                  "np.dtype('float32')", "np.dtype('l')"):
        f = kiln.fuse(eval(f"lambda x: x.astype({spell})", {"np": np}))
        want = x.astype(eval(spell, {"np": np}))
        got = f(x)
        assert got.dtype == want.dtype and np.array_equal(got, want), spell
    with pytest.raises(kiln.CompileError, match="does not know dtype '>f4'"):
        kiln.fuse(lambda x: x.astype(">f4"))(x)


def test_a_kernel_error_names_the_fused_functions_line():
    """x ** y with a negative integer y is NumPy's ValueError, located at the fused
    function's return in the user's file, not in the generated kernel (huntE 06)."""
    def power(x, y):
        return x ** y

    f = kiln.fuse(power)
    line = power.__code__.co_firstlineno + 1
    with pytest.raises(ValueError, match=rf"^{re.escape(__file__)}:{line}: in kiln.fuse function "
                                         r"'power': integers to negative integer powers"):
        f(np.array([2, 3]), np.array([1, -1]))


def test_tuples_of_axes(rng):
    """axis=(-1,) is the last axis and a tuple naming every axis is axis=None, as NumPy's
    (huntE: 'needs the axis as a literal'); other tuples are a CompileError saying so."""
    x = rng.standard_normal((3, 4, 5))
    for f in (lambda x: x.sum(axis=(-1,)), lambda x: np.max(x, axis=(2,), keepdims=True),
              lambda x: np.sum(x, axis=(0, 1, 2)), lambda x: x.min(axis=(2, 0, -2)),
              lambda x: np.mean(x, axis=(1, 2, 0), keepdims=True)):
        _same(kiln.fuse(f)(x), f(x))
    for bad in (lambda x: x.sum(axis=(0, 0, 1)), lambda x: x.sum(axis=(0, 1)),
                lambda x: x.sum(axis=())):
        with pytest.raises(kiln.CompileError, match="a tuple of axes"):
            kiln.fuse(bad)(x)


def test_zero_d_and_mixed_dtypes(rng):
    """0-d inputs give NumPy scalars; mixed dtypes promote as NumPy does."""
    a = np.array(np.float32(1.5))
    _same(arith(a, a), _reference(arith, a, a))
    _same(total(a, a), _reference(total, a, a))
    for da, db in ((np.int8, np.uint8), (np.int32, np.float32), (np.uint64, np.int64),
                   (np.bool_, np.int8), (np.uint16, np.float64)):
        x, y = _inputs(rng, np.dtype(da), (3, 5)), _inputs(rng, np.dtype(db), (3, 5))
        for fn in (arith, where, row_sum, total):
            _check(fn, x, y, name=f"{fn.__name__} {da} {db}")


def test_more_than_three_dimensions(rng):
    x, y = _inputs(rng, np.dtype(np.float64), (2, 3, 2, 4, 5)), _inputs(rng, np.dtype(np.float64), (4, 5))
    for fn in (arith, row_sum, total_keep):
        _check(fn, x, y, name=fn.__name__)
    xf = np.asfortranarray(x)
    _same(arith(xf, y), _reference(arith, xf, y))


@kiln.fuse
def last_axis_by_number(a):
    return np.max(a, axis=1) + np.sum(a, 1)


def test_the_last_axis_by_its_number(rng):
    _check(last_axis_by_number, _inputs(rng, np.dtype(np.int32), (5, 6)))


def test_empty_arrays():
    e = np.zeros((3, 0), np.float32)
    _same(arith(e, e), _reference(arith, e, e))
    _same(row_sum(e, e), _reference(row_sum, e, e))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        row_max(e, e)


def test_issue_expressions(rng):
    x = rng.standard_normal((64, 300)).astype(np.float32)
    y = rng.standard_normal((64, 300)).astype(np.float32)
    got = issue(x, y)
    want = _reference(issue, x, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    _same(chain6(x, y), _reference(chain6, x, y))


@kiln.fuse
def spelled_with_math(x):
    return math.exp(x) + math.sqrt(math.fabs(x)) + math.floor(x)


def test_math_spellings(rng):
    x = _inputs(rng, np.dtype(np.float32), (4, 6))
    want = np.exp(x) + np.sqrt(np.fabs(x)) + np.floor(x)
    _same(spelled_with_math(x), want)


def test_optimised_build_matches_numpy(rng, monkeypatch):
    """The cc -O3 build (lane mode, libmvec) of the issue's expression, not tier 0."""
    monkeypatch.setenv("KILN_TIERS", "0")

    @kiln.fuse
    def opt(x, y):
        return np.sum(np.exp(-x * x / 2) * np.where(y > 0, y, 0.1 * y), axis=-1), np.max(x * y, -1)

    x = rng.standard_normal((33, 130)).astype(np.float32)
    y = rng.standard_normal((33, 130)).astype(np.float32)
    got, want = opt(x, y), opt.py_func(x, y)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(got[1], want[1])
    assert got[1].dtype == want[1].dtype
    assert all(e.tier == 1 for s in opt._specs.values() for e in _entries(s.kernel))


def _entries(disp):
    return [disp._entry_for(sig) for sig in disp.signatures]


def test_shape_mismatch_is_numpys_value_error():
    with pytest.raises(ValueError, match="shape mismatch|could not be broadcast|cannot be broadcast"):
        arith(np.ones((3, 4)), np.ones(5))


def test_reductions_of_different_shapes_get_a_loop_each(rng):
    """np.sum(a) + np.max(b) with a and b of different shapes: a loop per set of arrays
    reduced, in one kernel."""
    a, b = _inputs(rng, np.dtype(np.float64), (4, 7)), _inputs(rng, np.dtype(np.float64), (4, 1))
    _check(total, a, b)
    _check(row_stats, a, b)
    _check(row_stats, a, b[:, 0])
    _check(row_sum, _inputs(rng, np.dtype(np.float64), (3, 4, 7)), b)


def test_outputs_of_different_shapes_are_a_value_error():
    @kiln.fuse
    def two(a, b):
        return a + 1, b + 1

    with pytest.raises(ValueError, match="one kernel"):
        two(np.ones((3, 1)), np.ones((1, 4)))
    _same(two(np.ones((3, 4)), np.ones((3, 4))), two.py_func(np.ones((3, 4)), np.ones((3, 4))))


# ---- what cannot be fused: errors at the user's line ------------------------------------

def _error_of(fn, *args):
    with pytest.raises(kiln.CompileError) as e:
        fn(*args)
    return str(e.value)


def _line_of(fn, text):
    lines, first = __import__("inspect").getsourcelines(fn.py_func)
    for i, l in enumerate(lines):
        if text in l:
            return first + i, l.rstrip("\n")
    raise AssertionError(text)


@kiln.fuse
def bad_loop(x):
    for i in range(3):
        x = x + i
    return x


@kiln.fuse
def bad_call(x):
    return np.cumsum(x) + 1


@kiln.fuse
def bad_axis(x):
    return np.sum(x, axis=0)


@kiln.fuse
def bad_index(x):
    return x[1:] * 2


@kiln.fuse
def bad_bool(x):
    return x - x


@kiln.fuse
def bad_float16(x):
    return np.exp(x)


@kiln.fuse
def bad_mix(x):
    return x - np.max(x, axis=-1, keepdims=True)


@kiln.fuse
def bad_truth(x):
    return x if x > 0 else -x


@kiln.fuse
def bad_nested(x):
    return np.sum(np.sum(x, axis=-1))


@kiln.fuse
def bad_shapes(x):
    return x + 1, np.sum(x)


@kiln.fuse
def bad_zero_div(x):
    return x + 3 / 0


@kiln.fuse
def bad_zero_pow(x):
    return x + 0.0 ** -1


@kiln.fuse
def bad_invert(x):
    return x + ~(2 / 3)


@kiln.fuse
def bad_np_int(x):
    return x + np.int8(300)


@kiln.fuse
def bad_negative(x):
    return -1 * x


@kiln.fuse
def bad_complex(x, zc):
    return x * zc


@kiln.fuse
def bad_scalar_method(x):
    return (2).astype(np.int16) + x


@kiln.fuse
def bad_unused_power(x):
    t = x ** -1
    return x + 1


@pytest.mark.parametrize("fn,args,text,message", [
    (bad_loop, (np.ones(3),), "for i in range(3):", "cannot fuse a Python loop"),
    # hunt18 11, 12: accepted although Python or NumPy raise
    (bad_scalar_method, (np.ones(3),), "astype", "'int' object has no attribute 'astype'"),
    # hunt18 13: the complex argument's error had no file, line or caret
    (bad_complex, (np.ones(3), 1j), "zc):", "'zc' is complex128: kiln.fuse does not fuse complex"),
    (bad_unused_power, (np.ones(3, np.int64),), "x ** -1", "negative integer powers"),
    # Python's and NumPy's errors of Python numbers, at the user's line (hunt18 5: inf, or
    # a line of the generated kernel)
    (bad_zero_div, (np.ones(3),), "3 / 0", "division by zero"),
    (bad_zero_pow, (np.ones(3),), "0.0 ** -1", "negative power"),
    (bad_invert, (np.ones(3),), "~(2 / 3)", "unary ~"),
    (bad_np_int, (np.ones(3),), "300", "Python integer 300 out of bounds for int8"),
    (bad_negative, (np.ones(3, np.uint8),), "-1", "Python integer -1 out of bounds for uint8"),
    (bad_call, (np.ones(3),), "np.cumsum(x)", "cannot fuse 'numpy.cumsum'"),
    (bad_axis, (np.ones((2, 3)),), "axis=0", "not axis 0 of 2"),
    (bad_index, (np.ones(3),), "x[1:]", "cannot fuse indexing or slicing"),
    (bad_bool, (np.ones(3, bool),), "x - x", "NumPy does not support - on two bool arrays"),
    (bad_float16, (np.ones(3, np.int8),), "np.exp(x)", "float16"),
    (bad_mix, (np.ones((2, 3)),), "x - np.max", "second pass"),
    (bad_truth, (np.ones(3),), "x if x > 0 else -x", "np.where"),
    (bad_nested, (np.ones((2, 3)),), "np.sum(np.sum", "cannot reduce a reduced value"),
    (bad_shapes, (np.ones(3),), "return x + 1", "one shape"),
], ids=lambda v: v.__name__ if hasattr(v, "__name__") else None)
def test_what_cannot_be_fused_points_at_the_line(fn, args, text, message):
    msg = _error_of(fn, *args)
    line, src = _line_of(fn, text)
    assert f"{__file__}:{line}:" in msg, msg
    assert message in msg, msg
    assert src in msg and "^" in msg.split(src, 1)[1], msg


def test_wrong_argument_count():
    with pytest.raises(TypeError, match="'arith': missing a required argument: 'b'"):
        arith(np.ones(3))
    with pytest.raises(TypeError, match="'arith': too many positional arguments"):
        arith(np.ones(3), 1, 2)


# ---- the cache across processes ----------------------------------------------------------

def test_second_process_loads_from_the_disk_cache(tmp_path):
    script = tmp_path / "fused.py"
    script.write_text(textwrap.dedent("""
        import json, numpy as np, kiln

        @kiln.fuse
        def f(x, y):
            return np.sum(np.exp(-x * x / 2) * np.where(y > 0, y, 0.1 * y), axis=-1)

        x = np.linspace(-1, 1, 60, dtype=np.float32).reshape(3, 20)
        r = f(x, x)
        ok = bool(np.allclose(r, f.py_func(x, x), rtol=1e-5))
        print(json.dumps({"ok": ok, "stats": kiln.cache.stats()}))
    """))
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"), KILN_TIERS="0",
               PYTHONPATH=os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
    env.pop("KILN_CHECK_CUDA", None)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert runs[0]["ok"] and runs[1]["ok"]
    assert runs[0]["stats"]["compiles"] == 1
    assert runs[1]["stats"]["compiles"] == 0 and runs[1]["stats"]["disk"]["hits"] == 1


# ---- the GPU ---------------------------------------------------------------------------

def test_gpu_host_side_against_the_fake_driver():
    """Device arrays in: the CUDA kernel is written, compiled by NVRTC and launched with
    the kernel shape's grid (a block per row; partials, then one block), and a kiln device
    array of NumPy's shape and dtype comes back.  tests/fake_cuda runs nothing, so values
    are checked on the H200 (test_gpu_matches_numpy)."""
    from test_fake_driver import run

    out = run("""
        @kiln.fuse
        def rows(x, y):
            return np.sum(np.exp(-x * x / 2) * np.where(y > 0, y, 0.1 * y), axis=-1)

        @kiln.fuse
        def total(x, y):
            return np.max(x * y), np.mean(x)

        @kiln.fuse
        def elementwise(x, y):
            return x * 2.0 + y

        x = kiln.to_device(np.ones((64, 300), np.float32))
        r = rows(x, x)
        assert isinstance(r, kiln.DeviceArray) and r.shape == (64,) and r.dtype == np.float32
        name, grid, block, _ = last()   # rows of 300: 128 threads, 16 elements or fewer each
        assert grid == (64, 1, 1) and block == (128, 1, 1), (grid, block)
        for shape, threads in (((16, 4096), 256), ((300, 2048), 128), ((300, 4097), 512),
                               ((8, 1 << 13), 1024), ((1000, 1 << 14), 512)):
            xs = kiln.device_array(shape, np.float32)
            rows(xs, xs)
            assert last()[1:3] == ((shape[0], 1, 1), (threads, 1, 1)), (shape, last())
        m, mean = total(x, x)
        assert m.shape == () and m.dtype == np.float32 and mean.dtype == np.float32
        name, grid, block, _ = last()
        assert grid == (1, 1, 1) and block == (256, 1, 1), (grid, block)
        e = elementwise(x, kiln.to_device(np.ones(300, np.float64)))
        assert e.shape == (64, 300) and e.dtype == np.float64 and e.strides == (2400, 8)
        name, grid, block, _ = last()   # a row operand, 300 columns: the flat kernel
        assert grid == (75, 1, 1) and block == (256, 1, 1), (grid, block)
        e = elementwise(x, kiln.to_device(np.ones((1, 300), np.float32)))
        assert last()[1] == (75, 1, 1) and e.shape == (64, 300), last()[1]
        x3 = kiln.to_device(np.ones((64, 301), np.float32))
        e = elementwise(x3, kiln.to_device(np.ones(301, np.float32)))
        name, grid, block, _ = last()   # 301 columns: a row's vectors would straddle rows
        assert grid == (2, 64, 1) and block == (256, 1, 1), (grid, block)  # x: columns
        e = elementwise(x[::2], kiln.to_device(np.ones(300, np.float32)))
        assert last()[1] == (2, 32, 1), last()[1]    # strided rows: the 2-D kernel
        big = kiln.to_device(np.ones((70000, 3, 2), np.float32))
        e = elementwise(big, 1.5)               # one shape in C order: the flat kernel
        name, grid, block, _ = last()
        assert grid == (-(-420000 // 256), 1, 1) and e.shape == (70000, 3, 2), grid
        assert e.strides == (24, 8, 4) and e.dtype == np.float32
        e = elementwise(big, kiln.to_device(np.ones(2, np.float32)))   # broadcast: not flat
        name, grid, block, _ = last()
        assert grid == (1, 26250, 1), grid  # y strides the 210000 rows, 8 per thread
        f = elementwise(big.T, 1.5)                                    # F order: not flat
        assert last()[1] == (274, 6, 1) and f.shape == (2, 3, 70000), last()[1]
        e = elementwise(kiln.to_device(np.ones(1000, np.float32)), 1.5)
        name, grid, block, _ = last()
        assert grid == (4, 1, 1), grid
        # a call like an earlier one runs its plan; the same shape with other strides
        # plans anew (a flat view of a strided array would read the wrong elements)
        e = elementwise(x, x)
        assert last()[1] == (75, 1, 1) and e.shape == (64, 300), last()[1]
        e = elementwise(x, x)
        assert last()[1] == (75, 1, 1) and e.strides == (1200, 4), last()[1]
        xs = kiln.to_device(np.ones((64, 600), np.float32))[:, ::2]
        e = elementwise(xs, x)
        assert last()[1] == (2, 64, 1) and e.shape == (64, 300), last()[1]
        r = rows(x, x)
        assert last()[1:3] == ((64, 1, 1), (128, 1, 1)) and r.shape == (64,), last()
        # NumPy arrays beside device arrays are copied in by the launch, whatever their
        # layout (a flat view of one would need a device array)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", kiln.PerformanceWarning)
            for h in (np.ones((64, 300), np.float32), np.ones(300, np.float32),
                      np.ones((64, 1), np.float32)):
                e = elementwise(x, h)
                assert isinstance(e, kiln.DeviceArray) and e.shape == (64, 300), e.shape
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_a_call_like_an_earlier_one_runs_its_plan(rng, monkeypatch):
    """A call whose argument types, shapes and strides are an earlier call's runs that
    call's plan (Fused._prepare once); new strides, shapes or broadcasting plan anew,
    a scalar's value is not part of the plan, and every result is NumPy's."""
    made = []
    real = kiln._fuse.Fused._prepare

    def counting(self, *a):
        made.append(a[0])
        return real(self, *a)

    monkeypatch.setattr(kiln._fuse.Fused, "_prepare", counting)

    @kiln.fuse
    def f(a, b):
        return a * 2 + b

    y = rng.standard_normal((6, 8))
    for _ in range(3):
        x = rng.standard_normal((6, 8))
        np.testing.assert_array_equal(f(x, y), x * 2 + y)
    assert len(made) == 1
    for x2, planned in ((rng.standard_normal((6, 16))[:, ::2], 2),  # same shape, strided
                        (np.asfortranarray(x), 3), (x, 3), (x[:3], 4)):
        y2 = y[:len(x2)]
        np.testing.assert_array_equal(f(x2, y2), x2 * 2 + y2)
        assert len(made) == planned
    np.testing.assert_array_equal(f(x, y[0]), x * 2 + y[0])     # broadcast
    np.testing.assert_array_equal(f(x, 2.0), x * 2 + 2.0)
    np.testing.assert_array_equal(f(x, 3.0), x * 2 + 3.0)
    assert len(made) == 6


def test_plans_per_function_are_bounded():
    """One plan per argument signature, at most KILN_FUSE_MAX_PLANS of them kept."""
    @kiln.fuse
    def g(a):
        return a + 1

    for n in range(1, kiln._fuse.KILN_FUSE_MAX_PLANS + 10):
        a = np.arange(n, dtype=np.float64)
        np.testing.assert_array_equal(g(a), a + 1)
    assert 0 < len(g._plans) <= kiln._fuse.KILN_FUSE_MAX_PLANS


def test_gpu_max_autotune_times_the_row_block():
    """max-autotune on a GPU row reduction: the search runs over 128..1024 threads per
    block (one block per row: the fold reads blockDim), the choice launches later calls and
    is kept under a name that carries the number of rows (64 rows of 2^14 and 2^14 rows of
    64 have the same size and want different blocks); outside the step, _rows_block's
    choice (1024 threads for a few long rows), which is also the search's default."""
    from test_fake_driver import run

    out = run("""
        from kiln import _autotune
        @kiln.fuse
        def rows(x):
            return np.sum(x * x, axis=-1)

        x = kiln.to_device(np.ones((64, 1 << 14), np.float32))
        searched = []
        _autotune._search = lambda c, run, sync, d: searched.append((c, d)) or 512
        tuned = kiln.compile(lambda a: rows(a), mode="max-autotune")
        r = tuned(x)
        assert r.shape == (64,), r.shape
        assert searched == [((128, 256, 512, 1024), 1024)], searched
        assert last()[1] == (64, 1, 1) and last()[2] == (512, 1, 1), last()
        tuned(x)
        assert len(searched) == 1 and last()[2] == (512, 1, 1)
        tuned(kiln.to_device(np.ones((1 << 14, 64), np.float32)))   # same size, other rows
        assert len(searched) == 2
        rows(x)
        assert last()[2] == (1024, 1, 1), last()
        kept = sorted(n.rsplit("|", 3)[1].rsplit(":", 1)[1] for n, v in _autotune.kept()
                      if n.startswith("autotune|fuse-rows-gpu|"))
        assert kept == ["rows15", "rows7"], kept
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_gpu_foreign_arrays_on_a_default_stream_cost_no_host_wait():
    """A CuPy or torch array on the legacy (1) or per-thread (2) default stream: the fused
    kernel, launched on the legacy default stream, follows its work without a host wait;
    an array on a stream of its own is waited for (CUDA Array Interface v3)."""
    from test_fake_driver import run

    out = run("""
        @kiln.fuse
        def f(x, y):
            return x * 2.0 + y

        d = kiln.to_device(np.ones(1000, np.float32))
        class Foreign:  # another library's array on stream s
            def __init__(self, s):
                c = dict(d.__cuda_array_interface__)
                c["stream"] = s
                self.__cuda_array_interface__ = c
        fake.fake_stream_sync_count.restype = ctypes.c_long
        f(d, d)  # compiled and loaded first
        for s, waits in ((1, False), (2, False), (None, False), (12345, True)):
            before = fake.fake_stream_sync_count()
            r = f(Foreign(s), Foreign(s))
            assert r.shape == (1000,) and last()[0].startswith("kiln_entry")
            assert (fake.fake_stream_sync_count() > before) == waits, (s, waits)
        print("ok")
    """)
    assert out.strip().endswith("ok")


@pytest.mark.gpu
@pytest.mark.parametrize("threads", [128, 256, 512, 1024])
def test_gpu_row_reductions_at_every_block_size(threads, rng, monkeypatch):
    """On the H200: a row reduction launched with each block max-autotune may choose
    equals NumPy's, for the warp-shuffle fold (float32, float64, int32) and the
    shared-memory tree (int16 max), rows shorter and longer than the block."""
    from kiln import _autotune
    monkeypatch.setattr(_autotune, "choose", lambda key, kind, *a, **kw: threads)

    @kiln.fuse
    def sums(x):
        return np.sum(x * 2, axis=-1), np.max(x, axis=-1)

    step = kiln.compile(lambda a: sums(a), mode="max-autotune")
    for dt in (np.float32, np.float64, np.int32, np.int16):
        for shape in ((7, 3), (64, 1000), (3, 5000)):
            a = (rng.standard_normal(shape) * 100).astype(dt)
            s, m = step(kiln.to_device(a))
            # a sum's order changes with the block: the bound is relative to the sum of
            # magnitudes (a row can cancel to near zero), exact for the integers
            want = np.sum(a * 2, axis=-1)
            tol = 1e-5 * np.sum(np.abs(a.astype(np.float64) * 2), axis=-1) if a.dtype.kind == "f" else 0
            assert s.dtype == want.dtype and np.all(np.abs(s.copy_to_host() - want) <= tol), dt
            np.testing.assert_array_equal(m.copy_to_host(), np.max(a, axis=-1))


def _host(v):
    if isinstance(v, tuple):
        return tuple(_host(x) for x in v)
    h = v.copy_to_host()
    return h[()] if h.ndim == 0 else h


@pytest.mark.gpu
@pytest.mark.parametrize("fn", ALL_FUNCS + [issue, chain6], ids=lambda f: f.__name__)
def test_gpu_matches_numpy(fn, rng):
    """On the H200: device arrays in, the GPU kernel's results against NumPy's."""
    dts = [np.dtype(np.int64)] if fn.__name__ in INT_ONLY else \
        [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)]
    for dt in dts:
        if fn in (issue, chain6) and dt.kind != "f":
            continue
        # (9000, 300) + (300,): enough blocks that each thread of the 2-D grid takes 8 rows
        for sa, sb in (((64, 300), (64, 300)), ((64, 300), (300,)), ((3, 4, 50), (4, 1)),
                       ((5000, 3), (5000, 3)), ((9000, 300), (300,)), ((), ())):
            # device arrays are arrays, 0-d ones too: NumPy's answer for np.asarray of the
            # inputs (a 0-d array keeps float32 where a NumPy scalar would promote)
            a, b = np.asarray(_inputs(rng, dt, sa)), np.asarray(_inputs(rng, dt, sb))
            da, db = kiln.to_device(a), kiln.to_device(b)
            try:
                want = _reference(fn, a, b)
            except (ValueError, TypeError):  # NumPy raises (axis -1 of a 0-d array): kiln too
                with pytest.raises((ValueError, TypeError, kiln.CompileError)):
                    fn(da, db)
                continue
            if isinstance(want, tuple) and len({np.shape(w) for w in want}) > 1:
                continue
            got = _host(fn(da, db))
            want = tuple(np.asarray(w) for w in want) if isinstance(want, tuple) else np.asarray(want)
            got = tuple(np.asarray(g) for g in got) if isinstance(got, tuple) else np.asarray(got)
            if fn in (issue, row_sum, total, row_stats):
                for g, w in zip(got if isinstance(got, tuple) else (got,),
                                want if isinstance(want, tuple) else (want,)):
                    assert g.dtype == w.dtype and g.shape == w.shape
                    np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-3)
            else:
                _same(got, want, f"{fn.__name__} {dt} {sa} {sb}")


@pytest.mark.gpu
def test_gpu_takes_cupy_and_torch_arrays(rng):
    x = _inputs(rng, np.dtype(np.float32), (128, 257))
    want = _reference(issue, x, x)
    for lib in ("cupy", "torch"):
        mod = pytest.importorskip(lib)
        d = mod.asarray(x) if lib == "cupy" else mod.tensor(x, device="cuda")
        got = issue(d, d)
        assert isinstance(got, kiln.DeviceArray)
        np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-4, atol=1e-3)


def test_precompile_builds_fused_kernels_for_a_later_process(tmp_path):
    """kiln precompile finds @kiln.fuse(signatures=...) functions and builds the CPU kernel
    and the CUDA one (NVRTC, no GPU); a later process's call loads the CPU build from the
    disk cache."""
    mod = tmp_path / "fused_mod.py"
    mod.write_text(textwrap.dedent("""
        import numpy as np, kiln

        @kiln.fuse(signatures=["(float32[:, ::1], float32[:, ::1])"])
        def f(x, y):
            return np.sum(np.exp(-x * x / 2) * np.where(y > 0, y, 0.1 * y), axis=-1)

        @kiln.fuse(signatures=["(float32[:, ::1], float32[:, ::1])"])
        def g(x, y):                 # elementwise in C order: the flat kernel
            return x * y + 1.0

        @kiln.fuse(signatures=["(float32[:, ::1], float32[::1])"])
        def h(x, b):                 # a row: the row path on the GPU, and the 2-D kernel
            return x * b + 1.0
    """))
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"), KILN_TIERS="0",
               PYTHONPATH=os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
    env.pop("KILN_CHECK_CUDA", None)
    out = subprocess.run([sys.executable, "-m", "kiln", "precompile", str(mod), "--target", "cpu",
                          "--target", "cuda:sm_80"], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    # f, g: one kernel per target; h: one for the CPU, the row path and its own for CUDA
    assert "7 built, 0 already cached, 0 failed" in out.stdout, out.stdout
    script = tmp_path / "use.py"
    script.write_text(textwrap.dedent("""
        import json, numpy as np, kiln
        from fused_mod import f, g, h
        x = np.linspace(-1, 1, 60, dtype=np.float32).reshape(3, 20)
        ok = bool(np.allclose(f(x, x), f.py_func(x, x), rtol=1e-5))
        ok &= bool(np.allclose(g(x, x), x * x + 1.0) and np.allclose(h(x, x[0]), x * x[0] + 1.0))
        print(json.dumps({"ok": ok, "stats": kiln.cache.stats()}))
    """))
    env["PYTHONPATH"] += os.pathsep + str(tmp_path)
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["ok"] and r["stats"]["compiles"] == 0 and r["stats"]["disk"]["hits"] == 3, r


def test_long_chains_stay_within_the_kernels_nesting(tmp_path):
    """x + x + ... (600 terms) is flat in Python; its kernel text would nest 600
    parentheses, so deep parts become locals (FUSE_SPILL_NESTING)."""
    mod = tmp_path / "chain_mod.py"
    mod.write_text("import numpy as np\n\ndef f(x):\n    return " +
                   " + ".join(f"x * {i}" for i in range(600)) + "\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import chain_mod
    finally:
        sys.path.remove(str(tmp_path))
    f = kiln.fuse(chain_mod.f)
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    _same(f(x), chain_mod.f(x))


@pytest.mark.parametrize("fn", ALL_FUNCS + [issue, chain6], ids=lambda f: f.__name__)
def test_zero_d_arrays_match_numpy(fn, rng):
    """0-d arrays in: NumPy's operators give scalars (x += y then rebinds, promoting), its
    reductions take axis=-1 of a 0-d value; kiln gives the same values and dtypes."""
    dts = [np.dtype(np.int64)] if fn.__name__ in INT_ONLY else \
        [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)]
    for dt in dts:
        if fn in (issue, chain6) and dt.kind != "f":
            continue
        a, b = np.asarray(_inputs(rng, dt, ())), np.asarray(_inputs(rng, dt, ()))
        try:
            want = _reference(fn, a, b)
        except (ValueError, TypeError):
            with pytest.raises((ValueError, TypeError, kiln.CompileError)):
                fn(a, b)
            continue
        got = fn(a, b)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert np.asarray(g).dtype == np.asarray(w).dtype, (fn.__name__, dt, g, w)
            assert np.shape(g) == np.shape(w)
            # a 0-d array where NumPy gives one (np.where, .astype, x += y), else a scalar
            # (hunt18 9: every 0-d result was a scalar)
            assert isinstance(g, np.ndarray) == isinstance(w, np.ndarray), (fn.__name__, g, w)
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                       rtol=1e-5, atol=1e-6)


def test_fastmath_is_the_kernels_jit_option(rng):
    def f(x, y):
        return np.exp(x * y + 0.5) * x - y / 3.0

    precise, fast = kiln.fuse(f), kiln.fuse(fastmath=True)(f)
    x, y = rng.random(1000), rng.random(1000)
    np.testing.assert_allclose(fast(x, y), f(x, y), rtol=1e-6)
    np.testing.assert_allclose(precise(x, y), f(x, y), rtol=1e-12)
    assert fast._specs and all(s.kernel.options["fastmath"] for s in fast._specs.values())
    assert not any(s.kernel.options["fastmath"] for s in precise._specs.values())


def test_row_operand_keys_are_checked():
    """kiln_fuse's row operands (KILN_FUSE_ROW, kiln/_fuse.py _row_flat) are 1-D and only
    in a 1-D elementwise call; another shape or an unknown kind is a CompileError."""
    from kiln import _compile, _kiln
    from kiln._fuse import _ROW, _resolve

    def f(x, b):
        return x + b

    fused = kiln.fuse(f)
    text, filename, line = _compile.dispatcher_source(fused)
    f32 = 10
    plan = _kiln.fuse(text, filename, line, ((0, f32, 1, 0), (_ROW, f32, 1, 0)), 1, _resolve, f)
    assert plan["params"].split() == ["o0", "a0", "a1", "cols"]
    assert "u_b[k_c]" in plan["source"] and "k_c = k_i0 % k_cols" in plan["source"]
    for key, msg in ((((0, f32, 2, 0), (_ROW, f32, 1, 0)), "only a 1-D elementwise call"),
                     (((0, f32, 1, 0), (_ROW, f32, 2, 0)), "invalid type"),
                     (((0, f32, 1, 0), (_ROW, f32, 1, 1)), "invalid type"),
                     (((0, f32, 1, 0), (9, f32, 1, 0)), "invalid type"),
                     (((0, f32, 1, 0), (-1, f32, 1, 0)), "invalid type")):
        with pytest.raises(kiln.CompileError, match=msg):
            _kiln.fuse(text, filename, line, key, 1, _resolve, f)


def test_float32_sums_keep_their_small_terms():
    # NumPy sums float32 pairwise; a running float32 total stops growing at 2**24 (1.0 is
    # then below half its ulp) and drifts long before: kiln accumulates in float64 and
    # returns float32, as NumPy does (hunt18 1)
    rows = kiln.fuse(lambda x: np.sum(x, axis=-1))
    mean = kiln.fuse(lambda x: np.mean(x, axis=-1))
    whole = kiln.fuse(lambda x: x.sum())
    x = np.ones((2, 2**24 + 1000), np.float32)
    assert rows(x).dtype == np.float32 and (rows(x) == 2**24 + 1000).all()
    assert mean(x).dtype == np.float32 and (mean(x) == 1).all()
    assert whole(x) == 2 * (2**24 + 1000) and whole(x).dtype == np.float32
    y = np.full((3, 10**6), 0.1, np.float32)
    np.testing.assert_allclose(rows(y), np.sum(y, axis=-1), rtol=1e-6)
    np.testing.assert_allclose(whole(y), np.sum(y), rtol=1e-6)


@pytest.mark.parametrize("pred", [np.isnan, np.isinf, np.isfinite])
def test_float_predicates_of_bools_and_ints_are_constants(pred):
    # isnan/isinf of a bool or an integer is False, isfinite True (hunt18 2: a bool array
    # came back as itself)
    f = kiln.fuse(lambda x: pred(x))
    for x in (np.array([True, False, True]), np.array([3, -1], np.int8), np.arange(4)):
        got = f(x)
        assert got.dtype == np.bool_ and (got == pred(x)).all()
    g = kiln.fuse(lambda x: np.sum(pred(x == x)))
    y = np.array([1.0, np.nan, 2.0])
    assert g(y) == np.sum(pred(y == y))


def _alias_param(x, y):
    t = x
    t += y
    return x * 1


def _alias_temp(x, y):
    u = x * 2
    t = u
    t += y
    return u, t - u


def _alias_rebound(x, y):
    t = x
    x = x * 3  # x is another array now: t keeps the first one
    t += y
    return x, t


@pytest.mark.parametrize("fn", [_alias_param, _alias_temp, _alias_rebound])
def test_names_of_one_array_see_its_in_place_updates(fn):
    # `t = x` binds another name to x's array, so `t += y` changes x too, as in NumPy
    # (hunt18 4: x kept its old values); the caller's array is never written
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 1.5])
    keep = x.copy()
    got, want = kiln.fuse(fn)(x, y), fn(x.copy(), y)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(x, keep)


_I8, _I16, _I32 = (np.array([7, -7, 5], t) for t in (np.int8, np.int16, np.int32))
_U8, _F32, _B = np.array([7, 200, 3], np.uint8), np.array([1.0, -2.0, 0.5], np.float32), \
    np.array([True, False, True])


@pytest.mark.parametrize("fn, args", [
    (lambda x, y: np.fmod(x, y), (_I32, 7)),          # NumPy's integer loops keep the type
    (lambda x, y: np.fmod(x, y), (_I16, _I16)),
    (lambda x, y: np.fmod(x, y), (_I8, _I8)),
    (lambda x, y: np.fmod(x, y), (_U8, _I8)),          # int16
    (lambda x, y: np.fmod(x, y), (_B, _B)),            # int8
    (lambda x, y: np.fmod(x, y), (_I32, np.array([0, 3, 0], np.int32))),  # by zero: 0
    (lambda a, b: np.arctan2(a, b), (-2.0, _F32)),     # a Python float is weak: float32
    (lambda a, b: np.arctan2(a, b), (_F32, -2.0)),
    (lambda a, b: np.hypot(a, b), (3.0, _F32)),
    (lambda a, b: np.copysign(a, b), (3.0, _F32)),
    (lambda a, b: np.arctan2(a, b), (1, _I16)),        # int16's float loop: float32
    (lambda a, b: np.arctan2(a, b), (_B, np.array([1.0, 2.0, 3.0]))),
    (lambda a, b: np.arctan2(a, b), (_I8, np.float64(2.5))),
    (lambda a, b: abs(a) - b, (2, _I8)),               # abs of a Python int stays weak
    (lambda a, b: np.floor(a) + b, (2, _I8)),          # np.floor(2) is np.int64(2)
])
def test_ufunc_types_are_numpys(fn, args):
    # hunt18 6-8: fmod of integers was a float; the float ufuncs of two arguments chose
    # their loop per argument, so a Python float made float64 of a float32 array
    with np.errstate(divide="ignore", invalid="ignore"):
        want = fn(*args)
    got = kiln.fuse(fn)(*args)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("fn", [lambda x: x, lambda x: np.where(x > 0, x, 0),
                                lambda x: x.astype(np.int32), lambda x: x * 2,
                                lambda x: np.sum(x), lambda x: (x, x + 1)])
def test_zero_d_results_are_arrays_where_numpys_are(fn):
    z = np.array(5.0)
    want, got = fn(z.copy()), kiln.fuse(fn)(z)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert type(g) is type(w) and g.dtype == w.dtype and g == w


def test_a_python_int_past_64_bits_names_the_parameter():
    # hunt18 13: the message named the kernel's internal parameter u_y
    with pytest.raises(OverflowError, match=r"argument 'y' of kiln.fuse function '<lambda>'"):
        kiln.fuse(lambda x, y: x + y)(np.ones(3), 2**70)


def test_comparisons_with_python_numbers_follow_numpy():
    """kiln.fuse compares float32 data with a Python float in float32, as NumPy 2 does,
    while the kernel language compares it exactly (tests/lang/compare_python_numbers_exactly)."""
    @kiln.fuse
    def f(x, y):
        return x > 0.1, x == 0.1, x < y, x >= 16777217

    x = np.array([0.1, 0.2, 16777216.0], np.float32)
    y = np.array([1, 0, 5], np.int64)
    for got, want in zip(f(x, y), (x > 0.1, x == 0.1, x < y, x >= 16777217)):
        np.testing.assert_array_equal(got, want)


def test_bad_fuse_options_are_errors_when_given():
    # hunt29 11: fastmath= and cache= were taken as any truthy value; signatures=5 failed
    # with "'int' object is not iterable"
    with pytest.raises(ValueError, match="Unrecognized fastmath value: 'x'"):
        kiln.fuse(fastmath="x")(lambda x: x + 1)
    with pytest.raises(ValueError, match="Unrecognized fastmath flags: bogus"):
        kiln.fuse(fastmath={"bogus"})(lambda x: x + 1)
    with pytest.raises(TypeError, match="cache= is True or False, not 'x'"):
        kiln.fuse(cache="x")(lambda x: x + 1)
    with pytest.raises(TypeError, match="signatures= is a signature string or a list"):
        kiln.fuse(signatures=5)(lambda x: x + 1)
    f = kiln.fuse(fastmath={"nnan", "ninf"})(lambda x: x + 1)
    assert f(np.ones(2)).tolist() == [2.0, 2.0]


def test_calls_bind_keywords_and_refuse_what_kernels_cannot_take():
    @kiln.fuse
    def f(x, y):
        return x * 2 - y

    a, b = np.arange(6.0), np.ones(6)
    np.testing.assert_array_equal(f(y=b, x=a), a * 2 - b)
    np.testing.assert_array_equal(f(a, y=b), a * 2 - b)
    with pytest.raises(TypeError, match="'f': missing a required argument: 'y'"):
        f(a)
    with pytest.raises(TypeError, match="'f': got an unexpected keyword argument 'z'"):
        f(a, b, z=1)
    nine = np.ones((1,) * 8 + (2,))
    with pytest.raises(TypeError, match="argument 'x' of kiln.fuse function 'f' has 9 "
                                        "dimensions; kernels take at most 8"):
        f(nine, 1.0)
    with pytest.raises(TypeError, match="machine's byte order, not dtype\\('>f8'\\)"):
        f(a.astype(">f8"), b)


def test_a_call_like_an_earlier_one_takes_its_plan_by_call_sig_and_others_do_not(rng):
    # _kiln.call_sig (layoutsig.c) keys a plan by the arguments' types and layouts: a call
    # like an earlier one takes that plan even with the key-formed plans gone, and calls
    # that differ in any of dtype, byte order, shape, strides or scalar kind take their own
    @kiln.fuse
    def f(x, y, a):
        return x * a + y

    def check(x, y, a):
        got = f(x, y, a)
        want = x * a + y
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-6)

    x, y = rng.random(64), rng.random(64)
    check(x, y, 2.0)
    f._plans.clear()
    f._prepare = lambda *a, **k: (_ for _ in ()).throw(AssertionError("planned anew"))
    check(rng.random(64), rng.random(64), 3.0)      # the plan of call_sig
    del f._prepare
    x32 = x.astype(np.float32)
    cases = [(x32, y.astype(np.float32), 2.0), (x32, y.astype(np.float32), 2),
             (x32, y.astype(np.float32), np.float64(2.0)), (x32, y.astype(np.float32), True),
             (x[::2], y[::2], 2.0), (x[:32], y[:32], 2.0),
             (x.reshape(8, 8), y.reshape(8, 8).T, 2.0), (x.astype(np.int32), y, 2),
             (x.astype(np.int64), x.astype(np.int64), 2 ** 62)]
    for case in cases + cases[::-1]:
        check(*case)
    with pytest.raises(OverflowError, match="outside int64.s range.*np.uint64"):
        f(x.astype(np.int64), x.astype(np.int64), 2 ** 64)
    for _ in range(2):   # another byte order: never the native arrays' plan
        with pytest.raises(TypeError, match="byte order"):
            f(x.astype(">f8"), y, 2.0)
