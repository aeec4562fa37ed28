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
