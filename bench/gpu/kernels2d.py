"""Two-dimensional kernels side by side in one run: a 5-point stencil (kiln.grid(2), 16x16
blocks) and a shared-memory tiled matmul, each the same Python source under kiln and
Numba-CUDA, against the same kernel written in CUDA C through CuPy's RawKernel.  CUDA-event
medians; every result is checked against NumPy before it is timed.

    PYTHONPATH=python python3 bench/gpu/kernels2d.py
"""
import types

import numpy as np
import cupy as cp

import kiln
from timing import gpu_time

TILE = 16


def stencil(out, a):
    x, y = kiln.grid(2)
    if 0 < x < a.shape[1] - 1 and 0 < y < a.shape[0] - 1:
        out[y, x] = 0.25 * (a[y - 1, x] + a[y + 1, x] + a[y, x - 1] + a[y, x + 1]) - a[y, x]


def matmul(A, B, C):
    sA = kiln.shared.array((TILE, TILE), kiln.float32)
    sB = kiln.shared.array((TILE, TILE), kiln.float32)
    x, y = kiln.grid(2)
    tx, ty = kiln.threadIdx.x, kiln.threadIdx.y
    acc = kiln.float32(0.0)
    for t in range(A.shape[1] // TILE):
        sA[ty, tx] = A[y, tx + t * TILE]
        sB[ty, tx] = B[ty + t * TILE, x]
        kiln.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        kiln.syncthreads()
    C[y, x] = acc


STENCIL_C = r"""
extern "C" __global__ void stencil(float *__restrict__ out, const float *__restrict__ a, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && x < w - 1 && y > 0 && y < h - 1)
        out[y * w + x] = 0.25f * (a[(y - 1) * w + x] + a[(y + 1) * w + x] + a[y * w + x - 1] + a[y * w + x + 1]) - a[y * w + x];
}"""
MATMUL_C = r"""
extern "C" __global__ void matmul(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int n) {
    __shared__ float sA[16][16], sB[16][16];
    int tx = threadIdx.x, ty = threadIdx.y, x = blockIdx.x * 16 + tx, y = blockIdx.y * 16 + ty;
    float acc = 0.0f;
    for (int t = 0; t < n / 16; t++) {
        sA[ty][tx] = A[y * n + tx + t * 16];
        sB[ty][tx] = B[(ty + t * 16) * n + x];
        __syncthreads();
        for (int j = 0; j < 16; j++) acc += sA[ty][j] * sB[j][tx];
        __syncthreads();
    }
    C[y * n + x] = acc;
}"""


rows = []


def attempt(group, name, fn, work, unit):
    """fn returns seconds; work is bytes (GB/s) or flops (GFLOP/s)."""
    try:
        sec = fn()
        rows.append((group, name, sec * 1e3, work / sec / 1e9, unit))
    except Exception as e:  # a missing peer is reported, not fatal
        rows.append((group, name, None, None, f"n/a: {type(e).__name__}: {str(e)[:80]}"))


def numba_version(fn):
    np.row_stack = np.vstack
    from numba import cuda
    g = dict(fn.__globals__, kiln=cuda)
    return cuda.jit(types.FunctionType(fn.__code__, g))


def main():
    rng = np.random.default_rng(0)
    h = w = 8192
    a = cp.asarray(rng.random((h, w), dtype=np.float32))
    ref = cp.zeros_like(a)
    ref[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]) - a[1:-1, 1:-1]
    grid, block = ((w + 15) // 16, (h + 15) // 16), (16, 16)
    nbytes = 2 * a.nbytes

    def run(k):
        out = cp.zeros_like(a)
        k[grid, block](out, a)
        assert cp.allclose(out, ref, atol=1e-5)
        return gpu_time(lambda: k[grid, block](out, a))

    attempt("stencil 8192^2 f32", "kiln", lambda: run(kiln.jit(stencil)), nbytes, "GB/s")
    attempt("stencil 8192^2 f32", "Numba-CUDA", lambda: run(numba_version(stencil)), nbytes, "GB/s")

    def run_cupy():
        k = cp.RawKernel(STENCIL_C, "stencil")
        out = cp.zeros_like(a)
        k(grid, block, (out, a, np.int32(h), np.int32(w)))
        assert cp.allclose(out, ref, atol=1e-5)
        return gpu_time(lambda: k(grid, block, (out, a, np.int32(h), np.int32(w))))
    attempt("stencil 8192^2 f32", "CUDA C (CuPy RawKernel, restrict)", run_cupy, nbytes, "GB/s")
    del a, ref

    n = 4096
    A = cp.asarray(rng.random((n, n), dtype=np.float32))
    B = cp.asarray(rng.random((n, n), dtype=np.float32))
    R = A @ B
    mgrid, flops = (n // TILE, n // TILE), 2 * n ** 3

    def runm(k):
        C = cp.zeros_like(A)
        k[mgrid, (TILE, TILE)](A, B, C)
        assert cp.allclose(C, R, rtol=1e-3)
        return gpu_time(lambda: k[mgrid, (TILE, TILE)](A, B, C), reps=10)

    attempt("tiled matmul 4096^2 f32", "kiln", lambda: runm(kiln.jit(matmul)), flops, "GFLOP/s")
    attempt("tiled matmul 4096^2 f32", "Numba-CUDA", lambda: runm(numba_version(matmul)), flops, "GFLOP/s")

    def run_cupy_mm():
        k = cp.RawKernel(MATMUL_C, "matmul")
        C = cp.zeros_like(A)
        k(mgrid, (TILE, TILE), (A, B, C, np.int32(n)))
        assert cp.allclose(C, R, rtol=1e-3)
        return gpu_time(lambda: k(mgrid, (TILE, TILE), (A, B, C, np.int32(n))), reps=10)
    attempt("tiled matmul 4096^2 f32", "CUDA C (CuPy RawKernel, restrict)", run_cupy_mm, flops, "GFLOP/s")

    print("\n| workload | implementation | ms | rate |\n| --- | --- | ---: | ---: |")
    for g, name, ms, rate, unit in rows:
        if ms is None:
            print(f"| {g} | {name} | {unit} | |")
        else:
            print(f"| {g} | {name} | {ms:.3f} | {rate:.0f} {unit} |")


if __name__ == "__main__":
    main()
