/* emit_complex.c: complex operations as calls of rt_complex.h.
 *
 * C has no complex type both GCC, tcc (tier 0) and NVRTC read, so a complex
 * value is the runtime's struct (c64, c128) and every operation on one is a
 * call: kiln_<op>_<type>.  emit_expr.c writes the operands, converted to the
 * operation's type, and hands their text here; nothing here writes an
 * expression node, so expressions keep recursing in emit_expr.c alone.
 */
#include "emit_int.h"

const char *emit_cname(Emit *E, const Type *t) {
    E->uses_complex = true;
    return !t->weak && t->dtype == KILN_COMPLEX64 ? "c64" : "c128";
}

void emit_complex_binop(Emit *E, BinOp op, const Type *t, const char *l, const char *r) {
    static const char *const fn[] = {[B_ADD] = "add", [B_SUB] = "sub", [B_MUL] = "mul",
                                     [B_DIV] = "div", [B_POW] = "pow"};
    ASSERT(op <= B_POW && fn[op]); /* sema allows no other */
    P("kiln_%s_%s(%s, %s)", fn[op], emit_cname(E, t), l, r);
}

void emit_complex_const(Emit *E, const Type *t, double re, double im) {
    ConstVal r, i;
    r.f = re;
    i.f = im;
    const Type *part = ty_complex_part(t);
    P("kiln_%s(", emit_cname(E, t));
    emit_const(E, part, r);
    PS(", ");
    emit_const(E, part, i);
    PS(")");
}

void emit_complex_neg(Emit *E, const Type *t, const char *x) {
    P("kiln_neg_%s(%s)", emit_cname(E, t), x);
}

void emit_complex_call(Emit *E, Node *n, const char **args) {
    const Intrinsic *in = n->intr;
    const Type *ot = n->opty;
    switch ((IntrKind)in->kind) {
    case IK_COMPLEX:
        if (ot->kind == TY_COMPLEX) { /* complex(z) */
            PS(args[0]);
            return;
        }
        P("kiln_%s(%s, %s)", emit_cname(E, n->ty), args[0] ? args[0] : "0",
          args[1] ? args[1] : "0");
        return;
    case IK_ABS: P("kiln_abs_%s(%s)", emit_cname(E, ot), args[0]); return;
    case IK_PRED: {
        static const char *const f[] = {"isnan", "isinf", "isfinite"};
        P("kiln_%s_%s(%s)", f[in->sub], emit_cname(E, ot), args[0]);
        return;
    }
    case IK_CMATH: break;
    default: UNREACHABLE();
    }
    bool cx = ot->kind == TY_COMPLEX;
    const char *c = cx ? emit_cname(E, ot) : NULL;
    switch (in->sub) {
    case CM_LOG:
        if (args[1]) { /* cmath.log(z, base) */
            P("kiln_clogb_%s(%s, %s)", c, args[0], args[1]);
            return;
        }
        P("kiln_clog_%s(%s)", c, args[0]);
        return;
    case CM_PHASE: P("kiln_phase_%s(%s)", c, args[0]); return;
    case CM_POLAR: {
        /* (abs(z), phase(z)) of z evaluated once */
        int k = E->tmp++;
        emit_sx_open(E, n->ty);
        P("%s t%d = %s; ", c, k, args[0]);
        emit_sx_close(E, arena_printf(&E->C->arena, "%s(kiln_abs_%s(t%d), kiln_phase_%s(t%d))",
                                      emit_tuple_make(E, n->ty), c, k, c, k));
        return;
    }
    case CM_RECT: P("kiln_rect_%s(%s, %s)", emit_cname(E, n->ty), args[0], args[1]); return;
    case CM_CONJ:
        if (cx) P("kiln_conj_%s(%s)", c, args[0]);
        else PS(args[0]); /* a real number is its own conjugate */
        return;
    case CM_REAL:
    case CM_IMAG:
        if (cx) {
            P("(%s).%s", args[0], in->sub == CM_REAL ? "re" : "im");
        } else if (in->sub == CM_REAL) {
            PS(args[0]);
        } else {
            ConstVal z;
            z.u = 0;
            emit_const(E, n->ty, z);
        }
        return;
    default:
        ASSERT(in->sub < CM_NFUNC);
        P("kiln_c%s_%s(%s)", cmath_names[in->sub], c, args[0]);
        return;
    }
}
