"""Which code-generation choices pay on this GPU: hand-written CUDA variants of the
Black-Scholes and saxpy kernels kiln generates, compiled by CuPy's NVRTC path and
timed side by side (CUDA-event medians, effective GB/s, next to the copy ceiling).

    python3 bench/gpu/variants.py
Variants: base (kiln's code before this study: 64-bit indices, may-alias pointers),
restrict (const __restrict__ inputs, __restrict__ outputs), r32 (plus 32-bit indices),
uN (plus N elements per thread, block-strided so accesses stay coalesced).
"""

import cupy as cp
import numpy as np

from timing import copy_ceiling, gpu_time

CND = """
__device__ __forceinline__ float cnd(float d) {
    float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float r = 0.3989422804014327f * expf(-0.5f * d * d) * (K * (0.31938153f + K * (-0.356563782f
              + K * (1.781477937f + K * (-1.821255978f + K * 1.330274429f)))));
    return d > 0 ? 1.0f - r : r;
}
"""
BODY = """
    float sqrt_t = sqrtf(t[i]);
    float d1 = (logf(s[i] / x[i]) + (r + 0.5f * v * v) * t[i]) / (v * sqrt_t);
    float d2 = d1 - v * sqrt_t;
    float e = expf(-r * t[i]);
    float c1 = cnd(d1), c2 = cnd(d2);
    call[i] = s[i] * c1 - x[i] * e * c2;
    put[i] = x[i] * e * (1.0f - c2) - s[i] * (1.0f - c1);
"""


def bs_source(restrict, idx32, unroll):
    q = "__restrict__ " if restrict else ""
    c = "const " if restrict else ""
    it = "int" if idx32 else "long long"
    head = (f'extern "C" __global__ void k(float *{q}call, float *{q}put, {c}float *{q}s, '
            f'{c}float *{q}x, {c}float *{q}t, float r, float v, long long n) {{\n')
    if unroll == 1:
        return CND + head + f"    {it} i = ({it})blockIdx.x * ({it})blockDim.x + ({it})threadIdx.x;\n" \
            f"    if (i < n) {{{BODY}}}\n}}\n"
    return CND + head + (
        f"    {it} base = ({it})blockIdx.x * ({it})blockDim.x * {unroll} + ({it})threadIdx.x;\n"
        f"    #pragma unroll\n    for (int k = 0; k < {unroll}; k++) {{\n"
        f"        {it} i = base + ({it})k * ({it})blockDim.x;\n"
        f"        if (i < n) {{{BODY}}}\n    }}\n}}\n")


def saxpy_source(restrict, idx32, unroll):
    q = "__restrict__ " if restrict else ""
    c = "const " if restrict else ""
    it = "int" if idx32 else "long long"
    head = f'extern "C" __global__ void k(float *{q}out, float a, {c}float *{q}x, {c}float *{q}y, long long n) {{\n'
    return head + (
        f"    {it} base = ({it})blockIdx.x * ({it})blockDim.x * {unroll} + ({it})threadIdx.x;\n"
        f"    #pragma unroll\n    for (int k = 0; k < {unroll}; k++) {{\n"
        f"        {it} i = base + ({it})k * ({it})blockDim.x;\n"
        f"        if (i < n) out[i] = a * x[i] + y[i];\n    }}\n}}\n")


VARIANTS = [("base", False, False, 1), ("restrict", True, False, 1), ("r32", True, True, 1),
            ("r32 u2", True, True, 2), ("r32 u4", True, True, 4), ("r32 u8", True, True, 8),
            ("r64 u4", True, False, 4), ("base u4", False, False, 4)]


def main():
    ceiling = copy_ceiling()[1]
    print(f"copy ceiling {ceiling:.0f} GB/s\n")
    rng = np.random.default_rng(1)
    n = 1 << 25
    s = cp.asarray(rng.uniform(5, 30, n).astype(np.float32))
    x = cp.asarray(rng.uniform(1, 100, n).astype(np.float32))
    t = cp.asarray(rng.uniform(0.25, 10, n).astype(np.float32))
    r, v = np.float32(0.02), np.float32(0.30)
    call, put = cp.empty(n, cp.float32), cp.empty(n, cp.float32)
    print("| kernel | variant | block | ms | GB/s | of ceiling |\n| --- | --- | ---: | ---: | ---: | ---: |")
    ref = None
    for fast in (False, True):
        for name, rs, i32, u in VARIANTS:
            opts = ("--use_fast_math",) if fast else ()
            k = cp.RawKernel(bs_source(rs, i32, u), "k", options=opts)
            for tpb in (128, 256, 512):
                grid = (n + tpb * u - 1) // (tpb * u)
                f = lambda: k((grid,), (tpb,), (call, put, s, x, t, r, v, np.int64(n)))
                f()
                got = cp.asnumpy(call[:4096])
                if ref is None:
                    ref = got
                assert np.allclose(got, ref, rtol=1e-3, atol=1e-3), name
                sec = gpu_time(f)
                gbs = 20 * n / sec / 1e9
                print(f"| BS {'fast' if fast else 'precise'} | {name} | {tpb} | {sec*1e3:.3f} | {gbs:.0f} | {gbs/ceiling:.1%} |")
    n = 1 << 26
    xs, ys = cp.random.random(n, dtype=cp.float32), cp.random.random(n, dtype=cp.float32)
    out = cp.empty_like(xs)
    for name, rs, i32, u in VARIANTS:
        k = cp.RawKernel(saxpy_source(rs, i32, u), "k")
        for tpb in (256, 512, 1024):
            grid = (n + tpb * u - 1) // (tpb * u)
            f = lambda: k((grid,), (tpb,), (out, np.float32(2.0), xs, ys, np.int64(n)))
            f()
            assert cp.allclose(out[:4096], 2 * xs[:4096] + ys[:4096])
            sec = gpu_time(f)
            gbs = 12 * n / sec / 1e9
            print(f"| saxpy | {name} | {tpb} | {sec*1e3:.3f} | {gbs:.0f} | {gbs/ceiling:.1%} |")


if __name__ == "__main__":
    main()
