/* rt_common.h: the helpers every generated kernel uses, for both targets.
 *
 * This text is embedded in kiln and pasted into each generated source after
 * the target's own prelude (rt_cpu.h or rt_cuda.h), which defines KILN_FN,
 * the scalar typedefs (i8..u64, f32, f64, kbool), kiln_fail and the math
 * headers.  It must read as C99 and as CUDA C++.
 * Because it is part of the generated source, it is part of every cache key.
 *
 * The helpers give kernels Python's and NumPy's meaning where C's differs:
 * floor division and modulo round toward negative infinity, integer division
 * by zero gives 0 as in NumPy (and an error with debug=True), shifts by more
 * than the width give 0, mixed signed/unsigned comparisons are exact, and
 * min/max compare as Python's builtins do.
 */

/* ---- bits ------------------------------------------------------------------------ */

/* |x| as an unsigned value, exact for INT64_MIN (x.bit_count() counts its bits). */
KILN_FN u64 kiln_abs_bits64(i64 x) { return x < 0 ? (u64)0 - (u64)x : (u64)x; }

/* ---- ldexp ----------------------------------------------------------------------- */

/* math.ldexp with a 64-bit exponent: past +-KILN_LDEXP_CLAMP every finite result has
 * already overflowed or underflowed, so clamping to C's int changes nothing. */
#define KILN_LDEXP_CLAMP 100000
KILN_FN i64 kiln_ldexp_e(i64 e) {
    return e > KILN_LDEXP_CLAMP ? KILN_LDEXP_CLAMP : e < -KILN_LDEXP_CLAMP ? -KILN_LDEXP_CLAMP : e;
}
KILN_FN i64 kiln_ldexp_u(u64 e) { return e > KILN_LDEXP_CLAMP ? KILN_LDEXP_CLAMP : (i64)e; }
KILN_FN f64 kiln_ldexp(f64 x, i64 e) { return ldexp(x, (int)kiln_ldexp_e(e)); }
KILN_FN f32 kiln_ldexpf(f32 x, i64 e) { return ldexpf(x, (int)kiln_ldexp_e(e)); }

/* ---- angles ---------------------------------------------------------------------- */

/* math.degrees/radians and NumPy's rad2deg/deg2rad, which C lacks: NumPy multiplies
 * by the ratio rounded to the argument's precision, and so do these. */
KILN_FN f64 kiln_degrees(f64 x) { return x * (180.0 / 3.141592653589793238462643383279502884); }
KILN_FN f32 kiln_degreesf(f32 x) { return x * (f32)(180.0 / 3.141592653589793238462643383279502884); }
KILN_FN f64 kiln_radians(f64 x) { return x * (3.141592653589793238462643383279502884 / 180.0); }
KILN_FN f32 kiln_radiansf(f32 x) { return x * (f32)(3.141592653589793238462643383279502884 / 180.0); }

/* ---- indexing -------------------------------------------------------------------- */

KILN_FN i64 kiln_wrap(i64 i, i64 n) { return i < 0 ? i + n : i; }

/* Bounds check (debug=True): wraps negative indices as Python does, records
 * an IndexError and returns a safe index (a store through it is skipped: emit_stmt.c). */
KILN_FN i64 kiln_chk(struct kiln_err *E, i64 i, i64 n, int axis, int line) {
    i64 j = i < 0 ? i + n : i;
    if (j < 0 || j >= n) {
        kiln_fail(E, 1, line, i, axis, n);
        return 0;
    }
    return j;
}

/* a.reshape(...) (C order): extent k of the shape d0..d(n-1), up to 8, for an array of
 * `total` elements; one -1 is inferred; a shape that does not hold `total` elements
 * records NumPy's ValueError (kiln_errcode 8) and gives 0.  Called once per extent. */
KILN_FN i64 kiln_reshape_dim(struct kiln_err *E, int line, i64 total, int k, int n, i64 d0,
                             i64 d1, i64 d2, i64 d3, i64 d4, i64 d5, i64 d6, i64 d7) {
    i64 d[8] = {d0, d1, d2, d3, d4, d5, d6, d7}, known = 1;
    int unknown = -1, nunknown = 0, bad = 0;
    for (int i = 0; i < n; i++) {
        if (d[i] == -1) {
            unknown = i;
            nunknown++;
        } else if (d[i] < 0) {
            bad = 1;
        } else {
            known *= d[i];
        }
    }
    if (nunknown > 1) bad = 1;
    else if (nunknown == 1) bad = bad || known == 0 || total % known != 0;
    else bad = bad || known != total;
    if (bad) {
        kiln_fail(E, 8, line, total, known, nunknown);
        return 0;
    }
    if (unknown >= 0) d[unknown] = total / known;
    return d[k];
}

/* Python's slice.indices(): start and length of lo:hi:step over n items. */
KILN_FN void kiln_slice(i64 lo, i64 hi, i64 step, int has_lo, int has_hi, i64 n, i64 *start,
                        i64 *len) {
    if (step == 0) step = 1;
    if (step > 0) {
        if (!has_lo) lo = 0;
        else if (lo < 0) { lo += n; if (lo < 0) lo = 0; }
        else if (lo > n) lo = n;
        if (!has_hi) hi = n;
        else if (hi < 0) { hi += n; if (hi < 0) hi = 0; }
        else if (hi > n) hi = n;
        *len = hi > lo ? (hi - lo + step - 1) / step : 0;
    } else {
        if (!has_lo) lo = n - 1;
        else if (lo < 0) { lo += n; if (lo < 0) lo = -1; }
        else if (lo >= n) lo = n - 1;
        if (!has_hi) hi = -1;
        else if (hi < 0) { hi += n; if (hi < 0) hi = -1; }
        else if (hi >= n) hi = n - 1;
        *len = lo > hi ? (lo - hi - step - 1) / (-step) : 0;
    }
    *start = lo;
}

/* ---- integer arithmetic ---------------------------------------------------------------- */

KILN_FN i64 kiln_fdiv_i64(i64 a, i64 b) {
    if (b == 0) return 0;
    if (b == -1) return (i64)(0ULL - (u64)a);
    i64 q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}
KILN_FN i64 kiln_mod_i64(i64 a, i64 b) {
    if (b == 0 || b == -1) return 0;
    i64 r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
/* numpy.fmod of integers: C's remainder (the dividend's sign), 0 for a zero divisor */
KILN_FN i64 kiln_fmod_i64(i64 a, i64 b) { return b == 0 || b == -1 ? 0 : a % b; }
KILN_FN u64 kiln_fmod_u64(u64 a, u64 b) { return b ? a % b : 0; }
KILN_FN u64 kiln_fdiv_u64(u64 a, u64 b) { return b ? a / b : 0; }
KILN_FN u64 kiln_mod_u64(u64 a, u64 b) { return b ? a % b : 0; }
/* both operands known to be >= 0 */
KILN_FN i64 kiln_fdiv_nn(i64 a, i64 b) { return b ? a / b : 0; }
KILN_FN i64 kiln_mod_nn(i64 a, i64 b) { return b ? a % b : 0; }

/* debug=True: division by zero is a ZeroDivisionError */
KILN_FN i64 kiln_zchk_i64(struct kiln_err *E, int line, i64 b) {
    if (b == 0) kiln_fail(E, 3, line, 0, 0, 0);
    return b;
}
KILN_FN u64 kiln_zchk_u64(struct kiln_err *E, int line, u64 b) {
    if (b == 0) kiln_fail(E, 3, line, 0, 0, 0);
    return b;
}
/* ... and of floats too, as in Python (Numba's debug=True); kind: 1 for /, 2 for //,
 * 3 for %, which the host's message names */
KILN_FN f64 kiln_zchk_f64(struct kiln_err *E, int line, int kind, f64 b) {
    if (b == 0) kiln_fail(E, 3, line, kind, 0, 0);
    return b;
}
KILN_FN f32 kiln_zchk_f32(struct kiln_err *E, int line, int kind, f32 b) {
    if (b == 0) kiln_fail(E, 3, line, kind, 0, 0);
    return b;
}

KILN_FN i64 kiln_ipow_i64(i64 a, i64 b) {
    if (b < 0) return 0;
    u64 r = 1, x = (u64)a;
    while (b) {
        if (b & 1) r *= x;
        x *= x;
        b >>= 1;
    }
    return (i64)r;
}
KILN_FN i64 kiln_ipow_i64_chk(struct kiln_err *E, int line, i64 a, i64 b) {
    if (b < 0) kiln_fail(E, 5, line, a, b, 0);
    return kiln_ipow_i64(a, b);
}
KILN_FN u64 kiln_ipow_u64(u64 a, u64 b) {
    u64 r = 1, x = a;
    while (b) {
        if (b & 1) r *= x;
        x *= x;
        b >>= 1;
    }
    return r;
}

/* range()'s next value after it, stepping sd towards sp: it + sd while that stays short
 * of sp, else sp, which ends the loop.  So a range whose last value is within one step
 * of its type's limit ends, as Python's does, instead of wrapping around (the unsigned
 * differences are exact: it is short of sp). */
#define KILN_RANGE_UP(T, it, sp, sd) ((u64)(sp) - (u64)(it) > (u64)(sd) ? (T)((it) + (sd)) : (sp))
#define KILN_RANGE_DOWN(T, it, sp, sd) \
    ((u64)(it) - (u64)(sp) > (u64)0 - (u64)(sd) ? (T)((it) + (sd)) : (sp))
#define KILN_RANGE_NEXT(T, it, sp, sd) \
    ((sd) > 0 ? KILN_RANGE_UP(T, it, sp, sd) : KILN_RANGE_DOWN(T, it, sp, sd))

KILN_FN i64 kiln_shl_i64(i64 a, i64 b, int bits) {
    return (b < 0 || b >= bits) ? 0 : (i64)((u64)a << b);
}
KILN_FN i64 kiln_shr_i64(i64 a, i64 b, int bits) {
    if (b < 0 || b >= bits) return a < 0 ? -1 : 0; /* NumPy's npy_rshift */
    return a >> b;
}
KILN_FN u64 kiln_shl_u64(u64 a, u64 b, int bits) { return b >= (u64)bits ? 0 : a << b; }
KILN_FN u64 kiln_shr_u64(u64 a, u64 b, int bits) { return b >= (u64)bits ? 0 : a >> b; }

/* exact comparison of a signed and an unsigned 64-bit value: -1, 0, 1 */
KILN_FN int kiln_cmp_iu(i64 a, u64 b) {
    if (a < 0) return -1;
    return (u64)a < b ? -1 : ((u64)a > b ? 1 : 0);
}

KILN_FN i64 kiln_abs_i64(i64 x) { return x < 0 ? (i64)(0ULL - (u64)x) : x; }

/* Python's round(x, n) for integers: to a multiple of 10**-n, ties to even. */
KILN_FN i64 kiln_round_i64(i64 x, i64 nd) {
    if (nd >= 0) return x;
    if (nd < -18) return 0;
    i64 p = 1;
    for (i64 i = 0; i < -nd; i++) p *= 10;
    i64 q = kiln_fdiv_i64(x, p), r = x - q * p;
    if (2 * r > p || (2 * r == p && (q & 1))) q++;
    return q * p;
}

/* The same for a uint64, whose values past 2**63 the int64 one would take as negative;
 * a result past 2**64 wraps, as uint64 arithmetic does. */
KILN_FN u64 kiln_round_u64(u64 x, i64 nd) {
    if (nd >= 0) return x;
    if (nd < -19) return 0; /* 10**20 / 2 is past every uint64 */
    u64 p = 1;
    for (i64 i = 0; i < -nd; i++) p *= 10;
    u64 q = x / p, r = x - q * p;
    if (r > p - r || (r == p - r && (q & 1))) q++; /* 2 * r could wrap */
    return q * p;
}

/* ---- floating point ---------------------------------------------------------------------- */

/* NumPy's npy_divmod: Python's float // and % (with NumPy's inf/nan for zero) */
KILN_FN f64 kiln_mod_f64(f64 a, f64 b) {
    f64 m = fmod(a, b);
    if (b == 0) return m;
    if (m != 0) {
        if ((b < 0) != (m < 0)) m += b;
    } else {
        m = copysign(0.0, b);
    }
    return m;
}
KILN_FN f64 kiln_fdiv_f64(f64 a, f64 b) {
    if (b == 0) return a / b;
    f64 m = fmod(a, b);
    f64 d = (a - m) / b;
    if (m != 0 && ((b < 0) != (m < 0))) d -= 1.0;
    if (d != 0) {
        f64 fl = floor(d);
        if (d - fl > 0.5) fl += 1.0;
        return fl;
    }
    return copysign(0.0, a / b);
}
KILN_FN f32 kiln_mod_f32(f32 a, f32 b) {
    f32 m = fmodf(a, b);
    if (b == 0) return m;
    if (m != 0) {
        if ((b < 0) != (m < 0)) m += b;
    } else {
        m = copysignf(0.0f, b);
    }
    return m;
}
KILN_FN f32 kiln_fdiv_f32(f32 a, f32 b) {
    if (b == 0) return a / b;
    f32 m = fmodf(a, b);
    f32 d = (a - m) / b;
    if (m != 0 && ((b < 0) != (m < 0))) d -= 1.0f;
    if (d != 0) {
        f32 fl = floorf(d);
        if (d - fl > 0.5f) fl += 1.0f;
        return fl;
    }
    return copysignf(0.0f, a / b);
}

/* 10**n for 0 <= n <= 308 by products of exact powers (10**22 is the largest), the same
 * on every tier: pow's vector form in gcc's loops (libmvec) is not correctly rounded */
KILN_FN f64 kiln_pow10(i64 n) {
    f64 p = 1.0, q = 1.0;
    for (; n >= 22; n -= 22) p *= 1e22;
    for (; n > 0; n--) q *= 10.0;
    return p * q;
}

KILN_FN f64 kiln_round_f64(f64 x, i64 nd) {
    /* no float64 has digits past 10**-323; 10**309 / 2 is past every float64 */
    if (!isfinite(x) || nd > 323) return x;
    if (nd < -308) return 0.0 * x;
    if (nd < 0) {
        f64 p = kiln_pow10(-nd);
        return rint(x / p) * p;
    }
    /* x * 10**nd, in two steps past 10**300 (a subnormal's digits go down to 10**-323) */
    i64 n1 = nd > 300 ? 300 : nd;
    f64 p1 = kiln_pow10(n1), p2 = kiln_pow10(nd - n1);
    f64 y = x * p1 * p2;
    /* past float64's range: x has no digits that far down, so it is its own rounding
     * (Python's float.__round__ and Numba return it too) */
    if (!isfinite(y)) return x;
    return rint(y) / p2 / p1;
}
KILN_FN f32 kiln_round_f32(f32 x, i64 nd) { return (f32)kiln_round_f64((f64)x, nd); }

/* A float to an integer power as Numba computes it (int_power_impl): squarings and
 * products in the float's type, 1 / r in float64 for a negative power, pow() in
 * float64 past 2**16 */
#define KILN_POWI(T)                                                                   \
    KILN_FN T kiln_powu_##T(T a, u64 e) {                                              \
        if (e > 0x10000) return (T)pow((f64)a, (f64)e);                                \
        T r = 1;                                                                       \
        for (; e; e >>= 1, a *= a)                                                     \
            if (e & 1) r *= a;                                                         \
        return r;                                                                      \
    }                                                                                  \
    KILN_FN T kiln_powi_##T(T a, i64 b) {                                              \
        if (b >= 0) return kiln_powu_##T(a, (u64)b);                                   \
        if (b < -0x10000) return (T)pow((f64)a, (f64)b);                               \
        return (T)(1.0 / (f64)kiln_powu_##T(a, (u64)0 - (u64)b));                      \
    }
KILN_POWI(f64)
KILN_POWI(f32)
/* x ** 0.5 as pow gives it (sqrt's -0.0 is 0.0, and pow(-inf, 0.5) is inf) */
KILN_FN f32 kiln_pow_half_f32(f32 x) {
    return x == -(f32)KILN_INF ? (f32)KILN_INF : sqrtf(x) + 0.0f;
}
KILN_FN f64 kiln_pow_half_f64(f64 x) { return x == -KILN_INF ? KILN_INF : sqrt(x) + 0.0; }
KILN_FN f32 kiln_sq_f32(f32 x) { return x * x; }
KILN_FN f64 kiln_sq_f64(f64 x) { return x * x; }
KILN_FN f32 kiln_cube_f32(f32 x) { return x * x * x; }
KILN_FN f64 kiln_cube_f64(f64 x) { return x * x * x; }

/* NumPy's sign: 1, -1, +0 for either zero, NaN for NaN */
KILN_FN f32 kiln_sign_f32(f32 x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x == 0 ? 0.0f : x; }
KILN_FN f64 kiln_sign_f64(f64 x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x; }
KILN_FN i64 kiln_sign_i64(i64 x) { return (x > 0) - (x < 0); }

/* NaN-propagating minimum/maximum (numpy.minimum/maximum) */
KILN_FN f32 kiln_npmin_f32(f32 a, f32 b) { return (a < b || a != a) ? a : b; }
KILN_FN f32 kiln_npmax_f32(f32 a, f32 b) { return (a > b || a != a) ? a : b; }
KILN_FN f64 kiln_npmin_f64(f64 a, f64 b) { return (a < b || a != a) ? a : b; }
KILN_FN f64 kiln_npmax_f64(f64 a, f64 b) { return (a > b || a != a) ? a : b; }

/* min/max of two integers or bools: the first of equal ones, as Python's builtins */
#define KILN_MINMAX(T)                                                 \
    KILN_FN T kiln_min_##T(T a, T b) { return b < a ? b : a; }         \
    KILN_FN T kiln_max_##T(T a, T b) { return b > a ? b : a; }
KILN_MINMAX(kbool)
KILN_MINMAX(i8)
KILN_MINMAX(i16)
KILN_MINMAX(i32)
KILN_MINMAX(i64)
KILN_MINMAX(u8)
KILN_MINMAX(u16)
KILN_MINMAX(u32)
KILN_MINMAX(u64)

/* min/max of floats as Numba-CUDA lowers them (fminf/fmaxf: PTX min.f32, max.f64):
 * a NaN operand is ignored (NaN only when both are), and -0.0 is less than 0.0.
 * The CPU writes the same out without branches, which GCC turns into compares and
 * blends, in vector loops too (a short-circuit || and signbit kept it scalar and
 * branchy: a row max per thread ran at a third of Numba's speed, perfhunt s29).  Two
 * zeros: max is their sum (+0.0 unless both are -0.0), min the negated sum of their
 * negations (-0.0 unless both are +0.0). */
#ifdef __CUDACC__
KILN_FN f32 kiln_min_f32(f32 a, f32 b) { return fminf(a, b); }
KILN_FN f32 kiln_max_f32(f32 a, f32 b) { return fmaxf(a, b); }
KILN_FN f64 kiln_min_f64(f64 a, f64 b) { return fmin(a, b); }
KILN_FN f64 kiln_max_f64(f64 a, f64 b) { return fmax(a, b); }
#else
#define KILN_FMINMAX(T)                                                                   \
    KILN_FN T kiln_min_##T(T a, T b) {                                                    \
        T r = ((a != a) | (b < a)) ? b : a;                                               \
        return ((a == 0) & (b == 0)) ? -((-a) + (-b)) : r;                                \
    }                                                                                     \
    KILN_FN T kiln_max_##T(T a, T b) {                                                    \
        T r = ((a != a) | (b > a)) ? b : a;                                               \
        return ((a == 0) & (b == 0)) ? a + b : r;                                         \
    }
KILN_FMINMAX(f32)
KILN_FMINMAX(f64)
/* the same as OpenMP reductions, for a loop that only folds a max or a min (emit_stmt.c,
 * fold_pragma): each vector lane folds its share, the shares fold at the end (both are
 * associative and commutative, the NaN and zero rules included).  A float share starts
 * as NaN, the value these ignore: a column of NaN alone still folds to NaN */
#pragma omp declare reduction(kmax_f32_ : f32 : omp_out = kiln_max_f32(omp_out, omp_in)) initializer(omp_priv = __builtin_nanf(""))
#pragma omp declare reduction(kmin_f32_ : f32 : omp_out = kiln_min_f32(omp_out, omp_in)) initializer(omp_priv = __builtin_nanf(""))
#pragma omp declare reduction(kmax_f64_ : f64 : omp_out = kiln_max_f64(omp_out, omp_in)) initializer(omp_priv = __builtin_nan(""))
#pragma omp declare reduction(kmin_f64_ : f64 : omp_out = kiln_min_f64(omp_out, omp_in)) initializer(omp_priv = __builtin_nan(""))
#pragma omp declare reduction(kmax_i32_ : i32 : omp_out = kiln_max_i32(omp_out, omp_in)) initializer(omp_priv = INT32_MIN)
#pragma omp declare reduction(kmin_i32_ : i32 : omp_out = kiln_min_i32(omp_out, omp_in)) initializer(omp_priv = INT32_MAX)
#pragma omp declare reduction(kmax_i64_ : i64 : omp_out = kiln_max_i64(omp_out, omp_in)) initializer(omp_priv = INT64_MIN)
#pragma omp declare reduction(kmin_i64_ : i64 : omp_out = kiln_min_i64(omp_out, omp_in)) initializer(omp_priv = INT64_MAX)
#pragma omp declare reduction(kmax_u32_ : u32 : omp_out = kiln_max_u32(omp_out, omp_in)) initializer(omp_priv = 0)
#pragma omp declare reduction(kmin_u32_ : u32 : omp_out = kiln_min_u32(omp_out, omp_in)) initializer(omp_priv = UINT32_MAX)
#pragma omp declare reduction(kmax_u64_ : u64 : omp_out = kiln_max_u64(omp_out, omp_in)) initializer(omp_priv = 0)
#pragma omp declare reduction(kmin_u64_ : u64 : omp_out = kiln_min_u64(omp_out, omp_in)) initializer(omp_priv = UINT64_MAX)
#endif

/* ---- fastmath ---------------------------------------------------------------------- */

/* math.erfc on float32 under fastmath=True: Numerical Recipes' Chebyshev fit
 * (erfcc; relative error 1.05e-7 evaluated in float64), one exp and one
 * reciprocal instead of the C library's or libdevice's longer sequence (about 18
 * instructions against 48 on sm_90).  In float32 the exponent's own rounding
 * (it reaches -86 before the result leaves the normal range) bounds the error:
 * tests/python/test_math_ulp.py measures it over the whole range. */
KILN_FN f32 kiln_erfcf_fast(f32 x) {
    f32 z = fabsf(x);
    f32 t = 1.0f / fmaf(0.5f, z, 1.0f);
    f32 p = 0.17087277f;
    p = fmaf(p, t, -0.82215223f);
    p = fmaf(p, t, 1.48851587f);
    p = fmaf(p, t, -1.13520398f);
    p = fmaf(p, t, 0.27886807f);
    p = fmaf(p, t, -0.18628806f);
    p = fmaf(p, t, 0.09678418f);
    p = fmaf(p, t, 0.37409196f);
    p = fmaf(p, t, 1.00002368f);
    p = fmaf(p, t, -1.26551223f);
    f32 r = t * expf(fmaf(-z, z, p));
    return x >= 0.0f ? r : 2.0f - r;
}

/* integers have no NaN: atomic nanmax and nanmin are max and min (each target's) */
#define kiln_atomic_nanmax_i32 kiln_atomic_max_i32
#define kiln_atomic_nanmin_i32 kiln_atomic_min_i32
#define kiln_atomic_nanmax_u32 kiln_atomic_max_u32
#define kiln_atomic_nanmin_u32 kiln_atomic_min_u32
#define kiln_atomic_nanmax_i64 kiln_atomic_max_i64
#define kiln_atomic_nanmin_i64 kiln_atomic_min_i64
#define kiln_atomic_nanmax_u64 kiln_atomic_max_u64
#define kiln_atomic_nanmin_u64 kiln_atomic_min_u64
