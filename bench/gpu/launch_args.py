"""Launch overhead by argument count on the GPU: each launcher called LAUNCHES times from a
plain loop (no lambda), against the C loop of the same launcher's packed arguments (the floor).

    PYTHONPATH=python python3 bench/gpu/launch_args.py
"""
import statistics, time, numpy as np, kiln
N = 1024
LAUNCHES = 20000

@kiln.jit
def k0():
    pass

@kiln.jit
def k1(a):
    i = kiln.grid(1)
    if i < a.size:
        a[i] = 1.0

@kiln.jit
def k3(a, b, c):
    i = kiln.grid(1)
    if i < a.size:
        c[i] = a[i] + b[i]

@kiln.jit
def k5(a, b, c, x, n):
    i = kiln.grid(1)
    if i < n:
        c[i] = a[i] + b[i] * x

a, b, c = (kiln.device_array(N, np.float32) for _ in range(3))
cases = {"k0": (k0, ()), "k1": (k1, (a,)), "k3": (k3, (a, b, c)), "k5": (k5, (a, b, c, 1.5, N)),
         "k5 ints": (k5, (a, b, c, 1.5, 7))}
for name, (k, args) in cases.items():
    ln = k[N // 256, 256]
    ln(*args)
    kiln.synchronize()
    fl, kl = [], []
    for r in range(7):
        fl.append(ln._raw_launches(LAUNCHES, *args) * 1e6)
        kiln.synchronize()
        t = time.perf_counter()
        for _ in range(LAUNCHES):
            ln(*args)
        kl.append((time.perf_counter() - t) / LAUNCHES * 1e6)
        kiln.synchronize()
    f, k_ = statistics.median(fl), statistics.median(kl)
    print(f"{name:8s} floor {f:.3f} us  kiln {k_:.3f} us  over {k_ - f:.3f} us  ratio {k_ / f:.3f}")
