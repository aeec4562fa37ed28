/* emit_tier0.c: tier 0's vector entry (kiln_ventry), CPU only.
 *
 * Tier 0 (src/target/tcc.c) compiles the generated C with libtcc in a
 * millisecond, but tcc's code runs a thread's arithmetic and each call of a
 * math function one at a time, ten to forty times slower than the optimised
 * build: a first call over millions of threads would then wait for the C
 * compiler after all.  The vector entry runs the kernel over blocks of
 * KV_LANES consecutive threads of a row (x) instead: each operation that
 * varies from thread to thread is one call of src/target/vecops.c over the
 * block (code the system compiler vectorised, libmvec's math), and tcc's code
 * only sequences the calls.  Values the same for the whole block (uniform:
 * parameters, shapes, the y and z coordinates, loop counters of loops with
 * uniform bounds) stay scalars, written by the ordinary emitter.
 *
 * Control flow that varies runs under masks, as a GPU's does: an if whose
 * condition varies runs each branch on the lanes that take it (and skips a
 * branch none takes), a varying while loop runs while any lane is still in it,
 * and a return, break or continue under a varying condition clears its lanes
 * from every mask up to the function or loop it leaves.  Device functions are
 * inlined, each call in a C block of its own.  What has no vector operation
 * (integer division, float to integer conversions, atomics, calls of device
 * functions that cannot be inlined...) runs lane by lane in tcc's code: the
 * ordinary emitter writes the expression, its varying names read lane kk_
 * (the hook in emit_expr), so every value is the one the scalar entry gives.
 *
 * Kernels this does not cover (block mode, shared or local arrays, warp
 * functions, raise and assert, values of tuple, complex or float16 type that
 * vary, loops over varying bounds) get no vector entry: tier 0 runs the
 * scalar entry, as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit/emit_tier0_int.h"

static Val inline_call(T0 *t, Node *n, const char *m);
static void block(T0 *t, NodeList *l, const char *m);

/* ---- statements ---------------------------------------------------------------- */

/* Whether expression n reads variable s (the arguments of its calls included). */
static bool reads_sym(const Node *n, const Sym *s) {
    if (!n) return false;
    switch ((NodeKind)n->kind) {
    case E_NAME: return n->sym == s;
    case E_BINOP:
    case E_BOOLOP: return reads_sym(n->bin.l, s) || reads_sym(n->bin.r, s);
    case E_UNARY: return reads_sym(n->un.x, s);
    case E_COMPARE:
        for (int i = 0; i < n->cmp.operands.n; i++)
            if (reads_sym(n->cmp.operands.v[i], s)) return true;
        return false;
    case E_IFEXP:
        return reads_sym(n->ifexp.cond, s) || reads_sym(n->ifexp.then, s) ||
               reads_sym(n->ifexp.orelse, s);
    case E_CALL:
        for (int i = 0; i < n->call.bound.n; i++)
            if (reads_sym(n->call.bound.v[i], s)) return true;
        return false;
    case E_SUBSCRIPT:
        for (int i = 0; i < n->sub.idx.n; i++)
            if (reads_sym(n->sub.idx.v[i], s)) return true;
        return reads_sym(n->sub.base, s);
    case E_ATTR: return reads_sym(n->attr.base, s);
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++)
            if (reads_sym(n->tuple.v[i], s)) return true;
        return false;
    case E_SLICE:
        return reads_sym(n->slice.lo, s) || reads_sym(n->slice.hi, s) ||
               reads_sym(n->slice.step, s);
    default: return false;
    }
}

/* Whether any value of the tuple v reads s. */
static bool tuple_reads(const Node *v, const Sym *s) {
    for (int k = 0; k < v->tuple.n; k++)
        if (reads_sym(v->tuple.v[k], s)) return true;
    return false;
}

static void store_sym(T0 *t, const Sym *s, Val v, const Type *vt, const char *m) {
    Emit *E = t->E;
    (*t0_pm_slot(t, &t->epochs, s, true))++; /* the memos of calls that read it are stale */
    if (!t0_varies(t, s)) {
        /* a uniform variable takes a uniform value at a uniform place (the scan) */
        P("%s = %s;\n", emit_sym_name(E, s), t0_convert_text(t, vt, s->ty, t0_printf(t, "(%s)", v.s)));
        return;
    }
    Val c = t0_conv(t, v, vt, s->ty);
    int cs;
    const char *cp = t0_operand(t, c, &cs);
    if (c.vec && strcmp(c.s, t0_var(t, s)) == 0) return; /* written in place */
    P("kv_mov(%d, %s, %s, %s, %d, n_);\n", c.dt, t0_var(t, s), m ? m : "0", cp, cs);
}

/* Clears the lanes of m from every mask from the chain's entry `to` inward. */
static void exit_lanes(T0 *t, int kind, const char *m) {
    Emit *E = t->E;
    int to = t->nchain - 1;
    while (to >= 0 && t->kind[to] != kind) to--;
    if (to < 0 || !m || !t->chain[to]) { /* the scan gave what it leaves a mask */
        BAD(t);
        return;
    }
    t->nexits++;
    const char *c = t0_mask_new(t);
    P("memcpy(%s, %s, (size_t)n_);\n", c, m);
    for (int i = to; i < t->nchain; i++)
        if (t->chain[i]) P("kv_mandn(%s, %s, %s, n_);\n", t->chain[i], t->chain[i], c);
    t->nmask--;
}

static void push(T0 *t, const char *m, int kind) {
    if (t->nchain >= 256) {
        BAD(t);
        return;
    }
    t->chain[t->nchain] = m;
    t->kind[t->nchain++] = kind;
}

static bool stmt_varies(T0 *t, Node *n) {
    switch ((NodeKind)n->kind) {
    case S_EXPR: return t0_vary(t, n->expr);
    case S_ASSIGN: {
        bool v = t0_vary(t, n->assign.value);
        for (int i = 0; i < n->assign.targets.n; i++) {
            Node *tg = n->assign.targets.v[i];
            if (tg->kind == E_NAME) v |= t0_varies(t, tg->sym);
            else if (tg->kind == E_TUPLE) {
                for (int k = 0; k < tg->tuple.n; k++)
                    v |= tg->tuple.v[k]->kind != E_NAME || t0_varies(t, tg->tuple.v[k]->sym);
            } else v |= t0_vary(t, tg);
        }
        return v;
    }
    case S_AUGASSIGN: {
        /* both sides scanned: t0_vary marks what they call */
        bool v = t0_vary(t, n->aug.value);
        v |= t0_vary(t, n->aug.target);
        return v || (n->aug.target->kind == E_NAME && t0_varies(t, n->aug.target->sym));
    }
    default: return true;
    }
}

static void loop_body(T0 *t, NodeList *body, Node *loop, const char *lm) {
    Emit *E = t->E;
    int lf = t0_pm_get(t, &t->loops, loop);
    /* a loop's body runs again after the statements written below it: a call's result
     * from before the loop, or from an iteration, is not the next iteration's (memos) */
    int serial = t->loop_serial;
    t->loop_serial = ++t->nserial;
    if (lf & 2) { /* a varying continue: the iteration's own mask */
        const char *it = t0_mask_new(t);
        P("memcpy(%s, %s, (size_t)n_);\n", it, lm);
        push(t, it, 3);
        block(t, body, it);
        t->nchain--;
    } else {
        block(t, body, lm);
    }
    t->loop_serial = serial;
}

static void stmt(T0 *t, Node *n, const char *m) {
    Emit *E = t->E;
    if (t->bad) return;
    int save[KILN_NDTYPES];
    memcpy(save, t->ntmp, sizeof save);
    int msave = t->nmask;
    emit_line_marker(E, n->sp);
    switch ((NodeKind)n->kind) {
    case S_PASS: break;
    case S_EXPR:
    case S_ASSIGN:
    case S_AUGASSIGN:
        if (!stmt_varies(t, n)) { /* the emitter's own statement */
            emit_block(E, &(NodeList){&n, 1});
            break;
        }
        if (n->kind == S_EXPR) {
            Node *x = n->expr;
            if (x->kind == E_CALL && x->callee && !x->callee->recursive) {
                inline_call(t, x, m);
                break;
            }
            t0_lane_open(t, m);
            emit_block(E, &(NodeList){&n, 1});
            t0_lane_close(t);
            break;
        }
        if (n->kind == S_AUGASSIGN) {
            Node *tg = n->aug.target;
            if (tg->kind != E_NAME) { /* a[i] += v: lane by lane, as written */
                t0_lane_open(t, m);
                emit_block(E, &(NodeList){&n, 1});
                t0_lane_close(t);
                break;
            }
            /* x op= v: the operation in its type, lane by lane unless a vector one */
            Node *v = n->aug.value;
            const Type *o = n->opty;
            int od = t0_vdt(o);
            int op = n->op == B_ADD ? KV_ADD : n->op == B_SUB ? KV_SUB : n->op == B_MUL ? KV_MUL
                     : n->op == B_DIV && t0_dt_float(od) && !E->debug ? KV_DIV : -1;
            Val cur = {true, t0_var(t, tg->sym), t0_vdt(tg->sym->ty)};
            Val r;
            if (op >= 0 && od >= 0 && (t0_dt_float(od) || od == KILN_INT32 || od == KILN_INT64 ||
                                       od == KILN_UINT32 || od == KILN_UINT64)) {
                Val a = t0_conv(t, cur, tg->sym->ty, o);
                Val b = t0_conv(t, t0_ev(t, v, m), v->ty, o);
                int bs;
                const char *bp = t0_operand(t, b, &bs);
                const char *d = t0_tmp(t, od);
                P("kv_bin(%d, %d, %s, %s, 0, %s, %d, n_);\n", op, od, d, a.s, bp, bs);
                r = (Val){true, d, od};
            } else {
                if (od < 0) {
                    BAD(t);
                    break;
                }
                int nl0 = t->nl;
                if (t0_vary(t, v) && v->kind != E_NAME && t0_vdt(v->ty) >= 0) {
                    Val cv = t0_ev(t, v, m);
                    if (cv.vec && t->nl < 64) {
                        t->lnode[t->nl] = v;
                        t->ltext[t->nl++] = t0_printf(t, "%s[kk_]", cv.s);
                    }
                }
                const char *d = t0_tmp(t, od);
                t0_lane_open(t, m);
                P("%s[kk_] = ", d);
                emit_binop_text(E, n, (BinOp)n->op, o, tg, v);
                PS(";\n");
                t0_lane_close(t);
                t->nl = nl0;
                r = (Val){true, d, od};
            }
            store_sym(t, tg->sym, r, o, m);
            break;
        }
        {
            Node *v = n->assign.value;
            for (int i = 0; i < n->assign.targets.n && !t->bad; i++) {
                Node *tg = n->assign.targets.v[i];
                if (tg->kind == E_TUPLE && t0_is_call(v, IK_GRID)) {
                    static const char *const ax[3] = {"X", "Y", "Z"};
                    for (int k = 0; k < tg->tuple.n; k++) {
                        Val c = k == 0 ? (Val){true, "gx_", KILN_INT64}
                                       : (Val){false, t0_printf(t, "(KILN_BID_%s * KILN_BDIM_%s + "
                                                                 "KILN_TID_%s)", ax[k], ax[k], ax[k]),
                                               KILN_INT64};
                        store_sym(t, tg->tuple.v[k]->sym, c, ty_scalar(KILN_INT64), m);
                    }
                    continue;
                }
                if (tg->kind == E_TUPLE) {
                    /* every value first, as Python evaluates them */
                    Val vs[64];
                    if (v->kind != E_TUPLE || v->tuple.n > 64) {
                        BAD(t);
                        break;
                    }
                    for (int k = 0; k < v->tuple.n; k++) {
                        /* on every lane, into the target's array when no value reads it */
                        Node *e = k < tg->tuple.n ? tg->tuple.v[k] : NULL;
                        if (!m && n->assign.targets.n == 1 && e && e->kind == E_NAME &&
                            t0_varies(t, e->sym) &&
                            t0_vdt(v->tuple.v[k]->ty) == t0_vdt(e->sym->ty) &&
                            !tuple_reads(v, e->sym)) {
                            t->dst_node = v->tuple.v[k];
                            t->dst = t0_var(t, e->sym);
                            t->dst_dt = t0_vdt(e->sym->ty);
                        }
                        vs[k] = t0_ev(t, v->tuple.v[k], m);
                        t->dst_node = NULL;
                        if (!vs[k].vec) vs[k] = (Val){false, t0_addr(t, vs[k]) + 1, vs[k].dt};
                    }
                    for (int k = 0; k < v->tuple.n; k++) {
                        Node *e = tg->tuple.v[k];
                        if (e->kind != E_NAME) {
                            BAD(t);
                            break;
                        }
                        store_sym(t, e->sym, vs[k], v->tuple.v[k]->ty, m);
                    }
                    continue;
                }
                if (tg->kind == E_NAME) {
                    /* on every lane, a value that does not read x: computed into x's array */
                    bool into = !m && n->assign.targets.n == 1 && t0_varies(t, tg->sym) &&
                                t0_vdt(v->ty) == t0_vdt(tg->sym->ty) && !reads_sym(v, tg->sym);
                    if (into) {
                        t->dst_node = v;
                        t->dst = t0_var(t, tg->sym);
                        t->dst_dt = t0_vdt(v->ty);
                    }
                    Val val = t0_ev(t, v, m);
                    t->dst_node = NULL;
                    store_sym(t, tg->sym, val, v->ty, m);
                    continue;
                }
                /* a store: a[i, j] = v */
                Val off;
                const char *base;
                int edt = tg->kind == E_SUBSCRIPT ? t0_vdt(tg->ty) : -1;
                if (edt < 0 || tg->sub.base->ty->kind != TY_ARRAY ||
                    t0_vdt(tg->sub.base->ty->elem) != edt) {
                    BAD(t);
                    break;
                }
                Val val = t0_conv(t, t0_ev(t, v, m), v->ty, tg->ty);
                if (t->bad || !t0_offset(t, tg, m, &off, &base)) {
                    BAD(t);
                    break;
                }
                int os, vs;
                const char *op = t0_operand(t, off, &os), *vp = t0_operand(t, val, &vs);
                P("kv_store(%d, %s, %s, %d, %s, %s, %d, n_);\n", edt, base, op, os, m ? m : "0",
                  vp, vs);
            }
        }
        break;
    case S_IF: {
        Node *c = n->ifs.cond;
        if (n == t->guard) { /* folded into the blocks' range (the entry clamps it) */
            if (!t->guard_early) block(t, &n->ifs.body, m);
            break;
        }
        if (!t0_vary(t, c)) {
            P("if (");
            emit_truthy(E, c);
            PS(") {\n");
            block(t, &n->ifs.body, m);
            if (n->ifs.orelse.n) {
                PS("} else {\n");
                block(t, &n->ifs.orelse, m);
            }
            PS("}\n");
            break;
        }
        Val cv = t0_truthy(t, t0_ev(t, c, m), c->ty);
        const char *mt = t0_mask_and(t, m, cv);
        const char *me = n->ifs.orelse.n ? t0_mask_andnot(t, m, cv) : NULL;
        P("if (kv_any(%s, n_)) {\n", mt);
        push(t, mt, 0);
        block(t, &n->ifs.body, mt);
        t->nchain--;
        PS("}\n");
        if (me) {
            P("if (kv_any(%s, n_)) {\n", me);
            push(t, me, 0);
            block(t, &n->ifs.orelse, me);
            t->nchain--;
            PS("}\n");
        }
        break;
    }
    case S_WHILE: {
        int lf = t0_pm_get(t, &t->loops, n);
        Node *c = n->ifs.cond;
        if (!(lf & 4)) { /* a uniform condition */
            const char *lm = m;
            if (lf & 1) {
                lm = t0_mask_new(t);
                if (m) P("memcpy(%s, %s, (size_t)n_);\n", lm, m);
                else P("memset(%s, 1, (size_t)n_);\n", lm);
            }
            PS("for (;;) {\nKILN_POLL(return;)\nif (!(");
            emit_truthy(E, c);
            PS(")) break;\n");
            if (lf & 1) P("if (!kv_any(%s, n_)) break;\n", lm);
            push(t, (lf & 1) ? lm : NULL, 2);
            loop_body(t, &n->ifs.body, n, lm);
            t->nchain--;
            PS("}\n");
            break;
        }
        const char *lm = t0_mask_new(t);
        if (m) P("memcpy(%s, %s, (size_t)n_);\n", lm, m);
        else P("memset(%s, 1, (size_t)n_);\n", lm);
        PS("for (;;) {\nKILN_POLL(return;)\n");
        int s2[KILN_NDTYPES];
        memcpy(s2, t->ntmp, sizeof s2);
        t0_scope_open(t);
        Val cv = t0_truthy(t, t0_ev(t, c, lm), c->ty);
        t0_scope_close(t);
        if (cv.vec) P("kv_mand(%s, %s, (unsigned char *)%s, n_);\n", lm, lm, cv.s);
        else P("if (!(%s)) break;\n", cv.s);
        memcpy(t->ntmp, s2, sizeof s2);
        P("if (!kv_any(%s, n_)) break;\n", lm);
        push(t, lm, 2);
        loop_body(t, &n->ifs.body, n, lm);
        t->nchain--;
        PS("}\n");
        break;
    }
    case S_FOR: { /* the emitter's range loop, its counter uniform */
        int lf = t0_pm_get(t, &t->loops, n);
        const Type *lt = n->fors.iter->opty;
        const char *lm = m;
        if (lf & 1) {
            lm = t0_mask_new(t);
            if (m) P("memcpy(%s, %s, (size_t)n_);\n", lm, m);
            else P("memset(%s, 1, (size_t)n_);\n", lm);
        }
        int id = E->tmp++;
        PS("{\n");
        emit_range_head(E, n, id);
        if (lf & 1) P("if (!kv_any(%s, n_)) break;\n", lm);
        store_sym(t, n->sym, (Val){false, t0_printf(t, "it%d", id), t0_vdt(lt)}, lt, lm);
        push(t, (lf & 1) ? lm : NULL, 2);
        loop_body(t, &n->fors.body, n, lm);
        t->nchain--;
        PS("}\n}\n");
        break;
    }
    case S_BREAK:
    case S_CONTINUE:
        if (!t0_pm_get(t, &t->exits, n)) {
            PS(n->kind == S_BREAK ? "break;\n" : "continue;\n");
            break;
        }
        exit_lanes(t, n->kind == S_BREAK ? 2 : 3, m);
        break;
    case S_RETURN: {
        if (t->ret_arr && n->ret.value) {
            Val v = t0_conv(t, t0_ev(t, n->ret.value, m), n->ret.value->ty, t->ret_ty);
            int vs;
            const char *vp = t0_operand(t, v, &vs);
            P("kv_mov(%d, %s, %s, %s, %d, n_);\n", t->ret_dt, t->ret_arr, m ? m : "0", vp, vs);
        } else if (n->ret.value && t0_vary(t, n->ret.value)) {
            t0_ev(t, n->ret.value, m);
        }
        if (!t0_pm_get(t, &t->exits, n)) {
            P("goto %s;\n", t->fn_label);
            break;
        }
        exit_lanes(t, 1, m);
        break;
    }
    default: BAD(t); break;
    }
    memcpy(t->ntmp, save, sizeof save);
    t->nmask = msave;
}

/* After a statement that took lanes out (a return, break or continue under a varying
 * condition), the rest of the block runs only while some lane of it is left: a uniform
 * statement there (a store, a uniform call) must not run for none. */
static void block(T0 *t, NodeList *l, const char *m) {
    Emit *E = t->E;
    int open = 0;
    t0_scope_open(t);
    for (int i = 0; i < l->n && !t->bad; i++) {
        int before = t->nexits;
        stmt(t, l->v[i], m);
        if (t->nexits != before && m && i + 1 < l->n) {
            P("if (kv_any(%s, n_)) {\n", m);
            open++;
        }
    }
    while (open--) PS("}\n");
    t0_scope_close(t);
}

/* The uniform locals of f, declared at the top of its C block. */
static void declare_locals(T0 *t, FuncSpec *f) {
    Emit *E = t->E;
    for (int i = 0; i < f->nsyms; i++) {
        Sym *s = f->syms[i];
        if (t0_varies(t, s) || s->param >= 0) continue;
        if (!(ty_is_scalar(s->ty) || s->ty->kind == TY_ARRAY || s->ty->kind == TY_TUPLE)) continue;
        P("%s %s = %s; (void)%s;\n", emit_ctype(E, s->ty), emit_sym_name(E, s),
          ty_is_real(s->ty) ? "0" : "{0}", emit_sym_name(E, s));
    }
}

static Val inline_call(T0 *t, Node *n, const char *m) {
    Emit *E = t->E;
    FuncSpec *f = n->callee;
    int id = t->nlabel++;
    bool value = f->ret->kind != TY_NONE;
    int rdt = value ? t0_vdt(n->ty) : KILN_INT64;
    if (rdt < 0 || t0_pm_get(t, &t->fns, f) & 2) {
        BAD(t);
        return (Val){false, "0", 0};
    }
    /* a call made before with the same arguments (fn_of_args): its result */
    bool memo = value && n->call.bound.n <= 8 && t->nmemo < 32 && t->nkc < 64 &&
                t0_fn_of_args(t, f);
    for (int i = 0; memo && i < n->call.bound.n; i++) {
        const Node *a = n->call.bound.v[i];
        memo = a && ((a->kind == E_NAME && a->sym && t0_varies(t, a->sym)) ||
                     ((a->flags & NF_CONST) && ty_is_scalar(a->ty)));
    }
    for (int j = t->nmemo - 1; memo && j >= 0; j--) {
        struct Memo *me = &t->memo[j];
        bool same = me->f == f && me->nargs == n->call.bound.n && me->serial == t->loop_serial;
        for (int i = 0; same && i < me->nargs; i++) {
            const Node *a = n->call.bound.v[i], *b = me->arg[i];
            same = a->kind == E_NAME
                       ? b->kind == E_NAME && a->sym == b->sym &&
                             me->epoch[i] == t0_pm_get(t, &t->epochs, a->sym)
                       : b->kind != E_NAME && a->ty == b->ty && a->cval.u == b->cval.u;
        }
        if (same) return (Val){true, me->res, rdt};
    }
    /* the arguments, in order, before the call's block */
    Val args[64];
    if (n->call.bound.n > 64) {
        BAD(t);
        return (Val){false, "0", 0};
    }
    for (int i = 0; i < n->call.bound.n; i++) {
        Node *a = n->call.bound.v[i];
        const Type *pt = f->params[i];
        if (!a || ty_compile_time(pt)) {
            args[i] = (Val){false, NULL, 0};
            continue;
        }
        if (!ty_is_scalar(pt)) { /* an array: uniform (the scan) */
            if (t0_vary(t, a)) BAD(t);
            args[i] = (Val){false, t0_printf(t, "ka%d_%d", id, i), -1};
            P("%s ka%d_%d = %s;\n", emit_ctype(E, pt), id, i, emit_expr_str(E, a, pt));
            continue;
        }
        Val v = t0_conv(t, t0_ev(t, a, m), a->ty, pt);
        if (!v.vec) {
            const char *u = t0_printf(t, "ka%d_%d", id, i);
            P("%s %s = %s;\n", t0_dtc[v.dt], u, v.s);
            v.s = u;
        }
        args[i] = v;
    }
    const char *r = NULL;
    if (memo) {
        t->kc_dt[t->nkc] = rdt;
        r = t0_printf(t, "kc%d", t->nkc++);
    } else if (value) {
        r = t0_tmp(t, rdt);
    }
    /* the callee's own names, in a block of the call's (they may repeat the caller's) */
    PS("{\n");
    declare_locals(t, f);
    const char *rm = m;
    if (t0_pm_get(t, &t->fns, f) & 4) {
        rm = t0_mask_new(t);
        if (m) P("memcpy(%s, %s, (size_t)n_);\n", rm, m);
        else P("memset(%s, 1, (size_t)n_);\n", rm);
    }
    int saved_alias = t->nalias;
    for (int i = 0; i < n->call.bound.n && i < f->nparams; i++) {
        Sym *s = f->psyms[i];
        if (!args[i].s) continue;
        if (args[i].dt < 0) {
            P("%s %s = %s; (void)%s;\n", emit_ctype(E, s->ty), emit_sym_name(E, s), args[i].s,
              emit_sym_name(E, s));
            continue;
        }
        if (!t0_varies(t, s)) {
            P("%s %s = %s; (void)%s;\n", emit_ctype(E, s->ty), emit_sym_name(E, s),
              t0_convert_text(t, f->params[i], s->ty, args[i].s), emit_sym_name(E, s));
            continue;
        }
        /* never assigned in the callee: it reads its argument's array (which nothing
         * writes while the call runs: the caller's variables are out of its reach, its
         * temporaries held) */
        if (args[i].vec && args[i].dt == t0_vdt(s->ty) && !s->is_local && s->nassign == 0 &&
            t->nalias < 64) {
            t->alias_sym[t->nalias] = s;
            t->alias_arr[t->nalias++] = args[i].s;
            continue;
        }
        store_sym(t, s, args[i], f->params[i], rm);
    }
    const char *saved_label = t->fn_label, *saved_ret = t->ret_arr;
    const Type *saved_rty = t->ret_ty;
    int saved_rdt = t->ret_dt, saved_chain = t->nchain;
    t->fn_label = t0_printf(t, "kce%d_", id);
    t->ret_arr = value ? r : NULL;
    t->ret_ty = f->ret;
    t->ret_dt = value ? t0_vdt(f->ret) : 0;
    if (value && t->ret_dt != rdt) BAD(t);
    push(t, rm != m ? rm : NULL, 1);
    block(t, &f->def->def.body, rm);
    t->nchain = saved_chain;
    t->nalias = saved_alias;
    t->fn_label = saved_label;
    t->ret_arr = saved_ret;
    t->ret_ty = saved_rty;
    t->ret_dt = saved_rdt;
    P("kce%d_:;\n}\n", id);
    if (rm != m) t->nmask--;
    if (memo && !t->bad) {
        struct Memo *me = &t->memo[t->nmemo++];
        me->f = f;
        me->nargs = n->call.bound.n;
        for (int i = 0; i < me->nargs; i++) {
            me->arg[i] = n->call.bound.v[i];
            me->epoch[i] = me->arg[i]->kind == E_NAME ? t0_pm_get(t, &t->epochs, me->arg[i]->sym) : 0;
        }
        me->res = r;
        me->depth = t->bdepth;
        me->serial = t->loop_serial;
    }
    return value ? (Val){true, r, rdt} : (Val){false, "0", KILN_INT64};
}

/* ---- the entry ----------------------------------------------------------------- */

static const char *hook(Emit *E, const Node *n) {
    T0 *t = E->t0;
    for (int i = t->nl - 1; i >= 0; i--)
        if (t->lnode[i] == n) return t->ltext[i];
    if (n->kind == E_NAME && n->sym && t0_varies(t, n->sym))
        return t0_printf(t, "%s[kk_]", t0_var(t, n->sym));
    return NULL;
}

/* Numbers every varying symbol's array (of the kernel and the functions it inlines). */
static void number_vars(T0 *t, Buf *decl) {
    for (int i = 0; i < t->sym.cap; i++) {
        if (!t->sym.k[i] || !(t->sym.v[i] & 1)) continue;
        const Sym *s = t->sym.k[i];
        int dt = t0_vdt(s->ty);
        if (dt < 0) {
            BAD(t);
            return;
        }
        t->sym.v[i] = 1 | (t->nvars << 1);
        buf_printf(decl, "_Alignas(32) %s kv%d[%d];\n", t0_dtc[dt], t->nvars, KV_LANES);
        t->frame += (int64_t)kiln_dtype_size((kiln_dtype)dt) * KV_LANES;
        t->nvars++;
    }
}

static bool t0_refused(T0 *t) {
    if (getenv("KILN_DEBUG_TIER0"))
        fprintf(stderr, "kiln: no tier-0 vector entry for %s (%s:%d)\n",
                t->E->R->kernel->fi->name, t->bad_file ? t->bad_file : "?", t->bad_line);
    return false;
}

bool emit_tier0_entry(Emit *E, FuncSpec *k, Buf *out) {
    if (E->cuda || E->blocks || E->debug || E->R->cooperative || E->too_big) return false;
    T0 T;
    memset(&T, 0, sizeof T);
    T0 *t = &T;
    t->E = E;
    t->A = &E->C->arena;
    t->inline_call = inline_call;
    /* the guard the optimised entry folds into its loops, folded here into the blocks'
     * range the same way when nothing of it stays in the body (plan.h, GuardPlan) */
    if (E->plan.guard.stmt && E->plan.guard.nkeep == 0) {
        t->guard = E->plan.guard.stmt;
        t->guard_early = E->plan.guard.early;
    }
    /* the scan, to its fixed point */
    for (int round = 0; round < 64 && !t->bad; round++) {
        t->changed = false;
        t->round = round;
        t0_scan_fn(t, k);
        if (!t->changed) break;
        if (round == 63) BAD(t);
    }
    if (t->bad) return t0_refused(t);
    t->round = -2; /* writing: t0_vary() finds every function scanned (round + 1 == -1) */
    for (int i = 0; i < t->scanned.cap; i++)
        if (t->scanned.k[i]) t->scanned.v[i] = -1;
    Buf decl, body;
    buf_init_arena(&decl, t->A);
    buf_init_arena(&body, t->A);
    number_vars(t, &decl);
    if (t->bad) return t0_refused(t);
    t->live = (t0_pm_get(t, &t->fns, k) & 4) != 0;
    /* the plan of the optimised entry does not apply here */
    CpuPlan saved_plan = E->plan;
    memset(&E->plan, 0, sizeof E->plan);
    Buf *saved_o = E->o;
    const char *saved_leave = E->leave;
    E->t0 = t;
    E->t0_text = hook;
    E->f = k;
    E->lanes = E->in_lane = false;
    E->mask = NULL;
    E->tmp = 0;
    E->nloops = 0;
    E->line = -1;
    E->leave = "return;";
    E->o = &body;
    E->gvalues.n = 0; /* the entry's own locals of frozen tuples (emit_global_value) */
    declare_locals(t, k);
    for (int i = 0; i < k->nparams; i++) {
        Sym *s = k->psyms[i];
        const Type *pt = k->params[i];
        if (!s || !(ty_is_scalar(pt) || pt->kind == TY_ARRAY || pt->kind == TY_TUPLE ||
                    pt->kind == TY_RECORD || pt->kind == TY_GROUP))
            continue;
        const char *pv = t0_convert_text(t, k->params[i], s->ty, t0_printf(t, "p%d", i));
        if (!t0_varies(t, s)) {
            P("%s %s = %s; (void)%s;\n", emit_ctype(E, s->ty), emit_sym_name(E, s), pv,
              emit_sym_name(E, s));
        } else {
            int dt = t0_vdt(s->ty);
            P("{ %s v_ = %s; kv_mov(%d, kv%d, 0, &v_, 1, n_); }\n", t0_dtc[dt], pv, dt,
              t0_pm_get(t, &t->sym, s) >> 1);
        }
    }
    t->fn_label = "kr_end_";
    const char *m = NULL;
    if (t->live) {
        m = "live_";
        PS("memset(live_, 1, (size_t)n_);\n");
    }
    push(t, m, 1);
    block(t, &k->def->def.body, m);
    PS("kr_end_:;\n");
    Buf gdecl;
    buf_init_arena(&gdecl, t->A);
    E->o = &gdecl;
    emit_gvalue_decls(E);
    E->t0 = NULL;
    E->t0_text = NULL;
    E->o = saved_o;
    E->leave = saved_leave;
    E->plan = saved_plan;
    /* the entry's arrays live on the stack of the launching thread (any Python thread):
     * a kernel that needs more than T0_MAX_FRAME_BYTES of them gets no vector entry */
    t->frame += (int64_t)(3 * 8 + 1 + t->maxmask) * KV_LANES;
    for (int d = 0; d < KILN_NDTYPES; d++)
        t->frame += (int64_t)t->maxtmp[d] * kiln_dtype_size((kiln_dtype)d) * KV_LANES;
    for (int i = 0; i < t->nkc; i++)
        t->frame += (int64_t)kiln_dtype_size((kiln_dtype)t->kc_dt[i]) * KV_LANES;
    if (t->frame > T0_MAX_FRAME_BYTES) BAD(t);
    if (t->bad || body.oom || decl.oom) return t0_refused(t);

    Buf *o = out;
    buf_puts(o, "\n/* ---- tier 0's vector entry (src/emit/emit_tier0.c) ---- */\n#line 1 \"<kiln entry>\"\n");
    buf_printf(o, "void kv_bin(int, int, void *, const void *, int, const void *, int, long);\n"
                  "void kv_bin2(int, int, int, void *, const void *, int, const void *, int, const void *, int, long);\n"
                  "void kv_cmp(int, int, unsigned char *, const void *, int, const void *, int, long);\n"
                  "void kv_un(int, int, void *, const void *, long);\n"
                  "void kv_cvt(int, int, void *, const void *, long);\n"
                  "void kv_sel(int, void *, const unsigned char *, const void *, int, const void *, int, long);\n"
                  "void kv_mov(int, void *, const unsigned char *, const void *, int, long);\n"
                  "void kv_load(int, void *, const void *, const i64 *, int, const unsigned char *, long);\n"
                  "void kv_store(int, void *, const i64 *, int, const unsigned char *, const void *, int, long);\n"
                  "void kv_axpy(i64 *, const i64 *, int, i64, const i64 *, int, i64, long);\n"
                  "void kv_iota(i64 *, i64, long);\n"
                  "void kv_divmod(i64 *, i64 *, const i64 *, i64, long);\n"
                  "void kv_mand(unsigned char *, const unsigned char *, const unsigned char *, long);\n"
                  "void kv_mandn(unsigned char *, const unsigned char *, const unsigned char *, long);\n"
                  "void kv_mnot(unsigned char *, const unsigned char *, long);\n"
                  "int kv_any(const unsigned char *, long);\n"
                  "const int kiln_vector_entry_ = 1;\n");
    buf_puts(o, "KILN_EXPORT void kiln_ventry(const kiln_launch *L, const i64 *P) {\n");
    /* the parameters, as the scalar entry unpacks them */
    int slot = 0;
    for (int i = 0; i < k->nparams; i++) {
        const Type *ty = k->params[i];
        const char *ct = emit_ctype(E, ty);
        if (ty->kind == TY_ARRAY) {
            buf_printf(o, "    %s p%d;\n    p%d.data = (%s *)(uintptr_t)P[%d];\n", ct, i, i,
                       emit_elem_ctype(E, ty->elem), slot++);
            if (!ty->ptr) {
                for (int d = 0; d < ty->ndim; d++) buf_printf(o, "    p%d.shape[%d] = P[%d];\n", i, d, slot++);
                for (int d = 0; d < ty->ndim; d++) buf_printf(o, "    p%d.strides[%d] = P[%d];\n", i, d, slot++);
            }
        } else if (ty->kind == TY_RECORD) {
            buf_printf(o, "    %s p%d = (%s)(uintptr_t)P[%d];\n", ct, i, ct, slot);
            slot += 1;
        } else {
            buf_printf(o, "    %s p%d;\n    memcpy(&p%d, &P[%d], sizeof p%d);\n", ct, i, i, slot, i);
            slot += emit_param_slots(ty);
        }
    }
    buf_puts(o, "    const i64 GX_ = L->grid[0], GY_ = L->grid[1], GZ_ = L->grid[2];\n"
                "    const i64 BX_ = L->block[0], BY_ = L->block[1], BZ_ = L->block[2];\n"
                "    struct kiln_err *E_ = L->err;\n"
                "    const int *S_ = L->stop ? L->stop : &kiln_never_;\n"
                "    kiln_blk *const B_ = 0;\n    (void)B_;\n");
    buf_printf(o, "    _Alignas(32) i64 gx_[%d], txv_[%d], bxv_[%d];\n", KV_LANES, KV_LANES, KV_LANES);
    if (t->live) buf_printf(o, "    unsigned char live_[%d];\n", KV_LANES);
    for (int d = 0; d < KILN_NDTYPES; d++)
        for (int i = 0; i < t->maxtmp[d]; i++)
            buf_printf(o, "    _Alignas(32) %s kt%d_%d[%d];\n", t0_dtc[d], d, i, KV_LANES);
    for (int i = 0; i < t->maxmask; i++) buf_printf(o, "    unsigned char km%d[%d];\n", i, KV_LANES);
    for (int i = 0; i < t->nkc; i++)
        buf_printf(o, "    _Alignas(32) %s kc%d[%d];\n", t0_dtc[t->kc_dt[i]], i, KV_LANES);
    buf_put(o, decl.p ? decl.p : "", decl.len);
    {
        GuardPlan g = E->plan.guard;
        if (!t->guard) E->plan.guard.stmt = NULL;
        Buf *so = E->o;
        E->o = o;
        emit_guard_bounds(E);
        E->o = so;
        E->plan.guard = g;
    }
    buf_printf(o,
               "    const i64 NX_ = GX_ * BX_, NY_ = GY_ * BY_, NZ_ = GZ_ * BZ_;\n"
               "    if (NX_ <= 0 || NY_ <= 0 || NZ_ <= 0) return;\n"
               "    const i64 nxb_ = (NX_ + %d) / %d, total_ = nxb_ * NY_ * NZ_;\n"
               "    const i64 nt_ = L->pool_nt > 1 ? L->pool_nt : 1, me_ = L->pool_nt > 1 ? L->pool_me : 0;\n"
               "    const i64 per_ = (total_ + nt_ - 1) / nt_, lo_ = me_ * per_;\n"
               "    const i64 hi_ = total_ - lo_ < per_ ? total_ : lo_ + per_;\n"
               "    for (i64 b_ = lo_; b_ < hi_; b_++) {\n"
               "        KILN_POLL(return;)\n"
               "        const i64 xb_ = b_ %% nxb_, yz_ = b_ / nxb_;\n"
               "        const i64 y_ = yz_ %% NY_, z_ = yz_ / NY_;\n"
               "        const i64 ty_ = y_ %% BY_, by_ = y_ / BY_, tz_ = z_ %% BZ_, bz_ = z_ / BZ_;\n"
               "        (void)ty_; (void)by_; (void)tz_; (void)bz_;\n"
               "        if (y_ < ylo_ || y_ >= yhi_ || z_ < zlo_ || z_ >= zhi_) continue;\n"
               "        i64 x0_ = xb_ * %d, xe_ = NX_ - x0_ < %d ? NX_ : x0_ + %d;\n"
               "        if (x0_ < xlo_) x0_ = xlo_;\n"
               "        if (xe_ > xhi_) xe_ = xhi_;\n"
               "        if (xe_ <= x0_) continue;\n"
               "        const long n_ = (long)(xe_ - x0_);\n"
               "        kv_iota(gx_, x0_, n_);\n",
               KV_LANES - 1, KV_LANES, KV_LANES, KV_LANES, KV_LANES);
    if (t->txbx) buf_puts(o, "        kv_divmod(bxv_, txv_, gx_, BX_, n_);\n");
    buf_puts(o, "        { const i64 tx_ = 0, bx_ = 0; (void)tx_; (void)bx_;\n");
    buf_put(o, gdecl.p ? gdecl.p : "", gdecl.len);
    buf_put(o, body.p ? body.p : "", body.len);
    buf_puts(o, "        }\n    }\n}\n");
    return !o->oom;
}
