/* unroll.c: the unrolling plan of a CUDA kernel's `for` loops (unroll.h).
 *
 * Three walks over the loop's body: one that refuses what the copies cannot
 * hold (loops, its own break and continue, barriers, warp operations, size),
 * one that collects the names the body assigns (its locals change between
 * copies; everything else is invariant over a pass), and one over the
 * expressions every iteration evaluates, which takes the loads whose array
 * and index are invariant but for the loop variable.
 */
#include "unroll.h"

#include <string.h>

#include "plan.h"

typedef struct Walk {
    const FuncSpec *k;
    const Sym *var;      /* the loop variable */
    const Sym **set;     /* names assigned in the body */
    int nset, capset;
    Arena *a;
    int nodes;
    bool bad;
    bool stores;         /* the body may write memory (an array, through a call) */
    UnrollPlan *p;
    int caploads;
} Walk;

/* ---- what the body may hold ------------------------------------------------ */

static void check_expr(Walk *w, const Node *n);

static void check_list(Walk *w, const NodeList *l) {
    for (int i = 0; i < l->n && !w->bad; i++) check_expr(w, l->v[i]);
}

/* Whether call n is one that writes no memory: a value of math, a conversion or a
 * bit operation.  A device function, an external one or any other intrinsic may write
 * an array. */
static bool writes_nothing(const Node *n) {
    if (n->callee || n->ext) return false;
    if (!n->intr) /* kiln.float32(x), np.int64(x): a conversion */
        return n->call.fn && n->call.fn->ty && n->call.fn->ty->kind == TY_DTYPE;
    switch ((IntrKind)n->intr->kind) {
    case IK_GRID: case IK_GRIDSIZE: case IK_DTYPE: case IK_MATH1: case IK_MATH2: case IK_LOG:
    case IK_ROUNDING: case IK_PRED: case IK_ABS: case IK_MINMAX: case IK_NPMINMAX: case IK_POWER:
    case IK_SIGN: case IK_INT: case IK_FLOAT: case IK_BOOL: case IK_ROUND: case IK_LEN: case IK_FMA:
    case IK_BITS: case IK_SELP: case IK_LDEXP: case IK_SPLIT: case IK_DIVMOD: case IK_BINOP:
    case IK_COMPLEX: case IK_CMATH:
        return true;
    default: return false;
    }
}

static void check_expr(Walk *w, const Node *n) {
    if (!n || w->bad) return;
    if (++w->nodes > UNROLL_MAX_NODES) {
        w->bad = true;
        return;
    }
    switch ((NodeKind)n->kind) {
    case E_BINOP:
    case E_BOOLOP:
        check_expr(w, n->bin.l);
        check_expr(w, n->bin.r);
        return;
    case E_UNARY: check_expr(w, n->un.x); return;
    case E_COMPARE: check_list(w, &n->cmp.operands); return;
    case E_IFEXP:
        check_expr(w, n->ifexp.cond);
        check_expr(w, n->ifexp.then);
        check_expr(w, n->ifexp.orelse);
        return;
    case E_CALL:
        if (n->intr) {
            switch ((IntrKind)n->intr->kind) {
            case IK_SYNCTHREADS: case IK_SHFL: case IK_VOTE: case IK_ACTIVEMASK: case IK_MATCH: case IK_CG:
                w->bad = true;
                return;
            default: break;
            }
        }
        if (!writes_nothing(n)) w->stores = true;
        check_list(w, n->intr && n->intr->kind == IK_RANGE ? &n->call.args : &n->call.bound);
        return;
    case E_SUBSCRIPT:
        check_expr(w, n->sub.base);
        check_list(w, &n->sub.idx);
        return;
    case E_ATTR: check_expr(w, n->attr.base); return;
    case E_TUPLE: check_list(w, &n->tuple); return;
    case E_SLICE:
        check_expr(w, n->slice.lo);
        check_expr(w, n->slice.hi);
        check_expr(w, n->slice.step);
        return;
    default: return;
    }
}

static void note_target(Walk *w, const Node *t) {
    if (t->kind == E_NAME && t->sym) {
        w->set = arena_grow(w->a, (void *)w->set, &w->capset, w->nset + 1, sizeof(Sym *));
        w->set[w->nset++] = t->sym;
    } else if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++) note_target(w, t->tuple.v[i]);
    }
}

/* Whether an assignment's target binds names only (a local, or a tuple of them). */
static bool names_only(const Node *t) {
    if (t->kind == E_NAME) return true;
    if (t->kind != E_TUPLE) return false;
    for (int i = 0; i < t->tuple.n; i++)
        if (!names_only(t->tuple.v[i])) return false;
    return true;
}

/* depth: loops between the statement and the unrolled loop (a break inside an
 * inner loop... there is none: inner loops are refused) */
static void check_block(Walk *w, const NodeList *l) {
    for (int i = 0; i < l->n && !w->bad; i++) {
        const Node *n = l->v[i];
        if (++w->nodes > UNROLL_MAX_NODES) {
            w->bad = true;
            return;
        }
        switch ((NodeKind)n->kind) {
        case S_FOR: case S_WHILE: case S_BREAK: case S_CONTINUE: case S_DEF:
            w->bad = true;
            return;
        case S_EXPR:
            if (n->uf && n->uf->active) { /* a loop of its own (emit_ufunc.c) */
                w->bad = true;
                return;
            }
            check_expr(w, n->expr);
            break;
        case S_ASSIGN:
            for (int j = 0; j < n->assign.targets.n; j++) {
                note_target(w, n->assign.targets.v[j]);
                check_expr(w, n->assign.targets.v[j]);
                if (!names_only(n->assign.targets.v[j])) w->stores = true;
            }
            check_expr(w, n->assign.value);
            break;
        case S_AUGASSIGN:
            note_target(w, n->aug.target);
            check_expr(w, n->aug.target);
            check_expr(w, n->aug.value);
            if (!names_only(n->aug.target)) w->stores = true;
            break;
        case S_IF:
            check_expr(w, n->ifs.cond);
            check_block(w, &n->ifs.body);
            check_block(w, &n->ifs.orelse);
            break;
        case S_RETURN: check_expr(w, n->ret.value); break;
        case S_ASSERT:
            check_expr(w, n->assrt.test);
            check_expr(w, n->assrt.msg);
            break;
        case S_PASS: break;
        default: w->stores = true; break;
        }
    }
}

/* ---- the loads ---------------------------------------------------------------- */

static bool assigned(const Walk *w, const Sym *s) {
    for (int i = 0; i < w->nset; i++)
        if (w->set[i] == s) return true;
    return false;
}

/* A kernel parameter array that the kernel never assigns nor writes: its
 * parameter index, else -1. */
static int readonly_param(const Walk *w, const Node *base) {
    if (base->kind != E_NAME || !base->sym || !base->ty || base->ty->kind != TY_ARRAY) return -1;
    const Sym *s = base->sym;
    if (s->param < 0 || s->param >= 64 || s->is_local || spec_writes(w->k, s->param)) return -1;
    return s->param;
}

static bool load_candidate(const Walk *w, const Node *n);

/* Whether n has the same value everywhere in a pass's copy of the body for a
 * given value of the loop variable, and evaluating it cannot fail. */
static bool invariant(const Walk *w, const Node *n) {
    if (!n) return true;
    switch ((NodeKind)n->kind) {
    case E_INT: case E_FLOAT: case E_IMAG: case E_BOOL: case E_NONE: return true;
    case E_NAME: return !n->sym || !assigned(w, n->sym);
    case E_BINOP:
        switch ((BinOp)n->op) {
        case B_ADD: case B_SUB: case B_MUL: case B_LSHIFT: case B_RSHIFT: case B_AND: case B_OR:
        case B_XOR:
            return invariant(w, n->bin.l) && invariant(w, n->bin.r);
        case B_FLOORDIV: case B_MOD: {
            /* by a nonzero constant only: a zero divisor is an error at its place */
            int64_t d;
            return sema_const_int(n->bin.r, &d) && d != 0 && invariant(w, n->bin.l);
        }
        default: return false;
        }
    case E_UNARY: return invariant(w, n->un.x);
    case E_ATTR: return invariant(w, n->attr.base);
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++)
            if (!invariant(w, n->tuple.v[i])) return false;
        return true;
    case E_SUBSCRIPT:
        /* a.shape[k], a tuple's item, or a load that could itself be hoisted */
        if (n->sub.base->ty && n->sub.base->ty->kind == TY_TUPLE) {
            if (!invariant(w, n->sub.base)) return false;
            for (int i = 0; i < n->sub.idx.n; i++)
                if (!invariant(w, n->sub.idx.v[i])) return false;
            return true;
        }
        return load_candidate(w, n);
    case E_CALL:
        if (n->callee || !n->intr || !plan_pure(n)) return false;
        switch ((IntrKind)n->intr->kind) {
        case IK_ABS: case IK_MINMAX: case IK_NPMINMAX: case IK_INT: case IK_LEN: return true;
        default: return false;
        }
    default: return false;
    }
}

/* A full subscript of a read-only parameter array at an invariant index. */
static bool load_candidate(const Walk *w, const Node *n) {
    if (n->kind != E_SUBSCRIPT || !n->ty || !ty_is_scalar(n->ty)) return false;
    if (readonly_param(w, n->sub.base) < 0) return false;
    for (int i = 0; i < n->sub.idx.n; i++) {
        const Node *x = n->sub.idx.v[i];
        if (x->kind == E_SLICE || !invariant(w, x)) return false;
    }
    return true;
}

static void take(Walk *w, const Node *n) {
    UnrollPlan *p = w->p;
    if (p->nloads >= UNROLL_MAX_LOADS) return;
    p->loads = arena_grow(w->a, (void *)p->loads, &w->caploads, p->nloads + 1, sizeof(Node *));
    p->loads[p->nloads++] = n;
    p->reads |= 1ull << readonly_param(w, n->sub.base);
}

/* The expressions of n that are evaluated whenever n is. */
static void loads_in(Walk *w, const Node *n) {
    if (!n) return;
    switch ((NodeKind)n->kind) {
    case E_BINOP:
        loads_in(w, n->bin.l);
        loads_in(w, n->bin.r);
        return;
    case E_BOOLOP: loads_in(w, n->bin.l); return;
    case E_UNARY: loads_in(w, n->un.x); return;
    case E_COMPARE:
        loads_in(w, n->cmp.operands.v[0]);
        if (n->cmp.operands.n > 1) loads_in(w, n->cmp.operands.v[1]);
        return;
    case E_IFEXP: loads_in(w, n->ifexp.cond); return;
    case E_CALL:
        if (n->intr && n->intr->kind == IK_RANGE) return;
        for (int i = 0; i < n->call.bound.n; i++) loads_in(w, n->call.bound.v[i]);
        return;
    case E_SUBSCRIPT:
        if (load_candidate(w, n)) {
            take(w, n);
            return;
        }
        for (int i = 0; i < n->sub.idx.n; i++) loads_in(w, n->sub.idx.v[i]);
        return;
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++) loads_in(w, n->tuple.v[i]);
        return;
    default: return;
    }
}

static void loads_of_target(Walk *w, const Node *t) {
    if (t->kind == E_SUBSCRIPT)
        for (int i = 0; i < t->sub.idx.n; i++) loads_in(w, t->sub.idx.v[i]);
    else if (t->kind == E_TUPLE)
        for (int i = 0; i < t->tuple.n; i++) loads_of_target(w, t->tuple.v[i]);
}

bool unroll_plan(const FuncSpec *k, const Node *n, Arena *a, UnrollPlan *out) {
    memset(out, 0, sizeof *out);
    if (!k->is_kernel || n->kind != S_FOR || n->fors.orelse.n > 0 || !n->sym) return false;
    const Node *iter = n->fors.iter;
    const NodeList *args = &iter->call.args;
    const Type *lt = iter->opty;
    if (!lt || lt->kind != TY_INT || lt->dtype != KILN_INT64 || args->n < 1 || args->n > 3)
        return false;
    out->const_step = true;
    if (args->n == 3) {
        int64_t step;
        out->const_step = sema_const_int(args->v[2], &step);
        if (out->const_step && step <= 0) return false;
    }
    /* every array the kernel may write must have its own bit for the run-time check,
     * and arrays may reach it only as parameters (not inside tuples) */
    for (int i = 0; i < k->nparams; i++) {
        const Type *t = k->params[i];
        if ((t->kind != TY_ARRAY && !ty_is_scalar(t)) || ty_is_ptr(t))
            return false; /* (a pointer has no extent to check) */
        if (i >= 64 && t->kind == TY_ARRAY && spec_writes(k, i)) return false;
    }
    Walk w;
    memset(&w, 0, sizeof w);
    w.k = k;
    w.var = n->sym;
    w.a = a;
    w.p = out;
    check_block(&w, &n->fors.body);
    if (w.bad) return false;
    for (int i = 0; i < n->fors.body.n; i++) {
        const Node *s = n->fors.body.v[i];
        switch ((NodeKind)s->kind) {
        case S_EXPR: loads_in(&w, s->expr); break;
        case S_ASSIGN:
            loads_in(&w, s->assign.value);
            for (int j = 0; j < s->assign.targets.n; j++) loads_of_target(&w, s->assign.targets.v[j]);
            break;
        case S_AUGASSIGN:
            loads_in(&w, s->aug.value);
            loads_of_target(&w, s->aug.target);
            break;
        case S_IF: loads_in(&w, s->ifs.cond); break;
        default: break;
        }
    }
    if (out->nloads == 0) return false;
    /* a body that writes no memory cannot change what a hoisted load reads, whatever
     * the arrays' bytes overlap: no run-time check (a row's sum in registers) */
    if (w.stores)
        for (int i = 0; i < k->nparams && i < 64; i++)
            if (k->params[i]->kind == TY_ARRAY && spec_writes(k, i)) out->writes |= 1ull << i;
    return true;
}
