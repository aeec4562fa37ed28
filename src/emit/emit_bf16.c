/* emit_bf16.c: calls of kiln.bf16's functions (Numba's cuda.bf16), in terms of
 * rt_half.h's bfloat16 functions.
 *
 * The operands come as text that emit_expr.c wrote, converted to the parameter type
 * sema_bf16.c chose (a bfloat16 operand is a f32 that holds a bfloat16 value, as
 * emit_complex.c takes its operands); each arithmetic result
 * is computed in float32, or for the fmas in float64, where a * b is exact, and
 * rounded to bfloat16 once (kiln_br, kiln_brd), as CUDA's __hadd & co. round the
 * exact result.  The _rn forms are the same as the plain ones: kiln never
 * contracts a bfloat16 a * b + c into an fma.
 */
#include "emit_int.h"

/* NAME_to_bfloat16_MODE and bfloat16_to_NAME_MODE */
static void convert(Emit *E, Node *n, const char *a) {
    int sub = n->intr->sub, mode = BF16CVT_MODE(sub);
    kiln_dtype d = BF16CVT_DTYPE(sub);
    const Type *dt = ty_scalar(d);
    if (BF16CVT_TO(sub)) {
        if (d == KILN_FLOAT32 || d == KILN_FLOAT64) P("kiln_b2f(kiln_%c2b_m(", d == KILN_FLOAT32 ? 'f' : 'd');
        else P("kiln_b2f(kiln_%c2b_m(", ty_is_signed(dt) ? 'i' : 'u');
        P("%s, %d))", a, mode);
        return;
    }
    if (d == KILN_FLOAT32) { /* exact */
        P("(%s)", a);
        return;
    }
    const char *ct = emit_scalar_ctype(dt);
    int bits = ty_bits(dt);
    if (ty_is_signed(dt)) {
        P("((%s)kiln_b2i(%s", ct, a);
        if (bits == 64) P(", %d, (-9223372036854775807LL - 1), 9223372036854775807LL))", mode);
        else P(", %d, %lldLL, %lldLL))", mode, -(1LL << (bits - 1)), (1LL << (bits - 1)) - 1);
    } else {
        P("((%s)kiln_b2u(%s", ct, a);
        if (bits == 64) P(", %d, 18446744073709551615ULL))", mode);
        else P(", %d, %lluULL))", mode, (1ULL << bits) - 1);
    }
}

void emit_bf16_call(Emit *E, Node *n, const char **a) {
    static const char *const op[] = {" + ", " - ", " * ", " / "};
    static const char *const cmp[] = {" == ", " != ", " > ", " >= ", " < ", " <= "};
    static const char *const fn1[] = {"sinf", "cosf", "tanhf", "logf", "log2f", "log10f",
                                      "expf", "exp2f", "kiln_exp10h", "sqrtf", "kiln_rsqrth",
                                      "ceilf", "floorf", "", "truncf", "rintf"};
    E->half = true;
    if (n->intr->kind == IK_BF16CVT) {
        convert(E, n, a[0]);
        return;
    }
    int sub = n->intr->sub;
    switch (sub) {
    case IBF_ADD: case IBF_SUB: case IBF_MUL: case IBF_DIV:
    case IBF_ADD_SAT: case IBF_SUB_SAT: case IBF_MUL_SAT: {
        bool sat = sub >= IBF_ADD_SAT;
        P(sat ? "kiln_bsat(kiln_br(%s%s%s))" : "kiln_br(%s%s%s)", a[0],
          op[sat ? sub - IBF_ADD_SAT : sub], a[1]);
        return;
    }
    case IBF_MAX: case IBF_MIN: case IBF_MAX_NAN: case IBF_MIN_NAN: {
        static const char *const mm[] = {"kiln_hmax0(", "kiln_hmin0(", "kiln_bmax_nan(",
                                         "kiln_bmin_nan("};
        P("%s%s, %s)", mm[sub - IBF_MAX], a[0], a[1]);
        return;
    }
    case IBF_EQ: case IBF_NE: case IBF_GT: case IBF_GE: case IBF_LT: case IBF_LE:
        P("(%s%s%s)", a[0], cmp[sub - IBF_EQ], a[1]);
        return;
    case IBF_FMA: case IBF_FMA_SAT: case IBF_FMA_RELU:
        P("%s(kiln_brd((f64)%s * (f64)%s + (f64)%s))",
          sub == IBF_FMA ? "" : sub == IBF_FMA_SAT ? "kiln_bsat" : "kiln_brelu", a[0], a[1], a[2]);
        return;
    case IBF_NEG: case IBF_ABS:
        P(sub == IBF_NEG ? "(-%s)" : "fabsf(%s)", a[0]);
        return;
    case IBF_ISNAN: case IBF_ISINF:
        P(sub == IBF_ISNAN ? "kiln_bisnan(%s)" : "kiln_bisinf(%s)", a[0]);
        return;
    case IBF_AS_I16: case IBF_AS_U16:
        P("((%s)kiln_f2b(%s))", sub == IBF_AS_I16 ? "i16" : "u16", a[0]);
        return;
    case IBF_I16_AS: case IBF_U16_AS:
        P("kiln_b2f((kh16)%s)", a[0]);
        return;
    case IBF_RCP:
        P("kiln_br(1.0f / %s)", a[0]);
        return;
    default:
        P("kiln_br(%s(%s))", fn1[sub - IBF_SIN], a[0]);
        return;
    }
}
