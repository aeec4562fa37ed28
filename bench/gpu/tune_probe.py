"""Why max-autotune's vectorize step can cost more than default's at 2^16 (issue 11): the
two steps timed in alternating order, and how many calls each leaves to the Python path
(Vectorized._call) rather than ufunc.c's memoised launch.

    PYTHONPATH=python python3 bench/gpu/tune_probe.py
"""
import statistics
import time

import numpy as np

import kiln
from kiln import _ufunc

ROUNDS = 9


@kiln.vectorize
def poly(x, y):
    return (x * x * 0.5 + y * 3.0 - 1.0) * (x - y)


calls = {"n": 0}
_orig = _ufunc.Vectorized._call


def counted(self, *a, **k):
    calls["n"] += 1
    return _orig(self, *a, **k)


_ufunc.Vectorized._call = counted


def per_call(fn, reps):
    fn()
    kiln.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    kiln.synchronize()
    return (time.perf_counter() - t0) / reps * 1e6


rng = np.random.default_rng(0)
print("| size | order | default us | max-autotune us | tuned / default | Python calls default | Python calls tuned |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for bits in (16, 20):
    n = 1 << bits
    a = kiln.to_device(rng.random(n, dtype=np.float32))
    b = kiln.to_device(rng.random(n, dtype=np.float32))
    out = kiln.device_array(n, np.float32)
    default = kiln.compile(lambda a, b, out: poly(a, b, out=out))
    tuned = kiln.compile(lambda a, b, out: poly(a, b, out=out), mode="max-autotune")
    tuned(a, b, out)
    default(a, b, out)
    reps = max(20, (1 << 26) // n)
    for order in ("default first", "tuned first"):
        td, tt, cd, ct = [], [], 0, 0
        for _ in range(ROUNDS):
            pair = [("d", default), ("t", tuned)]
            if order == "tuned first":
                pair.reverse()
            for name, f in pair:
                calls["n"] = 0
                us = per_call(lambda: f(a, b, out), reps)
                (td if name == "d" else tt).append(us)
                if name == "d":
                    cd += calls["n"]
                else:
                    ct += calls["n"]
        d, t = statistics.median(td), statistics.median(tt)
        print(f"| 2^{bits} | {order} | {d:.2f} | {t:.2f} | {t / d:.2f} | {cd} | {ct} |")
