/* rt_libdevice_cpu.h: CUDA's libdevice functions (kiln.libdevice, Numba's
 * cuda.libdevice) for the CPU target, pasted after rt_common.h into a program that calls
 * one (emit.c), so a kernel written with them runs on the host too.  Each __nv_NAME takes
 * and returns what libdevice's does (src/sema/libdevice_table.h; emit_libdevice.c writes
 * the wrappers kiln's calls go through, on both targets).
 *
 * Results: the libm functions are the host's (glibc: within an ulp or two where
 * libdevice documents 1 to 4; the fast_ ones are the accurate functions, which libdevice's
 * approximate); the directed roundings (_rd, _ru, _rz) are exact: the operation runs
 * under the rounding mode it names (fesetround around operands and a result kept in
 * volatiles, so no compiler moves the operation out of the mode), and the conversions
 * saturate and take NaN to 0 as PTX's cvt does.  erfinv, erfcinv, normcdfinv, erfcx and
 * the Bessel functions I0 and I1 have no libm counterpart: they are computed here in
 * double (Newton's method from a first approximation; a power series or the asymptotic
 * expansion), within a few ulp.  __nv_rcp64h has no CPU version: sema refuses it.
 */
#ifdef __TINYC__
/* what this file uses beyond the __TINYC__ section of rt_cpu.h; x86-64's rounding modes */
int fesetround(int);
int fegetround(void);
#define FE_TONEAREST 0
#define FE_DOWNWARD 0x400
#define FE_UPWARD 0x800
#define FE_TOWARDZERO 0xc00
double j0(double); double j1(double); double jn(int, double);
double y0(double); double y1(double); double yn(int, double);
float j0f(float); float j1f(float); float jnf(int, float);
float y0f(float); float y1f(float); float ynf(int, float);
double exp10(double); float exp10f(float);
double nearbyint(double); float nearbyintf(float);
double remquo(double, double, int *); float remquof(float, float, int *);
int ilogb(double); int ilogbf(float);
double scalbn(double, int); float scalbnf(float, int);
double lgamma(double); float lgammaf(float);
#else
#include <fenv.h>
double exp10(double);
float exp10f(float);
float j0f(float); float j1f(float); float jnf(int, float);
float y0f(float); float y1f(float); float ynf(int, float);
#endif

#define KILN_NV_RD FE_DOWNWARD
#define KILN_NV_RU FE_UPWARD
#define KILN_NV_RZ FE_TOWARDZERO
#define KILN_NV_RN FE_TONEAREST

/* ---- the host's libm under another name ---- */
#define KILN_NV1(nv, f, T) KILN_FN T __nv_##nv(T x) { return f(x); }
#define KILN_NV2(nv, f, T) KILN_FN T __nv_##nv(T x, T y) { return f(x, y); }
#define KILN_NV1DF(n) KILN_NV1(n, n, f64) KILN_NV1(n##f, n##f, f32)
#define KILN_NV2DF(n) KILN_NV2(n, n, f64) KILN_NV2(n##f, n##f, f32)
KILN_NV1DF(acos) KILN_NV1DF(acosh) KILN_NV1DF(asin) KILN_NV1DF(asinh) KILN_NV1DF(atan)
KILN_NV1DF(atanh) KILN_NV1DF(cbrt) KILN_NV1DF(ceil) KILN_NV1DF(cos) KILN_NV1DF(cosh)
KILN_NV1DF(erf) KILN_NV1DF(erfc) KILN_NV1DF(exp) KILN_NV1DF(exp10) KILN_NV1DF(exp2)
KILN_NV1DF(expm1) KILN_NV1DF(fabs) KILN_NV1DF(floor) KILN_NV1DF(j0) KILN_NV1DF(j1)
KILN_NV1DF(lgamma) KILN_NV1DF(log) KILN_NV1DF(log10) KILN_NV1DF(log1p) KILN_NV1DF(log2)
KILN_NV1DF(logb) KILN_NV1DF(nearbyint) KILN_NV1DF(rint) KILN_NV1DF(round) KILN_NV1DF(sin)
KILN_NV1DF(sinh) KILN_NV1DF(sqrt) KILN_NV1DF(tan) KILN_NV1DF(tanh) KILN_NV1DF(tgamma)
KILN_NV1DF(trunc) KILN_NV1DF(y0) KILN_NV1DF(y1)
KILN_NV2DF(atan2) KILN_NV2DF(copysign) KILN_NV2DF(fdim) KILN_NV2DF(fmax) KILN_NV2DF(fmin)
KILN_NV2DF(fmod) KILN_NV2DF(hypot) KILN_NV2DF(nextafter) KILN_NV2DF(pow)
KILN_NV2DF(remainder)
KILN_NV1(fast_cosf, cosf, f32) KILN_NV1(fast_exp10f, exp10f, f32) KILN_NV1(fast_expf, expf, f32)
KILN_NV1(fast_log10f, log10f, f32) KILN_NV1(fast_log2f, log2f, f32)
KILN_NV1(fast_logf, logf, f32) KILN_NV1(fast_sinf, sinf, f32) KILN_NV1(fast_tanf, tanf, f32)
KILN_NV1(fast_tanhf, tanhf, f32) KILN_NV2(fast_powf, powf, f32)
KILN_FN f32 __nv_fast_fdividef(f32 x, f32 y) { return x / y; }
KILN_FN void __nv_fast_sincosf(f32 x, f32 *s, f32 *c) { *s = sinf(x); *c = cosf(x); }
KILN_FN void __nv_sincos(f64 x, f64 *s, f64 *c) { *s = sin(x); *c = cos(x); }
KILN_FN void __nv_sincosf(f32 x, f32 *s, f32 *c) { *s = sinf(x); *c = cosf(x); }
KILN_FN f64 __nv_fma(f64 x, f64 y, f64 z) { return fma(x, y, z); }
KILN_FN f32 __nv_fmaf(f32 x, f32 y, f32 z) { return fmaf(x, y, z); }
KILN_FN f64 __nv_frexp(f64 x, i32 *e) { return frexp(x, e); }
KILN_FN f32 __nv_frexpf(f32 x, i32 *e) { return frexpf(x, e); }
KILN_FN f64 __nv_modf(f64 x, f64 *i) { return modf(x, i); }
KILN_FN f32 __nv_modff(f32 x, f32 *i) { return modff(x, i); }
KILN_FN f64 __nv_remquo(f64 x, f64 y, i32 *q) { return remquo(x, y, q); }
KILN_FN f32 __nv_remquof(f32 x, f32 y, i32 *q) { return remquof(x, y, q); }
KILN_FN f64 __nv_ldexp(f64 x, i32 e) { return ldexp(x, e); }
KILN_FN f32 __nv_ldexpf(f32 x, i32 e) { return ldexpf(x, e); }
KILN_FN f64 __nv_scalbn(f64 x, i32 e) { return scalbn(x, e); }
KILN_FN f32 __nv_scalbnf(f32 x, i32 e) { return scalbnf(x, e); }
KILN_FN f64 __nv_jn(i32 n, f64 x) { return jn(n, x); }
KILN_FN f32 __nv_jnf(i32 n, f32 x) { return jnf(n, x); }
KILN_FN f64 __nv_yn(i32 n, f64 x) { return yn(n, x); }
KILN_FN f32 __nv_ynf(i32 n, f32 x) { return ynf(n, x); }
KILN_FN i32 __nv_ilogb(f64 x) { return ilogb(x); }
KILN_FN i32 __nv_ilogbf(f32 x) { return ilogbf(x); }
KILN_FN f64 __nv_powi(f64 x, i32 n) { return pow(x, (f64)n); }
KILN_FN f32 __nv_powif(f32 x, i32 n) { return powf(x, (f32)n); }
KILN_FN f64 __nv_rsqrt(f64 x) { return 1.0 / sqrt(x); }
KILN_FN f32 __nv_rsqrtf(f32 x) { return (f32)(1.0 / sqrt((f64)x)); }
KILN_FN f64 __nv_rcbrt(f64 x) { return 1.0 / cbrt(x); }
KILN_FN f32 __nv_rcbrtf(f32 x) { return (f32)(1.0 / cbrt((f64)x)); }
KILN_FN f64 __nv_rhypot(f64 x, f64 y) { return 1.0 / hypot(x, y); }
KILN_FN f32 __nv_rhypotf(f32 x, f32 y) { return (f32)(1.0 / hypot((f64)x, (f64)y)); }
KILN_FN f64 __nv_norm3d(f64 a, f64 b, f64 c) { return hypot(hypot(a, b), c); }
KILN_FN f32 __nv_norm3df(f32 a, f32 b, f32 c) { return (f32)hypot(hypot((f64)a, (f64)b), (f64)c); }
KILN_FN f64 __nv_norm4d(f64 a, f64 b, f64 c, f64 d) { return hypot(hypot(a, b), hypot(c, d)); }
KILN_FN f32 __nv_norm4df(f32 a, f32 b, f32 c, f32 d) {
    return (f32)hypot(hypot((f64)a, (f64)b), hypot((f64)c, (f64)d));
}
KILN_FN f64 __nv_rnorm3d(f64 a, f64 b, f64 c) { return 1.0 / __nv_norm3d(a, b, c); }
KILN_FN f32 __nv_rnorm3df(f32 a, f32 b, f32 c) { return (f32)(1.0 / hypot(hypot((f64)a, (f64)b), (f64)c)); }
KILN_FN f64 __nv_rnorm4d(f64 a, f64 b, f64 c, f64 d) { return 1.0 / __nv_norm4d(a, b, c, d); }
KILN_FN f32 __nv_rnorm4df(f32 a, f32 b, f32 c, f32 d) {
    return (f32)(1.0 / hypot(hypot((f64)a, (f64)b), hypot((f64)c, (f64)d)));
}
KILN_FN f32 __nv_saturatef(f32 x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
KILN_FN f64 __nv_normcdf(f64 x) { return 0.5 * erfc(-x * 0.70710678118654752440); }
KILN_FN f32 __nv_normcdff(f32 x) { return (f32)(0.5 * erfc(-(f64)x * 0.70710678118654752440)); }

/* sin(pi x), cos(pi x): x reduced exactly to [-1, 1] first, so integers and halves give
 * exact zeros and ones */
KILN_FN f64 kiln_nv_pi_reduce(f64 x) {
    f64 r = fmod(x, 2.0); /* exact */
    if (r > 1.0) r -= 2.0;
    if (r < -1.0) r += 2.0;
    return r;
}
KILN_FN f64 __nv_sinpi(f64 x) {
    if (x != x || x - x != 0) return x - x; /* NaN for NaN and infinities */
    f64 r = kiln_nv_pi_reduce(x);
    if (r == 0.0 || r == 1.0 || r == -1.0) return copysign(0.0, x);
    if (r == 0.5) return 1.0;
    if (r == -0.5) return -1.0;
    return sin(3.14159265358979323846 * r);
}
KILN_FN f64 __nv_cospi(f64 x) {
    if (x != x || x - x != 0) return x - x;
    f64 r = fabs(kiln_nv_pi_reduce(x));
    if (r == 0.5) return 0.0;
    if (r == 0.0) return 1.0;
    if (r == 1.0) return -1.0;
    return cos(3.14159265358979323846 * r);
}
KILN_FN f32 __nv_sinpif(f32 x) { return (f32)__nv_sinpi((f64)x); }
KILN_FN f32 __nv_cospif(f32 x) { return (f32)__nv_cospi((f64)x); }
KILN_FN void __nv_sincospi(f64 x, f64 *s, f64 *c) { *s = __nv_sinpi(x); *c = __nv_cospi(x); }
KILN_FN void __nv_sincospif(f32 x, f32 *s, f32 *c) { *s = __nv_sinpif(x); *c = __nv_cospif(x); }

/* erfinv: Giles's first approximation (in double), then Newton's method on erf; erfcinv
 * likewise on erfc, from the approximation of erfinv(1 - y) written in y, so small y
 * keep their digits */
KILN_FN f64 kiln_nv_erfinv0(f64 w, f64 x) { /* about erfinv(x); w = -log((1 - x)(1 + x)) */
    f64 p;
    if (w < 5.0) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w; p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -0.000200214257;
        p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w; p = 2.83297682 + p * w;
    }
    return p * x;
}
KILN_FN f64 __nv_erfinv(f64 y) {
    if (y != y || y < -1.0 || y > 1.0) return (y - y) / (y - y);
    if (y == 1.0 || y == -1.0) return y / 0.0;
    if (y == 0.0) return y;
    f64 a = fabs(y), x = kiln_nv_erfinv0(-log((1.0 - a) * (1.0 + a)), a);
    for (int k = 0; k < 3; k++) /* erf'(x) = 2/sqrt(pi) exp(-x^2) */
        x -= (erf(x) - a) / (1.12837916709551257390 * exp(-x * x));
    return y < 0 ? -x : x;
}
KILN_FN f64 __nv_erfcinv(f64 y) {
    if (y != y || y < 0.0 || y > 2.0) return (y - y) / (y - y);
    if (y == 0.0) return 1.0 / 0.0;
    if (y == 2.0) return -1.0 / 0.0;
    if (y > 1.0) return -__nv_erfcinv(2.0 - y);
    f64 x = kiln_nv_erfinv0(-log(y * (2.0 - y)), 1.0 - y);
    for (int k = 0; k < 4; k++) {
        f64 d = 1.12837916709551257390 * exp(-x * x);
        if (d == 0.0) break;
        x += (erfc(x) - y) / d;
    }
    return x;
}
KILN_FN f64 __nv_normcdfinv(f64 p) { return -1.41421356237309504880 * __nv_erfcinv(2.0 * p); }
KILN_FN f32 __nv_erfinvf(f32 y) { return (f32)__nv_erfinv((f64)y); }
KILN_FN f32 __nv_erfcinvf(f32 y) { return (f32)__nv_erfcinv((f64)y); }
KILN_FN f32 __nv_normcdfinvf(f32 p) { return (f32)__nv_normcdfinv((f64)p); }

/* erfcx(x) = exp(x^2) erfc(x): the product below 26, the asymptotic series above (where
 * erfc underflows and exp overflows) */
KILN_FN f64 __nv_erfcx(f64 x) {
    if (x < 26.0) return exp(x * x) * erfc(x);
    f64 t = 1.0 / (2.0 * x * x), s = 1.0, term = 1.0;
    for (int k = 1; k < 8; k++) {
        term *= -(2.0 * k - 1.0) * t;
        s += term;
    }
    return s / (x * 1.77245385090551602730);
}
KILN_FN f32 __nv_erfcxf(f32 x) { return (f32)__nv_erfcx((f64)x); }

/* the modified Bessel functions I0 and I1: the power series up to 30, the asymptotic
 * expansion beyond */
KILN_FN f64 kiln_nv_bessel_i(f64 x, int nu) {
    f64 a = fabs(x), r;
    if (a < 30.0) {
        f64 q = a * a / 4.0, term = nu ? a / 2.0 : 1.0, s = term;
        for (int k = 1; k < 200 && term > s * 1e-17; k++) {
            term *= q / ((f64)k * (f64)(k + nu));
            s += term;
        }
        r = s;
    } else {
        f64 mu = 4.0 * nu * nu, term = 1.0, s = 1.0;
        for (int k = 1; k < 12; k++) {
            term *= -(mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (k * 8.0 * a);
            s += term;
        }
        r = exp(a) / sqrt(2.0 * 3.14159265358979323846 * a) * s;
    }
    return nu && x < 0 ? -r : r;
}
KILN_FN f64 __nv_cyl_bessel_i0(f64 x) { return kiln_nv_bessel_i(x, 0); }
KILN_FN f64 __nv_cyl_bessel_i1(f64 x) { return kiln_nv_bessel_i(x, 1); }
KILN_FN f32 __nv_cyl_bessel_i0f(f32 x) { return (f32)kiln_nv_bessel_i((f64)x, 0); }
KILN_FN f32 __nv_cyl_bessel_i1f(f32 x) { return (f32)kiln_nv_bessel_i((f64)x, 1); }

/* ---- classification and bits ---- */
KILN_FN i32 __nv_isnand(f64 x) { return x != x; }
KILN_FN i32 __nv_isnanf(f32 x) { return x != x; }
KILN_FN i32 __nv_isinfd(f64 x) { return x == x && x - x != 0; }
KILN_FN i32 __nv_isinff(f32 x) { return x == x && x - x != 0; }
KILN_FN i32 __nv_isfinited(f64 x) { return x - x == 0; }
KILN_FN i32 __nv_finitef(f32 x) { return x - x == 0; }
KILN_FN i32 __nv_signbitd(f64 x) { u64 b; memcpy(&b, &x, 8); return (i32)(b >> 63); }
KILN_FN i32 __nv_signbitf(f32 x) { u32 b; memcpy(&b, &x, 4); return (i32)(b >> 31); }
KILN_FN i64 __nv_double_as_longlong(f64 x) { i64 b; memcpy(&b, &x, 8); return b; }
KILN_FN f64 __nv_longlong_as_double(i64 b) { f64 x; memcpy(&x, &b, 8); return x; }
KILN_FN i32 __nv_float_as_int(f32 x) { i32 b; memcpy(&b, &x, 4); return b; }
KILN_FN i32 __nv_float_as_uint(f32 x) { i32 b; memcpy(&b, &x, 4); return b; }
KILN_FN f32 __nv_int_as_float(i32 b) { f32 x; memcpy(&x, &b, 4); return x; }
KILN_FN f32 __nv_uint_as_float(u32 b) { f32 x; memcpy(&x, &b, 4); return x; }
KILN_FN i32 __nv_double2hiint(f64 x) { u64 b; memcpy(&b, &x, 8); return (i32)(u32)(b >> 32); }
KILN_FN i32 __nv_double2loint(f64 x) { u64 b; memcpy(&b, &x, 8); return (i32)(u32)b; }
KILN_FN f64 __nv_hiloint2double(i32 hi, i32 lo) {
    u64 b = ((u64)(u32)hi << 32) | (u32)lo;
    f64 x;
    memcpy(&x, &b, 8);
    return x;
}

/* ---- integers ---- */
KILN_FN i32 __nv_abs(i32 x) { return x < 0 ? (i32)(0u - (u32)x) : x; }
KILN_FN i64 __nv_llabs(i64 x) { return x < 0 ? (i64)(0ull - (u64)x) : x; }
KILN_FN i32 __nv_max(i32 a, i32 b) { return a > b ? a : b; }
KILN_FN i32 __nv_min(i32 a, i32 b) { return a < b ? a : b; }
KILN_FN i64 __nv_llmax(i64 a, i64 b) { return a > b ? a : b; }
KILN_FN i64 __nv_llmin(i64 a, i64 b) { return a < b ? a : b; }
KILN_FN u32 __nv_umax(u32 a, u32 b) { return a > b ? a : b; }
KILN_FN u32 __nv_umin(u32 a, u32 b) { return a < b ? a : b; }
KILN_FN u64 __nv_ullmax(u64 a, u64 b) { return a > b ? a : b; }
KILN_FN u64 __nv_ullmin(u64 a, u64 b) { return a < b ? a : b; }
KILN_FN i32 __nv_brev(i32 x) { return (i32)(u32)(kiln_brev64((u64)(u32)x) >> 32); }
KILN_FN i64 __nv_brevll(i64 x) { return (i64)kiln_brev64((u64)x); }
KILN_FN i32 __nv_clz(i32 x) { return (i32)kiln_clz64((u64)(u32)x) - 32; }
KILN_FN i32 __nv_clzll(i64 x) { return (i32)kiln_clz64((u64)x); }
KILN_FN i32 __nv_ffs(i32 x) { return (i32)kiln_ffs64((u64)(u32)x); }
KILN_FN i32 __nv_ffsll(i64 x) { return (i32)kiln_ffs64((u64)x); }
KILN_FN i32 __nv_popc(i32 x) { return (i32)kiln_popc64((u64)(u32)x); }
KILN_FN i32 __nv_popcll(i64 x) { return (i32)kiln_popc64((u64)x); }
KILN_FN i32 __nv_byte_perm(i32 x, i32 y, i32 s) {
    u64 v = ((u64)(u32)y << 32) | (u32)x;
    u32 r = 0;
    for (int n = 0; n < 4; n++) r |= (u32)((v >> (8 * (((u32)s >> (4 * n)) & 7))) & 0xff) << (8 * n);
    return (i32)r;
}
KILN_FN i32 __nv_hadd(i32 a, i32 b) { return (i32)(((i64)a + b) >> 1); }
KILN_FN i32 __nv_rhadd(i32 a, i32 b) { return (i32)(((i64)a + b + 1) >> 1); }
KILN_FN u32 __nv_uhadd(u32 a, u32 b) { return (u32)(((u64)a + b) >> 1); }
KILN_FN u32 __nv_urhadd(u32 a, u32 b) { return (u32)(((u64)a + b + 1) >> 1); }
KILN_FN i32 __nv_mul24(i32 a, i32 b) {
    i64 x = (i64)((u32)a << 8) << 32 >> 40, y = (i64)((u32)b << 8) << 32 >> 40;
    return (i32)(u32)(u64)(x * y);
}
KILN_FN u32 __nv_umul24(u32 a, u32 b) { return (u32)((u64)(a & 0xffffff) * (b & 0xffffff)); }
KILN_FN i32 __nv_mulhi(i32 a, i32 b) { return (i32)(((i64)a * b) >> 32); }
KILN_FN u32 __nv_umulhi(u32 a, u32 b) { return (u32)(((u64)a * b) >> 32); }
KILN_FN u64 __nv_umul64hi(u64 a, u64 b) { /* in 32-bit limbs: tcc has no 128-bit integer */
    u64 al = (u32)a, ah = a >> 32, bl = (u32)b, bh = b >> 32;
    u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    u64 mid = (ll >> 32) + (u32)lh + (u32)hl;
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}
KILN_FN i64 __nv_mul64hi(i64 a, i64 b) {
    u64 h = __nv_umul64hi((u64)a, (u64)b);
    if (a < 0) h -= (u64)b;
    if (b < 0) h -= (u64)a;
    return (i64)h;
}
KILN_FN i32 __nv_sad(i32 x, i32 y, i32 z) { return (i32)((x > y ? (u32)x - (u32)y : (u32)y - (u32)x) + (u32)z); }
KILN_FN u32 __nv_usad(u32 x, u32 y, u32 z) { return (x > y ? x - y : y - x) + z; }

/* ---- directed rounding: the operation under the mode, between volatiles ---- */
#define KILN_NV_RM(T, expr)                                                                  \
    {                                                                                        \
        volatile T r_;                                                                       \
        int old_ = fegetround();                                                             \
        fesetround(mode);                                                                    \
        r_ = (expr);                                                                         \
        fesetround(old_);                                                                    \
        return r_;                                                                           \
    }
KILN_FN f64 kiln_nv_dadd(f64 a, f64 b, int mode) { volatile f64 x = a, y = b; KILN_NV_RM(f64, x + y) }
KILN_FN f64 kiln_nv_dsub(f64 a, f64 b, int mode) { volatile f64 x = a, y = b; KILN_NV_RM(f64, x - y) }
KILN_FN f64 kiln_nv_dmul(f64 a, f64 b, int mode) { volatile f64 x = a, y = b; KILN_NV_RM(f64, x * y) }
KILN_FN f64 kiln_nv_ddiv(f64 a, f64 b, int mode) { volatile f64 x = a, y = b; KILN_NV_RM(f64, x / y) }
KILN_FN f64 kiln_nv_dsqrt(f64 a, int mode) { volatile f64 x = a; KILN_NV_RM(f64, sqrt(x)) }
KILN_FN f64 kiln_nv_dfma(f64 a, f64 b, f64 c, int mode) {
    volatile f64 x = a, y = b, z = c;
    KILN_NV_RM(f64, fma(x, y, z))
}
KILN_FN f32 kiln_nv_fadd(f32 a, f32 b, int mode) { volatile f32 x = a, y = b; KILN_NV_RM(f32, x + y) }
KILN_FN f32 kiln_nv_fsub(f32 a, f32 b, int mode) { volatile f32 x = a, y = b; KILN_NV_RM(f32, x - y) }
KILN_FN f32 kiln_nv_fmul(f32 a, f32 b, int mode) { volatile f32 x = a, y = b; KILN_NV_RM(f32, x * y) }
KILN_FN f32 kiln_nv_fdiv(f32 a, f32 b, int mode) { volatile f32 x = a, y = b; KILN_NV_RM(f32, x / y) }
KILN_FN f32 kiln_nv_fsqrt(f32 a, int mode) { volatile f32 x = a; KILN_NV_RM(f32, sqrtf(x)) }
KILN_FN f32 kiln_nv_ffma(f32 a, f32 b, f32 c, int mode) {
    volatile f32 x = a, y = b, z = c;
    KILN_NV_RM(f32, fmaf(x, y, z))
}
KILN_FN f32 kiln_nv_d2f(f64 a, int mode) { volatile f64 x = a; KILN_NV_RM(f32, (f32)x) }
KILN_FN f64 kiln_nv_l2d(i64 a, int mode) { volatile i64 x = a; KILN_NV_RM(f64, (f64)x) }
KILN_FN f32 kiln_nv_l2f(i64 a, int mode) { volatile i64 x = a; KILN_NV_RM(f32, (f32)x) }
/* unsigned 64-bit: halved with the lost bit kept (sticky), which rounds alike in every
 * mode, then doubled exactly */
KILN_FN f64 kiln_nv_ul2d(u64 a, int mode) {
    if (a < (1ull << 63)) return kiln_nv_l2d((i64)a, mode);
    return 2.0 * kiln_nv_l2d((i64)((a >> 1) | (a & 1)), mode);
}
KILN_FN f32 kiln_nv_ul2f(u64 a, int mode) {
    if (a < (1ull << 63)) return kiln_nv_l2f((i64)a, mode);
    return 2.0f * kiln_nv_l2f((i64)((a >> 1) | (a & 1)), mode);
}
#define KILN_NV_MODES(X) X(rd, KILN_NV_RD) X(ru, KILN_NV_RU) X(rz, KILN_NV_RZ) X(rn, KILN_NV_RN)
#define KILN_NV_ARITH(m, M)                                                                        \
    KILN_FN f64 __nv_dadd_##m(f64 a, f64 b) { return kiln_nv_dadd(a, b, M); }                    \
    KILN_FN f64 __nv_dsub_##m(f64 a, f64 b) { return kiln_nv_dsub(a, b, M); }                    \
    KILN_FN f64 __nv_dmul_##m(f64 a, f64 b) { return kiln_nv_dmul(a, b, M); }                    \
    KILN_FN f64 __nv_ddiv_##m(f64 a, f64 b) { return kiln_nv_ddiv(a, b, M); }                    \
    KILN_FN f64 __nv_drcp_##m(f64 a) { return kiln_nv_ddiv(1.0, a, M); }                         \
    KILN_FN f64 __nv_dsqrt_##m(f64 a) { return kiln_nv_dsqrt(a, M); }                            \
    KILN_FN f64 __nv_fma_##m(f64 a, f64 b, f64 c) { return kiln_nv_dfma(a, b, c, M); }           \
    KILN_FN f32 __nv_fadd_##m(f32 a, f32 b) { return kiln_nv_fadd(a, b, M); }                    \
    KILN_FN f32 __nv_fsub_##m(f32 a, f32 b) { return kiln_nv_fsub(a, b, M); }                    \
    KILN_FN f32 __nv_fmul_##m(f32 a, f32 b) { return kiln_nv_fmul(a, b, M); }                    \
    KILN_FN f32 __nv_fdiv_##m(f32 a, f32 b) { return kiln_nv_fdiv(a, b, M); }                    \
    KILN_FN f32 __nv_frcp_##m(f32 a) { return kiln_nv_fdiv(1.0f, a, M); }                        \
    KILN_FN f32 __nv_fsqrt_##m(f32 a) { return kiln_nv_fsqrt(a, M); }                            \
    KILN_FN f32 __nv_fmaf_##m(f32 a, f32 b, f32 c) { return kiln_nv_ffma(a, b, c, M); }          \
    KILN_FN f32 __nv_fmaf_ieee_##m(f32 a, f32 b, f32 c) { return kiln_nv_ffma(a, b, c, M); }     \
    KILN_FN f32 __nv_double2float_##m(f64 a) { return kiln_nv_d2f(a, M); }                       \
    KILN_FN f32 __nv_int2float_##m(i32 a) { return kiln_nv_l2f(a, M); }                          \
    KILN_FN f32 __nv_uint2float_##m(u32 a) { return kiln_nv_l2f(a, M); }                         \
    KILN_FN f64 __nv_ll2double_##m(i64 a) { return kiln_nv_l2d(a, M); }                          \
    KILN_FN f32 __nv_ll2float_##m(i64 a) { return kiln_nv_l2f(a, M); }                           \
    KILN_FN f64 __nv_ull2double_##m(u64 a) { return kiln_nv_ul2d(a, M); }                        \
    KILN_FN f32 __nv_ull2float_##m(u64 a) { return kiln_nv_ul2f(a, M); }
KILN_NV_MODES(KILN_NV_ARITH)
KILN_FN f32 __nv_frsqrt_rn(f32 a) { return kiln_nv_d2f(1.0 / sqrt((f64)a), KILN_NV_RN); }
KILN_FN f64 __nv_int2double_rn(i32 a) { return (f64)a; }
KILN_FN f64 __nv_uint2double_rn(u32 a) { return (f64)a; }

/* ---- float to integer: rounded as named, saturated, NaN to 0 (PTX's cvt) ---- */
KILN_FN f64 kiln_nv_round_as(f64 x, int mode) {
    if (x - x != 0) return x; /* infinities (and NaN) as they are */
    return mode == KILN_NV_RD ? floor(x) : mode == KILN_NV_RU ? ceil(x)
         : mode == KILN_NV_RZ ? trunc(x) : x - remainder(x, 1.0); /* rn: halves to even */
}
KILN_FN i64 kiln_nv_to_i64(f64 x, int mode, f64 lo, f64 hi, i64 ilo, i64 ihi) {
    if (x != x) return 0;
    f64 r = kiln_nv_round_as(x, mode);
    return r <= lo ? ilo : r >= hi ? ihi : (i64)r;
}
KILN_FN u64 kiln_nv_to_u64(f64 x, int mode) {
    if (x != x) return 0;
    f64 r = kiln_nv_round_as(x, mode);
    if (r <= 0.0) return 0;
    if (r >= 18446744073709551616.0) return ~0ull;
    return r >= 9223372036854775808.0 ? (u64)(i64)(r - 9223372036854775808.0) + (1ull << 63)
                                      : (u64)(i64)r;
}
#define KILN_NV_CVT(m, M)                                                                          \
    KILN_FN i32 __nv_double2int_##m(f64 x) {                                                     \
        return (i32)kiln_nv_to_i64(x, M, -2147483648.0, 2147483647.0, -2147483647 - 1, 2147483647); \
    }                                                                                            \
    KILN_FN u32 __nv_double2uint_##m(f64 x) {                                                    \
        return (u32)kiln_nv_to_i64(x, M, 0.0, 4294967295.0, 0, 4294967295ll);                    \
    }                                                                                            \
    KILN_FN i64 __nv_double2ll_##m(f64 x) {                                                      \
        return kiln_nv_to_i64(x, M, -9223372036854775808.0, 9223372036854775808.0,              \
                              -9223372036854775807ll - 1, 9223372036854775807ll);                \
    }                                                                                            \
    KILN_FN u64 __nv_double2ull_##m(f64 x) { return kiln_nv_to_u64(x, M); }                      \
    KILN_FN i32 __nv_float2int_##m(f32 x) { return __nv_double2int_##m((f64)x); }                \
    KILN_FN u32 __nv_float2uint_##m(f32 x) { return __nv_double2uint_##m((f64)x); }              \
    KILN_FN i64 __nv_float2ll_##m(f32 x) { return __nv_double2ll_##m((f64)x); }                 \
    KILN_FN u64 __nv_float2ull_##m(f32 x) { return __nv_double2ull_##m((f64)x); }
KILN_NV_MODES(KILN_NV_CVT)
KILN_FN i64 __nv_llrint(f64 x) { return __nv_double2ll_rn(x); }
KILN_FN i64 __nv_llrintf(f32 x) { return __nv_double2ll_rn((f64)x); }
KILN_FN i64 __nv_llround(f64 x) { return __nv_double2ll_rz(round(x)); }
KILN_FN i64 __nv_llroundf(f32 x) { return __nv_double2ll_rz(round((f64)x)); }
