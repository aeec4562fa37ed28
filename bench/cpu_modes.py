"""kiln.compile's modes on the CPU target, side by side in one process:

1. a step of 6 small kernels (2^12 float64 elements, where the per-launch cost shows), eager
   against reduce-overhead (the recorded launches replayed from C), microseconds per kernel;
2. kiln.vectorize under max-autotune against default at 3 sizes (the search runs once per
   size bucket before timing), microseconds per call.

Medians of ROUNDS rounds.  PYTHONPATH=python .venv/bin/python bench/cpu_modes.py
"""
import os
import statistics
import time

import numpy as np

os.environ.setdefault("KILN_TIERS", "0")  # the optimised build from the first call
import kiln  # noqa: E402

ROUNDS = 7
K = 6


@kiln.jit
def fma(out, a, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def step(x, y, t, u):
    g = (x.size + 255) // 256
    fma[g, 256](t, 2.0, x, y)
    fma[g, 256](u, -1.0, t, x)
    fma[g, 256](t, 0.5, u, y)
    fma[g, 256](u, 1.5, t, t)
    fma[g, 256](t, -0.5, u, x)
    fma[g, 256](u, 1.0, t, y)
    return u


def per_call(call, reps):
    call()
    ts = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(reps):
            call()
        ts.append((time.perf_counter() - t0) / reps * 1e6)
    return statistics.median(ts)


rng = np.random.default_rng(0)
n = 1 << 12
x, y = rng.random(n), rng.random(n)
t, u = np.empty(n), np.empty(n)
ro = kiln.compile(step, mode="reduce-overhead")
want = step(x, y, t, u).copy()
assert np.allclose(ro(x, y, t, u), want) and np.allclose(ro(x, y, t, u), want)
e = per_call(lambda: step(x, y, t, u), 2000) / K
r = per_call(lambda: ro(x, y, t, u), 2000) / K
print(f"# A step of {K} kernels on 2^12 float64, us per kernel (median of {ROUNDS})\n")
print("| run | us / kernel | vs eager |")
print("| --- | ---: | ---: |")
print(f"| kiln eager | {e:.2f} | 1.00 |")
print(f"| kiln reduce-overhead (replay) | {r:.2f} | {e / r:.2f} |")


@kiln.vectorize
def poly(a, b):
    return (a * a * 0.5 + b * 3.0 - 1.0) * (a - b)


print("\n# max-autotune against default: kiln.vectorize, float64, us per call\n")
print("| size | default us | max-autotune us | speed-up | choice |")
print("| --- | ---: | ---: | ---: | --- |")
for bits in (12, 18, 22):
    m = 1 << bits
    a, b, out = rng.random(m), rng.random(m), np.empty(m)
    default = kiln.compile(lambda a, b, out: poly(a, b, out=out))
    tuned = kiln.compile(lambda a, b, out: poly(a, b, out=out), mode="max-autotune")
    tuned(a, b, out)
    choice = [v for k, v in kiln._autotune.kept() if "vectorize-cpu" in k and k.endswith(f"|{bits + 1}")]
    reps = max(5, (1 << 24) // m)
    td, tt = 0.0, 0.0
    for _ in range(2):  # alternate, so drift hits both
        td = per_call(lambda: default(a, b, out), reps)
        tt = per_call(lambda: tuned(a, b, out), reps)
    print(f"| 2^{bits} | {td:.1f} | {tt:.1f} | {td / tt:.2f} | {choice[0] if choice else '?'} |")
