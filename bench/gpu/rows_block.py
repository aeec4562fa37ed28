"""kiln.fuse's GPU row reduction at 128..1024 threads per block over seven row shapes (issue
11: the data behind _fuse._rows_block).  Each launch's result is checked against the
fused call's; us per launch, median of 20 intervals of 10 launches; * marks the fastest.

    PYTHONPATH=python python3 bench/gpu/rows_block.py
"""
import os, sys
import numpy as np
import cupy as cp
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import gpu_time, copy_ceiling
import kiln

def rows(x, y):
    return np.sum(np.exp(-x * x / 2) * np.where(y > 0, y, 0.1 * y), axis=-1)

_, ceil = copy_ceiling()
print(f"copy ceiling {ceil:.0f} GB/s\n")
print("| shape | 128 | 256 | 512 | 1024 | (us, median of 20 x 10 launches) |\n| --- | ---: | ---: | ---: | ---: | --- |")
rng = np.random.default_rng(1)
for R, C in ((16384, 4096), (1024, 65536), (64, 1 << 20), (65536, 1024), (262144, 256), (4096, 4096), (132 * 8, 8192)):
    X = cp.asarray(rng.standard_normal((R, C), dtype=np.float32))
    Y = cp.asarray(rng.standard_normal((R, C), dtype=np.float32))
    fr = kiln.fuse(rows)
    want = cp.asnumpy(fr(X, Y))
    k = next(iter(fr._specs.values())).kernel
    kx, ky = kiln.as_cuda_array(X), kiln.as_cuda_array(Y)
    o = kiln.device_array((R,), np.float32)
    ts = []
    for B in (128, 256, 512, 1024):
        k[R, B](o, kx, ky, C)
        np.testing.assert_allclose(o.copy_to_host(), want, rtol=1e-4, atol=1e-3)
        ts.append(gpu_time(lambda: [k[R, B](o, kx, ky, C) for _ in range(10)], 20) / 10 * 1e6)
    best = min(ts)
    print(f"| {R} x {C} | " + " | ".join(f"{t:.1f}{'*' if t == best else ''}" for t in ts) + " | |", flush=True)
    del X, Y
