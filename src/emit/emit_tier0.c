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

#include "emit/emit_int.h"
#include "target/vecops.h"

/* Pointer keys to int values: syms, nodes and functions the scan marks. */
typedef struct PMap {
    const void **k;
    int *v;
    int cap, n;
} PMap;

typedef struct T0 {
    Emit *E;
    Arena *A;
    bool bad;
    int bad_line;
    bool changed;   /* the scan marked something new: scan again */
    PMap sym;       /* Sym * -> 1 varying (+ 2 * its array's number) */
    PMap exits;     /* S_RETURN/S_BREAK/S_CONTINUE -> 1 under a varying condition */
    PMap loops;     /* loop -> 1 a varying break, 2 a varying continue, 4 varying loop */
    PMap fns;       /* FuncSpec -> 1 inlined (ok), 2 bad, 4 has a varying return, 8 impure */
    int nvars;      /* varying symbols' arrays (kv<i>) */
    int ntmp[KILN_NDTYPES], maxtmp[KILN_NDTYPES]; /* kt<dt>_<i> in use / declared */
    int nmask, maxmask;                            /* km<i> */
    int nscalar;                                   /* ku<i> scalar temps */
    int nlabel;
    int nexits;     /* exit_lanes calls written */
    int depth;      /* statements the scan is inside */
    bool pure_loads; /* fn_pure's walk met an array read */
    /* results of inlined calls of functions of their arguments alone (fn_of_args), kept
     * in arrays of their own (kc<i>) for later calls with the same arguments in the same
     * block or one inside it, while no argument variable has been assigned since */
    struct Memo {
        const FuncSpec *f;
        int nargs;
        const Node *arg[8];
        int epoch[8];
        const char *res;
        int depth;
    } memo[32];
    int nmemo, nkc, bdepth;
    int kc_dt[64];
    PMap epochs;    /* Sym -> stores written to it (store_sym) */
    /* parameters of the inlined calls being written that read their argument's array */
    const Sym *alias_sym[64];
    const char *alias_arr[64];
    int nalias;
    /* x = v, on every lane: v's last operation writes x's array itself */
    const Node *dst_node;
    const char *dst;
    int dst_dt;
    const Node *guard; /* the kernel's guard whose bounds clamp the blocks (plan.h), or NULL */
    bool guard_early;  /* ... an `if <out of range>: return`, which then writes nothing */
    int round;      /* the scan's pass */
    PMap scanned;   /* FuncSpec -> the last pass that scanned it */
    bool txbx;      /* a lane-by-lane loop reads the thread's x coordinates */
    bool live;      /* the kernel has a varying return: masks start from live_ */
    /* nodes computed into arrays, read as name[kk_] by the lane loop being written */
    const Node *lnode[64];
    const char *ltext[64];
    int nl;
    /* the masks from the innermost function scope out (for exits) */
    const char *chain[256];
    int kind[256];  /* 0 an if, 1 a function, 2 a loop (break), 3 an iteration (continue) */
    int nchain;
    const char *fn_label; /* the current function's end label (uniform return) */
    const char *ret_arr;  /* the current inlined function's result array, or NULL */
    const Type *ret_ty;
    int ret_dt;
} T0;

/* A construct the vector entry does not cover: the kernel gets none (bad_line says
 * where it was found, for KILN_DEBUG_TIER0's message). */
#define BAD(t) ((t)->bad = true, (t)->bad_line = (t)->bad_line ? (t)->bad_line : __LINE__)

static const char *const dtc[KILN_NDTYPES] = {"kbool", "i8",  "i16", "i32", "i64",
                                              "u8",    "u16", "u32", "u64", "",
                                              "f32",   "f64", "",    "",    ""};

/* ---- maps ---- */
static int *pm_slot(T0 *t, PMap *m, const void *key, bool add) {
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
static int pm_get(T0 *t, PMap *m, const void *key) {
    int *p = pm_slot(t, m, key, false);
    return p ? *p : 0;
}
static void pm_or(T0 *t, PMap *m, const void *key, int bits) {
    int *p = pm_slot(t, m, key, true);
    if ((*p | bits) != *p) {
        *p |= bits;
        t->changed = true;
    }
}

/* The dtype a scalar of type ty is held in, or -1 for none the vector entry holds. */
static int vdt(const Type *ty) {
    if (!ty) return -1;
    if (ty->kind == TY_BOOL) return KILN_BOOL;
    if (ty->kind == TY_INT) return ty->weak ? KILN_INT64 : ty->dtype;
    if (ty->kind == TY_FLOAT) {
        if (ty->weak) return KILN_FLOAT64;
        if (ty->dtype == KILN_FLOAT32 || ty->dtype == KILN_FLOAT64) return ty->dtype;
    }
    return -1;
}
static bool dt_float(int dt) { return dt == KILN_FLOAT32 || dt == KILN_FLOAT64; }

/* ---- the scan: which values vary, which exits are varying ------------------------ */

static bool sym_varies(T0 *t, const Sym *s) { return pm_get(t, &t->sym, s) & 1; }
static void scan_fn(T0 *t, FuncSpec *f);

static bool is_call(const Node *n, int kind) {
    return n && n->kind == E_CALL && n->intr && n->intr->kind == kind;
}

static int grid_dims(const Node *n) {
    int64_t nd = 1;
    if (n->call.bound.n) sema_const_int(n->call.bound.v[0], &nd);
    return (int)nd;
}

/* Whether f (and what it calls) reads no thread coordinate and writes nothing: a call
 * with uniform arguments is then uniform. */
static bool fn_pure(T0 *t, FuncSpec *f);

static bool vary(T0 *t, Node *n);

static bool any_child_varies(T0 *t, Node *n) {
    bool v = false;
    switch ((NodeKind)n->kind) {
    case E_BINOP:
    case E_BOOLOP: v = vary(t, n->bin.l) | vary(t, n->bin.r); break;
    case E_UNARY: v = vary(t, n->un.x); break;
    case E_COMPARE:
        for (int i = 0; i < n->cmp.operands.n; i++) v |= vary(t, n->cmp.operands.v[i]);
        break;
    case E_IFEXP:
        v = vary(t, n->ifexp.cond) | vary(t, n->ifexp.then) | vary(t, n->ifexp.orelse);
        break;
    case E_CALL:
        for (int i = 0; i < n->call.bound.n; i++)
            if (n->call.bound.v[i]) v |= vary(t, n->call.bound.v[i]);
        break;
    case E_SUBSCRIPT:
        v = vary(t, n->sub.base);
        for (int i = 0; i < n->sub.idx.n; i++) v |= vary(t, n->sub.idx.v[i]);
        break;
    case E_ATTR: v = vary(t, n->attr.base); break;
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++) v |= vary(t, n->tuple.v[i]);
        break;
    case E_SLICE:
        if (n->slice.lo) v |= vary(t, n->slice.lo);
        if (n->slice.hi) v |= vary(t, n->slice.hi);
        if (n->slice.step) v |= vary(t, n->slice.step);
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
static bool vary(T0 *t, Node *n) {
    if (!n || t->bad) return false;
    if ((n->flags & NF_CONST) && ty_is_scalar(n->ty)) return false;
    if (n->kind == E_NAME && n->sym) {
        if (n->sym->maybe_none) BAD(t);
        return sym_varies(t, n->sym);
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
            if (n->call.bound.v[i] && vary(t, n->call.bound.v[i]) && vdt(f->psyms[i]->ty) >= 0)
                pm_or(t, &t->sym, f->psyms[i], 1);
        scan_fn(t, f);
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
        if ((vdt(target->sym->ty) < 0 && (v || sc.div || sc.loop_vexit)) ||
            target->sym->maybe_none)
            BAD(t);
        if (v || sc.div || sc.loop_vexit) pm_or(t, &t->sym, target->sym, 1);
    } else if (target->kind == E_TUPLE) {
        for (int i = 0; i < target->tuple.n; i++) assigned(t, target->tuple.v[i], v, sc);
    } else {
        vary(t, target); /* a subscript's indices, its calls */
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
        if (n->expr) vary(t, n->expr);
        return;
    case S_ASSIGN: {
        Node *v = n->assign.value;
        for (int i = 0; i < n->assign.targets.n; i++) {
            Node *tg = n->assign.targets.v[i];
            if (tg->kind == E_TUPLE) {
                if (is_call(v, IK_GRID) && grid_dims(v) == tg->tuple.n) {
                    for (int k = 0; k < tg->tuple.n; k++)
                        assigned(t, tg->tuple.v[k], k == 0, sc);
                    continue;
                }
                if (v->kind != E_TUPLE || v->tuple.n != tg->tuple.n) {
                    if (vary(t, v) || sc.div || sc.loop_vexit) BAD(t);
                    assigned(t, tg, false, sc);
                    continue;
                }
                for (int k = 0; k < tg->tuple.n; k++) {
                    if (tg->tuple.v[k]->kind == E_TUPLE) BAD(t);
                    assigned(t, tg->tuple.v[k], vary(t, v->tuple.v[k]), sc);
                }
                continue;
            }
            if (is_call(v, IK_GRID) && grid_dims(v) > 1) {
                BAD(t);
                return;
            }
            assigned(t, tg, vary(t, v), sc);
        }
        return;
    }
    case S_AUGASSIGN: {
        bool v = vary(t, n->aug.value) | vary(t, n->aug.target);
        assigned(t, n->aug.target, v, sc);
        return;
    }
    case S_IF: {
        if (n == t->guard) { /* folded: its threads are the blocks' range */
            if (!t->guard_early) scan_block(t, f, &n->ifs.body, sc);
            return;
        }
        bool v = vary(t, n->ifs.cond);
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
            if (n->fors.orelse.n || !is_call(it, IK_RANGE) || !n->sym || vdt(n->sym->ty) < 0 ||
                it->call.args.n < 1 || it->call.args.n > 3) {
                BAD(t);
                return;
            }
            for (int i = 0; i < it->call.args.n; i++)
                if (vary(t, it->call.args.v[i])) BAD(t);
        } else if (n->ifs.orelse.n) {
            BAD(t);
            return;
        }
        int lf = pm_get(t, &t->loops, n);
        bool vloop = n->kind == S_WHILE && vary(t, n->ifs.cond);
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
        if (n->ret.value) vary(t, n->ret.value);
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

static void scan_fn(T0 *t, FuncSpec *f) {
    int st = pm_get(t, &t->fns, f);
    if (st & 16) return; /* being scanned: its callers see it as it stands */
    /* once a pass: a function called at many places is scanned once (the next pass
     * sees what this one marked) */
    int *sp = pm_slot(t, &t->scanned, f, true);
    if (*sp == t->round + 1) return;
    *sp = t->round + 1;
    *pm_slot(t, &t->fns, f, true) |= 16;
    if (f->recursive || f->storage.n || f->ret_none ||
        (!f->is_kernel && f->ret->kind != TY_NONE && vdt(f->ret) < 0))
        BAD(t);
    for (int i = 0; i < f->nsyms; i++)
        if (f->syms[i]->param >= 0 && !f->is_kernel && vdt(f->syms[i]->ty) < 0 &&
            ty_is_scalar(f->syms[i]->ty))
            BAD(t);
    Scope sc = {0, 0, NULL, false};
    scan_block(t, f, &f->def->def.body, sc);
    *pm_slot(t, &t->fns, f, true) &= ~16;
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
    int st = pm_get(t, &t->fns, f);
    if (st & 32) return true;
    if (st & 64) return false;
    t->pure_loads = false;
    bool p = !f->recursive && f->ret->kind != TY_NONE && !f->ret_none &&
             pure_stmts(t, &f->def->def.body, 0);
    int *s = pm_slot(t, &t->fns, f, true);
    *s |= (p ? 32 : 64) | (p && !t->pure_loads ? 256 : 0);
    return p;
}

/* Whether f is pure and reads no array: its result depends on its arguments alone. */
static bool fn_of_args(T0 *t, FuncSpec *f) { return fn_pure(t, f) && (pm_get(t, &t->fns, f) & 256); }

/* ---- writing ------------------------------------------------------------------- */

/* A varying variable's array: its own (kv<i>), or its argument's for a parameter of an
 * inlined call that never assigns it. */
static const char *aprintf(T0 *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *var_name(T0 *t, const Sym *s) {
    for (int i = t->nalias - 1; i >= 0; i--)
        if (t->alias_sym[i] == s) return t->alias_arr[i];
    return aprintf(t, "kv%d", pm_get(t, &t->sym, s) >> 1);
}

/* The array an operation of node n writes: x's own for the hinted node, else a temporary. */
static const char *tmp(T0 *t, int dt);
static const char *result(T0 *t, const Node *n, int dt) {
    if (t->dst_node == n && t->dst_dt == dt) return t->dst;
    return tmp(t, dt);
}

static bool reads_sym(const Node *n, const Sym *s);

/* A scope of masks: the memos made inside it serve only inside it. */
static void scope_open(T0 *t) { t->bdepth++; }
static void scope_close(T0 *t) {
    while (t->nmemo && t->memo[t->nmemo - 1].depth >= t->bdepth) t->nmemo--;
    t->bdepth--;
}



typedef struct Val {
    bool vec;      /* s names an array of KV_LANES; else s is a scalar expression */
    const char *s;
    int dt;        /* the C type it is held in */
} Val;

static const char *aprintf(T0 *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    Buf b;
    buf_init_arena(&b, t->A);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return b.p ? b.p : "";
}

static const char *tmp(T0 *t, int dt) {
    int i = t->ntmp[dt]++;
    if (t->ntmp[dt] > t->maxtmp[dt]) t->maxtmp[dt] = t->ntmp[dt];
    return aprintf(t, "kt%d_%d", dt, i);
}
static const char *mask_new(T0 *t) {
    int i = t->nmask++;
    if (t->nmask > t->maxmask) t->maxmask = t->nmask;
    return aprintf(t, "km%d", i);
}
/* A scalar's address: its value in a scalar temporary first. */
static const char *addr(T0 *t, Val v) {
    Emit *E = t->E;
    const char *u = aprintf(t, "ku%d", t->nscalar++);
    P("%s %s = %s;\n", dtc[v.dt], u, v.s);
    return aprintf(t, "&%s", u);
}
/* A uniform value broadcast into an array. */
static Val vec_of(T0 *t, Val v) {
    Emit *E = t->E;
    if (v.vec) return v;
    const char *d = tmp(t, v.dt);
    P("{ %s v_ = %s; kv_mov(%d, %s, 0, &v_, 1, n_); }\n", dtc[v.dt], v.s, v.dt, d);
    return (Val){true, d, v.dt};
}
static const char *operand(T0 *t, Val v, int *scalar) {
    *scalar = !v.vec;
    return v.vec ? v.s : addr(t, v);
}

/* The text of one of the emitter's functions, written into a string. */
static const char *captured_convert(T0 *t, const Type *from, const Type *to, const char *x) {
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
static void lane_open(T0 *t, const char *m) {
    Emit *E = t->E;
    t->txbx = true;
    P("for (long kk_ = 0; kk_ < n_; kk_++) { if (%s%s%s) continue; { const i64 tx_ = txv_[kk_], "
      "bx_ = bxv_[kk_]; (void)tx_; (void)bx_;\n",
      m ? "!" : "0", m ? m : "", m ? "[kk_]" : "");
}
static void lane_close(T0 *t) {
    Emit *E = t->E;
    PS("} }\n");
}

/* v converted to type `to` (the node's source type `from`, held as v.dt). */
static Val conv(T0 *t, Val v, const Type *from, const Type *to) {
    Emit *E = t->E;
    int dt = vdt(to);
    if (dt < 0) {
        BAD(t);
        return v;
    }
    if (!v.vec) {
        Val r = {false, captured_convert(t, from, to, aprintf(t, "(%s)", v.s)), dt};
        return r;
    }
    if (dt == v.dt) return (Val){true, v.s, dt};
    const char *d = tmp(t, dt);
    if (dt_float(v.dt) && !dt_float(dt) && dt != KILN_BOOL) {
        /* the emitter's own conversion (kiln_f2u64...), lane by lane */
        lane_open(t, NULL);
        P("%s[kk_] = %s;\n", d, captured_convert(t, dt_type(v.dt), to, aprintf(t, "%s[kk_]", v.s)));
        lane_close(t);
    } else {
        P("kv_cvt(%d, %d, %s, %s, n_);\n", dt, v.dt, d, v.s);
    }
    return (Val){true, d, dt};
}

/* Truthiness as a byte array. */
static Val truthy(T0 *t, Val v, const Type *ty) {
    Emit *E = t->E;
    if (v.dt == KILN_BOOL) return v;
    if (!v.vec) return conv(t, v, ty, ty_scalar(KILN_BOOL));
    const char *d = tmp(t, KILN_BOOL);
    P("{ %s z_ = 0; kv_cmp(%d, %d, (unsigned char *)%s, %s, 0, &z_, 1, n_); }\n", dtc[v.dt], KV_NE,
      v.dt, d, v.s);
    return (Val){true, d, KILN_BOOL};
}

static Val ev(T0 *t, Node *n, const char *m);
static void block(T0 *t, NodeList *l, const char *m);

/* Lane by lane: the emitter's text of n, its varying children computed first where
 * that keeps their order (not under a condition of n's own). */
static Val fallback(T0 *t, Node *n, const char *m, bool children) {
    Emit *E = t->E;
    int dt = vdt(n->ty);
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
            if (!vary(t, c) || c->kind == E_NAME || vdt(c->ty) < 0 || t->nl >= 64) continue;
            Val cv = ev(t, c, m);
            if (!cv.vec) continue;
            t->lnode[t->nl] = c;
            t->ltext[t->nl++] = aprintf(t, "%s[kk_]", cv.s);
        }
    }
    const char *d = result(t, n, dt);
    lane_open(t, m);
    P("%s[kk_] = ", d);
    emit_expr_as(E, n, n->ty);
    PS(";\n");
    lane_close(t);
    t->nl = nl0;
    return (Val){true, d, dt};
}

/* A new mask: the lanes of m (NULL: all) where c holds (neg: where it does not). */
static const char *mask_with(T0 *t, const char *m, Val c, bool neg) {
    Emit *E = t->E;
    const char *r = mask_new(t);
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
static const char *mask_and(T0 *t, const char *m, Val c) { return mask_with(t, m, c, false); }
static const char *mask_andnot(T0 *t, const char *m, Val c) { return mask_with(t, m, c, true); }

/* The element offset of a subscript, as an int64 array or scalar. */
static bool offset(T0 *t, Node *n, const char *m, Val *off, const char **base) {
    Emit *E = t->E;
    Node *b = n->sub.base;
    const Type *at = b->ty;
    if (at->kind != TY_ARRAY || vary(t, b) || at->ptr || n->ty->kind == TY_ARRAY ||
        vdt(at->elem) < 0 || at->ndim < 1)
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
    *base = aprintf(t, "(%s).data", bs);
    Val w[KILN_MAX_NDIM];
    for (int k = 0; k < ni; k++) {
        Val v = conv(t, ev(t, ix[k], m), ix[k]->ty, ty_scalar(KILN_INT64));
        if (!(ix[k]->flags & NF_NONNEG)) {
            if (v.vec) {
                const char *d = tmp(t, KILN_INT64);
                P("{ i64 z_ = 0; kv_axpy(%s, %s, 0, 1, &z_, 1, (%s).shape[%d], n_); }\n", d, v.s,
                  bs, k);
                v.s = d;
            } else {
                v.s = aprintf(t, "kiln_wrap(%s, (%s).shape[%d])", v.s, bs, k);
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
            sc[k] = aprintf(t, "(%s).strides[%d]", bs, k);
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
        const char *d = tmp(t, KILN_INT64);
        int as;
        const char *a = operand(t, w[k], &as);
        if (!acc) P("{ i64 z_ = 0; kv_axpy(%s, %s, %d, %s, &z_, 1, -1, n_); }\n", d, a, as, sc[k]);
        else P("kv_axpy(%s, %s, %d, %s, %s, 0, -1, n_);\n", d, a, as, sc[k], acc);
        acc = d;
    }
    *off = (Val){true, acc, KILN_INT64};
    return true;
}

static Val inline_call(T0 *t, Node *n, const char *m);

static Val ev(T0 *t, Node *n, const char *m) {
    Emit *E = t->E;
    if (t->bad) return (Val){false, "0", KILN_INT64};
    if (!vary(t, n)) {
        int dt = vdt(n->ty);
        if (dt < 0) {
            BAD(t);
            return (Val){false, "0", KILN_INT64};
        }
        return (Val){false, aprintf(t, "(%s)", emit_expr_str(E, n, NULL)), dt};
    }
    int dt = vdt(n->ty);
    switch ((NodeKind)n->kind) {
    case E_NAME:
        if (n->sym) {
            int s = pm_get(t, &t->sym, n->sym);
            if (vdt(n->sym->ty) != dt) break;
            (void)s;
            return (Val){true, var_name(t, n->sym), dt};
        }
        break;
    case E_BINOP: {
        const Type *o = n->opty;
        int od = vdt(o);
        int op = n->op == B_ADD ? KV_ADD : n->op == B_SUB ? KV_SUB : n->op == B_MUL ? KV_MUL
                 : n->op == B_DIV ? KV_DIV : n->op == B_AND ? KV_AND : n->op == B_OR ? KV_OR
                 : n->op == B_XOR ? KV_XOR : -1;
        bool ok = od >= 0 && od == dt && op >= 0 && !(E->debug && op == KV_DIV) &&
                  (od == KILN_FLOAT32 || od == KILN_FLOAT64 || od == KILN_INT32 ||
                   od == KILN_INT64 || od == KILN_UINT32 || od == KILN_UINT64) &&
                  (op == KV_DIV ? dt_float(od) : op >= KV_AND ? !dt_float(od) : true);
        if (!ok) break;
        Val a = conv(t, ev(t, n->bin.l, m), n->bin.l->ty, o);
        Val b = conv(t, ev(t, n->bin.r, m), n->bin.r->ty, o);
        int as, bs;
        const char *ap = operand(t, a, &as), *bp = operand(t, b, &bs);
        const char *d = result(t, n, od);
        P("kv_bin(%d, %d, %s, %s, %d, %s, %d, n_);\n", op, od, d, ap, as, bp, bs);
        return (Val){true, d, od};
    }
    case E_UNARY: {
        const Type *o = n->opty;
        int od = vdt(o);
        if (n->op == U_POS && od >= 0) return conv(t, ev(t, n->un.x, m), n->un.x->ty, o);
        if (n->op == U_NEG && (dt_float(od) || od == KILN_INT32 || od == KILN_INT64) && od == dt) {
            Val a = conv(t, ev(t, n->un.x, m), n->un.x->ty, o);
            if (!a.vec) break;
            const char *d = result(t, n, od);
            P("kv_un(%d, %d, %s, %s, n_);\n", KV_NEG, od, d, a.s);
            return (Val){true, d, od};
        }
        if (n->op == U_NOT && dt == KILN_BOOL) {
            Val a = truthy(t, ev(t, n->un.x, m), n->un.x->ty);
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
        int od = vdt(o);
        if (od < 0) break;
        static const int ops[] = {KV_LT, KV_LE, KV_GT, KV_GE, KV_EQ, KV_NE};
        Node *l = n->cmp.operands.v[0], *r = n->cmp.operands.v[1];
        Val a = conv(t, ev(t, l, m), l->ty, o);
        Val b = conv(t, ev(t, r, m), r->ty, o);
        int as, bs;
        const char *ap = operand(t, a, &as), *bp = operand(t, b, &bs);
        const char *d = result(t, n, KILN_BOOL);
        P("kv_cmp(%d, %d, (unsigned char *)%s, %s, %d, %s, %d, n_);\n", ops[n->cmp.ops[0]], od, d,
          ap, as, bp, bs);
        return (Val){true, d, KILN_BOOL};
    }
    case E_BOOLOP: {
        if (dt != KILN_BOOL || n->opty->kind != TY_BOOL) break;
        Val a = truthy(t, ev(t, n->bin.l, m), n->bin.l->ty);
        a = vec_of(t, a);
        int save = t->nmask;
        const char *mr = n->op == BO_AND ? mask_and(t, m, a) : mask_andnot(t, m, a);
        const char *d = result(t, n, KILN_BOOL);
        P("memcpy(%s, %s, (size_t)n_);\n", d, a.s);
        P("if (kv_any(%s, n_)) {\n", mr);
        scope_open(t);
        Val b = truthy(t, ev(t, n->bin.r, mr), n->bin.r->ty);
        scope_close(t);
        int bs;
        const char *bp = operand(t, b, &bs);
        P("kv_mov(%d, %s, %s, %s, %d, n_);\n}\n", KILN_BOOL, d, mr, bp, bs);
        t->nmask = save;
        return (Val){true, d, KILN_BOOL};
    }
    case E_IFEXP: {
        const Type *o = n->opty;
        int od = vdt(o);
        if (od < 0 || od != dt) break;
        Val c = truthy(t, ev(t, n->ifexp.cond, m), n->ifexp.cond->ty);
        int save = t->nmask;
        const char *mt = mask_and(t, m, c), *me = mask_andnot(t, m, c);
        const char *d = result(t, n, od);
        for (int side = 0; side < 2; side++) {
            const char *ms = side ? me : mt;
            Node *x = side ? n->ifexp.orelse : n->ifexp.then;
            P("if (kv_any(%s, n_)) {\n", ms);
            scope_open(t);
            Val v = conv(t, ev(t, x, ms), x->ty, o);
            scope_close(t);
            int vs;
            const char *vp = operand(t, v, &vs);
            P("kv_mov(%d, %s, %s, %s, %d, n_);\n}\n", od, d, ms, vp, vs);
        }
        t->nmask = save;
        return (Val){true, d, od};
    }
    case E_SUBSCRIPT: {
        Val off;
        const char *base;
        if (dt < 0 || vdt(n->sub.base->ty->kind == TY_ARRAY ? n->sub.base->ty->elem : NULL) != dt ||
            !offset(t, n, m, &off, &base))
            break;
        int os;
        const char *op = operand(t, off, &os);
        const char *d = result(t, n, dt);
        P("kv_load(%d, %s, %s, %s, %d, %s, n_);\n", dt, d, base, op, os, m ? m : "0");
        return (Val){true, d, dt};
    }
    case E_CALL:
        if (n->callee && !n->callee->recursive) return inline_call(t, n, m);
        if (!n->intr) break;
        if (is_call(n, IK_GRID) && grid_dims(n) == 1) return (Val){true, "gx_", KILN_INT64};
        if ((n->intr->kind == IK_MATH1 && n->intr->sub < KV_NMATH - 1 &&
             !(E->fastmath && n->intr->sub == 20)) ||
            (n->intr->kind == IK_LOG && !n->call.bound.v[1]) ||
            (n->intr->kind == IK_ABS && dt_float(vdt(n->opty)))) {
            const Type *o = n->opty;
            int od = vdt(o);
            if (!dt_float(od) || od != dt) break;
            int fn = n->intr->kind == IK_MATH1 ? KV_MATH0 + n->intr->sub
                     : n->intr->kind == IK_LOG ? KV_MATH0 + 3 : KV_FABS;
            Node *x = n->call.bound.v[0];
            Val a = conv(t, ev(t, x, m), x->ty, ty_strong(o));
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

static void store_sym(T0 *t, const Sym *s, Val v, const Type *vt, const char *m) {
    Emit *E = t->E;
    (*pm_slot(t, &t->epochs, s, true))++; /* the memos of calls that read it are stale */
    if (!sym_varies(t, s)) {
        /* a uniform variable takes a uniform value at a uniform place (the scan) */
        P("%s = %s;\n", emit_sym_name(E, s), captured_convert(t, vt, s->ty, aprintf(t, "(%s)", v.s)));
        return;
    }
    Val c = conv(t, v, vt, s->ty);
    int cs;
    const char *cp = operand(t, c, &cs);
    if (c.vec && strcmp(c.s, var_name(t, s)) == 0) return; /* written in place */
    P("kv_mov(%d, %s, %s, %s, %d, n_);\n", c.dt, var_name(t, s), m ? m : "0", cp, cs);
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
    const char *c = mask_new(t);
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
    case S_EXPR: return vary(t, n->expr);
    case S_ASSIGN: {
        bool v = vary(t, n->assign.value);
        for (int i = 0; i < n->assign.targets.n; i++) {
            Node *tg = n->assign.targets.v[i];
            if (tg->kind == E_NAME) v |= sym_varies(t, tg->sym);
            else if (tg->kind == E_TUPLE) {
                for (int k = 0; k < tg->tuple.n; k++)
                    v |= tg->tuple.v[k]->kind != E_NAME || sym_varies(t, tg->tuple.v[k]->sym);
            } else v |= vary(t, tg);
        }
        return v;
    }
    case S_AUGASSIGN:
        return vary(t, n->aug.value) | vary(t, n->aug.target) ||
               (n->aug.target->kind == E_NAME && sym_varies(t, n->aug.target->sym));
    default: return true;
    }
}

static void loop_body(T0 *t, NodeList *body, Node *loop, const char *lm) {
    Emit *E = t->E;
    int lf = pm_get(t, &t->loops, loop);
    if (lf & 2) { /* a varying continue: the iteration's own mask */
        const char *it = mask_new(t);
        P("memcpy(%s, %s, (size_t)n_);\n", it, lm);
        push(t, it, 3);
        block(t, body, it);
        t->nchain--;
    } else {
        block(t, body, lm);
    }
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
            lane_open(t, m);
            emit_block(E, &(NodeList){&n, 1});
            lane_close(t);
            break;
        }
        if (n->kind == S_AUGASSIGN) {
            Node *tg = n->aug.target;
            if (tg->kind != E_NAME) { /* a[i] += v: lane by lane, as written */
                lane_open(t, m);
                emit_block(E, &(NodeList){&n, 1});
                lane_close(t);
                break;
            }
            /* x op= v: the operation in its type, lane by lane unless a vector one */
            Node *v = n->aug.value;
            const Type *o = n->opty;
            int od = vdt(o);
            int op = n->op == B_ADD ? KV_ADD : n->op == B_SUB ? KV_SUB : n->op == B_MUL ? KV_MUL
                     : n->op == B_DIV && dt_float(od) && !E->debug ? KV_DIV : -1;
            Val cur = {true, var_name(t, tg->sym), vdt(tg->sym->ty)};
            Val r;
            if (op >= 0 && od >= 0 && (dt_float(od) || od == KILN_INT32 || od == KILN_INT64 ||
                                       od == KILN_UINT32 || od == KILN_UINT64)) {
                Val a = conv(t, cur, tg->sym->ty, o);
                Val b = conv(t, ev(t, v, m), v->ty, o);
                int bs;
                const char *bp = operand(t, b, &bs);
                const char *d = tmp(t, od);
                P("kv_bin(%d, %d, %s, %s, 0, %s, %d, n_);\n", op, od, d, a.s, bp, bs);
                r = (Val){true, d, od};
            } else {
                if (od < 0) {
                    BAD(t);
                    break;
                }
                int nl0 = t->nl;
                if (vary(t, v) && v->kind != E_NAME && vdt(v->ty) >= 0) {
                    Val cv = ev(t, v, m);
                    if (cv.vec && t->nl < 64) {
                        t->lnode[t->nl] = v;
                        t->ltext[t->nl++] = aprintf(t, "%s[kk_]", cv.s);
                    }
                }
                const char *d = tmp(t, od);
                lane_open(t, m);
                P("%s[kk_] = ", d);
                emit_binop_text(E, n, (BinOp)n->op, o, tg, v);
                PS(";\n");
                lane_close(t);
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
                if (tg->kind == E_TUPLE && is_call(v, IK_GRID)) {
                    static const char *const ax[3] = {"X", "Y", "Z"};
                    for (int k = 0; k < tg->tuple.n; k++) {
                        Val c = k == 0 ? (Val){true, "gx_", KILN_INT64}
                                       : (Val){false, aprintf(t, "(KILN_BID_%s * KILN_BDIM_%s + "
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
                        vs[k] = ev(t, v->tuple.v[k], m);
                        if (!vs[k].vec) vs[k] = (Val){false, addr(t, vs[k]) + 1, vs[k].dt};
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
                    bool into = !m && n->assign.targets.n == 1 && sym_varies(t, tg->sym) &&
                                vdt(v->ty) == vdt(tg->sym->ty) && !reads_sym(v, tg->sym);
                    if (into) {
                        t->dst_node = v;
                        t->dst = var_name(t, tg->sym);
                        t->dst_dt = vdt(v->ty);
                    }
                    Val val = ev(t, v, m);
                    t->dst_node = NULL;
                    store_sym(t, tg->sym, val, v->ty, m);
                    continue;
                }
                /* a store: a[i, j] = v */
                Val off;
                const char *base;
                int edt = tg->kind == E_SUBSCRIPT ? vdt(tg->ty) : -1;
                if (edt < 0 || tg->sub.base->ty->kind != TY_ARRAY ||
                    vdt(tg->sub.base->ty->elem) != edt) {
                    BAD(t);
                    break;
                }
                Val val = conv(t, ev(t, v, m), v->ty, tg->ty);
                if (t->bad || !offset(t, tg, m, &off, &base)) {
                    BAD(t);
                    break;
                }
                int os, vs;
                const char *op = operand(t, off, &os), *vp = operand(t, val, &vs);
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
        if (!vary(t, c)) {
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
        Val cv = truthy(t, ev(t, c, m), c->ty);
        const char *mt = mask_and(t, m, cv);
        const char *me = n->ifs.orelse.n ? mask_andnot(t, m, cv) : NULL;
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
        int lf = pm_get(t, &t->loops, n);
        Node *c = n->ifs.cond;
        if (!(lf & 4)) { /* a uniform condition */
            const char *lm = m;
            if (lf & 1) {
                lm = mask_new(t);
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
        const char *lm = mask_new(t);
        if (m) P("memcpy(%s, %s, (size_t)n_);\n", lm, m);
        else P("memset(%s, 1, (size_t)n_);\n", lm);
        PS("for (;;) {\nKILN_POLL(return;)\n");
        int s2[KILN_NDTYPES];
        memcpy(s2, t->ntmp, sizeof s2);
        scope_open(t);
        Val cv = truthy(t, ev(t, c, lm), c->ty);
        scope_close(t);
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
        int lf = pm_get(t, &t->loops, n);
        const Type *lt = n->fors.iter->opty;
        const char *lm = m;
        if (lf & 1) {
            lm = mask_new(t);
            if (m) P("memcpy(%s, %s, (size_t)n_);\n", lm, m);
            else P("memset(%s, 1, (size_t)n_);\n", lm);
        }
        int id = E->tmp++;
        PS("{\n");
        emit_range_head(E, n, id);
        if (lf & 1) P("if (!kv_any(%s, n_)) break;\n", lm);
        store_sym(t, n->sym, (Val){false, aprintf(t, "it%d", id), vdt(lt)}, lt, lm);
        push(t, (lf & 1) ? lm : NULL, 2);
        loop_body(t, &n->fors.body, n, lm);
        t->nchain--;
        PS("}\n}\n");
        break;
    }
    case S_BREAK:
    case S_CONTINUE:
        if (!pm_get(t, &t->exits, n)) {
            PS(n->kind == S_BREAK ? "break;\n" : "continue;\n");
            break;
        }
        exit_lanes(t, n->kind == S_BREAK ? 2 : 3, m);
        break;
    case S_RETURN: {
        if (t->ret_arr && n->ret.value) {
            Val v = conv(t, ev(t, n->ret.value, m), n->ret.value->ty, t->ret_ty);
            int vs;
            const char *vp = operand(t, v, &vs);
            P("kv_mov(%d, %s, %s, %s, %d, n_);\n", t->ret_dt, t->ret_arr, m ? m : "0", vp, vs);
        } else if (n->ret.value && vary(t, n->ret.value)) {
            ev(t, n->ret.value, m);
        }
        if (!pm_get(t, &t->exits, n)) {
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
    scope_open(t);
    for (int i = 0; i < l->n && !t->bad; i++) {
        int before = t->nexits;
        stmt(t, l->v[i], m);
        if (t->nexits != before && m && i + 1 < l->n) {
            P("if (kv_any(%s, n_)) {\n", m);
            open++;
        }
    }
    while (open--) PS("}\n");
    scope_close(t);
}

/* The uniform locals of f, declared at the top of its C block. */
static void declare_locals(T0 *t, FuncSpec *f) {
    Emit *E = t->E;
    for (int i = 0; i < f->nsyms; i++) {
        Sym *s = f->syms[i];
        if (sym_varies(t, s) || s->param >= 0) continue;
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
    int rdt = value ? vdt(n->ty) : KILN_INT64;
    if (rdt < 0 || pm_get(t, &t->fns, f) & 2) {
        BAD(t);
        return (Val){false, "0", 0};
    }
    /* a call made before with the same arguments (fn_of_args): its result */
    bool memo = value && n->call.bound.n <= 8 && t->nmemo < 32 && t->nkc < 64 &&
                fn_of_args(t, f);
    for (int i = 0; memo && i < n->call.bound.n; i++) {
        const Node *a = n->call.bound.v[i];
        memo = a && ((a->kind == E_NAME && a->sym && sym_varies(t, a->sym)) ||
                     ((a->flags & NF_CONST) && ty_is_scalar(a->ty)));
    }
    for (int j = t->nmemo - 1; memo && j >= 0; j--) {
        struct Memo *me = &t->memo[j];
        bool same = me->f == f && me->nargs == n->call.bound.n;
        for (int i = 0; same && i < me->nargs; i++) {
            const Node *a = n->call.bound.v[i], *b = me->arg[i];
            same = a->kind == E_NAME
                       ? b->kind == E_NAME && a->sym == b->sym &&
                             me->epoch[i] == pm_get(t, &t->epochs, a->sym)
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
        if (!a || pt->kind == TY_DTYPE || pt->kind == TY_FUNC || pt->kind == TY_NS ||
            pt->kind == TY_NONE) {
            args[i] = (Val){false, NULL, 0};
            continue;
        }
        if (!ty_is_scalar(pt)) { /* an array: uniform (the scan) */
            if (vary(t, a)) BAD(t);
            args[i] = (Val){false, aprintf(t, "ka%d_%d", id, i), -1};
            P("%s ka%d_%d = %s;\n", emit_ctype(E, pt), id, i, emit_expr_str(E, a, pt));
            continue;
        }
        Val v = conv(t, ev(t, a, m), a->ty, pt);
        if (!v.vec) {
            const char *u = aprintf(t, "ka%d_%d", id, i);
            P("%s %s = %s;\n", dtc[v.dt], u, v.s);
            v.s = u;
        }
        args[i] = v;
    }
    const char *r = NULL;
    if (memo) {
        t->kc_dt[t->nkc] = rdt;
        r = aprintf(t, "kc%d", t->nkc++);
    } else if (value) {
        r = tmp(t, rdt);
    }
    /* the callee's own names, in a block of the call's (they may repeat the caller's) */
    PS("{\n");
    declare_locals(t, f);
    const char *rm = m;
    if (pm_get(t, &t->fns, f) & 4) {
        rm = mask_new(t);
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
        if (!sym_varies(t, s)) {
            P("%s %s = %s; (void)%s;\n", emit_ctype(E, s->ty), emit_sym_name(E, s),
              captured_convert(t, f->params[i], s->ty, args[i].s), emit_sym_name(E, s));
            continue;
        }
        /* never assigned in the callee: it reads its argument's array (which nothing
         * writes while the call runs: the caller's variables are out of its reach, its
         * temporaries held) */
        if (args[i].vec && args[i].dt == vdt(s->ty) && !s->is_local && s->nassign == 0 &&
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
    t->fn_label = aprintf(t, "kce%d_", id);
    t->ret_arr = value ? r : NULL;
    t->ret_ty = f->ret;
    t->ret_dt = value ? vdt(f->ret) : 0;
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
            me->epoch[i] = me->arg[i]->kind == E_NAME ? pm_get(t, &t->epochs, me->arg[i]->sym) : 0;
        }
        me->res = r;
        me->depth = t->bdepth;
    }
    return value ? (Val){true, r, rdt} : (Val){false, "0", KILN_INT64};
}

/* ---- the entry ----------------------------------------------------------------- */

static const char *hook(Emit *E, const Node *n) {
    T0 *t = E->t0;
    for (int i = t->nl - 1; i >= 0; i--)
        if (t->lnode[i] == n) return t->ltext[i];
    if (n->kind == E_NAME && n->sym && sym_varies(t, n->sym))
        return aprintf(t, "%s[kk_]", var_name(t, n->sym));
    return NULL;
}

/* Numbers every varying symbol's array (of the kernel and the functions it inlines). */
static void number_vars(T0 *t, Buf *decl) {
    for (int i = 0; i < t->sym.cap; i++) {
        if (!t->sym.k[i] || !(t->sym.v[i] & 1)) continue;
        const Sym *s = t->sym.k[i];
        int dt = vdt(s->ty);
        if (dt < 0) {
            BAD(t);
            return;
        }
        t->sym.v[i] = 1 | (t->nvars << 1);
        buf_printf(decl, "_Alignas(32) %s kv%d[%d];\n", dtc[dt], t->nvars, KV_LANES);
        t->nvars++;
    }
}

static bool t0_refused(T0 *t) {
    if (getenv("KILN_DEBUG_TIER0"))
        fprintf(stderr, "kiln: no tier-0 vector entry for %s (emit_tier0.c:%d)\n",
                t->E->R->kernel->fi->name, t->bad_line);
    return false;
}

bool emit_tier0_entry(Emit *E, FuncSpec *k, Buf *out) {
    if (E->cuda || E->blocks || E->debug || E->R->cooperative || E->too_big) return false;
    T0 T;
    memset(&T, 0, sizeof T);
    T0 *t = &T;
    t->E = E;
    t->A = &E->C->arena;
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
        scan_fn(t, k);
        if (!t->changed) break;
        if (round == 63) BAD(t);
    }
    if (t->bad) return t0_refused(t);
    t->round = -2; /* writing: vary() finds every function scanned (round + 1 == -1) */
    for (int i = 0; i < t->scanned.cap; i++)
        if (t->scanned.k[i]) t->scanned.v[i] = -1;
    Buf decl, body;
    buf_init_arena(&decl, t->A);
    buf_init_arena(&body, t->A);
    number_vars(t, &decl);
    if (t->bad) return t0_refused(t);
    t->live = (pm_get(t, &t->fns, k) & 4) != 0;
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
    declare_locals(t, k);
    for (int i = 0; i < k->nparams; i++) {
        Sym *s = k->psyms[i];
        const Type *pt = k->params[i];
        if (!s || !(ty_is_scalar(pt) || pt->kind == TY_ARRAY || pt->kind == TY_TUPLE ||
                    pt->kind == TY_RECORD || pt->kind == TY_GROUP))
            continue;
        const char *pv = captured_convert(t, k->params[i], s->ty, aprintf(t, "p%d", i));
        if (!sym_varies(t, s)) {
            P("%s %s = %s; (void)%s;\n", emit_ctype(E, s->ty), emit_sym_name(E, s), pv,
              emit_sym_name(E, s));
        } else {
            int dt = vdt(s->ty);
            P("{ %s v_ = %s; kv_mov(%d, kv%d, 0, &v_, 1, n_); }\n", dtc[dt], pv, dt,
              pm_get(t, &t->sym, s) >> 1);
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
    E->t0 = NULL;
    E->t0_text = NULL;
    E->o = saved_o;
    E->leave = saved_leave;
    E->plan = saved_plan;
    if (t->bad || body.oom || decl.oom) return t0_refused(t);

    Buf *o = out;
    buf_puts(o, "\n/* ---- tier 0's vector entry (src/emit/emit_tier0.c) ---- */\n#line 1 \"<kiln entry>\"\n");
    buf_printf(o, "void kv_bin(int, int, void *, const void *, int, const void *, int, long);\n"
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
            buf_printf(o, "    _Alignas(32) %s kt%d_%d[%d];\n", dtc[d], d, i, KV_LANES);
    for (int i = 0; i < t->maxmask; i++) buf_printf(o, "    unsigned char km%d[%d];\n", i, KV_LANES);
    for (int i = 0; i < t->nkc; i++)
        buf_printf(o, "    _Alignas(32) %s kc%d[%d];\n", dtc[t->kc_dt[i]], i, KV_LANES);
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
    buf_put(o, body.p ? body.p : "", body.len);
    buf_puts(o, "        }\n    }\n}\n");
    return !o->oom;
}
