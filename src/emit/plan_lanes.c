/* plan_lanes.c: lane mode's analysis (plan.h says what and why): which locals
 * vary along the innermost dimension, which statements run per lane, which
 * locals are private to one run, and how many lanes a chunk has.
 *
 * A pure analysis of the typed tree, called by plan_cpu once the loop order is
 * known, and by plan_blanes.c (block lanes: the same analysis with a block's thread
 * indices as the varying roots); the emitter asks plan_lane_stmt how to write each
 * statement.
 */
#include <string.h>

#include "plan_int.h"

static bool may_be_written(const FuncSpec *k, const Node *b) {
    while (b->kind == E_SUBSCRIPT) b = b->sub.base;
    if (b->kind != E_NAME || !b->sym) return true;
    uint64_t o = b->sym->origins;
    return o == 0 || (o & k->written) != 0;
}

/* Whether n may differ between the lanes of a chunk. */
static bool varying(const LanePlan *L, const Node *n) {
    if (!n) return false;
    if (n->intr && (n->kind == E_NAME || n->kind == E_ATTR)) {
        /* threadIdx.x ... and laneid: a block's lanes are its threads (block lanes; a
         * kernel that reads them has no grid lanes) */
        if (n->intr->kind == IK_SREG) return n->intr->sub < 3;
        if (n->intr->kind == IK_LANEID || (n->intr->kind == IK_DIM3 && n->intr->sub == 0))
            return true;
    }
    switch ((NodeKind)n->kind) {
    case E_NAME: return n->sym && L->cls[n->sym->id] != LANE_UNIFORM;
    case E_BINOP: case E_BOOLOP: return varying(L, n->bin.l) || varying(L, n->bin.r);
    case E_UNARY: return varying(L, n->un.x);
    case E_COMPARE:
        for (int i = 0; i < n->cmp.operands.n; i++)
            if (varying(L, n->cmp.operands.v[i])) return true;
        return false;
    case E_IFEXP:
        return varying(L, n->ifexp.cond) || varying(L, n->ifexp.then) ||
               varying(L, n->ifexp.orelse);
    case E_CALL: {
        if (n->callee || (n->intr && (n->intr->kind == IK_ATOMIC || n->intr->kind == IK_GRID)))
            return true;
        const NodeList *a = n->intr && n->intr->kind == IK_RANGE ? &n->call.args : &n->call.bound;
        for (int i = 0; i < a->n; i++)
            if (varying(L, a->v[i])) return true;
        return false;
    }
    case E_SUBSCRIPT:
        for (int i = 0; i < n->sub.idx.n; i++)
            if (varying(L, n->sub.idx.v[i])) return true;
        if (varying(L, n->sub.base)) return true;
        /* an element of an array the kernel writes: another lane may have stored it */
        return n->sub.base->ty && n->sub.base->ty->kind == TY_ARRAY && n->ty &&
               n->ty->kind != TY_ARRAY && may_be_written(L->k, n->sub.base);
    case E_ATTR: return varying(L, n->attr.base);
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++)
            if (varying(L, n->tuple.v[i])) return true;
        return false;
    case E_SLICE:
        return varying(L, n->slice.lo) || varying(L, n->slice.hi) || varying(L, n->slice.step);
    default: return false;
    }
}


/* Whether local s occurs outside the innermost lane for loop being scanned.
 * Lanes leave such a loop at different passes (a lane that has left never
 * comes back, so the lanes in it at a pass have all run every pass before): a
 * value assigned in it is the same for the lanes in it, but not for those that
 * left earlier, so a local that is read after the loop (or before it in an
 * enclosing loop) must be varying. */
static bool escapes(const LaneScan *S, const Sym *s) {
    return S->in_for && S->inside[S->in_for - 1][s->id] != S->total[s->id];
}

/* Whether n's value at lane l is its value at lane 0 plus l: the innermost
 * coordinate, the counter of a lane for loop, either plus or minus a uniform
 * value, all int64 (so no conversion wraps it). */
static bool lane_affine(const LanePlan *L, const Node *n) {
    const Type *t = n->ty;
    if (!t || t->kind != TY_INT || (!t->weak && t->dtype != KILN_INT64)) return false;
    if (n->kind == E_NAME) return n->sym && L->cls[n->sym->id] == LANE_COORD;
    if (n->kind != E_BINOP || (n->op != B_ADD && n->op != B_SUB) || !n->opty ||
        n->opty->kind != TY_INT || (!n->opty->weak && n->opty->dtype != KILN_INT64))
        return false;
    if (lane_affine(L, n->bin.l) && !varying(L, n->bin.r)) return true;
    return n->op == B_ADD && !varying(L, n->bin.l) && lane_affine(L, n->bin.r);
}

/* Block lanes: whether n's value at a thread is its value at threadIdx.x 0 plus
 * threadIdx.x, the same for every y and z: threadIdx.x, grid(1), a local assigned once at
 * the kernel's top level from such a value, either plus or minus a uniform value, all
 * int64.  Such a value is lane-affine along a block's x lanes (depth: locals followed). */
static bool tx_affine(const LaneScan *S, const Node *n, int depth) {
    const LanePlan *L = S->L;
    const Type *t = n->ty;
    if (!t || t->kind != TY_INT || (!t->weak && t->dtype != KILN_INT64) || depth > 16)
        return false;
    if (n->intr && (n->kind == E_NAME || n->kind == E_ATTR))
        return n->intr->kind == IK_SREG && n->intr->sub == 0;
    int64_t nd;
    switch ((NodeKind)n->kind) {
    case E_CALL:
        return !n->callee && n->intr && n->intr->kind == IK_GRID && n->call.bound.n == 1 &&
               sema_const_int(n->call.bound.v[0], &nd) && nd == 1;
    case E_NAME: /* a local written again where read (plan_recomp): the start of a lane
                  * for loop is its value at threadIdx.x 0 */
        return n->sym && S->txdef && S->txdef[n->sym->id] &&
               plan_recomputable(L, S->txdef[n->sym->id]) &&
               tx_affine(S, S->txdef[n->sym->id], depth + 1);
    case E_BINOP:
        if ((n->op != B_ADD && n->op != B_SUB) || !n->opty || n->opty->kind != TY_INT ||
            (!n->opty->weak && n->opty->dtype != KILN_INT64))
            return false;
        if (tx_affine(S, n->bin.l, depth + 1) && !varying(L, n->bin.r)) return true;
        return n->op == B_ADD && !varying(L, n->bin.l) && tx_affine(S, n->bin.r, depth + 1);
    default: return false;
    }
}

static void count_into(void *arg, const Sym *s) { ((int *)arg)[s->id]++; }

struct SymCount {
    const Sym *s;
    int *n;
};

static void count_sym(void *arg, const Sym *s) {
    const struct SymCount *c = arg;
    if (s == c->s) (*c->n)++;
}

/* A lane for loop (plan.h): `for j in range(lo, hi[, step])` with lo
 * lane-affine, hi and step uniform, step a positive constant or an integer
 * sema knows is not negative (0 is the error it always is), no else, and a
 * counter of type int64 that nothing else assigns and nothing outside the loop
 * reads.  Lane l's j is then lo + l + k * step at pass k, so the lanes still
 * in the loop at a pass are a prefix of the chunk, and j is the pass's base
 * plus the lane: unit stride, as the coordinate is. */
static bool lane_for(LaneScan *S, const Node *n) {
    const LanePlan *L = S->L;
    const Node *it = n->fors.iter;
    const Sym *s = n->sym;
    if (!s || n->fors.orelse.n || !it || it->kind != E_CALL || !it->intr ||
        it->intr->kind != IK_RANGE || it->call.args.n < 2 || s->nassign != 1 || !s->ty ||
        s->ty->kind != TY_INT || (!s->ty->weak && s->ty->dtype != KILN_INT64) || !it->opty ||
        it->opty->kind != TY_INT || (!it->opty->weak && it->opty->dtype != KILN_INT64) ||
        (L->cls[s->id] != LANE_UNIFORM && L->cls[s->id] != LANE_COORD) || s == L->coord)
        return false;
    Node *const *a = it->call.args.v;
    if (!(L->block ? tx_affine(S, a[0], 0) : lane_affine(L, a[0])) || varying(L, a[1]))
        return false;
    if (it->call.args.n == 3) {
        int64_t c;
        if (varying(L, a[2])) return false;
        if (sema_const_int(a[2], &c) ? c <= 0 : !(a[2]->flags & NF_NONNEG)) return false;
    }
    /* read nowhere but in the loop: after it, each lane's counter would differ */
    int in = 0;
    PlanSymVisit v = {count_sym, (void *)&(struct SymCount){s, &in}};
    plan_each_stmt(n, plan_visit_sym, &v);
    return in == S->total[s->id];
}

static bool has_exit(const NodeList *l);

/* Block lanes: a varying while that a mask cannot run (a break or continue in it, an
 * else) runs as a per-lane loop. */
static bool per_lane_while(const Node *n) {
    return n->ifs.orelse.n || has_exit(&n->ifs.body);
}

/* Block lanes: a grid-stride while loop, `i = <start>` at the kernel's top level, then
 * `while i < hi: ...; i += step` (the body's last statement, i's only other assignment),
 * with start tx_affine, hi and step uniform, step positive, no break or continue in the
 * body and i read nowhere else: the lane for loop `for i in range(start, hi, step)` as
 * CUDA C translations write it (LanePlan.wdef has the start). */
static bool lane_while_for(LaneScan *S, const Node *n) {
    const LanePlan *L = S->L;
    const NodeList *b = &n->ifs.body;
    if (!L->block || n->ifs.orelse.n || b->n < 2) return false;
    const Node *c = n->ifs.cond, *inc = b->v[b->n - 1];
    if (c->kind != E_COMPARE || c->cmp.operands.n != 2 || c->cmp.ops[0] != C_LT ||
        c->cmp.operands.v[0]->kind != E_NAME || inc->kind != S_AUGASSIGN || inc->op != B_ADD ||
        inc->aug.target->kind != E_NAME || inc->aug.target->sym != c->cmp.operands.v[0]->sym)
        return false;
    const Sym *s = inc->aug.target->sym;
    const Node *hi = c->cmp.operands.v[1], *step = inc->aug.value;
    /* the loop a statement of the kernel itself (reached once: in an enclosing loop the
     * passes would start over at each entry), its start recomputable (written at the
     * loop, it has the value it had where it was assigned) */
    const NodeList *top = &L->k->def->def.body;
    bool at_top = false;
    for (int i = 0; i < top->n && !at_top; i++) at_top = top->v[i] == n;
    if (!at_top || !s || s->param >= 0 || s->nassign != 2 || !s->ty || s->ty->kind != TY_INT ||
        (!s->ty->weak && s->ty->dtype != KILN_INT64) || !S->topdef[s->id] ||
        !plan_recomputable(L, S->topdef[s->id]) || !tx_affine(S, S->topdef[s->id], 0) ||
        varying(L, hi) || varying(L, step) ||
        !hi->ty || !ty_is_int(hi->ty) || !(hi->ty->weak || ty_is_signed(hi->ty)) || !step->ty ||
        !ty_is_int(step->ty) ||
        (L->cls[s->id] == LANE_UNIFORM))
        return false;
    int64_t k;
    if (sema_const_int(step, &k) ? k <= 0 : !(step->flags & NF_NONNEG)) return false;
    NodeList body = {b->v, b->n - 1};
    if (has_exit(&body)) return false;
    /* read nowhere but its start and the loop */
    int in = 0;
    PlanSymVisit v = {count_sym, (void *)&(struct SymCount){s, &in}};
    plan_each_stmt(n, plan_visit_sym, &v);
    return in + 1 == S->total[s->id];
}

/* Marks the locals assigned by target t varying: all of them, or (all false)
 * those that escape the lane for loop around t. */
static void make_varying(LaneScan *S, const Node *t, bool all) {
    if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++) make_varying(S, t->tuple.v[i], all);
        return;
    }
    if (t->kind == E_NAME && t->sym && S->L->cls[t->sym->id] == LANE_UNIFORM &&
        (all || escapes(S, t->sym))) {
        S->L->cls[t->sym->id] = LANE_VARYING;
        S->changed = true;
    }
}

static void scan_block(LaneScan *S, const NodeList *l, bool vctx);

/* Block lanes: a loop each lane runs on its own, inside a lane loop (one under a varying
 * condition, thread 0's serial part; a for loop over a varying range that is no lane for
 * loop): its counter varies, its body runs under a varying condition, and a break or
 * continue in it is the lane's own.  Its lane loop is not `omp simd` (plan_lane_stmt). */
static void per_lane_loop(LaneScan *S, const Node *n) {
    if (n->kind == S_FOR && n->sym && S->L->cls[n->sym->id] == LANE_UNIFORM) {
        S->L->cls[n->sym->id] = LANE_VARYING;
        S->changed = true;
    }
    S->in_loop++;
    if (n->kind == S_FOR) {
        scan_block(S, &n->fors.body, true);
        scan_block(S, &n->fors.orelse, true);
    } else {
        scan_block(S, &n->ifs.body, true);
        scan_block(S, &n->ifs.orelse, true);
    }
    S->in_loop--;
}

/* Whether st is `syncthreads()` or `syncwarp()` as a statement (block lanes: the end of
 * one lane loop and the start of the next; a warp's barrier is met by the block's). */
bool plan_barrier_stmt(const Node *st) {
    const Node *e = st->kind == S_EXPR ? st->expr : NULL;
    return e && e->kind == E_CALL && e->intr && e->intr->kind == IK_SYNCTHREADS &&
           e->intr->sub < IY_AND;
}

/* One statement of a pass of the uniformity analysis; vctx: it runs under an
 * if whose condition is varying. */
static void scan_stmt(LaneScan *S, const Node *n, bool vctx) {
    LanePlan *L = S->L;
    switch ((NodeKind)n->kind) {
    case S_PASS: return;
    case S_EXPR: /* a barrier every thread of the block meets, or none */
        if (plan_barrier_stmt(n) && (vctx || S->in_for)) S->ok = false;
        return;
    case S_ASSERT: /* a raise leaves the body, as a return does (below) */
        if (n->assrt.exc && (vctx || S->in_for)) S->ok = false;
        return;
    case S_ASSIGN:
        if (n == L->grid_stmt) return;
    {
        bool all = vctx || varying(L, n->assign.value);
        for (int i = 0; i < n->assign.targets.n; i++) make_varying(S, n->assign.targets.v[i], all);
        return;
    }
    case S_AUGASSIGN:
        make_varying(S, n->aug.target, vctx || varying(L, n->aug.value));
        return;
    case S_IF: {
        if (n == S->P->guard.stmt) { /* its kept conjuncts are checked apart */
            scan_block(S, &n->ifs.body, vctx);
            return;
        }
        /* a varying condition anywhere in the chain makes the whole chain per lane */
        bool v = vctx;
        for (const Node *c = n; c && !v; c = elif_of(c)) v = varying(L, c->ifs.cond);
        for (const Node *c = n; c; c = elif_of(c)) {
            scan_block(S, &c->ifs.body, v);
            if (!elif_of(c)) scan_block(S, &c->ifs.orelse, v);
        }
        return;
    }
    case S_FOR:
        if (!vctx && lane_for(S, n)) {
            if (L->cls[n->sym->id] != LANE_COORD) {
                L->cls[n->sym->id] = LANE_COORD;
                S->changed = true;
            }
            if (S->in_for == PLAN_LANE_FOR_DEPTH) {
                S->ok = false;
                return;
            }
            int ns = L->k->nsyms > 0 ? L->k->nsyms : 1;
            int *in = S->inside[S->in_for];
            if (!in) in = S->inside[S->in_for] = arena_alloc(S->arena, sizeof(int) * (size_t)ns);
            memset(in, 0, sizeof(int) * (size_t)ns);
            PlanSymVisit v = {count_into, in};
            plan_each_stmt(n, plan_visit_sym, &v);
            S->in_for++;
            scan_block(S, &n->fors.body, false);
            S->in_for--;
            return;
        }
        if (L->block && !S->in_for &&
            (vctx || varying(L, n->fors.iter) || (n->sym && L->cls[n->sym->id] != LANE_UNIFORM))) {
            per_lane_loop(S, n);
            return;
        }
        /* a uniform loop in a lane for loop: its counter is read in that loop only */
        if (vctx || !n->sym || varying(L, n->fors.iter) || L->cls[n->sym->id] != LANE_UNIFORM ||
            escapes(S, n->sym))
            S->ok = false;
        scan_block(S, &n->fors.body, vctx);
        scan_block(S, &n->fors.orelse, vctx);
        return;
    case S_WHILE: {
        if (!vctx && !S->in_for && lane_while_for(S, n)) {
            const Sym *s = n->ifs.body.v[n->ifs.body.n - 1]->aug.target->sym;
            if (L->cls[s->id] != LANE_COORD) {
                L->cls[s->id] = LANE_COORD;
                S->changed = true;
            }
            L->wdef[s->id] = S->topdef[s->id];
            int ns = L->k->nsyms > 0 ? L->k->nsyms : 1;
            int *in = S->inside[0];
            if (!in) in = S->inside[0] = arena_alloc(S->arena, sizeof(int) * (size_t)ns);
            memset(in, 0, sizeof(int) * (size_t)ns);
            PlanSymVisit cv = {count_into, in};
            plan_each_stmt(n, plan_visit_sym, &cv);
            S->in_for++;
            NodeList body = {n->ifs.body.v, n->ifs.body.n - 1};
            scan_block(S, &body, false);
            S->in_for--;
            return;
        }
        /* a varying condition: every lane iterates on its own, so the body runs
         * under a varying condition (and takes no loop, exit or else) */
        bool v = varying(L, n->ifs.cond);
        if (L->block && !S->in_for && (vctx || (v && per_lane_while(n)))) {
            per_lane_loop(S, n);
            return;
        }
        if (vctx || (v && n->ifs.orelse.n)) S->ok = false;
        scan_block(S, &n->ifs.body, vctx || v);
        scan_block(S, &n->ifs.orelse, vctx);
        return;
    }
    case S_BREAK: case S_CONTINUE: case S_RETURN:
        /* leaving a loop or the body: every lane alike, or not at all; no return
         * from a lane for loop, whose lanes that left it have statements after it
         * to run */
        if (n->kind != S_RETURN && S->in_loop) return; /* the lane's own loop's */
        if (vctx || (n->kind == S_RETURN && (S->in_for || varying(L, n->ret.value))))
            S->ok = false;
        return;
    default: S->ok = false; return;
    }
}

static void scan_block(LaneScan *S, const NodeList *l, bool vctx) {
    for (int i = 0; i < l->n && S->ok; i++) scan_stmt(S, l->v[i], vctx);
}

static void count_grid(void *arg, const Node *n) {
    if (n->kind == E_CALL && n->intr && n->intr->kind == IK_GRID) ((LaneScan *)arg)->ngrid++;
}

static void count_atomic(void *arg, const Node *n) {
    if (n->kind == E_CALL && n->intr && n->intr->kind == IK_ATOMIC) (*(int *)arg)++;
}

const Sym *plan_lane_while_var(const LanePlan *L, const Node *st) {
    const Node *c = st->ifs.cond;
    if (!L->block || !L->wdef || c->kind != E_COMPARE || c->cmp.operands.n != 2 ||
        c->cmp.operands.v[0]->kind != E_NAME)
        return NULL;
    const Sym *s = c->cmp.operands.v[0]->sym;
    return s && L->cls[s->id] == LANE_COORD && L->wdef[s->id] ? s : NULL;
}

/* Whether l holds a break or continue, at any depth. */
static bool has_exit(const NodeList *l) {
    for (int i = 0; i < l->n; i++) {
        const Node *st = l->v[i];
        if (st->kind == S_BREAK || st->kind == S_CONTINUE) return true;
        if (st->kind == S_IF) {
            for (const Node *c = st; c; c = elif_of(c))
                if (has_exit(&c->ifs.body) || (!elif_of(c) && has_exit(&c->ifs.orelse)))
                    return true;
        } else if (st->kind == S_FOR) {
            if (has_exit(&st->fors.body) || has_exit(&st->fors.orelse)) return true;
        } else if (st->kind == S_WHILE) {
            if (has_exit(&st->ifs.body) || has_exit(&st->ifs.orelse)) return true;
        }
    }
    return false;
}

static int lane_kind(const CpuPlan *p, const Node *st) {
    const LanePlan *L = &p->lanes;
    switch ((NodeKind)st->kind) {
    case S_FOR: /* block lanes: a loop each lane runs on its own (per_lane_loop) */
        return L->block && (varying(L, st->fors.iter) ||
                            (st->sym && L->cls[st->sym->id] != LANE_UNIFORM))
                   ? LANE_RUN
                   : LANE_SCALAR;
    case S_PASS: case S_ASSERT: case S_BREAK: case S_CONTINUE: case S_RETURN:
        return LANE_SCALAR;
    case S_WHILE:
        if (!varying(L, st->ifs.cond)) return LANE_SCALAR;
        return L->block && per_lane_while(st) ? LANE_RUN : LANE_LOOP;
    case S_EXPR: return st->expr->kind == E_STR || plan_barrier_stmt(st) ? LANE_SCALAR : LANE_RUN;
    case S_IF:
        if (st == p->guard.stmt) return LANE_SCALAR;
        for (const Node *c = st; c; c = elif_of(c))
            if (varying(L, c->ifs.cond)) return LANE_RUN;
        return LANE_SCALAR;
    case S_ASSIGN:
        if (st == L->grid_stmt) return LANE_SCALAR;
        if (st->assign.value->kind == E_CALL && st->assign.value->intr &&
            st->assign.value->intr->kind == IK_SHARED_ARRAY)
            return LANE_SCALAR; /* the block's array, the same for every lane */
        if (!plan_pure(st->assign.value)) return LANE_RUN;
        for (int i = 0; i < st->assign.targets.n; i++) {
            const Node *t = st->assign.targets.v[i];
            const Node *const *v = t->kind == E_TUPLE ? (const Node *const *)t->tuple.v : &t;
            int m = t->kind == E_TUPLE ? t->tuple.n : 1;
            for (int j = 0; j < m; j++)
                if (v[j]->kind != E_NAME || !v[j]->sym || L->cls[v[j]->sym->id] != LANE_UNIFORM)
                    return LANE_RUN;
        }
        return LANE_SCALAR;
    case S_AUGASSIGN:
        return st->aug.target->kind == E_NAME && st->aug.target->sym &&
                       L->cls[st->aug.target->sym->id] == LANE_UNIFORM && plan_pure(st->aug.value)
                   ? LANE_SCALAR
                   : LANE_RUN;
    default: return LANE_RUN;
    }
}

int plan_lane_stmt(const CpuPlan *p, const Node *st) {
    if (st->kind == S_FOR && st->sym && p->lanes.cls[st->sym->id] == LANE_COORD) return LANE_FOR;
    if (st->kind == S_WHILE && p->lanes.block && plan_lane_while_var(&p->lanes, st))
        return LANE_FOR;
    int kind = lane_kind(p, st);
    if (kind == LANE_RUN) {
        int natomic = 0;
        plan_each_stmt(st, count_atomic, &natomic);
        if (natomic) return LANE_ATOMIC;
        /* a per-lane loop (block lanes): a lane loop that runs its lanes one by one */
        NodeList one = {(Node **)&st, 1};
        if (p->lanes.block && plan_has_loop(&one)) return LANE_ATOMIC;
    }
    return kind;
}

/* Atomics lane mode can write: add, sub, max, min, and, or, xor as statements
 * of the kernel (their lanes may run in any order, as GPU threads do: none of
 * these returns a value that could tell); exch, cas, inc and dec, an atomic's
 * value, or one in a device function keep the one body (a lock taken by one
 * lane of a chunk and awaited by another would never be released). */
typedef struct AtomicScan {
    int stmts; /* statement-level atomics of the allowed kinds */
} AtomicScan;

static void atomic_stmts(AtomicScan *A, const NodeList *l) {
    for (int i = 0; i < l->n; i++) {
        const Node *st = l->v[i];
        switch ((NodeKind)st->kind) {
        case S_EXPR: {
            const Node *e = st->expr;
            if (e->kind == E_CALL && e->intr && e->intr->kind == IK_ATOMIC) {
                int sub = e->intr->sub;
                if (sub == IA_ADD || sub == IA_SUB || sub == IA_MAX || sub == IA_MIN ||
                    sub == IA_AND || sub == IA_OR || sub == IA_XOR)
                    A->stmts++;
            }
            break;
        }
        case S_IF:
            for (const Node *c = st; c; c = elif_of(c)) {
                atomic_stmts(A, &c->ifs.body);
                if (!elif_of(c)) atomic_stmts(A, &c->ifs.orelse);
            }
            break;
        case S_FOR:
            atomic_stmts(A, &st->fors.body);
            atomic_stmts(A, &st->fors.orelse);
            break;
        case S_WHILE:
            atomic_stmts(A, &st->ifs.body);
            atomic_stmts(A, &st->ifs.orelse);
            break;
        default: break;
        }
    }
}

bool plan_atomics_fit(const SemaResult *r) {
    if (!r->uses_atomics) return true;
    int all = 0;
    for (int i = 0; i < r->order.n; i++)
        plan_each_block(&((const FuncSpec *)r->order.v[i])->def->def.body, count_atomic, &all);
    AtomicScan A = {0};
    atomic_stmts(&A, &r->kernel->def->def.body);
    return A.stmts == all;
}

/* ---- lane mode: the locals private to one run ---- */

typedef struct Privates {
    const CpuPlan *P;
    LanePlan *L;
    int *total;   /* occurrences of each symbol in the kernel */
    int *in_run;  /* ...in the run being walked (valid where stamp is the run's) */
    int *stamp;   /* the run in which in_run was last counted */
    bool *def_first; /* its first occurrence in that run is a top-level assignment */
    int run;
    const Sym **seen; /* the symbols of this run */
    int nseen;
    bool defining;    /* the occurrence being counted is a top-level assignment target */
} Privates;

static void count_total(void *arg, const Sym *s) { ((Privates *)arg)->total[s->id]++; }

static void count_run(void *arg, const Sym *s) {
    Privates *R = arg;
    if (R->stamp[s->id] != R->run) {
        R->stamp[s->id] = R->run;
        R->in_run[s->id] = 0;
        R->def_first[s->id] = R->defining;
        R->seen[R->nseen++] = s;
    }
    R->in_run[s->id]++;
}

static void privates_block(Privates *R, const NodeList *l);

/* One run l->v[from..to): its varying locals that occur nowhere else and are
 * assigned at its top level before anything reads them are private to it. */
static void privates_run(Privates *R, const NodeList *l, int from, int to) {
    R->run++;
    R->nseen = 0;
    PlanSymVisit v = {count_run, R};
    for (int i = from; i < to; i++) {
        const Node *st = l->v[i];
        if (st->kind != S_ASSIGN) {
            R->defining = false;
            plan_each_stmt(st, plan_visit_sym, &v);
            continue;
        }
        R->defining = false;
        plan_each_expr(st->assign.value, plan_visit_sym, &v);
        for (int t = 0; t < st->assign.targets.n; t++) {
            const Node *x = st->assign.targets.v[t];
            const Node *const *e = x->kind == E_TUPLE ? (const Node *const *)x->tuple.v : &x;
            int m = x->kind == E_TUPLE ? x->tuple.n : 1;
            for (int j = 0; j < m; j++) {
                R->defining = e[j]->kind == E_NAME;
                plan_each_expr(e[j], plan_visit_sym, &v);
            }
        }
    }
    for (int i = 0; i < R->nseen; i++) {
        int id = R->seen[i]->id;
        if (R->L->cls[id] == LANE_VARYING && R->def_first[id] && R->in_run[id] == R->total[id])
            R->L->cls[id] = LANE_PRIVATE;
    }
}

/* Walks l as emit_stmt.c's lane_block does: scalar statements and varying while
 * loops, whose blocks are walked in turn, and the maximal runs of lane
 * statements between them.  (A varying while's condition is read in a lane
 * loop of its own, so no local it reads is private to a run.) */
static void privates_block(Privates *R, const NodeList *l) {
    for (int i = 0; i < l->n;) {
        const Node *st = l->v[i];
        int kind = plan_lane_stmt(R->P, st);
        if (kind == LANE_RUN || kind == LANE_ATOMIC) {
            int j = i;
            while (j < l->n && plan_lane_stmt(R->P, l->v[j]) == kind) j++;
            privates_run(R, l, i, j);
            i = j;
            continue;
        }
        if (st->kind == S_FOR) {
            privates_block(R, &st->fors.body);
            privates_block(R, &st->fors.orelse);
        } else if (st->kind == S_WHILE) {
            privates_block(R, &st->ifs.body);
            privates_block(R, &st->ifs.orelse);
        } else if (st->kind == S_IF) {
            for (const Node *c = st; c; c = elif_of(c)) {
                privates_block(R, &c->ifs.body);
                if (!elif_of(c)) privates_block(R, &c->ifs.orelse);
            }
        }
        i++;
    }
}

/* Whether x // d or x % d of type t has no vector instruction: x86 has no vector integer
 * division, and GCC divides lanes by a constant with multiplies only for 32-bit integers
 * or narrower (by a power of two with shifts at any width). */
static bool scalar_division(const Type *t, const Node *d) {
    if (!t || t->kind != TY_INT) return false;
    int64_t c;
    if (!sema_const_int(d, &c)) return true;
    if (c > 0 && (c & (c - 1)) == 0) return false;
    return ty_bits(t) >= 64;
}

typedef struct DivScan {
    const LanePlan *L;
    bool found;
} DivScan;

/* A division of varying values (one per lane) that scalar_division says runs lane by
 * lane; a uniform one (of a loop counter) runs once for the chunk. */
static void division_in(void *arg, const Node *n) {
    DivScan *D = arg;
    if (n->kind == E_BINOP && (n->op == B_FLOORDIV || n->op == B_MOD) && varying(D->L, n) &&
        scalar_division(n->opty ? n->opty : n->ty, n->bin.r))
        D->found = true;
}

/* Whether a while loop with a varying condition in block l (loop: l is one's body, or
 * inside one) divides integers one lane at a time (scalar_division).  Lane mode would run
 * each pass's divisions lane after lane under the loop's mask, around the vector code:
 * slower than the body as written (a digit sum, `while v > 0: s += v % 10; v //= 10`:
 * 0.35x Numba with lanes, 1.0x without; perfhunt s29).  Other loops keep lane mode,
 * where the rest of the body gains more than the divisions cost. */
static bool loop_divides(DivScan *D, const NodeList *l, bool loop) {
    for (int i = 0; i < l->n && !D->found; i++) {
        const Node *st = l->v[i];
        switch ((NodeKind)st->kind) {
        case S_WHILE: {
            bool v = loop || varying(D->L, st->ifs.cond);
            if (loop_divides(D, &st->ifs.body, v) || loop_divides(D, &st->ifs.orelse, loop))
                break;
            if (v) plan_each_expr(st->ifs.cond, division_in, D);
            break;
        }
        case S_FOR:
            if (!loop_divides(D, &st->fors.body, loop)) loop_divides(D, &st->fors.orelse, loop);
            break;
        case S_IF:
            for (const Node *c = st; c && !D->found; c = elif_of(c)) {
                if (loop) plan_each_expr(c->ifs.cond, division_in, D);
                if (!D->found && !loop_divides(D, &c->ifs.body, loop) && !elif_of(c))
                    loop_divides(D, &c->ifs.orelse, loop);
            }
            break;
        default:
            /* `v //= d` (the statement's own division), then its expressions' */
            if (loop && st->kind == S_AUGASSIGN && (st->op == B_FLOORDIV || st->op == B_MOD) &&
                (varying(D->L, st->aug.target) || varying(D->L, st->aug.value)) &&
                scalar_division(st->opty ? st->opty : st->ty, st->aug.value))
                D->found = true;
            if (loop) plan_each_stmt(st, division_in, D);
            break;
        }
    }
    return D->found;
}

/* A scan of kernel k's lanes into out->lanes, with each symbol's occurrences counted. */
void plan_scan_init(LaneScan *S, const FuncSpec *k, Arena *a, CpuPlan *out) {
    memset(S, 0, sizeof *S);
    S->P = out;
    S->L = &out->lanes;
    S->ok = true;
    S->arena = a;
    S->total = arena_alloc(a, sizeof(int) * (size_t)(k->nsyms > 0 ? k->nsyms : 1));
    PlanSymVisit tv = {count_into, S->total};
    plan_each_block(&k->def->def.body, plan_visit_sym, &tv);
}

/* The rest of a lane plan once its roots are set (the innermost coordinate, or a block's
 * thread indices): the uniformity fixed point, the checks on what it found, the private
 * locals; bytes and widest: one lane's varying values and the widest of them.  False (and
 * out->lanes cleared): no lane body. */
bool plan_settle(LaneScan *S, const SemaResult *r, Arena *a, CpuPlan *out, int *bytes,
                   int *widest) {
    const FuncSpec *k = r->kernel;
    LanePlan *L = &out->lanes;
    const NodeList *body = &k->def->def.body;
    /* the fixed point: locals only ever turn varying */
    int pass = 0;
    do {
        S->changed = false;
        S->ok = true;
        scan_block(S, body, false);
    } while (S->ok && S->changed && ++pass < PLAN_LANE_PASSES);
    bool ok = S->ok && !S->changed;
    const GuardPlan *g = &out->guard;
    for (int i = 0; ok && g->stmt && i < g->nkeep; i++)
        ok = g->keep[i] ? !varying(L, g->keep[i])
                        : !varying(L, g->keep_l[i]) && !varying(L, g->keep_r[i]);
    for (int i = 0; ok && i < k->nsyms; i++) {
        const Sym *s = k->syms[i];
        if (L->cls[s->id] == LANE_VARYING && (s->param >= 0 || !ty_is_scalar(s->ty))) ok = false;
    }
    /* (block lanes keep a dividing loop: the other way is a fiber per thread) */
    DivScan D = {L, false};
    if (ok && !L->block && loop_divides(&D, body, false)) ok = false;
    if (!ok) {
        memset(L, 0, sizeof *L);
        return false;
    }
    Privates R;
    memset(&R, 0, sizeof R);
    int ns = k->nsyms > 0 ? k->nsyms : 1;
    R.P = out;
    R.L = L;
    R.total = arena_alloc(a, sizeof(int) * (size_t)ns);
    R.in_run = arena_alloc(a, sizeof(int) * (size_t)ns);
    R.stamp = arena_alloc(a, sizeof(int) * (size_t)ns);
    R.def_first = arena_alloc(a, sizeof(bool) * (size_t)ns);
    R.seen = arena_alloc(a, sizeof(Sym *) * (size_t)ns);
    PlanSymVisit tv = {count_total, &R};
    plan_each_block(body, plan_visit_sym, &tv);
    privates_block(&R, body);
    *bytes = 0;
    *widest = 1;
    for (int i = 0; i < k->nsyms; i++) {
        const Sym *s = k->syms[i];
        if (L->cls[s->id] != LANE_VARYING && L->cls[s->id] != LANE_PRIVATE) continue;
        int b = s->ty->weak ? 8 : s->ty->dtype == KILN_FLOAT16 ? 4 : ty_bits(s->ty) / 8;
        *bytes += b;
        if (b > *widest) *widest = b;
    }
    return true;
}

void plan_lanes(const SemaResult *r, const Sym *coord, int64_t coord_cost, Arena *a,
                CpuPlan *out) {
    const FuncSpec *k = r->kernel;
    LanePlan *L = &out->lanes;
    int dim = out->order[2];
    if (r->uses_sregs || r->uses_ufunc_loops || !plan_atomics_fit(r) || !out->loops ||
        k->storage.n || !coord || !coord->ty || coord->ty->kind != TY_INT ||
        (!coord->ty->weak && coord->ty->dtype != KILN_INT64))
        return; /* (the coordinate is an i64: base + lane is its value) */
    for (int i = 0; i < k->nsyms; i++)
        if (k->syms[i]->maybe_none) return; /* an optional struct (emit_opt.c): not per lane */
    const NodeList *body = &k->def->def.body;
    for (int i = 0; i < body->n && !L->grid_stmt; i++) {
        const Node *st = body->v[i];
        if (st->kind == S_ASSIGN && st->assign.value->kind == E_CALL && st->assign.value->intr &&
            st->assign.value->intr->kind == IK_GRID)
            L->grid_stmt = st;
    }
    /* the grid statement is the one kiln.grid() call: a device function that
     * called it would see the chunk's base, not each lane's position (calls pass
     * KILN_TA, the same for every lane) */
    LaneScan S;
    plan_scan_init(&S, k, a, out);
    for (int i = 0; i < r->order.n; i++)
        plan_each_block(&((const FuncSpec *)r->order.v[i])->def->def.body, count_grid, &S);
    if (S.ngrid != 1 || !L->grid_stmt) return;
    L->k = k;
    L->coord = coord;
    L->dim = dim;
    L->cls = arena_alloc(a, (size_t)(k->nsyms > 0 ? k->nsyms : 1));
    L->cls[coord->id] = LANE_COORD;
    int bytes, widest;
    if (!plan_settle(&S, r, a, out, &bytes, &widest)) return;
    /* the fewest lanes when an access strides along them (a row of a C array per
     * lane): their loads are gathers, and more rows at once only spread them
     * over more lines (row sums of 32 doubles: 64 lanes 1.3x the time of 16) */
    int n = PLAN_LANES_MAX, least = PLAN_LANE_MIN_BYTES / widest;
    while (n > least && (n * bytes > PLAN_LANE_BUDGET || coord_cost > 0)) n /= 2;
    L->n = n;
    L->widest = widest;
}

/* A local that never changes after its one assignment (or a parameter never assigned). */
static bool fixed_sym(const Sym *s) {
    return s->param >= 0 ? s->nassign == 0 : s->nassign == 1;
}

bool plan_int64_type(const Type *t) {
    return t && t->kind == TY_INT && (t->weak || t->dtype == KILN_INT64);
}

/* Whether n can be written again wherever a LANE_RECOMP local assigned n is read: integer
 * arithmetic (+, -, *) of constants, thread and block indices and sizes, grid(1),
 * gridsize(1), uniform locals that never change and LANE_RECOMP locals; no loads. */
bool plan_recomputable(const LanePlan *L, const Node *n) {
    if (!plan_int64_type(n->ty)) return false;
    if (n->intr && (n->kind == E_NAME || n->kind == E_ATTR)) return n->intr->kind == IK_SREG;
    switch ((NodeKind)n->kind) {
    case E_INT: return true;
    case E_NAME:
        return n->sym && fixed_sym(n->sym) &&
               (L->cls[n->sym->id] == LANE_UNIFORM || L->cls[n->sym->id] == LANE_RECOMP);
    case E_BINOP:
        return (n->op == B_ADD || n->op == B_SUB || n->op == B_MUL) &&
               plan_int64_type(n->opty) && plan_recomputable(L, n->bin.l) &&
               plan_recomputable(L, n->bin.r);
    case E_CALL: {
        int64_t nd;
        return !n->callee && n->intr &&
               (n->intr->kind == IK_GRID || n->intr->kind == IK_GRIDSIZE) &&
               n->call.bound.n == 1 && sema_const_int(n->call.bound.v[0], &nd) && nd == 1;
    }
    default: return false;
    }
}
