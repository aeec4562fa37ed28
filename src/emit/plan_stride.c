/* plan_stride.c: a grid-stride loop run flat on the CPU (plan.h, CpuPlan.stride_for).
 *
 * Numba-CUDA's documentation writes kernels over arrays larger than the grid as
 *
 *     for i in range(cuda.grid(1), n, cuda.gridsize(1)):   # or start/stride locals
 *         body(i)
 *
 * Thread t runs i = t, t + S, t + 2S, ... (S threads in all), so the launch runs every i
 * of [0, n) exactly once.  When the iterations share nothing (no local carries a value
 * from one to the next, nothing reads the thread's position but through i, nothing runs
 * after the loop), the order of the i is free, as it is on a GPU: the entry then runs the
 * positions [0, n) as one flat, parallel, vectorised loop, and the loop statement runs its
 * body once with i = the position.  Run as written, each CPU thread would walk the array
 * with a stride of S elements (a few bytes of every 64 KiB), which is 3 to 50 times
 * slower than the flat loop (perf33).
 *
 * A thread's partial sum added once after its loop is the same sum over the positions:
 *
 *     acc = 0.0                                   # before the loop, a zero
 *     for i in range(start, n, stride):
 *         acc += f(i)                             # only += and -=, read nowhere else
 *     cuda.atomic.add(res, 0, acc)                # after it: atomic add/sub of acc
 *
 * runs flat too, each position adding its own f(i) (the plan then makes the atomic a
 * reduction variable of the vectorised loop, plan.h); the order of the additions is
 * free, as on a GPU.  A max or a min the same way: `m = -inf` (max's identity, or the
 * integer type's lowest value), `m = max(m, f(i))` in the body, `atomic.max(res, c, m)`
 * after it (min alike): each position folds its own f(i), and a thread with no
 * position adds the identity, which changes nothing, as no position runs for it flat.
 *
 * The loop may also be written as a while, as CUDA C translations do:
 *
 *     i = cuda.grid(1)
 *     while i < n:
 *         body(i)
 *         i += cuda.gridsize(1)                   # its last statement, i's only other
 *                                                 # assignment
 *
 * which is the same loop when nothing before it reads i but its assignment; run flat,
 * the body but the increment runs once per position (emit_stmt.c), whose index needs
 * no negative-index wrap (E->flat_counter).
 *
 * Everything here reads the typed tree; the walks recurse along nested blocks, whose
 * depth the parser bounds (KILN_MAX_NESTING).
 */
#include <math.h>
#include <string.h>

#include "plan_int.h"

/* kiln.grid(1) (kind IK_GRID) or kiln.gridsize(1) (IK_GRIDSIZE). */
static bool call_of_1(const Node *n, int kind) {
    int64_t d;
    return n && n->kind == E_CALL && n->intr && n->intr->kind == kind && !n->callee &&
           n->call.bound.n >= 1 && sema_const_int(n->call.bound.v[0], &d) && d == 1;
}

typedef struct Flat {
    const FuncSpec *k;
    const Sym *coord, *step; /* the locals holding grid(1) and gridsize(1), or NULL */
    uint8_t *in_body;        /* per symbol id: assigned somewhere in the loop's body */
    uint8_t *set;            /* per symbol id: assigned on every path so far */
    Arena *arena;
    uint8_t *acc;            /* per symbol id: an accumulator (below) */
    uint8_t *accop;          /* ...its tail's atomic: IA_ADD, IA_SUB, IA_MAX or IA_MIN */
    const Sym *counter;      /* the loop's i */
    uint64_t written;        /* origins of the arrays the kernel may write */
    uint64_t atomics;        /* ...of those the body updates with atomics */
    int ngrid;               /* grid()/gridsize() calls in the kernel and its callees */
    bool ok;
} Flat;

static void count_grid(void *arg, const Node *n) {
    if (n->kind == E_CALL && n->intr &&
        (n->intr->kind == IK_GRID || n->intr->kind == IK_GRIDSIZE))
        ((Flat *)arg)->ngrid++;
}

/* The names a target assigns (its indices and bases are read, by read_expr). */
static void target_names(Flat *F, const Node *t, void (*fn)(Flat *, const Sym *)) {
    if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++) target_names(F, t->tuple.v[i], fn);
    } else if (t->kind == E_NAME && t->sym) {
        fn(F, t->sym);
    }
}

static void note_in_body(Flat *F, const Sym *s) { F->in_body[s->id] = 1; }
static void note_set(Flat *F, const Sym *s) {
    if (F->acc[s->id]) F->ok = false; /* an accumulator is only added to (`acc += e`) */
    F->set[s->id] = 1;
}

/* Marks in F->in_body the names block l (and the blocks in it) assigns. */
static void mark_assigned(Flat *F, const NodeList *l) {
    for (int i = 0; i < l->n; i++) {
        const Node *n = l->v[i];
        switch ((NodeKind)n->kind) {
        case S_ASSIGN:
            for (int j = 0; j < n->assign.targets.n; j++)
                target_names(F, n->assign.targets.v[j], note_in_body);
            break;
        case S_AUGASSIGN: target_names(F, n->aug.target, note_in_body); break;
        case S_IF:
            for (const Node *c = n; c; c = elif_of(c)) {
                mark_assigned(F, &c->ifs.body);
                if (!elif_of(c)) mark_assigned(F, &c->ifs.orelse);
            }
            break;
        case S_WHILE:
            mark_assigned(F, &n->ifs.body);
            mark_assigned(F, &n->ifs.orelse);
            break;
        case S_FOR:
            if (n->sym) F->in_body[n->sym->id] = 1;
            mark_assigned(F, &n->fors.body);
            mark_assigned(F, &n->fors.orelse);
            break;
        default: break;
        }
    }
}

/* A read of name n in the body: the counter, a parameter, a value the statements before
 * the loop set (nothing in the body assigns it), or a local this iteration has set on
 * every path. */
/* The origins of array expression n: a parameter's bit, a local's origins (a view of
 * parameters), or all of them for anything else. */
static uint64_t origins_of(const Node *n) {
    if (n->kind != E_NAME || !n->sym) return ~UINT64_C(0);
    if (n->sym->param >= 0 && !n->sym->is_local) return origin_of_param(n->sym->param);
    return n->sym->origins;
}

/* Memory the iterations could share: an array the kernel writes is read and written in
 * the body only at [i, ...] (its own row, so another i never sees it: `a[i] += a[i - 1]`
 * in one thread is a chain), through the parameter itself; one it updates with atomics
 * is not read at all; a device function gets none of them; an atomic is a statement
 * (the value it returns depends on the order). */
static void check_memory(Flat *F, const Node *n) {
    if (n->kind == E_SUBSCRIPT && n->sub.base->ty && n->sub.base->ty->kind == TY_ARRAY) {
        uint64_t o = origins_of(n->sub.base);
        if (o & F->atomics) F->ok = false;
        if (!(o & F->written)) return;
        const Node *ix = n->sub.idx.n ? n->sub.idx.v[0] : NULL;
        if (ix && ix->kind == E_TUPLE) ix = ix->tuple.n ? ix->tuple.v[0] : NULL;
        if (!(n->sub.base->kind == E_NAME && n->sub.base->sym->param >= 0 &&
              !n->sub.base->sym->is_local) ||
            !ix || ix->kind != E_NAME || ix->sym != F->counter)
            F->ok = false;
    } else if (n->kind == E_CALL && n->callee) {
        for (int i = 0; i < n->call.bound.n; i++) {
            const Node *a = n->call.bound.v[i];
            if (a && a->ty && a->ty->kind == TY_ARRAY && (origins_of(a) & F->written))
                F->ok = false;
        }
    } else if (n->kind == E_ATTR && n->attr.base->ty && n->attr.base->ty->kind == TY_ARRAY &&
               n->attr.base->kind != E_NAME) {
        F->ok = false; /* (a record field of an element, and the like: not followed) */
    }
}

static void read_name(void *arg, const Node *n) {
    Flat *F = arg;
    check_memory(F, n);
    if (n->kind == E_CALL && n->intr &&
        (n->intr->kind == IK_GRID || n->intr->kind == IK_GRIDSIZE || n->intr->kind == IK_ATOMIC))
        F->ok = false; /* the thread's own position, not i; an atomic's old value */
    if (n->kind != E_NAME || !n->sym) return;
    const Sym *s = n->sym;
    if (s == F->coord || s == F->step) F->ok = false;
    else if (s->param >= 0 && !s->is_local) return;
    else if (F->in_body[s->id] && !F->set[s->id]) F->ok = false; /* carried, or unset */
}

static void read_expr(Flat *F, const Node *n) { plan_each_expr(n, read_name, F); }

/* The reads of an assignment's target: all of it but a plain name. */
static void read_target(Flat *F, const Node *t) {
    if (t->kind == E_TUPLE)
        for (int i = 0; i < t->tuple.n; i++) read_target(F, t->tuple.v[i]);
    else if (t->kind != E_NAME)
        read_expr(F, t);
}

static void scan_block(Flat *F, const NodeList *l, int loops);

/* One statement of the body (loops: the loops of the body around it), checking that
 * every local it reads is set first, on every path, in this iteration. */
static void scan_stmt(Flat *F, const Node *n, int loops) {
    int ns = F->k->nsyms > 0 ? F->k->nsyms : 1;
    switch ((NodeKind)n->kind) {
    case S_PASS: return;
    case S_EXPR:
        if (n->expr->kind == E_CALL && n->expr->intr && n->expr->intr->kind == IK_ATOMIC) {
            /* its array is updated, not read: its index and value are */
            for (int i = 1; i < n->expr->call.bound.n; i++) read_expr(F, n->expr->call.bound.v[i]);
            return;
        }
        read_expr(F, n->expr);
        return;
    case S_ASSIGN: {
        const Node *t = n->assign.targets.n == 1 ? n->assign.targets.v[0] : NULL;
        const Node *v = n->assign.value, *other = NULL;
        if (t && t->kind == E_NAME && t->sym && F->acc[t->sym->id] &&
            (F->accop[t->sym->id] == IA_MAX || F->accop[t->sym->id] == IA_MIN)) {
            /* m = max(m, e) (min for atomic.min): e may not read m */
            if (v->kind == E_CALL && v->intr && v->intr->kind == IK_MINMAX && !v->callee &&
                v->intr->sub == (F->accop[t->sym->id] == IA_MAX) && v->call.args.n == 2) {
                for (int j = 0; j < 2; j++) {
                    const Node *x = v->call.args.v[j];
                    if (x->kind == E_NAME && x->sym == t->sym) other = v->call.args.v[1 - j];
                }
            }
            if (!other) {
                F->ok = false;
                return;
            }
            read_expr(F, other);
            return;
        }
        read_expr(F, n->assign.value);
        for (int i = 0; i < n->assign.targets.n; i++) read_target(F, n->assign.targets.v[i]);
        for (int i = 0; i < n->assign.targets.n; i++)
            target_names(F, n->assign.targets.v[i], note_set);
        return;
    }
    case S_AUGASSIGN:
        if (n->aug.target->kind == E_NAME && n->aug.target->sym &&
            F->acc[n->aug.target->sym->id]) { /* acc += e: e may not read acc */
            int op = F->accop[n->aug.target->sym->id];
            if ((n->op != B_ADD && n->op != B_SUB) || (op != IA_ADD && op != IA_SUB))
                F->ok = false;
            read_expr(F, n->aug.value);
            return;
        }
        read_expr(F, n->aug.target);
        read_expr(F, n->aug.value);
        return;
    case S_IF: {
        /* set after it: what both branches set (an elif chain ends in its else) */
        uint8_t *saved = arena_alloc(F->arena, (size_t)ns), *both = arena_alloc(F->arena, (size_t)ns);
        read_expr(F, n->ifs.cond);
        memcpy(saved, F->set, (size_t)ns);
        scan_block(F, &n->ifs.body, loops);
        memcpy(both, F->set, (size_t)ns);
        memcpy(F->set, saved, (size_t)ns);
        scan_block(F, &n->ifs.orelse, loops);
        for (int i = 0; i < ns; i++) F->set[i] &= both[i];
        return;
    }
    case S_WHILE:
    case S_FOR: {
        /* the body may run no time: what it sets counts inside it only */
        uint8_t *saved = arena_alloc(F->arena, (size_t)ns);
        memcpy(saved, F->set, (size_t)ns);
        if (n->kind == S_WHILE) {
            read_expr(F, n->ifs.cond);
            scan_block(F, &n->ifs.body, loops + 1);
        } else {
            read_expr(F, n->fors.iter);
            if (n->sym) note_set(F, n->sym);
            scan_block(F, &n->fors.body, loops + 1);
        }
        memcpy(F->set, saved, (size_t)ns);
        scan_block(F, n->kind == S_WHILE ? &n->ifs.orelse : &n->fors.orelse, loops);
        memcpy(F->set, saved, (size_t)ns);
        return;
    }
    case S_BREAK: case S_CONTINUE:
        if (!loops) F->ok = false; /* the grid-stride loop's own */
        return;
    default: F->ok = false; return; /* return, raise, assert, def */
    }
}

static void scan_block(Flat *F, const NodeList *l, int loops) {
    for (int i = 0; i < l->n && F->ok; i++) scan_stmt(F, l->v[i], loops);
}

/* The origins of the arrays block l updates with atomics (statements or not). */
static void atomic_targets(void *arg, const Node *n) {
    if (n->kind == E_CALL && n->intr && n->intr->kind == IK_ATOMIC && n->call.bound.n)
        ((Flat *)arg)->atomics |= origins_of(n->call.bound.v[0]);
}

/* Whether expression n reads an array element (a statement before the loop that did
 * would run again at every position, and see the loop's writes). */
static void loads(void *arg, const Node *n) {
    if (n->kind == E_SUBSCRIPT && n->sub.base->ty && n->sub.base->ty->kind == TY_ARRAY)
        *(bool *)arg = true;
}

/* `kiln.atomic.add(res, c, acc)`, `sub`, `max` or `min`: res an array parameter, acc a
 * local. */
static bool acc_tail(const Node *st) {
    const Node *e = st->kind == S_EXPR ? st->expr : NULL;
    if (!e || e->kind != E_CALL || !e->intr || e->intr->kind != IK_ATOMIC ||
        (e->intr->sub != IA_ADD && e->intr->sub != IA_SUB && e->intr->sub != IA_MAX &&
         e->intr->sub != IA_MIN) ||
        e->call.bound.n != 3)
        return false;
    const Node *res = e->call.bound.v[0], *acc = e->call.bound.v[2];
    return res->kind == E_NAME && res->sym && res->sym->param >= 0 && !res->sym->is_local &&
           acc->kind == E_NAME && acc->sym && acc->sym->param < 0;
}

/* Clears *arg (a const Sym *) where n reads it. */
static void reads_sym(void *arg, const Node *n) {
    const Sym **s = arg;
    if (n->kind == E_NAME && *s && n->sym == *s) *s = NULL;
}

/* Whether constant v is max's identity (-inf, or its integer type's lowest value) or,
 * for min, +inf or the highest. */
static bool minmax_identity(const Node *v, bool max) {
    if (!(v->flags & NF_CONST) || !v->ty) return false;
    if (v->ty->kind == TY_FLOAT) return v->cval.f == (max ? -HUGE_VAL : HUGE_VAL);
    int64_t x;
    if (!ty_is_int(v->ty) || !sema_const_int(v, &x)) return false;
    int bits = ty_bits(v->ty);
    if (ty_is_signed(v->ty))
        return max ? x == (bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)))
                   : x == (bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1);
    return max ? x == 0 : (bits == 64 ? (uint64_t)x == UINT64_MAX
                                      : (uint64_t)x == (UINT64_C(1) << bits) - 1);
}

void plan_stride(const SemaResult *r, Arena *a, CpuPlan *out) {
    const FuncSpec *k = r->kernel;
    if (r->uses_sregs || r->block_mode || r->cooperative || k->storage.n) return;
    const NodeList *body = &k->def->def.body;
    int last = body->n - 1;
    while (last >= 0 && (body->v[last]->kind == S_PASS ||
                         (body->v[last]->kind == S_EXPR && body->v[last]->expr->kind == E_STR)))
        last--;
    /* the atomic tails: `atomic.add(res, c, acc)` of accumulators, after the loop */
    int tails = last + 1;
    while (last >= 0 && acc_tail(body->v[last])) last--;
    if (last < 0) return;
    Node *loop = body->v[last];
    const Node *it = loop->kind == S_FOR ? loop->fors.iter : NULL;
    /* or the same loop as a while: `i = grid(1)` before it, `while i < n:`, and the
     * body's last statement `i += stride` (its only other assignment) */
    const Sym *wvar = NULL;
    Node *wstop = NULL;
    const Node *wstep = NULL;
    NodeList wbody = {0};
    if (loop->kind == S_WHILE && !loop->ifs.orelse.n && loop->ifs.body.n >= 2) {
        const Node *c = loop->ifs.cond, *inc = loop->ifs.body.v[loop->ifs.body.n - 1];
        if (c->kind == E_COMPARE && c->cmp.operands.n == 2 && c->cmp.ops[0] == C_LT &&
            c->cmp.operands.v[0]->kind == E_NAME && inc->kind == S_AUGASSIGN &&
            inc->op == B_ADD && inc->aug.target->kind == E_NAME &&
            inc->aug.target->sym == c->cmp.operands.v[0]->sym) {
            wvar = inc->aug.target->sym;
            wstop = c->cmp.operands.v[1];
            wstep = inc->aug.value;
            wbody.v = loop->ifs.body.v;
            wbody.n = loop->ifs.body.n - 1;
        }
        if (!wvar || wvar->param >= 0 || wvar->nassign != 2 || !wvar->ty ||
            wvar->ty->kind != TY_INT || !ty_is_signed(wvar->ty) || !wstop->ty ||
            !ty_is_int(wstop->ty))
            return;
    } else if (!it || loop->fors.orelse.n || !loop->sym || it->kind != E_CALL || !it->intr ||
               it->intr->kind != IK_RANGE || it->call.args.n != 3 || !it->opty ||
               it->opty->kind != TY_INT || !ty_is_signed(it->opty)) {
        return;
    }
    Flat F;
    memset(&F, 0, sizeof F);
    F.k = k;
    F.ok = true;
    F.arena = a;
    int ns = k->nsyms > 0 ? k->nsyms : 1;
    F.in_body = arena_alloc(a, (size_t)ns);
    F.set = arena_alloc(a, (size_t)ns);
    F.acc = arena_alloc(a, (size_t)ns);
    F.accop = arena_alloc(a, (size_t)ns);
    for (int i = last + 1; i < tails; i++) {
        const Node *e = body->v[i]->expr;
        int id = e->call.bound.v[2]->sym->id, op = e->intr->sub;
        bool sum = op == IA_ADD || op == IA_SUB;
        /* one accumulator, one kind of tail (a sum's add and sub mix) */
        if (F.acc[id] && (F.accop[id] == IA_ADD || F.accop[id] == IA_SUB) != sum) return;
        if (F.acc[id] && !sum && F.accop[id] != op) return;
        F.acc[id] = 1;
        F.accop[id] = (uint8_t)op;
    }
    /* the statements before the loop: pure, uniform but for the two positions */
    GuardPlan defs;
    memset(&defs, 0, sizeof defs);
    int expected = 0;
    bool wstart = false;
    for (int i = 0; i < last; i++) {
        const Node *st = body->v[i];
        if (!plan_simple_prefix(st)) return;
        bool load = false;
        if (st->kind == S_ASSIGN) plan_each_expr(st->assign.value, loads, &load);
        if (load) return;
        const Node *v = st->kind == S_ASSIGN ? st->assign.value : NULL;
        const Node *t = v && st->assign.targets.n == 1 ? st->assign.targets.v[0] : NULL;
        bool one = t && t->kind == E_NAME && t->sym && t->sym->nassign == 1 && t->sym->param < 0;
        if (t && t->kind == E_NAME && t->sym && F.acc[t->sym->id]) {
            int64_t z;
            bool zero = (v->flags & NF_CONST) && v->ty &&
                        (ty_is_int(v->ty) ? sema_const_int(v, &z) && z == 0
                                          : v->ty->kind == TY_FLOAT && v->cval.f == 0.0);
            /* a sum starts at zero, a max at -inf (or the integer's lowest value), a min
             * at +inf (or its highest): the thread's tail then adds nothing when it has
             * no position, as no position runs for it when the loop is flat */
            int op = F.accop[t->sym->id];
            bool start = op == IA_MAX || op == IA_MIN ? minmax_identity(v, op == IA_MAX) : zero;
            if (!start || F.acc[t->sym->id] == 2) return;
            F.acc[t->sym->id] = 2; /* (its start seen) */
        } else if (wvar && t && t->kind == E_NAME && t->sym == wvar) {
            if (!call_of_1(v, IK_GRID) || wstart) return; /* the while's i = grid(1) */
            wstart = true;
            expected++;
        } else if (one && call_of_1(v, IK_GRID) && !F.coord) {
            F.coord = t->sym;
            expected++;
        } else if (one && call_of_1(v, IK_GRIDSIZE) && !F.step) {
            F.step = t->sym;
            expected++;
        } else {
            plan_note_defs(&defs, a, st);
        }
    }
    /* nothing before the loop may read a position (a value per thread) */
    if (wvar && !wstart) return;
    for (int i = 0; i < last; i++) {
        const Node *st = body->v[i];
        if (st->kind != S_ASSIGN || call_of_1(st->assign.value, IK_GRID) ||
            call_of_1(st->assign.value, IK_GRIDSIZE))
            continue;
        Flat probe = F;
        probe.ok = true;
        read_expr(&probe, st->assign.value);
        if (!probe.ok) return;
        if (wvar) { /* nor the while's i, the thread's first position */
            const Sym *w = wvar;
            plan_each_expr(st->assign.value, reads_sym, &w);
            if (!w) return;
        }
    }
    for (int i = last + 1; i < tails; i++) {
        /* each term goes to the array as the thread's sum would: in the array's dtype */
        const NodeList *b = &body->v[i]->expr->call.bound;
        const Type *at = b->v[2]->sym->ty, *el = b->v[0]->ty ? b->v[0]->ty->elem : NULL;
        if (F.acc[b->v[2]->sym->id] != 2 || !plan_invariant(&defs, b->v[1]) || !el || !at ||
            at->kind != el->kind || at->dtype != el->dtype)
            return;
    }
    Node *stop;
    const Node *stepx;
    if (wvar) {
        stop = wstop;
        stepx = wstep;
    } else {
        Node *const *arg = it->call.args.v;
        bool start = call_of_1(arg[0], IK_GRID) ||
                     (F.coord && arg[0]->kind == E_NAME && arg[0]->sym == F.coord);
        if (!start) return;
        expected += call_of_1(arg[0], IK_GRID);
        stop = arg[1];
        stepx = arg[2];
    }
    bool step = call_of_1(stepx, IK_GRIDSIZE) ||
                (F.step && stepx->kind == E_NAME && stepx->sym == F.step);
    if (!step || !plan_invariant(&defs, stop)) return;
    expected += call_of_1(stepx, IK_GRIDSIZE);
    /* the positions are read there and nowhere else, callees included */
    for (int i = 0; i < r->order.n; i++)
        plan_each_block(&((const FuncSpec *)r->order.v[i])->def->def.body, count_grid, &F);
    if (F.ngrid != expected) return;
    /* the counter, read only in the loop (nothing follows it); the locals the body
     * sets, each set before it is read in every iteration */
    const NodeList *lb = wvar ? &wbody : &loop->fors.body;
    const Sym *counter = wvar ? wvar : loop->sym;
    mark_assigned(&F, lb);
    if (F.in_body[counter->id]) return; /* (the while's i: only its increment) */
    F.set[counter->id] = 1;
    F.counter = counter;
    F.written = k->written;
    plan_each_block(lb, atomic_targets, &F);
    scan_block(&F, lb, 0);
    if (!F.ok) return;
    out->stride_for = loop;
    out->stride_stop = plan_resolved(&defs, a, stop);
    out->loops = plan_has_loop(lb);
}
