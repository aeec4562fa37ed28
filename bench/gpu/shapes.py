"""Kernels in the shapes users write them, in one run (issue 13): Black-Scholes on 2^25
float32 as a grid-stride loop with math.erfc (a fixed grid of SMs x 16 blocks of 512, as
Numba-CUDA's documentation teaches it), precise and fastmath, against the same loop in
CUDA C (CuPy RawKernel), Numba-CUDA, Triton (its own tiled form) and torch.compile; a row
loop inside a thread; sum reductions at 2^20, 2^24 and 2^28 elements against CuPy and
torch, the result on the host and on the GPU.  All next to the device-to-device copy
ceiling measured in the same run.  Times are CUDA-event medians; effective GB/s counts
each input read once and each output written once.  Every result is checked first.

    PYTHONPATH=python python3 bench/gpu/shapes.py
    SHAPES=bs,rows,sum ...   the parts to run (default: all, and "peers": the other libraries)
"""
import math
import os
import sys
import types

import numpy as np

import cupy as cp

from timing import copy_ceiling, gpu_time

import kiln

rows = []
RSQRT2 = 0.7071067811865476


def record(group, name, seconds, nbytes, ceiling):
    gbs = nbytes / seconds / 1e9
    rows.append((group, name, seconds * 1e3, gbs, gbs / ceiling))


def attempt(group, name, fn):
    try:
        fn()
    except Exception as e:  # a missing or failing peer is reported, not fatal
        rows.append((group, name, None, None, f"n/a: {type(e).__name__}: {str(e)[:80]}"))


def bs_stride(call, put, s, x, t, r, v):
    for i in range(kiln.grid(1), s.size, kiln.gridsize(1)):
        sqrt_t = math.sqrt(t[i])
        d1 = (math.log(s[i] / x[i]) + (r + 0.5 * v * v) * t[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        e = math.exp(-r * t[i])
        c1 = 0.5 * math.erfc(-d1 * RSQRT2)
        c2 = 0.5 * math.erfc(-d2 * RSQRT2)
        call[i] = s[i] * c1 - x[i] * e * c2
        put[i] = x[i] * e * (1.0 - c2) - s[i] * (1.0 - c1)


kiln_bs = kiln.jit(bs_stride)
kiln_bs_fast = kiln.jit(bs_stride, fastmath=True)

CUDA_BS = r"""
extern "C" __global__ void bs(float *call, float *put, const float *s, const float *x,
                              const float *t, float r, float v, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) {
        float sqrt_t = sqrtf(t[i]);
        float d1 = (logf(s[i] / x[i]) + (r + 0.5f * v * v) * t[i]) / (v * sqrt_t);
        float d2 = d1 - v * sqrt_t;
        float e = expf(-r * t[i]);
        float c1 = 0.5f * erfcf(-d1 * 0.70710678f), c2 = 0.5f * erfcf(-d2 * 0.70710678f);
        call[i] = s[i] * c1 - x[i] * e * c2;
        put[i] = x[i] * e * (1.0f - c2) - s[i] * (1.0f - c1);
    }
}"""


def bs_reference(s, x, t, r, v):
    s, x, t = (np.asarray(a, np.float64) for a in (s, x, t))
    cdf = np.vectorize(lambda z: 0.5 * math.erfc(-z / math.sqrt(2)))
    sq = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sq)
    d2 = d1 - v * sq
    e = np.exp(-r * t)
    return s * cdf(d1) - x * e * cdf(d2), x * e * (1 - cdf(d2)) - s * (1 - cdf(d1))


def check_bs(call, put, s, x, t, r, v, m=1 << 12):
    # the first m and the last m elements: the last are the unrolled loop's remainder
    idx = np.r_[0:m, s.size - m:s.size]
    rc, rp = bs_reference(cp.asnumpy(s[idx]), cp.asnumpy(x[idx]), cp.asnumpy(t[idx]), float(r), float(v))
    for got, ref in ((call, rc), (put, rp)):
        g = cp.asnumpy(got[idx]).astype(np.float64)
        err = np.max(np.abs(g - ref) / np.maximum(np.abs(ref), 1.0))
        if not err < 1e-4:
            raise AssertionError(f"Black-Scholes error {err}")


def black_scholes(ceiling, rng, peers):
    g = "Black-Scholes 2^25 f32, grid-stride loop, erfc"
    n = (1 << 25) + 3  # not a multiple of the unrolled pass
    s = cp.asarray(rng.uniform(5, 30, n).astype(np.float32))
    x = cp.asarray(rng.uniform(1, 100, n).astype(np.float32))
    t = cp.asarray(rng.uniform(0.25, 10, n).astype(np.float32))
    r, v = np.float32(0.02), np.float32(0.30)
    call, put = cp.empty(n, cp.float32), cp.empty(n, cp.float32)
    nbytes = 5 * 4 * n
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    grid, tpb = sms * 16, 512

    def poison():
        call.fill(np.nan)
        put.fill(np.nan)

    def run_kiln(kern, label):
        poison()
        kern[grid, tpb](call, put, s, x, t, r, v)
        check_bs(call, put, s, x, t, r, v)
        record(g, label, gpu_time(lambda: kern[grid, tpb](call, put, s, x, t, r, v)), nbytes, ceiling)

    attempt(g, "kiln (precise)", lambda: run_kiln(kiln_bs, "kiln (precise)"))
    attempt(g, "kiln (fastmath)", lambda: run_kiln(kiln_bs_fast, "kiln (fastmath)"))
    if not peers:
        return

    def run_cuda_c():
        k = cp.RawKernel(CUDA_BS, "bs")
        go = lambda: k((grid,), (tpb,), (call, put, s, x, t, r, v, np.int64(n)))
        poison()
        go()
        check_bs(call, put, s, x, t, r, v)
        record(g, "CUDA C, same loop (CuPy RawKernel)", gpu_time(go), nbytes, ceiling)
    attempt(g, "CUDA C, same loop (CuPy RawKernel)", run_cuda_c)

    def run_numba():
        np.row_stack = np.vstack
        from numba import cuda

        nb = cuda.jit(types.FunctionType(bs_stride.__code__, dict(bs_stride.__globals__, kiln=cuda)))
        go = lambda: nb[grid, tpb](call, put, s, x, t, r, v)
        poison()
        go()
        check_bs(call, put, s, x, t, r, v)
        record(g, "Numba-CUDA", gpu_time(go), nbytes, ceiling)
    attempt(g, "Numba-CUDA", run_numba)

    def run_triton():
        import torch
        import triton
        import triton.language as tl
        try:
            from triton.language.extra import libdevice
        except ImportError:
            from triton.language.extra.cuda import libdevice

        @triton.jit
        def tbs(call, put, S, X, T, R, V, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = i < n
            s_ = tl.load(S + i, mask=m, other=1.0)
            x_ = tl.load(X + i, mask=m, other=1.0)
            t_ = tl.load(T + i, mask=m, other=1.0)
            sq = tl.sqrt_rn(t_)
            d1 = tl.div_rn(tl.log(tl.div_rn(s_, x_)) + (R + 0.5 * V * V) * t_, V * sq)
            d2 = d1 - V * sq
            e = tl.exp(-R * t_)
            c1 = 0.5 * libdevice.erfc(-d1 * 0.7071067811865476)
            c2 = 0.5 * libdevice.erfc(-d2 * 0.7071067811865476)
            tl.store(call + i, s_ * c1 - x_ * e * c2, mask=m)
            tl.store(put + i, x_ * e * (1.0 - c2) - s_ * (1.0 - c1), mask=m)

        ts = [torch.as_tensor(a, device="cuda") for a in (call, put, s, x, t)]
        go = lambda: tbs[(triton.cdiv(n, 1024),)](*ts, float(r), float(v), n, BLOCK=1024)
        poison()
        go()
        torch.cuda.synchronize()
        check_bs(call, put, s, x, t, r, v)
        record(g, "Triton (tiled, libdevice erfc)", gpu_time(go), nbytes, ceiling)
    attempt(g, "Triton (tiled, libdevice erfc)", run_triton)

    def run_torch_compile():
        import torch

        @torch.compile
        def tbs(S, X, T, R, V):
            sq = torch.sqrt(T)
            d1 = (torch.log(S / X) + (R + 0.5 * V * V) * T) / (V * sq)
            d2 = d1 - V * sq
            e = torch.exp(-R * T)
            c1, c2 = 0.5 * torch.special.erfc(-d1 * RSQRT2), 0.5 * torch.special.erfc(-d2 * RSQRT2)
            return S * c1 - X * e * c2, X * e * (1.0 - c2) - S * (1.0 - c1)

        S_, X_, T_ = (torch.as_tensor(a, device="cuda") for a in (s, x, t))
        c_, p_ = tbs(S_, X_, T_, float(r), float(v))
        torch.cuda.synchronize()
        check_bs(cp.asarray(c_), cp.asarray(p_), s, x, t, r, v)
        record(g, "torch.compile", gpu_time(lambda: tbs(S_, X_, T_, float(r), float(v))), nbytes, ceiling)
    attempt(g, "torch.compile", run_torch_compile)


@kiln.jit
def row_scale(out, a, w):
    # one row per thread, a loop along it: the loop inside a thread
    i = kiln.grid(1)
    if i < a.shape[0]:
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * w[j] + 1.0


def row_loop(ceiling, rng):
    g = "row loop inside a thread, 2^16 x 131 f32 (column-major rows)"
    rws, cols = 1 << 16, 131
    # F order: thread i's row is strided, neighbouring threads' elements are adjacent
    a = cp.asfortranarray(cp.asarray(rng.uniform(-1, 1, (rws, cols)).astype(np.float32)))
    w = cp.asarray(rng.uniform(-1, 1, cols).astype(np.float32))
    out = cp.asfortranarray(cp.empty((rws, cols), cp.float32))
    out.fill(np.nan)
    go = lambda: row_scale[(rws + 255) // 256, 256](out, a, w)
    go()
    if not cp.allclose(out, a * w + 1.0):
        raise AssertionError("row loop result")
    record(g, "kiln", gpu_time(go), 8 * rws * cols, ceiling)
    record(g, "CuPy (a * w + 1, two kernels)", gpu_time(lambda: cp.add(cp.multiply(a, w, out=out), 1.0, out=out)),
           8 * rws * cols, ceiling)


@kiln.reduce
def add(p, q):
    return p + q


def reductions(ceiling):
    for lg in (20, 24, 28):
        g = f"sum 2^{lg} f32"
        big = cp.random.random(1 << lg, dtype=cp.float32)
        nbytes = 4 * big.size
        ref = float(cp.sum(big.astype(cp.float64)))
        got = add(big)
        assert abs(got - ref) / ref < 1e-4, (got, ref)
        res = cp.empty(1, cp.float32)
        add(big, res=res)
        assert abs(float(res[0]) - ref) / ref < 1e-4
        reps = 50 if lg < 28 else 10
        record(g, "kiln.reduce (result on the host)", gpu_time(lambda: add(big), reps=reps), nbytes, ceiling)
        record(g, "CuPy sum (result on the host)", gpu_time(lambda: float(big.sum()), reps=reps), nbytes, ceiling)
        record(g, "kiln.reduce (res=, on the GPU)", gpu_time(lambda: add(big, res=res), reps=reps), nbytes, ceiling)
        record(g, "CuPy sum (on the GPU)", gpu_time(lambda: big.sum(), reps=reps), nbytes, ceiling)
        try:
            import torch

            tb = torch.as_tensor(big, device="cuda")
            record(g, "torch sum (on the GPU)", gpu_time(lambda: tb.sum(), reps=reps), nbytes, ceiling)
        except Exception as e:
            rows.append((g, "torch sum", None, None, f"n/a: {e}"))
        del big


def main():
    info = kiln._kiln.cuda_info()
    dev = info["devices"][0]
    print(f"# GPU: {dev[0]} (sm_{dev[1]}), driver {info['driver']}, kiln {kiln.__version__}, "
          f"cupy {cp.__version__}")
    rng = np.random.default_rng()
    tcopy, ceiling = copy_ceiling()
    rows.append(("copy", "device-to-device copy, 1 GiB", tcopy * 1e3, ceiling, 1.0))
    what = os.environ.get("SHAPES", "bs,rows,sum,peers").split(",")
    if "bs" in what:
        black_scholes(ceiling, rng, "peers" in what)
    if "rows" in what:
        attempt("row loop", "kiln", lambda: row_loop(ceiling, rng))
    if "sum" in what:
        reductions(ceiling)
    print("\n| workload | implementation | ms | GB/s | of copy ceiling |")
    print("| --- | --- | ---: | ---: | ---: |")
    for g, name, ms, gbs, frac in rows:
        if ms is None:
            print(f"| {g} | {name} | | | {frac} |")
        else:
            print(f"| {g} | {name} | {ms:.3f} | {gbs:.0f} | {frac * 100:.1f}% |")
    # the same rows as one number each, for bench/ab.py
    print("\n| row | GB/s |\n| --- | ---: |")
    for g, name, ms, gbs, frac in rows:
        if ms is not None:
            print(f"| {g}: {name} | {gbs:.1f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
