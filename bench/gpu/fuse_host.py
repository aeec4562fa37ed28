"""kiln.fuse's host cost (issue 11): the rows expression end to end against its kernel
launched alone at 1, 10 and 50 calls a batch, then the host time per call of the 6-op
chain on small arrays (kiln and CuPy arguments), with a profile of where it goes.

    PYTHONPATH=python python3 bench/gpu/fuse_host.py
"""
import os, sys, time, cProfile, pstats, io
import numpy as np
import cupy as cp
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import gpu_time
import kiln

def rows(x, y):
    return np.sum(np.exp(-x * x / 2) * np.where(y > 0, y, 0.1 * y), axis=-1)
def chain(x, y):
    return np.exp(x * y + 0.5) * x - y / 3.0

rng = np.random.default_rng(1)
X = cp.asarray(rng.standard_normal((1 << 14, 1 << 12), dtype=np.float32))
Y = cp.asarray(rng.standard_normal((1 << 14, 1 << 12), dtype=np.float32))
fr = kiln.fuse(rows)
fr(X, Y)
spec = next(iter(fr._specs.values()))
k = spec.kernel
o = kiln.device_array((1 << 14,), np.float32)
kx, ky = kiln.as_cuda_array(X), kiln.as_cuda_array(Y)
argv = [o, kx, ky, 1 << 12]
print("rows kernel args", spec.extra, spec.params if hasattr(spec, 'params') else '')
for B in (1, 10, 50):
    t_e2e = gpu_time(lambda: [fr(X, Y) for _ in range(B)], 20) / B
    t_k = gpu_time(lambda: [k[1 << 14, 256](*argv) for _ in range(B)], 20) / B
    print(f"batch {B}: kiln.fuse end to end {t_e2e*1e6:.1f} us, its kernel through kiln's launch {t_k*1e6:.1f} us")
# host time per call, small arrays (2^16), cupy and kiln arrays
for label, a, b in (("cupy 2^16", cp.ones(1 << 16, cp.float32), cp.ones(1 << 16, cp.float32)),
                    ("kiln 2^16", kiln.to_device(np.ones(1 << 16, np.float32)), kiln.to_device(np.ones(1 << 16, np.float32))),
                    ("cupy 256x256", cp.ones((256, 256), cp.float32), cp.ones((256, 256), cp.float32))):
    fc = kiln.fuse(chain)
    fc(a, b)
    kiln.synchronize()
    for _ in range(2):
        t = time.perf_counter()
        for _ in range(5000):
            fc(a, b)
        kiln.synchronize()
        print(f"{label}: kiln.fuse chain {((time.perf_counter() - t) / 5000) * 1e6:.2f} us per call (host-bound)")
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(5000):
        fc(a, b)
    pr.disable()
    kiln.synchronize()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(14)
    print(s.getvalue())
