/* rt_cpu.h: the CPU target's prelude, pasted at the top of each generated C
 * source (see rt_common.h for how the preludes fit together).
 *
 * On the CPU a SIMT kernel is a loop: the blocks of the grid are spread over
 * OpenMP threads and the threads of a block run one after another in the
 * innermost loop, which the compiler vectorises.  The thread's coordinates are
 * ordinary parameters of the kernel body (KILN_TP), so after inlining they
 * are registers and the vectoriser sees the thread index as the induction
 * variable.  Device functions take the same parameters, so kiln.grid() works
 * in them too.
 */
/* Tier 0 (src/target/tcc.c): libtcc compiles this same source in the process
 * for a first call in milliseconds, without OpenMP and without GCC's
 * builtins.  What it lacks is given here: the OpenMP pragmas go (tcc has no
 * _Pragma operator; tcc.c calls the entry once per share of a launch, and the
 * parallel region reads its share where OpenMP's thread number would be), the
 * __atomic builtins become calls of kiln_tcc_atomic and kiln_tcc_cas (GCC's
 * builtins, compiled into kiln, every one sequentially consistent, which is
 * at least what any order asks), and the bit builtins are written out.  The
 * __simd__ declarations below need __GNUC__, which tcc does not define. */
#ifdef __TINYC__
/* what the source uses of <math.h>, <stdint.h> and <string.h>, declared here:
 * tcc reads glibc's <math.h> in about 4 ms, four times the rest of a kernel
 * (tcc.c compiles with -Werror, so a function missing here fails tier 0 and
 * the first call builds with cc instead, never calls an undeclared function) */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef __SIZE_TYPE__ size_t;
void *memcpy(void *, const void *, size_t);
void *memmove(void *, const void *, size_t);
void *memset(void *, int, size_t);
int memcmp(const void *, const void *, size_t);
#define KILN_TCC_M1(fn) double fn(double); float fn##f(float);
#define KILN_TCC_M2(fn) double fn(double, double); float fn##f(float, float);
KILN_TCC_M1(acos) KILN_TCC_M1(asin) KILN_TCC_M1(atan) KILN_TCC_M1(cos) KILN_TCC_M1(sin)
KILN_TCC_M1(tan) KILN_TCC_M1(acosh) KILN_TCC_M1(asinh) KILN_TCC_M1(atanh) KILN_TCC_M1(cosh)
KILN_TCC_M1(sinh) KILN_TCC_M1(tanh) KILN_TCC_M1(exp) KILN_TCC_M1(exp2) KILN_TCC_M1(expm1)
KILN_TCC_M1(log) KILN_TCC_M1(log10) KILN_TCC_M1(log1p) KILN_TCC_M1(log2) KILN_TCC_M1(logb)
KILN_TCC_M1(cbrt) KILN_TCC_M1(fabs) KILN_TCC_M1(sqrt) KILN_TCC_M1(erf) KILN_TCC_M1(erfc)
KILN_TCC_M1(lgamma) KILN_TCC_M1(tgamma) KILN_TCC_M1(ceil) KILN_TCC_M1(floor)
KILN_TCC_M1(nearbyint) KILN_TCC_M1(rint) KILN_TCC_M1(round) KILN_TCC_M1(trunc)
KILN_TCC_M2(atan2) KILN_TCC_M2(hypot) KILN_TCC_M2(pow) KILN_TCC_M2(fmod) KILN_TCC_M2(remainder)
KILN_TCC_M2(copysign) KILN_TCC_M2(nextafter) KILN_TCC_M2(fdim) KILN_TCC_M2(fmax) KILN_TCC_M2(fmin)
double fma(double, double, double);
float fmaf(float, float, float);
double ldexp(double, int);
float ldexpf(float, int);
double frexp(double, int *);
float frexpf(float, int *);
double modf(double, double *);
float modff(float, float *);
long long llrint(double);
long long llround(double);
/* the classification macros, each argument evaluated once */
#define isnan(x) ({ __typeof__(x) kiln_x_ = (x); kiln_x_ != kiln_x_; })
#define isinf(x) ({ __typeof__(x) kiln_x_ = (x); kiln_x_ == kiln_x_ && kiln_x_ - kiln_x_ != 0; })
#define isfinite(x) ({ __typeof__(x) kiln_x_ = (x); kiln_x_ - kiln_x_ == 0; })
#define signbit(x) ({ double kiln_x_ = (x); unsigned long long kiln_b_;                 \
                      memcpy(&kiln_b_, &kiln_x_, 8); (int)(kiln_b_ >> 63); })
#define INFINITY (1.0f / 0.0f)
#define NAN (0.0f / 0.0f)
#define HUGE_VAL (1.0 / 0.0)
#define HUGE_VALF (1.0f / 0.0f)
#define _Pragma(text)
#define __ATOMIC_RELAXED 0
#define __ATOMIC_CONSUME 1
#define __ATOMIC_ACQUIRE 2
#define __ATOMIC_RELEASE 3
#define __ATOMIC_ACQ_REL 4
#define __ATOMIC_SEQ_CST 5
/* op: 0 load, 1 store, 2 exchange, 3 add, 4 sub, 5 and, 6 or, 7 xor; returns
 * the old value's bits (the stored value's for a store) */
extern unsigned long long kiln_tcc_atomic(void *p, int size, int op, unsigned long long v);
/* compare-and-swap: *e's value for *p's, else *e gets *p's; 1 when swapped */
extern int kiln_tcc_cas(void *p, int size, void *e, unsigned long long v);
extern void kiln_tcc_fence(void);
#define KILN_TCC_AT(p, op, v)                                                          \
    ((__typeof__(*(p)))kiln_tcc_atomic((void *)(p), sizeof(*(p)), op, (unsigned long long)(v)))
#define __atomic_load_n(p, o) KILN_TCC_AT(p, 0, 0)
#define __atomic_store_n(p, v, o) ((void)KILN_TCC_AT(p, 1, v))
#define __atomic_exchange_n(p, v, o) KILN_TCC_AT(p, 2, v)
#define __atomic_fetch_add(p, v, o) KILN_TCC_AT(p, 3, v)
#define __atomic_fetch_sub(p, v, o) KILN_TCC_AT(p, 4, v)
#define __atomic_fetch_and(p, v, o) KILN_TCC_AT(p, 5, v)
#define __atomic_fetch_or(p, v, o) KILN_TCC_AT(p, 6, v)
#define __atomic_fetch_xor(p, v, o) KILN_TCC_AT(p, 7, v)
#define __atomic_compare_exchange_n(p, e, v, weak, s, f)                               \
    kiln_tcc_cas((void *)(p), sizeof(*(p)), (void *)(e), (unsigned long long)(v))
#define __atomic_thread_fence(o) kiln_tcc_fence()
/* tcc folds these to the values GCC's builtins give (0.0 / 0.0 is +NaN) */
#define __builtin_inf() (1.0 / 0.0)
#define __builtin_inff() (1.0f / 0.0f)
#define __builtin_nan(s) (0.0 / 0.0)
#define __builtin_nanf(s) (0.0f / 0.0f)
static inline int kiln_tcc_popcount(unsigned long long x) {
    int n = 0;
    for (; x; x &= x - 1) n++;
    return n;
}
static inline int kiln_tcc_clz(unsigned long long x) { /* x != 0 */
    int n = 0;
    for (; !(x >> 63); x <<= 1) n++;
    return n;
}
static inline int kiln_tcc_ffs(long long v) {
    unsigned long long x = (unsigned long long)v;
    if (!x) return 0;
    int n = 1;
    for (; !(x & 1); x >>= 1) n++;
    return n;
}
static inline unsigned long long kiln_tcc_bswap(unsigned long long x) {
    unsigned long long r = 0;
    for (int i = 0; i < 8; i++, x >>= 8) r = r << 8 | (x & 0xff);
    return r;
}
#define __builtin_popcountll(x) kiln_tcc_popcount(x)
#define __builtin_clzll(x) kiln_tcc_clz(x)
#define __builtin_ffsll(x) kiln_tcc_ffs(x)
#define __builtin_bswap64(x) kiln_tcc_bswap(x)
#else
/* GCC before 13 does not know AMD's Zen 4: -march=native there gives the AVX-512
 * instructions with znver3's tuning, whose cost tables were never set for 512-bit
 * registers.  Tuned so, GCC folds an element's repeated loads into the arithmetic
 * (((a*b+c)*a-b)/(c+1) reads a, b and c twice each, and runs 15-25% slower than LLVM's
 * code that reads them once); an AVX-512 core's tuning, at the same 512-bit width, keeps
 * them in registers (docs/cpu-target.md, "The compiler's tuning").  Any other compiler,
 * processor or KILN_CC's own -mtune is left as it is.  First, so that every function of
 * the source, the headers' inline ones too, is tuned alike. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__INTEL_COMPILER) && \
    defined(__x86_64__) && defined(__tune_znver3__) && defined(__AVX512F__)
#pragma GCC target("tune=icelake-server,prefer-vector-width=512")
#endif
#include <math.h>
#include <stdint.h>
#include <string.h>
#endif

/* glibc's libmvec has vector versions of the common math functions, but
 * <math.h> declares them only under -ffast-math.  Declaring them here lets the
 * vectoriser call them (about 4 ulp, against 1 for the scalar functions) in
 * the thread loop; -fno-math-errno makes them const.  The first set has been
 * in libmvec since glibc 2.22, the rest since 2.35. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
#define KILN_VEC __attribute__((__simd__("notinbranch")))
#define KILN_VEC1(fn) extern double fn(double) KILN_VEC; extern float fn##f(float) KILN_VEC;
#define KILN_VEC2(fn) extern double fn(double, double) KILN_VEC; extern float fn##f(float, float) KILN_VEC;
KILN_VEC1(exp) KILN_VEC1(log) KILN_VEC1(sin) KILN_VEC1(cos) KILN_VEC2(pow)
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)
KILN_VEC1(acos) KILN_VEC1(asin) KILN_VEC1(atan) KILN_VEC1(exp2) KILN_VEC1(cosh) KILN_VEC1(expm1)
KILN_VEC1(sinh) KILN_VEC1(cbrt) KILN_VEC1(log10) KILN_VEC1(log2) KILN_VEC1(log1p)
KILN_VEC1(atanh) KILN_VEC1(acosh) KILN_VEC1(erf) KILN_VEC1(tanh) KILN_VEC1(asinh) KILN_VEC1(erfc)
KILN_VEC1(tan) KILN_VEC2(hypot) KILN_VEC2(atan2)
#endif
#endif

#define KILN_FN static inline __attribute__((unused))
#define KILN_BODY static inline __attribute__((always_inline, unused))
/* device functions are inlined into the thread loop so it can vectorise */
#define KILN_DEVFN static inline __attribute__((always_inline, unused))
/* ... except a recursive one, which calls itself through the stack, a frame a call (no
 * tail call turned into a jump: KILN_REC_ENTER bounds the depth by the frames' addresses) */
#if defined(__clang__)
#define KILN_DEVFN_REC static __attribute__((noinline, unused, disable_tail_calls))
#elif defined(__GNUC__) && !defined(__TINYC__)
#define KILN_DEVFN_REC static __attribute__((noinline, unused, optimize("no-optimize-sibling-calls")))
#else
#define KILN_DEVFN_REC static __attribute__((noinline, unused))
#endif
#define KILN_EXPORT __attribute__((visibility("default")))
typedef _Bool kbool;
typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef float f32;
typedef double f64;

/* Must match kiln_kernel_error in kiln.h. */
struct kiln_err {
    int code, line;
    long long a, b, c;
    char *(*stack_floor)(void); /* kiln_cpu_stack_floor (kiln.h), or NULL */
};

/* Must match kiln_cpu_launch in kiln.h. */
typedef struct kiln_launch {
    long long grid[3];
    long long block[3];
    long long par_threshold;
    struct kiln_err *err;
    const int *stop;
    long long dyn_shared; /* dynamic shared memory per block, bytes (rt_blocks.h) */
    long long pool_me, pool_nt; /* tier 0's share of this call (tcc.c), above */
} kiln_launch;

/* A block's fibers and shared memory (rt_blocks.h); NULL for kernels without them. */
typedef struct kiln_blk kiln_blk;

/* A float's uint64 value (emit_convert): a negative one wraps through int64, as
 * NumPy's astype does on the CPU (C leaves it undefined, and gcc's and tier 0's code
 * would differ). */
KILN_FN u64 kiln_f2u64(f64 x) { return x < 0 ? (u64)(i64)x : (u64)x; }
/* A float's int64 value (int(), math.floor...): x86's INT64_MIN for NaN and values past
 * int64 whatever the compiler folds, so gcc's code and tier 0's agree (emit_intrinsic.c) */
KILN_FN i64 kiln_f2i64(f64 x) {
    /* trunc(x) + 0.0: a 0 reads back as +0.0 even where gcc folds (double)(long)y into y */
    x = trunc(x) + 0.0;
    return x >= -9223372036854775808.0 && x < 9223372036854775808.0 ? (i64)x
                                                                  : -9223372036854775807LL - 1;
}

/* The same for int() of a float written as an index (emit_intrinsic.c): no float ever
 * sees the integer, so the +0.0 that keeps gcc's (double)(long) fold honest is not
 * needed, and a float32 is compared as itself (2^63 is a float32); half the cost in a
 * histogram's loop. */
KILN_FN i64 kiln_f2i64ix(f64 x) {
    return x >= -9223372036854775808.0 && x < 9223372036854775808.0 ? (i64)x
                                                                    : -9223372036854775807LL - 1;
}
KILN_FN i64 kiln_f2i64ixf(f32 x) {
    return x >= -9223372036854775808.0f && x < 9223372036854775808.0f ? (i64)x
                                                                      : -9223372036854775807LL - 1;
}

/* Whether two arrays' elements share a byte: each spans from its lowest element to
 * its highest (strides in elements, negative ones included); an array without
 * elements shares none.  An entry that privatises an array of atomic adds (plan.h)
 * asks it of every other array argument: one buffer passed twice, or as a view of
 * another dtype, must see each add at once, so such a launch keeps the atomics. */
static inline int kiln_overlap_(const void *d1, int n1, const i64 *sh1, const i64 *st1, i64 es1,
                                const void *d2, int n2, const i64 *sh2, const i64 *st2, i64 es2) {
    const void *d[2] = {d1, d2};
    const i64 *sh[2] = {sh1, sh2}, *st[2] = {st1, st2};
    int n[2] = {n1, n2};
    i64 es[2] = {es1, es2};
    unsigned long long lo[2], hi[2];
    for (int a = 0; a < 2; a++) {
        i64 down = 0, up = 0;
        for (int k = 0; k < n[a]; k++) {
            if (sh[a][k] <= 0) return 0;
            i64 e = (sh[a][k] - 1) * st[a][k];
            if (e < 0) down += e;
            else up += e;
        }
        lo[a] = (unsigned long long)(__SIZE_TYPE__)d[a] + (unsigned long long)(down * es[a]);
        hi[a] = (unsigned long long)(__SIZE_TYPE__)d[a] + (unsigned long long)((up + 1) * es[a]);
    }
    return lo[0] < hi[1] && lo[1] < hi[0];
}

/* The stop word (kiln_cpu_launch.stop): S_ in every body and device function.
 * A relaxed atomic load, so a poll is one load from a line no one writes and a
 * branch predicted not taken; polls sit at the top of `while` loops and between
 * blocks (rows, pieces of KILN_POLL_SPAN threads), never inside the vectorised
 * thread loop of a kernel without `while` loops.  Code 6 is KILN_ERR_STOPPED. */
static const int kiln_never_ = 0;
/* lane mode's while loop with a varying condition finishes its lanes one at a time
 * once at most one lane in this many is left in it (emit_stmt.c, lane_while): past
 * that a vector pass costs more than the lanes' own passes */
#ifndef KILN_LANE_TAIL_DIV /* (-DKILN_LANE_TAIL_DIV=N in KILN_CC: a tuning study) */
#define KILN_LANE_TAIL_DIV 4
#endif
#define KILN_POLL_SPAN 65536 /* KILN_CPU_POLL_SPAN in kiln.h */
#define KILN_POLL_SPAN_LOOPS 256 /* when threads run loops: KILN_CPU_POLL_SPAN_LOOPS */
#define KILN_STOPPED() __builtin_expect(__atomic_load_n(S_, __ATOMIC_RELAXED) != 0, 0)
#define KILN_POLL(leave)                                                               \
    if (KILN_STOPPED()) {                                                              \
        if (__atomic_load_n(&E_->code, __ATOMIC_RELAXED) == 0) kiln_fail(E_, 6, 0, 0, 0, 0); \
        leave                                                                          \
    }
/* Recursive device functions take the lowest stack address they may use (kfl_): a
 * call from other code passes its own frame's address less KILN_REC_STACK, or the
 * thread's own stack's floor when that is higher (a thread with less stack than
 * KILN_REC_STACK below the kernel: E_->stack_floor, src/target/stack.c), or in block
 * mode its frame less KILN_REC_STACK_FIBER (whose fibers have stacks of the kernel's
 * local arrays and 64 KiB); a recursive call passes its own.  Each entry checks its frame
 * against it, so deep recursion ends the launch with RecursionError (code 15,
 * KILN_ERR_RECURSION) instead of running off the thread's stack, and polls the stop
 * word, so Ctrl-C ends a long recursion. */
#define KILN_REC_STACK (1L << 20)       /* bytes, KILN_REC_STACK in docs/limits.md */
#define KILN_REC_STACK_FIBER (32L << 10)
#define KILN_RFP , char *kfl_
#define KILN_RFA , kfl_
#define KILN_RFA0 , kiln_rec_floor_(E_, (char *)__builtin_frame_address(0), B_ != 0)
KILN_FN char *kiln_rec_floor_(struct kiln_err *e, char *frame, int fiber) {
    char *lo = frame - (fiber ? KILN_REC_STACK_FIBER : KILN_REC_STACK);
    char *t = !fiber && e->stack_floor ? e->stack_floor() : 0;
    return t && (unsigned long long)t > (unsigned long long)lo ? t : lo;
}
#define KILN_REC_ENTER(loc, leave)                                                      \
    if ((char *)__builtin_frame_address(0) < kfl_) {                                   \
        if (__atomic_load_n(&E_->code, __ATOMIC_RELAXED) == 0) kiln_fail(E_, 15, loc, B_ != 0, 0, 0); \
        leave                                                                          \
    }                                                                                  \
    KILN_POLL(leave)
/* libgomp's, called only inside a parallel region (never on the serial path,
 * which must not touch the OpenMP runtime in a forked child) */
extern int omp_get_num_threads(void);
extern int omp_get_thread_num(void);
#ifdef __TINYC__
/* Tier 0 has no OpenMP; tcc.c runs a large launch's entry on several threads of
 * its own at once, each call with its share in L (pool_me of pool_nt; 0 of 0 or 1
 * when alone), which the parallel region reads as OpenMP's thread number and
 * count.  The serial path runs on share 0 only, and the collapsed loops of 2-D and
 * 3-D grids, an `omp for` under OpenMP, give each share every pool_nt-th row.
 * KILN_POOL_OK marks an entry written so (all but the cooperative one). */
#define omp_get_num_threads() (L->pool_nt > 1 ? (int)L->pool_nt : 1)
#define omp_get_thread_num() ((int)L->pool_me)
#define KILN_SERIAL if (L->pool_me == 0)
#define KILN_MINE(i) if (L->pool_nt > 1 && (i) % L->pool_nt != L->pool_me) continue;
#define KILN_POOL_OK const int kiln_pool_ok_ = 1;
#else
#define KILN_SERIAL
#define KILN_MINE(i)
#define KILN_POOL_OK
#endif

/* a float's negation: its sign bit flipped, a NaN's too, as gcc's code does (tcc's
 * subtracts, which leaves a NaN's sign as it was) */
#ifdef __TINYC__
#define KILN_FNEG_FN(T, U, N)                                                            \
    KILN_FN T kiln_fneg##N(T x) {                                                        \
        U b;                                                                             \
        memcpy(&b, &x, sizeof b);                                                        \
        b ^= (U)1 << (N - 1);                                                            \
        memcpy(&x, &b, sizeof b);                                                        \
        return x;                                                                        \
    }
KILN_FNEG_FN(f64, u64, 64)
KILN_FNEG_FN(f32, u32, 32)
#define KILN_FNEG64(x) kiln_fneg64(x)
#define KILN_FNEG32(x) kiln_fneg32(x)
#else
#define KILN_FNEG64(x) (-(x))
#define KILN_FNEG32(x) (-(x))
#endif

/* bit operations in 64 bits (kiln.popc/brev/clz/ffs narrow them to the type) */
KILN_FN u64 kiln_popc64(u64 x) { return (u64)__builtin_popcountll(x); }
KILN_FN u64 kiln_clz64(u64 x) { return x ? (u64)__builtin_clzll(x) : 64u; }
KILN_FN u64 kiln_ffs64(u64 x) { return (u64)__builtin_ffsll((long long)x); }
KILN_FN u64 kiln_brev64(u64 x) {
    x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
    x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((x & 0x0F0F0F0F0F0F0F0Full) << 4);
    return __builtin_bswap64(x);
}

KILN_FN void kiln_fail(struct kiln_err *E, int code, int line, long long a, long long b,
                       long long c) {
    int expected = 0;
    if (__atomic_compare_exchange_n(&E->code, &expected, -1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED)) {
        E->line = line;
        E->a = a;
        E->b = b;
        E->c = c;
        __atomic_store_n(&E->code, code, __ATOMIC_RELEASE);
    }
}

#define KILN_TP                                                                        \
    long long tx_, long long ty_, long long tz_, long long bx_, long long by_,         \
        long long bz_, long long BX_, long long BY_, long long BZ_, long long GX_,     \
        long long GY_, long long GZ_, struct kiln_err *E_, const int *S_, kiln_blk *B_
#define KILN_TA tx_, ty_, tz_, bx_, by_, bz_, BX_, BY_, BZ_, GX_, GY_, GZ_, E_, S_, B_
#define KILN_GX (bx_ * BX_ + tx_)
/* A raise's thread and block, packed as kiln.h's KILN_ERR_RAISE says: from the global
 * position, since a flat plan runs the grid as one loop (tx_ the global index, bx_ 0) */
#define KILN_RAISE_TID                                                                 \
    (((bx_ * BX_ + tx_) % BX_) | ((by_ * BY_ + ty_) % BY_) << 21 |                     \
     ((bz_ * BZ_ + tz_) % BZ_) << 42)
#define KILN_RAISE_BID                                                                 \
    (((bx_ * BX_ + tx_) / BX_) | ((by_ * BY_ + ty_) / BY_) << 31 |                     \
     ((bz_ * BZ_ + tz_) / BZ_) << 47)
#define KILN_TID_X tx_
#define KILN_TID_Y ty_
#define KILN_TID_Z tz_
#define KILN_BID_X bx_
#define KILN_BID_Y by_
#define KILN_BID_Z bz_
#define KILN_BDIM_X BX_
#define KILN_BDIM_Y BY_
#define KILN_BDIM_Z BZ_
#define KILN_GDIM_X GX_
#define KILN_GDIM_Y GY_
#define KILN_GDIM_Z GZ_
#define KILN_INF (__builtin_inf())
#define KILN_INFF (__builtin_inff())
#define KILN_NAN (__builtin_nan(""))
#define KILN_NANF (__builtin_nanf(""))
#define KILN_FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)

/* ---- atomics: GCC builtins for integers, compare-and-swap loops for floats ---- */

#define KILN_ATOMIC_INT(T)                                                                   \
    KILN_FN T kiln_atomic_add_##T(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); } \
    KILN_FN T kiln_atomic_sub_##T(T *p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); } \
    KILN_FN T kiln_atomic_and_##T(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); } \
    KILN_FN T kiln_atomic_or_##T(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }   \
    KILN_FN T kiln_atomic_xor_##T(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); } \
    KILN_FN T kiln_atomic_exch_##T(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); } \
    KILN_FN T kiln_atomic_cas_##T(T *p, T old, T v) {                                        \
        __atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
        return old;                                                                          \
    }                                                                                        \
    KILN_FN T kiln_atomic_max_##T(T *p, T v) {                                               \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                        \
        while (v > old && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_SEQ_CST,       \
                                                       __ATOMIC_RELAXED)) {}                 \
        return old;                                                                          \
    }                                                                                        \
    KILN_FN T kiln_atomic_min_##T(T *p, T v) {                                               \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                        \
        while (v < old && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_SEQ_CST,       \
                                                       __ATOMIC_RELAXED)) {}                 \
        return old;                                                                          \
    }                                                                                        \
    KILN_FN T kiln_atomic_inc_##T(T *p, T v) {                                               \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                        \
        while (!__atomic_compare_exchange_n(p, &old, old >= v ? 0 : old + 1, 1,               \
                                            __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {}           \
        return old;                                                                          \
    }                                                                                        \
    KILN_FN T kiln_atomic_dec_##T(T *p, T v) {                                               \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                        \
        while (!__atomic_compare_exchange_n(p, &old, (old == 0 || old > v) ? v : old - 1, 1,  \
                                            __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {}           \
        return old;                                                                          \
    }
KILN_ATOMIC_INT(i32)
KILN_ATOMIC_INT(i64)
KILN_ATOMIC_INT(u32)
KILN_ATOMIC_INT(u64)

#define KILN_ATOMIC_FLOAT(T, U)                                                         \
    KILN_FN T kiln_atomic_upd_##T(T *p, T v, int op) {                                  \
        U *q = (U *)(void *)p;                                                          \
        U oldb = __atomic_load_n(q, __ATOMIC_RELAXED);                                  \
        for (;;) {                                                                      \
            T old, nv;                                                                  \
            memcpy(&old, &oldb, sizeof old);                                            \
            switch (op) {                                                               \
            case 0: nv = old + v; break;                                                \
            case 1: nv = old - v; break;                                                \
            case 2: if (!(v > old)) return old; nv = v; break;                          \
            case 3: if (!(v < old)) return old; nv = v; break;                          \
            /* nanmax, nanmin: a NaN is a missing value, on either side */              \
            case 5: if (v != v || !(v > old || old != old)) return old; nv = v; break;  \
            case 6: if (v != v || !(v < old || old != old)) return old; nv = v; break;  \
            default: nv = v; break;                                                     \
            }                                                                           \
            U nb;                                                                       \
            memcpy(&nb, &nv, sizeof nb);                                                \
            if (__atomic_compare_exchange_n(q, &oldb, nb, 1, __ATOMIC_SEQ_CST,           \
                                            __ATOMIC_RELAXED))                          \
                return old;                                                             \
        }                                                                               \
    }
KILN_ATOMIC_FLOAT(f32, u32)
KILN_ATOMIC_FLOAT(f64, u64)

/* A private reduction variable of atomic.max/min into one element (plan.h, acc_op): the
 * atomics' own order-free rule, a NaN value never taken (the element's NaN stays, in the
 * merge). */
#define KILN_ACC_MINMAX(T)                                                               \
    KILN_FN void kiln_accmax_##T(T *r, T v) { if (v > *r) *r = v; }                        \
    KILN_FN void kiln_accmin_##T(T *r, T v) { if (v < *r) *r = v; }
KILN_ACC_MINMAX(i32)
KILN_ACC_MINMAX(i64)
KILN_ACC_MINMAX(u32)
KILN_ACC_MINMAX(u64)
KILN_ACC_MINMAX(f32)
KILN_ACC_MINMAX(f64)
#define kiln_atomic_add_f32(p, v) kiln_atomic_upd_f32(p, v, 0)
#define kiln_atomic_sub_f32(p, v) kiln_atomic_upd_f32(p, v, 1)
#define kiln_atomic_max_f32(p, v) kiln_atomic_upd_f32(p, v, 2)
#define kiln_atomic_min_f32(p, v) kiln_atomic_upd_f32(p, v, 3)
#define kiln_atomic_exch_f32(p, v) kiln_atomic_upd_f32(p, v, 4)
#define kiln_atomic_add_f64(p, v) kiln_atomic_upd_f64(p, v, 0)
#define kiln_atomic_sub_f64(p, v) kiln_atomic_upd_f64(p, v, 1)
#define kiln_atomic_max_f64(p, v) kiln_atomic_upd_f64(p, v, 2)
#define kiln_atomic_min_f64(p, v) kiln_atomic_upd_f64(p, v, 3)
#define kiln_atomic_exch_f64(p, v) kiln_atomic_upd_f64(p, v, 4)
#define kiln_atomic_nanmax_f32(p, v) kiln_atomic_upd_f32(p, v, 5)
#define kiln_atomic_nanmin_f32(p, v) kiln_atomic_upd_f32(p, v, 6)
#define kiln_atomic_nanmax_f64(p, v) kiln_atomic_upd_f64(p, v, 5)
#define kiln_atomic_nanmin_f64(p, v) kiln_atomic_upd_f64(p, v, 6)
