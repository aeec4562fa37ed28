/* sema.h: semantic analysis, from the AST and argument types to the typed IR.
 *
 * sema types one kernel for one tuple of argument types.  Every function the
 * kernel calls is typed per call site: a FuncSpec is one function for one
 * tuple of argument types, with its own copy of the AST (the function's
 * source is parsed again for each), so the annotations of different
 * specialisations never mix.
 *
 * Inference is a fixed point.  A variable has one type in a function: the
 * unification (NumPy promotion) of every value assigned to it.  A pass types
 * every statement in order with the variables' current types and widens them
 * with what it sees; passes repeat until nothing changes, then a final pass
 * runs with diagnostics on and leaves the annotations the emitters read.  The
 * same pass computes which integer variables are never negative (indices from
 * kiln.grid, range loops...), so indexing and `//` can skip Python's negative
 * cases, and which array parameters each function may write.
 *
 * Names follow Python's scoping: a name assigned anywhere in a function is a
 * local for all of it; any other name is a global, looked up through the
 * resolver once per translation and frozen.
 */
#ifndef KILN_SEMA_H
#define KILN_SEMA_H

#include "types.h"

/* ---- intrinsics: what kiln knows by name ------------------------------------ */

typedef enum IntrKind {
    IK_NS,          /* a namespace: math, numpy, kiln, kiln.atomic ... */
    IK_SREG,        /* threadIdx.x ...: sub = 3 * which + axis */
    IK_DIM3,        /* threadIdx ...: sub = which (0 tid, 1 bid, 2 bdim, 3 gdim) */
    IK_WARPSIZE,
    IK_LANEID,
    IK_CONST,       /* math.pi ...: sub = IC_* */
    IK_DTYPE,       /* a dtype object (kiln.float32, np.int8): sub = kiln_dtype */
    IK_GRID,        /* kiln.grid(n) */
    IK_GRIDSIZE,    /* kiln.gridsize(n) */
    IK_SYNCTHREADS, /* sub: 0 syncthreads, 1 syncwarp, IY_AND/IY_OR/IY_COUNT (predicate) */
    IK_THREADFENCE, /* sub: 0 device, 1 block, 2 system */
    IK_SHARED_ARRAY,
    IK_LOCAL_ARRAY,
    IK_ATOMIC,      /* sub = IA_* */
    IK_SHFL,        /* sub = IS_* */
    IK_VOTE,        /* sub: 0 ballot, 1 all, 2 any, 3 eq (all lanes' predicates the same) */
    IK_ACTIVEMASK,  /* sub: 0 activemask(), 1 lanemask_lt() */
    IK_MATCH,       /* sub: 0 match_any_sync, 1 match_all_sync */
    IK_CONST_ARRAY, /* kiln.const.array_like(a global NumPy array) */
    IK_RESHAPE,     /* a.reshape(shape): args are the array, then the shape's parts */
    IK_MATH1,       /* one float argument: sub indexes math1_names */
    IK_MATH2,       /* two float arguments: sub indexes math2_names */
    IK_LOG,         /* math.log(x[, base]) */
    IK_ROUNDING,    /* floor/ceil/trunc: sub 0/1/2; flags & IF_NUMPY: float result */
    IK_PRED,        /* isnan/isinf/isfinite: sub 0/1/2 */
    IK_ABS,
    IK_MINMAX,      /* builtins min/max: sub 0/1 (Python's comparisons) */
    IK_NPMINMAX,    /* numpy.minimum/maximum: sub 0/1 (NaN propagates) */
    IK_POWER,       /* numpy.power: NumPy typing, integer powers stay integers */
    IK_SIGN,        /* numpy.sign */
    IK_INT,         /* builtins int() */
    IK_FLOAT,       /* builtins float() */
    IK_BOOL,        /* builtins bool() */
    IK_ROUND,       /* builtins round() */
    IK_RANGE,
    IK_LEN,
    IK_FMA,         /* kiln.fma(a, b, c): a * b + c rounded once */
    IK_BITS,        /* kiln.popc/brev/clz/ffs: sub = IB_* */
    IK_SELP,        /* kiln.selp(cond, a, b) */
    IK_FROM_BUFFER, /* cffi's ffi.from_buffer(array): a CPointer to its first element */
    IK_LDEXP,       /* math.ldexp(x, i) */
    IK_SPLIT,       /* math.frexp (sub 0) and math.modf (sub 1): a tuple of two parts */
    IK_DIVMOD,      /* builtins divmod(x, y): rewritten as (x // y, x % y) (sema_call.c) */
    IK_ENUMERATE,   /* builtins enumerate: only a for loop's iterable (for_iter.c) */
    IK_ZIP,         /* builtins zip: the same */
    IK_REVERSED,    /* builtins reversed: the same (of a range, an array or a tuple) */
    IK_LITERAL_UNROLL, /* kiln.literal_unroll: only a for loop's iterable (literal_unroll.c) */
    IK_FP16,        /* kiln.fp16.*: Numba's cuda.fp16 functions, sub = IH_* */
    IK_BINOP,       /* operator.add ...: a binary operator as a function, sub = BinOp */
    IK_COMPLEX,     /* builtins complex(real, imag) */
    IK_CMATH,       /* cmath's functions and complex methods: sub = CM_* (sema_complex.c) */
    IK_PRINT,       /* builtins print (sema_print.c, emit_print.c) */
    IK_CG,          /* kiln.cg: sub = IG_* */
    IK_NPCMP,       /* numpy.less ...: a comparison ufunc, sub = CmpOp: on numbers the
                     * comparison itself, on arrays a ufunc statement (ufunc_stmt.c) */
    IK_NPUFUNC,     /* NumPy's ufuncs with no Python operator: sub = NU_* (sema_npufunc.c) */
    IK_REDUCE,      /* np.sum(a), a.sum() ...: a whole array to a number, sub = RD_*
                     * (sema_reduce.c) */
    IK_VIEW,        /* a.view(dtype): the array's bytes as another dtype (array_view.c) */
    IK_LIBDEVICE,   /* kiln.libdevice.*: CUDA's __nv_* functions (libdevice.c) */
    IK_BF16,        /* kiln.bf16.*: Numba's bfloat16 functions, sub = IBF_* (sema_bf16.c) */
    IK_BF16CVT,     /* kiln.bf16.*_to_*: conversions with a rounding mode, sub = BF16CVT() */
    IK_ARRAY_COPY,  /* a.copy(): args are the array (array_copy.c) */
    IK_NAMEDTUPLE,  /* a namedtuple class's call: bound are the fields' values (namedtuple.c) */
    IK_VECTOR,      /* kiln.float32x4 ...: a CUDA vector type's constructor, sub = VEC_SUB()
                     * (vector.c) */
    IK_CACHE        /* kiln.ldcs(a, i), kiln.stcs(a, i, v) ...: a load or store with a cache
                     * hint, sub = CH_* (cache_hints.c); bound: the element, then the value */
} IntrKind;

/* IK_CACHE's sub: the loads, then the stores; their PTX modifiers are cache_hint_names */
enum { CH_LDCA, CH_LDCG, CH_LDCS, CH_LDLU, CH_LDCV, CH_STCG, CH_STCS, CH_STWB, CH_STWT };
extern const char *const cache_hint_names[CH_STWT + 1];

/* IK_VECTOR's sub: the lanes' dtype and their count (1-4) */
#define VEC_SUB(d, n) ((uint8_t)((d) * 4 + (n) - 1))
#define VEC_DTYPE(sub) ((kiln_dtype)((sub) / 4))
#define VEC_LANES(sub) ((sub) % 4 + 1)

/* IK_REDUCE: NumPy's reductions of a whole array */
typedef enum Reduce {
    RD_SUM, RD_PROD, RD_MEAN, RD_VAR, RD_STD, RD_MIN, RD_MAX, RD_NANSUM, RD_NANPROD,
    RD_NANMEAN, RD_NANVAR, RD_NANSTD, RD_NANMIN, RD_NANMAX, RD_ALL, RD_ANY, RD_COUNT_NONZERO
} Reduce;

/* IK_NPUFUNC: numpy.invert/bitwise_not, the logical ufuncs, fmax/fmin */
typedef enum NpUfunc { NU_INVERT, NU_LNOT, NU_LAND, NU_LOR, NU_LXOR, NU_FMAX, NU_FMIN } NpUfunc;

enum { IC_PI, IC_E, IC_INF, IC_NAN, IC_TAU };
/* kiln.cg (Numba's cuda.cg): this_grid() gives the grid group (TY_GROUP), whose one
 * method g.sync() waits for every thread of the grid; either makes the kernel
 * cooperative (SemaResult.cooperative) */
enum { IG_THIS_GRID, IG_SYNC };
enum { IA_ADD, IA_SUB, IA_MAX, IA_MIN, IA_EXCH, IA_CAS, IA_AND, IA_OR, IA_XOR, IA_INC, IA_DEC,
       IA_NANMAX, IA_NANMIN };
enum { IS_DOWN, IS_UP, IS_XOR, IS_IDX };
enum { IB_POPC, IB_BREV, IB_CLZ, IB_FFS, IB_BITCOUNT /* x.bit_count(): of |x| */ };
/* syncthreads_and/or/count(predicate): __syncthreads_and/or/count, an int32 result */
enum { IY_AND = 2, IY_OR, IY_COUNT };
/* kiln.fp16 (Numba's cuda.fp16): float16 arguments, float16 results (bool for the
 * comparisons); IH_BINARY..: two arguments, IH_CMP..: comparisons, IH_UNARY..: one */
enum {
    IH_ADD, IH_SUB, IH_MUL, IH_DIV, IH_MAX, IH_MIN, /* two arguments */
    IH_EQ, IH_NE, IH_GT, IH_GE, IH_LT, IH_LE,       /* comparisons */
    IH_FMA,                                         /* three */
    IH_NEG, IH_ABS, IH_SIN, IH_COS, IH_LOG, IH_LOG2, IH_LOG10, IH_EXP, IH_EXP2, IH_EXP10,
    IH_SQRT, IH_RSQRT, IH_CEIL, IH_FLOOR, IH_RCP, IH_TRUNC, IH_RINT /* one */
};
/* kiln.bf16 (Numba's cuda.bf16 and cuda._internal.cuda_bf16): bfloat16 arguments;
 * IBF_ADD..IBF_MUL_SAT two, bfloat16 results; IBF_EQ..IBF_LE comparisons; three for
 * the fmas; one for the rest; the bit casts take or give int16/uint16 */
enum {
    IBF_ADD, IBF_SUB, IBF_MUL, IBF_DIV, IBF_MAX, IBF_MIN, IBF_MAX_NAN, IBF_MIN_NAN,
    IBF_ADD_SAT, IBF_SUB_SAT, IBF_MUL_SAT,
    IBF_EQ, IBF_NE, IBF_GT, IBF_GE, IBF_LT, IBF_LE,
    IBF_FMA, IBF_FMA_SAT, IBF_FMA_RELU,
    IBF_NEG, IBF_ABS, IBF_SIN, IBF_COS, IBF_TANH, IBF_LOG, IBF_LOG2, IBF_LOG10, IBF_EXP,
    IBF_EXP2, IBF_EXP10, IBF_SQRT, IBF_RSQRT, IBF_CEIL, IBF_FLOOR, IBF_RCP, IBF_TRUNC,
    IBF_RINT,
    IBF_ISNAN, IBF_ISINF,                        /* bool; int32 (-1, 0, 1) */
    IBF_AS_I16, IBF_AS_U16, IBF_I16_AS, IBF_U16_AS /* bit casts */
};
/* IK_BF16CVT's sub: to (1: dtype to bfloat16; 0: bfloat16 to dtype), the rounding
 * mode (0 to nearest even, 1 toward zero, 2 down, 3 up: rt_half.h) and the dtype */
#define BF16CVT(to, mode, d) ((uint8_t)((to) << 7 | (mode) << 4 | (d)))
#define BF16CVT_TO(sub) ((sub) >> 7)
#define BF16CVT_MODE(sub) (((sub) >> 4) & 3)
#define BF16CVT_DTYPE(sub) ((kiln_dtype)((sub) & 15))
/* IK_CMATH: the first CM_NFUNC take a complex and give one (cmath_names[sub]) */
enum {
    CM_EXP, CM_LOG, CM_LOG10, CM_SQRT, CM_SIN, CM_COS, CM_TAN, CM_ASIN, CM_ACOS, CM_ATAN,
    CM_SINH, CM_COSH, CM_TANH, CM_ASINH, CM_ACOSH, CM_ATANH,
    CM_LOG2, /* numpy.log2 of a complex number (cmath has none) */
    CM_NFUNC,
    CM_PHASE = CM_NFUNC, /* cmath.phase, numpy.angle: a float */
    CM_POLAR,            /* cmath.polar: (abs, phase) */
    CM_RECT,             /* cmath.rect(r, phi) */
    CM_CONJ,             /* z.conjugate(), numpy.conj */
    CM_REAL, CM_IMAG     /* numpy.real, numpy.imag (the attributes are E_ATTR) */
};

enum IntrFlags {
    IF_NUMPY = 2,    /* the numpy flavour (float results for floor/ceil/trunc) */
    IF_VALUE = 4     /* a value, not a callable (threadIdx.x, math.pi) */
};

struct Intrinsic {
    const char *name;   /* canonical dotted name */
    uint8_t kind;       /* IntrKind */
    uint8_t sub;
    uint8_t flags;      /* IntrFlags */
    const char *params; /* keyword names for binding, comma separated, or NULL */
};

/* Looks up a canonical dotted name ("math.sqrt"); NULL if kiln does not know it. */
const Intrinsic *intrinsic_lookup(const char *name);

/* libdevice.c: kiln.libdevice's functions (libdevice_table.h, from the toolkit's bitcode).
 * Types are letters: v void, i int32, u uint32, l int64, m uint64, f float32, d float64;
 * bit k of outs: parameter k is a pointer the function stores a result through. */
typedef struct LibdeviceFn {
    const char *name;   /* without __nv_ */
    char ret;
    const char *params; /* one letter per parameter (an output's: what it points to) */
    unsigned outs;
} LibdeviceFn;
enum { LIBDEVICE_WORDS = 8,     /* SemaResult.libdevice: a bit per function, up to 512 */
       LIBDEVICE_MAX_PARAMS = 8 /* the most parameters a libdevice function has (4) */ };
const Intrinsic *libdevice_lookup(const char *name); /* "kiln.libdevice.sin", or NULL */
/* "kiln.float32x4", "kiln.float4" (CUDA's alias) ...: a vector type's constructor, or NULL */
const Intrinsic *vector_lookup(const char *name);
const LibdeviceFn *libdevice_fn(const Intrinsic *in);
int libdevice_count(void);
const LibdeviceFn *libdevice_at(int i);
const Type *libdevice_type(char c);
/* The call's value: the result and each output, a tuple when more than one. */
const Type *libdevice_result(Compiler *C, const LibdeviceFn *f);

/* C names of the one- and two-argument math functions (float64 names; the
 * float32 name adds an 'f'). */
extern const char *const math1_names[];
extern const char *const math2_names[];
int math1_count(void);
/* C names of cmath's complex functions, by CM_* (the runtime's kiln_c<name>_c128). */
extern const char *const cmath_names[];
/* The cmath function NumPy's one-argument function math1_names[sub] computes for a
 * complex argument (numpy.sqrt -> cmath.sqrt), or -1. */
int cmath_of_math1(int sub);

/* A compile-time namespace value: a known module/intrinsic, or a foreign
 * module whose attributes are asked of the resolver. */
struct NsRef {
    const char *name;       /* canonical name, or the user's dotted path if foreign */
    const Intrinsic *intr;  /* the entry, NULL if foreign */
    void *scope;            /* foreign: the resolver scope to ask in */
    bool by_name;           /* an enum class: Color["red"] is Color.red */
    /* a namedtuple class (namedtuple.c): its name and nfields field names */
    const char *tname;
    const char *const *fields;
    int nfields;
};

/* ---- globals ----------------------------------------------------------------- */

/* A resolved global, frozen for the translation. */
typedef struct GVal {
    kiln_value_kind kind;
    const Type *ty;        /* its type (weak for Python scalars) */
    ConstVal cv;           /* scalars (a complex one's real part) */
    double im;             /* complex scalars: the imaginary part */
    bool big;              /* an int above INT64_MAX */
    int ntuple;
    struct GVal *tuple;    /* TUPLE elements */
    const NsRef *ns;       /* NAMESPACE/MODULE */
    FuncInfo *fn;          /* FUNCTION */
    const char *other;     /* OTHER: the Python type name */
    const char *exception; /* OTHER: an exception class's key (kiln_value.exception) */
    const void *data;      /* ARRAY: the frozen elements, C order (in the arena), or NULL
                            * for a device array taken by address: */
    uint64_t address;      /* ...its first element's address */
    const int64_t *shape;  /* ARRAY: its extents */
    bool constmem;         /* ARRAY: taken by kiln.const.array_like: in constant memory */
} GVal;

/* ---- functions ---------------------------------------------------------------- */

/* One explicit signature of a device function. */
typedef struct FuncSig {
    kiln_argtype *args;
    int nargs;
    kiln_argtype ret; /* dtype KILN_NDTYPES: void, or left out */
    bool ret_void;    /* written void: the body returns nothing */
} FuncSig;

/* A function defined inside another (nested.c). */
typedef struct NestedFn {
    const char *name;
    uint32_t off;         /* its def's source offset in the enclosing function's file */
    FuncInfo *fi;
    const Type *ty;       /* TY_FUNC of fi */
    const char **free;    /* the enclosing function's variables it reads, passed at each call */
    int nfree;
    int nparams;          /* the parameters the user wrote (the captured ones follow) */
} NestedFn;

struct FuncInfo {
    FuncInfo *next;
    void *scope;          /* the resolver scope of the function's globals */
    const char *name;     /* the def's name */
    SrcFile file;         /* its source text */
    bool is_device;
    bool has_sig;         /* explicit signatures: one of them converts the arguments */
    FuncSig *sigs;        /* in the order given; each call takes the best (sema.c) */
    int nsigs;
    Node *proto;          /* one parse of the def, for parameter names */
    struct ExternFn *ext; /* an external CUDA device function: no source, one signature */
    FuncSpec *specs;      /* specialisations made so far */
    int nspecs;
    bool parse_failed;
    NestedFn *nested;     /* functions defined in its body */
    int nnested, capnested;
    Node *inner_def;      /* a nested function's def (captured names appended), which each
                           * specialisation copies instead of parsing its file */
    FuncInfo *outer;      /* ... and the function it is defined in */
};

struct Sym {
    const char *name;
    const Type *ty;      /* the unified type so far */
    Span def_sp;         /* the assignment that set the type first */
    Span change_sp;      /* the assignment that changed it last */
    int param;           /* parameter index, or -1 */
    bool maybe_neg;      /* may hold a negative integer (monotone: only turns true) */
    bool maybe_none;     /* assigned a value that may be None: the result of a device
                          * function that returns None on some paths (FuncSpec.ret_none);
                          * emitted as the optional of its type (monotone) */
    bool hi_set;         /* hi holds the bound of a non-negative value assigned */
    uint8_t hi_grown;    /* times hi grew; past BOUND_WIDEN_AFTER it is the top */
    uint64_t hi;         /* the largest non-negative value assigned (bounds.c);
                          * UINT64_MAX: unbounded (its type's maximum) */
    uint64_t origins;    /* arrays: bit p set if parameter p may flow here */
    bool is_local;       /* assigned in the body */
    bool read;           /* read somewhere (for warnings) */
    uint32_t first_assign; /* source offset of the first assignment in the text */
    bool poisoned;       /* an assignment to it failed: uses stay silent */
    int nassign;         /* assignments in the text (targets, for loops) */
    bool has_cint;       /* assigned once, an integer constant: cint (array shapes) */
    int64_t cint;
    const Node *storage; /* assigned once, a local or shared array's call: its shape
                          * bounds constant indices (sema_subscript) */
    /* a Python int variable (weak): the range of the constants assigned to it
     * (wk_set), unless it was assigned anything else (wk_any); monotone */
    bool wk_set, wk_any;
    int64_t wk_lo, wk_hi;
    int id;              /* unique in the function, for emitted names */
    int web;             /* 0, or which later web of its name it is (syms.c): `name.web` */
};

struct FuncSpec {
    FuncSpec *next;       /* next spec of the same FuncInfo */
    FuncInfo *fi;
    Node *def;            /* this spec's own AST */
    const Type **params;  /* argument types (after the signature's conversion) */
    int nparams;
    Sym **psyms;          /* parameter symbols */
    const Type *ret;      /* return type (TY_NONE for none) */
    Span ret_sp;          /* the return that set it */
    bool ret_error;       /* a returned value had an error: callers see an error too */
    bool ret_none;        /* returns a scalar ret on some paths and None on others (or
                           * reaches its end): Numba's Optional; emitted as a struct of
                           * the value and whether there is one (emit.c, emit_opt_ctype) */
    Sym **syms;           /* all symbols, parameters first */
    int nsyms, capsyms;
    bool is_kernel;
    bool in_progress;     /* being analysed: a call back into it is recursion */
    bool recursive;       /* called from itself (or from its callees): emitted not inlined */
    bool runaway;         /* a recursive call found no return type to take (sema.c) */
    bool provisional;     /* typed while a caller it calls back was untyped: dropped (spec.c) */
    bool analysed;        /* reached its fixed point */
    bool finalised;       /* ran its final pass with diagnostics on */
    bool unbound_all;     /* syms.c gave up: every read of a local array is checked
                           * (unbound.c), since none is known to find a value */
    bool failed;          /* finalisation reported errors */
    uint64_t written;     /* bit p: array parameter p may be written */
    int id;               /* unique in the translation */
    PtrVec storage;       /* E_CALL nodes of local.array/shared.array */
    int64_t local_bytes;  /* local arrays per thread, its own and per call of its callees
                           * (each call inlines them); <= KILN_MAX_LOCAL_BYTES or reported */
    int64_t shared_bytes; /* its own static shared arrays (one copy per block) */
    int ntemps;           /* node ids handed out (for emitted temporaries) */
};

/* Origins (Sym.origins, FuncSpec.written) are bits: parameter p is bit p for
 * p < 63, and the parameters past it share bit 62 (a conservative yes for each).
 * Bit 63 is a global array frozen into the program, which nothing may write. */
#define ORIGIN_FROZEN (UINT64_C(1) << 63)
static inline uint64_t origin_of_param(int i) {
    return UINT64_C(1) << (i < 62 ? i : 62);
}

/* Whether the function may write array parameter i. */
static inline bool spec_writes(const FuncSpec *f, int i) {
    return (f->written & origin_of_param(i)) != 0;
}

/* An external CUDA device function (kiln.declare_device): the kernel calls it by its C
 * symbol through the ABI it was declared with, and its CUDA C sources go into the
 * kernel's translation unit (emit.c). */
typedef struct ExternFn {
    const char *name;   /* its C symbol */
    int abi;            /* kiln_abi */
    const char *sigtext;
    const char *const *links; /* its sources (copied into the arena) */
    const size_t *link_lens;
    int nlinks;
    const Type **params; /* its signature's types (a pointer: ty_ptr) */
    int nparams;
    const Type *ret;    /* ty_none for void */
    bool cooperative;   /* use_cooperative: its caller launches cooperatively (it may sync
                         * the grid through CUDA's cooperative groups) */
    bool used;          /* a call of it was typed: it is in SemaResult.externs */
} ExternFn;

/* One CUDA C source of external device functions, pasted once per translation. */
typedef struct ExternSrc {
    const char *text;
    size_t len;
} ExternSrc;

/* ---- ufunc calls on arrays -------------------------------------------------------- */

/* A statement `np.f(a, b, out)` or `np.f(a, b, out=out)` (ufunc_stmt.c): each argument is
 * evaluated once into a temporary, then the output's elements are visited in the calling
 * thread, each input's element (broadcast) is loaded into an element variable, and the
 * operation on those variables (tmpl, typed as scalar code) is stored, converted. */
#define UFUNC_MAX_IN 2 /* inputs of the ufuncs kiln knows (unary and binary) */
typedef struct UfuncStmt {
    Node *call;                     /* the call as written */
    int nin;                        /* its inputs */
    Node *assigns[UFUNC_MAX_IN + 1]; /* S_ASSIGN tmp[k] = argument k, the output last */
    Node *tmp[UFUNC_MAX_IN + 1];    /* E_NAME: the temporaries */
    Node *elem[UFUNC_MAX_IN];       /* E_NAME: each input's element at the loop's index */
    Node *tmpl;                     /* the operation on elem: a call, or a comparison */
    bool active;                    /* sema: the callee is NumPy's ufunc, so this is the loop */
} UfuncStmt;

typedef struct SemaResult {
    FuncSpec *kernel;
    PtrVec order;          /* finalised specs, callees before callers, kernel last */
    const char *gpu_only;  /* first GPU-only feature used, or NULL */
    Span gpu_only_sp;
    bool uses_atomics;
    bool block_mode;       /* shared memory or barriers: the CPU runs blocks as fibers */
    bool spin;             /* a loop may wait for other threads (an atomic whose result it
                            * reads, a fence): block mode, and on the CPU each such atomic
                            * and fence lets the block's other fibers run (rt_blocks.h) */
    bool uses_sregs;       /* reads threadIdx/blockIdx/blockDim/gridDim/laneid directly */
    bool uses_gridsize;    /* calls kiln.gridsize() */
    int64_t const_bytes;   /* the arrays in constant memory (kiln.const.array_like) */
    int64_t const_max;     /* the largest of them */
    PtrVec externs;        /* ExternFn called, in the order of their first call */
    PtrVec ext_srcs;       /* ExternSrc of those, each text once, in the order first met */
    bool cooperative;      /* uses kiln.cg: launched cooperatively, the CPU runs the whole
                            * grid as fibers (rt_blocks.h) */

    bool uses_ufunc_loops; /* has a ufunc statement on arrays (no lane mode on the CPU) */
    bool uses_loops;       /* a for or while loop in the kernel or a callee: a thread may
                            * take long, so the CPU polls Ctrl-C more often (emit.c) */
    uint64_t libdevice[LIBDEVICE_WORDS]; /* bit i: libdevice_at(i) is called */
} SemaResult;

/* Types fi as a kernel (or, with !is_kernel, as a device function) for the
 * given argument types.  Returns 0, or -1 after reporting errors. */
int sema_run(Compiler *C, FuncInfo *fi, const Type **args, int nargs, bool is_kernel,
             SemaResult *out);

/* Creates the FuncInfo for a function whose source text is given. */
FuncInfo *sema_funcinfo(Compiler *C, void *scope, const char *text, size_t len,
                        const char *filename, int first_line);

/* The value of a compile-time integer (NF_CONST int or bool). */
bool sema_const_int(const Node *n, int64_t *v);

/* Whether expression n's value may be None at run time: a call of a function that
 * returns None on some paths, or a variable assigned one (Sym.maybe_none). */
bool sema_maybe_none(const Node *n);
/* Whether element i of a tuple-valued expression is known to be >= 0. */
bool sema_elem_nonneg(const Node *value, int i);

/* The dimensions of a constant shape (an int, a tuple of ints, or a frozen
 * tuple); returns the number of dimensions or -1. */
int sema_shape(const Node *shape, int64_t *dims, int max);
/* The alignment= a kiln.local.array or kiln.shared.array call was given (checked by
 * sema_storage_align), or 0 for its element type's own (storage_align.c). */
int64_t storage_alignment(const Node *call);
/* The dimensions of a storage call's array (kiln.local.array, kiln.shared.array, a.copy()),
 * as sema_shape gives them (array_copy.c). */
int storage_dims(const Node *call, int64_t *dims, int max);

/* Writes "name: type" lines for every variable of every spec (inspect_types). */
void sema_dump_types(Compiler *C, const SemaResult *r, Buf *out);

#endif
