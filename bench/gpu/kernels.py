"""GPU kernels side by side in one run: Black-Scholes on 2^25 float32 (precise and
fastmath) against CuPy ElementwiseKernel, Numba-CUDA, Triton and torch.compile; saxpy;
a sum reduction; all next to the device-to-device copy ceiling measured here.
Times are CUDA-event medians; effective GB/s counts each input read once and each
output written once.  Every result is checked against NumPy before it is timed.

    PYTHONPATH=python python3 bench/gpu/kernels.py
"""
import math
import sys

import numpy as np

import cupy as cp

from timing import copy_ceiling, gpu_time

import kiln

REPS = 20
rows = []


def record(group, name, seconds, nbytes, ceiling=None):
    gbs = nbytes / seconds / 1e9
    rows.append((group, name, seconds * 1e3, gbs, gbs / ceiling if ceiling else None))


def attempt(group, name, fn):
    try:
        fn()
    except Exception as e:  # a missing or failing peer is reported, not fatal
        rows.append((group, name, None, None, f"n/a: {type(e).__name__}: {str(e)[:80]}"))


# ---- Black-Scholes ------------------------------------------------------------------------
A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
RSQRT2PI = 0.3989422804014327


@kiln.jit(device=True)
def cnd(d):
    K = 1.0 / (1.0 + 0.2316419 * abs(d))
    r = RSQRT2PI * math.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    return 1.0 - r if d > 0 else r


def bs_body(call, put, s, x, t, r, v):
    i = kiln.grid(1)
    if i < s.size:
        sqrt_t = math.sqrt(t[i])
        d1 = (math.log(s[i] / x[i]) + (r + 0.5 * v * v) * t[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        e = math.exp(-r * t[i])
        c1, c2 = cnd(d1), cnd(d2)
        call[i] = s[i] * c1 - x[i] * e * c2
        put[i] = x[i] * e * (1.0 - c2) - s[i] * (1.0 - c1)


kiln_bs = kiln.jit(bs_body)
kiln_bs_fast = kiln.jit(bs_body, fastmath=True)

CUPY_BS = cp.ElementwiseKernel(
    "float32 S, float32 X, float32 T, float32 R, float32 V", "float32 call, float32 put",
    """
    float sqrtT = sqrtf(T);
    float d1 = (logf(S / X) + (R + 0.5f * V * V) * T) / (V * sqrtT);
    float d2 = d1 - V * sqrtT;
    float e = expf(-R * T);
    float c1 = cnd(d1), c2 = cnd(d2);
    call = S * c1 - X * e * c2;
    put = X * e * (1.0f - c2) - S * (1.0f - c1);
    """, "bs",
    preamble="""
    __device__ float cnd(float d) {
        const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
                    A4 = -1.821255978f, A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267f;
        float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
        float r = RSQRT2PI * expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
        return d > 0 ? 1.0f - r : r;
    }""")


def bs_reference(s, x, t, r, v):
    s, x, t = (np.asarray(a, np.float64) for a in (s, x, t))
    d = np.vectorize(lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2))))
    sq = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sq)
    d2 = d1 - v * sq
    e = np.exp(-r * t)
    return s * d(d1) - x * e * d(d2), x * e * (1 - d(d2)) - s * (1 - d(d1))


def check_bs(call, put, s, x, t, r, v, m=1 << 12):
    rc, rp = bs_reference(cp.asnumpy(s[:m]), cp.asnumpy(x[:m]), cp.asnumpy(t[:m]), float(r), float(v))
    for got, ref in ((call, rc), (put, rp)):
        g = cp.asnumpy(got[:m]).astype(np.float64)
        err = np.max(np.abs(g - ref) / np.maximum(np.abs(ref), 1.0))
        if not err < 1e-3:
            raise AssertionError(f"Black-Scholes error {err}")


def main():
    info = kiln._kiln.cuda_info()
    dev = info["devices"][0]
    print(f"# GPU: {dev[0]} (sm_{dev[1]}), driver {info['driver']}, kiln {kiln.__version__}, "
          f"cupy {cp.__version__}")
    rng = np.random.default_rng()

    tcopy, ceiling = copy_ceiling()
    rows.append(("copy", "device-to-device copy, 1 GiB", tcopy * 1e3, ceiling, 1.0))

    n = 1 << 25
    s = cp.asarray(rng.uniform(5, 30, n).astype(np.float32))
    x = cp.asarray(rng.uniform(1, 100, n).astype(np.float32))
    t = cp.asarray(rng.uniform(0.25, 10, n).astype(np.float32))
    r, v = np.float32(0.02), np.float32(0.30)
    call, put = cp.empty(n, cp.float32), cp.empty(n, cp.float32)
    nbytes = 5 * 4 * n
    blocks = (n + 255) // 256

    def run_kiln(kern, label):
        kern[blocks, 256](call, put, s, x, t, r, v)
        check_bs(call, put, s, x, t, r, v)
        record("Black-Scholes 2^25 f32", label, gpu_time(lambda: kern[blocks, 256](call, put, s, x, t, r, v)), nbytes, ceiling)

    attempt("Black-Scholes 2^25 f32", "kiln (precise)", lambda: run_kiln(kiln_bs, "kiln (precise)"))
    attempt("Black-Scholes 2^25 f32", "kiln (fastmath)", lambda: run_kiln(kiln_bs_fast, "kiln (fastmath)"))

    def run_cupy():
        CUPY_BS(s, x, t, r, v, call, put)
        check_bs(call, put, s, x, t, r, v)
        record("Black-Scholes 2^25 f32", "CuPy ElementwiseKernel", gpu_time(lambda: CUPY_BS(s, x, t, r, v, call, put)), nbytes, ceiling)
    attempt("Black-Scholes 2^25 f32", "CuPy ElementwiseKernel", run_cupy)

    def run_numba():
        np.row_stack = np.vstack
        from numba import cuda

        ncnd = cuda.jit(device=True)(cnd.py_func)
        g = dict(bs_body.__globals__, cnd=ncnd, kiln=cuda)
        import types
        nb = cuda.jit(types.FunctionType(bs_body.__code__, g))
        nb[blocks, 256](call, put, s, x, t, r, v)
        check_bs(call, put, s, x, t, r, v)
        record("Black-Scholes 2^25 f32", "Numba-CUDA", gpu_time(lambda: nb[blocks, 256](call, put, s, x, t, r, v)), nbytes, ceiling)
    attempt("Black-Scholes 2^25 f32", "Numba-CUDA", run_numba)

    def run_triton():
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def tcnd(d):
            K = 1.0 / (1.0 + 0.2316419 * tl.abs(d))
            r = 0.3989422804014327 * tl.exp(-0.5 * d * d) * (K * (0.31938153 + K * (-0.356563782 + K * (1.781477937 + K * (-1.821255978 + K * 1.330274429)))))
            return tl.where(d > 0, 1.0 - r, r)

        @triton.jit
        def tbs(call, put, S, X, T, R, V, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = i < n
            s_ = tl.load(S + i, mask=m, other=1.0)
            x_ = tl.load(X + i, mask=m, other=1.0)
            t_ = tl.load(T + i, mask=m, other=1.0)
            sq = tl.sqrt(t_)
            d1 = (tl.log(s_ / x_) + (R + 0.5 * V * V) * t_) / (V * sq)
            d2 = d1 - V * sq
            e = tl.exp(-R * t_)
            c1 = tcnd(d1)
            c2 = tcnd(d2)
            tl.store(call + i, s_ * c1 - x_ * e * c2, mask=m)
            tl.store(put + i, x_ * e * (1.0 - c2) - s_ * (1.0 - c1), mask=m)

        ts = [torch.as_tensor(a, device="cuda") for a in (call, put, s, x, t)]
        grid = (triton.cdiv(n, 1024),)
        go = lambda: tbs[grid](*ts, float(r), float(v), n, BLOCK=1024)
        go()
        torch.cuda.synchronize()
        check_bs(call, put, s, x, t, r, v)
        record("Black-Scholes 2^25 f32", "Triton", gpu_time(go), nbytes, ceiling)
    attempt("Black-Scholes 2^25 f32", "Triton", run_triton)

    def run_torch_compile():
        import torch

        def tcnd(d):
            K = 1.0 / (1.0 + 0.2316419 * d.abs())
            rr = RSQRT2PI * torch.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
            return torch.where(d > 0, 1.0 - rr, rr)

        @torch.compile
        def tbs(S, X, T, R, V):
            sq = torch.sqrt(T)
            d1 = (torch.log(S / X) + (R + 0.5 * V * V) * T) / (V * sq)
            d2 = d1 - V * sq
            e = torch.exp(-R * T)
            c1, c2 = tcnd(d1), tcnd(d2)
            return S * c1 - X * e * c2, X * e * (1.0 - c2) - S * (1.0 - c1)

        S_, X_, T_ = (torch.as_tensor(a, device="cuda") for a in (s, x, t))
        c_, p_ = tbs(S_, X_, T_, float(r), float(v))
        torch.cuda.synchronize()
        check_bs(cp.asarray(c_), cp.asarray(p_), s, x, t, r, v)
        record("Black-Scholes 2^25 f32", "torch.compile", gpu_time(lambda: tbs(S_, X_, T_, float(r), float(v))), nbytes, ceiling)
    attempt("Black-Scholes 2^25 f32", "torch.compile", run_torch_compile)
    del s, x, t, call, put

    # saxpy: out = a * x + y on 2^26 float32
    m = 1 << 26
    xs = cp.random.random(m, dtype=cp.float32)
    ys = cp.random.random(m, dtype=cp.float32)
    out = cp.empty_like(xs)

    @kiln.jit
    def saxpy(out, x, y, a):
        i = kiln.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    a = np.float32(2.5)
    saxpy[(m + 255) // 256, 256](out, xs, ys, a)
    assert cp.allclose(out, a * xs + ys)
    record("saxpy 2^26 f32", "kiln", gpu_time(lambda: saxpy[(m + 255) // 256, 256](out, xs, ys, a)), 12 * m, ceiling)
    record("saxpy 2^26 f32", "CuPy (a * x + y, fused)", gpu_time(lambda: cp.add(cp.multiply(a, xs, out=out), ys, out=out)), 12 * m, ceiling)
    del xs, ys, out

    # sum reduction of 2^28 float32, result on the host
    big = cp.random.random(1 << 28, dtype=cp.float32)

    @kiln.reduce
    def add(p, q):
        return p + q

    got = add(big)
    ref = float(cp.sum(big.astype(cp.float64)))
    assert abs(got - ref) / ref < 1e-4, (got, ref)
    record("sum 2^28 f32", "kiln.reduce (result on the host)", gpu_time(lambda: add(big), reps=10), 4 * big.size, ceiling)
    record("sum 2^28 f32", "CuPy sum (result on the host)", gpu_time(lambda: float(big.sum()), reps=10), 4 * big.size, ceiling)
    res = cp.empty(1, cp.float32)
    add(big, res=res)
    assert abs(float(res[0]) - ref) / ref < 1e-4
    record("sum 2^28 f32", "kiln.reduce (res=, stays on the GPU)", gpu_time(lambda: add(big, res=res), reps=10), 4 * big.size, ceiling)
    record("sum 2^28 f32", "CuPy sum (stays on the GPU)", gpu_time(lambda: big.sum(), reps=10), 4 * big.size, ceiling)
    try:
        import torch

        tb = torch.as_tensor(big, device="cuda")
        record("sum 2^28 f32", "torch sum", gpu_time(lambda: float(tb.sum()), reps=10), 4 * big.size, ceiling)
    except Exception as e:
        rows.append(("sum 2^28 f32", "torch sum", None, None, f"n/a: {e}"))

    print("\n| workload | implementation | ms | GB/s | of copy ceiling |")
    print("| --- | --- | ---: | ---: | ---: |")
    for g, name, ms, gbs, frac in rows:
        if ms is None:
            print(f"| {g} | {name} | | | {frac} |")
        else:
            print(f"| {g} | {name} | {ms:.3f} | {gbs:.0f} | {frac * 100:.1f}% |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
