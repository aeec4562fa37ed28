"""The host's share of small calls: kiln's path around a launch, timed without a GPU.

    KILN_CUDA_DRIVER=build/libkiln-fake-cuda.so KILN_TIERS=0 PYTHONPATH=python \
        .venv/bin/python bench/host_calls.py gpu    (kiln arrays, the fake driver's launches)
    KILN_TARGET=cpu KILN_TIERS=0 PYTHONPATH=python .venv/bin/python bench/host_calls.py cpu

Prints one line per call, its name and the median ns of 7 rounds (tab-separated), for
bench/ab.py-style comparisons of two trees (bench/RESULTS.md, session 25).
"""
import os, sys, time, statistics, warnings
import numpy as np
warnings.simplefilter("ignore")
import kiln
MODE = sys.argv[1]
def per_call(f, reps=5000, rounds=7):
    for _ in range(200): f()
    ts = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps): f()
        ts.append((time.perf_counter() - t0) / reps * 1e9)
    return statistics.median(ts)
rows = []
if MODE == "gpu":
    n = 1 << 16
    a = kiln.to_device(np.random.rand(n).astype(np.float32)); b = kiln.to_device(np.random.rand(n).astype(np.float32))
    out = kiln.device_array(n, np.float32)
    @kiln.vectorize
    def poly(x, y): return (x * x * 0.5 + y * 3.0 - 1.0) * (x - y)
    d = kiln.compile(lambda a, b, out: poly(a, b, out=out))
    t = kiln.compile(lambda a, b, out: poly(a, b, out=out), mode="max-autotune")
    for f in (d, t): f(a, b, out)
    poly(a, b, out=out)
    rows.append(("vectorize poly(a, b, out=out), kiln arrays 2^16", per_call(lambda: poly(a, b, out=out))))
    rows.append(("kiln.compile(default) of it", per_call(lambda: d(a, b, out))))
    rows.append(("kiln.compile(max-autotune) of it", per_call(lambda: t(a, b, out))))
    h = np.ones(16, np.float32); dd = kiln.to_device(h); o16 = np.empty_like(h)
    rows.append(("d.copy_to_host(out), 16 float32", per_call(lambda: dd.copy_to_host(o16))))
    @kiln.jit
    def fma(o, s, x, y):
        i = kiln.grid(1)
        if i < o.size:
            o[i] = s * x[i] + y[i]
    def step(x, y, t1, u):
        g = (x.size + 255) // 256
        for s in (2.0, -1.0, 0.5, 1.5, -0.5, 1.0):
            fma[g, 256](t1, s, x, y)
        return u
    bufs = [(kiln.to_device(np.ones(n, np.float32)), kiln.to_device(np.ones(n, np.float32)), kiln.device_array(n, np.float32), kiln.device_array(n, np.float32)) for _ in range(2)]
    r = kiln.compile(step, mode="reduce-overhead")
    r(*bufs[0]); r(*bufs[1])
    st = [0]
    def pp():
        st[0] ^= 1; r(*bufs[st[0]])
    rows.append(("reduce-overhead replay, 6 kernels, 2 buffer sets in turn", per_call(pp, reps=2000)))
else:
    @kiln.vectorize
    def poly(x, y): return (x * x * 0.5 + y * 3.0 - 1.0) * (x - y)
    a = np.random.rand(16).astype(np.float32); b = np.random.rand(16).astype(np.float32)
    poly(a, b)
    rows.append(("vectorize poly(a, b), NumPy 16 float32", per_call(lambda: poly(a, b))))
    @kiln.reduce
    def add(p, q): return p + q
    x = np.random.rand(16); add(x)
    rows.append(("kiln.reduce, NumPy 16 float64", per_call(lambda: add(x))))
    @kiln.guvectorize(["(float64[:], float64[:], float64[:])"], "(n),(n)->(n)")
    def gadd(p, q, o):
        for i in range(p.shape[0]):
            o[i] = p[i] + q[i]
    g1 = np.random.rand(64, 16); g2 = np.random.rand(64, 16); gadd(g1, g2)
    rows.append(("guvectorize, NumPy 64x16 float64", per_call(lambda: gadd(g1, g2), reps=2000)))
    @kiln.fuse
    def fz(p, q): return p * q + 1.0
    fz(g1, g2)
    rows.append(("kiln.fuse p * q + 1.0, NumPy 64x16", per_call(lambda: fz(g1, g2), reps=2000)))
for name, v in rows:
    print(f"{name}\t{v:.0f}")
