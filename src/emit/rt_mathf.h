/* rt_mathf.h: kiln's own precise float32 math, where it is cheaper on the GPU than
 * libdevice's function and within the same documented bound (CUDA Math API, single
 * precision).  Pasted after rt_common.h into generated CUDA C; plain C over fmaf,
 * fabsf and expf, so tests/python/test_math_ulp.py also compiles it as host C (with
 * KILN_FN and f32 defined) and sweeps it on the CPU.  The GPU test sweeps every float32
 * input.  emit_expr.c's math_call picks these names on the GPU when fastmath is off.
 */

/* 1/d within an ulp or two: the GPU's MUFU.RCP (no slow path; d >= 1 here, so flushing
 * subnormals changes nothing), the correctly rounded quotient on the host.  Callers
 * correct for its error. */
#ifdef __CUDACC__
KILN_FN f32 kiln_rcp_approx(f32 d) {
    f32 r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
    return r;
}
#else
KILN_FN f32 kiln_rcp_approx(f32 d) { return 1.0f / d; }
#endif

/* math.erfc on float32, within libdevice's 4 ulp (erfcf).  For a = |x|,
 * erfc(a) = exp(-a*a) * t * Q(t) with t = 1 / (1 + a/2) and Q a degree-10 polynomial
 * (a weighted least-squares fit of erfc(a) * exp(a*a) / t on [0, 10.0546875], its
 * coefficients refitted after each was rounded to float32: 1.7e-8 relative).  One
 * reciprocal where libdevice's erfcf divides twice: t's own error (1 + a/2 rounded, and
 * the approximate reciprocal) is measured exactly by two fmas, e = 1 - (1 + a/2) * t,
 * and so is a*a's rounding, sl; both are applied as one relative correction
 * e * A(t) - sl, where A(t) = 1 + t Q'(t) / Q(t) (1.19 to 2.26, here to 0.06) is how much
 * a relative error in t moves t * Q(t).  exp(-a*a) is CUDA's expf (2 ulp): the result
 * underflows to a subnormal with it, whose absolute error only shrinks when multiplied by
 * t * Q(t) < 1.  Past a = 10.0546875 erfc is below half the smallest subnormal: 0.  For
 * x < 0, 2 - erfc(-x).  NaN stays NaN (every step carries it), +inf gives 0, -inf 2,
 * -0 and subnormals 1.  sm_90 code: 34 instructions (libdevice's erfcf: 45), one MUFU.RCP
 * and one MUFU.EX2 (libdevice: two and one). */
KILN_FN f32 kiln_erfcf(f32 x) {
    f32 a = fabsf(x);
    f32 d = fmaf(0.5f, a, 1.0f);
    f32 dl = fmaf(0.5f, a, 1.0f - d); /* 1 + a/2 - d exactly: 1 - d is exact for d >= 1 */
    f32 t = kiln_rcp_approx(d);
    f32 e = fmaf(-d, t, 1.0f);
    e = fmaf(-dl, t, e);
    f32 q = 3.548257798e-02f;
    q = fmaf(q, t, -1.893436909e-01f);
    q = fmaf(q, t, 3.770208955e-01f);
    q = fmaf(q, t, -2.829960883e-01f);
    q = fmaf(q, t, -2.825417556e-02f);
    q = fmaf(q, t, 3.938934579e-02f);
    q = fmaf(q, t, 5.318884552e-02f);
    q = fmaf(q, t, 1.860675365e-01f);
    q = fmaf(q, t, 2.450958639e-01f);
    q = fmaf(q, t, 2.822607458e-01f);
    q = fmaf(q, t, 2.820881605e-01f);
    f32 s = a * a;
    f32 sl = fmaf(a, a, -s); /* a*a - s exactly */
    f32 c = fmaf(e, fmaf(1.336f, t, 0.974f), -sl);
    f32 r = t * q * expf(-s);
    r = fmaf(r, c, r);
    if (a > 10.0546875f) r = 0.0f;
    return x < 0.0f ? 2.0f - r : r;
}
