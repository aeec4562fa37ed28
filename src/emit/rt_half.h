/* rt_half.h: float16, pasted after rt_common.h into the programs that use it.
 *
 * A float16 value lives in a f32 that holds a value float16 can represent: each
 * operation computes in float32 and rounds the result to float16 (kiln_hr), which
 * gives the correctly rounded float16 result for + - * / and sqrt (float32 has more
 * than twice float16's precision plus two bits, so rounding twice is the same as
 * rounding once) and what CUDA's half functions give for the others (they compute
 * in float32 too).  Conversions from float64 round once, directly (kiln_hrd).  In
 * arrays a float16 is its 16 bits (kh16): a load widens them exactly (kiln_h2f), a
 * store narrows an already rounded value (kiln_f2h).  On the GPU each conversion
 * is one PTX cvt; on the CPU they are the bit operations below, which tcc (tier 0)
 * compiles as well as cc.
 */
typedef u16 kh16;

#ifdef __CUDACC__
KILN_FN f32 kiln_h2f(kh16 h) {
    f32 r;
    asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h));
    return r;
}
KILN_FN kh16 kiln_f2h(f32 x) {
    kh16 r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
    return r;
}
KILN_FN kh16 kiln_d2h(f64 x) {
    kh16 r;
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(r) : "d"(x));
    return r;
}
KILN_FN f32 kiln_exp10h(f32 x) { return exp10f(x); }
KILN_FN f32 kiln_rsqrth(f32 x) { return rsqrtf(x); }
#else
KILN_FN f32 kiln_h2f(kh16 h) {
    u32 s = (u32)(h & 0x8000) << 16, e = (u32)(h >> 10) & 0x1f, m = (u32)h & 0x3ff, b;
    f32 r;
    if (e == 0x1f) {
        b = s | 0x7f800000u | (m << 13);
    } else if (e) {
        b = s | ((e + 112) << 23) | (m << 13);
    } else {
        r = (f32)m * 5.9604644775390625e-8f; /* m * 2^-24, exact */
        return s ? -r : r;
    }
    memcpy(&r, &b, 4);
    return r;
}
KILN_FN kh16 kiln_f2h(f32 x) {
    u32 b, a, s, h, rem;
    memcpy(&b, &x, 4);
    s = (b >> 16) & 0x8000;
    a = b & 0x7fffffffu;
    if (a >= 0x7f800000u) return (kh16)(s | 0x7c00 | (a > 0x7f800000u ? 0x200 : 0));
    if (a >= 0x477ff000u) return (kh16)(s | 0x7c00); /* from 65520 up: inf */
    if (a < 0x38800000u) { /* below 2^-14: a subnormal, m * 2^-24 */
        u32 e = a >> 23, shift = 126 - e, mant, half;
        if (e == 0 || shift >= 25) return (kh16)s;
        mant = (a & 0x7fffffu) | 0x800000u;
        h = mant >> shift;
        rem = mant & ((1u << shift) - 1);
        half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (kh16)(s | h);
    }
    a -= 0x38000000u; /* exponent bias 127 -> 15 */
    h = a >> 13;
    rem = a & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return (kh16)(s | h);
}
KILN_FN kh16 kiln_d2h(f64 x) {
    u64 b, a, h, rem;
    u16 s;
    memcpy(&b, &x, 8);
    s = (u16)((b >> 48) & 0x8000);
    a = b & 0x7fffffffffffffffULL;
    if (a >= 0x7ff0000000000000ULL) return (kh16)(s | 0x7c00 | (a > 0x7ff0000000000000ULL ? 0x200 : 0));
    if (a >= 0x40effe0000000000ULL) return (kh16)(s | 0x7c00);
    if (a < 0x3f10000000000000ULL) {
        u64 e = a >> 52, shift = 1051 - e, mant, half;
        if (e == 0 || shift >= 54) return (kh16)s;
        mant = (a & 0xfffffffffffffULL) | 0x10000000000000ULL;
        h = mant >> shift;
        rem = mant & ((1ULL << shift) - 1);
        half = 1ULL << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (kh16)(s | h);
    }
    a -= 1008ULL << 52;
    h = a >> 42;
    rem = a & ((1ULL << 42) - 1);
    if (rem > (1ULL << 41) || (rem == (1ULL << 41) && (h & 1))) h++;
    return (kh16)(s | h);
}
KILN_FN f32 kiln_exp10h(f32 x) { return powf(10.0f, x); }
KILN_FN f32 kiln_rsqrth(f32 x) { return 1.0f / sqrtf(x); }
#endif

/* a float32 result rounded to float16, kept in a f32; the same from a float64 */
KILN_FN f32 kiln_hr(f32 x) { return kiln_h2f(kiln_f2h(x)); }
KILN_FN f32 kiln_hrd(f64 x) { return kiln_h2f(kiln_d2h(x)); }
/* CUDA's __hmax/__hmin (float16 and bfloat16): a NaN operand gives the other, and of two
 * zeros max is +0 and min -0 (fmaxf may give either zero) */
KILN_FN f32 kiln_hmax0(f32 a, f32 b) {
    if (a != a) return b;
    if (b != b || a > b) return a;
    return a == b && signbit(b) ? a : b;
}
KILN_FN f32 kiln_hmin0(f32 a, f32 b) {
    if (a != a) return b;
    if (b != b || a < b) return a;
    return a == b && signbit(a) ? a : b;
}

/* The float16 operations, on float16 values held in f32s.  From sm_53 on the GPU
 * computes them in half precision, as CUDA's __hadd, __hsub, __hmul, __hfma,
 * __hneg, __habs and __hgt... do (one PTX add.f16, fma.rn.f16, setp.gt.f16...);
 * elsewhere in float32 (float64 for fma, where a * b is exact) and rounded once
 * more, which gives the same correctly rounded float16 results.  The conversions
 * around each operation are exact.  PTX lets ptxas fuse a mul.f16 feeding an add.f16
 * (no .rn), as CUDA's __hmul and __hadd allow; the cvt pair between two of these
 * functions keeps them apart (CUDA 13.0's ptxas for sm_80 and sm_90 makes the same
 * code as for mul.rn.f16), so results stay NumPy's, one rounding per operation.  An integer becomes a float16 by one cvt.rn
 * on the GPU; through a float32 on the CPU, which holds every integer below
 * 65520 (the rest are inf either way). */
#if defined(__CUDACC__) && __CUDA_ARCH__ >= 530
#define KILN_HOP2(name, ins)                                                       \
    KILN_FN f32 name(f32 a, f32 b) {                                               \
        kh16 r;                                                                    \
        asm(ins " %0, %1, %2;" : "=h"(r) : "h"(kiln_f2h(a)), "h"(kiln_f2h(b)));    \
        return kiln_h2f(r);                                                        \
    }
#define KILN_HOP1(name, ins)                                                       \
    KILN_FN f32 name(f32 a) {                                                      \
        kh16 r;                                                                    \
        asm(ins " %0, %1;" : "=h"(r) : "h"(kiln_f2h(a)));                          \
        return kiln_h2f(r);                                                        \
    }
#define KILN_HCMP(name, ins)                                                       \
    KILN_FN kbool name(f32 a, f32 b) {                                             \
        u16 r;                                                                     \
        asm("{\n\t.reg .pred p;\n\t" ins " p, %1, %2;\n\tselp.u16 %0, 1, 0, p;\n\t}" \
            : "=h"(r) : "h"(kiln_f2h(a)), "h"(kiln_f2h(b)));                       \
        return r != 0;                                                             \
    }
#define KILN_HCVT(T, C, ins, cast)                                                 \
    KILN_FN f32 kiln_hfrom_##T(T x) {                                              \
        kh16 r;                                                                    \
        asm(ins " %0, %1;" : "=h"(r) : C((cast)x));                                \
        return kiln_h2f(r);                                                        \
    }
KILN_HOP2(kiln_hadd, "add.f16")
KILN_HOP2(kiln_hsub, "sub.f16")
KILN_HOP2(kiln_hmul, "mul.f16")
KILN_HOP1(kiln_hneg, "neg.f16")
KILN_HOP1(kiln_habs, "abs.f16")
KILN_FN f32 kiln_hfma(f32 a, f32 b, f32 c) {
    kh16 r;
    asm("fma.rn.f16 %0, %1, %2, %3;"
        : "=h"(r) : "h"(kiln_f2h(a)), "h"(kiln_f2h(b)), "h"(kiln_f2h(c)));
    return kiln_h2f(r);
}
KILN_HCMP(kiln_hlt, "setp.lt.f16")
KILN_HCMP(kiln_hle, "setp.le.f16")
KILN_HCMP(kiln_hgt, "setp.gt.f16")
KILN_HCMP(kiln_hge, "setp.ge.f16")
KILN_HCMP(kiln_heq, "setp.eq.f16")
KILN_HCMP(kiln_hne, "setp.neu.f16")
KILN_HCVT(i8, "h", "cvt.rn.f16.s8", i16)
KILN_HCVT(i16, "h", "cvt.rn.f16.s16", i16)
KILN_HCVT(i32, "r", "cvt.rn.f16.s32", i32)
KILN_HCVT(i64, "l", "cvt.rn.f16.s64", i64)
KILN_HCVT(u8, "h", "cvt.rn.f16.u8", u16)
KILN_HCVT(u16, "h", "cvt.rn.f16.u16", u16)
KILN_HCVT(u32, "r", "cvt.rn.f16.u32", u32)
KILN_HCVT(u64, "l", "cvt.rn.f16.u64", u64)
#else
KILN_FN f32 kiln_hadd(f32 a, f32 b) { return kiln_hr(a + b); }
KILN_FN f32 kiln_hsub(f32 a, f32 b) { return kiln_hr(a - b); }
KILN_FN f32 kiln_hmul(f32 a, f32 b) { return kiln_hr(a * b); }
KILN_FN f32 kiln_hneg(f32 a) { return -a; }
KILN_FN f32 kiln_habs(f32 a) { return fabsf(a); }
KILN_FN f32 kiln_hfma(f32 a, f32 b, f32 c) { return kiln_hrd((f64)a * (f64)b + (f64)c); }
KILN_FN kbool kiln_hlt(f32 a, f32 b) { return a < b; }
KILN_FN kbool kiln_hle(f32 a, f32 b) { return a <= b; }
KILN_FN kbool kiln_hgt(f32 a, f32 b) { return a > b; }
KILN_FN kbool kiln_hge(f32 a, f32 b) { return a >= b; }
KILN_FN kbool kiln_heq(f32 a, f32 b) { return a == b; }
KILN_FN kbool kiln_hne(f32 a, f32 b) { return a != b; }
#define KILN_HCVT(T) \
    KILN_FN f32 kiln_hfrom_##T(T x) { return kiln_hr((f32)x); }
KILN_HCVT(i8)
KILN_HCVT(i16)
KILN_HCVT(i32)
KILN_HCVT(i64)
KILN_HCVT(u8)
KILN_HCVT(u16)
KILN_HCVT(u32)
KILN_HCVT(u64)
#endif

/* ---- bfloat16 ----------------------------------------------------------------
 * The same scheme as float16: a bfloat16 value lives in a f32 (exactly: it is a
 * float32 whose low 16 bits are zero), each operation computes in float32 (or in
 * float64 for fma, where a * b is exact) and rounds to bfloat16 (kiln_br), which is
 * the correctly rounded result for + - * / and sqrt (24 >= 2 * 8 + 2 bits); in
 * arrays it is its 16 bits (kh16).  Rounding modes (Numba's _rn/_rz/_rd/_ru
 * conversions, CUDA's cuda_bf16.h): 0 to nearest even, 1 toward zero, 2 down, 3 up.
 * All of it is the C below on both targets, so the CPU gives the GPU's bits; the
 * one exception is float32 to bfloat16 to nearest on sm_80 and later, one PTX cvt
 * (which gives the same bits, NaN aside: it makes every NaN the canonical one). */
#ifdef __CUDACC__
KILN_FN u32 kiln_f32_bits(f32 x) { return __float_as_uint(x); }
KILN_FN f32 kiln_bits_f32(u32 b) { return __uint_as_float(b); }
KILN_FN u64 kiln_f64_bits(f64 x) { return (u64)__double_as_longlong(x); }
#else
KILN_FN u32 kiln_f32_bits(f32 x) { u32 b; memcpy(&b, &x, 4); return b; }
KILN_FN f32 kiln_bits_f32(u32 b) { f32 x; memcpy(&x, &b, 4); return x; }
KILN_FN u64 kiln_f64_bits(f64 x) { u64 b; memcpy(&b, &x, 8); return b; }
#endif
KILN_FN f32 kiln_b2f(kh16 h) { return kiln_bits_f32((u32)h << 16); }
/* float32 to bfloat16 bits: the low 16 bits dropped and rounded (subnormals alike) */
KILN_FN kh16 kiln_f2b_m(f32 x, int mode) {
    u32 b = kiln_f32_bits(x), h = b >> 16, rem = b & 0xffffu, neg = b >> 31;
    if ((b & 0x7fffffffu) > 0x7f800000u) return (kh16)(h | 0x40); /* NaN stays quiet NaN */
    if (rem == 0 || mode == 1) return (kh16)h;
    if (mode == 0) h += rem > 0x8000u || (rem == 0x8000u && (h & 1));
    else h += mode == 2 ? neg : !neg;
    return (kh16)h; /* a carry out of the fraction goes into the exponent, up to inf */
}
KILN_FN kh16 kiln_f2b(f32 x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    kh16 r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
    return r;
#else
    return kiln_f2b_m(x, 0);
#endif
}
/* bfloat16 bits of (-1)^neg * m * 2^e (m > 0) rounded by mode: the quantum is
 * 2^(top bit - 7), at least 2^-133 (the subnormals'), and the bits are
 * ((quantum exponent + 133) << 7) + significand, a carry included */
KILN_FN kh16 kiln_bf_pack(u32 neg, u64 m, int e, int mode) {
    int top = 63 - (int)kiln_clz64(m), qe = top + e - 7, drop;
    u64 q, rem, half;
    u32 bits, s = neg ? 0x8000u : 0;
    if (qe < -133) qe = -133;
    drop = qe - e;
    if (drop <= 0) {
        q = m << -drop;
        rem = 0;
        half = 1;
    } else if (drop >= 64) {
        q = 0;
        rem = 1; /* under half a quantum, not zero */
        half = 2;
    } else {
        q = m >> drop;
        rem = m & ((1ULL << drop) - 1);
        half = 1ULL << (drop - 1);
    }
    if (rem) {
        if (mode == 0) q += rem > half || (rem == half && (q & 1));
        else if (mode == 2) q += neg;
        else if (mode == 3) q += !neg;
    }
    if (qe + 133 >= 255) bits = 0x7f80u; /* far past the largest finite value */
    else bits = ((u32)(qe + 133) << 7) + (u32)q;
    if (bits >= 0x7f80u) /* overflow: inf, or the largest finite toward zero */
        bits = mode == 1 || (mode == 2 && !neg) || (mode == 3 && neg) ? 0x7f7fu : 0x7f80u;
    return (kh16)(s | bits);
}
KILN_FN kh16 kiln_d2b_m(f64 x, int mode) {
    u64 b = kiln_f64_bits(x), a = b & 0x7fffffffffffffffULL, m;
    u32 neg = (u32)(b >> 63);
    int ex = (int)(a >> 52);
    if (ex == 0x7ff) return (kh16)((neg << 15) | 0x7f80u | (a & 0xfffffffffffffULL ? 0x40u : 0));
    if (a == 0) return (kh16)(neg << 15);
    m = a & 0xfffffffffffffULL;
    if (ex) m |= 1ULL << 52;
    return kiln_bf_pack(neg, m, (ex ? ex : 1) - 1075, mode);
}
KILN_FN kh16 kiln_i2b_m(i64 v, int mode) {
    return v ? kiln_bf_pack(v < 0, kiln_abs_bits64(v), 0, mode) : (kh16)0;
}
KILN_FN kh16 kiln_u2b_m(u64 v, int mode) { return v ? kiln_bf_pack(0, v, 0, mode) : (kh16)0; }
/* a result rounded to bfloat16, kept in a f32: from a float32, a float64, integers */
KILN_FN f32 kiln_br(f32 x) { return kiln_b2f(kiln_f2b(x)); }
KILN_FN f32 kiln_brd(f64 x) { return kiln_b2f(kiln_d2b_m(x, 0)); }
KILN_FN f32 kiln_bri(i64 x) { return kiln_b2f(kiln_i2b_m(x, 0)); }
KILN_FN f32 kiln_bru(u64 x) { return kiln_b2f(kiln_u2b_m(x, 0)); }
/* a bfloat16 to an integer: rounded by mode, NaN 0, saturated at the type's ends */
KILN_FN f32 kiln_bround(f32 x, int mode) {
    return mode == 0 ? rintf(x) : mode == 1 ? truncf(x) : mode == 2 ? floorf(x) : ceilf(x);
}
KILN_FN i64 kiln_b2i(f32 x, int mode, i64 lo, i64 hi) {
    f32 r = kiln_bround(x, mode);
    if (r != r) return 0;
    if ((f64)r <= (f64)lo) return lo;
    if ((f64)r >= (f64)hi) return hi;
    return (i64)r;
}
KILN_FN u64 kiln_b2u(f32 x, int mode, u64 hi) {
    f32 r = kiln_bround(x, mode);
    if (!(r > 0)) return 0; /* NaN too */
    if ((f64)r >= (f64)hi) return hi;
    return (u64)r;
}
/* Numba's bf16 functions that CUDA's cuda_bf16.h defines beyond + - * / */
KILN_FN f32 kiln_bsat(f32 x) { return x > 0 ? (x < 1 ? x : 1.0f) : 0.0f; } /* NaN: 0 */
KILN_FN f32 kiln_brelu(f32 x) { return x != x ? kiln_b2f(0x7fffu) : x < 0 ? 0.0f : x; }
KILN_FN f32 kiln_bmax_nan(f32 a, f32 b) {
    return a != a || b != b ? kiln_b2f(0x7fffu) : fmaxf(a, b);
}
KILN_FN f32 kiln_bmin_nan(f32 a, f32 b) {
    return a != a || b != b ? kiln_b2f(0x7fffu) : fminf(a, b);
}
KILN_FN kbool kiln_bisnan(f32 x) { return x != x; }
KILN_FN i32 kiln_bisinf(f32 x) { return x == KILN_INFF ? 1 : x == -KILN_INFF ? -1 : 0; }
