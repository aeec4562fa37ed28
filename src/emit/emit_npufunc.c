/* emit_npufunc.c: NumPy's ufuncs without a Python operator (sema_npufunc.c), and the
 * ufuncs that order complex numbers.
 *
 * Operands are written converted to the operation's type (n->opty); the logical
 * ufuncs combine the operands' truth values with & | ^ on 0/1 values, so that both
 * operands are evaluated, as a ufunc's arguments are.  Complex order, maximum/minimum
 * and fmax/fmin are rt_complex.h's kiln_clt/cle/npmax/npmin/fmax/fmin.
 */
#include "emit_int.h"

static void two(Emit *E, const char *fn, Node *x, Node *y, const Type *t) {
    P("%s(", fn);
    emit_expr_as(E, x, t);
    PS(", ");
    emit_expr_as(E, y, t);
    PS(")");
}

static void logical(Emit *E, Node *n) {
    static const char *const op[] = {[NU_LAND] = " & ", [NU_LOR] = " | ", [NU_LXOR] = " ^ "};
    Node **a = n->call.bound.v;
    PS("((kbool)(");
    if (n->intr->sub == NU_LNOT) {
        PS("!");
        emit_truthy(E, a[0]);
    } else {
        emit_truthy(E, a[0]);
        PS(op[n->intr->sub]);
        emit_truthy(E, a[1]);
    }
    PS("))");
}

bool emit_npufunc(Emit *E, Node *n) {
    const Intrinsic *in = n->intr;
    Node **a = n->call.bound.v;
    const Type *ot = n->opty;
    switch ((IntrKind)in->kind) {
    case IK_NPCMP: {
        if (n->call.bound.n != 2) return false; /* the comparison sema made */
        /* a > b is b < a, in NumPy's complex order */
        bool swap = in->sub == C_GT || in->sub == C_GE;
        bool le = in->sub == C_LE || in->sub == C_GE;
        const char *fn = arena_printf(&E->C->arena, "kiln_c%s_%s", le ? "le" : "lt",
                                      emit_cname(E, ot));
        two(E, fn, swap ? a[1] : a[0], swap ? a[0] : a[1], ot);
        return true;
    }
    case IK_NPMINMAX:
        if (ot->kind != TY_COMPLEX) return false;
        two(E, arena_printf(&E->C->arena, "kiln_np%s_%s", in->sub ? "max" : "min", emit_cname(E, ot)),
            a[0], a[1], ot);
        return true;
    case IK_NPUFUNC: break;
    default: return false;
    }
    switch ((NpUfunc)in->sub) {
    case NU_INVERT:
        if (ot->kind == TY_BOOL) {
            PS("((kbool)!");
            emit_expr_as(E, a[0], ot);
            PS(")");
        } else {
            P("((%s)~", emit_ctype(E, ot));
            emit_expr_as(E, a[0], ot);
            PS(")");
        }
        return true;
    case NU_LNOT:
    case NU_LAND:
    case NU_LOR:
    case NU_LXOR: logical(E, n); return true;
    case NU_FMAX:
    case NU_FMIN: {
        bool mx = in->sub == NU_FMAX;
        const char *fn;
        if (ot->kind == TY_COMPLEX)
            fn = arena_printf(&E->C->arena, "kiln_f%s_%s", mx ? "max" : "min", emit_cname(E, ot));
        else if (ot->kind == TY_FLOAT && E->cuda) /* C's fmax/fmin: a NaN operand loses */
            fn = arena_printf(&E->C->arena, "f%s%s", mx ? "max" : "min", emit_is_f32(ot) ? "f" : "");
        else if (ot->kind == TY_FLOAT) /* the same, -0.0 below 0.0 on every tier (rt_common.h):
                                        * glibc's and gcc's inlined fmin pick other zeros */
            fn = arena_printf(&E->C->arena, "kiln_%s_%s", mx ? "max" : "min",
                              emit_is_f32(ot) ? "f32" : "f64");
        else
            fn = arena_printf(&E->C->arena, "kiln_%s_%s", mx ? "max" : "min", emit_ctype(E, ot));
        /* float16 is float32 inside expressions: the larger of two float16 values is one */
        two(E, fn, a[0], a[1], ty_strong(ot)->kind == TY_FLOAT ? ty_strong(ot) : ot);
        return true;
    }
    }
    UNREACHABLE();
}
