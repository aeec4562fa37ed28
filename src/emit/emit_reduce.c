/* emit_reduce.c: NumPy's reductions of a whole array (src/sema/sema_reduce.c).
 *
 * The call becomes a statement expression (emit_sx_open) that loops over every element
 * of the array, outermost axis first, in the calling thread:
 *
 *     ({ KA a = ARRAY; ACC s = INIT; i64 n = 0;
 *        for (i64 q0 ...) for (i64 q1 ...) { ELEM v = a.data[q0 * a.strides[0] + ...]; STEP }
 *        RESULT })
 *
 * var and std take a second pass over the elements, around the mean, as NumPy computes
 * them.  A scalar (NumPy reduces one as a 0-d array) is a loop of one element.  min and
 * max of an empty array record NumPy's ValueError (KILN_ERR_EMPTY_REDUCE)
 * and give 0: the launch raises it.
 */
#include "emit_int.h"

/* Opens the loops over every element of array a (ndim nd) and sets v to the element,
 * as type vt; close with close_loops. */
static void open_loops(Emit *E, const Type *at, const char *a, int id, const char *v,
                       const Type *vt) {
    if (at->kind != TY_ARRAY) { /* a scalar, NumPy's 0-d array: a loop of one element */
        P("for (int q%d_s = 0; q%d_s < 1; q%d_s++) { %s %s = ", id, id, id, emit_ctype(E, vt), v);
        emit_convert(E, at, vt, a);
        PS("; ");
        return;
    }
    for (int d = 0; d < at->ndim; d++)
        P("for (i64 q%d_%d = 0; q%d_%d < %s.shape[%d]; q%d_%d++) ", id, d, id, d, a, d, id, d);
    Buf off;
    buf_init_arena(&off, &E->C->arena);
    for (int d = 0; d < at->ndim; d++)
        buf_printf(&off, "%sq%d_%d * %s.strides[%d]", d ? " + " : "", id, d, a, d);
    P("{ %s %s = ", emit_ctype(E, vt), v);
    emit_convert(E, at->elem, vt,
                 emit_load(E, at->elem, arena_printf(&E->C->arena, "%s.data[%s]", a, off.p)));
    PS("; ");
}

static const char *isnan_of(Emit *E, const Type *t, const char *v) {
    if (t->kind == TY_COMPLEX) return arena_printf(&E->C->arena, "kiln_isnan_%s(%s)", emit_cname(E, t), v);
    if (t->kind == TY_FLOAT) return arena_printf(&E->C->arena, "(%s != %s)", v, v);
    return "0";
}

static const char *truthy(Emit *E, const Type *t, const char *v) {
    if (t->kind == TY_COMPLEX) return arena_printf(&E->C->arena, "kiln_nz_%s(%s)", emit_cname(E, t), v);
    return arena_printf(&E->C->arena, "(%s != 0)", v);
}

/* acc = acc OP v in type t */
static const char *combine(Emit *E, const Type *t, bool mul, const char *acc, const char *v) {
    if (t->kind == TY_COMPLEX)
        return arena_printf(&E->C->arena, "kiln_%s_%s(%s, %s)", mul ? "mul" : "add",
                            emit_cname(E, t), acc, v);
    return arena_printf(&E->C->arena, "(%s)(%s %s %s)", emit_ctype(E, t), acc, mul ? "*" : "+", v);
}

static const char *number(Emit *E, const Type *t, int k) {
    if (t->kind == TY_COMPLEX) return arena_printf(&E->C->arena, "kiln_%s(%d, 0)", emit_cname(E, t), k);
    return arena_printf(&E->C->arena, "((%s)%d)", emit_ctype(E, t), k);
}

/* the sum (prod) of the elements, NaNs skipped with nan: into s, their count into c */
static void sum_pass(Emit *E, const Type *at, const char *a, int id, const Type *t, bool mul,
                     bool nan, const char *s, const char *c) {
    P("%s %s = %s; i64 %s = 0; ", emit_ctype(E, t), s, number(E, t, mul), c);
    const char *v = arena_printf(&E->C->arena, "v%d", id);
    open_loops(E, at, a, id, v, t);
    if (nan) P("if (!%s) ", isnan_of(E, t, v));
    P("{ %s = %s; %s++; } }\n", s, combine(E, t, mul, s, v), c);
}

bool emit_reduce(Emit *E, Node *n) {
    if (n->intr->kind != IK_REDUCE) return false;
    Arena *A = &E->C->arena;
    Node *x = n->call.bound.v[0];
    const Type *at = x->ty, *ot = n->opty, *rt = n->ty;
    int id = E->tmp++;
    const char *a = arena_printf(A, "ra%d", id), *s = arena_printf(A, "rs%d", id),
               *c = arena_printf(A, "rc%d", id), *v = arena_printf(A, "v%d", id);
    int sub = n->intr->sub;
    bool nan = sub == RD_NANSUM || sub == RD_NANPROD || sub == RD_NANMEAN || sub == RD_NANVAR ||
               sub == RD_NANSTD || sub == RD_NANMIN || sub == RD_NANMAX;
    emit_sx_open(E, rt);
    P("%s %s = %s; ", emit_ctype(E, at), a, emit_expr_str(E, x, NULL));
    const char *res = s;
    switch ((Reduce)sub) {
    case RD_SUM:
    case RD_NANSUM:
    case RD_PROD:
    case RD_NANPROD:
        sum_pass(E, at, a, id, ot, sub == RD_PROD || sub == RD_NANPROD, nan, s, c);
        break;
    case RD_MEAN:
    case RD_NANMEAN:
        /* 0 / 0 is NaN for an empty array (NumPy warns and gives nan) */
        sum_pass(E, at, a, id, ot, false, nan, s, c);
        res = ot->kind == TY_COMPLEX
                  ? arena_printf(A, "kiln_div_%s(%s, %s)", emit_cname(E, ot), s,
                                 arena_printf(A, "kiln_%s((f64)%s, 0)", emit_cname(E, ot), c))
                  : arena_printf(A, "(%s)(%s / (%s)%s)", emit_ctype(E, ot), s, emit_ctype(E, ot), c);
        break;
    case RD_VAR:
    case RD_STD:
    case RD_NANVAR:
    case RD_NANSTD: {
        /* the mean, then the mean of the squared distances from it (|x - m|^2) */
        sum_pass(E, at, a, id, ot, false, nan, s, c);
        const Type *pt = ot->kind == TY_COMPLEX ? ty_complex_part(ot) : ot;
        const char *pc = emit_ctype(E, pt);
        const char *m = arena_printf(A, "rm%d", id), *q = arena_printf(A, "rq%d", id);
        if (ot->kind == TY_COMPLEX)
            P("%s %s = kiln_div_%s(%s, kiln_%s((f64)%s, 0)); ", emit_ctype(E, ot), m,
              emit_cname(E, ot), s, emit_cname(E, ot), c);
        else
            P("%s %s = (%s)(%s / (%s)%s); ", pc, m, pc, s, pc, c);
        P("%s %s = 0; ", pc, q);
        int id2 = E->tmp++;
        const char *w = arena_printf(A, "v%d", id2);
        open_loops(E, at, a, id2, w, ot);
        if (nan) P("if (!%s) ", isnan_of(E, ot, w));
        if (ot->kind == TY_COMPLEX)
            P("{ %s d = kiln_sub_%s(%s, %s); %s += d.re * d.re + d.im * d.im; } }\n",
              emit_ctype(E, ot), emit_cname(E, ot), w, m, q);
        else
            P("{ %s d = %s - %s; %s += d * d; } }\n", pc, w, m, q);
        res = arena_printf(A, "(%s)(%s / (%s)%s)", pc, q, pc, c);
        if (sub == RD_STD || sub == RD_NANSTD)
            res = arena_printf(A, "sqrt%s(%s)", emit_is_f32(pt) ? "f" : "", res);
        break;
    }
    case RD_MIN:
    case RD_MAX:
    case RD_NANMIN:
    case RD_NANMAX: {
        bool mx = sub == RD_MAX || sub == RD_NANMAX;
        const char *ct = emit_ctype(E, ot);
        /* NaN propagates (npmax); nan*: NaNs are skipped, all NaN gives NaN */
        const char *fn = ot->kind == TY_COMPLEX
                             ? arena_printf(A, "kiln_np%s_%s", mx ? "max" : "min", emit_cname(E, ot))
                         : ot->kind == TY_FLOAT
                             ? arena_printf(A, "kiln_np%s_%s", mx ? "max" : "min", ct)
                             : arena_printf(A, "kiln_%s_%s", mx ? "max" : "min", ct);
        P("%s %s = %s; i64 %s = 0, %sn = 0; ", ct, s, number(E, ot, 0), c, c);
        open_loops(E, at, a, id, v, ot);
        P("%sn++; ", c);
        if (nan) P("if (%s) { if (%s == 0) %s = %s; continue; } ", isnan_of(E, ot, v), c, s, v);
        P("%s = %s ? %s(%s, %s) : %s; %s++; }\n", s, c, fn, s, v, v, c);
        int line = emit_loc(E, n->sp);
        P("if (%sn == 0) kiln_fail(E_, %d, %d, %d, 0, 0); ", c, (int)KILN_ERR_EMPTY_REDUCE, line,
          mx);
        break;
    }
    case RD_ALL:
    case RD_ANY: {
        bool all = sub == RD_ALL;
        P("kbool %s = %d; ", s, all);
        open_loops(E, at, a, id, v, ot);
        P("if (%s%s) { %s = %d; break; } }\n", all ? "!" : "", truthy(E, ot, v), s, !all);
        /* break leaves the innermost loop only: the outer ones test s */
        break;
    }
    case RD_COUNT_NONZERO:
        P("i64 %s = 0; ", s);
        open_loops(E, at, a, id, v, ot);
        P("%s += %s; }\n", s, truthy(E, ot, v));
        break;
    }
    emit_sx_close(E, res);
    return true;
}
