/* emit_bf16.c: calls of kiln.bf16's functions (Numba's cuda.bf16), in terms of
 * rt_half.h's bfloat16 functions.
 *
 * A bfloat16 operand is a f32 that holds a bfloat16 value (emit_expr_as converts
 * each argument to the parameter type sema_bf16.c chose); each arithmetic result
 * is computed in float32, or for the fmas in float64, where a * b is exact, and
 * rounded to bfloat16 once (kiln_br, kiln_brd), as CUDA's __hadd & co. round the
 * exact result.  The _rn forms are the same as the plain ones: kiln never
 * contracts a bfloat16 a * b + c into an fma.
 */
#include "emit_int.h"

/* NAME_to_bfloat16_MODE and bfloat16_to_NAME_MODE */
static void convert(Emit *E, Node *n) {
    int sub = n->intr->sub, mode = BF16CVT_MODE(sub);
    kiln_dtype d = BF16CVT_DTYPE(sub);
    const Type *dt = ty_scalar(d);
    Node *a = n->call.bound.v[0];
    if (BF16CVT_TO(sub)) {
        if (d == KILN_FLOAT32 || d == KILN_FLOAT64) P("kiln_b2f(kiln_%c2b_m(", d == KILN_FLOAT32 ? 'f' : 'd');
        else P("kiln_b2f(kiln_%c2b_m(", ty_is_signed(dt) ? 'i' : 'u');
        emit_expr_as(E, a, dt);
        P(", %d))", mode);
        return;
    }
    const Type *bf = ty_scalar(KILN_BFLOAT16);
    if (d == KILN_FLOAT32) { /* exact */
        emit_expr_as(E, a, bf);
        return;
    }
    const char *ct = emit_scalar_ctype(dt);
    int bits = ty_bits(dt);
    if (ty_is_signed(dt)) {
        P("((%s)kiln_b2i(", ct);
        emit_expr_as(E, a, bf);
        if (bits == 64) P(", %d, (-9223372036854775807LL - 1), 9223372036854775807LL))", mode);
        else P(", %d, %lldLL, %lldLL))", mode, -(1LL << (bits - 1)), (1LL << (bits - 1)) - 1);
    } else {
        P("((%s)kiln_b2u(", ct);
        emit_expr_as(E, a, bf);
        if (bits == 64) P(", %d, 18446744073709551615ULL))", mode);
        else P(", %d, %lluULL))", mode, (1ULL << bits) - 1);
    }
}

static void args(Emit *E, Node **a, int n, const Type *t, const char *sep) {
    for (int i = 0; i < n; i++) {
        if (i) PS(sep);
        emit_expr_as(E, a[i], t);
    }
}

void emit_bf16_call(Emit *E, Node *n) {
    static const char *const op[] = {" + ", " - ", " * ", " / "};
    static const char *const cmp[] = {" == ", " != ", " > ", " >= ", " < ", " <= "};
    static const char *const fn1[] = {"sinf", "cosf", "tanhf", "logf", "log2f", "log10f",
                                      "expf", "exp2f", "kiln_exp10h", "sqrtf", "kiln_rsqrth",
                                      "ceilf", "floorf", "", "truncf", "rintf"};
    E->half = true;
    if (n->intr->kind == IK_BF16CVT) {
        convert(E, n);
        return;
    }
    const Type *bf = ty_scalar(KILN_BFLOAT16);
    Node **a = n->call.bound.v;
    int sub = n->intr->sub;
    switch (sub) {
    case IBF_ADD: case IBF_SUB: case IBF_MUL: case IBF_DIV:
    case IBF_ADD_SAT: case IBF_SUB_SAT: case IBF_MUL_SAT: {
        bool sat = sub >= IBF_ADD_SAT;
        PS(sat ? "kiln_bsat(kiln_br(" : "kiln_br(");
        args(E, a, 2, bf, op[sat ? sub - IBF_ADD_SAT : sub]);
        PS(sat ? "))" : ")");
        return;
    }
    case IBF_MAX: case IBF_MIN: case IBF_MAX_NAN: case IBF_MIN_NAN: {
        static const char *const mm[] = {"fmaxf(", "fminf(", "kiln_bmax_nan(", "kiln_bmin_nan("};
        PS(mm[sub - IBF_MAX]);
        args(E, a, 2, bf, ", ");
        PS(")");
        return;
    }
    case IBF_EQ: case IBF_NE: case IBF_GT: case IBF_GE: case IBF_LT: case IBF_LE:
        PS("(");
        args(E, a, 2, bf, cmp[sub - IBF_EQ]);
        PS(")");
        return;
    case IBF_FMA: case IBF_FMA_SAT: case IBF_FMA_RELU:
        PS(sub == IBF_FMA ? "kiln_brd((f64)" : sub == IBF_FMA_SAT ? "kiln_bsat(kiln_brd((f64)"
                                                                  : "kiln_brelu(kiln_brd((f64)");
        emit_expr_as(E, a[0], bf);
        PS(" * (f64)");
        emit_expr_as(E, a[1], bf);
        PS(" + (f64)");
        emit_expr_as(E, a[2], bf);
        PS(sub == IBF_FMA ? ")" : "))");
        return;
    case IBF_NEG: case IBF_ABS:
        PS(sub == IBF_NEG ? "(-" : "fabsf(");
        emit_expr_as(E, a[0], bf);
        PS(")");
        return;
    case IBF_ISNAN: case IBF_ISINF:
        PS(sub == IBF_ISNAN ? "kiln_bisnan(" : "kiln_bisinf(");
        emit_expr_as(E, a[0], bf);
        PS(")");
        return;
    case IBF_AS_I16: case IBF_AS_U16:
        P("((%s)kiln_f2b(", sub == IBF_AS_I16 ? "i16" : "u16");
        emit_expr_as(E, a[0], bf);
        PS("))");
        return;
    case IBF_I16_AS: case IBF_U16_AS:
        PS("kiln_b2f((kh16)");
        emit_expr_as(E, a[0], ty_scalar(sub == IBF_I16_AS ? KILN_INT16 : KILN_UINT16));
        PS(")");
        return;
    case IBF_RCP:
        PS("kiln_br(1.0f / ");
        emit_expr_as(E, a[0], bf);
        PS(")");
        return;
    default:
        P("kiln_br(%s(", fn1[sub - IBF_SIN]);
        emit_expr_as(E, a[0], bf);
        PS("))");
        return;
    }
}
