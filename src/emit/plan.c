/* plan.c: the CPU entry's guard folding, loop order and private copies, then
 * lane mode through plan_lanes.c (plan.h says what and why).
 *
 * Everything here reads the typed tree and writes a CpuPlan; nothing emits.
 * The walks recurse along expressions and nested blocks, whose depths the
 * parser bounds (KILN_MAX_EXPR_DEPTH, KILN_MAX_NESTING); elif chains are walked
 * with a loop.
 */
#include <string.h>

#include "plan_int.h"

/* ---- the grid coordinates ------------------------------------------------------------ */

/* The variables holding the grid coordinates: `i = kiln.grid(1)` or
 * `i, j[, k] = kiln.grid(n)` among the first n statements, each variable
 * assigned only there. */
static void grid_syms(const NodeList *body, int n, const Sym *dims[3]) {
    dims[0] = dims[1] = dims[2] = NULL;
    for (int i = 0; i < n; i++) {
        const Node *st = body->v[i];
        if (st->kind != S_ASSIGN || st->assign.targets.n != 1) continue;
        const Node *v = st->assign.value, *t = st->assign.targets.v[0];
        if (v->kind != E_CALL || !v->intr || v->intr->kind != IK_GRID) continue;
        int m = t->kind == E_TUPLE ? t->tuple.n : 1;
        for (int d = 0; d < m && d < 3; d++) {
            const Node *x = t->kind == E_TUPLE ? t->tuple.v[d] : t;
            if (x->kind == E_NAME && x->sym && x->sym->nassign == 1 && x->sym->param < 0)
                dims[d] = x->sym;
        }
        return;
    }
}

static int dim_of_sym(const Sym *const dims[3], const Sym *s) {
    for (int d = 0; d < 3; d++)
        if (s && dims[d] == s) return d;
    return -1;
}

/* ---- the guard -------------------------------------------------------------------- */

static void keep_whole(GuardPlan *g, Node *c) {
    if (g->nkeep < PLAN_MAX_KEEP) g->keep[g->nkeep++] = c;
    else g->nb = -100; /* too complex: no plan */
}

/* Whether `l OP r` (compared as o) bounds a grid coordinate by a launch
 * invariant, within the bounds left. */
static bool pair_folds(const GuardPlan *g, const Sym *const dims[3], const Node *l, int op,
                       const Node *r, const Type *o) {
    int dl = l->kind == E_NAME ? dim_of_sym(dims, l->sym) : -1;
    int dr = r->kind == E_NAME ? dim_of_sym(dims, r->sym) : -1;
    return o && ty_is_int(o) && (ty_is_signed(o) || o->weak) && op != C_NE &&
           g->nb < (op == C_EQ ? PLAN_MAX_BOUNDS - 1 : PLAN_MAX_BOUNDS) &&
           ((dl >= 0 && plan_invariant(g, r)) || (dr >= 0 && plan_invariant(g, l)));
}

static void plan_pair(GuardPlan *g, const Sym *dims[3], Node *l, int op, Node *r,
                      const Type *o) {
    int dl = l->kind == E_NAME ? dim_of_sym(dims, l->sym) : -1;
    int dr = r->kind == E_NAME ? dim_of_sym(dims, r->sym) : -1;
    if (pair_folds(g, dims, l, op, r, o)) {
        int d = dl;
        if (dl < 0) { /* e OP x  ->  x OP' e */
            static const int flip[] = {C_GT, C_GE, C_LT, C_LE, C_EQ, C_NE};
            op = flip[op];
            Node *t = l;
            l = r;
            r = t;
            d = dr;
        }
        switch (op) {
        case C_LT: g->b[g->nb++] = (Bound){r, false, 0, d}; return;
        case C_LE: g->b[g->nb++] = (Bound){r, false, 1, d}; return;
        case C_GT: g->b[g->nb++] = (Bound){r, true, 1, d}; return;
        case C_GE: g->b[g->nb++] = (Bound){r, true, 0, d}; return;
        case C_EQ:
            if (g->nb < PLAN_MAX_BOUNDS - 1) {
                g->b[g->nb++] = (Bound){r, true, 0, d};
                g->b[g->nb++] = (Bound){r, false, 1, d};
                return;
            }
            break;
        default: break;
        }
    }
    if (g->nkeep < PLAN_MAX_KEEP) {
        int k = g->nkeep++;
        g->keep[k] = NULL;
        g->keep_l[k] = l;
        g->keep_r[k] = r;
        g->keep_op[k] = op;
        g->keep_ty[k] = o;
    } else {
        g->nb = -100;
    }
}

static void plan_conjuncts(GuardPlan *g, const Sym *dims[3], Node *c) {
    if (c->kind == E_BOOLOP && c->op == BO_AND && c->opty->kind == TY_BOOL) {
        plan_conjuncts(g, dims, c->bin.l);
        plan_conjuncts(g, dims, c->bin.r);
        return;
    }
    if (c->kind == E_COMPARE && (c->flags & NF_CONST)) { /* `x is None` and the like */
        keep_whole(g, c);
        return;
    }
    if (c->kind == E_COMPARE && c->cmp.operands.n == 2) {
        plan_pair(g, dims, c->cmp.operands.v[0], c->cmp.ops[0], c->cmp.operands.v[1],
                  c->cmp.optys[0]);
        return;
    }
    if (c->kind == E_COMPARE) {
        for (int i = 0; i < c->cmp.operands.n; i++)
            if (!plan_pure(c->cmp.operands.v[i])) {
                keep_whole(g, c);
                return;
            }
        for (int i = 0; i + 1 < c->cmp.operands.n; i++)
            plan_pair(g, dims, c->cmp.operands.v[i], c->cmp.ops[i], c->cmp.operands.v[i + 1],
                      c->cmp.optys[i]);
        return;
    }
    keep_whole(g, c);
}

/* The disjuncts of an early return's condition: each that, negated, bounds a
 * coordinate is folded (`i >= n` is the bound i < n); the others stay whole. */
static void plan_disjuncts(GuardPlan *g, const Sym *dims[3], Node *c) {
    if (c->kind == E_BOOLOP && c->op == BO_OR && c->opty->kind == TY_BOOL) {
        plan_disjuncts(g, dims, c->bin.l);
        plan_disjuncts(g, dims, c->bin.r);
        return;
    }
    static const int negate[] = {C_GE, C_GT, C_LE, C_LT, C_NE, C_EQ};
    if (c->kind == E_COMPARE && c->cmp.operands.n == 2 && !(c->flags & NF_CONST)) {
        Node *l = c->cmp.operands.v[0], *r = c->cmp.operands.v[1];
        int op = negate[c->cmp.ops[0]];
        if (pair_folds(g, dims, l, op, r, c->cmp.optys[0])) {
            plan_pair(g, dims, l, op, r, c->cmp.optys[0]);
            return;
        }
    }
    keep_whole(g, c);
}

/* `if <disjuncts>: return` (nothing else in the if) after simple statements, the
 * early return that many kernels start with: the guard of everything after it. */
/* The bounds as the entry computes them: locals replaced by their values. */
static void resolve_bounds(GuardPlan *g, Arena *a) {
    for (int i = 0; i < g->nb; i++) g->b[i].e = plan_resolved(g, a, g->b[i].e);
}

static bool plan_early_return(const NodeList *body, const Sym *dims[3], Arena *a,
                              GuardPlan *out) {
    GuardPlan g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < body->n; i++) {
        Node *st = body->v[i];
        if (st->kind == S_IF && st->ifs.orelse.n == 0 && st->ifs.body.n == 1 &&
            st->ifs.body.v[0]->kind == S_RETURN &&
            (!st->ifs.body.v[0]->ret.value || st->ifs.body.v[0]->ret.value->kind == E_NONE) &&
            plan_pure(st->ifs.cond)) {
            plan_disjuncts(&g, dims, st->ifs.cond);
            if (g.nb <= 0) return false;
            resolve_bounds(&g, a);
            g.stmt = st;
            g.early = true;
            *out = g;
            return true;
        }
        if (!plan_simple_prefix(st)) return false;
        plan_note_defs(&g, a, st);
    }
    return false;
}

static void plan_guard(const FuncSpec *k, const Sym *dims[3], Arena *a, GuardPlan *out) {
    memset(out, 0, sizeof *out);
    const NodeList *body = &k->def->def.body;
    if (plan_early_return(body, dims, a, out)) return;
    int last = body->n - 1;
    while (last >= 0 && (body->v[last]->kind == S_PASS ||
                         (body->v[last]->kind == S_EXPR && body->v[last]->expr->kind == E_STR)))
        last--;
    if (last < 1) return;
    Node *st = body->v[last];
    if (st->kind != S_IF || st->ifs.orelse.n != 0) return;
    GuardPlan g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < last; i++) {
        if (!plan_simple_prefix(body->v[i])) return;
        plan_note_defs(&g, a, body->v[i]);
    }
    plan_conjuncts(&g, dims, st->ifs.cond);
    if (g.nb <= 0) return;
    resolve_bounds(&g, a);
    g.stmt = st;
    *out = g;
}

/* ---- the loop order ------------------------------------------------------------------- */

typedef struct Votes {
    uint64_t atomic_only; /* bit p: parameter p seen as the array of a private-able atomic */
    uint64_t other_use;   /* bit p: parameter p used any other way */
    uint64_t varied;      /* bit p: its atomics use an index that is not a constant, or
                           * more than PLAN_ACC_SLOTS constants */
    uint64_t indexed;     /* bit p: nslot[p] constant indices seen, in slot_index[p] */
    uint64_t minmax;      /* bit p: max/min atomics on it (a private copy only as a scalar) */
    uint64_t mixed;       /* bit p: atomics of two kinds on one element of it: none */
    uint64_t kinds;       /* bit p: atomics of two kinds on it (at different elements: a
                           * scalar per element, no private copy of the array) */
    uint8_t op[64];       /* PLAN_ACC_* of its first atomic */
    uint8_t nslot[64];
    int64_t slot_index[64][PLAN_ACC_SLOTS];
    uint8_t slot_op[64][PLAN_ACC_SLOTS];
    int natomic, nsites[64]; /* atomics seen in the kernel; of them, on parameter p */
    bool calls;           /* the kernel calls a device function */
    bool loops;           /* it has a for or while loop */
    const Sym *dims[3];
    int64_t cost[3]; /* weighted distance from the unit-stride position */
    int64_t seen[3]; /* weighted accesses that index with the coordinate */
    /* the same, of the accesses inside loops that may run long (a range whose length
     * is not a constant of at most PLAN_SHORT_LOOP, a while): a row per thread */
    int64_t long_cost[3], long_seen[3];
    /* ...and whether any of those strided ones is a store, or of elements narrower than
     * 8 bytes: the cases where the lanes' scatters and gathers lose (plan_cpu) */
    bool long_bad[3];
    int in_long;
} Votes;

static bool mentions(const Votes *V, const Node *n) {
    if (!n) return false;
    switch ((NodeKind)n->kind) {
    case E_NAME: return dim_of_sym(V->dims, n->sym) >= 0;
    case E_BINOP: case E_BOOLOP: return mentions(V, n->bin.l) || mentions(V, n->bin.r);
    case E_UNARY: return mentions(V, n->un.x);
    case E_IFEXP:
        return mentions(V, n->ifexp.cond) || mentions(V, n->ifexp.then) ||
               mentions(V, n->ifexp.orelse);
    case E_ATTR: return mentions(V, n->attr.base);
    case E_SUBSCRIPT:
        for (int i = 0; i < n->sub.idx.n; i++)
            if (mentions(V, n->sub.idx.v[i])) return true;
        return mentions(V, n->sub.base);
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++)
            if (mentions(V, n->tuple.v[i])) return true;
        return false;
    case E_COMPARE:
        for (int i = 0; i < n->cmp.operands.n; i++)
            if (mentions(V, n->cmp.operands.v[i])) return true;
        return false;
    case E_CALL:
        for (int i = 0; i < n->call.bound.n; i++)
            if (mentions(V, n->call.bound.v[i])) return true;
        return false;
    default: return false;
    }
}

/* The grid dimension an index steps by one with: `i`, `i + e`, `e + i`,
 * `i - e` where e does not mention a coordinate; else -1. */
static int index_dim(const Votes *V, const Node *n) {
    if (n->kind == E_NAME) return dim_of_sym(V->dims, n->sym);
    if (n->kind != E_BINOP || (n->op != B_ADD && n->op != B_SUB)) return -1;
    int d = index_dim(V, n->bin.l);
    if (d >= 0) return mentions(V, n->bin.r) ? -1 : d;
    if (n->op != B_ADD) return -1;
    d = index_dim(V, n->bin.r);
    return d >= 0 && !mentions(V, n->bin.l) ? d : -1;
}

static void vote(Votes *V, const Node *sub, int weight) {
    const Type *at = sub->sub.base->ty;
    if (!at || at->kind != TY_ARRAY) return;
    const NodeList *idx = &sub->sub.idx;
    Node *const *ix = idx->v;
    int n = idx->n;
    if (n == 1 && ix[0]->kind == E_TUPLE) {
        ix = ix[0]->tuple.v;
        n = idx->v[0]->tuple.n;
    }
    if (n != at->ndim) return; /* a view */
    int unit = at->layout == 'F' ? 0 : n - 1;
    for (int p = 0; p < n; p++) {
        int d = index_dim(V, ix[p]);
        if (d < 0) continue;
        V->seen[d] += weight;
        V->cost[d] += (int64_t)weight * (p > unit ? p - unit : unit - p);
        if (V->in_long) {
            V->long_seen[d] += weight;
            V->long_cost[d] += (int64_t)weight * (p > unit ? p - unit : unit - p);
            if (p != unit && (weight > 1 || ty_bits(at->elem) < 64)) V->long_bad[d] = true;
        }
    }
}

static void walk_expr(Votes *V, const Node *n);

static void walk_list(Votes *V, const NodeList *l) {
    for (int i = 0; i < l->n; i++) walk_expr(V, l->v[i]);
}

static void walk_expr(Votes *V, const Node *n) {
    if (!n) return;
    switch ((NodeKind)n->kind) {
    case E_NAME:
        if (n->sym && n->sym->param >= 0) V->other_use |= 1ull << (n->sym->param & 63);
        return;
    case E_BINOP: case E_BOOLOP: walk_expr(V, n->bin.l); walk_expr(V, n->bin.r); return;
    case E_UNARY: walk_expr(V, n->un.x); return;
    case E_COMPARE: walk_list(V, &n->cmp.operands); return;
    case E_IFEXP:
        walk_expr(V, n->ifexp.cond);
        walk_expr(V, n->ifexp.then);
        walk_expr(V, n->ifexp.orelse);
        return;
    case E_CALL:
        if (n->callee) V->calls = true;
        if (n->intr && n->intr->kind == IK_ATOMIC) V->natomic++;
        /* len(a) reads the shape, which a private copy shares */
        if (n->intr && n->intr->kind == IK_LEN && n->call.bound.n == 1 &&
            n->call.bound.v[0]->kind == E_NAME)
            return;
        walk_list(V, &n->call.bound);
        return;
    case E_SUBSCRIPT:
        vote(V, n, 1);
        walk_expr(V, n->sub.base);
        walk_list(V, &n->sub.idx);
        return;
    case E_ATTR:
        if (n->attr.base->kind == E_NAME &&
            (!strcmp(n->attr.attr, "shape") || !strcmp(n->attr.attr, "size") ||
             !strcmp(n->attr.attr, "ndim")))
            return; /* as len(a) */
        walk_expr(V, n->attr.base);
        return;
    case E_TUPLE: walk_list(V, &n->tuple); return;
    case E_SLICE:
        walk_expr(V, n->slice.lo);
        walk_expr(V, n->slice.hi);
        walk_expr(V, n->slice.step);
        return;
    default: return;
    }
}

/* A store target: the element written counts twice, its indices are reads. */
static void walk_target(Votes *V, const Node *t) {
    if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++) walk_target(V, t->tuple.v[i]);
        return;
    }
    if (t->kind == E_SUBSCRIPT) {
        vote(V, t, 2);
        walk_expr(V, t->sub.base);
        walk_list(V, &t->sub.idx);
    }
}

static void walk_block(Votes *V, const NodeList *l);

/* `range(c)` or `range(a, b)` of constants at most PLAN_SHORT_LOOP apart (a tuple's
 * items, a small stencil's offsets). */
static bool short_range(const Node *it) {
    int64_t lo = 0, hi;
    if (!it || it->kind != E_CALL || !it->intr || it->intr->kind != IK_RANGE ||
        it->call.args.n < 1 || it->call.args.n > 2)
        return false;
    if (it->call.args.n == 2 && !sema_const_int(it->call.args.v[0], &lo)) return false;
    return sema_const_int(it->call.args.v[it->call.args.n - 1], &hi) && hi - lo <= PLAN_SHORT_LOOP;
}

/* `kiln.atomic.add(a, i, v)` or `sub` as a statement, a a parameter array of
 * one dimension that is never reassigned: the index and value are walked as
 * any expression, the array counted apart. */
static bool private_atomic(Votes *V, const Node *e) {
    if (e->kind != E_CALL || !e->intr || e->intr->kind != IK_ATOMIC) return false;
    int sub = e->intr->sub;
    if (sub != IA_ADD && sub != IA_SUB && sub != IA_MAX && sub != IA_MIN) return false;
    const NodeList *a = &e->call.bound;
    if (a->n != 3) return false;
    const Node *arr = a->v[0];
    if (arr->kind != E_NAME || !arr->sym || arr->sym->param < 0 || arr->sym->param >= 64 ||
        arr->sym->nassign != 0 || !arr->ty || arr->ty->kind != TY_ARRAY || arr->ty->ndim < 1 ||
        arr->ty->ptr) /* (a private copy needs the extent) */
        return false;
    if (arr->ty->ndim > 1 && sema_const_int(a->v[1], &(int64_t){0}))
        return false; /* (one constant index is a scalar copy, for 1-D arrays only) */
    const Type *el = arr->ty->elem;
    if (!(ty_is_int(el) || el->dtype == KILN_FLOAT32 || el->dtype == KILN_FLOAT64)) return false;
    int p = arr->sym->param;
    int64_t c;
    uint8_t op = sub == IA_MAX ? PLAN_ACC_MAX : sub == IA_MIN ? PLAN_ACC_MIN : PLAN_ACC_SUM;
    if (V->op[p] && V->op[p] != op) V->kinds |= 1ull << p;
    if (!V->op[p]) V->op[p] = op;
    if (op != PLAN_ACC_SUM) V->minmax |= 1ull << p;
    V->atomic_only |= 1ull << p;
    V->natomic++;
    V->nsites[p]++;
    if (!sema_const_int(a->v[1], &c)) {
        V->varied |= 1ull << p;
    } else {
        int s = 0;
        while (s < V->nslot[p] && V->slot_index[p][s] != c) s++;
        if (s < V->nslot[p]) {
            if (V->slot_op[p][s] != op) V->mixed |= 1ull << p; /* one element, two kinds */
        } else if (s < PLAN_ACC_SLOTS) {
            V->slot_index[p][s] = c;
            V->slot_op[p][s] = op;
            V->nslot[p]++;
            V->indexed |= 1ull << p;
        } else {
            V->varied |= 1ull << p;
        }
    }
    walk_expr(V, a->v[1]);
    walk_expr(V, a->v[2]);
    return true;
}

static void walk_stmt(Votes *V, const Node *n) {
    switch ((NodeKind)n->kind) {
    case S_EXPR:
        if (!private_atomic(V, n->expr)) walk_expr(V, n->expr);
        return;
    case S_ASSIGN:
        for (int i = 0; i < n->assign.targets.n; i++) walk_target(V, n->assign.targets.v[i]);
        walk_expr(V, n->assign.value);
        return;
    case S_AUGASSIGN:
        walk_target(V, n->aug.target);
        walk_expr(V, n->aug.value);
        return;
    case S_IF:
        for (const Node *c = n; c; c = elif_of(c)) {
            walk_expr(V, c->ifs.cond);
            walk_block(V, &c->ifs.body);
            if (!elif_of(c)) walk_block(V, &c->ifs.orelse);
        }
        return;
    case S_WHILE:
        V->loops = true;
        walk_expr(V, n->ifs.cond);
        V->in_long++;
        walk_block(V, &n->ifs.body);
        V->in_long--;
        walk_block(V, &n->ifs.orelse);
        return;
    case S_FOR: {
        V->loops = true;
        walk_expr(V, n->fors.iter);
        bool lng = !short_range(n->fors.iter);
        V->in_long += lng;
        walk_block(V, &n->fors.body);
        V->in_long -= lng;
        walk_block(V, &n->fors.orelse);
        return;
    }
    case S_RETURN: walk_expr(V, n->ret.value); return;
    case S_ASSERT: walk_expr(V, n->assrt.test); return;
    default: return;
    }
}

static void walk_block(Votes *V, const NodeList *l) {
    for (int i = 0; i < l->n; i++) walk_stmt(V, l->v[i]);
}

/* Dimensions outermost first: by cost, the cheapest innermost; a dimension no
 * access indexes with goes outside all that are; ties keep z, y, x. */
static void plan_order(const Votes *V, int order[3]) {
    int inner_first[3] = {0, 1, 2};
    for (int i = 1; i < 3; i++) {
        for (int j = i; j > 0; j--) {
            int a = inner_first[j - 1], b = inner_first[j];
            bool swap;
            if (!V->seen[a] || !V->seen[b]) swap = !V->seen[a] && V->seen[b];
            else swap = V->cost[b] < V->cost[a];
            if (!swap) break;
            inner_first[j - 1] = b;
            inner_first[j] = a;
        }
    }
    for (int i = 0; i < 3; i++) order[i] = inner_first[2 - i];
}

void plan_cpu(const SemaResult *r, bool debug, Arena *a, CpuPlan *out) {
    const FuncSpec *k = r->kernel;
    memset(out, 0, sizeof *out);
    out->order[0] = 2;
    out->order[1] = 1;
    out->order[2] = 0;
    const NodeList *body = &k->def->def.body;
    Votes V;
    memset(&V, 0, sizeof V);
    grid_syms(body, body->n, V.dims);
    walk_block(&V, body);
    out->loops = V.loops;
    if (!debug) {
        out->priv = V.atomic_only & ~V.other_use & ~V.mixed;
        out->acc = out->priv & V.indexed & ~V.varied;
        /* max/min, or two kinds: scalars per element, or no copy */
        out->priv &= ~((V.minmax | V.kinds) & ~out->acc);
        int acc_sites = 0;
        for (int p = 0; p < 64; p++) {
            out->acc_n[p] = V.nslot[p];
            memcpy(out->acc_index[p], V.slot_index[p], sizeof out->acc_index[p]);
            memcpy(out->acc_op[p], V.slot_op[p], sizeof out->acc_op[p]);
            if ((out->acc >> p) & 1) acc_sites += V.nsites[p];
        }
        out->simd_ok = !V.calls && acc_sites == V.natomic;
    }
    if (!debug) plan_stride(r, a, out);
    if (out->stride_for) return; /* one position per iteration: no guard, no lanes */
    if (!V.dims[0] && !V.dims[1] && !V.dims[2]) return;
    if (!debug) plan_guard(k, V.dims, a, &out->guard);
    plan_order(&V, out->order);
    int inner = out->order[2], mid = out->order[1];
    out->tile = V.seen[inner] && V.cost[inner] > 0 && V.seen[mid];
    /* no lanes where the long loops mostly stride along them (a row of a C array per
     * thread) and store so, or read elements narrower than 8 bytes so (softmax, prefix
     * sums, a float32 matrix-vector product): each lane's row is a scatter or a narrow
     * gather there, where the body as written walks its row at unit stride and GCC
     * vectorises that loop (perf33: 0.11-0.5x Numba with lanes, 1-2x without; a float64
     * row sum's gathers keep up: 2.6 ms with lanes, 3.3 without, 8192 x 1024) */
    bool rows = V.long_cost[inner] > 0 && V.long_cost[inner] * 2 >= V.long_seen[inner] &&
                V.long_bad[inner];
    if (!debug && !rows) plan_lanes(r, V.dims[inner], V.cost[inner], a, out);
}
