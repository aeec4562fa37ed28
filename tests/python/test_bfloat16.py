"""bfloat16 (kiln.bfloat16, kiln.bf16: Numba's cuda.bf16) on the CPU target, against a
reference that rounds exact rational values (fractions.Fraction) by each rounding mode:
conversions from float32, float64 and integers in the four modes, to integers with
saturation, the arithmetic and its saturating and relu forms, bit casts, promotion, and
ml_dtypes arrays and scalars at the launch.  KILN_CHECK_CUDA=1 compiles every kernel here
for sm_80 and sm_90 with NVRTC too; the GPU runs them in test_gpu.py."""
import math
import struct
from fractions import Fraction

import numpy as np
import pytest

import kiln
from kiln import bf16
from kiln.bf16 import bfloat16

RN, RZ, RD, RU = range(4)


def ref_bits(q, mode=RN):
    """The bfloat16 bits of the exact value q (a Fraction, or ±inf/nan as a float)."""
    if isinstance(q, float) and math.isnan(q):
        return 0x7FC0
    if isinstance(q, float) and math.isinf(q):
        return 0x7F80 | (0x8000 if q < 0 else 0)
    if isinstance(q, float) and q == 0:  # keeps its sign
        return 0x8000 if math.copysign(1.0, q) < 0 else 0
    q = Fraction(q)
    neg = q < 0
    a = -q if neg else q
    s = 0x8000 if neg else 0
    if a == 0:
        return s
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    qe = max(e - 7, -133)
    m = a / Fraction(2) ** qe
    fl = m.numerator // m.denominator
    rem = m - fl
    if rem:
        if mode == RN:
            fl += rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl & 1)
        elif mode == RD:
            fl += neg
        elif mode == RU:
            fl += not neg
    bits = ((qe + 133) << 7) + fl
    if bits >= 0x7F80:
        toward_zero = mode == RZ or (mode == RD and not neg) or (mode == RU and neg)
        bits = 0x7F7F if toward_zero else 0x7F80
    return s | bits


def bits_value(b):
    return struct.unpack("<f", struct.pack("<I", (int(b) & 0xFFFF) << 16))[0]


def u16(a):
    return np.asarray(a).astype(np.int64) & 0xFFFF


# ---- kernels ------------------------------------------------------------------------------

@kiln.jit
def from_f32(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[0, i] = bf16.bfloat16_as_int16(bf16.float32_to_bfloat16_rn(x[i]))
        out[1, i] = bf16.bfloat16_as_int16(bf16.float32_to_bfloat16_rz(x[i]))
        out[2, i] = bf16.bfloat16_as_int16(bf16.float32_to_bfloat16_rd(x[i]))
        out[3, i] = bf16.bfloat16_as_int16(bf16.float32_to_bfloat16_ru(x[i]))
        out[4, i] = bf16.bfloat16_as_int16(bfloat16(x[i]))


@kiln.jit
def from_f64(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[0, i] = bf16.bfloat16_as_int16(bf16.float64_to_bfloat16(x[i]))
        out[1, i] = bf16.bfloat16_as_int16(bfloat16(x[i]))


@kiln.jit
def from_i64(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[0, i] = bf16.bfloat16_as_int16(bf16.int64_to_bfloat16_rn(x[i]))
        out[1, i] = bf16.bfloat16_as_int16(bf16.int64_to_bfloat16_rz(x[i]))
        out[2, i] = bf16.bfloat16_as_int16(bf16.int64_to_bfloat16_rd(x[i]))
        out[3, i] = bf16.bfloat16_as_int16(bf16.int64_to_bfloat16_ru(x[i]))
        out[4, i] = bf16.bfloat16_as_int16(bfloat16(x[i]))


@kiln.jit
def from_u64(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[0, i] = bf16.bfloat16_as_int16(bf16.uint64_to_bfloat16_rn(x[i]))
        out[1, i] = bf16.bfloat16_as_int16(bf16.uint64_to_bfloat16_rz(x[i]))
        out[2, i] = bf16.bfloat16_as_int16(bf16.uint64_to_bfloat16_rd(x[i]))
        out[3, i] = bf16.bfloat16_as_int16(bf16.uint64_to_bfloat16_ru(x[i]))
        out[4, i] = bf16.bfloat16_as_int16(bfloat16(x[i]))


@kiln.jit
def widen(out, bits):
    i = kiln.grid(1)
    if i < bits.size:
        out[i] = bf16.bfloat16_to_float32(bf16.int16_as_bfloat16(bits[i]))


@kiln.jit
def to_ints(i16, i32, u32, i64, u64, i8, u8, bits):
    i = kiln.grid(1)
    if i < bits.size:
        a = bf16.uint16_as_bfloat16(bits[i])
        i16[0, i] = bf16.bfloat16_to_int16_rn(a)
        i16[1, i] = bf16.bfloat16_to_int16_rz(a)
        i16[2, i] = bf16.bfloat16_to_int16_rd(a)
        i16[3, i] = bf16.bfloat16_to_int16_ru(a)
        i32[0, i] = bf16.bfloat16_to_int32_rn(a)
        i32[1, i] = bf16.bfloat16_to_int32_rz(a)
        i32[2, i] = bf16.bfloat16_to_int32_rd(a)
        i32[3, i] = bf16.bfloat16_to_int32_ru(a)
        u32[0, i] = bf16.bfloat16_to_uint32_rn(a)
        u32[1, i] = bf16.bfloat16_to_uint32_rz(a)
        u32[2, i] = bf16.bfloat16_to_uint32_rd(a)
        u32[3, i] = bf16.bfloat16_to_uint32_ru(a)
        i64[0, i] = bf16.bfloat16_to_int64_rn(a)
        i64[1, i] = bf16.bfloat16_to_int64_ru(a)
        u64[0, i] = bf16.bfloat16_to_uint64_rn(a)
        u64[1, i] = bf16.bfloat16_to_uint64_rd(a)
        i8[i] = bf16.bfloat16_to_int8_rz(a)
        u8[i] = bf16.bfloat16_to_uint8_rz(a)


@kiln.jit
def arith(out, flags, xa, xb, xc):
    i = kiln.grid(1)
    if i < xa.size:
        a = bf16.uint16_as_bfloat16(xa[i])
        b = bf16.uint16_as_bfloat16(xb[i])
        c = bf16.uint16_as_bfloat16(xc[i])
        out[0, i] = bf16.bfloat16_as_uint16(bf16.hadd(a, b))
        out[1, i] = bf16.bfloat16_as_uint16(bf16.hsub(a, b))
        out[2, i] = bf16.bfloat16_as_uint16(bf16.hmul(a, b))
        out[3, i] = bf16.bfloat16_as_uint16(bf16.hdiv(a, b))
        out[4, i] = bf16.bfloat16_as_uint16(bf16.hfma(a, b, c))
        out[5, i] = bf16.bfloat16_as_uint16(a + b)
        out[6, i] = bf16.bfloat16_as_uint16(a * b)
        out[7, i] = bf16.bfloat16_as_uint16(a / b)
        out[8, i] = bf16.bfloat16_as_uint16(bf16.hadd_rn(a, b))
        out[9, i] = bf16.bfloat16_as_uint16(bf16.hmul_rn(a, b))
        flags[0, i] = bf16.hlt(a, b)
        flags[1, i] = a < b
        flags[2, i] = bf16.heq(a, b)
        flags[3, i] = bf16.hge(a, b)


def _random_bf16(rng, n, lo=-20, hi=20):
    """Finite bfloat16 values with exponents in [lo, hi], as bits."""
    e = rng.integers(lo, hi, n)
    m = rng.integers(0, 128, n)
    s = rng.integers(0, 2, n)
    return ((s << 15) | ((e + 127) << 7) | m).astype(np.uint16)


def _launch(k, *args, n):
    k[(n + 127) // 128, 128](*args)


# ---- conversions ---------------------------------------------------------------------------

def test_every_bfloat16_widens_exactly():
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.int16)
    out = np.zeros(bits.size, np.float32)
    _launch(widen, out, bits, n=bits.size)
    want = (bits.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32))


def _f32_cases():
    """float32 values at, around and between bfloat16 values: every midpoint of a sample,
    one float32 step either side, subnormals, the top of the range, inf and NaN."""
    rng = np.random.default_rng(7)
    b = np.concatenate([_random_bf16(rng, 300, -133, 127), np.array([0x7F7F, 0x0001, 0x0080, 0], np.uint16)])
    f = (b.astype(np.uint32) << 16).view(np.float32)
    mid = ((b.astype(np.uint32) << 16) | 0x8000).view(np.float32)
    v = np.concatenate([f, mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(0)),
                        np.array([3.4e38, np.inf, 1e-45], np.float32)])
    return np.concatenate([v, -v])


def test_float32_to_bfloat16_in_every_mode():
    x = _f32_cases()
    out = np.zeros((5, x.size), np.int16)
    _launch(from_f32, out, x, n=x.size)
    for i, v in enumerate(x):
        q = float(v) if not np.isfinite(v) or v == 0 else Fraction(float(v))
        for mode in range(4):
            assert u16(out[mode, i]) == ref_bits(q, mode), (v, mode, hex(u16(out[mode, i])))
        assert out[4, i] == out[RN, i]
    nan = np.array([np.nan, -np.nan], np.float32)
    out = np.zeros((5, 2), np.int16)
    _launch(from_f32, out, nan, n=2)
    assert all(math.isnan(bits_value(b)) for b in out.ravel())


def test_float64_rounds_once():
    rng = np.random.default_rng(3)
    b = _random_bf16(rng, 200, -133, 127).astype(np.uint64)
    f = (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    # the midpoint plus a float64 step: rounding through float32 first would land on the
    # midpoint and go to even; rounding once goes up
    step = np.abs(f) * 2.0 ** -40
    x = np.concatenate([f + np.abs(f) * 2.0 ** -9 + step, f, [1e300, -1e300, 2.0 ** -140, 0.0]])
    out = np.zeros((2, x.size), np.int16)
    _launch(from_f64, out, x, n=x.size)
    for i, v in enumerate(x):
        want = ref_bits(Fraction(float(v)) if v else float(v))
        assert u16(out[0, i]) == want and u16(out[1, i]) == want, (v, hex(u16(out[0, i])))


@pytest.mark.parametrize("signed", [True, False])
def test_integers_to_bfloat16_in_every_mode(signed):
    rng = np.random.default_rng(5)
    if signed:
        x = np.concatenate([rng.integers(-2**62, 2**62, 200), [0, 1, -1, 255, 257, -257, 789,
                            2**63 - 1, -2**63, 2**24 + 1, -(2**31)]]).astype(np.int64)
    else:
        x = np.concatenate([rng.integers(0, 2**63, 200).astype(np.uint64) * np.uint64(2),
                            np.array([0, 1, 255, 257, 789, 2**64 - 1, 2**63 + 1], np.uint64)])
    out = np.zeros((5, x.size), np.int16)
    _launch(from_i64 if signed else from_u64, out, x, n=x.size)
    for i, v in enumerate(x):
        for mode in range(4):
            assert u16(out[mode, i]) == ref_bits(Fraction(int(v)), mode), (int(v), mode)
        assert out[4, i] == out[RN, i]


def test_bfloat16_to_integers_round_and_saturate():
    vals = [1.5, 2.5, -1.5, -2.5, 0.0, 3.0, 70000.0, -70000.0, 3e9, -3e9, 1e20, -1e20,
            127.5, 300.0, -300.0, math.inf, -math.inf, math.nan]
    bits = np.array([ref_bits(Fraction(v) if math.isfinite(v) else v) for v in vals], np.uint16)
    n = bits.size
    i16, i32, u32 = np.zeros((4, n), np.int16), np.zeros((4, n), np.int32), np.zeros((4, n), np.uint32)
    i64, u64 = np.zeros((2, n), np.int64), np.zeros((2, n), np.uint64)
    i8, u8 = np.zeros(n, np.int8), np.zeros(n, np.uint8)
    _launch(to_ints, i16, i32, u32, i64, u64, i8, u8, bits, n=n)

    def want(v, mode, lo, hi):
        if math.isnan(v):
            return 0
        if math.isfinite(v):
            f = Fraction(bits_value(ref_bits(Fraction(v))))
            r = {RN: round(f), RZ: math.trunc(f), RD: math.floor(f), RU: math.ceil(f)}[mode]
        else:
            r = hi if v > 0 else lo
        return min(max(r, lo), hi)

    for i, v in enumerate(vals):
        for mode in range(4):
            assert i16[mode, i] == want(v, mode, -2**15, 2**15 - 1), (v, mode)
            assert i32[mode, i] == want(v, mode, -2**31, 2**31 - 1), (v, mode)
            assert u32[mode, i] == want(v, mode, 0, 2**32 - 1), (v, mode)
        assert i64[0, i] == want(v, RN, -2**63, 2**63 - 1)
        assert i64[1, i] == want(v, RU, -2**63, 2**63 - 1)
        assert u64[0, i] == want(v, RN, 0, 2**64 - 1)
        assert u64[1, i] == want(v, RD, 0, 2**64 - 1)
        assert i8[i] == want(v, RZ, -128, 127) and u8[i] == want(v, RZ, 0, 255), v


# ---- arithmetic ----------------------------------------------------------------------------

def test_arithmetic_is_rounded_once():
    rng = np.random.default_rng(11)
    n = 400
    xa, xb, xc = (_random_bf16(rng, n) for _ in range(3))
    out = np.zeros((10, n), np.uint16)
    flags = np.zeros((4, n), np.bool_)
    _launch(arith, out, flags, xa, xb, xc, n=n)
    for i in range(n):
        a, b, c = (Fraction(bits_value(x[i])) for x in (xa, xb, xc))
        want = [ref_bits(a + b), ref_bits(a - b), ref_bits(a * b), ref_bits(a / b),
                ref_bits(a * b + c), ref_bits(a + b), ref_bits(a * b), ref_bits(a / b),
                ref_bits(a + b), ref_bits(a * b)]
        got = [int(out[k, i]) for k in range(10)]
        # a zero result: -0 and +0 are both right for a - a
        assert [g & 0x7FFF if w & 0x7FFF == 0 else g for g, w in zip(got, want)] == \
               [w & 0x7FFF if w & 0x7FFF == 0 else w for w in want], (a, b, c)
        assert list(flags[:, i]) == [a < b, a < b, a == b, a >= b]


@kiln.jit
def special(out, ints, flags):
    a = bfloat16(1.5)
    b = bfloat16(0.75)
    nanv = bfloat16(float("nan"))
    out[0] = kiln.float32(bf16.hadd_sat(a, b))
    out[1] = kiln.float32(bf16.hsub_sat(b, a))
    out[2] = kiln.float32(bf16.hmul_sat(a, b))
    out[3] = kiln.float32(bf16.hfma_sat(a, b, a))
    out[4] = kiln.float32(bf16.hfma_relu(bfloat16(-1.5), bfloat16(2.0), bfloat16(0.0)))
    out[5] = kiln.float32(bf16.hfma_relu(a, b, b))
    out[6] = kiln.float32(bf16.hmax_nan(nanv, b))
    out[7] = kiln.float32(bf16.hmin_nan(b, nanv))
    out[8] = kiln.float32(bf16.hmax(nanv, b))
    out[9] = kiln.float32(bf16.hmin(a, b))
    out[10] = kiln.float32(bf16.hneg(a))
    out[11] = kiln.float32(bf16.habs(bf16.hneg(b)))
    out[12] = kiln.float32(bf16.hsqrt(bfloat16(2.0)))
    out[13] = kiln.float32(bf16.hrcp(bfloat16(3.0)))
    out[14] = kiln.float32(bf16.hadd_sat(nanv, a))
    out[15] = kiln.float32(bf16.hfma_relu(nanv, a, a))
    out[16] = kiln.float32(math.sqrt(bfloat16(2.0)))
    out[17] = kiln.float32(bf16.htrunc(bfloat16(-3.75)))
    ints[0] = bf16.hisinf(bfloat16(float("inf")))
    ints[1] = bf16.hisinf(bfloat16(float("-inf")))
    ints[2] = bf16.hisinf(a)
    flags[0] = bf16.hisnan(nanv)
    flags[1] = bf16.hisnan(a)
    flags[2] = bf16.hne(nanv, nanv)


def test_saturating_relu_nan_and_math_functions():
    out = np.zeros(18, np.float32)
    ints = np.zeros(3, np.int32)
    flags = np.zeros(3, np.bool_)
    special[1, 1](out, ints, flags)
    sqrt2 = bits_value(ref_bits(Fraction(math.sqrt(2.0))))
    assert list(out[:6]) == [1.0, 0.0, 1.0, 1.0, 0.0, 1.875]
    assert math.isnan(out[6]) and math.isnan(out[7])
    assert list(out[8:12]) == [0.75, 0.75, -1.5, 0.75]
    assert out[12] == sqrt2 and out[16] == sqrt2
    assert out[13] == bits_value(ref_bits(Fraction(1, 3)))
    assert out[14] == 0.0 and math.isnan(out[15]) and out[17] == -3.0
    assert list(ints) == [1, -1, 0]
    assert list(flags) == [True, False, True]


@kiln.jit
def promote(out):
    b = bfloat16(1.0)
    out[0] = b + kiln.int8(1) + bfloat16(2.0 ** -8)     # bfloat16: the 2**-8 is lost
    out[1] = b + kiln.int16(1) + bfloat16(2.0 ** -8)    # float32: kept
    out[2] = b + kiln.float16(1.0) + bfloat16(2.0 ** -8)  # float32
    out[3] = b + 1 + bfloat16(2.0 ** -8)                # a Python int keeps bfloat16
    out[4] = b + 2.0 ** -9                               # a Python float keeps bfloat16


def test_promotion_follows_ml_dtypes():
    out = np.zeros(5, np.float64)
    promote[1, 1](out)
    assert list(out) == [2.0, 2.00390625, 2.00390625, 2.0, 1.0]


def test_constants_round_to_nearest_even():
    @kiln.jit
    def k(out):
        out[0] = bfloat16(3.14)
        out[1] = bfloat16(1.0 + 2.0 ** -8)          # a tie: to even (1.0)
        out[2] = bfloat16(1.0 + 3 * 2.0 ** -8)      # a tie: to even (1.015625)
        out[3] = bfloat16(1e39)                      # past the largest: inf
        out[4] = bfloat16(float("nan"))

    out = np.zeros(5, np.float32)
    k[1, 1](out)
    assert out[0] == bits_value(ref_bits(Fraction(3.14)))
    assert list(out[1:4]) == [1.0, 1.015625, np.inf] and math.isnan(out[4])


# ---- the host ------------------------------------------------------------------------------

def test_names_and_support():
    assert kiln.bfloat16 is bf16.bfloat16 is bf16.nv_bfloat16 is kiln.types.bfloat16
    assert isinstance(kiln.bfloat16, kiln.types.Float) and str(kiln.bfloat16) == "bfloat16"
    assert kiln.is_bfloat16_supported() is True  # no GPU here: the CPU target has it
    assert kiln.bfloat16[::1] == kiln.types.Array(kiln.bfloat16, 1, "C")
    with pytest.raises(TypeError, match="only be used inside a kiln kernel"):
        bf16.hadd(1, 2)


def test_bad_uses_are_compile_errors():
    @kiln.jit
    def cplx(out):
        out[0] = kiln.float32(bf16.hadd(1j, bfloat16(1.0)))

    @kiln.jit
    def text(out):
        out[0] = float("one")

    @kiln.jit
    def arity(out):
        out[0] = kiln.float32(bf16.hfma(bfloat16(1.0), bfloat16(1.0)))

    out = np.zeros(1, np.float32)
    with pytest.raises(kiln.CompileError, match="real number"):
        cplx[1, 1](out)
    with pytest.raises(kiln.CompileError, match="no strings to convert"):
        text[1, 1](out)
    with pytest.raises(kiln.CompileError, match="argument"):
        arity[1, 1](out)


def test_signature_text_and_ptx():
    ptx, _ = kiln.compile_ptx(lambda a, x: None, "void(bfloat16[::1], bfloat16)", cc=(9, 0))
    assert ".entry" in ptx

    def k(a, x):
        a[0] = bf16.hmul(a[0], x)

    for cc in ((8, 0), (9, 0)):
        ptx, _ = kiln.compile_ptx(k, "void(bfloat16[::1], bfloat16)", cc=cc)
        assert "cvt.rn.bf16.f32" in ptx  # native bfloat16 rounding from sm_80


def test_ml_dtypes_arrays_and_scalars():
    ml_dtypes = pytest.importorskip("ml_dtypes")

    @kiln.jit
    def k(x, y, out, s):
        i = kiln.grid(1)
        if i < x.size:
            out[i] = 2 * x[i] + 4 * y[i] + ml_dtypes.bfloat16(3.0) + s

    x = np.asarray([1, 2, 3, 4, 5.5], dtype=ml_dtypes.bfloat16)
    y = np.arange(5)
    out = np.empty(5, ml_dtypes.bfloat16)
    k[1, 32](x, y, out, ml_dtypes.bfloat16(0.5))
    assert (out == 2 * x + 4 * y + 3.5).all()
    assert kiln.typeof(x) == kiln.bfloat16[::1] and kiln.from_dtype(x.dtype) is kiln.bfloat16
    assert kiln.bfloat16(3.14159) == ml_dtypes.bfloat16(3.14159)
    v = np.linspace(-3, 3, 257, dtype=np.float64)
    out = np.empty(v.size, ml_dtypes.bfloat16)

    @kiln.jit
    def narrow(out, v):
        i = kiln.grid(1)
        if i < v.size:
            out[i] = v[i]

    narrow[3, 128](out, v)
    assert np.array_equal(out.view(np.uint16), v.astype(ml_dtypes.bfloat16).view(np.uint16))
