"""Study (not a benchmark of record): why kiln.fuse's row-broadcast expression
exp(x*b + 0.5)*x - b/3 (x 2^14 x 2^12 float32, b one row) reads below the elementwise
chain.  Hand-written kernel shapes with preallocated outputs, CUDA-event medians.

    cd bench/gpu && PYTHONPATH=../../python python3 bias_study.py
"""
import math

import numpy as np
import cupy as cp

from timing import copy_ceiling, gpu_time

import kiln

R, C = 1 << 14, 1 << 12


def bias(x, b):
    return np.exp(x * b + 0.5) * x - b / 3.0


def chain(x, y):
    return np.exp(x * y + 0.5) * x - y / 3.0


@kiln.jit
def one_row(out, x, b):
    c, r = kiln.grid(2)
    if c < out.shape[1] and r < out.shape[0]:
        v = x[r, c]
        out[r, c] = math.exp(v * b[c] + 0.5) * v - b[c] / 3.0


@kiln.jit
def row_loop(out, x, b):
    c, y = kiln.grid(2)
    if c < out.shape[1]:
        for r in range(y, out.shape[0], kiln.gridsize(2)[1]):
            v = x[r, c]
            out[r, c] = math.exp(v * b[c] + 0.5) * v - b[c] / 3.0


@kiln.jit
def row_loop_hoisted(out, x, b):
    c, y = kiln.grid(2)
    if c < out.shape[1]:
        bc = b[c]
        bt = bc / 3.0
        for r in range(y, out.shape[0], kiln.gridsize(2)[1]):
            v = x[r, c]
            out[r, c] = math.exp(v * bc + 0.5) * v - bt


@kiln.jit
def flat(out, x, b):
    p = kiln.grid(1)
    n = out.shape[1]
    if p < out.size:
        r = p // n
        c = p - r * n
        v = x[r, c]
        out[r, c] = math.exp(v * b[c] + 0.5) * v - b[c] / 3.0


@kiln.jit
def flat_chain(out, x, y):
    p = kiln.grid(1)
    n = out.shape[1]
    if p < out.size:
        r = p // n
        c = p - r * n
        v = x[r, c]
        out[r, c] = math.exp(v * y[r, c] + 0.5) * v - y[r, c] / 3.0


def main():
    _, ceiling = copy_ceiling()
    rng = np.random.default_rng(1)
    xh = rng.standard_normal((R, C), dtype=np.float32)
    bh = rng.standard_normal(C, dtype=np.float32)
    x, b = cp.asarray(xh), cp.asarray(bh)
    y = cp.asarray(rng.standard_normal((R, C), dtype=np.float32))
    out = cp.empty((R, C), np.float32)
    want = bias(xh.astype(np.float64), bh.astype(np.float64))
    nb = xh.nbytes * 2 + bh.nbytes
    fb, fc = kiln.fuse(bias), kiln.fuse(chain)
    runs = {
        "kiln.fuse(bias) (allocates)": (lambda: fb(x, b), None),
        "kiln.fuse(chain) full y (allocates)": (lambda: fc(x, y), "chain"),
        "one_row 2-D grid (256, 1)": (lambda: one_row[(C // 256, R), 256](out, x, b), out),
        "row_loop 8 rows/thread": (lambda: row_loop[(C // 256, R // 8), 256](out, x, b), out),
        "row_loop 2 rows/thread": (lambda: row_loop[(C // 256, R // 2), 256](out, x, b), out),
        "row_loop_hoisted 8 rows/thread": (lambda: row_loop_hoisted[(C // 256, R // 8), 256](out, x, b), out),
        "flat 1-D (div per element)": (lambda: flat[R * C // 256, 256](out, x, b), out),
        "flat_chain 1-D full y": (lambda: flat_chain[R * C // 256, 256](out, x, y), "chain"),
    }
    try:
        import torch
        tx, tb = torch.as_tensor(x, device="cuda"), torch.as_tensor(b, device="cuda")
        tc = torch.compile(lambda x, b: torch.exp(x * b + 0.5) * x - b / 3.0)
        runs["torch.compile (allocates)"] = (lambda: tc(tx, tb), "torch")
    except Exception as e:
        print("torch n/a", e)
    print(f"copy ceiling {ceiling:.0f} GB/s\n\n| variant | ms | GB/s | of ceiling |\n| --- | ---: | ---: | ---: |")
    for name, (f, check) in runs.items():
        r = f()
        if not isinstance(check, (str, type(None))):
            got = cp.asnumpy(check)
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3, err_msg=name)
        elif check is None:
            np.testing.assert_allclose(cp.asnumpy(cp.asarray(r)), want, rtol=2e-3, atol=2e-3, err_msg=name)
        sec = gpu_time(lambda: [f() for _ in range(10)], 20) / 10
        nbytes = nb + (xh.nbytes - bh.nbytes if isinstance(check, str) and check == "chain" else 0)
        print(f"| {name} | {sec * 1e3:.3f} | {nbytes / sec / 1e9:.0f} | {nbytes / sec / 1e9 / ceiling:.0%} |", flush=True)


if __name__ == "__main__":
    main()
