"""float16 operations in half precision and min/max of floats as fmin/fmax.

On the GPU (sm_53 and newer) float16 + - *, fma, negation, abs, the comparisons and the
integer conversions are native half instructions (rt_half.h): the PTX that NVRTC makes
from kiln's CUDA C is checked here, without a GPU.  The CPU computes the same operations
in float32 and rounds once more: its results are checked against NumPy's float16 bit for
bit, on special values and on random ones.  min/max of floats ignore a NaN operand, as
Numba-CUDA's PTX min.f32/max.f64 do, on both targets (docs/language.md, Builtins)."""
import math

import numpy as np
import pytest

import kiln
from kiln import (float16, float32, float64, int8, int16, int32, int64, uint8, uint16,
                  uint32, uint64)

f2 = float16


def _ptx(fn, sig, cc=(8, 0)):
    ptx, _ = kiln.compile_ptx(fn, sig, device=True, cc=cc)
    return ptx


def h_add(a, b):
    return a + b


def h_sub(a, b):
    return a - b


def h_mul(a, b):
    return a * b


def h_neg(a):
    return -a


def h_abs(a):
    return abs(a)


def h_fma(a, b, c):
    return kiln.fp16.hfma(a, b, c)


def h_iadd(a, b):
    a += b
    a *= b
    return a


def h_to16(x):
    return np.float16(x)


def h_to32(x):
    return np.float32(x) * np.float32(2)


def f_max(a, b):
    return max(a, b)


def f_min(a, b):
    return min(a, b)


@pytest.mark.parametrize("cc", [(8, 0), (9, 0)])
@pytest.mark.parametrize("fn,sig,instrs", [
    (h_add, (f2, f2), ["add.f16"]),
    (h_sub, (f2, f2), ["sub.f16"]),
    (h_mul, (f2, f2), ["mul.f16"]),
    (h_neg, (f2,), ["neg.f16"]),
    (h_abs, (f2,), ["abs.f16"]),
    (h_fma, (f2, f2, f2), ["fma.rn.f16"]),
    (h_iadd, (f2, f2), ["add.f16", "mul.f16"]),
    (h_to32, (f2,), ["cvt.f32.f16"]),
    (h_to16, (int8,), ["cvt.rn.f16.s8"]),
    (h_to16, (uint8,), ["cvt.rn.f16.u8"]),
    (h_to16, (int16,), ["cvt.rn.f16.s16"]),
    (h_to16, (uint16,), ["cvt.rn.f16.u16"]),
    (h_to16, (int32,), ["cvt.rn.f16.s32"]),
    (h_to16, (uint32,), ["cvt.rn.f16.u32"]),
    (h_to16, (int64,), ["cvt.rn.f16.s64"]),
    (h_to16, (uint64,), ["cvt.rn.f16.u64"]),
    (f_max, (float32, float32), ["max.f32"]),
    (f_min, (float32, float32), ["min.f32"]),
    (f_max, (float32, float64), ["max.f64"]),
    (f_min, (float64, float32), ["min.f64"]),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_native_instructions_in_the_ptx(fn, sig, instrs, cc):
    ptx = _ptx(fn, sig, cc)
    for ins in instrs:
        assert ins in ptx, (ins, fn.__name__, sig)


def h_lt(a, b):
    return a < b


def h_le(a, b):
    return a <= b


def h_gt(a, b):
    return a > b


def h_ge(a, b):
    return a >= b


def h_eq(a, b):
    return a == b


def h_ne(a, b):
    return a != b


@pytest.mark.parametrize("fn,ins", [(h_gt, "setp.gt.f16"), (h_ge, "setp.ge.f16"),
                                    (h_lt, "setp.lt.f16"), (h_le, "setp.le.f16"),
                                    (h_eq, "setp.eq.f16"), (h_ne, "setp.neu.f16")])
def test_float16_comparisons_are_setp_f16(fn, ins):
    assert ins in _ptx(fn, (f2, f2))
    # with an int8 the comparison stays float16 (NumPy's promotion); with an int16 it is
    # float32
    assert ins in _ptx(fn, (f2, int8))
    wide = _ptx(fn, (f2, int16))
    assert ins not in wide and ins.replace("f16", "f32") in wide


def test_float16_export_passes_16_bits():
    # a device function compiled alone takes and returns a float16 as its 16 bits (__half)
    ptx = _ptx(h_add, (f2, f2))
    assert "ld.param.u16" in ptx or "ld.param.b16" in ptx
    assert "ld.param.f32" not in ptx


# ---- values on the CPU ------------------------------------------------------------

def _launch(k, n, outs, ins, gpu):
    """k over n threads; on the GPU with device arrays, the outputs copied back in place."""
    if not gpu:
        k[(n + 127) // 128, 128](*outs, *ins)
        return
    douts = [kiln.to_device(o) for o in outs]
    k[(n + 127) // 128, 128](*douts, *[kiln.to_device(x) for x in ins])
    for o, d in zip(outs, douts):
        o[...] = d.copy_to_host()


def _specials():
    v = [0.0, -0.0, 1.0, -1.0, 0.5, 65504.0, -65504.0, 6e-8, -6e-8, 6.1e-5, 2049.0, 0.1,
         np.inf, -np.inf, np.nan, 1000.0, 0.999, 3.0]
    return np.array(v, np.float16)


def _operands(rng, n):
    s = _specials()
    a = np.concatenate([np.repeat(s, s.size), (rng.standard_normal(n) * 60).astype(np.float16)])
    b = np.concatenate([np.tile(s, s.size), (rng.standard_normal(n) * 3).astype(np.float16)])
    c = np.concatenate([np.tile(s[::-1], s.size), (rng.standard_normal(n) * 9).astype(np.float16)])
    return a, b, c


@kiln.jit
def half_ops(out, cmp, a, b, c):
    i = kiln.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[0, i] = x + y
        out[1, i] = x - y
        out[2, i] = x * y
        out[3, i] = -x
        out[4, i] = abs(x)
        out[5, i] = kiln.fp16.hfma(x, y, c[i])
        out[6, i] = kiln.fp16.hadd(x, y)
        out[7, i] = kiln.fp16.hmul(x, y)
        t = x
        t -= y
        out[8, i] = t
        cmp[0, i] = x < y
        cmp[1, i] = x <= y
        cmp[2, i] = x > y
        cmp[3, i] = x >= y
        cmp[4, i] = x == y
        cmp[5, i] = x != y
        cmp[6, i] = kiln.fp16.hne(x, y)


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    bad = np.flatnonzero(got[~nan].view(np.uint16) != want[~nan].view(np.uint16))
    assert bad.size == 0, (want[~nan][bad[:5]], got[~nan][bad[:5]])


def test_float16_operations_match_numpy_bit_for_bit(gpu=False):
    a, b, c = _operands(np.random.default_rng(3), 5000)
    out = np.zeros((9, a.size), np.float16)
    cmp = np.zeros((7, a.size), np.bool_)
    _launch(half_ops, a.size, [out, cmp], [a, b, c], gpu)
    with np.errstate(all="ignore"):
        exact = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
        want = [a + b, a - b, a * b, -a, abs(a), exact.astype(np.float16), a + b, a * b, a - b]
        for k, w in enumerate(want):
            _same_bits(out[k], w)
        for k, w in enumerate([a < b, a <= b, a > b, a >= b, a == b, a != b, a != b]):
            assert np.array_equal(cmp[k], w), k


@kiln.jit
def ints_to_half(out, i8, u8, i16, u16, i32, u32, i64, u64):
    i = kiln.grid(1)
    if i < i8.size:
        out[0, i] = i8[i]
        out[1, i] = u8[i]
        out[2, i] = i16[i]
        out[3, i] = u16[i]
        out[4, i] = i32[i]
        out[5, i] = u32[i]
        out[6, i] = i64[i]
        out[7, i] = u64[i]


def test_integers_to_float16_as_numpy(gpu=False):
    rng = np.random.default_rng(5)
    edge = [0, 1, -1, 2049, 2051, 65504, 65519, 65520, -65519, -65520, 100000,
            2 ** 31 - 1, -2 ** 31, 2 ** 63 - 1, -2 ** 63]
    vals = np.concatenate([np.array(edge, np.int64), rng.integers(-70000, 70000, 1000)])
    cols = []
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        cols.append(vals.astype(dt))
    out = np.zeros((8, vals.size), np.float16)
    _launch(ints_to_half, vals.size, [out], cols, gpu)
    with np.errstate(all="ignore"):
        for k, col in enumerate(cols):
            _same_bits(out[k], col.astype(np.float16))


@kiln.jit
def minmax(out, a, b):
    i = kiln.grid(1)
    if i < a.size:
        out[0, i] = max(a[i], b[i])
        out[1, i] = min(a[i], b[i])
        out[2, i] = max(a[i], b[i], 0.5)
        out[3, i] = min(b[i], a[i])


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_min_max_of_floats_ignore_nan(dt, gpu=False):
    s = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan], dt)
    a, b = np.repeat(s, s.size), np.tile(s, s.size)
    out = np.zeros((4, a.size), dt)
    _launch(minmax, a.size, [out], [a, b], gpu)
    _check_fminmax(out, a, b, dt)


def _check_fminmax(out, a, b, dt):
    mx, mn = np.fmax(a, b), np.fmin(a, b)
    for k, want in ((0, mx), (1, mn), (2, np.fmax(mx, dt(0.5))), (3, mn)):
        got = out[k]
        assert np.array_equal(np.isnan(got), np.isnan(want)), k
        assert np.array_equal(got[~np.isnan(want)], want[~np.isnan(want)]), k
    # -0.0 is less than 0.0: max of the two zeros is +0.0, min is -0.0, in either order
    zero = (a == 0) & (b == 0)
    assert not np.signbit(out[0][zero & ~(np.signbit(a) & np.signbit(b))]).any()
    assert np.signbit(out[1][zero & (np.signbit(a) | np.signbit(b))]).all()
    assert np.signbit(out[3][zero & (np.signbit(a) | np.signbit(b))]).all()


def test_min_max_nan_scalars_follow_fmax():
    @kiln.jit
    def k(out, x):
        out[0] = max(x, 1.0)
        out[1] = max(1.0, x)
        out[2] = min(x, x)
        out[3] = max(x, 3)       # with an int: float64, as Python's typing
        out[4] = min(2, x, 7.5)

    out = np.zeros(5)
    k[1, 1](out, math.nan)
    assert out[0] == 1.0 and out[1] == 1.0 and math.isnan(out[2])
    assert out[3] == 3.0 and out[4] == 2.0
