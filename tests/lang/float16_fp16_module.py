# kiln.fp16 (Numba's cuda.fp16) and math functions on float16: computed in float32 and
# rounded to float16, compared with NumPy's float16 results
import math

import numpy as np
import kiln
from kiln import fp16


@kiln.jit
def ops(out, c, a, b, z):
    i = kiln.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[0, i] = fp16.hadd(x, y)
        out[1, i] = fp16.hsub(x, y)
        out[2, i] = fp16.hmul(x, y)
        out[3, i] = kiln.fp16.hdiv(x, y)
        out[4, i] = fp16.hfma(x, y, z[i])
        out[5, i] = fp16.hneg(x)
        out[6, i] = fp16.habs(y)
        out[7, i] = fp16.hmax(x, y)
        out[8, i] = fp16.hmin(x, y)
        out[9, i] = fp16.hmul(x, 2)          # a Python int converted to float16
        out[10, i] = fp16.hmul(x, 2.5)
        c[0, i] = fp16.heq(x, y)
        c[1, i] = fp16.hne(x, x)
        c[2, i] = fp16.hgt(x, y)
        c[3, i] = fp16.hge(x, y)
        c[4, i] = fp16.hlt(x, y)
        c[5, i] = fp16.hle(x, y)


@kiln.jit
def unary(out, a):
    i = kiln.grid(1)
    if i < a.size:
        x = a[i]
        out[0, i] = fp16.hsqrt(x)
        out[1, i] = fp16.hceil(x)
        out[2, i] = fp16.hfloor(x)
        out[3, i] = fp16.htrunc(x)
        out[4, i] = fp16.hrint(x)
        out[5, i] = fp16.hrcp(x)
        out[6, i] = math.sqrt(x)
        out[7, i] = math.floor(x)
        out[8, i] = np.ceil(x)


@kiln.jit
def transcendental(out, a):
    i = kiln.grid(1)
    if i < a.size:
        x = a[i]
        out[0, i] = fp16.hsin(x)
        out[1, i] = fp16.hcos(x)
        out[2, i] = fp16.hlog(x)
        out[3, i] = fp16.hlog2(x)
        out[4, i] = fp16.hlog10(x)
        out[5, i] = fp16.hexp(x / np.float16(8))
        out[6, i] = fp16.hexp2(x / np.float16(8))
        out[7, i] = fp16.hexp10(x / np.float16(32))
        out[8, i] = fp16.hrsqrt(x)
        out[9, i] = math.sin(x)
        out[10, i] = math.exp(x / np.float16(8))
        out[11, i] = math.log(x)


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    return int(np.sum(~((got == want) | (np.isnan(got) & np.isnan(want)))))


def ulps(got, want):
    """The largest distance in float16 steps (NaN and inf must match exactly)."""
    g = got.view(np.int16).astype(np.int64)
    w = want.view(np.int16).astype(np.int64)
    fin = np.isfinite(want)
    assert same(got[~fin], want[~fin]) == 0
    return int(np.max(np.abs(g - w)[fin]))


def main():
    rng = np.random.default_rng(3)
    n = 2048
    a = (rng.standard_normal(n) * 20).astype(np.float16)
    b = (rng.standard_normal(n) * 4).astype(np.float16)
    b[b == 0] = 1
    z = (rng.standard_normal(n) * 50).astype(np.float16)
    out = np.zeros((11, n), np.float16)
    c = np.zeros((6, n), np.bool_)
    ops[(n + 127) // 128, 128](out, c, a, b, z)
    fma = (a.astype(np.float64) * b + z).astype(np.float16)
    with np.errstate(all="ignore"):
        want = [a + b, a - b, a * b, a / b, fma, -a, abs(b), np.maximum(a, b), np.minimum(a, b),
                a * np.float16(2), a * np.float16(2.5)]
    print("fp16 arithmetic, differing:", [same(out[k], want[k]) for k in range(11)])
    print("fp16 comparisons, differing:", same(c[0], a == b), same(c[1], a != a), same(c[2], a > b),
          same(c[3], a >= b), same(c[4], a < b), same(c[5], a <= b))
    # CUDA's __hmax/__hmin: of two zeros, max +0 and min -0; a NaN gives the other (hunt19 4)
    zx = np.array([0.0, -0.0, np.nan, 1.0], np.float16)
    zy = np.array([-0.0, 0.0, 3.0, np.nan], np.float16)
    zo = np.zeros((11, 4), np.float16)
    ops[1, 4](zo, np.zeros((6, 4), np.bool_), zx, zy, zx)
    print("hmax, hmin of zeros and NaN:", zo[7].tolist(), np.signbit(zo[7]).tolist(),
          zo[8].tolist(), np.signbit(zo[8]).tolist())

    p = np.abs(a) + np.float16(0.5)
    u = np.zeros((9, n), np.float16)
    unary[(n + 127) // 128, 128](u, p)
    with np.errstate(all="ignore"):
        want = [np.sqrt(p), np.ceil(p), np.floor(p), np.trunc(p), np.rint(p), np.reciprocal(p),
                np.sqrt(p), np.floor(p), np.ceil(p)]
    print("exact functions, differing:", [same(u[k], want[k]) for k in range(9)])

    t = np.zeros((12, n), np.float16)
    transcendental[(n + 127) // 128, 128](t, p)
    with np.errstate(all="ignore"):
        want = [np.sin(p), np.cos(p), np.log(p), np.log2(p), np.log10(p), np.exp(p / np.float16(8)),
                np.exp2(p / np.float16(8)), np.float16(10) ** (p / np.float16(32)), p ** np.float16(-0.5),
                np.sin(p), np.exp(p / np.float16(8)), np.log(p)]
    print("float32 functions rounded, within 1 step of NumPy:", all(ulps(t[k], want[k]) <= 1 for k in range(12)))
    print(transcendental.inspect_types(file=False), end="")
