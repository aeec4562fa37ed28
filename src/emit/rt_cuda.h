/* rt_cuda.h: the CUDA target's prelude, pasted at the top of each generated
 * CUDA source (see rt_common.h).  NVRTC compiles it with no host headers: the
 * math functions, atomics and warp intrinsics are CUDA's built-ins.
 *
 * The kernel's first parameter is the launch's error record (kiln_err); device
 * functions get it as KILN_TP so bounds checks and asserts can report.
 */
#define KILN_FN static __device__ __forceinline__
#define KILN_DEVFN static __device__ __forceinline__
#define KILN_DEVFN_REC static __device__ __noinline__ /* recursive: calls itself */
typedef bool kbool;
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
typedef unsigned long long uintptr_t;

/* Must match kiln_kernel_error in kiln.h. */
struct kiln_err {
    int code, line;
    long long a, b, c;
};

/* bit operations in 64 bits (kiln.popc/brev/clz/ffs narrow them to the type) */
/* Loads and stores with a cache hint (emit_hint.c): the element's bits moved by one
 * ld.global.<hint>.b<bits> or st.global.<hint>.b<bits>, the PTX Numba-CUDA writes; volatile,
 * so each call is one access (ld.cv and ld.lu mean it) */
#define KILN_CACHE_LD(h)                                                                        \
    template <class T> KILN_FN T kiln_ld_##h(const T *p) {                                      \
        T v;                                                                                    \
        if constexpr (sizeof(T) == 1) {                                                         \
            unsigned short r;                                                                   \
            asm volatile("ld.global." #h ".b8 %0, [%1];" : "=h"(r) : "l"(p));                   \
            unsigned char c = (unsigned char)r;                                                 \
            memcpy(&v, &c, 1);                                                        \
        } else if constexpr (sizeof(T) == 2) {                                                  \
            unsigned short r;                                                                   \
            asm volatile("ld.global." #h ".b16 %0, [%1];" : "=h"(r) : "l"(p));                  \
            memcpy(&v, &r, 2);                                                        \
        } else if constexpr (sizeof(T) == 4) {                                                  \
            unsigned int r;                                                                     \
            asm volatile("ld.global." #h ".b32 %0, [%1];" : "=r"(r) : "l"(p));                  \
            memcpy(&v, &r, 4);                                                        \
        } else {                                                                                \
            unsigned long long r;                                                               \
            asm volatile("ld.global." #h ".b64 %0, [%1];" : "=l"(r) : "l"(p));                  \
            memcpy(&v, &r, 8);                                                        \
        }                                                                                       \
        return v;                                                                               \
    }
#define KILN_CACHE_ST(h)                                                                        \
    template <class T> KILN_FN void kiln_st_##h(T *p, T v) {                                    \
        if constexpr (sizeof(T) == 1) {                                                         \
            unsigned char c;                                                                    \
            memcpy(&c, &v, 1);                                                        \
            asm volatile("st.global." #h ".b8 [%0], %1;" ::"l"(p), "h"((unsigned short)c)       \
                         : "memory");                                                           \
        } else if constexpr (sizeof(T) == 2) {                                                  \
            unsigned short r;                                                                   \
            memcpy(&r, &v, 2);                                                        \
            asm volatile("st.global." #h ".b16 [%0], %1;" ::"l"(p), "h"(r) : "memory");         \
        } else if constexpr (sizeof(T) == 4) {                                                  \
            unsigned int r;                                                                     \
            memcpy(&r, &v, 4);                                                        \
            asm volatile("st.global." #h ".b32 [%0], %1;" ::"l"(p), "r"(r) : "memory");         \
        } else {                                                                                \
            unsigned long long r;                                                               \
            memcpy(&r, &v, 8);                                                        \
            asm volatile("st.global." #h ".b64 [%0], %1;" ::"l"(p), "l"(r) : "memory");         \
        }                                                                                       \
    }
KILN_CACHE_LD(ca) KILN_CACHE_LD(cg) KILN_CACHE_LD(cs) KILN_CACHE_LD(lu) KILN_CACHE_LD(cv)
KILN_CACHE_ST(cg) KILN_CACHE_ST(cs) KILN_CACHE_ST(wb) KILN_CACHE_ST(wt)

/* x % m for x >= 0 and m > 0: a column of the wide entry's row vectors (emit_vec.c),
 * a 32-bit remainder when both fit in 32 bits */
KILN_FN i64 kiln_col_(i64 x, i64 m) {
    return ((u64)(x | m) >> 32) == 0 ? (i64)((u32)x % (u32)m) : x % m;
}

/* A whole float's int64 value (int(), math.floor...): INT64_MIN for NaN and values past
 * int64, as the CPU gives (x86's; rt_cpu.h's kiln_f2i64), not PTX's saturation */
KILN_FN i64 kiln_f2i64(f64 x) {
    return x >= -9223372036854775808.0 && x < 9223372036854775808.0 ? (i64)x
                                                                  : -9223372036854775807LL - 1;
}
KILN_FN i64 kiln_f2i64f(f32 x) {
    return x >= -9223372036854775808.0f && x < 9223372036854775808.0f ? (i64)x
                                                                    : -9223372036854775807LL - 1;
}
KILN_FN u64 kiln_popc64(u64 x) { return (u64)__popcll(x); }
KILN_FN u64 kiln_clz64(u64 x) { return (u64)__clzll((long long)x); }
KILN_FN u64 kiln_ffs64(u64 x) { return (u64)__ffsll((long long)x); }
KILN_FN u64 kiln_brev64(u64 x) { return __brevll(x); }

KILN_FN void kiln_fail(struct kiln_err *E, int code, int line, long long a, long long b,
                       long long c) {
    if (atomicCAS(&E->code, 0, -1) == 0) {
        E->line = line;
        E->a = a;
        E->b = b;
        E->c = c;
        __threadfence();
        atomicExch(&E->code, code);
    }
}

/* gx_ is the thread's x grid coordinate, kiln.grid()'s first value: the entry
 * computes it, and kiln_entry_wide runs the body for several of them. */
/* recursion's stack bound and stop word are the CPU's (rt_cpu.h): a GPU thread's
 * stack is the driver's, and a kernel cannot be stopped */
#define KILN_RFP
#define KILN_RFA
#define KILN_RFA0
#define KILN_REC_ENTER(loc, leave)
#define KILN_TP struct kiln_err *E_, i64 gx_
#define KILN_TA E_, gx_
#define KILN_GX gx_
#define KILN_BODY static __device__ __forceinline__
#define KILN_TID_X ((i64)threadIdx.x)
#define KILN_TID_Y ((i64)threadIdx.y)
#define KILN_TID_Z ((i64)threadIdx.z)
#define KILN_BID_X ((i64)blockIdx.x)
#define KILN_BID_Y ((i64)blockIdx.y)
#define KILN_BID_Z ((i64)blockIdx.z)
#define KILN_RAISE_TID (KILN_TID_X | KILN_TID_Y << 21 | KILN_TID_Z << 42)
#define KILN_RAISE_BID (KILN_BID_X | KILN_BID_Y << 31 | KILN_BID_Z << 47)
#define KILN_BDIM_X ((i64)blockDim.x)
#define KILN_BDIM_Y ((i64)blockDim.y)
#define KILN_BDIM_Z ((i64)blockDim.z)
#define KILN_GDIM_X ((i64)gridDim.x)
#define KILN_GDIM_Y ((i64)gridDim.y)
#define KILN_GDIM_Z ((i64)gridDim.z)
#define KILN_INF __longlong_as_double(0x7ff0000000000000LL)
#define KILN_INFF __int_as_float(0x7f800000)
#define KILN_NAN __longlong_as_double(0x7ff8000000000000LL)
#define KILN_NANF __int_as_float(0x7fc00000)
#define KILN_FENCE() __threadfence()

KILN_FN i64 kiln_laneid(void) {
    unsigned r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
    return (i64)r;
}
#define KILN_LANEID kiln_laneid()
KILN_FN u32 kiln_lanemask_lt(void) {
    unsigned r;
    asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
    return r;
}

KILN_FN u32 kiln_dsmem_bytes(void) {
    unsigned r;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
    return r;
}
extern __shared__ __align__(16) unsigned char kiln_dsmem[];
#define KILN_DSMEM_BYTES kiln_dsmem_bytes()

/* ---- atomics ---------------------------------------------------------------- */

#define KILN_ATOMIC_NATIVE(T, CT)                                                         \
    KILN_FN T kiln_atomic_add_##T(T *p, T v) { return (T)atomicAdd((CT *)p, (CT)v); }       \
    KILN_FN T kiln_atomic_exch_##T(T *p, T v) { return (T)atomicExch((CT *)p, (CT)v); }     \
    KILN_FN T kiln_atomic_cas_##T(T *p, T o, T v) { return (T)atomicCAS((CT *)p, (CT)o, (CT)v); }
KILN_ATOMIC_NATIVE(i32, int)
KILN_ATOMIC_NATIVE(u32, unsigned)
KILN_ATOMIC_NATIVE(u64, unsigned long long)
KILN_ATOMIC_NATIVE(i64, unsigned long long)

#define KILN_ATOMIC_BITS(T, CT)                                                           \
    KILN_FN T kiln_atomic_sub_##T(T *p, T v) { return (T)atomicAdd((CT *)p, (CT)(0 - (CT)v)); } \
    KILN_FN T kiln_atomic_and_##T(T *p, T v) { return (T)atomicAnd((CT *)p, (CT)v); }       \
    KILN_FN T kiln_atomic_or_##T(T *p, T v) { return (T)atomicOr((CT *)p, (CT)v); }         \
    KILN_FN T kiln_atomic_xor_##T(T *p, T v) { return (T)atomicXor((CT *)p, (CT)v); }
KILN_ATOMIC_BITS(i32, int)
KILN_ATOMIC_BITS(u32, unsigned)
KILN_ATOMIC_BITS(u64, unsigned long long)
KILN_ATOMIC_BITS(i64, unsigned long long)

KILN_FN i32 kiln_atomic_max_i32(i32 *p, i32 v) { return atomicMax(p, v); }
KILN_FN i32 kiln_atomic_min_i32(i32 *p, i32 v) { return atomicMin(p, v); }
KILN_FN u32 kiln_atomic_max_u32(u32 *p, u32 v) { return atomicMax(p, v); }
KILN_FN u32 kiln_atomic_min_u32(u32 *p, u32 v) { return atomicMin(p, v); }
KILN_FN i64 kiln_atomic_max_i64(i64 *p, i64 v) { return atomicMax(p, v); }
KILN_FN i64 kiln_atomic_min_i64(i64 *p, i64 v) { return atomicMin(p, v); }
KILN_FN u64 kiln_atomic_max_u64(u64 *p, u64 v) { return atomicMax(p, v); }
KILN_FN u64 kiln_atomic_min_u64(u64 *p, u64 v) { return atomicMin(p, v); }
KILN_FN u32 kiln_atomic_inc_u32(u32 *p, u32 v) { return atomicInc(p, v); }
KILN_FN u32 kiln_atomic_dec_u32(u32 *p, u32 v) { return atomicDec(p, v); }
KILN_FN u64 kiln_atomic_inc_u64(u64 *p, u64 v) {
    u64 old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, assumed >= v ? 0 : assumed + 1);
    } while (old != assumed);
    return old;
}
KILN_FN u64 kiln_atomic_dec_u64(u64 *p, u64 v) {
    u64 old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, (assumed == 0 || assumed > v) ? v : assumed - 1);
    } while (old != assumed);
    return old;
}

KILN_FN f32 kiln_atomic_add_f32(f32 *p, f32 v) { return atomicAdd(p, v); }
KILN_FN f64 kiln_atomic_add_f64(f64 *p, f64 v) { return atomicAdd(p, v); }
KILN_FN f32 kiln_atomic_sub_f32(f32 *p, f32 v) { return atomicAdd(p, -v); }
KILN_FN f64 kiln_atomic_sub_f64(f64 *p, f64 v) { return atomicAdd(p, -v); }
KILN_FN f32 kiln_atomic_exch_f32(f32 *p, f32 v) { return atomicExch(p, v); }
KILN_FN f64 kiln_atomic_exch_f64(f64 *p, f64 v) {
    return __longlong_as_double((long long)atomicExch((unsigned long long *)p,
                                                      (unsigned long long)__double_as_longlong(v)));
}
KILN_FN f32 kiln_atomic_max_f32(f32 *p, f32 v) {
    int old = __float_as_int(*p), assumed;
    while (v > __int_as_float(old)) {
        assumed = old;
        old = atomicCAS((int *)p, assumed, __float_as_int(v));
        if (old == assumed) break;
    }
    return __int_as_float(old);
}
KILN_FN f32 kiln_atomic_min_f32(f32 *p, f32 v) {
    int old = __float_as_int(*p), assumed;
    while (v < __int_as_float(old)) {
        assumed = old;
        old = atomicCAS((int *)p, assumed, __float_as_int(v));
        if (old == assumed) break;
    }
    return __int_as_float(old);
}
KILN_FN f64 kiln_atomic_max_f64(f64 *p, f64 v) {
    unsigned long long old = (unsigned long long)__double_as_longlong(*p), assumed;
    while (v > __longlong_as_double((long long)old)) {
        assumed = old;
        old = atomicCAS((unsigned long long *)p, assumed, (unsigned long long)__double_as_longlong(v));
        if (old == assumed) break;
    }
    return __longlong_as_double((long long)old);
}
KILN_FN f64 kiln_atomic_min_f64(f64 *p, f64 v) {
    unsigned long long old = (unsigned long long)__double_as_longlong(*p), assumed;
    while (v < __longlong_as_double((long long)old)) {
        assumed = old;
        old = atomicCAS((unsigned long long *)p, assumed, (unsigned long long)__double_as_longlong(v));
        if (old == assumed) break;
    }
    return __longlong_as_double((long long)old);
}

/* nanmax, nanmin: a NaN is a missing value, on either side; integers have none */
#define KILN_NAN_ATOMIC(T, U, name, cmp, to, from)                                      \
    KILN_FN T kiln_atomic_##name##_##T(T *p, T v) {                                     \
        U old = (U)to(*p), assumed;                                                     \
        while (v == v && (v cmp from(old) || from(old) != from(old))) {                 \
            assumed = old;                                                              \
            old = atomicCAS((U *)p, assumed, (U)to(v));                                 \
            if (old == assumed) break;                                                  \
        }                                                                               \
        return from(old);                                                               \
    }
#define KILN_AS_LL(x) __double_as_longlong(x)
#define KILN_FROM_LL(x) __longlong_as_double((long long)(x))
KILN_NAN_ATOMIC(f32, int, nanmax, >, __float_as_int, __int_as_float)
KILN_NAN_ATOMIC(f32, int, nanmin, <, __float_as_int, __int_as_float)
KILN_NAN_ATOMIC(f64, unsigned long long, nanmax, >, KILN_AS_LL, KILN_FROM_LL)
KILN_NAN_ATOMIC(f64, unsigned long long, nanmin, <, KILN_AS_LL, KILN_FROM_LL)

/* ---- unrolled loops (unroll.h) --------------------------------------------------- */

/* The bytes [lo, hi) that an array's elements span (strides in elements, either
 * sign); an empty array spans nothing. */
KILN_FN void kiln_span_(const void *d, const i64 *shape, const i64 *strides, int nd, i64 es,
                        u64 *lo, u64 *hi) {
    u64 l = (u64)d, h = (u64)d + (u64)es;
    for (int k = 0; k < nd; k++) {
        if (shape[k] <= 0) {
            *lo = *hi = 0;
            return;
        }
        i64 e = (shape[k] - 1) * strides[k] * es;
        if (e < 0) l += (u64)e;
        else h += (u64)e;
    }
    *lo = l;
    *hi = h;
}

/* Whether two spans share no byte: an unrolled loop loads one array's elements
 * ahead of the stores to the other of the iterations before. */
KILN_FN bool kiln_apart_(u64 al, u64 ah, u64 bl, u64 bh) {
    return al == ah || bl == bh || ah <= bl || bh <= al;
}
#define KILN_SPAN(a, lo, hi)                                                               \
    kiln_span_((a).data, (a).shape, (a).strides,                                           \
               (int)(sizeof((a).shape) / sizeof(i64)), (i64)sizeof(*(a).data), &(lo), &(hi))

#ifdef KILN_COOPERATIVE
/* g.sync() of kiln.cg (Numba's cuda.cg.this_grid().sync()): a barrier for the whole grid,
 * which a cooperative launch (cuLaunchCooperativeKernel) keeps resident.  Written here,
 * not taken from cooperative_groups.h (NVRTC may lack it, and its grid.sync() needs
 * thread 0 of every block to reach it).  As on the CPU, a thread that has returned counts
 * as arrived:
 * - each block counts its live threads (kiln_blive_, set when the kernel starts); the
 *   last one to return retires the block from the grid;
 * - at g.sync() the block meets at __syncthreads, one live thread (elected through
 *   kiln_blead_) fences the block's writes and counts the block as arrived;
 * - kiln_gbar_ holds the blocks arrived (high 32 bits) and retired (low 32 bits): the
 *   update that makes arrived + retired the grid's blocks ends the barrier: it takes the
 *   arrivals back and bumps kiln_ggen_, which the arrived blocks wait for, fence, and
 *   meet their block again.  The last retirement of the launch sets kiln_gbar_ to 0.
 * The counters are the module's, so two launches of one cooperative kernel must not run
 * at the same time (docs/language.md). */
__device__ unsigned long long kiln_gbar_;
__device__ unsigned int kiln_ggen_;
__shared__ unsigned int kiln_blive_, kiln_blead_;

KILN_FN void kiln_grid_enter_(void) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        kiln_blive_ = blockDim.x * blockDim.y * blockDim.z;
        kiln_blead_ = 0;
    }
    __syncthreads();
}

/* Adds to kiln_gbar_; ends the barrier when this update completes it. */
KILN_FN void kiln_gbar_add_(unsigned long long add) {
    unsigned int nb = gridDim.x * gridDim.y * gridDim.z;
    unsigned long long now = atomicAdd(&kiln_gbar_, add) + add;
    unsigned int arrived = (unsigned int)(now >> 32), retired = (unsigned int)now;
    if (arrived > 0 && arrived + retired == nb) { /* nothing else updates it until the bump */
        atomicAdd(&kiln_gbar_, 0ull - ((unsigned long long)arrived << 32));
        __threadfence();
        atomicAdd(&kiln_ggen_, 1u);
    } else if (arrived == 0 && retired == nb) {
        atomicExch(&kiln_gbar_, 0ull); /* every block is done: ready for the next launch */
    }
}

KILN_FN void kiln_grid_sync_(void) {
    __syncthreads();
    bool lead = atomicExch(&kiln_blead_, 1u) == 0u;
    if (lead) {
        unsigned int gen = atomicAdd(&kiln_ggen_, 0u); /* before arriving: it cannot move yet */
        __threadfence();
        kiln_gbar_add_(1ull << 32);
        while (*(volatile unsigned int *)&kiln_ggen_ == gen) {
        }
        __threadfence();
    }
    __syncthreads();
    /* after every thread's election (a late one would undo it), before the next one,
     * which the leader's next __syncthreads (or its return) precedes */
    if (lead) atomicExch(&kiln_blead_, 0u);
}

/* The thread returns from the kernel: the block's last retires it. */
KILN_FN void kiln_grid_exit_(void) {
    if (atomicSub(&kiln_blive_, 1u) == 1u) {
        __threadfence();
        kiln_gbar_add_(1ull);
    }
}
#endif
