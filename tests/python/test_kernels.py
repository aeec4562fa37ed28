"""End-to-end kernels on the CPU target against NumPy float64 references."""
import math

import numpy as np
import pytest

import kiln
from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, layouts, random_array


@kiln.jit
def axpy(out, x, y, a):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES)
def test_axpy_every_dtype(rng, dtype):
    n = 1000
    x = random_array(rng, n, dtype)
    y = random_array(rng, n, dtype)
    out = np.zeros(n, dtype)
    a = dtype(3)
    axpy[(n + 127) // 128, 128](out, x, y, a)
    ref = (3 * x.astype(np.float64) + y.astype(np.float64))
    if np.dtype(dtype).kind == "f":
        # two roundings (no fused multiply-add without fastmath, as NumPy): within an ulp of
        # each term of the float64 reference, however much a + b cancels
        bound = 2 * np.finfo(dtype).eps * (3 * np.abs(x.astype(np.float64)) + np.abs(y))
        assert (np.abs(out - ref) <= bound).all()
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(out, a * x + y)  # NumPy's own rounding, bit for bit
    else:
        np.testing.assert_array_equal(out, (3 * x + y).astype(dtype))  # wraps as NumPy does


@kiln.jit
def add2d(out, a, b):
    i, j = kiln.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * 2 + b[i, j]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("layout", ["C", "F", "strided", "negative"])
def test_2d_every_layout(rng, dtype, layout):
    shape = (37, 53)
    a = random_array(rng, shape, dtype)
    b = random_array(rng, shape, dtype)
    A = layouts(a)[layout]
    B = layouts(b)[layout]
    out = layouts(np.zeros(shape, np.float64))[layout]
    add2d[(3, 4), (16, 16)](out, A, B)
    ref = (a * 2 + b).astype(np.float64)  # NumPy 2's own promotion, wrapping included
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_broadcast_zero_strides(rng):
    a = rng.random(40)
    row = np.broadcast_to(a, (30, 40))   # zero stride on axis 0, read-only
    b = rng.random((30, 40))
    out = np.zeros((30, 40))
    add2d[(2, 3), (16, 16)](out, row, b)
    np.testing.assert_allclose(out, a * 2 + b)


@kiln.jit
def grid3(out):
    i, j, k = kiln.grid(3)
    if i < out.shape[0] and j < out.shape[1] and k < out.shape[2]:
        out[i, j, k] = i * 10000 + j * 100 + k


def test_3d_grid():
    out = np.zeros((5, 7, 9), np.int64)
    grid3[(2, 2, 2), (4, 4, 8)](out)
    i, j, k = np.indices(out.shape)
    np.testing.assert_array_equal(out, i * 10000 + j * 100 + k)


@kiln.jit
def nd_sum(out, a):
    i = kiln.grid(1)
    if i < a.shape[0]:
        s = 0.0
        for j in range(a.shape[1]):
            for k in range(a.shape[2]):
                for l in range(a.shape[3]):
                    s += a[i, j, k, l]
        out[i] = s


def test_4d_arrays_and_nested_loops(rng):
    a = rng.random((6, 3, 4, 5))[:, ::-1, :, ::2]
    out = np.zeros(6)
    nd_sum[1, 32](out, a)
    np.testing.assert_allclose(out, a.sum(axis=(1, 2, 3)))


@kiln.jit(device=True)
def clamp(x, lo=0.0, hi=1.0):
    return min(max(x, lo), hi)


@kiln.jit(device=True)
def divmod_(a, b):
    return a // b, a % b


@kiln.jit
def use_devices(out, q, r, x, a, b):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = clamp(x[i], hi=0.5)
        q[i], r[i] = divmod_(a[i], b[i])


def test_device_functions_defaults_keywords_tuples(rng):
    n = 300
    x = rng.uniform(-1, 2, n)
    a = rng.integers(-50, 50, n)
    b = rng.integers(1, 9, n) * rng.choice([-1, 1], n)
    out, q, r = np.zeros(n), np.zeros(n, np.int64), np.zeros(n, np.int64)
    use_devices[3, 128](out, q, r, x, a, b)
    np.testing.assert_allclose(out, np.clip(x, 0, 0.5))
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)


@kiln.jit
def int_ops(out, a, b):
    i = kiln.grid(1)
    if i < a.size:
        out[i, 0] = a[i] // b[i]
        out[i, 1] = a[i] % b[i]
        out[i, 2] = a[i] << 3
        out[i, 3] = a[i] >> 2
        out[i, 4] = a[i] & b[i]
        out[i, 5] = a[i] | b[i]
        out[i, 6] = a[i] ^ b[i]
        out[i, 7] = -a[i]
        out[i, 8] = ~a[i]
        out[i, 9] = abs(a[i])
        out[i, 10] = a[i] ** 2
        out[i, 11] = min(a[i], b[i])
        out[i, 12] = max(a[i], b[i])


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_semantics_match_numpy(rng, dtype):
    n = 500
    a = random_array(rng, n, dtype)
    b = random_array(rng, n, dtype)
    b[b == 0] = 1
    out = np.zeros((n, 13), dtype)
    int_ops[4, 128](out, a, b)
    with np.errstate(all="ignore"):
        refs = [a // b, a % b, a << 3, a >> 2, a & b, a | b, a ^ b, -a, ~a, np.abs(a), a ** 2,
                np.minimum(a, b), np.maximum(a, b)]
    for k, ref in enumerate(refs):
        np.testing.assert_array_equal(out[:, k], ref.astype(dtype), err_msg=f"column {k}")


@kiln.jit
def float_ops(out, a, b):
    i = kiln.grid(1)
    if i < a.size:
        out[i, 0] = a[i] // b[i]
        out[i, 1] = a[i] % b[i]
        out[i, 2] = a[i] / b[i]
        out[i, 3] = a[i] ** 2
        out[i, 4] = abs(a[i]) ** 0.5
        out[i, 5] = math.floor(a[i])
        out[i, 6] = math.ceil(a[i])
        out[i, 7] = round(a[i])
        out[i, 8] = math.copysign(3.0, a[i])
        out[i, 9] = math.fmod(a[i], b[i])
        out[i, 10] = math.atan2(a[i], b[i])
        out[i, 11] = math.hypot(a[i], b[i])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_semantics_match_python(rng, dtype):
    n = 400
    a = rng.uniform(-50, 50, n).astype(dtype)
    b = rng.uniform(-7, 7, n).astype(dtype)
    b[np.abs(b) < 0.1] = 0.5
    out = np.zeros((n, 12), dtype)
    float_ops[4, 128](out, a, b)
    A, B = a.astype(np.float64), b.astype(np.float64)
    refs = [np.floor_divide(A, B), np.mod(A, B), A / B, A ** 2, np.abs(A) ** 0.5, np.floor(A),
            np.ceil(A), np.rint(A), np.copysign(3.0, A), np.fmod(A, B), np.arctan2(A, B),
            np.hypot(A, B)]
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for k, ref in enumerate(refs):
        np.testing.assert_allclose(out[:, k], ref, rtol=tol, atol=tol, err_msg=f"column {k}")


MATH1 = ["sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
         "gamma", "lgamma", "fabs", "trunc"]
DOMAIN = {"log": (0.1, 5), "log1p": (0.1, 5), "log2": (0.1, 5), "log10": (0.1, 5),
          "sqrt": (0, 5), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9),
          "acosh": (1.1, 5), "gamma": (0.5, 5), "lgamma": (0.5, 5)}


@pytest.mark.parametrize("name", MATH1)
def test_math_functions(rng, name):
    ns = {"math": math, "kiln": kiln}
    src = (f"def k(out, x):\n    i = kiln.grid(1)\n    if i < x.size:\n"
           f"        out[i] = math.{name}(x[i])\n")
    import linecache
    fname = f"<math-{name}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    exec(compile(src, fname, "exec"), ns)
    k = kiln.jit(ns["k"])
    lo, hi = DOMAIN.get(name, (-3, 3))
    for dtype in FLOAT_DTYPES:
        x = rng.uniform(lo, hi, 200).astype(dtype)
        out = np.zeros(200, dtype)
        k[2, 128](out, x)
        ref = np.array([getattr(math, name)(float(v)) for v in x])
        tol = 2e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(out, ref, rtol=tol, atol=tol)


@kiln.jit
def compare_mixed(out, s, u):
    i = kiln.grid(1)
    if i < s.size:
        out[i, 0] = s[i] < u[i]
        out[i, 1] = s[i] == u[i]
        out[i, 2] = u[i] >= s[i]
        out[i, 3] = -1 < u[i]


def test_mixed_sign_comparisons_are_exact():
    s = np.array([-1, 0, 5, -(2**62), 2**62], np.int64)
    u = np.array([2**64 - 1, 0, 5, 3, 2**63], np.uint64)
    out = np.zeros((5, 4), np.bool_)
    compare_mixed[1, 32](out, s, u)
    exp = [[int(a) < int(b), int(a) == int(b), int(b) >= int(a), True] for a, b in zip(s, u)]
    np.testing.assert_array_equal(out, np.array(exp))


@kiln.jit
def control(out, n):
    i = kiln.grid(1)
    if i < out.size:
        total = 0
        j = 0
        while True:
            j += 1
            if j % 3 == 0:
                continue
            if j > n:
                break
            total += j
        for k in range(10, 0, -2):
            total += k
        else:
            total += 1000
        for k in range(5):
            if k == i:
                break
        else:
            total += 1
        out[i] = total if i % 2 == 0 else -total


def test_control_flow():
    out = np.zeros(8, np.int64)
    control[1, 8](out, 20)
    def ref(i):
        total, j = 0, 0
        while True:
            j += 1
            if j % 3 == 0:
                continue
            if j > 20:
                break
            total += j
        for k in range(10, 0, -2):
            total += k
        else:
            total += 1000
        for k in range(5):
            if k == i:
                break
        else:
            total += 1
        return total if i % 2 == 0 else -total
    np.testing.assert_array_equal(out, [ref(i) for i in range(8)])


@kiln.jit
def local_arrays(out, x):
    i = kiln.grid(1)
    if i < x.shape[0]:
        tmp = kiln.local.array((4,), kiln.float64)
        for k in range(4):
            tmp[k] = x[i, k] * (k + 1)
        acc = 0.0
        for k in range(4):
            acc += tmp[k]
        out[i] = acc


def test_local_arrays(rng):
    x = rng.random((50, 4))
    out = np.zeros(50)
    local_arrays[1, 64](out, x)
    np.testing.assert_allclose(out, x @ np.arange(1, 5))


@kiln.jit
def histogram(counts, x, total):
    i = kiln.grid(1)
    if i < x.size:
        kiln.atomic.add(counts, x[i], 1)
        kiln.atomic.add(total, 0, 0.5)
        kiln.atomic.max(counts, 10, x[i])


def test_atomics_on_cpu(rng):
    x = rng.integers(0, 10, 100000).astype(np.int32)
    counts = np.zeros(11, np.int32)
    total = np.zeros(1, np.float64)
    histogram[(100000 + 255) // 256, 256](counts, x, total)
    np.testing.assert_array_equal(counts[:10], np.bincount(x, minlength=10))
    assert counts[10] == x.max()
    assert total[0] == 50000.0


@kiln.jit
def views(out, a):
    i = kiln.grid(1)
    if i < a.shape[0]:
        row = a[i]
        out[i, 0] = row[0] + row[-1]
        out[i, 1] = a[i][1]
        s = a[i, 1:4]
        out[i, 2] = s[0] + s[1] + s[2]
        r = a[i, ::-2]
        out[i, 3] = r[0]
        out[i, 4] = len(r)


def test_views_slices_and_negative_indices(rng):
    a = rng.random((20, 7))
    out = np.zeros((20, 5))
    views[1, 32](out, a)
    np.testing.assert_allclose(out[:, 0], a[:, 0] + a[:, -1])
    np.testing.assert_allclose(out[:, 1], a[:, 1])
    np.testing.assert_allclose(out[:, 2], a[:, 1:4].sum(axis=1))
    np.testing.assert_allclose(out[:, 3], a[:, ::-2][:, 0])
    np.testing.assert_allclose(out[:, 4], a[0, ::-2].size)


SCALE = 3
OFFSET = np.float32(0.25)
PAIR = (2, 5)


@kiln.jit
def frozen_globals(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = x[i] * SCALE + OFFSET + PAIR[1]


def test_frozen_globals_keep_float32(rng):
    x = rng.random(100).astype(np.float32)
    out = np.zeros(100, np.float32)
    frozen_globals[1, 128](out, x)
    np.testing.assert_allclose(out, x * 3 + np.float32(0.25) + 5, rtol=1e-6)
    assert "float32" in frozen_globals.inspect_types(file=False)


def test_explicit_signatures_and_mismatch():
    @kiln.jit(["void(float32[::1], float32)", "void(float64[:], float64)"])
    def fill(a, v):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = v
    assert fill.signatures == ["(float32[::1], float32)", "(float64[:], float64)"]
    a = np.zeros(10, np.float32)
    fill[1, 16](a, 2.5)
    assert (a == 2.5).all()
    b = np.zeros(20)[::2]
    fill[1, 16](b, 1)
    assert (b == 1).all()
    with pytest.raises(TypeError, match=r"was compiled for\n  void\(float32\[::1\], float32\)"):
        fill[1, 16](np.zeros(4, np.int32), 1)


def test_inspect_source_has_line_markers():
    x = np.ones(4, np.float32)
    axpy[1, 4](x, x, x, np.float32(1))  # the tests may run in any order, or alone (pytest -n)
    assert "#line" in axpy.inspect_source()
    assert "kiln_entry" in axpy.inspect_source()


@kiln.jit
def numba_device_functions(pc, br, lz, fs, fm, cb, sp, x, f):
    i = kiln.grid(1)
    if i < x.size:
        pc[i] = kiln.popc(x[i])
        br[i] = kiln.brev(x[i])
        lz[i] = kiln.clz(x[i])
        fs[i] = kiln.ffs(x[i])
        fm[i] = kiln.fma(f[i], f[i], 1.0)
        cb[i] = kiln.cbrt(f[i])
        sp[i] = kiln.selp(x[i] > 0, f[i], -f[i])


def bit_reference(v, width):
    u = int(v) & ((1 << width) - 1)
    popc = bin(u).count("1")
    brev = int(format(u, f"0{width}b")[::-1], 2)
    clz = width - u.bit_length()
    ffs = (u & -u).bit_length()
    return popc, brev, clz, ffs


def run_numba_device_functions(x, f, launch=None):
    outs = [np.zeros_like(x) for _ in range(4)] + [np.zeros_like(f) for _ in range(3)]
    (launch or numba_device_functions[(x.size + 63) // 64, 64])(*outs, x, f)
    return outs


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_numba_bit_and_float_device_functions(rng, dtype):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, 500, dtype=dtype, endpoint=True)
    x[:4] = [0, 1, info.max, info.min]
    f = rng.uniform(-8, 8, 500)
    pc, br, lz, fs, fm, cb, sp = run_numba_device_functions(x, f)
    w = np.dtype(dtype).itemsize * 8
    ref = [bit_reference(v, w) for v in x]
    np.testing.assert_array_equal(pc, [r[0] for r in ref])
    np.testing.assert_array_equal(br, np.array([r[1] for r in ref], np.uint64).astype(dtype))
    np.testing.assert_array_equal(lz, [r[2] for r in ref])
    np.testing.assert_array_equal(fs, [r[3] for r in ref])
    np.testing.assert_allclose(fm, f * f + 1.0, rtol=1e-15)
    np.testing.assert_allclose(cb, np.cbrt(f), rtol=1e-15)
    np.testing.assert_array_equal(sp, np.where(x > 0, f, -f))


@kiln.jit
def popc_of_float(out, f):
    out[0] = kiln.popc(f[0])


def test_bit_functions_reject_floats():
    with pytest.raises(kiln.CompileError, match=r"kiln\.popc\(\) takes an integer, not float64"):
        popc_of_float[1, 1](np.zeros(1), np.zeros(1))


@kiln.jit
def math2_mixed(o, f, i8, i32, b):
    i = kiln.grid(1)
    if i < o.size:
        v1 = math.atan2(f[i], i8[i])
        v2 = math.hypot(b[i], f[i])
        v3 = math.fmod(f[i], 3)
        v4 = math.pow(f[i], i32[i])
        o[i] = v1 + v2 + v3 + v4


def test_two_argument_math_of_a_float32_and_an_integer_is_typed_as_numpy_does():
    # arctan2/hypot/fmod/power of float32 with int8, bool or a Python int: float32; with
    # int32, float64 (NumPy's promotion), values within float32 rounding of float64
    n = 16
    rng = np.random.default_rng(5)
    f = rng.uniform(0.5, 2, n).astype(np.float32)
    i8 = rng.integers(1, 5, n).astype(np.int8)
    i32 = rng.integers(1, 3, n).astype(np.int32)
    b = rng.integers(0, 2, n).astype(bool)
    o = np.zeros(n)
    math2_mixed[1, 32](o, f, i8, i32, b)
    types = math2_mixed.inspect_types(file=False)
    for v, t in (("v1", "float32"), ("v2", "float32"), ("v3", "float32"), ("v4", "float64")):
        assert f"{v}: {t}" in types, types
    f64 = f.astype(np.float64)
    ref = (np.arctan2(f64, i8) + np.hypot(b, f64) + np.fmod(f64, 3) + np.power(f64, i32))
    np.testing.assert_allclose(o, ref, rtol=1e-5)
