"""The wide entry's vector path on the GPU (issue 13 point 1; src/emit/vecplan.h): the issue
11 6-op chain `np.exp(x * y + 0.5) * x - y / 3.0` over 2^14 x 2^12 float32 as kiln.fuse
(on CuPy, kiln and torch arrays) and as a kiln.jit kernel (aligned, and on a[1:] views,
whose pointers are not 16-byte aligned: element loads on the same positions), the chain
with b one row broadcast (the 2-D kernel, no vector path), copy kernels of three widths,
and torch.compile on the chain, each against the device-to-device copy ceiling of the
same run.  Times are CUDA-event medians of 20 intervals of 10 calls (timing.py).

    cd bench/gpu && PYTHONPATH=../../python python3 vec.py
"""
import math

import numpy as np

import cupy as cp

from fuse import COLS, ROWS, bias, chain, chain_torch
from timing import copy_ceiling, gpu_time

import kiln

BATCH, REPS = 10, 20


def host(g):
    if hasattr(g, "copy_to_host"):
        return g.copy_to_host()
    if isinstance(g, cp.ndarray):
        return cp.asnumpy(g)
    return g.cpu().numpy()


@kiln.jit
def chain_kernel(out, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = math.exp(x[i] * y[i] + 0.5) * x[i] - y[i] / 3.0


@kiln.jit
def copy_kernel(out, x):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = x[i]


def main():
    _, ceiling = copy_ceiling()
    print(f"# the vector path: copy ceiling {ceiling:.0f} GB/s, kiln {kiln.__version__}\n")
    print("| what | ms | GB/s | of copy ceiling |")
    print("| --- | ---: | ---: | ---: |")

    def row(label, f, args, nbytes, want=None):
        if want is not None:
            np.testing.assert_allclose(host(f(*args)), want, rtol=2e-3, atol=2e-3, err_msg=label)
        sec = gpu_time(lambda: [f(*args) for _ in range(BATCH)], REPS) / BATCH
        gbs = nbytes / sec / 1e9
        print(f"| {label} | {sec * 1e3:.3f} | {gbs:.0f} | {gbs / ceiling:.0%} |", flush=True)

    rng = np.random.default_rng(1)
    xh = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    yh = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    x, y = cp.asarray(xh), cp.asarray(yh)
    nb = 3 * xh.nbytes
    want = chain(xh.astype(np.float64), yh.astype(np.float64))
    fused = kiln.fuse(chain)
    row("chain kiln.fuse, CuPy arrays", fused, (x, y), nb, want)
    row("chain kiln.fuse, kiln arrays", fused, (kiln.to_device(xh), kiln.to_device(yh)), nb, want)
    row("chain kiln.fuse(fastmath=True), CuPy arrays", kiln.fuse(chain, fastmath=True), (x, y),
        nb, want)
    row("chain, b one row broadcast, kiln.fuse (2-D kernel)", kiln.fuse(bias), (x, y[0]),
        2 * xh.nbytes + yh[0].nbytes, bias(xh.astype(np.float64), yh[0].astype(np.float64)))
    n = ROWS * COLS - 8
    fx, fy = kiln.to_device(xh.reshape(-1)), kiln.to_device(yh.reshape(-1))
    big = kiln.device_array(n + 8, np.float32)
    for label, off in (("chain kiln.jit kernel, aligned", 0),
                       ("chain kiln.jit kernel, a[1:] views (element loads)", 1)):
        args = (big[off:off + n], fx[off:off + n], fy[off:off + n])
        launch = chain_kernel[-(-n // 256), 256]
        launch(*args)
        assert launch._last_wide
        row(label, launch, args, 12 * n)
    for dt in (np.float64, np.float32, np.int8):
        m = (1 << 28) // np.dtype(dt).itemsize
        a, o = kiln.device_array(m, dt), kiln.device_array(m, dt)
        row(f"copy kernel, {np.dtype(dt).name}", copy_kernel[-(-m // 256), 256], (o, a), 2 << 28)
    try:
        import torch
    except ImportError as e:
        print(f"torch: n/a ({e})")
        return
    tx, ty = torch.as_tensor(x, device="cuda"), torch.as_tensor(y, device="cuda")
    row("chain torch.compile", torch.compile(chain_torch), (tx, ty), nb, want)
    row("chain kiln.fuse, torch arrays", fused, (tx, ty), nb, want)


if __name__ == "__main__":
    main()
