"""Kernels with explicit signatures: what `kiln precompile` builds ahead of time.

On a machine without a GPU:
    kiln precompile bench/gpu/aot_kernels.py --target cuda:sm_90 --target cpu
    kiln cache export aot.kiln --target cuda:sm_90
On the GPU machine, after `kiln cache import aot.kiln`, bench/gpu/aot_check.py runs
them and shows that nothing was compiled."""
import math

import kiln


@kiln.jit("void(float32[::1], float32[::1], float32[::1], float32)")
def saxpy(out, x, y, a):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@kiln.jit(device=True)
def cnd(d):
    k = 1.0 / (1.0 + 0.2316419 * abs(d))
    poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978
                                                                      + k * 1.330274429))))
    r = 0.3989422804014327 * math.exp(-0.5 * d * d) * poly
    return 1.0 - r if d > 0 else r


@kiln.jit("void(float32[::1], float32[::1], float32[::1], float32[::1], float32[::1], "
          "float32, float32)", fastmath=True)
def black_scholes(call, put, price, strike, years, rate, vol):
    i = kiln.grid(1)
    if i < call.size:
        s, x, t = price[i], strike[i], years[i]
        sq = math.sqrt(t)
        d1 = (math.log(s / x) + (rate + 0.5 * vol * vol) * t) / (vol * sq)
        d2 = d1 - vol * sq
        e = math.exp(-rate * t)
        call[i] = s * cnd(d1) - x * e * cnd(d2)
        put[i] = x * e * (1.0 - cnd(d2)) - s * (1.0 - cnd(d1))
