/* emit_tier0_expr.c: tier 0's vector entry, its values (emit_tier0_int.h).
 *
 * A value that varies is an array of the block's lanes (kv<i> a variable's, kt<dt>_<i>
 * a temporary's, reused statement by statement); a uniform one a C expression from the
 * ordinary emitter.  Each operation is a call of src/target/vecops.c where one exists,
 * else a loop over the lanes with the ordinary emitter's text (fallback).
 */
#include <stdarg.h>
#include <string.h>

#include "emit/emit_tier0_int.h"

const char *const t0_dtc[KILN_NDTYPES] = {"kbool", "i8",  "i16", "i32", "i64",
                                              "u8",    "u16", "u32", "u64", "",
                                              "f32",   "f64", "",    "",    ""};

/* ---- writing ------------------------------------------------------------------- */

/* A varying variable's array: its own (kv<i>), or its argument's for a parameter of an
 * inlined call that never assigns it. */
const char *t0_var(T0 *t, const Sym *s) {
    for (int i = t->nalias - 1; i >= 0; i--)
        if (t->alias_sym[i] == s) return t->alias_arr[i];
    return t0_printf(t, "kv%d", t0_pm_get(t, &t->sym, s) >> 1);
}

/* The array an operation of node n writes: x's own for the hinted node, else a temporary. */
static const char *result(T0 *t, const Node *n, int dt) {
    if (t->dst_node == n && t->dst_dt == dt) return t->dst;
    return t0_tmp(t, dt);
}


/* A scope of masks: the memos made inside it serve only inside it. */
void t0_scope_open(T0 *t) { t->bdepth++; }
void t0_scope_close(T0 *t) {
    while (t->nmemo && t->memo[t->nmemo - 1].depth >= t->bdepth) t->nmemo--;
    t->bdepth--;
}




const char *t0_printf(T0 *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    Buf b;
    buf_init_arena(&b, t->A);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return b.p ? b.p : "";
}

const char *t0_tmp(T0 *t, int dt) {
    int i = t->ntmp[dt]++;
    if (t->ntmp[dt] > t->maxtmp[dt]) t->maxtmp[dt] = t->ntmp[dt];
    return t0_printf(t, "kt%d_%d", dt, i);
}
const char *t0_mask_new(T0 *t) {
    int i = t->nmask++;
    if (t->nmask > t->maxmask) t->maxmask = t->nmask;
    return t0_printf(t, "km%d", i);
}
/* A scalar's address: its value in a scalar temporary first. */
const char *t0_addr(T0 *t, Val v) {
    Emit *E = t->E;
    const char *u = t0_printf(t, "ku%d", t->nscalar++);
    P("%s %s = %s;\n", t0_dtc[v.dt], u, v.s);
    return t0_printf(t, "&%s", u);
}
/* A uniform value broadcast into an array. */
static Val vec_of(T0 *t, Val v) {
    Emit *E = t->E;
    if (v.vec) return v;
    const char *d = t0_tmp(t, v.dt);
    P("{ %s v_ = %s; kv_mov(%d, %s, 0, &v_, 1, n_); }\n", t0_dtc[v.dt], v.s, v.dt, d);
    return (Val){true, d, v.dt};
}
const char *t0_operand(T0 *t, Val v, int *scalar) {
    *scalar = !v.vec;
    return v.vec ? v.s : t0_addr(t, v);
}

/* The text of one of the emitter's functions, written into a string. */
const char *t0_convert_text(T0 *t, const Type *from, const Type *to, const char *x) {
    Emit *E = t->E;
    Buf b, *saved = E->o;
    buf_init_arena(&b, t->A);
    E->o = &b;
    emit_convert(E, from, to, x);
    E->o = saved;
    return b.p ? b.p : "";
}

static const Type *dt_type(int dt) { return ty_scalar((kiln_dtype)dt); }

/* A lane loop's head: kk_ over the block's lanes in m (NULL: all), with the
 * thread's own x coordinates. */
void t0_lane_open(T0 *t, const char *m) {
    Emit *E = t->E;
    t->txbx = true;
    P("for (long kk_ = 0; kk_ < n_; kk_++) { if (%s%s%s) continue; { const i64 tx_ = txv_[kk_], "
      "bx_ = bxv_[kk_]; (void)tx_; (void)bx_;\n",
      m ? "!" : "0", m ? m : "", m ? "[kk_]" : "");
}
void t0_lane_close(T0 *t) {
    Emit *E = t->E;
    PS("} }\n");
}

/* v converted to type `to` (the node's source type `from`, held as v.dt). */
Val t0_conv(T0 *t, Val v, const Type *from, const Type *to) {
    Emit *E = t->E;
    int dt = t0_vdt(to);
    if (dt < 0) {
        BAD(t);
        return v;
    }
    if (!v.vec) {
        Val r = {false, t0_convert_text(t, from, to, t0_printf(t, "(%s)", v.s)), dt};
        return r;
    }
    if (dt == v.dt) return (Val){true, v.s, dt};
    const char *d = t0_tmp(t, dt);
    if (t0_dt_float(v.dt) && !t0_dt_float(dt) && dt != KILN_BOOL) {
        /* the emitter's own conversion (kiln_f2u64...), lane by lane */
        t0_lane_open(t, NULL);
        P("%s[kk_] = %s;\n", d, t0_convert_text(t, dt_type(v.dt), to, t0_printf(t, "%s[kk_]", v.s)));
        t0_lane_close(t);
    } else {
        P("kv_cvt(%d, %d, %s, %s, n_);\n", dt, v.dt, d, v.s);
    }
    return (Val){true, d, dt};
}

/* Whether n is a number literal (negated or not) that float32 holds exactly. */
static bool f32_literal(const Node *n) {
    bool neg = n->kind == E_UNARY && n->op == U_NEG;
    if (neg) n = n->un.x;
    double v;
    if (n->kind == E_INT && !n->ilit.big && n->ilit.v <= (1u << 24)) v = (double)n->ilit.v;
    else if (n->kind == E_FLOAT) v = n->flit;
    else return false;
    return (double)(float)v == v;
}

/* Truthiness as a byte array. */
Val t0_truthy(T0 *t, Val v, const Type *ty) {
    Emit *E = t->E;
    if (v.dt == KILN_BOOL) return v;
    if (!v.vec) return t0_conv(t, v, ty, ty_scalar(KILN_BOOL));
    const char *d = t0_tmp(t, KILN_BOOL);
    P("{ %s z_ = 0; kv_cmp(%d, %d, (unsigned char *)%s, %s, 0, &z_, 1, n_); }\n", t0_dtc[v.dt], KV_NE,
      v.dt, d, v.s);
    return (Val){true, d, KILN_BOOL};
}


/* Lane by lane: the emitter's text of n, its varying children computed first where
 * that keeps their order (not under a condition of n's own). */
static Val fallback(T0 *t, Node *n, const char *m, bool children) {
    Emit *E = t->E;
    int dt = t0_vdt(n->ty);
    if (dt < 0) {
        BAD(t);
        return (Val){false, "0", 0};
    }
    int nl0 = t->nl;
    if (children) {
        Node *kids[16];
        int nk = 0;
        switch ((NodeKind)n->kind) {
        case E_BINOP:
            kids[nk++] = n->bin.l;
            kids[nk++] = n->bin.r;
            break;
        case E_UNARY: kids[nk++] = n->un.x; break;
        case E_CALL:
            for (int i = 0; i < n->call.bound.n && nk < 16; i++)
                if (n->call.bound.v[i]) kids[nk++] = n->call.bound.v[i];
            break;
        case E_COMPARE:
            if (n->cmp.operands.n == 2) {
                kids[nk++] = n->cmp.operands.v[0];
                kids[nk++] = n->cmp.operands.v[1];
            }
            break;
        default: break;
        }
        for (int i = 0; i < nk; i++) {
            Node *c = kids[i];
            if (!t0_vary(t, c) || c->kind == E_NAME || t0_vdt(c->ty) < 0 || t->nl >= 64) continue;
            Val cv = t0_ev(t, c, m);
            if (!cv.vec) continue;
            t->lnode[t->nl] = c;
            t->ltext[t->nl++] = t0_printf(t, "%s[kk_]", cv.s);
        }
    }
    const char *d = result(t, n, dt);
    t0_lane_open(t, m);
    P("%s[kk_] = ", d);
    emit_expr_as(E, n, n->ty);
    PS(";\n");
    t0_lane_close(t);
    t->nl = nl0;
    return (Val){true, d, dt};
}

/* A new mask: the lanes of m (NULL: all) where c holds (neg: where it does not). */
static const char *mask_with(T0 *t, const char *m, Val c, bool neg) {
    Emit *E = t->E;
    const char *r = t0_mask_new(t);
    const char *bang = neg ? "!" : "";
    if (!c.vec) /* a uniform condition under a varying mask */
        P(m ? "for (long kk_ = 0; kk_ < n_; kk_++) %s[kk_] = %s[kk_] & %s(%s);\n"
            : "memset(%s, %s%s(%s) != 0, (size_t)n_);\n",
          r, m ? m : "", bang, c.s);
    else if (m)
        P("kv_%s(%s, %s, (unsigned char *)%s, n_);\n", neg ? "mandn" : "mand", r, m, c.s);
    else if (neg)
        P("kv_mnot(%s, (unsigned char *)%s, n_);\n", r, c.s);
    else
        P("memcpy(%s, %s, (size_t)n_);\n", r, c.s);
    return r;
}
const char *t0_mask_and(T0 *t, const char *m, Val c) { return mask_with(t, m, c, false); }
const char *t0_mask_andnot(T0 *t, const char *m, Val c) { return mask_with(t, m, c, true); }

/* The element offset of a subscript, as an int64 array or scalar. */
bool t0_offset(T0 *t, Node *n, const char *m, Val *off, const char **base) {
    Emit *E = t->E;
    Node *b = n->sub.base;
    const Type *at = b->ty;
    if (at->kind != TY_ARRAY || t0_vary(t, b) || at->ptr || n->ty->kind == TY_ARRAY ||
        t0_vdt(at->elem) < 0 || at->ndim < 1)
        return false;
    Node **ix = n->sub.idx.v;
    int ni = n->sub.idx.n;
    if (ni == 1 && ix[0]->kind == E_TUPLE) {
        ni = ix[0]->tuple.n;
        ix = ix[0]->tuple.v;
    }
    if (ni != at->ndim) return false;
    for (int k = 0; k < ni; k++)
        if (ix[k]->kind == E_SLICE || !(ty_is_int(ix[k]->ty) || ix[k]->ty->kind == TY_BOOL))
            return false;
    const char *bs = emit_expr_str(E, b, NULL);
    *base = t0_printf(t, "(%s).data", bs);
    Val w[KILN_MAX_NDIM];
    for (int k = 0; k < ni; k++) {
        Val v = t0_conv(t, t0_ev(t, ix[k], m), ix[k]->ty, ty_scalar(KILN_INT64));
        if (!(ix[k]->flags & NF_NONNEG)) {
            if (v.vec) {
                const char *d = t0_tmp(t, KILN_INT64);
                P("{ i64 z_ = 0; kv_axpy(%s, %s, 0, 1, &z_, 1, (%s).shape[%d], n_); }\n", d, v.s,
                  bs, k);
                v.s = d;
            } else {
                v.s = t0_printf(t, "kiln_wrap(%s, (%s).shape[%d])", v.s, bs, k);
            }
        }
        w[k] = v;
    }
    /* each index scaled by its stride in elements and summed: the same value, modulo
     * 2^64, as emit_index_of's ((w0 * s1 + w1) * s2 + w2) (C) or w0 + s0 * (w1 + ...) (F) */
    int nd = ni;
    const char *sc[KILN_MAX_NDIM];
    for (int k = 0; k < nd; k++) {
        if (at->layout == 'A') {
            sc[k] = t0_printf(t, "(%s).strides[%d]", bs, k);
            continue;
        }
        Buf p;
        buf_init_arena(&p, t->A);
        buf_puts(&p, "1");
        int j0 = at->layout == 'C' ? k + 1 : 0, j1 = at->layout == 'C' ? nd : k;
        for (int j = j0; j < j1; j++) buf_printf(&p, " * (%s).shape[%d]", bs, j);
        sc[k] = p.p;
    }
    bool anyv = false;
    for (int k = 0; k < nd; k++) anyv |= w[k].vec;
    if (!anyv) {
        Buf s;
        buf_init_arena(&s, t->A);
        for (int k = 0; k < nd; k++) buf_printf(&s, "%s(i64)(%s) * (%s)", k ? " + " : "", w[k].s, sc[k]);
        *off = (Val){false, s.p, KILN_INT64};
        return true;
    }
    if (nd == 1 && strcmp(sc[0], "1") == 0) {
        *off = w[0];
        return true;
    }
    const char *acc = NULL;
    for (int k = 0; k < nd; k++) {
        const char *d = t0_tmp(t, KILN_INT64);
        int as;
        const char *a = t0_operand(t, w[k], &as);
        if (!acc) P("{ i64 z_ = 0; kv_axpy(%s, %s, %d, %s, &z_, 1, -1, n_); }\n", d, a, as, sc[k]);
        else P("kv_axpy(%s, %s, %d, %s, %s, 0, -1, n_);\n", d, a, as, sc[k], acc);
        acc = d;
    }
    *off = (Val){true, acc, KILN_INT64};
    return true;
}


/* n's operator as kv_bin's when a vector operation computes it on its operator type,
 * else -1. */
static int vec_binop(T0 *t, Node *n) {
    const int od = t0_vdt(n->opty);
    int op = n->op == B_ADD ? KV_ADD : n->op == B_SUB ? KV_SUB : n->op == B_MUL ? KV_MUL
             : n->op == B_DIV ? KV_DIV : n->op == B_AND ? KV_AND : n->op == B_OR ? KV_OR
             : n->op == B_XOR ? KV_XOR : -1;
    bool ok = od >= 0 && op >= 0 && !(t->E->debug && op == KV_DIV) &&
              (od == KILN_FLOAT32 || od == KILN_FLOAT64 || od == KILN_INT32 ||
               od == KILN_INT64 || od == KILN_UINT32 || od == KILN_UINT64) &&
              (op == KV_DIV ? t0_dt_float(od) : op >= KV_AND ? !t0_dt_float(od) : true);
    return ok ? op : -1;
}

/* Whether x, an operand of a float operation of type od, is a varying + - * / whose own
 * operator and result types are od: kv_bin2 then computes both in one pass. */
static bool fusable(T0 *t, Node *x, int od) {
    if (x->kind != E_BINOP || !t0_dt_float(od) || t0_vdt(x->opty) != od ||
        t0_vdt(x->ty) != od || !t0_vary(t, x))
        return false;
    const int op = vec_binop(t, x);
    return op >= 0 && op <= KV_DIV;
}

/* x, evaluated on the lanes of ms alone (none: not at all), into those lanes of d: one
 * side of a conditional expression (as type o) or of and/or (o NULL: its truth). */
static void side_into(T0 *t, const char *d, const char *ms, Node *x, const Type *o) {
    Emit *E = t->E;
    P("if (kv_any(%s, n_)) {\n", ms);
    t0_scope_open(t);
    Val v = t0_ev(t, x, ms);
    v = o ? t0_conv(t, v, x->ty, o) : t0_truthy(t, v, x->ty);
    t0_scope_close(t);
    int vs;
    const char *vp = t0_operand(t, v, &vs);
    P("kv_mov(%d, %s, %s, %s, %d, n_);\n}\n", v.dt, d, ms, vp, vs);
}

Val t0_ev(T0 *t, Node *n, const char *m) {
    Emit *E = t->E;
    if (t->bad) return (Val){false, "0", KILN_INT64};
    if (!t0_vary(t, n)) {
        int dt = t0_vdt(n->ty);
        if (dt < 0) {
            BAD(t);
            return (Val){false, "0", KILN_INT64};
        }
        return (Val){false, t0_printf(t, "(%s)", emit_expr_str(E, n, NULL)), dt};
    }
    int dt = t0_vdt(n->ty);
    switch ((NodeKind)n->kind) {
    case E_NAME:
        if (n->sym) {
            int s = t0_pm_get(t, &t->sym, n->sym);
            if (t0_vdt(n->sym->ty) != dt) break;
            (void)s;
            return (Val){true, t0_var(t, n->sym), dt};
        }
        break;
    case E_BINOP: {
        const Type *o = n->opty;
        int od = t0_vdt(o);
        int op = vec_binop(t, n);
        if (op < 0 || od != dt) break;
        /* a + - * / of a float taking another's varying result: one kv_bin2 pass */
        Node *in = fusable(t, n->bin.l, od) ? n->bin.l : fusable(t, n->bin.r, od) ? n->bin.r
                                                                                    : NULL;
        if (in && op <= KV_DIV) {
            const Type *io = in->opty;
            Val c = {false, "0", od}, a, b;
            if (in == n->bin.r) c = t0_conv(t, t0_ev(t, n->bin.l, m), n->bin.l->ty, o);
            a = t0_conv(t, t0_ev(t, in->bin.l, m), in->bin.l->ty, io);
            b = t0_conv(t, t0_ev(t, in->bin.r, m), in->bin.r->ty, io);
            if (in == n->bin.l) c = t0_conv(t, t0_ev(t, n->bin.r, m), n->bin.r->ty, o);
            int as, bs, cs;
            const char *ap = t0_operand(t, a, &as), *bp = t0_operand(t, b, &bs);
            const char *cp = t0_operand(t, c, &cs);
            const int op2 = in == n->bin.l ? op : op == KV_SUB ? KV_RSUB : op == KV_DIV ? KV_RDIV
                                                                                       : op;
            const char *d = result(t, n, od);
            P("kv_bin2(%d, %d, %d, %s, %s, %d, %s, %d, %s, %d, n_);\n", vec_binop(t, in), op2, od,
              d, ap, as, bp, bs, cp, cs);
            return (Val){true, d, od};
        }
        Val a = t0_conv(t, t0_ev(t, n->bin.l, m), n->bin.l->ty, o);
        Val b = t0_conv(t, t0_ev(t, n->bin.r, m), n->bin.r->ty, o);
        int as, bs;
        const char *ap = t0_operand(t, a, &as), *bp = t0_operand(t, b, &bs);
        const char *d = result(t, n, od);
        P("kv_bin(%d, %d, %s, %s, %d, %s, %d, n_);\n", op, od, d, ap, as, bp, bs);
        return (Val){true, d, od};
    }
    case E_UNARY: {
        const Type *o = n->opty;
        int od = t0_vdt(o);
        if (n->op == U_POS && od >= 0) return t0_conv(t, t0_ev(t, n->un.x, m), n->un.x->ty, o);
        if (n->op == U_NEG && (t0_dt_float(od) || od == KILN_INT32 || od == KILN_INT64) && od == dt) {
            Val a = t0_conv(t, t0_ev(t, n->un.x, m), n->un.x->ty, o);
            if (!a.vec) break;
            const char *d = result(t, n, od);
            P("kv_un(%d, %d, %s, %s, n_);\n", KV_NEG, od, d, a.s);
            return (Val){true, d, od};
        }
        if (n->op == U_NOT && dt == KILN_BOOL) {
            Val a = t0_truthy(t, t0_ev(t, n->un.x, m), n->un.x->ty);
            if (!a.vec) break;
            const char *d = result(t, n, KILN_BOOL);
            P("kv_mnot((unsigned char *)%s, (unsigned char *)%s, n_);\n", d, a.s);
            return (Val){true, d, KILN_BOOL};
        }
        break;
    }
    case E_COMPARE: {
        if (n->cmp.operands.n != 2 || !n->cmp.optys[0] || n->cmp.ops[0] > C_NE) break;
        const Type *o = n->cmp.optys[0];
        int od = t0_vdt(o);
        if (od < 0) break;
        static const int ops[] = {KV_LT, KV_LE, KV_GT, KV_GE, KV_EQ, KV_NE};
        Node *l = n->cmp.operands.v[0], *r = n->cmp.operands.v[1];
        /* a float32 against a literal float32 holds exactly: the same answer in float32
         * (both conversions to float64 are exact), without widening the lanes */
        if (od == KILN_FLOAT64 && ((t0_vdt(l->ty) == KILN_FLOAT32 && f32_literal(r)) ||
                                   (t0_vdt(r->ty) == KILN_FLOAT32 && f32_literal(l)))) {
            o = ty_scalar(KILN_FLOAT32);
            od = KILN_FLOAT32;
        }
        Val a = t0_conv(t, t0_ev(t, l, m), l->ty, o);
        Val b = t0_conv(t, t0_ev(t, r, m), r->ty, o);
        int as, bs;
        const char *ap = t0_operand(t, a, &as), *bp = t0_operand(t, b, &bs);
        const char *d = result(t, n, KILN_BOOL);
        P("kv_cmp(%d, %d, (unsigned char *)%s, %s, %d, %s, %d, n_);\n", ops[n->cmp.ops[0]], od, d,
          ap, as, bp, bs);
        return (Val){true, d, KILN_BOOL};
    }
    case E_BOOLOP: {
        if (dt != KILN_BOOL || n->opty->kind != TY_BOOL) break;
        Val a = t0_truthy(t, t0_ev(t, n->bin.l, m), n->bin.l->ty);
        a = vec_of(t, a);
        int save = t->nmask;
        const char *mr = n->op == BO_AND ? t0_mask_and(t, m, a) : t0_mask_andnot(t, m, a);
        const char *d = result(t, n, KILN_BOOL);
        P("memcpy(%s, %s, (size_t)n_);\n", d, a.s);
        side_into(t, d, mr, n->bin.r, NULL);
        t->nmask = save;
        return (Val){true, d, KILN_BOOL};
    }
    case E_IFEXP: {
        const Type *o = n->opty;
        int od = t0_vdt(o);
        if (od < 0 || od != dt) break;
        Val c = t0_truthy(t, t0_ev(t, n->ifexp.cond, m), n->ifexp.cond->ty);
        int save = t->nmask;
        const char *mt = t0_mask_and(t, m, c), *me = t0_mask_andnot(t, m, c);
        const char *d = result(t, n, od);
        side_into(t, d, mt, n->ifexp.then, o);
        side_into(t, d, me, n->ifexp.orelse, o);
        t->nmask = save;
        return (Val){true, d, od};
    }
    case E_SUBSCRIPT: {
        Val off;
        const char *base;
        if (dt < 0 || t0_vdt(n->sub.base->ty->kind == TY_ARRAY ? n->sub.base->ty->elem : NULL) != dt ||
            !t0_offset(t, n, m, &off, &base))
            break;
        int os;
        const char *op = t0_operand(t, off, &os);
        const char *d = result(t, n, dt);
        P("kv_load(%d, %s, %s, %s, %d, %s, n_);\n", dt, d, base, op, os, m ? m : "0");
        return (Val){true, d, dt};
    }
    case E_CALL:
        if (n->callee && !n->callee->recursive) return t->inline_call(t, n, m);
        if (!n->intr) break;
        if (t0_is_call(n, IK_GRID) && t0_grid_dims(n) == 1) return (Val){true, "gx_", KILN_INT64};
        if ((n->intr->kind == IK_MATH1 && n->intr->sub < KV_NMATH - 1 &&
             !(E->fastmath && n->intr->sub == 20)) ||
            (n->intr->kind == IK_LOG && !n->call.bound.v[1]) ||
            (n->intr->kind == IK_ABS && t0_dt_float(t0_vdt(n->opty)))) {
            const Type *o = n->opty;
            int od = t0_vdt(o);
            if (!t0_dt_float(od) || od != dt) break;
            int fn = n->intr->kind == IK_MATH1 ? KV_MATH0 + n->intr->sub
                     : n->intr->kind == IK_LOG ? KV_MATH0 + 3 : KV_FABS;
            Node *x = n->call.bound.v[0];
            Val a = t0_conv(t, t0_ev(t, x, m), x->ty, ty_strong(o));
            if (!a.vec) break;
            const char *d = result(t, n, od);
            P("kv_un(%d, %d, %s, %s, n_);\n", fn, od, d, a.s);
            return (Val){true, d, od};
        }
        break;
    default: break;
    }
    if (n->intr && n->intr->kind == IK_SREG) { /* threadIdx.x, blockIdx.x (a name or an attribute) */
        t->txbx = true;
        return (Val){true, n->intr->sub == 0 ? "txv_" : "bxv_", KILN_INT64};
    }
    bool kids = n->kind != E_IFEXP && n->kind != E_BOOLOP && !(n->kind == E_CALL && n->callee);
    return fallback(t, n, m, kids);
}
