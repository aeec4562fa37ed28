/* vecops.c: tier 0's vector operations (vecops.h).
 *
 * Built on its own (meson.build: kiln_vecops) with -O3, -fno-math-errno (so
 * the math functions are const and gcc may call libmvec's vector versions,
 * declared below as rt_cpu.h declares them for the generated C),
 * -ffp-contract=off and -fwrapv, the generated C's own arithmetic flags; each
 * loop also gets an AVX2 clone, taken at run time on processors that have it
 * (target_clones).  Every operation is a switch on the types over one loop
 * per type, dispatched once per block of KV_LANES threads.
 */
#include "target/vecops.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
#define KV_SIMD __attribute__((__simd__("notinbranch")))
#define KV_DECL1(fn) extern double fn(double) KV_SIMD; extern float fn##f(float) KV_SIMD;
KV_DECL1(exp) KV_DECL1(log) KV_DECL1(sin) KV_DECL1(cos)
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)
KV_DECL1(acos) KV_DECL1(asin) KV_DECL1(atan) KV_DECL1(exp2) KV_DECL1(cosh) KV_DECL1(expm1)
KV_DECL1(sinh) KV_DECL1(cbrt) KV_DECL1(log10) KV_DECL1(log2) KV_DECL1(log1p)
KV_DECL1(atanh) KV_DECL1(acosh) KV_DECL1(erf) KV_DECL1(tanh) KV_DECL1(asinh) KV_DECL1(erfc)
KV_DECL1(tan)
#endif
#define KV_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KV_CLONES
#endif

typedef unsigned char u8;

/* One loop per operand shape (vector or scalar), so each vectorises. */
#define KV_LOOP2(T, R, EXPR)                                                             \
    {                                                                                    \
        R *restrict d_ = d;                                                              \
        const T *restrict a_ = a, *restrict b_ = b;                                      \
        if (!as && !bs)                                                                  \
            for (long k = 0; k < n; k++) { T x = a_[k], y = b_[k]; d_[k] = (R)(EXPR); }  \
        else if (!as) {                                                                  \
            const T y = *b_;                                                             \
            for (long k = 0; k < n; k++) { T x = a_[k]; d_[k] = (R)(EXPR); }             \
        } else if (!bs) {                                                                \
            const T x = *a_;                                                             \
            for (long k = 0; k < n; k++) { T y = b_[k]; d_[k] = (R)(EXPR); }             \
        } else {                                                                         \
            const T x = *a_, y = *b_;                                                    \
            R r_ = (R)(EXPR);                                                            \
            for (long k = 0; k < n; k++) d_[k] = r_;                                     \
        }                                                                                \
        return;                                                                          \
    }

#define KV_ARITH(T)                                                                      \
    switch (op) {                                                                        \
    case KV_ADD: KV_LOOP2(T, T, x + y)                                                   \
    case KV_SUB: KV_LOOP2(T, T, x - y)                                                   \
    case KV_MUL: KV_LOOP2(T, T, x * y)                                                   \
    default: break;                                                                      \
    }
#define KV_BITS(T)                                                                       \
    switch (op) {                                                                        \
    case KV_AND: KV_LOOP2(T, T, x & y)                                                   \
    case KV_OR: KV_LOOP2(T, T, x | y)                                                    \
    case KV_XOR: KV_LOOP2(T, T, x ^ y)                                                   \
    default: break;                                                                      \
    }

KV_CLONES void kv_bin(int op, int ty, void *d, const void *a, int as, const void *b, int bs,
                      long n) {
    switch (ty) {
    case KILN_FLOAT32:
        KV_ARITH(float)
        if (op == KV_DIV) KV_LOOP2(float, float, x / y)
        break;
    case KILN_FLOAT64:
        KV_ARITH(double)
        if (op == KV_DIV) KV_LOOP2(double, double, x / y)
        break;
    case KILN_INT32: KV_ARITH(int32_t) KV_BITS(int32_t) break;
    case KILN_INT64: KV_ARITH(int64_t) KV_BITS(int64_t) break;
    case KILN_UINT32: KV_ARITH(uint32_t) KV_BITS(uint32_t) break;
    case KILN_UINT64: KV_ARITH(uint64_t) KV_BITS(uint64_t) break;
    default: break;
    }
}

/* kv_bin2: d = (a op1 b) op2 c, one pass where kv_bin would make two: each lane rounds
 * a op1 b to T first, as two kv_bin calls would (the flags forbid contraction).  At most
 * one of a and b is a scalar (both would make the inner value uniform, never a vector
 * operation); c may be one. */
#define KV_LOOP3(T, EXPR)                                                                \
    {                                                                                    \
        T *restrict d_ = d;                                                              \
        const T *restrict a_ = a, *restrict b_ = b, *restrict c_ = c;                    \
        if (!as && !bs && !cs)                                                           \
            for (long k = 0; k < n; k++) {                                               \
                T x = a_[k], y = b_[k], z = c_[k];                                       \
                d_[k] = (T)(EXPR);                                                       \
            }                                                                            \
        else if (!as && !bs) {                                                           \
            const T z = *c_;                                                             \
            for (long k = 0; k < n; k++) { T x = a_[k], y = b_[k]; d_[k] = (T)(EXPR); }  \
        } else if (!as && !cs) {                                                         \
            const T y = *b_;                                                             \
            for (long k = 0; k < n; k++) { T x = a_[k], z = c_[k]; d_[k] = (T)(EXPR); }  \
        } else if (!as) {                                                                \
            const T y = *b_, z = *c_;                                                    \
            for (long k = 0; k < n; k++) { T x = a_[k]; d_[k] = (T)(EXPR); }             \
        } else if (!bs && !cs) {                                                         \
            const T x = *a_;                                                             \
            for (long k = 0; k < n; k++) { T y = b_[k], z = c_[k]; d_[k] = (T)(EXPR); }  \
        } else if (!bs) {                                                                \
            const T x = *a_, z = *c_;                                                    \
            for (long k = 0; k < n; k++) { T y = b_[k]; d_[k] = (T)(EXPR); }             \
        } else                                                                           \
            for (long k = 0; k < n; k++) {                                               \
                T x = *a_, y = *b_, z = c_[cs ? 0 : k];                                  \
                d_[k] = (T)(EXPR);                                                       \
            }                                                                            \
        return;                                                                          \
    }
#define KV_OUTER(T, INNER)                                                               \
    switch (op2) {                                                                       \
    case KV_ADD: KV_LOOP3(T, (T)(INNER) + z)                                             \
    case KV_SUB: KV_LOOP3(T, (T)(INNER) - z)                                             \
    case KV_MUL: KV_LOOP3(T, (T)(INNER) * z)                                             \
    case KV_DIV: KV_LOOP3(T, (T)(INNER) / z)                                             \
    case KV_RSUB: KV_LOOP3(T, z - (T)(INNER))                                            \
    case KV_RDIV: KV_LOOP3(T, z / (T)(INNER))                                            \
    default: break;                                                                      \
    }
#define KV_INNER(T)                                                                      \
    switch (op1) {                                                                       \
    case KV_ADD: KV_OUTER(T, x + y) break;                                               \
    case KV_SUB: KV_OUTER(T, x - y) break;                                               \
    case KV_MUL: KV_OUTER(T, x * y) break;                                               \
    case KV_DIV: KV_OUTER(T, x / y) break;                                               \
    default: break;                                                                      \
    }

KV_CLONES void kv_bin2(int op1, int op2, int ty, void *d, const void *a, int as, const void *b,
                       int bs, const void *c, int cs, long n) {
    if (ty == KILN_FLOAT32) KV_INNER(float)
    else if (ty == KILN_FLOAT64) KV_INNER(double)
}

#define KV_CMPS(T)                                                                       \
    switch (op) {                                                                        \
    case KV_LT: KV_LOOP2(T, u8, x < y)                                                   \
    case KV_LE: KV_LOOP2(T, u8, x <= y)                                                  \
    case KV_GT: KV_LOOP2(T, u8, x > y)                                                   \
    case KV_GE: KV_LOOP2(T, u8, x >= y)                                                  \
    case KV_EQ: KV_LOOP2(T, u8, x == y)                                                  \
    default: KV_LOOP2(T, u8, x != y)                                                     \
    }

KV_CLONES void kv_cmp(int op, int ty, unsigned char *d, const void *a, int as, const void *b,
                      int bs, long n) {
    switch (ty) {
    case KILN_BOOL:
    case KILN_UINT8: KV_CMPS(uint8_t)
    case KILN_INT8: KV_CMPS(int8_t)
    case KILN_INT16: KV_CMPS(int16_t)
    case KILN_UINT16: KV_CMPS(uint16_t)
    case KILN_INT32: KV_CMPS(int32_t)
    case KILN_UINT32: KV_CMPS(uint32_t)
    case KILN_INT64: KV_CMPS(int64_t)
    case KILN_UINT64: KV_CMPS(uint64_t)
    case KILN_FLOAT32: KV_CMPS(float)
    case KILN_FLOAT64: KV_CMPS(double)
    default: break;
    }
}

#define KV_MAP(T, EXPR)                                                                  \
    {                                                                                    \
        T *restrict d_ = d;                                                              \
        const T *restrict a_ = a;                                                        \
        for (long k = 0; k < n; k++) { T x = a_[k]; d_[k] = (EXPR); }                    \
        return;                                                                          \
    }
#define KV_MATHS(T, S)                                                                   \
    switch (op - KV_MATH0) {                                                             \
    case 0: KV_MAP(T, sqrt##S(x))                                                        \
    case 1: KV_MAP(T, exp##S(x))                                                         \
    case 2: KV_MAP(T, expm1##S(x))                                                       \
    case 3: KV_MAP(T, log##S(x))                                                         \
    case 4: KV_MAP(T, log1p##S(x))                                                       \
    case 5: KV_MAP(T, log2##S(x))                                                        \
    case 6: KV_MAP(T, log10##S(x))                                                       \
    case 7: KV_MAP(T, sin##S(x))                                                         \
    case 8: KV_MAP(T, cos##S(x))                                                         \
    case 9: KV_MAP(T, tan##S(x))                                                         \
    case 10: KV_MAP(T, asin##S(x))                                                       \
    case 11: KV_MAP(T, acos##S(x))                                                       \
    case 12: KV_MAP(T, atan##S(x))                                                       \
    case 13: KV_MAP(T, sinh##S(x))                                                       \
    case 14: KV_MAP(T, cosh##S(x))                                                       \
    case 15: KV_MAP(T, tanh##S(x))                                                       \
    case 16: KV_MAP(T, asinh##S(x))                                                      \
    case 17: KV_MAP(T, acosh##S(x))                                                      \
    case 18: KV_MAP(T, atanh##S(x))                                                      \
    case 19: KV_MAP(T, erf##S(x))                                                        \
    case 20: KV_MAP(T, erfc##S(x))                                                       \
    case 21: KV_MAP(T, tgamma##S(x))                                                     \
    case 22: KV_MAP(T, lgamma##S(x))                                                     \
    case 23: KV_MAP(T, fabs##S(x))                                                       \
    case 24: KV_MAP(T, cbrt##S(x))                                                       \
    case 25: KV_MAP(T, exp2##S(x))                                                       \
    case 26: KV_MAP(T, rint##S(x))                                                       \
    default: break;                                                                      \
    }

KV_CLONES void kv_un(int op, int ty, void *d, const void *a, long n) {
    switch (ty) {
    case KILN_FLOAT32:
        if (op == KV_NEG) KV_MAP(float, -x)
        if (op == KV_FABS) KV_MAP(float, fabsf(x))
        KV_MATHS(float, f)
        break;
    case KILN_FLOAT64:
        if (op == KV_NEG) KV_MAP(double, -x)
        if (op == KV_FABS) KV_MAP(double, fabs(x))
        KV_MATHS(double, )
        break;
    case KILN_INT32:
        if (op == KV_NEG) KV_MAP(int32_t, (int32_t)(0 - x))
        break;
    case KILN_INT64:
        if (op == KV_NEG) KV_MAP(int64_t, (int64_t)(0 - x))
        break;
    default: break;
    }
}

#define KV_CVT_TO(TO)                                                                    \
    {                                                                                    \
        TO *restrict d_ = d;                                                             \
        switch (from) {                                                                  \
        case KILN_BOOL:                                                                  \
        case KILN_UINT8: KV_CVT1(TO, uint8_t)                                            \
        case KILN_INT8: KV_CVT1(TO, int8_t)                                              \
        case KILN_INT16: KV_CVT1(TO, int16_t)                                            \
        case KILN_UINT16: KV_CVT1(TO, uint16_t)                                          \
        case KILN_INT32: KV_CVT1(TO, int32_t)                                            \
        case KILN_UINT32: KV_CVT1(TO, uint32_t)                                          \
        case KILN_INT64: KV_CVT1(TO, int64_t)                                            \
        case KILN_UINT64: KV_CVT1(TO, uint64_t)                                          \
        case KILN_FLOAT32: KV_CVT1(TO, float)                                            \
        case KILN_FLOAT64: KV_CVT1(TO, double)                                           \
        default: return;                                                                 \
        }                                                                                \
    }
#define KV_CVT1(TO, FROM)                                                                \
    {                                                                                    \
        const FROM *restrict a_ = a;                                                     \
        for (long k = 0; k < n; k++) d_[k] = (TO)a_[k];                                  \
        return;                                                                          \
    }

KV_CLONES void kv_cvt(int to, int from, void *d, const void *a, long n) {
    switch (to) {
    case KILN_BOOL: KV_CVT_TO(_Bool)
    case KILN_INT8: KV_CVT_TO(int8_t)
    case KILN_UINT8: KV_CVT_TO(uint8_t)
    case KILN_INT16: KV_CVT_TO(int16_t)
    case KILN_UINT16: KV_CVT_TO(uint16_t)
    case KILN_INT32: KV_CVT_TO(int32_t)
    case KILN_UINT32: KV_CVT_TO(uint32_t)
    case KILN_INT64: KV_CVT_TO(int64_t)
    case KILN_UINT64: KV_CVT_TO(uint64_t)
    case KILN_FLOAT32: KV_CVT_TO(float)
    case KILN_FLOAT64: KV_CVT_TO(double)
    default: return;
    }
}

/* Moves by size: a value's bits, whatever its type. */
#define KV_BYSIZE(...)                                                                   \
    switch (kiln_dtype_size((kiln_dtype)ty)) {                                           \
    case 1: { typedef uint8_t W; __VA_ARGS__ } return;                                   \
    case 2: { typedef uint16_t W; __VA_ARGS__ } return;                                  \
    case 4: { typedef uint32_t W; __VA_ARGS__ } return;                                  \
    default: { typedef uint64_t W; __VA_ARGS__ } return;                                 \
    }

KV_CLONES void kv_sel(int ty, void *d, const unsigned char *m, const void *a, int as,
                      const void *b, int bs, long n) {
    KV_BYSIZE({
        W *restrict d_ = d;
        const W *a_ = a, *b_ = b;
        for (long k = 0; k < n; k++) {
            W x = a_[as ? 0 : k], y = b_[bs ? 0 : k];
            d_[k] = !m || m[k] ? x : y;
        }
    })
}

KV_CLONES void kv_mov(int ty, void *d, const unsigned char *m, const void *a, int as, long n) {
    KV_BYSIZE({
        W *restrict d_ = d;
        const W *a_ = a;
        if (as) {
            const W x = *a_;
            for (long k = 0; k < n; k++) d_[k] = !m || m[k] ? x : d_[k];
        } else if (!m) {
            for (long k = 0; k < n; k++) d_[k] = a_[k];
        } else {
            for (long k = 0; k < n; k++) d_[k] = m[k] ? a_[k] : d_[k];
        }
    })
}

/* Whether every lane of m (NULL: all) is set and off holds consecutive offsets: a
 * block's loads and stores at [i] of a thread's own element are then copies. */
static int kv_dense(const int64_t *off, const unsigned char *m, long n) {
    if (n <= 0) return 0;
    int64_t o = off[0];
    int ok = 1;
    for (long k = 0; k < n; k++) ok &= off[k] == o + k;
    if (m)
        for (long k = 0; k < n; k++) ok &= m[k] != 0;
    return ok;
}

KV_CLONES void kv_load(int ty, void *d, const void *base, const int64_t *off, int os,
                       const unsigned char *m, long n) {
    int dense = !os && kv_dense(off, m, n);
    KV_BYSIZE({
        W *restrict d_ = d;
        const W *b_ = base;
        if (dense) {
            const W *s_ = b_ + off[0];
            for (long k = 0; k < n; k++) d_[k] = s_[k];
            /* the next block's lanes, which a thread's next block reads: fetched while
             * this block computes, as the optimised code's streams are */
            for (long k = 0; k < n; k += 64 / (long)sizeof(W)) __builtin_prefetch(s_ + n + k);
        } else if (os) {
            const int64_t o = *off;
            for (long k = 0; k < n; k++)
                if (!m || m[k]) d_[k] = b_[o];
        } else if (!m) {
            for (long k = 0; k < n; k++) d_[k] = b_[off[k]];
        } else {
            for (long k = 0; k < n; k++)
                if (m[k]) d_[k] = b_[off[k]];
        }
    })
}

KV_CLONES void kv_store(int ty, void *base, const int64_t *off, int os,
                        const unsigned char *m, const void *v, int vs, long n) {
    int dense = !os && !vs && kv_dense(off, m, n);
    KV_BYSIZE({
        W *b_ = base;
        const W *v_ = v;
        if (dense) {
            W *restrict t_ = b_ + off[0];
            for (long k = 0; k < n; k++) t_[k] = v_[k];
            for (long k = 0; k < n; k += 64 / (long)sizeof(W)) __builtin_prefetch(t_ + n + k, 1);
            return;
        }
        for (long k = 0; k < n; k++)
            if (!m || m[k]) b_[off[os ? 0 : k]] = v_[vs ? 0 : k];
    })
}

KV_CLONES void kv_axpy(int64_t *d, const int64_t *a, int as, int64_t s, const int64_t *b,
                       int bs, int64_t wrap_n, long n) {
    for (long k = 0; k < n; k++) {
        int64_t x = a[as ? 0 : k];
        if (wrap_n >= 0 && x < 0) x += wrap_n;
        d[k] = (int64_t)((uint64_t)x * (uint64_t)s + (uint64_t)b[bs ? 0 : k]);
    }
}

KV_CLONES void kv_iota(int64_t *d, int64_t start, long n) {
    for (long k = 0; k < n; k++) d[k] = start + k;
}

void kv_divmod(int64_t *q, int64_t *r, const int64_t *a, int64_t s, long n) {
    if (n <= 0) return;
    /* consecutive positions: one division, then counting */
    int64_t qq = a[0] / s, rr = a[0] % s;
    for (long k = 0; k < n; k++) {
        if (k && a[k] != a[k - 1] + 1) {
            qq = a[k] / s;
            rr = a[k] % s;
        }
        q[k] = qq;
        r[k] = rr;
        if (++rr == s) {
            rr = 0;
            qq++;
        }
    }
}

KV_CLONES void kv_mand(unsigned char *d, const unsigned char *a, const unsigned char *b,
                       long n) {
    for (long k = 0; k < n; k++) d[k] = a[k] & b[k];
}

KV_CLONES void kv_mandn(unsigned char *d, const unsigned char *a, const unsigned char *b,
                        long n) {
    for (long k = 0; k < n; k++) d[k] = a[k] & !b[k];
}

KV_CLONES void kv_mnot(unsigned char *d, const unsigned char *a, long n) {
    for (long k = 0; k < n; k++) d[k] = !a[k];
}

int kv_any(const unsigned char *a, long n) {
    unsigned char r = 0;
    for (long k = 0; k < n; k++) r |= a[k];
    return r != 0;
}

#define KV_SYM(f) {#f, (void (*)(void))f}
const kv_symbol kv_symbols[] = {
    KV_SYM(kv_bin),    KV_SYM(kv_bin2), KV_SYM(kv_cmp),   KV_SYM(kv_un),   KV_SYM(kv_cvt),
    KV_SYM(kv_sel),    KV_SYM(kv_mov),  KV_SYM(kv_load),  KV_SYM(kv_store), KV_SYM(kv_axpy),
    KV_SYM(kv_iota),   KV_SYM(kv_divmod), KV_SYM(kv_mand), KV_SYM(kv_mandn), KV_SYM(kv_mnot),
    KV_SYM(kv_any),
};
const int kv_nsymbols = (int)(sizeof kv_symbols / sizeof kv_symbols[0]);
