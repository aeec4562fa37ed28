/* unbound.c: a local read where it may hold no value raises UnboundLocalError.
 *
 * syms.c marks each use of a local that a path from the entry without an assignment may
 * reach (NF_UNBOUND): `if c: t = a` then `t[0]`, a loop's variable after a loop that
 * may run no time.  Python raises UnboundLocalError there when the path is taken; Numba
 * reads a zeroed value, which for an array is a null pointer.  Before the last typing
 * pass (spec.c finalise), each such variable gets a flag, a bool local set after every
 * assignment to it, and each statement that reads it unassigned first runs
 *
 *     if not flag: raise UnboundLocalError("cannot access local variable 't' ...")
 *
 * which every emitter already knows (a raise leaves the function; the host raises the
 * class with the line).  The check goes where the read happens: before the statement,
 * before an elif's condition inside its else, before a while's condition (ahead of the
 * loop, at the end of its body and at each continue).  A read in a right operand of
 * and/or or in a branch of `x if c else y` runs only when the guard says so: the check
 * tests the guard again (`not flag and c`), which it may when the guard is pure (names,
 * constants, arithmetic, attributes, subscripts, plain comparisons) and nothing before it
 * in the statement may change what it reads (no device function or atomic is called in
 * the statement; not in an assignment's targets, which run after earlier targets are
 * assigned).  Otherwise an array is checked unguarded (an error where Python would not reach
 * the read, but never a null pointer) and a number or tuple is not checked (it reads
 * zero, as in Numba): docs/language-notes.md.  Where syms.c gave up (past its size
 * limits), every read of a local array is checked, since none is known to find a value.
 * A variable a nested function captures is passed at each call (nested.c) but read where
 * that function reads it: a number is not checked at the call, an array is (unguarded).
 */
#include <string.h>

#include "sema_int.h"

typedef struct Check {
    Sym *sym;
    Node *guard; /* NULL: unguarded */
    Span sp;
} Check;

typedef struct Ub {
    Sema *S;
    Compiler *C;
    FuncSpec *f;
    Sym **flag; /* per Sym.id at the start: its flag, or NULL */
    int nflag;
    Check *checks;
    int nchecks, capchecks;
    Node impure; /* &impure: the guard of a read under one that cannot be evaluated again */
    bool no_retest; /* the statement's guards cannot be tested before it: it calls a device
                     * function or an atomic (which may change what a guard reads), or the
                     * reads are in an assignment's targets (after its earlier targets) */
} Ub;

static Sym *flag_of(Ub *u, const Sym *s) {
    return s && s->id < u->nflag ? u->flag[s->id] : NULL;
}

/* Whether name n is a read syms.c marked, or, where it gave up, of a local array. */
static bool marked(const Ub *u, const Node *n) {
    if (n->flags & NF_UNBOUND) return true;
    const Sym *s = n->sym;
    return u->f->unbound_all && s && s->is_local && s->param < 0 && s->ty &&
           s->ty->kind == TY_ARRAY;
}

/* Whether keyword argument i of call n passes a variable a nested function captures
 * (nested.c appends `name=name`): Python reads it only where the function does, so a
 * number is not checked at the call (an unassigned one passes zero); an array is (the
 * function could not check it: it is a parameter there), never a null pointer. */
static bool captured(const Node *n, int i) {
    const Node *v = n->call.kwvals.v[i];
    return n->call.fn && (n->call.fn->flags & NF_NESTED_CALL) && v->kind == E_NAME &&
           n->call.kwnames && strcmp(n->call.kwnames[i], v->name.id) == 0 &&
           !(v->sym && v->sym->ty && v->sym->ty->kind == TY_ARRAY);
}

/* ---- pass 1: the variables read where they may hold no value ---- */

static void find_expr(Ub *u, Node *n, int depth);

static void find_list(Ub *u, NodeList *l, int depth) {
    for (int i = 0; i < l->n; i++) find_expr(u, l->v[i], depth + 1);
}

static void find_expr(Ub *u, Node *n, int depth) {
    if (!n || depth > KILN_MAX_EXPR_DEPTH) return;
    switch ((NodeKind)n->kind) {
    case E_STR: /* print()'s string variable, made its literal (sema_print.c) */
    case E_NAME:
        if (marked(u, n) && n->sym && n->sym->id < u->nflag && n->sym->param < 0 &&
            !IS_ERR(n->sym->ty) && !IS_UNKNOWN(n->sym->ty))
            u->flag[n->sym->id] = n->sym; /* marked; its flag is made below */
        return;
    case E_BINOP:
    case E_BOOLOP: find_expr(u, n->bin.l, depth + 1); find_expr(u, n->bin.r, depth + 1); return;
    case E_UNARY: find_expr(u, n->un.x, depth + 1); return;
    case E_COMPARE: find_list(u, &n->cmp.operands, depth); return;
    case E_IFEXP:
        find_expr(u, n->ifexp.cond, depth + 1);
        find_expr(u, n->ifexp.then, depth + 1);
        find_expr(u, n->ifexp.orelse, depth + 1);
        return;
    case E_CALL:
        find_expr(u, n->call.fn, depth + 1);
        find_list(u, &n->call.args, depth);
        for (int i = 0; i < n->call.kwvals.n; i++)
            if (!captured(n, i)) find_expr(u, n->call.kwvals.v[i], depth + 1);
        return;
    case E_SUBSCRIPT: find_expr(u, n->sub.base, depth + 1); find_list(u, &n->sub.idx, depth); return;
    case E_ATTR: find_expr(u, n->attr.base, depth + 1); return;
    case E_TUPLE: find_list(u, &n->tuple, depth); return;
    case E_SLICE:
        find_expr(u, n->slice.lo, depth + 1);
        find_expr(u, n->slice.hi, depth + 1);
        find_expr(u, n->slice.step, depth + 1);
        return;
    default: return;
    }
}

static void find_body(Ub *u, NodeList *body) {
    for (int i = 0; i < body->n; i++) {
        Node *n = body->v[i];
        switch (n->kind) {
        case S_EXPR: find_expr(u, n->expr, 0); break;
        case S_ASSIGN:
            find_expr(u, n->assign.value, 0);
            find_list(u, &n->assign.targets, 0);
            break;
        case S_AUGASSIGN: find_expr(u, n->aug.target, 0); find_expr(u, n->aug.value, 0); break;
        case S_RETURN: find_expr(u, n->ret.value, 0); break;
        case S_IF: /* an elif chain with a loop */
            for (Node *c = n; c; c = elif_of(c)) {
                find_expr(u, c->ifs.cond, 0);
                find_body(u, &c->ifs.body);
                if (!elif_of(c)) find_body(u, &c->ifs.orelse);
            }
            break;
        case S_WHILE:
            find_expr(u, n->ifs.cond, 0);
            find_body(u, &n->ifs.body);
            find_body(u, &n->ifs.orelse);
            break;
        case S_FOR:
            find_expr(u, n->fors.iter, 0);
            find_body(u, &n->fors.body);
            find_body(u, &n->fors.orelse);
            break;
        default: break; /* an assert's test runs only with debug=True: not checked */
        }
    }
}

/* ---- pass 2: the checks and the flags' assignments ---- */

static Node *mk(Ub *u, NodeKind k, Span sp) { return node_new(u->C, k, sp); }

static Node *name_of(Ub *u, Sym *s, Span sp) {
    Node *n = mk(u, E_NAME, sp);
    n->name.id = s->name;
    n->sym = s;
    return n;
}

/* Whether a guard can be evaluated again, and its copy. */
static bool guard_pure(const Node *n, int depth) {
    if (!n || depth > KILN_MAX_EXPR_DEPTH) return false;
    switch ((NodeKind)n->kind) {
    case E_BOOLOP: return guard_pure(n->bin.l, depth + 1) && guard_pure(n->bin.r, depth + 1);
    case E_UNARY: return guard_pure(n->un.x, depth + 1);
    case E_COMPARE:
        for (int i = 0; i + 1 < n->cmp.operands.n; i++)
            if (n->cmp.ops[i] != C_LT && n->cmp.ops[i] != C_LE && n->cmp.ops[i] != C_GT &&
                n->cmp.ops[i] != C_GE && n->cmp.ops[i] != C_EQ && n->cmp.ops[i] != C_NE)
                return false;
        for (int i = 0; i < n->cmp.operands.n; i++)
            if (!guard_pure(n->cmp.operands.v[i], depth + 1)) return false;
        return true;
    case E_IFEXP:
        return guard_pure(n->ifexp.cond, depth + 1) && guard_pure(n->ifexp.then, depth + 1) &&
               guard_pure(n->ifexp.orelse, depth + 1);
    case E_NAME:
        return !(n->flags & NF_BUILTIN); /* for_iter.c's names resolve by their flag */
    case E_BINOP: /* its operands may be any of the above */
        return guard_pure(n->bin.l, depth + 1) && guard_pure(n->bin.r, depth + 1);
    case E_ATTR: return guard_pure(n->attr.base, depth + 1);
    case E_SUBSCRIPT:
        for (int i = 0; i < n->sub.idx.n; i++)
            if (!guard_pure(n->sub.idx.v[i], depth + 1)) return false;
        return guard_pure(n->sub.base, depth + 1);
    case E_INT:
    case E_FLOAT:
    case E_BOOL: return true;
    default: return false;
    }
}

static Node *guard_copy(Ub *u, const Node *n) {
    Node *c;
    switch ((NodeKind)n->kind) {
    case E_BOOLOP:
    case E_BINOP:
        c = mk(u, (NodeKind)n->kind, n->sp);
        c->op = n->op;
        c->bin.l = guard_copy(u, n->bin.l);
        c->bin.r = guard_copy(u, n->bin.r);
        break;
    case E_UNARY:
        c = mk(u, E_UNARY, n->sp);
        c->op = n->op;
        c->un.x = guard_copy(u, n->un.x);
        break;
    case E_COMPARE: {
        c = mk(u, E_COMPARE, n->sp);
        int cap = 0;
        for (int i = 0; i < n->cmp.operands.n; i++)
            nodelist_push(u->C, &c->cmp.operands, guard_copy(u, n->cmp.operands.v[i]), &cap);
        size_t nops = (size_t)(n->cmp.operands.n - 1);
        c->cmp.ops = arena_alloc(&u->C->arena, nops ? nops : 1);
        memcpy(c->cmp.ops, n->cmp.ops, nops);
        break;
    }
    case E_IFEXP:
        c = mk(u, E_IFEXP, n->sp);
        c->ifexp.cond = guard_copy(u, n->ifexp.cond);
        c->ifexp.then = guard_copy(u, n->ifexp.then);
        c->ifexp.orelse = guard_copy(u, n->ifexp.orelse);
        break;
    case E_ATTR:
        c = mk(u, E_ATTR, n->sp);
        c->attr = n->attr;
        c->attr.base = guard_copy(u, n->attr.base);
        break;
    case E_SUBSCRIPT: {
        c = mk(u, E_SUBSCRIPT, n->sp);
        c->sub.base = guard_copy(u, n->sub.base);
        int cap = 0;
        for (int i = 0; i < n->sub.idx.n; i++)
            nodelist_push(u->C, &c->sub.idx, guard_copy(u, n->sub.idx.v[i]), &cap);
        break;
    }
    default: return ast_copy_pure(u->C, n); /* a name (its web kept), a literal */
    }
    c->depth = n->depth;
    return c;
}

static Node *both(Ub *u, Node *a, Node *b, Span sp) {
    if (!a) return b;
    Node *c = mk(u, E_BOOLOP, sp);
    c->op = BO_AND;
    c->bin.l = a;
    c->bin.r = b;
    c->depth = (uint16_t)((a->depth > b->depth ? a->depth : b->depth) + 1);
    return c;
}

static Node *negated(Ub *u, Node *a, Span sp) {
    Node *c = mk(u, E_UNARY, sp);
    c->op = U_NOT;
    c->un.x = a;
    c->depth = (uint16_t)(a->depth + 1);
    return c;
}

static void add_check(Ub *u, Sym *s, Node *guard, Span sp) {
    if (guard == &u->impure) {
        if (s->ty->kind != TY_ARRAY) return; /* a number or tuple reads zero */
        guard = NULL;
    }
    for (int i = 0; i < u->nchecks; i++)
        if (u->checks[i].sym == s && !u->checks[i].guard) return; /* checked already */
    u->checks = arena_grow(&u->C->arena, u->checks, &u->capchecks, u->nchecks + 1, sizeof(Check));
    u->checks[u->nchecks++] = (Check){s, guard, sp};
}

/* The guard under which n's right side runs, given the guard g of n. */
static Node *guarded(Ub *u, Node *g, const Node *cond, bool when_true, Span sp) {
    if (u->no_retest || g == &u->impure || !guard_pure(cond, 0)) return &u->impure;
    /* the guard's depth stays within the parser's limit: each level adds at most two */
    if (g && g->depth + cond->depth + 2 > KILN_MAX_EXPR_DEPTH) return &u->impure;
    Node *c = guard_copy(u, cond);
    return both(u, g, when_true ? c : negated(u, c, sp), sp);
}

static void checks_expr(Ub *u, Node *n, Node *g, int depth);

static void checks_list(Ub *u, NodeList *l, Node *g, int depth) {
    for (int i = 0; i < l->n; i++) checks_expr(u, l->v[i], g, depth + 1);
}

static void checks_expr(Ub *u, Node *n, Node *g, int depth) {
    if (!n || depth > KILN_MAX_EXPR_DEPTH) return;
    switch ((NodeKind)n->kind) {
    case E_STR: /* print()'s string variable, made its literal (sema_print.c) */
    case E_NAME: {
        Sym *fl = marked(u, n) ? flag_of(u, n->sym) : NULL;
        if (fl) add_check(u, n->sym, g, n->sp);
        return;
    }
    case E_BOOLOP:
        checks_expr(u, n->bin.l, g, depth + 1);
        checks_expr(u, n->bin.r, guarded(u, g, n->bin.l, n->op == BO_AND, n->sp), depth + 1);
        return;
    case E_IFEXP:
        checks_expr(u, n->ifexp.cond, g, depth + 1);
        checks_expr(u, n->ifexp.then, guarded(u, g, n->ifexp.cond, true, n->sp), depth + 1);
        checks_expr(u, n->ifexp.orelse, guarded(u, g, n->ifexp.cond, false, n->sp), depth + 1);
        return;
    case E_BINOP: checks_expr(u, n->bin.l, g, depth + 1); checks_expr(u, n->bin.r, g, depth + 1); return;
    case E_UNARY: checks_expr(u, n->un.x, g, depth + 1); return;
    case E_COMPARE: checks_list(u, &n->cmp.operands, g, depth); return;
    case E_CALL:
        checks_expr(u, n->call.fn, g, depth + 1);
        checks_list(u, &n->call.args, g, depth);
        for (int i = 0; i < n->call.kwvals.n; i++)
            if (!captured(n, i)) checks_expr(u, n->call.kwvals.v[i], g, depth + 1);
        return;
    case E_SUBSCRIPT:
        checks_expr(u, n->sub.base, g, depth + 1);
        checks_list(u, &n->sub.idx, g, depth);
        return;
    case E_ATTR: checks_expr(u, n->attr.base, g, depth + 1); return;
    case E_TUPLE: checks_list(u, &n->tuple, g, depth); return;
    case E_SLICE:
        checks_expr(u, n->slice.lo, g, depth + 1);
        checks_expr(u, n->slice.hi, g, depth + 1);
        checks_expr(u, n->slice.step, g, depth + 1);
        return;
    default: return;
    }
}

/* The reads of an assignment's target: a name is written, a store reads its base. */
static void checks_target(Ub *u, Node *t) {
    if (t->kind == E_NAME) return;
    if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++) checks_target(u, t->tuple.v[i]);
        return;
    }
    bool saved = u->no_retest;
    u->no_retest = true;
    checks_expr(u, t, NULL, 0);
    u->no_retest = saved;
}

/* Whether evaluating n may change what a guard reads: a call of a device function, an
 * external one or an atomic. */
static bool effects(const Node *n, int depth) {
    if (!n || depth > KILN_MAX_EXPR_DEPTH) return !!n;
    switch ((NodeKind)n->kind) {
    case E_CALL:
        if (n->callee || n->ext || (n->intr && n->intr->kind == IK_ATOMIC)) return true;
        if (effects(n->call.fn, depth + 1)) return true;
        for (int i = 0; i < n->call.args.n; i++)
            if (effects(n->call.args.v[i], depth + 1)) return true;
        for (int i = 0; i < n->call.kwvals.n; i++)
            if (effects(n->call.kwvals.v[i], depth + 1)) return true;
        return false;
    case E_BINOP:
    case E_BOOLOP: return effects(n->bin.l, depth + 1) || effects(n->bin.r, depth + 1);
    case E_UNARY: return effects(n->un.x, depth + 1);
    case E_COMPARE:
        for (int i = 0; i < n->cmp.operands.n; i++)
            if (effects(n->cmp.operands.v[i], depth + 1)) return true;
        return false;
    case E_IFEXP:
        return effects(n->ifexp.cond, depth + 1) || effects(n->ifexp.then, depth + 1) ||
               effects(n->ifexp.orelse, depth + 1);
    case E_SUBSCRIPT:
        if (effects(n->sub.base, depth + 1)) return true;
        for (int i = 0; i < n->sub.idx.n; i++)
            if (effects(n->sub.idx.v[i], depth + 1)) return true;
        return false;
    case E_ATTR: return effects(n->attr.base, depth + 1);
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++)
            if (effects(n->tuple.v[i], depth + 1)) return true;
        return false;
    case E_SLICE:
        return effects(n->slice.lo, depth + 1) || effects(n->slice.hi, depth + 1) ||
               effects(n->slice.step, depth + 1);
    default: return false;
    }
}

/* `if not flag [and guard]: raise UnboundLocalError(...)` for each check found, appended
 * to out; the checks are cleared. */
static void emit_checks(Ub *u, NodeList *out, int *cap) {
    for (int i = 0; i < u->nchecks; i++) {
        Check *k = &u->checks[i];
        Sym *fl = flag_of(u, k->sym);
        Node *cond = negated(u, name_of(u, fl, k->sp), k->sp);
        if (k->guard) cond = both(u, cond, k->guard, k->sp);
        Node *raise = mk(u, S_ASSERT, k->sp);
        raise->assrt.test = mk(u, E_BOOL, k->sp); /* False */
        raise->assrt.exc = mk(u, E_NAME, k->sp);
        raise->assrt.exc->name.id = "UnboundLocalError";
        raise->assrt.exc->flags = NF_UNBOUND; /* its site is made here, not by sema_raise */
        Buf b;
        buf_init_arena(&b, &u->C->arena);
        /* CPython 3.11's words; the name is an identifier, safe in a literal */
        buf_printf(&b,
                   "\x01raise\x1f" "builtins.UnboundLocalError\x1f%s\x1f%s\x1f"
                   "\"cannot access local variable '%s' where it is not associated with a value\"",
                   u->f->fi->name, k->sp.file ? k->sp.file->name : "?", k->sym->name);
        raise->assrt.site = b.p;
        Node *ifs = mk(u, S_IF, k->sp);
        ifs->ifs.cond = cond;
        int bcap = 0;
        nodelist_push(u->C, &ifs->ifs.body, raise, &bcap);
        nodelist_push(u->C, out, ifs, cap);
    }
    u->nchecks = 0;
}

/* `flag = True` for each name of target t that has a flag. */
static void set_flags(Ub *u, Node *t, NodeList *out, int *cap) {
    if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++) set_flags(u, t->tuple.v[i], out, cap);
        return;
    }
    Sym *fl = t->kind == E_NAME ? flag_of(u, t->sym) : NULL;
    if (!fl) return;
    Node *a = mk(u, S_ASSIGN, t->sp);
    int tcap = 0;
    nodelist_push(u->C, &a->assign.targets, name_of(u, fl, t->sp), &tcap);
    a->assign.value = mk(u, E_BOOL, t->sp);
    a->assign.value->blit = true;
    nodelist_push(u->C, out, a, cap);
}

static void rewrite(Ub *u, NodeList *body);

/* A while loop's condition checks before each continue of its own body (not of loops
 * inside it). */
static void checks_at_continue(Ub *u, NodeList *body, Node *cond) {
    NodeList out = {0};
    int cap = 0;
    bool any = false;
    for (int i = 0; i < body->n; i++) {
        Node *n = body->v[i];
        if (n->kind == S_CONTINUE) {
            u->no_retest = effects(cond, 0);
            checks_expr(u, cond, NULL, 0);
            any |= u->nchecks > 0;
            emit_checks(u, &out, &cap);
        } else if (n->kind == S_IF) {
            for (Node *c = n; c; c = elif_of(c)) {
                checks_at_continue(u, &c->ifs.body, cond);
                if (!elif_of(c)) checks_at_continue(u, &c->ifs.orelse, cond);
            }
        } else if (n->kind == S_WHILE || n->kind == S_FOR) {
            /* an inner loop's else is this loop's: its continue is this loop's */
            checks_at_continue(u, n->kind == S_FOR ? &n->fors.orelse : &n->ifs.orelse, cond);
        }
        nodelist_push(u->C, &out, n, &cap);
    }
    if (any) *body = out;
}

static void rewrite(Ub *u, NodeList *body) {
    NodeList out = {0};
    int cap = 0;
    for (int i = 0; i < body->n; i++) {
        Node *n = body->v[i];
        u->no_retest = false;
        switch (n->kind) {
        case S_EXPR:
            u->no_retest = effects(n->expr, 0);
            checks_expr(u, n->expr, NULL, 0);
            break;
        case S_ASSIGN:
            u->no_retest = effects(n->assign.value, 0);
            for (int j = 0; j < n->assign.targets.n; j++)
                u->no_retest |= effects(n->assign.targets.v[j], 0);
            checks_expr(u, n->assign.value, NULL, 0);
            for (int j = 0; j < n->assign.targets.n; j++) checks_target(u, n->assign.targets.v[j]);
            break;
        case S_AUGASSIGN:
            u->no_retest = effects(n->aug.target, 0) || effects(n->aug.value, 0);
            checks_expr(u, n->aug.target, NULL, 0);
            checks_expr(u, n->aug.value, NULL, 0);
            break;
        case S_RETURN:
            u->no_retest = effects(n->ret.value, 0);
            checks_expr(u, n->ret.value, NULL, 0);
            break;
        case S_IF: {
            /* the elifs: a condition's checks go in the else before it */
            for (Node *c = n; c;) {
                rewrite(u, &c->ifs.body);
                Node *next = elif_of(c);
                if (!next) {
                    rewrite(u, &c->ifs.orelse);
                    break;
                }
                u->no_retest = effects(next->ifs.cond, 0);
                checks_expr(u, next->ifs.cond, NULL, 0);
                if (u->nchecks) {
                    NodeList e = {0};
                    int ecap = 0;
                    emit_checks(u, &e, &ecap);
                    nodelist_push(u->C, &e, next, &ecap);
                    c->ifs.orelse = e;
                }
                c = next;
            }
            u->no_retest = effects(n->ifs.cond, 0);
            checks_expr(u, n->ifs.cond, NULL, 0); /* after the bodies, which emit their own */
            break;
        }
        case S_WHILE:
            rewrite(u, &n->ifs.body);
            rewrite(u, &n->ifs.orelse);
            u->no_retest = effects(n->ifs.cond, 0);
            checks_expr(u, n->ifs.cond, NULL, 0);
            if (u->nchecks) { /* the condition runs again after each round */
                int bcap = n->ifs.body.n;
                emit_checks(u, &n->ifs.body, &bcap);
                checks_at_continue(u, &n->ifs.body, n->ifs.cond);
                u->no_retest = effects(n->ifs.cond, 0);
                checks_expr(u, n->ifs.cond, NULL, 0);
            }
            break;
        case S_FOR: {
            rewrite(u, &n->fors.body);
            rewrite(u, &n->fors.orelse);
            NodeList sets = {0};
            int scap = 0;
            set_flags(u, n->fors.target, &sets, &scap);
            if (sets.n) { /* the target's flags first in the body */
                for (int j = 0; j < n->fors.body.n; j++)
                    nodelist_push(u->C, &sets, n->fors.body.v[j], &scap);
                n->fors.body = sets;
            }
            u->no_retest = effects(n->fors.iter, 0);
            checks_expr(u, n->fors.iter, NULL, 0);
            break;
        }
        default: break;
        }
        emit_checks(u, &out, &cap);
        nodelist_push(u->C, &out, n, &cap);
        if (n->kind == S_ASSIGN)
            for (int j = 0; j < n->assign.targets.n; j++)
                set_flags(u, n->assign.targets.v[j], &out, &cap);
    }
    *body = out;
}

void sema_unbound_checks(Sema *S, FuncSpec *f) {
    Ub u = {.S = S, .C = S->C, .f = f, .nflag = f->nsyms};
    if (!u.nflag) return;
    u.flag = arena_alloc(&S->C->arena, sizeof(Sym *) * (size_t)u.nflag);
    find_body(&u, &f->def->def.body);
    bool any = false;
    for (int i = 0; i < u.nflag; i++) {
        Sym *s = u.flag[i];
        if (!s) continue;
        Sym *fl = sema_sym_new(S, f, arena_printf(&S->C->arena, "%s?set", s->name));
        fl->ty = ty_scalar(KILN_BOOL);
        fl->is_local = true;
        fl->read = true;
        fl->first_assign = 0; /* read before its first assignment in the text: it starts False */
        fl->nassign = 2;      /* never a constant */
        u.flag[i] = fl;
        any = true;
    }
    if (any) rewrite(&u, &f->def->def.body);
}
