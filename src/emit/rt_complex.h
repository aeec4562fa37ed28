/* rt_complex.h: complex64 and complex128 for kernels, on both targets.
 *
 * Pasted after rt_common.h, only into programs that use complex values (the
 * emitter says so: E->uses_complex), so other kernels pay nothing to parse it.
 * It must read as C99, as tcc's C (tier 0: no _Complex, no headers) and as
 * CUDA C++ (NVRTC has neither <complex> nor <cuComplex.h> without the toolkit's
 * include path): so one plain struct of two floats, NumPy's layout, with
 * functions, and the emitter writes every complex operation as a call.
 *
 * The arithmetic is NumPy's: the naive product (no C99 Annex G recovery of
 * infinities), Smith's quotient with a zero divisor giving infinities or NaN
 * rather than an error, and NumPy's power (small integer exponents by repeated
 * products, else exp(b log a)).  complex64 arithmetic and abs() run in float32
 * as NumPy's do.  cmath's functions follow CPython's algorithms (cmathmodule.c)
 * with the special values Numba's CUDA target gives; they are written once, in
 * double precision, and complex64 rounds their results, so complex64 gets them
 * correctly rounded or nearly, at a double's cost.
 */

typedef struct { f32 re, im; } c64;
typedef struct { f64 re, im; } c128;

KILN_FN c64 kiln_c64(f32 re, f32 im) { c64 r; r.re = re; r.im = im; return r; }
KILN_FN c128 kiln_c128(f64 re, f64 im) { c128 r; r.re = re; r.im = im; return r; }
KILN_FN c64 kiln_c64_c128(c128 z) { return kiln_c64((f32)z.re, (f32)z.im); }
KILN_FN c128 kiln_c128_c64(c64 z) { return kiln_c128((f64)z.re, (f64)z.im); }

/* The arithmetic of one precision: T the complex type, R its parts' type, S
 * the suffix of R's math functions ("f" or nothing). */
#define KILN_CARITH(T, R, S)                                                              \
    KILN_FN T kiln_add_##T(T a, T b) { return kiln_##T(a.re + b.re, a.im + b.im); }      \
    KILN_FN T kiln_sub_##T(T a, T b) { return kiln_##T(a.re - b.re, a.im - b.im); }      \
    KILN_FN T kiln_mul_##T(T a, T b) {                                                    \
        return kiln_##T(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);            \
    }                                                                                     \
    /* CPython's division (Smith's), dividing by the denominator: its reciprocal    \
     * overflows for a subnormal one, and 0 * inf is NaN where Python has 0 */            \
    KILN_FN T kiln_div_##T(T a, T b) {                                                    \
        R abr = fabs##S(b.re), abi = fabs##S(b.im);                                       \
        if (abr >= abi) {                                                                 \
            if (abr == 0 && abi == 0) return kiln_##T(a.re / abr, a.im / abr);           \
            R rat = b.im / b.re, den = b.re + b.im * rat;                                 \
            return kiln_##T((a.re + a.im * rat) / den, (a.im - a.re * rat) / den);        \
        }                                                                                 \
        R rat = b.re / b.im, den = b.re * rat + b.im;                                     \
        return kiln_##T((a.re * rat + a.im) / den, (a.im * rat - a.re) / den);            \
    }                                                                                     \
    KILN_FN T kiln_neg_##T(T a) { return kiln_##T(-a.re, -a.im); }                       \
    KILN_FN T kiln_conj_##T(T a) { return kiln_##T(a.re, -a.im); }                       \
    KILN_FN kbool kiln_eq_##T(T a, T b) { return a.re == b.re && a.im == b.im; }        \
    KILN_FN kbool kiln_nz_##T(T a) { return a.re != 0 || a.im != 0; }                   \
    KILN_FN R kiln_abs_##T(T a) { return hypot##S(a.re, a.im); }                         \
    KILN_FN R kiln_phase_##T(T a) { return atan2##S(a.im, a.re); }                       \
    KILN_FN kbool kiln_isnan_##T(T a) { return isnan(a.re) || isnan(a.im); }            \
    KILN_FN kbool kiln_isinf_##T(T a) { return isinf(a.re) || isinf(a.im); }            \
    KILN_FN kbool kiln_isfinite_##T(T a) { return isfinite(a.re) && isfinite(a.im); }
KILN_CARITH(c64, f32, f)
KILN_CARITH(c128, f64, )

/* ---- cmath, in double precision ----------------------------------------------------- */

/* Past these, the formulas below would overflow in an intermediate step. */
#define KILN_C_LARGE 4.49423283715578976932e307 /* DBL_MAX / 4 */
#define KILN_C_SQRT_LARGE 1.3407807929942596e154 /* sqrt(DBL_MAX / 4) */
#define KILN_C_SQRT_MIN 1.4916681462400413e-154 /* sqrt(DBL_MIN) */
#define KILN_C_DBL_MIN 2.2250738585072014e-308 /* DBL_MIN: below, a number is subnormal */
#define KILN_C_LN4 1.3862943611198906
#define KILN_C_LN10 2.302585092994045684
#define KILN_C_PI_2 1.5707963267948966

KILN_FN c128 kiln_csqrt_c128(c128 z) {
    f64 a = z.re, b = z.im;
    if (a == 0 && b == 0) return kiln_c128(0.0, b);
    if (isinf(b)) return kiln_c128(fabs(b), b);
    if (isnan(a)) return kiln_c128(a, a);
    if (isinf(a)) {
        if (a < 0) return kiln_c128(fabs(b - b), copysign(a, b));
        return kiln_c128(a, copysign(b - b, b));
    }
    /* scaled by 1/4 near the top of the range, so that a + |z| cannot overflow */
    kbool scale = fabs(a) >= KILN_C_LARGE || fabs(b) >= KILN_C_LARGE;
    if (scale) {
        a *= 0.25;
        b *= 0.25;
    }
    f64 re, im, t;
    if (fabs(a) < KILN_C_DBL_MIN && fabs(b) < KILN_C_DBL_MIN) {
        /* |z| would be subnormal: (|a| + |z|) / 2 computed at 2^53 times the size
         * (exact), its root scaled back by 2^-27 (as CPython's cmath.sqrt) */
        f64 sa = ldexp(fabs(a), 53);
        t = ldexp(sqrt(sa + hypot(sa, ldexp(b, 53))), -27);
    } else {
        t = sqrt((fabs(a) + hypot(a, b)) * 0.5);
    }
    if (a >= 0) {
        re = t;
        im = b / (2 * t);
    } else {
        re = fabs(b) / (2 * t);
        im = copysign(t, b);
    }
    return scale ? kiln_c128(re * 2, im * 2) : kiln_c128(re, im);
}

KILN_FN c128 kiln_cexp_c128(c128 z) {
    f64 x = z.re, y = z.im;
    if (isfinite(x)) {
        if (!isfinite(y)) return kiln_c128(KILN_NAN, KILN_NAN);
        f64 r = exp(x);
        return kiln_c128(r * cos(y), r * sin(y));
    }
    if (isnan(x)) return y != 0 ? kiln_c128(x, x) : kiln_c128(x, y);
    if (x > 0) {
        if (!isfinite(y)) return kiln_c128(x, KILN_NAN);
        /* inf * 0 would be NaN: a zero part stays zero (exp(inf + 0j) is inf + 0j) */
        f64 re = cos(y), im = sin(y);
        return kiln_c128(re != 0 ? re * x : re, im != 0 ? im * x : im);
    }
    if (!isfinite(y)) return kiln_c128(0.0, 0.0);
    return kiln_c128(0.0 * cos(y), 0.0 * sin(y));
}

/* log|z| with log1p near |z| = 1, where log(hypot) would lose the digits, and
 * scaled at both ends of the range (CPython's c_log) */
KILN_FN c128 kiln_clog_c128(c128 z) {
    f64 ax = fabs(z.re), ay = fabs(z.im), re;
    if (ax > KILN_C_LARGE || ay > KILN_C_LARGE) {
        re = log(hypot(ax / 2, ay / 2)) + 0.6931471805599453;
    } else if (ax < 2.2250738585072014e-308 && ay < 2.2250738585072014e-308) {
        /* subnormal parts: 2**53 times larger, then log(2**53) less */
        re = ax > 0 || ay > 0 ? log(hypot(ax * 9007199254740992.0, ay * 9007199254740992.0)) -
                                    53 * 0.6931471805599453
                              : -KILN_INF;
    } else {
        f64 h = hypot(ax, ay);
        if (0.71 <= h && h <= 1.73) {
            f64 am = ax > ay ? ax : ay, an = ax > ay ? ay : ax;
            re = log1p((am - 1) * (am + 1) + an * an) / 2;
        } else {
            re = log(h);
        }
    }
    return kiln_c128(re, atan2(z.im, z.re));
}

/* cmath.log(z, base), rounded once for complex64 */
KILN_FN c128 kiln_clogb_c128(c128 z, c128 b) {
    return kiln_div_c128(kiln_clog_c128(z), kiln_clog_c128(b));
}
KILN_FN c64 kiln_clogb_c64(c64 z, c64 b) {
    return kiln_c64_c128(kiln_clogb_c128(kiln_c128_c64(z), kiln_c128_c64(b)));
}

KILN_FN c128 kiln_clog10_c128(c128 z) {
    c128 l = kiln_clog_c128(z);
    return kiln_c128(l.re / KILN_C_LN10, l.im / KILN_C_LN10);
}

/* numpy.log2(z): log(z) / ln 2, part by part, as NumPy's nc_log2 */
KILN_FN c128 kiln_clog2_c128(c128 z) {
    c128 l = kiln_clog_c128(z);
    return kiln_c128(l.re * 1.4426950408889634, l.im * 1.4426950408889634);
}

KILN_FN c128 kiln_ccosh_c128(c128 z) {
    f64 x = z.re, y = z.im;
    if (isinf(x)) {
        f64 re, im;
        if (isnan(y) || y == 0) {
            re = fabs(x);
            im = y;
        } else {
            re = copysign(x, cos(y));
            im = copysign(x, sin(y));
        }
        return kiln_c128(re, x < 0 ? -im : im);
    }
    return kiln_c128(cos(y) * cosh(x), sin(y) * sinh(x));
}

KILN_FN c128 kiln_csinh_c128(c128 z) {
    f64 x = z.re, y = z.im;
    if (isinf(x)) {
        if (isnan(y)) return kiln_c128(x, y);
        f64 re = cos(y), im = sin(y);
        return kiln_c128(re != 0 ? re * x : re, im != 0 ? im * fabs(x) : im);
    }
    return kiln_c128(cos(y) * sinh(x), sin(y) * cosh(x));
}

KILN_FN c128 kiln_ctanh_c128(c128 z) {
    f64 x = z.re, y = z.im;
    if (isinf(x)) return kiln_c128(copysign(1.0, x), isinf(y) ? 0.0 : copysign(0.0, sin(2 * y)));
    f64 tx = tanh(x), ty = tan(y), cx = 1.0 / cosh(x);
    f64 txty = tx * ty, den = 1.0 + txty * txty;
    return kiln_c128(tx * (1.0 + ty * ty) / den, ((ty / den) * cx) * cx);
}

/* cos(z) = cosh(iz), sin(z) = -i sinh(iz), tan(z) = -i tanh(iz) */
KILN_FN c128 kiln_ccos_c128(c128 z) { return kiln_ccosh_c128(kiln_c128(-z.im, z.re)); }
KILN_FN c128 kiln_csin_c128(c128 z) {
    c128 r = kiln_csinh_c128(kiln_c128(-z.im, z.re));
    return kiln_c128(r.im, -r.re);
}
KILN_FN c128 kiln_ctan_c128(c128 z) {
    c128 r = kiln_ctanh_c128(kiln_c128(-z.im, z.re));
    return kiln_c128(r.im, -r.re);
}

KILN_FN c128 kiln_cacos_c128(c128 z) {
    if (fabs(z.re) > KILN_C_LARGE || fabs(z.im) > KILN_C_LARGE) {
        f64 l = log(hypot(z.re * 0.5, z.im * 0.5)) + KILN_C_LN4;
        return kiln_c128(atan2(fabs(z.im), z.re), copysign(l, -z.im));
    }
    c128 s1 = kiln_csqrt_c128(kiln_c128(1.0 - z.re, -z.im));
    c128 s2 = kiln_csqrt_c128(kiln_c128(1.0 + z.re, z.im));
    return kiln_c128(2.0 * atan2(s1.re, s2.re), asinh(s2.re * s1.im - s2.im * s1.re));
}

KILN_FN c128 kiln_cacosh_c128(c128 z) {
    if (fabs(z.re) > KILN_C_LARGE || fabs(z.im) > KILN_C_LARGE)
        return kiln_c128(log(hypot(z.re * 0.5, z.im * 0.5)) + KILN_C_LN4, atan2(z.im, z.re));
    c128 s1 = kiln_csqrt_c128(kiln_c128(z.re - 1.0, z.im));
    c128 s2 = kiln_csqrt_c128(kiln_c128(z.re + 1.0, z.im));
    return kiln_c128(asinh(s1.re * s2.re + s1.im * s2.im), 2.0 * atan2(s1.im, s2.re));
}

KILN_FN c128 kiln_casinh_c128(c128 z) {
    if (fabs(z.re) > KILN_C_LARGE || fabs(z.im) > KILN_C_LARGE) {
        f64 l = log(hypot(z.re * 0.5, z.im * 0.5)) + KILN_C_LN4;
        return kiln_c128(copysign(l, z.re), atan2(z.im, fabs(z.re)));
    }
    c128 s1 = kiln_csqrt_c128(kiln_c128(1.0 + z.im, -z.re));
    c128 s2 = kiln_csqrt_c128(kiln_c128(1.0 - z.im, z.re));
    return kiln_c128(asinh(s1.re * s2.im - s2.re * s1.im), atan2(z.im, s1.re * s2.re - s1.im * s2.im));
}

/* asin(z) = -i asinh(iz) */
KILN_FN c128 kiln_casin_c128(c128 z) {
    c128 r = kiln_casinh_c128(kiln_c128(-z.im, z.re));
    return kiln_c128(r.im, -r.re);
}

KILN_FN c128 kiln_catanh_c128(c128 z) {
    /* atanh(-z) = -atanh(z): work with a non-negative real part */
    kbool neg = z.re < 0;
    f64 x = neg ? -z.re : z.re, y = neg ? -z.im : z.im, ay = fabs(y), re, im;
    if (isnan(x) || x > KILN_C_SQRT_LARGE || ay > KILN_C_SQRT_LARGE) {
        if (isinf(y)) {
            re = copysign(0.0, x);
        } else if (isinf(x)) {
            re = 0.0;
        } else {
            f64 h = hypot(x * 0.5, y * 0.5);
            re = x / 4.0 / h / h;
        }
        im = -copysign(KILN_C_PI_2, -y);
    } else if (x == 1.0 && ay < KILN_C_SQRT_MIN) {
        if (ay == 0) {
            re = KILN_INF;
            im = y;
        } else {
            re = -log(sqrt(ay) / sqrt(hypot(ay, 2.0)));
            im = copysign(atan2(2.0, -ay) / 2, y);
        }
    } else {
        f64 x1 = 1 - x;
        re = log1p(4.0 * x / (x1 * x1 + ay * ay)) * 0.25;
        im = -atan2(-2.0 * y, x1 * (1 + x) - ay * ay) * 0.5;
    }
    if (isnan(y)) im = KILN_NAN;
    return neg ? kiln_c128(-re, -im) : kiln_c128(re, im);
}

/* atan(z) = -i atanh(iz) */
KILN_FN c128 kiln_catan_c128(c128 z) {
    c128 r = kiln_catanh_c128(kiln_c128(-z.im, z.re));
    if (isinf(z.re) && isnan(z.im)) return kiln_c128(r.im, r.re);
    return kiln_c128(r.im, -r.re);
}

/* cmath.rect(r, phi): a zero part stays zero for an infinite r (inf * 0 is NaN) */
KILN_FN c128 kiln_rect_c128(f64 r, f64 phi) {
    if (!isfinite(phi)) {
        if (r == 0) return kiln_c128(fabs(r), 0.0);
        if (isinf(r)) return kiln_c128(r, phi);
    }
    f64 re = cos(phi), im = sin(phi);
    re = re == 0 && isinf(r) ? re / r : re * r;
    im = im == 0 && isinf(r) ? im / r : im * r;
    return kiln_c128(re, im);
}
KILN_FN c64 kiln_rect_c64(f32 r, f32 phi) { return kiln_c64_c128(kiln_rect_c128(r, phi)); }

/* NumPy's power: 1 for a zero exponent, 0 or NaN for a zero base, repeated
 * products for integer exponents below 100 in magnitude, else exp(b log a). */
KILN_FN c128 kiln_pow_c128(c128 a, c128 b) {
    if (b.re == 0 && b.im == 0) return kiln_c128(1.0, 0.0);
    if (a.re == 0 && a.im == 0) {
        if (b.re > 0 && b.im == 0) return kiln_c128(0.0, 0.0);
        return kiln_c128(KILN_NAN, KILN_NAN);
    }
    if (b.im == 0 && b.re > -100 && b.re < 100 && b.re == (f64)(i64)b.re) {
        i64 n = (i64)b.re;
        if (n == 1) return a;
        if (n == 2) return kiln_mul_c128(a, a);
        if (n == 3) return kiln_mul_c128(a, kiln_mul_c128(a, a));
        u64 m = (u64)(n < 0 ? -n : n);
        c128 r = kiln_c128(1.0, 0.0), p = a;
        for (;;) {
            if (m & 1) r = kiln_mul_c128(r, p);
            m >>= 1;
            if (!m) break;
            p = kiln_mul_c128(p, p);
        }
        return n < 0 ? kiln_div_c128(kiln_c128(1.0, 0.0), r) : r;
    }
    return kiln_cexp_c128(kiln_mul_c128(b, kiln_clog_c128(a)));
}
KILN_FN c64 kiln_pow_c64(c64 a, c64 b) {
    return kiln_c64_c128(kiln_pow_c128(kiln_c128_c64(a), kiln_c128_c64(b)));
}

/* complex64's cmath functions: complex128's, rounded */
#define KILN_C64_OF(name)                                                                 \
    KILN_FN c64 kiln_c##name##_c64(c64 z) {                                               \
        return kiln_c64_c128(kiln_c##name##_c128(kiln_c128_c64(z)));                      \
    }
KILN_C64_OF(exp) KILN_C64_OF(log) KILN_C64_OF(log10) KILN_C64_OF(sqrt) KILN_C64_OF(sin)
KILN_C64_OF(cos) KILN_C64_OF(tan) KILN_C64_OF(asin) KILN_C64_OF(acos) KILN_C64_OF(atan)
KILN_C64_OF(sinh) KILN_C64_OF(cosh) KILN_C64_OF(tanh) KILN_C64_OF(asinh) KILN_C64_OF(acosh)
KILN_C64_OF(atanh) KILN_C64_OF(log2)

/* NumPy's order of complex numbers (its CLT/CLE): by the real parts, then the imaginary
 * ones; a NaN part compares false.  maximum/minimum keep a NaN operand (the first one),
 * fmax/fmin the other operand, as NumPy's complex loops do. */
#define KILN_CORDER(T)                                                                    \
    KILN_FN kbool kiln_clt_##T(T a, T b) { return a.re < b.re || (a.re == b.re && a.im < b.im); } \
    KILN_FN kbool kiln_cle_##T(T a, T b) { return a.re < b.re || (a.re == b.re && a.im <= b.im); } \
    KILN_FN T kiln_npmax_##T(T a, T b) { return kiln_cle_##T(b, a) || kiln_isnan_##T(a) ? a : b; } \
    KILN_FN T kiln_npmin_##T(T a, T b) { return kiln_cle_##T(a, b) || kiln_isnan_##T(a) ? a : b; } \
    KILN_FN T kiln_fmax_##T(T a, T b) { return kiln_cle_##T(b, a) || kiln_isnan_##T(b) ? a : b; } \
    KILN_FN T kiln_fmin_##T(T a, T b) { return kiln_cle_##T(a, b) || kiln_isnan_##T(b) ? a : b; }
KILN_CORDER(c64)
KILN_CORDER(c128)
