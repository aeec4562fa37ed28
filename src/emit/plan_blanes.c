/* plan_blanes.c: block lanes' plan (plan.h atop, "Block lanes"): which block kernels run
 * as lane loops over a block's threads, and which of their locals are thread positions
 * written again where read (LANE_RECOMP).  The uniformity analysis is lane mode's
 * (plan_lanes.c, which this file calls), with the thread indices as its roots.
 */
#include <string.h>

#include "plan_int.h"

typedef struct BlockScan {
    int barriers; /* syncthreads()/syncwarp() calls */
    bool bad;     /* a warp operation, a predicate barrier, a local array, cooperative groups */
} BlockScan;

static void block_expr(void *arg, const Node *n) {
    BlockScan *B = arg;
    if (n->kind != E_CALL || !n->intr) return;
    switch ((IntrKind)n->intr->kind) {
    case IK_SYNCTHREADS:
        if (n->intr->sub >= IY_AND) B->bad = true; /* its value is a count over the block */
        B->barriers++;
        break;
    case IK_SHFL: case IK_VOTE: case IK_ACTIVEMASK: case IK_MATCH: case IK_CG:
    case IK_LOCAL_ARRAY:
        B->bad = true;
        break;
    default: break;
    }
}

static void count_barrier_stmts(const NodeList *l, int *n) {
    for (int i = 0; i < l->n; i++) {
        const Node *st = l->v[i];
        if (plan_barrier_stmt(st)) (*n)++;
        if (st->kind == S_IF) {
            for (const Node *c = st; c; c = elif_of(c)) {
                count_barrier_stmts(&c->ifs.body, n);
                if (!elif_of(c)) count_barrier_stmts(&c->ifs.orelse, n);
            }
        } else if (st->kind == S_FOR) {
            count_barrier_stmts(&st->fors.body, n);
            count_barrier_stmts(&st->fors.orelse, n);
        } else if (st->kind == S_WHILE) {
            count_barrier_stmts(&st->ifs.body, n);
            count_barrier_stmts(&st->ifs.orelse, n);
        }
    }
}

/* Marks s LANE_RECOMP, of value v (part: grid()'s dimension, or -1). */
static void recomp(LanePlan *L, Arena *a, const Sym *s, const Node *v, int part) {
    if (!L->recomp) {
        int ns = L->k->nsyms > 0 ? L->k->nsyms : 1;
        L->recomp = arena_alloc(a, sizeof(Node *) * (size_t)ns);
        L->recomp_part = arena_alloc(a, (size_t)ns);
    }
    L->cls[s->id] = LANE_RECOMP;
    L->recomp[s->id] = v;
    L->recomp_part[s->id] = (int8_t)part;
}

/* The kernel's top-level assignments whose targets are LANE_RECOMP (in order, so that
 * one may read the ones before it). */
static void plan_recomp(LanePlan *L, Arena *a) {
    const NodeList *body = &L->k->def->def.body;
    for (int i = 0; i < body->n; i++) {
        const Node *st = body->v[i];
        if (st->kind != S_ASSIGN || st->assign.targets.n != 1) continue;
        const Node *t = st->assign.targets.v[0], *v = st->assign.value;
        if (t->kind == E_NAME) {
            const Sym *s = t->sym;
            if (s && s->param < 0 && s->nassign == 1 && plan_int64_type(s->ty) &&
                (L->cls[s->id] == LANE_VARYING || L->cls[s->id] == LANE_PRIVATE) &&
                plan_recomputable(L, v))
                recomp(L, a, s, v, -1);
            continue;
        }
        /* x, y = grid(2) */
        int64_t nd;
        if (t->kind != E_TUPLE || v->kind != E_CALL || v->callee || !v->intr ||
            v->intr->kind != IK_GRID || v->call.bound.n != 1 ||
            !sema_const_int(v->call.bound.v[0], &nd) || nd != t->tuple.n)
            continue;
        bool all = true;
        for (int d = 0; d < t->tuple.n && all; d++) {
            const Node *x = t->tuple.v[d];
            all = x->kind == E_NAME && x->sym && x->sym->param < 0 && x->sym->nassign == 1 &&
                  plan_int64_type(x->sym->ty);
        }
        for (int d = 0; d < t->tuple.n && all; d++) recomp(L, a, t->tuple.v[d]->sym, v, d);
    }
}

void plan_block_lanes(const SemaResult *r, Arena *a, CpuPlan *out) {
    const FuncSpec *k = r->kernel;
    LanePlan *L = &out->lanes;
    memset(L, 0, sizeof *L);
    if (!r->block_mode || r->cooperative || r->spin || r->uses_ufunc_loops || !plan_atomics_fit(r))
        return;
    for (int i = 0; i < k->nsyms; i++)
        if (k->syms[i]->maybe_none) return;
    /* the kernel's barriers are statements of its own, its storage shared arrays; its
     * device functions have neither (a callee runs within one lane loop) */
    BlockScan B = {0, false};
    for (int i = 0; i < r->order.n && !B.bad; i++) {
        const FuncSpec *f = r->order.v[i];
        if (f != k && f->storage.n) return;
        plan_each_block(&f->def->def.body, block_expr, &B);
    }
    int stmts = 0;
    count_barrier_stmts(&k->def->def.body, &stmts);
    if (B.bad || stmts != B.barriers) return;
    LaneScan S;
    plan_scan_init(&S, k, a, out);
    L->k = k;
    L->block = true;
    L->cls = arena_alloc(a, (size_t)(k->nsyms > 0 ? k->nsyms : 1));
    size_t nsz = sizeof(Node *) * (size_t)(k->nsyms > 0 ? k->nsyms : 1);
    S.txdef = arena_alloc(a, nsz);
    S.topdef = arena_alloc(a, nsz);
    L->wdef = arena_alloc(a, nsz);
    const NodeList *body = &k->def->def.body;
    for (int i = 0; i < body->n; i++) {
        const Node *st = body->v[i];
        if (st->kind != S_ASSIGN || st->assign.targets.n != 1) continue;
        const Node *t = st->assign.targets.v[0];
        if (t->kind != E_NAME || !t->sym || t->sym->param >= 0) continue;
        if (!S.topdef[t->sym->id]) S.topdef[t->sym->id] = st->assign.value;
        if (t->sym->nassign == 1) S.txdef[t->sym->id] = st->assign.value;
    }
    int bytes, widest;
    if (!plan_settle(&S, r, a, out, &bytes, &widest)) return;
    plan_recomp(L, a);
    bytes = 0;
    for (int i = 0; i < k->nsyms; i++) {
        const Sym *s = k->syms[i];
        if (L->cls[s->id] == LANE_VARYING)
            bytes += s->ty->weak ? 8 : s->ty->dtype == KILN_FLOAT16 ? 4 : ty_bits(s->ty) / 8;
    }
    /* the varying locals are arrays of a block's threads on the stack */
    if ((int64_t)bytes * KILN_MAX_BLOCK_THREADS > PLAN_BLOCK_LANE_BYTES) {
        memset(L, 0, sizeof *L);
        return;
    }
    L->n = KILN_MAX_BLOCK_THREADS;
    L->widest = widest;
}
