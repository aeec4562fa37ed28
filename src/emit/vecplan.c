/* vecplan.c: the vector path's plan of a CUDA kernel's wide entry (vecplan.h).
 *
 * Finds the position (the local assigned from kiln.grid(1)), then one walk over
 * every expression of the kernel that takes the subscripts at the position of
 * the arrays that qualify and strikes off a written array at any other mention.
 */
#include "vecplan.h"

#include <string.h>

typedef struct Walk {
    const FuncSpec *k;
    const Sym *pos;      /* the position's local, or NULL: kiln.grid(1) only */
    const Sym *col;      /* the column's local `pos % m`, or NULL */
    uint64_t atpos, atcol; /* arrays with a subscript taken at the position, the column */
    uint64_t cand;       /* arrays that may take part */
    uint64_t bad;        /* written arrays mentioned otherwise than as allowed */
    Arena *a;
    VecPlan *p;
    int capn, capp;
    bool refuse;         /* something the plan cannot hold (a nested def) */
} Walk;

/* ---- the position ------------------------------------------------------------- */

static bool is_grid1(const Node *n) {
    int64_t d;
    return n && n->kind == E_CALL && n->intr && n->intr->kind == IK_GRID && !n->callee &&
           n->call.bound.n >= 1 && sema_const_int(n->call.bound.v[0], &d) && d == 1;
}

static bool is_pos(const Walk *w, const Node *n) {
    if (is_grid1(n)) return true;
    return w->pos && n->kind == E_NAME && n->sym == w->pos;
}

/* Whether expression n mentions symbol s. */
static bool mentions(const Node *n, const Sym *s);

static bool mentions_list(const NodeList *l, const Sym *s) {
    for (int i = 0; i < l->n; i++)
        if (mentions(l->v[i], s)) return true;
    return false;
}

static bool mentions(const Node *n, const Sym *s) {
    if (!n) return false;
    switch ((NodeKind)n->kind) {
    case E_NAME: return n->sym == s;
    case E_BINOP: case E_BOOLOP: return mentions(n->bin.l, s) || mentions(n->bin.r, s);
    case E_UNARY: return mentions(n->un.x, s);
    case E_COMPARE: return mentions_list(&n->cmp.operands, s);
    case E_IFEXP:
        return mentions(n->ifexp.cond, s) || mentions(n->ifexp.then, s) ||
               mentions(n->ifexp.orelse, s);
    case E_CALL:
        return mentions(n->call.fn, s) ||
               mentions_list(n->intr && n->intr->kind == IK_RANGE ? &n->call.args : &n->call.bound, s);
    case E_SUBSCRIPT: return mentions(n->sub.base, s) || mentions_list(&n->sub.idx, s);
    case E_ATTR: return mentions(n->attr.base, s);
    case E_TUPLE: return mentions_list(&n->tuple, s);
    case E_SLICE:
        return mentions(n->slice.lo, s) || mentions(n->slice.hi, s) || mentions(n->slice.step, s);
    default: return false;
    }
}

static bool stmt_mentions(const Node *st, const Sym *s);

static bool block_mentions(const NodeList *l, const Sym *s) {
    for (int i = 0; i < l->n; i++)
        if (stmt_mentions(l->v[i], s)) return true;
    return false;
}

static bool stmt_mentions(const Node *st, const Sym *s) {
    switch ((NodeKind)st->kind) {
    case S_EXPR: return mentions(st->expr, s);
    case S_ASSIGN: return mentions(st->assign.value, s) || mentions_list(&st->assign.targets, s);
    case S_AUGASSIGN: return mentions(st->aug.target, s) || mentions(st->aug.value, s);
    case S_IF:
        for (const Node *c = st; c; c = elif_of(c)) {
            if (mentions(c->ifs.cond, s) || block_mentions(&c->ifs.body, s)) return true;
            if (!elif_of(c) && block_mentions(&c->ifs.orelse, s)) return true;
        }
        return false;
    case S_WHILE:
        return mentions(st->ifs.cond, s) || block_mentions(&st->ifs.body, s) ||
               block_mentions(&st->ifs.orelse, s);
    case S_FOR:
        return mentions(st->fors.iter, s) || mentions(st->fors.orig, s) ||
               mentions(st->fors.target, s) || block_mentions(&st->fors.body, s) ||
               block_mentions(&st->fors.orelse, s);
    case S_RETURN: return mentions(st->ret.value, s);
    case S_ASSERT: return mentions(st->assrt.test, s) || mentions(st->assrt.msg, s) ||
                          mentions(st->assrt.exc, s);
    case S_DEF: return true; /* (refused anyway) */
    default: return false;
    }
}

/* The position's local: `i = kiln.grid(1)` at the top level, its only assignment, with
 * no mention of i before it.  NULL when there is none (kiln.grid(1) may still be
 * written in the subscripts themselves). */
/* Whether s is an int64 local assigned once. */
static bool once_local(const Sym *s) {
    return s && s->param < 0 && s->nassign == 1 && s->ty && s->ty->kind == TY_INT &&
           s->ty->dtype == KILN_INT64;
}

/* Whether a statement before statement i of the top-level body mentions s. */
static bool mentioned_before(const NodeList *body, int i, const Sym *s) {
    for (int j = 0; j < i; j++)
        if (stmt_mentions(body->v[j], s)) return true;
    return false;
}

static const Sym *position(const FuncSpec *k) {
    const NodeList *body = &k->def->def.body;
    for (int i = 0; i < body->n; i++) {
        const Node *st = body->v[i];
        if (st->kind != S_ASSIGN || st->assign.targets.n != 1 || !is_grid1(st->assign.value))
            continue;
        const Node *t = st->assign.targets.v[0];
        const Sym *s = t->kind == E_NAME ? t->sym : NULL;
        if (!once_local(s)) continue;
        return mentioned_before(body, i, s) ? NULL : s;
    }
    return NULL;
}

/* The column's local: `c = pos % m` at the top level, c's only assignment, with no
 * mention of c before it, m an int64 parameter never assigned; its parameter in *m. */
static const Sym *column(const Walk *w, int *m) {
    const NodeList *body = &w->k->def->def.body;
    for (int i = 0; i < body->n; i++) {
        const Node *st = body->v[i];
        if (st->kind != S_ASSIGN || st->assign.targets.n != 1) continue;
        const Node *v = st->assign.value, *t = st->assign.targets.v[0];
        if (v->kind != E_BINOP || v->op != B_MOD || !is_pos(w, v->bin.l) || t->kind != E_NAME)
            continue;
        const Node *r = v->bin.r;
        const Sym *ms = r->kind == E_NAME ? r->sym : NULL;
        if (!ms || ms->param < 0 || ms->is_local || !ms->ty || ms->ty->kind != TY_INT ||
            ms->ty->dtype != KILN_INT64 || w->k->psyms[ms->param] != ms)
            continue;
        if (!once_local(t->sym)) continue;
        if (mentioned_before(body, i, t->sym)) return NULL;
        *m = ms->param;
        return t->sym;
    }
    return NULL;
}

/* ---- the accesses ----------------------------------------------------------- */

/* Whether array parameter p may take part: 1-D, contiguous, of a real scalar
 * dtype, never assigned. */
static bool candidate(const FuncSpec *k, int p) {
    const Type *t = k->params[p];
    if (t->kind != TY_ARRAY || ty_is_ptr(t) || t->ndim != 1 || (t->layout != 'C' && t->layout != 'F'))
        return false;
    const Type *e = t->elem;
    if (!e || !ty_is_real(e)) return false;
    int64_t sz = ty_elem_size(e);
    if (sz != 1 && sz != 2 && sz != 4 && sz != 8) return false;
    const Sym *s = k->psyms[p];
    return s && !s->is_local;
}

/* The parameter of array name n that may take part, or -1. */
static int cand_param(const Walk *w, const Node *n) {
    if (n->kind != E_NAME || !n->sym || n->sym->param < 0 || n->sym->param >= 64) return -1;
    int p = n->sym->param;
    return ((w->cand >> p) & 1) && w->k->psyms[p] == n->sym ? p : -1;
}

/* A full subscript of an array at the column. */
static bool at_col(const Walk *w, const Node *n) {
    const Node *ix = n->sub.idx.n == 1 ? n->sub.idx.v[0] : NULL;
    return w->col && ix && ix->kind == E_NAME && ix->sym == w->col && n->ty && ty_is_real(n->ty);
}

static void take(Walk *w, const Node *n, int p) {
    VecPlan *v = w->p;
    v->nodes = arena_grow(w->a, (void *)v->nodes, &w->capn, v->nnodes + 1, sizeof(Node *));
    v->param = arena_grow(w->a, (void *)v->param, &w->capp, v->nnodes + 1, sizeof(int));
    v->nodes[v->nnodes] = n;
    v->param[v->nnodes++] = p;
}

/* A full subscript of array parameter p at the position. */
static bool at_pos(const Walk *w, const Node *n) {
    return n->kind == E_SUBSCRIPT && n->sub.idx.n == 1 && is_pos(w, n->sub.idx.v[0]) &&
           n->ty && ty_is_real(n->ty);
}

static void walk_expr(Walk *w, const Node *n);

static void walk_list(Walk *w, const NodeList *l) {
    for (int i = 0; i < l->n; i++) walk_expr(w, l->v[i]);
}

static void walk_expr(Walk *w, const Node *n) {
    if (!n) return;
    switch ((NodeKind)n->kind) {
    case E_NAME: {
        int p = cand_param(w, n);
        if (p >= 0 && spec_writes(w->k, p)) w->bad |= 1ull << p; /* a mention of its own */
        return;
    }
    case E_BINOP: case E_BOOLOP:
        walk_expr(w, n->bin.l);
        walk_expr(w, n->bin.r);
        return;
    case E_UNARY: walk_expr(w, n->un.x); return;
    case E_COMPARE: walk_list(w, &n->cmp.operands); return;
    case E_IFEXP:
        walk_expr(w, n->ifexp.cond);
        walk_expr(w, n->ifexp.then);
        walk_expr(w, n->ifexp.orelse);
        return;
    case E_CALL:
        if (n->intr && n->intr->kind == IK_CACHE) { /* its own loads and stores (emit_hint.c) */
            w->refuse = true;
            return;
        }
        /* the callee too: a method's receiver (a.fill(0)) may be there only */
        walk_expr(w, n->call.fn);
        walk_list(w, n->intr && n->intr->kind == IK_RANGE ? &n->call.args : &n->call.bound);
        return;
    case E_SUBSCRIPT: {
        int p = cand_param(w, n->sub.base);
        if (p >= 0 && !spec_writes(w->k, p) && at_pos(w, n)) {
            take(w, n, p); /* a load of the vector's element */
            w->atpos |= 1ull << p;
            return;
        }
        if (p >= 0 && !spec_writes(w->k, p) && at_col(w, n)) {
            take(w, n, p); /* a load of the row vector's element */
            w->atcol |= 1ull << p;
            return;
        }
        walk_expr(w, n->sub.base);
        walk_list(w, &n->sub.idx);
        return;
    }
    case E_ATTR: {
        /* a.shape, a.size: the array's extent, not its elements */
        int p = cand_param(w, n->attr.base);
        if (p >= 0 && n->ty && (ty_is_real(n->ty) || n->ty->kind == TY_TUPLE)) return;
        walk_expr(w, n->attr.base);
        return;
    }
    case E_TUPLE: walk_list(w, &n->tuple); return;
    case E_SLICE:
        walk_expr(w, n->slice.lo);
        walk_expr(w, n->slice.hi);
        walk_expr(w, n->slice.step);
        return;
    default: return;
    }
}

static void walk_block(Walk *w, const NodeList *l);

static void walk_stmt(Walk *w, const Node *st) {
    switch ((NodeKind)st->kind) {
    case S_EXPR: walk_expr(w, st->expr); return;
    case S_ASSIGN:
        walk_expr(w, st->assign.value);
        for (int i = 0; i < st->assign.targets.n; i++) {
            const Node *t = st->assign.targets.v[i];
            int p = t->kind == E_SUBSCRIPT ? cand_param(w, t->sub.base) : -1;
            if (p >= 0 && spec_writes(w->k, p) && at_pos(w, t)) {
                take(w, t, p); /* a store into the vector's element */
                continue;
            }
            walk_expr(w, t);
        }
        return;
    case S_AUGASSIGN:
        walk_expr(w, st->aug.target);
        walk_expr(w, st->aug.value);
        return;
    case S_IF:
        for (const Node *c = st; c; c = elif_of(c)) {
            walk_expr(w, c->ifs.cond);
            walk_block(w, &c->ifs.body);
            if (!elif_of(c)) walk_block(w, &c->ifs.orelse);
        }
        return;
    case S_WHILE:
        walk_expr(w, st->ifs.cond);
        walk_block(w, &st->ifs.body);
        walk_block(w, &st->ifs.orelse);
        return;
    case S_FOR:
        walk_expr(w, st->fors.iter);
        walk_expr(w, st->fors.orig);
        walk_expr(w, st->fors.target);
        walk_block(w, &st->fors.body);
        walk_block(w, &st->fors.orelse);
        return;
    case S_RETURN: walk_expr(w, st->ret.value); return;
    case S_ASSERT:
        walk_expr(w, st->assrt.test);
        walk_expr(w, st->assrt.msg);
        walk_expr(w, st->assrt.exc);
        return;
    case S_DEF: w->refuse = true; return;
    default: return;
    }
}

static void walk_block(Walk *w, const NodeList *l) {
    for (int i = 0; i < l->n && !w->refuse; i++) walk_stmt(w, l->v[i]);
}

bool vec_plan(const FuncSpec *k, Arena *a, VecPlan *out) {
    memset(out, 0, sizeof *out);
    if (!k->is_kernel) return false;
    Walk w;
    memset(&w, 0, sizeof w);
    w.k = k;
    w.a = a;
    w.p = out;
    for (int p = 0; p < k->nparams && p < 64; p++)
        if (candidate(k, p)) w.cand |= 1ull << p;
    if (!w.cand) return false;
    w.pos = position(k);
    int cols = -1;
    w.col = column(&w, &cols);
    walk_block(&w, &k->def->def.body);
    if (w.refuse) return false;
    /* a written array mentioned otherwise keeps its scalar stores, and an array read
     * both at the position and at the column its column loads: their nodes go */
    int n = 0;
    for (int i = 0; i < out->nnodes; i++) {
        int p = out->param[i];
        bool row = !spec_writes(k, p) && out->nodes[i]->kind == E_SUBSCRIPT && at_col(&w, out->nodes[i]);
        if ((w.bad >> p) & 1 || (row && (w.atpos >> p) & 1)) continue;
        out->nodes[n] = out->nodes[i];
        out->param[n++] = p;
        if (spec_writes(k, p)) out->stores |= 1ull << p;
        else if (row) out->rows |= 1ull << p;
        else out->loads |= 1ull << p;
    }
    out->cols = out->rows ? cols : -1;
    out->nnodes = n;
    return n > 0;
}

int vec_param_of(const VecPlan *v, const Node *n) {
    for (int i = 0; i < v->nnodes; i++)
        if (v->nodes[i] == n) return v->param[i];
    return -1;
}
