"""kiln demo: Black-Scholes on 2**22 float32 options, checked against NumPy.

Runs on the best available target (the CPU when there is no GPU) and prints
the compile time and the steady-state time.
"""
import math
import time

import numpy as np

import kiln

RISKFREE = 0.02
VOLATILITY = 0.30


@kiln.jit(device=True)
def cnd(d):
    A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    K = 1.0 / (1.0 + 0.2316419 * abs(d))
    ret = 0.3989422804014327 * math.exp(-0.5 * d * d) * (
        K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    if d > 0:
        ret = 1.0 - ret
    return ret


@kiln.jit
def black_scholes(call, put, price, strike, t, r, v):
    i = kiln.grid(1)
    if i < price.size:
        s, x, tt = price[i], strike[i], t[i]
        sqrt_t = math.sqrt(tt)
        d1 = (math.log(s / x) + (r + 0.5 * v * v) * tt) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        exp_rt = math.exp(-r * tt)
        call[i] = s * cnd(d1) - x * exp_rt * cnd(d2)
        put[i] = x * exp_rt * (1.0 - cnd(d2)) - s * (1.0 - cnd(d1))


def reference(price, strike, t, r, v):
    from math import erf
    p, x, t = (a.astype(np.float64) for a in (price, strike, t))
    cnd = np.vectorize(lambda d: 0.5 * (1.0 + erf(d / math.sqrt(2.0))))
    sqrt_t = np.sqrt(t)
    d1 = (np.log(p / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    e = np.exp(-r * t)
    return p * cnd(d1) - x * e * cnd(d2), x * e * (1 - cnd(d2)) - p * (1 - cnd(d1))


def main():
    n = 1 << 22
    rng = np.random.default_rng()
    price = rng.uniform(5.0, 30.0, n).astype(np.float32)
    strike = rng.uniform(1.0, 100.0, n).astype(np.float32)
    t = rng.uniform(0.25, 10.0, n).astype(np.float32)
    call = np.empty(n, np.float32)
    put = np.empty(n, np.float32)
    r, v = np.float32(RISKFREE), np.float32(VOLATILITY)
    threads = 256
    blocks = (n + threads - 1) // threads

    t0 = time.perf_counter()
    black_scholes[blocks, threads](call, put, price, strike, t, r, v)
    first = time.perf_counter() - t0
    # on the CPU the first calls run tier 0 while the optimised build runs beside them
    # (docs/architecture.md, "Tiers"): the steady state is the last 10 of 30 calls
    times = []
    for _ in range(30):
        t0 = time.perf_counter()
        black_scholes[blocks, threads](call, put, price, strike, t, r, v)
        times.append(time.perf_counter() - t0)
    steady = sorted(times[-10:])[5]

    m = 1 << 14  # the float64 reference on a sample
    rc, rp = reference(price[:m], strike[:m], t[:m], float(r), float(v))
    err = max(np.max(np.abs(call[:m] - rc) / np.maximum(np.abs(rc), 1.0)),
              np.max(np.abs(put[:m] - rp) / np.maximum(np.abs(rp), 1.0)))
    target = black_scholes.signatures[0]
    print(f"kiln {kiln.__version__}: Black-Scholes on {n} float32 options ({target})")
    print(f"  first call (compile + run): {first * 1e3:8.1f} ms")
    print(f"  steady state (median of the last 10 of 30 calls): {steady * 1e3:7.2f} ms  "
          f"({5 * 4 * n / steady / 1e9:.1f} GB/s effective)")
    print(f"  max relative error vs NumPy float64: {err:.2e}  ->  {'OK' if err < 1e-4 else 'WRONG'}")
    if err >= 1e-4:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
