"""Runs bench/gpu/aot_kernels.py on the GPU from an imported bundle and prints the
cache's statistics: with the bundle imported, `compiles` is 0 (NVRTC never ran).

    KILN_CACHE_DIR=... kiln cache import aot.kiln
    KILN_CACHE_DIR=... PYTHONPATH=python python3 bench/gpu/aot_check.py
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kiln  # noqa: E402
import aot_kernels as k  # noqa: E402  (explicit signatures: loaded at import)

n = 1 << 20
rng = np.random.default_rng()
x = rng.random(n, dtype=np.float32)
y = rng.random(n, dtype=np.float32)
out = kiln.device_array(n, np.float32)
k.saxpy[(n + 255) // 256, 256](out, kiln.to_device(x), kiln.to_device(y), np.float32(2))
np.testing.assert_allclose(out.copy_to_host(), 2 * x + y, rtol=1e-6)

price = rng.uniform(5, 30, n).astype(np.float32)
strike = rng.uniform(1, 100, n).astype(np.float32)
years = rng.uniform(0.25, 10, n).astype(np.float32)
call = kiln.device_array(n, np.float32)
put = kiln.device_array(n, np.float32)
k.black_scholes[(n + 255) // 256, 256](call, put, kiln.to_device(price), kiln.to_device(strike),
                                       kiln.to_device(years), np.float32(0.02), np.float32(0.3))
p, s, t = price.astype(np.float64), strike.astype(np.float64), years.astype(np.float64)
d1 = (np.log(p / s) + (0.02 + 0.045) * t) / (0.3 * np.sqrt(t))
d2 = d1 - 0.3 * np.sqrt(t)
cnd = np.vectorize(lambda d: 0.5 * (1 + math.erf(d / math.sqrt(2))))
want = p * cnd(d1) - s * np.exp(-0.02 * t) * cnd(d2)
np.testing.assert_allclose(call.copy_to_host(), want, atol=2e-3 * want.max())
st = kiln.cache.stats()
print(json.dumps({"compiles": st["compiles"], "disk_hits": st["disk"]["hits"],
                  "entries": st["disk"]["entries"], "signatures": [k.saxpy.signatures,
                                                                    k.black_scholes.signatures]}))
sys.exit(0 if st["compiles"] == 0 and st["disk"]["hits"] == 2 else 1)
