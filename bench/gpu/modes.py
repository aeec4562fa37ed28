"""reduce-overhead on the GPU, side by side: one step of 6 small elementwise kernels on
2^16-element float32 arrays, run STEPS times back to back.  Rows: kiln eager (6 launches
from Python), kiln.compile(mode="reduce-overhead") (one CUDA graph: the same buffers, two
sets taking turns, or 32 sets, whose nodes are set at every call), a CUDA graph captured
by hand from CuPy kernels, CuPy eager, and torch.compile(mode="reduce-overhead") of the
same step (which fuses the 6 operations into fewer kernels; its row says so).  Reported: microseconds per kernel (per step / 6), host
time of the calls alone and wall time including the GPU, medians over ROUNDS.

    PYTHONPATH=python python3 bench/gpu/modes.py
"""
import math
import statistics
import sys
import time

import numpy as np

import kiln

N = 1 << 16
STEPS = 2000
ROUNDS = 7
K = 6
rows = []


@kiln.jit
def fma(out, a, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def kiln_step(x, y, t, u):
    g = (x.size + 255) // 256
    fma[g, 256](t, 2.0, x, y)
    fma[g, 256](u, -1.0, t, x)
    fma[g, 256](t, 0.5, u, y)
    fma[g, 256](u, 1.5, t, t)
    fma[g, 256](t, -0.5, u, x)
    fma[g, 256](u, 1.0, t, y)
    return u


def measure(call, sync):
    for _ in range(50):
        call()
    sync()
    host, wall = [], []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(STEPS):
            call()
        t1 = time.perf_counter()
        sync()
        t2 = time.perf_counter()
        host.append((t1 - t0) / STEPS / K * 1e6)
        wall.append((t2 - t0) / STEPS / K * 1e6)
    return statistics.median(host), statistics.median(wall)


def row(name, make, note=""):
    try:
        call, sync = make()
        h, w = measure(call, sync)
        rows.append((name, f"{h:.2f}", f"{w:.2f}", note))
    except Exception as e:  # a peer that is missing is reported, not fatal
        rows.append((name, "n/a", "n/a", f"{type(e).__name__}: {str(e)[:70]}"))


rng = np.random.default_rng(0)
xh = rng.random(N, dtype=np.float32)
yh = rng.random(N, dtype=np.float32)
x, y = kiln.to_device(xh), kiln.to_device(yh)
t, u = kiln.device_array(N, np.float32), kiln.device_array(N, np.float32)
want = None


def check(got):
    global want
    r = got.copy_to_host() if hasattr(got, "copy_to_host") else np.asarray(got)
    if want is None:
        want = r
    assert np.allclose(r, want, rtol=1e-5), "results differ between rows"


def make_eager():
    check(kiln_step(x, y, t, u))
    return (lambda: kiln_step(x, y, t, u)), kiln.synchronize


def make_graph():
    f = kiln.compile(kiln_step, mode="reduce-overhead")
    check(f(x, y, t, u))
    check(f(x, y, t, u))
    assert f.records[0].graph
    return (lambda: f(x, y, t, u)), kiln.synchronize


def make_graph_new_buffers(sets=2):
    """Buffer sets taken in turn: 2 recur (each gets its graph copy, no node set), 32
    exceed the 16 sets a record remembers (every call sets the changed nodes)."""
    f = kiln.compile(kiln_step, mode="reduce-overhead")
    bufs = [(kiln.to_device(xh), kiln.to_device(yh), kiln.device_array(N, np.float32),
             kiln.device_array(N, np.float32)) for _ in range(sets)]
    check(f(*bufs[0]))
    check(f(*bufs[1]))
    state = [0]

    def call():
        state[0] = (state[0] + 1) % sets
        f(*bufs[state[0]])

    return call, kiln.synchronize


def cupy_kernels():
    import cupy as cp
    k = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 out",
                             "out = a * x + y", "kiln_bench_fma")
    cx, cy = cp.asarray(xh), cp.asarray(yh)
    ct, cu = cp.empty(N, cp.float32), cp.empty(N, cp.float32)

    def step():
        k(np.float32(2.0), cx, cy, ct)
        k(np.float32(-1.0), ct, cx, cu)
        k(np.float32(0.5), cu, cy, ct)
        k(np.float32(1.5), ct, ct, cu)
        k(np.float32(-0.5), cu, cx, ct)
        k(np.float32(1.0), ct, cy, cu)
        return cu

    return cp, step


def make_cupy_eager():
    cp, step = cupy_kernels()
    check(cp.asnumpy(step()))
    return step, cp.cuda.Device().synchronize


def make_cupy_graph():
    cp, step = cupy_kernels()
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        step()                      # compiled outside the capture
        s.begin_capture()
        out = step()
        g = s.end_capture()
    g.launch(s)
    s.synchronize()
    check(cp.asnumpy(out))
    return (lambda: g.launch(s)), s.synchronize


def make_torch():
    import torch

    def step(x, y):
        t = 2.0 * x + y
        u = -1.0 * t + x
        t = 0.5 * u + y
        u = 1.5 * t + t
        t = -0.5 * u + x
        return 1.0 * t + y

    tx, ty = torch.as_tensor(xh, device="cuda"), torch.as_tensor(yh, device="cuda")
    f = torch.compile(step, mode="reduce-overhead")
    for _ in range(3):
        out = f(tx, ty)
    check(out.cpu().numpy())
    return (lambda: f(tx, ty)), torch.cuda.synchronize


row("kiln eager (6 launches)", make_eager)
row("kiln reduce-overhead (graph, same buffers)", make_graph)
row("kiln reduce-overhead (graph, two buffer sets taking turns)", make_graph_new_buffers)
row("kiln reduce-overhead (graph, 32 buffer sets in turn: nodes set each call)",
    lambda: make_graph_new_buffers(32))
row("CuPy eager (6 ElementwiseKernels)", make_cupy_eager)
row("CuPy, CUDA graph captured by hand", make_cupy_graph)
row("torch.compile(mode='reduce-overhead')", make_torch,
    "fuses the 6 operations; per step / 6 for comparison")

# ---- max-autotune against default: vectorize at 3 sizes ---------------------------------

@kiln.vectorize
def poly(x, y):
    return (x * x * 0.5 + y * 3.0 - 1.0) * (x - y)


def time_call(call, reps):
    call()
    kiln.synchronize()
    ts = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(reps):
            call()
        kiln.synchronize()
        ts.append((time.perf_counter() - t0) / reps * 1e6)
    return statistics.median(ts)


tune_rows = []
for bits in (16, 20, 24):
    n = 1 << bits
    a = kiln.to_device(rng.random(n, dtype=np.float32))
    b = kiln.to_device(rng.random(n, dtype=np.float32))
    out = kiln.device_array(n, np.float32)
    default = kiln.compile(lambda a, b, out: poly(a, b, out=out))
    tuned = kiln.compile(lambda a, b, out: poly(a, b, out=out), mode="max-autotune")
    tuned(a, b, out)                                  # the search (once per size bucket)
    choice = [v for k, v in kiln._autotune.kept() if k.endswith(f"|{bits + 1}")]
    reps = max(20, (1 << 26) // n)
    td, tt = time_call(lambda: default(a, b, out), reps), time_call(lambda: tuned(a, b, out), reps)
    tune_rows.append((f"2^{bits}", f"{td:.2f}", f"{tt:.2f}", f"{td / tt:.2f}",
                      choice[0] if choice else "?"))

@kiln.reduce
def add(p, q):
    return p + q


red_rows = []
for bits in (20, 24, 28):
    n = 1 << bits
    a = kiln.to_device(rng.random(n, dtype=np.float32))
    res = kiln.device_array(1, np.float32)
    default = kiln.compile(lambda a, r: add(a, res=r))
    tuned = kiln.compile(lambda a, r: add(a, res=r), mode="max-autotune")
    tuned(a, res)
    choice = [v for k, v in kiln._autotune.kept() if k.startswith("autotune|reduce-gpu|")
              and k.endswith(f"|{bits + 1}")]
    reps = max(20, (1 << 28) // n)
    td, tt = time_call(lambda: default(a, res), reps), time_call(lambda: tuned(a, res), reps)
    red_rows.append((f"2^{bits}", f"{td:.2f}", f"{tt:.2f}", f"{td / tt:.2f}",
                     choice[0] if choice else "?"))

print(f"# A step of {K} kernels on 2^{N.bit_length() - 1} float32, {STEPS} steps, median of "
      f"{ROUNDS} rounds\n")
print("| run | host us / kernel | wall us / kernel | note |")
print("| --- | --- | --- | --- |")
for r in rows:
    print("| " + " | ".join(r) + " |")
sys.stdout.flush()

# ---- max-autotune where the block size matters: a compute-bound ufunc on small arrays ----
# 256 threads a block fill fewer multiprocessors than the GPU has when the array is small;
# the search may take fewer threads a block (more blocks)


@kiln.vectorize
def heavy(x):
    s = x
    for _ in range(4096):
        s = math.sin(s * 2.9 + x)
    return s


heavy_rows = []
for bits in (13, 14, 15):
    n = 1 << bits
    a = kiln.to_device(rng.random(n, dtype=np.float32))
    out = kiln.device_array(n, np.float32)
    default = kiln.compile(lambda a, out: heavy(a, out=out))
    tuned = kiln.compile(lambda a, out: heavy(a, out=out), mode="max-autotune")
    tuned(a, out)
    want = out.copy_to_host()
    default(a, out)
    assert np.array_equal(out.copy_to_host(), want), "tuned heavy differs from default"
    choice = [v for k, v in kiln._autotune.kept() if "heavy" in k and k.endswith(f"|{bits + 1}")]
    td, tt = time_call(lambda: default(a, out), 200), time_call(lambda: tuned(a, out), 200)
    heavy_rows.append((f"2^{bits}", f"{td:.2f}", f"{tt:.2f}", f"{td / tt:.2f}",
                       choice[0] if choice else "?"))

print("\n# max-autotune against default: kiln.vectorize, float32, us per call (median)\n")
print("| size | default us | max-autotune us | speed-up | choice |")
print("| --- | --- | --- | --- | --- |")
for r in tune_rows:
    print("| " + " | ".join(r) + " |")

print("\n# max-autotune against default: kiln.reduce (sum, float32, result on the GPU), us per call\n")
print("| size | default us | max-autotune us | speed-up | choice |")
print("| --- | --- | --- | --- | --- |")
for r in red_rows:
    print("| " + " | ".join(r) + " |")

print("\n# max-autotune against default: a compute-bound kiln.vectorize (4096 sin steps an "
      "element), float32, us per call (median)\n")
print("| size | default us | max-autotune us | speed-up | choice |")
print("| --- | --- | --- | --- | --- |")
for r in heavy_rows:
    print("| " + " | ".join(r) + " |")
