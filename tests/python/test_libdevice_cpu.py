"""kiln.libdevice (Numba's cuda.libdevice) on the CPU target: rt_libdevice_cpu.h's C
functions under libdevice's names.  Every function of the table runs on the host (rcp64h,
which has no CPU version, is a CompileError), on tier 0 and in the optimised build; the
directed roundings are exact (checked against Python's exact rational arithmetic), the
conversions saturate as PTX's cvt does, and the functions libm lacks are checked against
identities and known values."""
import math
from fractions import Fraction

import numpy as np
import pytest

import kiln
from kiln import _libdevice_table, libdevice

NP = {"i": np.int32, "u": np.uint32, "l": np.int64, "m": np.uint64, "f": np.float32,
      "d": np.float64}
SAMPLE = {"i": 3, "u": 5, "l": 7, "m": 11, "f": 0.375, "d": 0.625}


def _call_all_kernel():
    """One kernel that calls every libdevice function but rcp64h with sample arguments and
    stores each result (and each pointer result) as float64, in table order."""
    lines, k = [], 0
    for name, ret, params, outs in _libdevice_table.TABLE:
        if name == "rcp64h":
            continue
        args = ", ".join(repr(SAMPLE[p]) if p in "fd" else f"np.{NP[p].__name__}({SAMPLE[p]})"
                         for j, p in enumerate(params) if not (outs >> j) & 1)
        nres = (ret != "v") + bin(outs).count("1")
        if nres == 1:
            lines.append(f"    out[{k}] = libdevice.{name}({args})")
        else:
            names = ", ".join(f"r{j}" for j in range(nres))
            lines.append(f"    {names} = libdevice.{name}({args})")
            lines += [f"    out[{k + j}] = r{j}" for j in range(nres)]
        k += nres
    src = "def call_all(out):\n" + "\n".join(lines) + "\n"
    ns = {"libdevice": libdevice, "np": np}
    exec(compile(src, "<call_all>", "exec"), ns)
    return ns["call_all"], k


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_every_libdevice_function_runs_on_the_cpu(monkeypatch, tiers):
    from kiln import _kiln

    monkeypatch.setenv("KILN_TIERS", tiers)
    loads = _kiln.tier_stats()["tier0_loads"]
    fn, n = _call_all_kernel()
    out = np.full(n, np.nan)
    kiln.jit(target="cpu", cache=False)(fn)[1, 1](out)
    assert n > 330 and np.isfinite(out).sum() > 300
    if tiers == "tcc" and _kiln.tier_stats()["available"]:
        assert _kiln.tier_stats()["tier0_loads"] == loads + 1  # tier 0 compiled it
    # a few against Python's own
    names = [t[0] for t in _libdevice_table.TABLE if t[0] != "rcp64h"]
    at = {}
    k = 0
    for name, ret, params, outs in _libdevice_table.TABLE:
        if name == "rcp64h":
            continue
        at[name] = k
        k += (ret != "v") + bin(outs).count("1")
    assert out[at["cos"]] == math.cos(0.625) and out[at["sinf"]] == np.float32(math.sin(0.375))
    assert out[at["popc"]] == 2 and out[at["brev"]] == -1073741824 and out[at["clz"]] == 30
    assert out[at["frexp"]] == 0.625 and out[at["frexp"] + 1] == 0
    assert out[at["sad"]] == 3 and out[at["hadd"]] == 3
    assert out[at["byte_perm"]] == 0x03030300  # selector 3: bytes 3, 0, 0, 0 of (y << 32 | x)
    assert len(names) == 340


def test_rcp64h_has_no_cpu_version():
    @kiln.jit(target="cpu")
    def k(out, x):
        out[0] = libdevice.rcp64h(x[0])

    with pytest.raises(kiln.CompileError, match="rcp64h\\(\\) has no CPU version"):
        k[1, 1](np.zeros(1), np.ones(1))


def _exact_round(q, mode, bits):
    """The float nearest q (a Fraction) in the direction mode ('rd', 'ru', 'rz', 'rn'),
    for float64 (bits 53) or float32 (bits 24); normal results only."""
    if q == 0:
        return 0.0
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = math.floor(math.log2(a.numerator) - math.log2(a.denominator))
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    ulp = Fraction(2) ** (e - bits + 1)
    lo = (a // ulp) * ulp
    hi = lo if lo == a else lo + ulp
    if mode == "rn":
        r = lo if (a - lo < hi - a or (a - lo == hi - a and (lo / ulp) % 2 == 0)) else hi
    elif mode == "rz":
        r = lo
    else:
        r = lo if (mode == "rd") == (sign > 0) else hi
    return float(sign * r)


def test_directed_roundings_are_exact():
    ops = {"dadd": lambda a, b: a + b, "dsub": lambda a, b: a - b, "dmul": lambda a, b: a * b,
           "ddiv": lambda a, b: a / b}
    modes = ("rd", "ru", "rz", "rn")

    @kiln.jit(target="cpu")
    def k(out, a, b):
        i = kiln.grid(1)
        if i < a.size:
            x, y = a[i], b[i]
            out[i, 0] = libdevice.dadd_rd(x, y)
            out[i, 1] = libdevice.dadd_ru(x, y)
            out[i, 2] = libdevice.dadd_rz(x, y)
            out[i, 3] = libdevice.dadd_rn(x, y)
            out[i, 4] = libdevice.dsub_rd(x, y)
            out[i, 5] = libdevice.dsub_ru(x, y)
            out[i, 6] = libdevice.dsub_rz(x, y)
            out[i, 7] = libdevice.dsub_rn(x, y)
            out[i, 8] = libdevice.dmul_rd(x, y)
            out[i, 9] = libdevice.dmul_ru(x, y)
            out[i, 10] = libdevice.dmul_rz(x, y)
            out[i, 11] = libdevice.dmul_rn(x, y)
            out[i, 12] = libdevice.ddiv_rd(x, y)
            out[i, 13] = libdevice.ddiv_ru(x, y)
            out[i, 14] = libdevice.ddiv_rz(x, y)
            out[i, 15] = libdevice.ddiv_rn(x, y)
            out[i, 16] = libdevice.fadd_rd(np.float32(x), np.float32(y))
            out[i, 17] = libdevice.fadd_ru(np.float32(x), np.float32(y))
            out[i, 18] = libdevice.fmul_rz(np.float32(x), np.float32(y))
            out[i, 19] = libdevice.fdiv_ru(np.float32(x), np.float32(y))
            out[i, 20] = libdevice.dsqrt_ru(x * x + 1.0)
            out[i, 21] = libdevice.dsqrt_rd(x * x + 1.0)

    rng = np.random.default_rng(5)
    a = np.concatenate([rng.normal(size=60) * 10.0 ** rng.integers(-8, 8, 60), [1.0, -1.0, 3.0]])
    b = np.concatenate([rng.normal(size=60) * 10.0 ** rng.integers(-8, 8, 60), [2.0 ** -60, 2.0 ** -60, 7.0]])
    out = np.zeros((a.size, 22))
    k[1, 128](out, a, b)
    for i in range(a.size):
        x, y = Fraction(a[i]), Fraction(b[i])
        for j, op in enumerate(ops.values()):
            for m, mode in enumerate(modes):
                assert out[i, 4 * j + m] == _exact_round(op(x, y), mode, 53), (i, j, mode)
        fx, fy = Fraction(float(np.float32(a[i]))), Fraction(float(np.float32(b[i])))
        assert out[i, 16] == _exact_round(fx + fy, "rd", 24)
        assert out[i, 17] == _exact_round(fx + fy, "ru", 24)
        assert out[i, 18] == _exact_round(fx * fy, "rz", 24)
        assert out[i, 19] == _exact_round(fx / fy, "ru", 24)
        s = Fraction(float(np.float64(a[i]) * np.float64(a[i]) + 1.0))
        up, down = out[i, 20], out[i, 21]
        assert Fraction(down) ** 2 <= s <= Fraction(up) ** 2
        assert up == down or np.nextafter(down, np.inf) == up
    # the sum 1 + 2**-60 is not a double: the modes land on either side of it
    assert out[-3, 1] == np.nextafter(1.0, 2.0) and out[-3, 0] == 1.0 and out[-3, 2] == 1.0
    assert out[-2, 0] == -1.0 and out[-2, 2] == np.nextafter(-1.0, 0.0)


def test_conversions_saturate_and_round_as_named():
    @kiln.jit(target="cpu")
    def k(o, x):
        i = kiln.grid(1)
        if i < x.size:
            o[i, 0] = libdevice.double2int_rd(x[i])
            o[i, 1] = libdevice.double2int_ru(x[i])
            o[i, 2] = libdevice.double2int_rz(x[i])
            o[i, 3] = libdevice.double2int_rn(x[i])
            o[i, 4] = libdevice.double2uint_rn(x[i])
            o[i, 5] = libdevice.double2ll_rd(x[i])
            o[i, 6] = libdevice.float2int_ru(np.float32(x[i]))

    x = np.array([2.5, -2.5, 3.5, -0.5, 1e10, -1e10, np.nan, np.inf, -np.inf, 1e300])
    o = np.zeros((x.size, 7), np.int64)
    k[1, 16](o, x)
    imax, imin = 2 ** 31 - 1, -2 ** 31
    assert o[:, 0].tolist() == [2, -3, 3, -1, imax, imin, 0, imax, imin, imax]
    assert o[:, 1].tolist() == [3, -2, 4, 0, imax, imin, 0, imax, imin, imax]
    assert o[:, 2].tolist() == [2, -2, 3, 0, imax, imin, 0, imax, imin, imax]
    assert o[:, 3].tolist() == [2, -2, 4, 0, imax, imin, 0, imax, imin, imax]
    assert o[:, 4].tolist() == [2, 0, 4, 0, 2 ** 32 - 1, 0, 0, 2 ** 32 - 1, 0, 2 ** 32 - 1]
    assert o[:, 5].tolist()[:4] == [2, -3, 3, -1] and o[9, 5] == 2 ** 63 - 1
    assert o[:, 6].tolist()[:4] == [3, -2, 4, 0]

    @kiln.jit(target="cpu")
    def big(o, u, s):
        o[0] = libdevice.ull2double_rd(u[0])
        o[1] = libdevice.ull2double_ru(u[0])
        o[2] = libdevice.ll2float_rz(s[0])
        o[3] = libdevice.ll2float_ru(s[0])
        o[4] = libdevice.double2float_rd(1.0 + 2.0 ** -40)
        o[5] = libdevice.double2float_ru(1.0 + 2.0 ** -40)

    o = np.zeros(6)
    u = np.array([2 ** 64 - 1], np.uint64)
    s = np.array([2 ** 40 + 1], np.int64)
    big[1, 1](o, u, s)
    assert o[0] == float(2 ** 64 - 2 ** 11) and o[1] == 2.0 ** 64
    assert o[2] == 2.0 ** 40 and o[3] == float(np.nextafter(np.float32(2.0 ** 40), np.float32(np.inf)))
    assert o[4] == 1.0 and o[5] == float(np.nextafter(np.float32(1.0), np.float32(2.0)))


def test_the_functions_libm_lacks():
    @kiln.jit(target="cpu")
    def k(o, y):
        i = kiln.grid(1)
        if i < y.size:
            o[i, 0] = libdevice.erf(libdevice.erfinv(y[i]))
            o[i, 1] = libdevice.erfc(libdevice.erfcinv(1.0 - y[i]))
            o[i, 2] = libdevice.normcdf(libdevice.normcdfinv((y[i] + 1.0) / 2.0))
            o[i, 3] = libdevice.erfcx(y[i] * 40.0)
            o[i, 4] = libdevice.sinpi(y[i] * 8.0)
            o[i, 5] = libdevice.cospi(y[i] * 8.0)

    y = np.array([-0.999, -0.5, -0.1, 0.0, 0.25, 0.5, 0.75, 0.999999])
    o = np.zeros((y.size, 6))
    k[1, 8](o, y)
    np.testing.assert_allclose(o[:, 0], y, rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(o[:, 1], 1.0 - y, rtol=1e-13)
    np.testing.assert_allclose(o[:, 2], (y + 1.0) / 2.0, rtol=1e-13)
    x = y * 40.0
    small = np.abs(x) < 25
    np.testing.assert_allclose(o[small, 3], [math.exp(v * v) * math.erfc(v) for v in x[small]],
                               rtol=1e-12)
    big = x >= 25
    np.testing.assert_allclose(o[big, 3], [1 / (v * math.sqrt(math.pi)) * (1 - 1 / (2 * v * v) + 3 / (4 * v ** 4))
                                           for v in x[big]], rtol=1e-6)
    assert np.isinf(o[x <= -27, 3]).all()  # 2 exp(x^2) overflows
    assert o[5, 4] == 0.0 and o[5, 5] == 1.0 and o[4, 4] == 0.0 and o[4, 5] == 1.0  # 4 and 2
    assert o[1, 4] == 0.0 and o[1, 5] == 1.0  # -4

    @kiln.jit(target="cpu")
    def bessel(o):
        o[0] = libdevice.cyl_bessel_i0(0.0)
        o[1] = libdevice.cyl_bessel_i0(1.0)
        o[2] = libdevice.cyl_bessel_i1(1.0)
        o[3] = libdevice.cyl_bessel_i0(50.0)
        o[4] = libdevice.cyl_bessel_i1(-2.0)

    o = np.zeros(5)
    bessel[1, 1](o)
    np.testing.assert_allclose(o, [1.0, 1.2660658777520082, 0.5651591039924851,
                                   2.932553783849336e20, -1.5906368546373291], rtol=1e-12)
