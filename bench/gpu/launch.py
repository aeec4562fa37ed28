"""Launch overhead on the GPU, side by side: host time per asynchronous launch of a
kernel with 5 arguments (3 device arrays, a float, an int), median over rounds of
LAUNCHES launches each.  Prints a markdown table.

    PYTHONPATH=python python3 bench/gpu/launch.py
"""
import ctypes
import statistics
import sys
import time

import numpy as np

import kiln

LAUNCHES = 10000
ROUNDS = 7
FLOOR = "cuLaunchKernel alone (C loop, the floor)"
EMPTY = "the timing loop alone (an empty Python call, 5 arguments)"
N = 1024
rows = []


floor_round = None  # one round of the floor (driver_floor), us per launch
floors = []         # every round of it, beside each row's


def per_launch(launch, sync):
    """Median us per launch over ROUNDS rounds, each next to a round of the floor (drift
    in the machine's speed hits both); returns it and the median of those floor rounds."""
    for _ in range(200):
        launch()
    sync()
    meds, beside = [], []
    for _ in range(ROUNDS):
        if floor_round:
            beside.append(floor_round())
        t = time.perf_counter()
        for _ in range(LAUNCHES):
            launch()
        meds.append((time.perf_counter() - t) / LAUNCHES * 1e6)
        sync()
    floors.extend(beside)
    return statistics.median(meds), statistics.median(beside) if beside else None


def bench(name, make):
    try:
        launch, sync = make()
        rows.append((name, *per_launch(launch, sync)))
    except Exception as e:  # a peer that is not installed is reported, not fatal
        rows.append((name, f"n/a ({type(e).__name__}: {str(e)[:60]})", None))


@kiln.jit
def k5(a, b, c, x, n):
    i = kiln.grid(1)
    if i < n:
        c[i] = a[i] + b[i] * x


def kiln_reused():
    a, b, c = (kiln.device_array(N, np.float32) for _ in range(3))
    launcher = k5[N // 256, 256]
    launcher(a, b, c, 1.5, N)
    return (lambda: launcher(a, b, c, 1.5, N)), kiln.synchronize


def kiln_each():
    a, b, c = (kiln.device_array(N, np.float32) for _ in range(3))
    k5[N // 256, 256](a, b, c, 1.5, N)
    return (lambda: k5[N // 256, 256](a, b, c, 1.5, N)), kiln.synchronize


def raw_driver():
    """cuLaunchKernel through ctypes with prepared parameters: the floor from Python."""
    from kiln import _compile, _kiln

    a, b, c = (kiln.device_array(N, np.float32) for _ in range(3))
    k5[N // 256, 256](a, b, c, 1.5, N)
    cuda = ctypes.CDLL("libcuda.so.1")
    src = r'''extern "C" __global__ void f(const float *a, const float *b, float *c, float x, long long n) {
        long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i] * x; }'''
    image = _kiln.nvrtc_compile(src, (0, 0, 0), _compile._arch_of(0))[0]
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert cuda.cuModuleLoadData(ctypes.byref(mod), image) == 0
    assert cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"f") == 0
    vals = [ctypes.c_uint64(a._ptr), ctypes.c_uint64(b._ptr), ctypes.c_uint64(c._ptr),
            ctypes.c_float(1.5), ctypes.c_int64(N)]
    params = (ctypes.c_void_p * 5)(*[ctypes.addressof(v) for v in vals])
    launch = cuda.cuLaunchKernel
    launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    g, t = N // 256, 256
    return (lambda: launch(fn, g, 1, 1, t, 1, 1, 0, None, params, None)), kiln.synchronize


def cupy_raw():
    import cupy as cp

    k = cp.RawKernel(r'''extern "C" __global__ void f(const float *a, const float *b, float *c, float x, long long n) {
        long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i] * x; }''', "f")
    a, b, c = (cp.zeros(N, cp.float32) for _ in range(3))
    x, n = np.float32(1.5), np.int64(N)
    k((N // 256,), (256,), (a, b, c, x, n))
    return (lambda: k((N // 256,), (256,), (a, b, c, x, n))), cp.cuda.Device().synchronize


def numba_cuda():
    np.row_stack = np.vstack
    from numba import cuda

    @cuda.jit
    def f(a, b, c, x, n):
        i = cuda.grid(1)
        if i < n:
            c[i] = a[i] + b[i] * x

    a, b, c = (cuda.device_array(N, np.float32) for _ in range(3))
    f[N // 256, 256](a, b, c, 1.5, N)
    return (lambda: f[N // 256, 256](a, b, c, 1.5, N)), cuda.synchronize


def triton_kernel():
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def f(a, b, c, x, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(c + i, tl.load(a + i, mask=m) + tl.load(b + i, mask=m) * x, mask=m)

    a, b, c = (torch.zeros(N, device="cuda") for _ in range(3))
    f[(N // 256,)](a, b, c, 1.5, N, BLOCK=256)
    return (lambda: f[(N // 256,)](a, b, c, 1.5, N, BLOCK=256)), torch.cuda.synchronize


def torch_eager():
    import torch

    a, b, c = (torch.zeros(N, device="cuda") for _ in range(3))
    return (lambda: torch.add(a, b, alpha=1.5, out=c)), torch.cuda.synchronize


def driver_floor():
    """cuLaunchKernel called from a C loop with the arguments packed once: one round of
    it, measured beside every round of every row."""
    global floor_round
    a, b, c = (kiln.device_array(N, np.float32) for _ in range(3))
    launcher = k5[N // 256, 256]
    launcher(a, b, c, 1.5, N)

    def one():
        v = launcher._raw_launches(LAUNCHES, a, b, c, 1.5, N) * 1e6
        kiln.synchronize()
        return v
    one()
    floor_round = one


def empty_call():
    """What the Python loop around each launch costs: the same call shape, no work."""
    a, b, c = (kiln.device_array(N, np.float32) for _ in range(3))

    def nothing(a, b, c, x, n):
        pass
    return (lambda: nothing(a, b, c, 1.5, N)), kiln.synchronize


def main():
    try:
        driver_floor()
    except Exception as e:
        rows.append((FLOOR, f"n/a ({e})", None))
    bench(EMPTY, empty_call)
    bench("raw cuLaunchKernel (ctypes)", raw_driver)
    bench("kiln k[g, b](...) (launcher reused)", kiln_reused)
    bench("kiln k[g, b](...) (written out each call)", kiln_each)
    bench("torch eager op (torch.add out=)", torch_eager)
    bench("CuPy RawKernel", cupy_raw)
    bench("Triton", triton_kernel)
    bench("Numba-CUDA", numba_cuda)
    # every row but the floor calls its launch through the same Python loop and lambda;
    # net of that loop is the launch's own host cost, which the floor is compared with
    # and each row against the floor's rounds measured beside its own
    if floors:
        rows.insert(0, (FLOOR, statistics.median(floors), None))
    loop = {r[0]: r[1] for r in rows}.get(EMPTY)
    print(f"\n# GPU launch overhead: host us per launch, 5 arguments, median of {ROUNDS} x {LAUNCHES}"
          " (each round of a row beside a round of the floor)\n")
    print("| launch | us | net of the timing loop | the floor beside it | over the floor |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, v, floor in rows:
        if not isinstance(v, float):
            print(f"| {name} | {v} | | | |")
        elif name in (FLOOR, EMPTY) or not isinstance(loop, float):
            print(f"| {name} | {v:.2f} | | | |")
        else:
            net = v - loop
            ratio = f"{net / floor:.2f}x" if isinstance(floor, float) else ""
            fl = f"{floor:.2f}" if isinstance(floor, float) else ""
            print(f"| {name} | {v:.2f} | {net:.2f} | {fl} | {ratio} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
