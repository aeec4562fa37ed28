"""What each float32 math function costs Black-Scholes on the GPU (issue 13, point 2): the
kernels of bench/gpu/shapes.py (grid-stride loop, erfc) and bench/gpu/kernels.py (one
element per thread, the polynomial normal CDF) as CUDA C (CuPy RawKernel), with one kind of
operation at a time swapped: erfcf for kiln's precise erfc (src/emit/rt_mathf.h, the
sequence kiln's GPU code uses, within erfcf's 4 ulp), then for approximate forms beyond the
bounds: kiln's fastmath erfc (rt_common.h's sequence, with the precise expf), logf for
__logf, expf for __expf, IEEE division and square root for the approximate ones
(-prec-div=false -prec-sqrt=false), and everything fast (--use_fast_math).  The approximate
rows say how far each function's cost stands between the precise kernel and 3500 GB/s;
kiln may not use them without fastmath.  Same timing and GB/s as shapes.py, one run.

    python3 bench/gpu/mathcost.py
"""
import os
import sys

import numpy as np

import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import copy_ceiling, gpu_time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "..", "src", "emit", "rt_mathf.h")) as f:
    MATHF = "#define KILN_FN static __device__ __forceinline__\ntypedef float f32;\n" + f.read()

PRE = MATHF + r"""
#ifndef ERFC
#define ERFC erfcf
#endif
#ifndef LOG
#define LOG logf
#endif
#ifndef EXP
#define EXP expf
#endif
__device__ float nr_erfcf(float x) {  /* kiln_erfcf_fast's sequence (rt_common.h) */
    float z = fabsf(x);
    float t = 1.0f / fmaf(0.5f, z, 1.0f);
    float p = 0.17087277f;
    p = fmaf(p, t, -0.82215223f); p = fmaf(p, t, 1.48851587f); p = fmaf(p, t, -1.13520398f);
    p = fmaf(p, t, 0.27886807f); p = fmaf(p, t, -0.18628806f); p = fmaf(p, t, 0.09678418f);
    p = fmaf(p, t, 0.37409196f); p = fmaf(p, t, 1.00002368f); p = fmaf(p, t, -1.26551223f);
    float r = t * EXP(fmaf(-z, z, p));
    return x >= 0.0f ? r : 2.0f - r;
}
__device__ float cnd(float d) {
    float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float r = 0.39894228040143267f * EXP(-0.5f * d * d) *
              (K * (0.31938153f + K * (-0.356563782f + K * (1.781477937f + K * (-1.821255978f + K * 1.330274429f)))));
    return d > 0 ? 1.0f - r : r;
}
"""

STRIDE = PRE + r"""
extern "C" __global__ void bs(float *call, float *put, const float *s, const float *x,
                              const float *t, float r, float v, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) {
        float sqrt_t = sqrtf(t[i]);
        float d1 = (LOG(s[i] / x[i]) + (r + 0.5f * v * v) * t[i]) / (v * sqrt_t);
        float d2 = d1 - v * sqrt_t;
        float e = EXP(-r * t[i]);
        float c1 = 0.5f * ERFC(-d1 * 0.70710678f), c2 = 0.5f * ERFC(-d2 * 0.70710678f);
        call[i] = s[i] * c1 - x[i] * e * c2;
        put[i] = x[i] * e * (1.0f - c2) - s[i] * (1.0f - c1);
    }
}"""

ONE = PRE + r"""
extern "C" __global__ void bs(float *call, float *put, const float *s, const float *x,
                              const float *t, float r, float v, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        float sqrt_t = sqrtf(t[i]);
        float d1 = (LOG(s[i] / x[i]) + (r + 0.5f * v * v) * t[i]) / (v * sqrt_t);
        float d2 = d1 - v * sqrt_t;
        float e = EXP(-r * t[i]);
        float c1 = cnd(d1), c2 = cnd(d2);
        call[i] = s[i] * c1 - x[i] * e * c2;
        put[i] = x[i] * e * (1.0f - c2) - s[i] * (1.0f - c1);
    }
}"""

VARIANTS = [
    ("precise (libdevice, IEEE / and sqrt)", ()),
    ("erfc: kiln's precise sequence (rt_mathf.h)", ("-DERFC=kiln_erfcf",)),
    ("erfc: kiln's fastmath sequence", ("-DERFC=nr_erfcf",)),
    ("log: __logf", ("-DLOG=__logf",)),
    ("exp: __expf", ("-DEXP=__expf",)),
    ("erfc fast + log + exp", ("-DERFC=nr_erfcf", "-DLOG=__logf", "-DEXP=__expf")),
    ("division and sqrt approximate", ("-prec-div=false", "-prec-sqrt=false")),
    ("all fast (--use_fast_math, erfc fast)", ("--use_fast_math", "-DERFC=nr_erfcf")),
]


def main():
    ceiling = copy_ceiling()[1]
    rng = np.random.default_rng(1)
    n = (1 << 25) + 3
    s = cp.asarray(rng.uniform(5, 30, n).astype(np.float32))
    x = cp.asarray(rng.uniform(1, 100, n).astype(np.float32))
    t = cp.asarray(rng.uniform(0.25, 10, n).astype(np.float32))
    r, v = np.float32(0.02), np.float32(0.30)
    call, put = cp.empty(n, cp.float32), cp.empty(n, cp.float32)
    ref_call = ref_put = None
    nbytes = 5 * 4 * n
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    print(f"copy ceiling {ceiling:.0f} GB/s\n")
    print("| shape | variant | ms | GB/s | of ceiling | regs |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for shape, src, grid, tpb in (("grid-stride, erfc", STRIDE, sms * 16, 512),
                                  ("one element, cnd", ONE, (n + 255) // 256, 256)):
        for label, opts in VARIANTS:
            k = cp.RawKernel(src, "bs", options=("-std=c++11",) + opts)
            go = lambda: k((grid,), (tpb,), (call, put, s, x, t, r, v, np.int64(n)))
            go()
            c, p = call.get(), put.get()
            if ref_call is None or label.startswith("precise"):
                ref_call, ref_put = c, p
            err = max(float(np.max(np.abs(c - ref_call))), float(np.max(np.abs(p - ref_put))))
            sec = gpu_time(go)
            gbs = nbytes / sec / 1e9
            print(f"| {shape} | {label} | {sec * 1e3:.3f} | {gbs:.0f} | {gbs / ceiling:.1%} | "
                  f"{k.num_regs} |  (max |diff| from precise {err:.2g})")


if __name__ == "__main__":
    main()
