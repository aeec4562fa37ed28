/* emit_tier0_scan.c: tier 0's vector entry, what varies (emit_tier0_int.h).
 *
 * A fixed point over the kernel and the device functions it inlines: a variable varies
 * when it takes a varying value or is assigned under a varying condition (or in a loop
 * with a varying break or continue); a return, break or continue under a varying
 * condition is a varying exit, which gives what it leaves a mask.  Constructs the
 * entry does not cover mark the kernel BAD.
 */
#include <string.h>

#include "emit/emit_tier0_int.h"

/* ---- maps ---- */
int *t0_pm_slot(T0 *t, PMap *m, const void *key, bool add) {
    if (!m->cap || (add && 2 * (m->n + 1) > m->cap)) {
        if (!add) return NULL;
        int cap = m->cap ? 2 * m->cap : 64;
        const void **k = arena_alloc(t->A, sizeof(void *) * (size_t)cap);
        int *v = arena_alloc(t->A, sizeof(int) * (size_t)cap);
        memset(k, 0, sizeof(void *) * (size_t)cap);
        for (int i = 0; i < m->cap; i++)
            if (m->k[i]) {
                size_t h = ((uintptr_t)m->k[i] >> 4) & (size_t)(cap - 1);
                while (k[h]) h = (h + 1) & (size_t)(cap - 1);
                k[h] = m->k[i];
                v[h] = m->v[i];
            }
        m->k = k;
        m->v = v;
        m->cap = cap;
    }
    size_t h = ((uintptr_t)key >> 4) & (size_t)(m->cap - 1);
    while (m->k[h] && m->k[h] != key) h = (h + 1) & (size_t)(m->cap - 1);
    if (!m->k[h]) {
        if (!add) return NULL;
        m->k[h] = key;
        m->v[h] = 0;
        m->n++;
    }
    return &m->v[h];
}
int t0_pm_get(T0 *t, PMap *m, const void *key) {
    int *p = t0_pm_slot(t, m, key, false);
    return p ? *p : 0;
}
static void pm_or(T0 *t, PMap *m, const void *key, int bits) {
    int *p = t0_pm_slot(t, m, key, true);
    if ((*p | bits) != *p) {
        *p |= bits;
        t->changed = true;
    }
}

/* The dtype a scalar of type ty is held in, or -1 for none the vector entry holds. */
int t0_vdt(const Type *ty) {
    if (!ty) return -1;
    if (ty->kind == TY_BOOL) return KILN_BOOL;
    if (ty->kind == TY_INT) return ty->weak ? KILN_INT64 : ty->dtype;
    if (ty->kind == TY_FLOAT) {
        if (ty->weak) return KILN_FLOAT64;
        if (ty->dtype == KILN_FLOAT32 || ty->dtype == KILN_FLOAT64) return ty->dtype;
    }
    return -1;
}
bool t0_dt_float(int dt) { return dt == KILN_FLOAT32 || dt == KILN_FLOAT64; }

/* ---- the scan: which values vary, which exits are varying ------------------------ */

bool t0_varies(T0 *t, const Sym *s) { return t0_pm_get(t, &t->sym, s) & 1; }

bool t0_is_call(const Node *n, int kind) {
    return n && n->kind == E_CALL && n->intr && n->intr->kind == kind;
}

int t0_grid_dims(const Node *n) {
    int64_t nd = 1;
    if (n->call.bound.n) sema_const_int(n->call.bound.v[0], &nd);
    return (int)nd;
}

/* Whether f (and what it calls) reads no thread coordinate and writes nothing: a call
 * with uniform arguments is then uniform. */
static bool fn_pure(T0 *t, FuncSpec *f);


static bool any_child_varies(T0 *t, Node *n) {
    bool v = false;
    switch ((NodeKind)n->kind) {
    case E_BINOP:
    case E_BOOLOP: /* each side scanned: t0_vary marks what it calls */
        v = t0_vary(t, n->bin.l);
        v |= t0_vary(t, n->bin.r);
        break;
    case E_UNARY: v = t0_vary(t, n->un.x); break;
    case E_COMPARE:
        for (int i = 0; i < n->cmp.operands.n; i++) v |= t0_vary(t, n->cmp.operands.v[i]);
        break;
    case E_IFEXP:
        v = t0_vary(t, n->ifexp.cond);
        v |= t0_vary(t, n->ifexp.then);
        v |= t0_vary(t, n->ifexp.orelse);
        break;
    case E_CALL:
        for (int i = 0; i < n->call.bound.n; i++)
            if (n->call.bound.v[i]) v |= t0_vary(t, n->call.bound.v[i]);
        break;
    case E_SUBSCRIPT:
        v = t0_vary(t, n->sub.base);
        for (int i = 0; i < n->sub.idx.n; i++) v |= t0_vary(t, n->sub.idx.v[i]);
        break;
    case E_ATTR: v = t0_vary(t, n->attr.base); break;
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++) v |= t0_vary(t, n->tuple.v[i]);
        break;
    case E_SLICE:
        if (n->slice.lo) v |= t0_vary(t, n->slice.lo);
        if (n->slice.hi) v |= t0_vary(t, n->slice.hi);
        if (n->slice.step) v |= t0_vary(t, n->slice.step);
        break;
    default: break;
    }
    return v;
}

/* What an intrinsic is to the vector entry: an ordinary function of its arguments, one
 * that reads or acts for its own thread, or one it does not cover (the block's threads
 * meet or talk). */
enum { IN_PLAIN, IN_THREAD, IN_REFUSED };
static int intrinsic_class(const Node *n) {
    if (!n->intr) return IN_PLAIN;
    switch ((IntrKind)n->intr->kind) {
    case IK_SREG:
    case IK_GRID:
    case IK_ATOMIC:
    case IK_PRINT: return IN_THREAD;
    case IK_LANEID:
    case IK_SYNCTHREADS:
    case IK_THREADFENCE:
    case IK_SHARED_ARRAY:
    case IK_LOCAL_ARRAY:
    case IK_SHFL:
    case IK_VOTE:
    case IK_ACTIVEMASK:
    case IK_MATCH:
    case IK_CG: return IN_REFUSED;
    default: return IN_PLAIN;
    }
}

/* Whether n's value may differ between the threads of a row, marking what it calls. */
bool t0_vary(T0 *t, Node *n) {
    if (!n || t->bad) return false;
    if ((n->flags & NF_CONST) && ty_is_scalar(n->ty)) return false;
    if (n->kind == E_NAME && n->sym) {
        if (n->sym->maybe_none) BAD(t);
        return t0_varies(t, n->sym);
    }
    switch (intrinsic_class(n)) {
    case IN_REFUSED: BAD(t); return false;
    case IN_THREAD:
        if (n->intr->kind == IK_SREG) /* tid.x and bid.x: y, z and the sizes are the row's */
            return n->intr->sub == 0 || n->intr->sub == 3;
        any_child_varies(t, n); /* marks what its arguments call */
        return true;            /* each thread's own call */
    default: break;
    }
    bool v = any_child_varies(t, n);
    if (n->kind == E_CALL && n->callee) {
        FuncSpec *f = n->callee;
        if (f->recursive || (!v && fn_pure(t, f))) return v;
        /* inlined: its parameters take the arguments */
        for (int i = 0; i < n->call.bound.n && i < f->nparams; i++)
            if (n->call.bound.v[i] && t0_vary(t, n->call.bound.v[i]) && t0_vdt(f->psyms[i]->ty) >= 0)
                pm_or(t, &t->sym, f->psyms[i], 1);
        t0_scan_fn(t, f);
        return true;
    }
    return v;
}

typedef struct Scope {
    int div;   /* varying ifs and loops since the function's top */
    int ldiv;  /* ... since the innermost loop's body */
    Node *loop;
    bool loop_vexit; /* the innermost loop has a varying break or continue */
} Scope;

static void scan_block(T0 *t, FuncSpec *f, NodeList *l, Scope sc);

static void assigned(T0 *t, Node *target, bool v, Scope sc) {
    if (target->kind == E_NAME && target->sym) {
        /* a variable that varies is an array of its lanes: of a number type only */
        if ((t0_vdt(target->sym->ty) < 0 && (v || sc.div || sc.loop_vexit)) ||
            target->sym->maybe_none)
            BAD(t);
        if (v || sc.div || sc.loop_vexit) pm_or(t, &t->sym, target->sym, 1);
    } else if (target->kind == E_TUPLE) {
        for (int i = 0; i < target->tuple.n; i++) assigned(t, target->tuple.v[i], v, sc);
    } else {
        t0_vary(t, target); /* a subscript's indices, its calls */
    }
}

static void scan_stmt1(T0 *t, FuncSpec *f, Node *n, Scope sc);

/* Statements nested deeper than this (an elif chain is one level per elif, inlined
 * functions count too) get no vector entry: the walks here recurse. */
enum { T0_MAX_NEST = 48 };

static void scan_stmt(T0 *t, FuncSpec *f, Node *n, Scope sc) {
    if (++t->depth > T0_MAX_NEST) BAD(t);
    else scan_stmt1(t, f, n, sc);
    t->depth--;
}

static void scan_stmt1(T0 *t, FuncSpec *f, Node *n, Scope sc) {
    switch ((NodeKind)n->kind) {
    case S_EXPR:
        if (n->uf) BAD(t); /* a ufunc statement's loop (emit_ufunc.c) */
        if (n->expr) t0_vary(t, n->expr);
        return;
    case S_ASSIGN: {
        Node *v = n->assign.value;
        for (int i = 0; i < n->assign.targets.n; i++) {
            Node *tg = n->assign.targets.v[i];
            if (tg->kind == E_TUPLE) {
                if (t0_is_call(v, IK_GRID) && t0_grid_dims(v) == tg->tuple.n) {
                    for (int k = 0; k < tg->tuple.n; k++)
                        assigned(t, tg->tuple.v[k], k == 0, sc);
                    continue;
                }
                if (v->kind != E_TUPLE || v->tuple.n != tg->tuple.n) {
                    if (t0_vary(t, v) || sc.div || sc.loop_vexit) BAD(t);
                    assigned(t, tg, false, sc);
                    continue;
                }
                for (int k = 0; k < tg->tuple.n; k++) {
                    if (tg->tuple.v[k]->kind == E_TUPLE) BAD(t);
                    assigned(t, tg->tuple.v[k], t0_vary(t, v->tuple.v[k]), sc);
                }
                continue;
            }
            if (t0_is_call(v, IK_GRID) && t0_grid_dims(v) > 1) {
                BAD(t);
                return;
            }
            assigned(t, tg, t0_vary(t, v), sc);
        }
        return;
    }
    case S_AUGASSIGN: {
        bool v = t0_vary(t, n->aug.value);
        v |= t0_vary(t, n->aug.target);
        assigned(t, n->aug.target, v, sc);
        return;
    }
    case S_IF: {
        if (n == t->guard) { /* folded: its threads are the blocks' range */
            if (!t->guard_early) scan_block(t, f, &n->ifs.body, sc);
            return;
        }
        bool v = t0_vary(t, n->ifs.cond);
        Scope in = sc;
        if (v) {
            in.div++;
            in.ldiv++;
        }
        scan_block(t, f, &n->ifs.body, in);
        scan_block(t, f, &n->ifs.orelse, in);
        return;
    }
    case S_WHILE:
    case S_FOR: {
        if (n->kind == S_FOR) {
            Node *it = n->fors.iter;
            if (n->fors.orelse.n || !t0_is_call(it, IK_RANGE) || !n->sym || t0_vdt(n->sym->ty) < 0 ||
                it->call.args.n < 1 || it->call.args.n > 3) {
                BAD(t);
                return;
            }
            for (int i = 0; i < it->call.args.n; i++)
                if (t0_vary(t, it->call.args.v[i])) BAD(t);
        } else if (n->ifs.orelse.n) {
            BAD(t);
            return;
        }
        int lf = t0_pm_get(t, &t->loops, n);
        bool vloop = n->kind == S_WHILE && t0_vary(t, n->ifs.cond);
        if (vloop) pm_or(t, &t->loops, n, 4);
        Scope in = sc;
        in.loop = n;
        in.ldiv = 0;
        in.loop_vexit = (lf & 3) != 0;
        if (vloop) in.div++;
        if (n->kind == S_FOR && (in.div > 0 || (lf & 3) != 0)) pm_or(t, &t->sym, n->sym, 1);
        scan_block(t, f, n->kind == S_FOR ? &n->fors.body : &n->ifs.body, in);
        return;
    }
    case S_BREAK:
    case S_CONTINUE:
        if (sc.ldiv > 0) {
            pm_or(t, &t->exits, n, 1);
            if (sc.loop) pm_or(t, &t->loops, sc.loop, n->kind == S_BREAK ? 1 : 2);
        }
        return;
    case S_RETURN:
        if (n->ret.value) t0_vary(t, n->ret.value);
        if (sc.div > 0) {
            pm_or(t, &t->exits, n, 1);
            pm_or(t, &t->fns, f, 4);
        }
        return;
    case S_PASS: return;
    default: BAD(t); return; /* assert, raise, def */
    }
}

static void scan_block(T0 *t, FuncSpec *f, NodeList *l, Scope sc) {
    for (int i = 0; i < l->n && !t->bad; i++) scan_stmt(t, f, l->v[i], sc);
}

void t0_scan_fn(T0 *t, FuncSpec *f) {
    int st = t0_pm_get(t, &t->fns, f);
    if (st & 16) return; /* being scanned: its callers see it as it stands */
    /* once a pass: a function called at many places is scanned once (the next pass
     * sees what this one marked) */
    int *sp = t0_pm_slot(t, &t->scanned, f, true);
    if (*sp == t->round + 1) return;
    *sp = t->round + 1;
    *t0_pm_slot(t, &t->fns, f, true) |= 16;
    if (f->recursive || f->storage.n || f->ret_none ||
        (!f->is_kernel && f->ret->kind != TY_NONE && t0_vdt(f->ret) < 0))
        BAD(t);
    for (int i = 0; i < f->nsyms; i++)
        if (f->syms[i]->param >= 0 && !f->is_kernel && t0_vdt(f->syms[i]->ty) < 0 &&
            ty_is_scalar(f->syms[i]->ty))
            BAD(t);
    Scope sc = {0, 0, NULL, false};
    scan_block(t, f, &f->def->def.body, sc);
    *t0_pm_slot(t, &t->fns, f, true) &= ~16;
}

static bool pure_expr(T0 *t, Node *n, int depth);
static bool pure_list(T0 *t, NodeList *l, int depth) {
    for (int i = 0; i < l->n; i++)
        if (l->v[i] && !pure_expr(t, l->v[i], depth)) return false;
    return true;
}
static bool pure_stmts(T0 *t, NodeList *l, int depth);
static bool pure_expr(T0 *t, Node *n, int depth) {
    if (!n) return true;
    if (depth > 16 || intrinsic_class(n) != IN_PLAIN) return false;
    switch ((NodeKind)n->kind) {
    case E_BINOP:
    case E_BOOLOP: return pure_expr(t, n->bin.l, depth) && pure_expr(t, n->bin.r, depth);
    case E_UNARY: return pure_expr(t, n->un.x, depth);
    case E_COMPARE: return pure_list(t, &n->cmp.operands, depth);
    case E_IFEXP:
        return pure_expr(t, n->ifexp.cond, depth) && pure_expr(t, n->ifexp.then, depth) &&
               pure_expr(t, n->ifexp.orelse, depth);
    case E_CALL:
        if (n->ext) return false;
        if (n->callee && (n->callee->recursive ||
                          !pure_stmts(t, &n->callee->def->def.body, depth + 1)))
            return false;
        return pure_list(t, &n->call.bound, depth);
    case E_SUBSCRIPT:
        if (n->sub.base->ty->kind == TY_ARRAY) t->pure_loads = true;
        return pure_expr(t, n->sub.base, depth) && pure_list(t, &n->sub.idx, depth);
    case E_ATTR: return pure_expr(t, n->attr.base, depth);
    case E_TUPLE: return pure_list(t, &n->tuple, depth);
    default: return true;
    }
}
static bool pure_stmts(T0 *t, NodeList *l, int depth) {
    for (int i = 0; i < l->n; i++) {
        Node *n = l->v[i];
        switch ((NodeKind)n->kind) {
        case S_EXPR:
            if (n->uf || !pure_expr(t, n->expr, depth)) return false;
            break;
        case S_ASSIGN:
            for (int k = 0; k < n->assign.targets.n; k++) {
                const Node *tg = n->assign.targets.v[k];
                if (tg->kind == E_TUPLE) {
                    for (int j = 0; j < tg->tuple.n; j++)
                        if (tg->tuple.v[j]->kind != E_NAME) return false;
                } else if (tg->kind != E_NAME) {
                    return false;
                }
            }
            if (!pure_expr(t, n->assign.value, depth)) return false;
            break;
        case S_AUGASSIGN:
            if (n->aug.target->kind != E_NAME || !pure_expr(t, n->aug.value, depth)) return false;
            break;
        case S_IF:
        case S_WHILE:
            if (!pure_expr(t, n->ifs.cond, depth) || !pure_stmts(t, &n->ifs.body, depth) ||
                !pure_stmts(t, &n->ifs.orelse, depth))
                return false;
            break;
        case S_FOR:
            if (!pure_expr(t, n->fors.iter, depth) || !pure_stmts(t, &n->fors.body, depth))
                return false;
            break;
        case S_RETURN:
            if (!pure_expr(t, n->ret.value, depth)) return false;
            break;
        case S_BREAK:
        case S_CONTINUE:
        case S_PASS: break;
        default: return false;
        }
    }
    return true;
}
static bool fn_pure(T0 *t, FuncSpec *f) {
    int st = t0_pm_get(t, &t->fns, f);
    if (st & 32) return true;
    if (st & 64) return false;
    t->pure_loads = false;
    bool p = !f->recursive && f->ret->kind != TY_NONE && !f->ret_none &&
             pure_stmts(t, &f->def->def.body, 0);
    int *s = t0_pm_slot(t, &t->fns, f, true);
    *s |= (p ? 32 : 64) | (p && !t->pure_loads ? 256 : 0);
    return p;
}

/* Whether f is pure and reads no array: its result depends on its arguments alone. */
bool t0_fn_of_args(T0 *t, FuncSpec *f) { return fn_pure(t, f) && (t0_pm_get(t, &t->fns, f) & 256); }
