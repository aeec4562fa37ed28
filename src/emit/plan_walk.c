/* plan_walk.c: the walks over the typed tree that the plan and the emitter share.
 *
 * Whether an expression is pure, and visitors over every expression node of a
 * statement or block in the order they run.  They recurse along expressions
 * and nested blocks, whose depths the parser bounds (KILN_MAX_EXPR_DEPTH,
 * KILN_MAX_NESTING); elif chains are walked with a loop.
 */
#include <string.h>

#include "plan_int.h"

bool plan_pure(const Node *n) {
    if (!n) return true;
    switch ((NodeKind)n->kind) {
    case E_INT: case E_FLOAT: case E_IMAG: case E_BOOL: case E_NONE: case E_NAME: case E_STR:
        return true;
    case E_BINOP:
    case E_BOOLOP: return plan_pure(n->bin.l) && plan_pure(n->bin.r);
    case E_UNARY: return plan_pure(n->un.x);
    case E_COMPARE:
        for (int i = 0; i < n->cmp.operands.n; i++)
            if (!plan_pure(n->cmp.operands.v[i])) return false;
        return true;
    case E_IFEXP:
        return plan_pure(n->ifexp.cond) && plan_pure(n->ifexp.then) && plan_pure(n->ifexp.orelse);
    case E_ATTR: return plan_pure(n->attr.base);
    case E_SUBSCRIPT:
        for (int i = 0; i < n->sub.idx.n; i++)
            if (!plan_pure(n->sub.idx.v[i])) return false;
        return plan_pure(n->sub.base);
    case E_SLICE: return plan_pure(n->slice.lo) && plan_pure(n->slice.hi) && plan_pure(n->slice.step);
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++)
            if (!plan_pure(n->tuple.v[i])) return false;
        return true;
    case E_CALL:
        if (n->callee) return false;
        if (n->intr) {
            switch ((IntrKind)n->intr->kind) {
            case IK_ATOMIC: case IK_SHFL: case IK_VOTE: case IK_ACTIVEMASK: case IK_MATCH: case IK_SYNCTHREADS:
            case IK_THREADFENCE: case IK_SHARED_ARRAY: case IK_LOCAL_ARRAY: case IK_CG:
            case IK_ARRAY_COPY: case IK_CACHE:
                return false;
            default: break;
            }
        }
        for (int i = 0; i < n->call.bound.n; i++)
            if (n->call.bound.v[i] && !plan_pure(n->call.bound.v[i])) return false;
        return true;
    default: return false;
    }
}

/* Every expression node under n (n included), parents first. */
void plan_each_expr(const Node *n, void (*fn)(void *, const Node *), void *arg) {
    if (!n) return;
    fn(arg, n);
    switch ((NodeKind)n->kind) {
    case E_BINOP: case E_BOOLOP:
        plan_each_expr(n->bin.l, fn, arg);
        plan_each_expr(n->bin.r, fn, arg);
        return;
    case E_UNARY: plan_each_expr(n->un.x, fn, arg); return;
    case E_COMPARE:
        for (int i = 0; i < n->cmp.operands.n; i++) plan_each_expr(n->cmp.operands.v[i], fn, arg);
        return;
    case E_IFEXP:
        plan_each_expr(n->ifexp.cond, fn, arg);
        plan_each_expr(n->ifexp.then, fn, arg);
        plan_each_expr(n->ifexp.orelse, fn, arg);
        return;
    case E_CALL: {
        /* a for loop's range() keeps its arguments unbound */
        const NodeList *a = n->intr && n->intr->kind == IK_RANGE ? &n->call.args : &n->call.bound;
        for (int i = 0; i < a->n; i++) plan_each_expr(a->v[i], fn, arg);
        return;
    }
    case E_SUBSCRIPT:
        plan_each_expr(n->sub.base, fn, arg);
        for (int i = 0; i < n->sub.idx.n; i++) plan_each_expr(n->sub.idx.v[i], fn, arg);
        return;
    case E_ATTR: plan_each_expr(n->attr.base, fn, arg); return;
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++) plan_each_expr(n->tuple.v[i], fn, arg);
        return;
    case E_SLICE:
        plan_each_expr(n->slice.lo, fn, arg);
        plan_each_expr(n->slice.hi, fn, arg);
        plan_each_expr(n->slice.step, fn, arg);
        return;
    default: return;
    }
}


/* Every expression of statement st and the statements in it, in the order
 * they run (a for loop's range before its counter). */
void plan_each_stmt(const Node *st, void (*fn)(void *, const Node *), void *arg) {
    switch ((NodeKind)st->kind) {
    case S_EXPR: plan_each_expr(st->expr, fn, arg); return;
    case S_ASSIGN:
        plan_each_expr(st->assign.value, fn, arg);
        for (int i = 0; i < st->assign.targets.n; i++) plan_each_expr(st->assign.targets.v[i], fn, arg);
        return;
    case S_AUGASSIGN:
        plan_each_expr(st->aug.target, fn, arg);
        plan_each_expr(st->aug.value, fn, arg);
        return;
    case S_IF:
        for (const Node *c = st; c; c = elif_of(c)) {
            plan_each_expr(c->ifs.cond, fn, arg);
            plan_each_block(&c->ifs.body, fn, arg);
            if (!elif_of(c)) plan_each_block(&c->ifs.orelse, fn, arg);
        }
        return;
    case S_WHILE:
        plan_each_expr(st->ifs.cond, fn, arg);
        plan_each_block(&st->ifs.body, fn, arg);
        plan_each_block(&st->ifs.orelse, fn, arg);
        return;
    case S_FOR:
        plan_each_expr(st->fors.iter, fn, arg);
        plan_each_expr(st->fors.target, fn, arg);
        plan_each_block(&st->fors.body, fn, arg);
        plan_each_block(&st->fors.orelse, fn, arg);
        return;
    case S_RETURN: plan_each_expr(st->ret.value, fn, arg); return;
    case S_ASSERT:
        plan_each_expr(st->assrt.test, fn, arg);
        plan_each_expr(st->assrt.msg, fn, arg);
        return;
    default: return;
    }
}

void plan_each_block(const NodeList *l, void (*fn)(void *, const Node *), void *arg) {
    for (int i = 0; i < l->n; i++) plan_each_stmt(l->v[i], fn, arg);
}

void plan_visit_sym(void *arg, const Node *n) {
    const PlanSymVisit *v = arg;
    if (n->kind == E_NAME && n->sym) v->fn(v->arg, n->sym);
}

void plan_lane_syms(const NodeList *l, int from, int to, void (*fn)(void *, const Sym *),
                    void *arg) {
    PlanSymVisit v = {fn, arg};
    for (int i = from; i < to; i++) plan_each_stmt(l->v[i], plan_visit_sym, &v);
}

/* Whether array expression b may be an array the kernel writes: its root
 * variable may hold a parameter it writes (or one that sema does not track). */

/* ---- launch invariants (the guard's bounds, a grid-stride loop's stop) ---- */

/* The value of a local the statements before the guard assigned once from launch
 * invariants (GuardPlan.def_*), or NULL. */
Node *plan_def_of(const GuardPlan *g, const Node *n) {
    for (int i = 0; g && n->kind == E_NAME && i < g->ndefs; i++)
        if (g->def_sym[i] == n->sym) return g->def_val[i];
    return NULL;
}

/* Whether n has one value for the whole launch: parameters, their shapes and
 * sizes, integer constants, sums and products of those, and locals g knows to hold
 * such a value (g may be NULL). */
bool plan_invariant(const GuardPlan *g, const Node *n) {
    if ((n->flags & NF_CONST) && ty_is_scalar(n->ty)) return n->ty->kind != TY_FLOAT;
    switch ((NodeKind)n->kind) {
    case E_NAME: return (n->sym && n->sym->param >= 0 && !n->sym->is_local) || plan_def_of(g, n);
    case E_ATTR:
        return n->attr.base->ty && n->attr.base->ty->kind == TY_ARRAY &&
               (strcmp(n->attr.attr, "size") == 0) && plan_invariant(NULL, n->attr.base);
    case E_SUBSCRIPT: {
        int64_t k;
        Node *b = n->sub.base;
        return b->kind == E_ATTR && strcmp(b->attr.attr, "shape") == 0 &&
               b->attr.base->ty->kind == TY_ARRAY && plan_invariant(NULL, b->attr.base) &&
               n->sub.idx.n == 1 && sema_const_int(n->sub.idx.v[0], &k);
    }
    case E_BINOP:
        return (n->op == B_ADD || n->op == B_SUB || n->op == B_MUL) && ty_is_int(n->ty) &&
               plan_invariant(g, n->bin.l) && plan_invariant(g, n->bin.r);
    case E_CALL:
        return n->intr && n->intr->kind == IK_LEN && plan_invariant(NULL, n->call.bound.v[0]);
    default: return false;
    }
}

/* n with each local of g replaced by its value: what the entry can compute. */
Node *plan_resolved(const GuardPlan *g, Arena *a, Node *n) {
    Node *d = plan_def_of(g, n);
    if (d) return d;
    if (n->kind != E_BINOP || (!plan_def_of(g, n->bin.l) && !plan_def_of(g, n->bin.r) &&
                               n->bin.l->kind != E_BINOP && n->bin.r->kind != E_BINOP))
        return n;
    Node *c = arena_alloc(a, sizeof *c);
    *c = *n;
    c->bin.l = plan_resolved(g, a, n->bin.l);
    c->bin.r = plan_resolved(g, a, n->bin.r);
    return c;
}

/* `n = <invariant>` or `a, b = x.shape` (x an array parameter) before the guard: its
 * locals, assigned nowhere else, join g's defs. */
void plan_note_defs(GuardPlan *g, Arena *a, const Node *st) {
    if (st->kind != S_ASSIGN || st->assign.targets.n != 1) return;
    const Node *t = st->assign.targets.v[0];
    Node *v = st->assign.value;
    if (t->kind == E_NAME) {
        if (t->sym && t->sym->param < 0 && t->sym->nassign == 1 && ty_is_int(t->sym->ty) &&
            ty_is_int(v->ty) && plan_invariant(g, v) && g->ndefs < PLAN_MAX_DEFS) {
            g->def_sym[g->ndefs] = t->sym;
            g->def_val[g->ndefs++] = plan_resolved(g, a, v);
        }
        return;
    }
    if (t->kind != E_TUPLE || v->kind != E_ATTR || strcmp(v->attr.attr, "shape") != 0 ||
        !v->attr.base->ty || v->attr.base->ty->kind != TY_ARRAY || !plan_invariant(NULL, v->attr.base) ||
        t->tuple.n != v->attr.base->ty->ndim)
        return;
    for (int k = 0; k < t->tuple.n && g->ndefs < PLAN_MAX_DEFS; k++) {
        const Node *x = t->tuple.v[k];
        if (x->kind != E_NAME || !x->sym || x->sym->param >= 0 || x->sym->nassign != 1 ||
            !ty_is_int(x->sym->ty))
            continue;
        /* x.shape[k], as sema types the one the user could have written */
        Node *ix = arena_alloc(a, sizeof *ix);
        ix->kind = E_INT;
        ix->sp = x->sp;
        ix->flags = NF_CONST;
        ix->ty = &ty_weak_int;
        ix->ilit.v = (uint64_t)k;
        ix->cval.i = k;
        Node *s = arena_alloc(a, sizeof *s);
        s->kind = E_SUBSCRIPT;
        s->sp = x->sp;
        s->ty = x->sym->ty;
        s->sub.base = v;
        s->sub.idx.v = arena_alloc(a, sizeof(Node *));
        s->sub.idx.v[0] = ix;
        s->sub.idx.n = 1;
        g->def_sym[g->ndefs] = x->sym;
        g->def_val[g->ndefs++] = s;
    }
}

bool plan_has_loop(const NodeList *l) {
    for (int i = 0; i < l->n; i++) {
        const Node *st = l->v[i];
        if (st->kind == S_FOR || st->kind == S_WHILE) return true;
        if (st->kind == S_IF)
            for (const Node *c = st; c; c = elif_of(c))
                if (plan_has_loop(&c->ifs.body) ||
                    (!elif_of(c) && plan_has_loop(&c->ifs.orelse)))
                    return true;
    }
    return false;
}

/* A statement that may come before the guard: a pure assignment to names, pass, a
 * docstring. */
bool plan_simple_prefix(const Node *st) {
    if (st->kind == S_PASS) return true;
    if (st->kind == S_EXPR) return st->expr->kind == E_STR;
    if (st->kind != S_ASSIGN) return false;
    for (int i = 0; i < st->assign.targets.n; i++) {
        const Node *t = st->assign.targets.v[i];
        if (t->kind == E_TUPLE) {
            for (int j = 0; j < t->tuple.n; j++)
                if (t->tuple.v[j]->kind != E_NAME) return false;
        } else if (t->kind != E_NAME) {
            return false;
        }
    }
    return plan_pure(st->assign.value);
}

