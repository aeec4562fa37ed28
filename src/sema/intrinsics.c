/* intrinsics.c: every name kiln knows inside a kernel.
 *
 * Names are canonical dotted paths: the resolver maps the user's objects to
 * them (`import kiln as cuda` makes `cuda` the namespace "kiln"; `from math
 * import sqrt` makes `sqrt` the intrinsic "math.sqrt"), and sema looks the
 * path up here.  The same table answers for `math.*`, `numpy.*`, the Python
 * builtins and kiln's SIMT intrinsics, whose names follow Numba's CUDA
 * dialect so that Numba kernel files run unchanged.
 */
#include <string.h>

#include "sema.h"

const char *const math1_names[] = {
    "sqrt", "exp",  "expm1", "log",   "log1p", "log2",  "log10", "sin",    "cos",
    "tan",  "asin", "acos",  "atan",  "sinh",  "cosh",  "tanh",  "asinh",  "acosh",
    "atanh", "erf", "erfc",  "tgamma", "lgamma", "fabs", "cbrt", "exp2",   "rint",
    /* no C function: rt_common.h's, in NumPy's arithmetic (x * (180 / pi)) */
    "kiln_degrees", "kiln_radians"};
enum {
    M_SQRT, M_EXP, M_EXPM1, M_LOG, M_LOG1P, M_LOG2, M_LOG10, M_SIN, M_COS, M_TAN, M_ASIN,
    M_ACOS, M_ATAN, M_SINH, M_COSH, M_TANH, M_ASINH, M_ACOSH, M_ATANH, M_ERF, M_ERFC,
    M_GAMMA, M_LGAMMA, M_FABS, M_CBRT, M_EXP2, M_RINT, M_DEGREES, M_RADIANS
};
int math1_count(void) { return (int)COUNTOF(math1_names); }

const char *const cmath_names[] = {"exp",  "log",  "log10", "sqrt", "sin",  "cos",
                                   "tan",  "asin", "acos",  "atan", "sinh", "cosh",
                                   "tanh", "asinh", "acosh", "atanh", "log2"};

int cmath_of_math1(int sub) {
    static const struct { int m, c; } map[] = {
        {M_SQRT, CM_SQRT}, {M_EXP, CM_EXP},   {M_LOG, CM_LOG},     {M_LOG10, CM_LOG10},
        {M_SIN, CM_SIN},   {M_COS, CM_COS},   {M_TAN, CM_TAN},     {M_ASIN, CM_ASIN},
        {M_ACOS, CM_ACOS}, {M_ATAN, CM_ATAN}, {M_SINH, CM_SINH},   {M_COSH, CM_COSH},
        {M_TANH, CM_TANH}, {M_ASINH, CM_ASINH}, {M_ACOSH, CM_ACOSH}, {M_ATANH, CM_ATANH},
        {M_LOG2, CM_LOG2}};
    for (size_t i = 0; i < COUNTOF(map); i++)
        if (map[i].m == sub) return map[i].c;
    return -1;
}

const char *const math2_names[] = {"pow", "atan2", "hypot", "copysign", "fmod", "remainder",
                                   "nextafter"};
enum { M2_POW, M2_ATAN2, M2_HYPOT, M2_COPYSIGN, M2_FMOD, M2_REMAINDER, M2_NEXTAFTER };

#define NS(n) {n, IK_NS, 0, 0, NULL}
#define M1(n, s) {n, IK_MATH1, s, 0, NULL}
#define M2(n, s) {n, IK_MATH2, s, 0, NULL}
#define DT(n, d) {n, IK_DTYPE, d, 0, NULL}
#define SREG(n, s) {n, IK_SREG, s, IF_VALUE, NULL}
#define H(n, s) {"kiln.fp16." n, IK_FP16, s, 0, NULL}
#define OP(n, s) {"operator." n, IK_BINOP, s, 0, NULL}
#define CM(n, s) {n, IK_CMATH, s, 0, NULL}
#define B(n, s) {"kiln.bf16." n, IK_BF16, s, 0, NULL}
#define BC(n, to, mode, d) {"kiln.bf16." n, IK_BF16CVT, BF16CVT(to, mode, d), 0, NULL}
/* the four rounding modes of one conversion: NAME_to_bfloat16_rn... (BT4) or
 * bfloat16_to_NAME_rn... (BF4) */
#define BT4(name, d)                                                                         \
    BC(name "_to_bfloat16_rn", 1, 0, d), BC(name "_to_bfloat16_rz", 1, 1, d),               \
    BC(name "_to_bfloat16_rd", 1, 2, d), BC(name "_to_bfloat16_ru", 1, 3, d)
#define BF4(name, d)                                                                         \
    BC("bfloat16_to_" name "_rn", 0, 0, d), BC("bfloat16_to_" name "_rz", 0, 1, d),         \
    BC("bfloat16_to_" name "_rd", 0, 2, d), BC("bfloat16_to_" name "_ru", 0, 3, d)
#define RD(n, s) {"numpy." n, IK_REDUCE, s, 0, NULL}, {"array." n, IK_REDUCE, s, 0, NULL}

static const Intrinsic table[] = {
    /* namespaces */
    NS("math"), NS("numpy"), NS("kiln"), NS("builtins"), NS("kiln.atomic"), NS("kiln.shared"),
    NS("kiln.local"), NS("kiln.const"), NS("kiln.fp16"), NS("kiln.bf16"), NS("cmath"), NS("kiln.cg"),
    NS("kiln.libdevice"), NS("cffi"),
    /* builtins */
    {"builtins.abs", IK_ABS, 0, 0, NULL},
    {"builtins.min", IK_MINMAX, 0, 0, NULL},
    {"builtins.max", IK_MINMAX, 1, 0, NULL},
    {"builtins.int", IK_INT, 0, 0, NULL},
    {"builtins.float", IK_FLOAT, 0, 0, NULL},
    {"builtins.bool", IK_BOOL, 0, 0, NULL},
    {"builtins.round", IK_ROUND, 0, 0, "number,ndigits"},
    {"builtins.range", IK_RANGE, 0, 0, NULL},
    {"builtins.len", IK_LEN, 0, 0, NULL},
    {"builtins.enumerate", IK_ENUMERATE, 0, 0, NULL},
    {"builtins.print", IK_PRINT, 0, 0, NULL},
    {"builtins.zip", IK_ZIP, 0, 0, NULL},
    {"builtins.reversed", IK_REVERSED, 0, 0, NULL},
    {"kiln.literal_unroll", IK_LITERAL_UNROLL, 0, 0, NULL},
    {"builtins.complex", IK_COMPLEX, 0, 0, "real,imag"},
    {"builtins.pow", IK_POWER, 0, 0, "base,exp"}, /* pow(x, y) is x ** y; no modulus */
    {"builtins.divmod", IK_DIVMOD, 0, 0, NULL},
    /* cmath, complex methods and NumPy's complex functions (sema_complex.c) */
    CM("cmath.exp", CM_EXP), CM("cmath.log", CM_LOG), CM("cmath.log10", CM_LOG10),
    CM("cmath.sqrt", CM_SQRT), CM("cmath.sin", CM_SIN), CM("cmath.cos", CM_COS),
    CM("cmath.tan", CM_TAN), CM("cmath.asin", CM_ASIN), CM("cmath.acos", CM_ACOS),
    CM("cmath.atan", CM_ATAN), CM("cmath.sinh", CM_SINH), CM("cmath.cosh", CM_COSH),
    CM("cmath.tanh", CM_TANH), CM("cmath.asinh", CM_ASINH), CM("cmath.acosh", CM_ACOSH),
    CM("cmath.atanh", CM_ATANH), CM("cmath.phase", CM_PHASE), CM("cmath.polar", CM_POLAR),
    CM("cmath.rect", CM_RECT), CM("complex.conjugate", CM_CONJ), CM("numpy.conj", CM_CONJ),
    CM("numpy.conjugate", CM_CONJ), CM("numpy.real", CM_REAL), CM("numpy.imag", CM_IMAG),
    CM("numpy.angle", CM_PHASE),
    /* numpy.log2 of a complex number (sema_complex.c); Python's cmath has no log2, so no
     * path a user can write reaches this name */
    CM("cmath.log2", CM_LOG2),
    {"cmath.isnan", IK_PRED, 0, 0, NULL},
    {"cmath.isinf", IK_PRED, 1, 0, NULL},
    {"cmath.isfinite", IK_PRED, 2, 0, NULL},
    {"cmath.pi", IK_CONST, IC_PI, IF_VALUE, NULL},
    {"cmath.e", IK_CONST, IC_E, IF_VALUE, NULL},
    {"cmath.tau", IK_CONST, IC_TAU, IF_VALUE, NULL},
    {"cmath.inf", IK_CONST, IC_INF, IF_VALUE, NULL},
    {"cmath.nan", IK_CONST, IC_NAN, IF_VALUE, NULL},
    /* math */
    M1("math.sqrt", M_SQRT), M1("math.exp", M_EXP), M1("math.expm1", M_EXPM1),
    {"math.log", IK_LOG, 0, 0, NULL},
    M1("math.log1p", M_LOG1P), M1("math.log2", M_LOG2), M1("math.log10", M_LOG10),
    M1("math.sin", M_SIN), M1("math.cos", M_COS), M1("math.tan", M_TAN),
    M1("math.asin", M_ASIN), M1("math.acos", M_ACOS), M1("math.atan", M_ATAN),
    M1("math.sinh", M_SINH), M1("math.cosh", M_COSH), M1("math.tanh", M_TANH),
    M1("math.asinh", M_ASINH), M1("math.acosh", M_ACOSH), M1("math.atanh", M_ATANH),
    M1("math.erf", M_ERF), M1("math.erfc", M_ERFC), M1("math.gamma", M_GAMMA),
    M1("math.lgamma", M_LGAMMA), M1("math.fabs", M_FABS), M1("math.cbrt", M_CBRT),
    M1("math.exp2", M_EXP2), M1("math.degrees", M_DEGREES), M1("math.radians", M_RADIANS),
    M2("math.pow", M2_POW), M2("math.atan2", M2_ATAN2), M2("math.hypot", M2_HYPOT),
    M2("math.copysign", M2_COPYSIGN), M2("math.fmod", M2_FMOD),
    M2("math.remainder", M2_REMAINDER), M2("math.nextafter", M2_NEXTAFTER),
    {"math.ldexp", IK_LDEXP, 0, 0, NULL},
    {"math.frexp", IK_SPLIT, 0, 0, NULL},
    {"math.modf", IK_SPLIT, 1, 0, NULL},
    {"math.floor", IK_ROUNDING, 0, 0, NULL},
    {"math.ceil", IK_ROUNDING, 1, 0, NULL},
    {"math.trunc", IK_ROUNDING, 2, 0, NULL},
    {"math.isnan", IK_PRED, 0, 0, NULL},
    {"math.isinf", IK_PRED, 1, 0, NULL},
    {"math.isfinite", IK_PRED, 2, 0, NULL},
    {"math.pi", IK_CONST, IC_PI, IF_VALUE, NULL},
    {"math.e", IK_CONST, IC_E, IF_VALUE, NULL},
    {"math.tau", IK_CONST, IC_TAU, IF_VALUE, NULL},
    {"math.inf", IK_CONST, IC_INF, IF_VALUE, NULL},
    {"math.nan", IK_CONST, IC_NAN, IF_VALUE, NULL},
    /* numpy (scalar functions) */
    M1("numpy.sqrt", M_SQRT), M1("numpy.exp", M_EXP), M1("numpy.expm1", M_EXPM1),
    M1("numpy.log", M_LOG), M1("numpy.log1p", M_LOG1P), M1("numpy.log2", M_LOG2),
    M1("numpy.log10", M_LOG10), M1("numpy.sin", M_SIN), M1("numpy.cos", M_COS),
    M1("numpy.tan", M_TAN), M1("numpy.arcsin", M_ASIN), M1("numpy.arccos", M_ACOS),
    M1("numpy.arctan", M_ATAN), M1("numpy.sinh", M_SINH), M1("numpy.cosh", M_COSH),
    M1("numpy.tanh", M_TANH), M1("numpy.arcsinh", M_ASINH), M1("numpy.arccosh", M_ACOSH),
    M1("numpy.arctanh", M_ATANH), M1("numpy.fabs", M_FABS), M1("numpy.cbrt", M_CBRT),
    M1("numpy.exp2", M_EXP2), M1("numpy.rint", M_RINT),
    M1("numpy.degrees", M_DEGREES), M1("numpy.rad2deg", M_DEGREES),
    M1("numpy.radians", M_RADIANS), M1("numpy.deg2rad", M_RADIANS),
    M2("numpy.arctan2", M2_ATAN2), M2("numpy.hypot", M2_HYPOT),
    M2("numpy.copysign", M2_COPYSIGN), M2("numpy.fmod", M2_FMOD),
    M2("numpy.nextafter", M2_NEXTAFTER),
    {"numpy.power", IK_POWER, 0, 0, NULL},
    /* NumPy's arithmetic ufuncs: the operators (on arrays, ufunc_stmt.c's loops) */
    {"numpy.add", IK_BINOP, B_ADD, 0, NULL},
    {"numpy.subtract", IK_BINOP, B_SUB, 0, NULL},
    {"numpy.multiply", IK_BINOP, B_MUL, 0, NULL},
    {"numpy.divide", IK_BINOP, B_DIV, 0, NULL},
    {"numpy.true_divide", IK_BINOP, B_DIV, 0, NULL},
    {"numpy.floor_divide", IK_BINOP, B_FLOORDIV, 0, NULL},
    {"numpy.remainder", IK_BINOP, B_MOD, 0, NULL},
    {"numpy.mod", IK_BINOP, B_MOD, 0, NULL},
    {"numpy.left_shift", IK_BINOP, B_LSHIFT, 0, NULL},
    {"numpy.right_shift", IK_BINOP, B_RSHIFT, 0, NULL},
    {"numpy.bitwise_and", IK_BINOP, B_AND, 0, NULL},
    {"numpy.bitwise_or", IK_BINOP, B_OR, 0, NULL},
    {"numpy.bitwise_xor", IK_BINOP, B_XOR, 0, NULL},
    {"numpy.less", IK_NPCMP, C_LT, 0, NULL},
    {"numpy.less_equal", IK_NPCMP, C_LE, 0, NULL},
    {"numpy.greater", IK_NPCMP, C_GT, 0, NULL},
    {"numpy.greater_equal", IK_NPCMP, C_GE, 0, NULL},
    {"numpy.equal", IK_NPCMP, C_EQ, 0, NULL},
    {"numpy.not_equal", IK_NPCMP, C_NE, 0, NULL},
    {"numpy.invert", IK_NPUFUNC, NU_INVERT, 0, NULL},
    {"numpy.bitwise_not", IK_NPUFUNC, NU_INVERT, 0, NULL},
    {"numpy.logical_not", IK_NPUFUNC, NU_LNOT, 0, NULL},
    {"numpy.logical_and", IK_NPUFUNC, NU_LAND, 0, NULL},
    {"numpy.logical_or", IK_NPUFUNC, NU_LOR, 0, NULL},
    {"numpy.logical_xor", IK_NPUFUNC, NU_LXOR, 0, NULL},
    {"numpy.fmax", IK_NPUFUNC, NU_FMAX, 0, NULL},
    {"numpy.fmin", IK_NPUFUNC, NU_FMIN, 0, NULL},
    /* reductions of a whole array (sema_reduce.c); "array.sum" ... are the methods a.sum()
     * ..., no path a user can write */
    RD("sum", RD_SUM), RD("prod", RD_PROD), RD("mean", RD_MEAN), RD("var", RD_VAR),
    RD("std", RD_STD), RD("min", RD_MIN), RD("max", RD_MAX), RD("all", RD_ALL), RD("any", RD_ANY),
    {"numpy.amin", IK_REDUCE, RD_MIN, 0, NULL}, {"numpy.amax", IK_REDUCE, RD_MAX, 0, NULL},
    {"numpy.nansum", IK_REDUCE, RD_NANSUM, 0, NULL},
    {"numpy.nanprod", IK_REDUCE, RD_NANPROD, 0, NULL},
    {"numpy.nanmean", IK_REDUCE, RD_NANMEAN, 0, NULL},
    {"numpy.nanvar", IK_REDUCE, RD_NANVAR, 0, NULL},
    {"numpy.nanstd", IK_REDUCE, RD_NANSTD, 0, NULL},
    {"numpy.nanmin", IK_REDUCE, RD_NANMIN, 0, NULL},
    {"numpy.nanmax", IK_REDUCE, RD_NANMAX, 0, NULL},
    {"numpy.count_nonzero", IK_REDUCE, RD_COUNT_NONZERO, 0, NULL},
    {"numpy.floor", IK_ROUNDING, 0, IF_NUMPY, NULL},
    {"numpy.ceil", IK_ROUNDING, 1, IF_NUMPY, NULL},
    {"numpy.trunc", IK_ROUNDING, 2, IF_NUMPY, NULL},
    {"numpy.isnan", IK_PRED, 0, 0, NULL},
    {"numpy.isinf", IK_PRED, 1, 0, NULL},
    {"numpy.isfinite", IK_PRED, 2, 0, NULL},
    {"numpy.abs", IK_ABS, 0, 0, NULL},
    {"numpy.absolute", IK_ABS, 0, 0, NULL},
    {"numpy.minimum", IK_NPMINMAX, 0, 0, NULL},
    {"numpy.maximum", IK_NPMINMAX, 1, 0, NULL},
    {"numpy.sign", IK_SIGN, 0, 0, NULL},
    {"numpy.pi", IK_CONST, IC_PI, IF_VALUE, NULL},
    {"numpy.e", IK_CONST, IC_E, IF_VALUE, NULL},
    {"numpy.inf", IK_CONST, IC_INF, IF_VALUE, NULL},
    {"numpy.nan", IK_CONST, IC_NAN, IF_VALUE, NULL},
    DT("numpy.bool_", KILN_BOOL), DT("numpy.int8", KILN_INT8), DT("numpy.int16", KILN_INT16),
    DT("numpy.int32", KILN_INT32), DT("numpy.int64", KILN_INT64),
    DT("numpy.intp", KILN_INT64), DT("numpy.uint8", KILN_UINT8),
    DT("numpy.uint16", KILN_UINT16), DT("numpy.uint32", KILN_UINT32),
    DT("numpy.uint64", KILN_UINT64), DT("numpy.uintp", KILN_UINT64),
    DT("numpy.float16", KILN_FLOAT16), DT("numpy.half", KILN_FLOAT16),
    DT("numpy.float32", KILN_FLOAT32), DT("numpy.float64", KILN_FLOAT64),
    DT("numpy.single", KILN_FLOAT32), DT("numpy.double", KILN_FLOAT64),
    DT("numpy.complex64", KILN_COMPLEX64), DT("numpy.complex128", KILN_COMPLEX128),
    DT("numpy.csingle", KILN_COMPLEX64), DT("numpy.cdouble", KILN_COMPLEX128),
    /* NumPy's C-type names, as on 64-bit Linux (np.intc is np.int32, np.long np.int64) */
    DT("numpy.bool", KILN_BOOL), DT("numpy.byte", KILN_INT8), DT("numpy.ubyte", KILN_UINT8),
    DT("numpy.short", KILN_INT16), DT("numpy.ushort", KILN_UINT16),
    DT("numpy.intc", KILN_INT32), DT("numpy.uintc", KILN_UINT32),
    DT("numpy.int_", KILN_INT64), DT("numpy.uint", KILN_UINT64), DT("numpy.long", KILN_INT64),
    DT("numpy.ulong", KILN_UINT64), DT("numpy.longlong", KILN_INT64),
    DT("numpy.ulonglong", KILN_UINT64),
    /* kiln: types */
    DT("kiln.bool_", KILN_BOOL), DT("kiln.boolean", KILN_BOOL), DT("kiln.int8", KILN_INT8),
    DT("kiln.int16", KILN_INT16), DT("kiln.int32", KILN_INT32), DT("kiln.int64", KILN_INT64),
    DT("kiln.intp", KILN_INT64), DT("kiln.uint8", KILN_UINT8), DT("kiln.uint16", KILN_UINT16),
    DT("kiln.uint32", KILN_UINT32), DT("kiln.uint64", KILN_UINT64),
    DT("kiln.float16", KILN_FLOAT16), DT("kiln.f2", KILN_FLOAT16), DT("kiln.half", KILN_FLOAT16),
    DT("kiln.float32", KILN_FLOAT32), DT("kiln.float64", KILN_FLOAT64),
    DT("kiln.double", KILN_FLOAT64), DT("kiln.f4", KILN_FLOAT32), DT("kiln.f8", KILN_FLOAT64),
    DT("kiln.i4", KILN_INT32), DT("kiln.i8", KILN_INT64), DT("kiln.u4", KILN_UINT32),
    DT("kiln.u8", KILN_UINT64), DT("kiln.complex64", KILN_COMPLEX64),
    DT("kiln.complex128", KILN_COMPLEX128), DT("kiln.c8", KILN_COMPLEX64),
    DT("kiln.c16", KILN_COMPLEX128), DT("kiln.bfloat16", KILN_BFLOAT16),
    /* kiln: SIMT */
    {"kiln.threadIdx", IK_DIM3, 0, IF_VALUE, NULL},
    {"kiln.blockIdx", IK_DIM3, 1, IF_VALUE, NULL},
    {"kiln.blockDim", IK_DIM3, 2, IF_VALUE, NULL},
    {"kiln.gridDim", IK_DIM3, 3, IF_VALUE, NULL},
    SREG("kiln.threadIdx.x", 0), SREG("kiln.threadIdx.y", 1), SREG("kiln.threadIdx.z", 2),
    SREG("kiln.blockIdx.x", 3), SREG("kiln.blockIdx.y", 4), SREG("kiln.blockIdx.z", 5),
    SREG("kiln.blockDim.x", 6), SREG("kiln.blockDim.y", 7), SREG("kiln.blockDim.z", 8),
    SREG("kiln.gridDim.x", 9), SREG("kiln.gridDim.y", 10), SREG("kiln.gridDim.z", 11),
    {"kiln.warpsize", IK_WARPSIZE, 0, IF_VALUE, NULL},
    {"kiln.laneid", IK_LANEID, 0, IF_VALUE, NULL},
    {"kiln.grid", IK_GRID, 0, 0, "ndim"},
    {"kiln.gridsize", IK_GRIDSIZE, 0, 0, "ndim"},
    {"kiln.syncthreads", IK_SYNCTHREADS, 0, 0, NULL},
    {"kiln.syncwarp", IK_SYNCTHREADS, 1, 0, "mask"},
    {"kiln.syncthreads_and", IK_SYNCTHREADS, IY_AND, 0, "predicate"},
    {"kiln.syncthreads_or", IK_SYNCTHREADS, IY_OR, 0, "predicate"},
    {"kiln.syncthreads_count", IK_SYNCTHREADS, IY_COUNT, 0, "predicate"},
    /* Numba's cuda.cg: the grid group and its method g.sync() (sema_expr.c) */
    {"kiln.cg.this_grid", IK_CG, IG_THIS_GRID, 0, NULL},
    {"kiln.cg.grid_group.sync", IK_CG, IG_SYNC, 0, NULL},
    {"kiln.threadfence", IK_THREADFENCE, 0, 0, NULL},
    {"kiln.threadfence_block", IK_THREADFENCE, 1, 0, NULL},
    {"kiln.threadfence_system", IK_THREADFENCE, 2, 0, NULL},
    {"kiln.shared.array", IK_SHARED_ARRAY, 0, 0, "shape,dtype,alignment"},
    {"kiln.local.array", IK_LOCAL_ARRAY, 0, 0, "shape,dtype,alignment"},
    {"kiln.ldca", IK_CACHE, CH_LDCA, 0, "array,i"},
    {"kiln.ldcg", IK_CACHE, CH_LDCG, 0, "array,i"},
    {"kiln.ldcs", IK_CACHE, CH_LDCS, 0, "array,i"},
    {"kiln.ldlu", IK_CACHE, CH_LDLU, 0, "array,i"},
    {"kiln.ldcv", IK_CACHE, CH_LDCV, 0, "array,i"},
    {"kiln.stcg", IK_CACHE, CH_STCG, 0, "array,i,value"},
    {"kiln.stcs", IK_CACHE, CH_STCS, 0, "array,i,value"},
    {"kiln.stwb", IK_CACHE, CH_STWB, 0, "array,i,value"},
    {"kiln.stwt", IK_CACHE, CH_STWT, 0, "array,i,value"},
    {"kiln.atomic.add", IK_ATOMIC, IA_ADD, 0, "ary,idx,val"},
    {"kiln.atomic.sub", IK_ATOMIC, IA_SUB, 0, "ary,idx,val"},
    {"kiln.atomic.max", IK_ATOMIC, IA_MAX, 0, "ary,idx,val"},
    {"kiln.atomic.min", IK_ATOMIC, IA_MIN, 0, "ary,idx,val"},
    {"kiln.atomic.nanmax", IK_ATOMIC, IA_NANMAX, 0, "ary,idx,val"},
    {"kiln.atomic.nanmin", IK_ATOMIC, IA_NANMIN, 0, "ary,idx,val"},
    {"kiln.atomic.exch", IK_ATOMIC, IA_EXCH, 0, "ary,idx,val"},
    {"kiln.atomic.compare_and_swap", IK_ATOMIC, IA_CAS, 0, NULL},
    {"kiln.atomic.cas", IK_ATOMIC, IA_CAS, 0, NULL},
    {"kiln.atomic.and_", IK_ATOMIC, IA_AND, 0, "ary,idx,val"},
    {"kiln.atomic.or_", IK_ATOMIC, IA_OR, 0, "ary,idx,val"},
    {"kiln.atomic.xor", IK_ATOMIC, IA_XOR, 0, "ary,idx,val"},
    {"kiln.atomic.inc", IK_ATOMIC, IA_INC, 0, "ary,idx,val"},
    {"kiln.atomic.dec", IK_ATOMIC, IA_DEC, 0, "ary,idx,val"},
    {"kiln.shfl_sync", IK_SHFL, IS_IDX, 0, NULL},
    {"kiln.shfl_down_sync", IK_SHFL, IS_DOWN, 0, NULL},
    {"kiln.shfl_up_sync", IK_SHFL, IS_UP, 0, NULL},
    {"kiln.shfl_xor_sync", IK_SHFL, IS_XOR, 0, NULL},
    {"kiln.ballot_sync", IK_VOTE, 0, 0, NULL},
    {"kiln.all_sync", IK_VOTE, 1, 0, NULL},
    {"kiln.any_sync", IK_VOTE, 2, 0, NULL},
    {"kiln.eq_sync", IK_VOTE, 3, 0, NULL},
    {"kiln.const.array_like", IK_CONST_ARRAY, 0, 0, "ary"},
    /* the method a.reshape(...) of an array (sema_expr.c); no path a user can write */
    {"array.reshape", IK_RESHAPE, 0, 0, NULL},
    {"array.copy", IK_ARRAY_COPY, 0, 0, NULL},
    {"namedtuple.make", IK_NAMEDTUPLE, 0, 0, NULL},
    {"array.view", IK_VIEW, 0, 0, NULL}, /* a.view(dtype) (array_view.c) */
    {"kiln.activemask", IK_ACTIVEMASK, 0, 0, NULL},
    {"kiln.lanemask_lt", IK_ACTIVEMASK, 1, 0, NULL},
    {"kiln.match_any_sync", IK_MATCH, 0, 0, NULL},
    {"kiln.match_all_sync", IK_MATCH, 1, 0, NULL},
    /* kiln: Numba's other device functions */
    M1("kiln.cbrt", M_CBRT),
    {"kiln.fma", IK_FMA, 0, 0, NULL},
    {"kiln.popc", IK_BITS, IB_POPC, 0, NULL},
    {"kiln.brev", IK_BITS, IB_BREV, 0, NULL},
    {"kiln.clz", IK_BITS, IB_CLZ, 0, NULL},
    {"kiln.ffs", IK_BITS, IB_FFS, 0, NULL},
    /* the method x.bit_count() of an integer (sema_expr.c); no path a user can write */
    {"int.bit_count", IK_BITS, IB_BITCOUNT, 0, NULL},
    {"kiln.selp", IK_SELP, 0, 0, NULL},
    /* a cffi.FFI object in a kernel is the namespace "cffi" (_compile.describe) */
    {"cffi.from_buffer", IK_FROM_BUFFER, 0, 0, NULL},
    /* the operator module's binary operators (Numba's kernels pass them as values) */
    OP("add", B_ADD), OP("sub", B_SUB), OP("mul", B_MUL), OP("truediv", B_DIV),
    OP("floordiv", B_FLOORDIV), OP("mod", B_MOD), OP("pow", B_POW), OP("lshift", B_LSHIFT),
    OP("rshift", B_RSHIFT), OP("and_", B_AND), OP("or_", B_OR), OP("xor", B_XOR),
    OP("iadd", B_ADD), OP("isub", B_SUB), OP("imul", B_MUL), OP("itruediv", B_DIV),
    OP("ifloordiv", B_FLOORDIV), OP("imod", B_MOD), OP("ipow", B_POW),
    /* kiln.fp16: Numba's cuda.fp16 */
    H("hadd", IH_ADD), H("hsub", IH_SUB), H("hmul", IH_MUL), H("hdiv", IH_DIV),
    H("hmax", IH_MAX), H("hmin", IH_MIN), H("heq", IH_EQ), H("hne", IH_NE), H("hgt", IH_GT),
    H("hge", IH_GE), H("hlt", IH_LT), H("hle", IH_LE), H("hfma", IH_FMA), H("hneg", IH_NEG),
    H("habs", IH_ABS), H("hsin", IH_SIN), H("hcos", IH_COS), H("hlog", IH_LOG),
    H("hlog2", IH_LOG2), H("hlog10", IH_LOG10), H("hexp", IH_EXP), H("hexp2", IH_EXP2),
    H("hexp10", IH_EXP10), H("hsqrt", IH_SQRT), H("hrsqrt", IH_RSQRT), H("hceil", IH_CEIL),
    H("hfloor", IH_FLOOR), H("hrcp", IH_RCP), H("htrunc", IH_TRUNC), H("hrint", IH_RINT),
    /* kiln.bf16: Numba's cuda.bf16 (and cuda._internal.cuda_bf16, the same names) */
    B("habs", IBF_ABS), B("hadd", IBF_ADD), B("hsub", IBF_SUB), B("hmul", IBF_MUL),
    B("hadd_rn", IBF_ADD), B("hsub_rn", IBF_SUB), B("hmul_rn", IBF_MUL), B("hdiv", IBF_DIV),
    B("hadd_sat", IBF_ADD_SAT), B("hsub_sat", IBF_SUB_SAT), B("hmul_sat", IBF_MUL_SAT),
    B("hfma", IBF_FMA), B("hfma_sat", IBF_FMA_SAT), B("hfma_relu", IBF_FMA_RELU),
    B("hneg", IBF_NEG), B("heq", IBF_EQ), B("hne", IBF_NE), B("hge", IBF_GE),
    B("hgt", IBF_GT), B("hle", IBF_LE), B("hlt", IBF_LT), B("hmax", IBF_MAX),
    B("hmin", IBF_MIN), B("hmax_nan", IBF_MAX_NAN), B("hmin_nan", IBF_MIN_NAN),
    B("hisnan", IBF_ISNAN), B("hisinf", IBF_ISINF), B("htrunc", IBF_TRUNC),
    B("hceil", IBF_CEIL), B("hfloor", IBF_FLOOR), B("hrint", IBF_RINT), B("hsqrt", IBF_SQRT),
    B("hrsqrt", IBF_RSQRT), B("hrcp", IBF_RCP), B("hlog", IBF_LOG), B("hlog2", IBF_LOG2),
    B("hlog10", IBF_LOG10), B("hcos", IBF_COS), B("hsin", IBF_SIN), B("hexp", IBF_EXP),
    B("hexp2", IBF_EXP2), B("hexp10", IBF_EXP10), B("htanh", IBF_TANH),
    B("htanh_approx", IBF_TANH), B("bfloat16_as_int16", IBF_AS_I16),
    B("bfloat16_as_uint16", IBF_AS_U16), B("int16_as_bfloat16", IBF_I16_AS),
    B("uint16_as_bfloat16", IBF_U16_AS),
    BC("bfloat16_to_float32", 0, 0, KILN_FLOAT32), BC("float32_to_bfloat16", 1, 0, KILN_FLOAT32),
    BC("float64_to_bfloat16", 1, 0, KILN_FLOAT64),
    BC("bfloat16_to_int8_rz", 0, 1, KILN_INT8), BC("bfloat16_to_uint8_rz", 0, 1, KILN_UINT8),
    BT4("float32", KILN_FLOAT32), BT4("int16", KILN_INT16), BF4("int16", KILN_INT16),
    BT4("uint16", KILN_UINT16), BF4("uint16", KILN_UINT16),
    BT4("int32", KILN_INT32), BF4("int32", KILN_INT32),
    BT4("uint32", KILN_UINT32), BF4("uint32", KILN_UINT32),
    BT4("int64", KILN_INT64), BF4("int64", KILN_INT64),
    BT4("uint64", KILN_UINT64), BF4("uint64", KILN_UINT64),
};

const Intrinsic *intrinsic_lookup(const char *name) {
    for (size_t i = 0; i < COUNTOF(table); i++)
        if (table[i].name[0] == name[0] && strcmp(table[i].name, name) == 0) return &table[i];
    const Intrinsic *v = vector_lookup(name);
    return v ? v : libdevice_lookup(name);
}
