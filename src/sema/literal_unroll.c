/* literal_unroll.c: `for x in literal_unroll(t):`, one copy of the body per item of t.
 *
 * Numba's literal_unroll loops over a tuple whose items have different types (arrays
 * of other shapes, dtypes or layouts, scalars of other kinds): the body is compiled
 * once per item, with that item's type.  kiln does it by copying the body before
 * typing, when the function's locals are collected:
 *
 *     for T in literal_unroll(X):          T = X[0]
 *         body                     ==>      body
 *                                           T = X[1]
 *                                           body ...
 *
 * The copies are straight-line code, so each copy's definitions of T (and of any
 * name the body assigns before reading) reach only that copy's uses, and syms.c's
 * webs make each one its own variable with its own type, as Numba's SSA versions do.
 * A name that carries a value from one copy to the next (`i += 1`) stays one variable.
 *
 * `continue` and `break` keep their meaning: when the body has them, each copy is the
 * body of a loop of one trip (`for <k> in range(1):`), so `continue` ends the copy;
 * `break` also sets a flag that the later copies and the `else` test first.
 *
 * The length of X must be known before typing: X is a global or closure tuple (asked
 * of the resolver), an argument of tuple type, a tuple literal, or a local assigned one
 * tuple literal once.  A loop that cannot be unrolled becomes the statement
 * `literal_unroll(X)` and its reason is kept; typing that call reports it (with
 * diagnostics on, in the final pass), as it reports literal_unroll() used anywhere
 * else.  X[i] reads X at each copy, so a body that rebinds a name X reads is refused.
 */
#include <string.h>

#include "sema_int.h"

/* Items of one literal_unroll() tuple: the body is written once per item. */
enum { KILN_MAX_UNROLL = 256 };
/* Body copies of one function, nested unrolls multiplied, so that nesting cannot make
 * the program exponential in its text. */
enum { KILN_MAX_UNROLL_COPIES = 4096 };

typedef struct Unroll {
    Sema *S;
    FuncSpec *f;
    int copies; /* body copies made so far in this function */
} Unroll;

/* ---- what a name is -------------------------------------------------------------- */

/* Counts the bindings of id in target t: w each (2 for one that makes no literal). */
static void target_binds(const Node *t, const char *id, int w, int *count) {
    if (t->kind == E_NAME && strcmp(t->name.id, id) == 0) *count += w;
    else if (t->kind == E_TUPLE)
        for (int k = 0; k < t->tuple.n; k++) target_binds(t->tuple.v[k], id, 2, count);
}

/* The value of the last assignment `id = value` in l (nested blocks included), NULL
 * when there is none; *count grows by 1 for such an assignment, by 2 for another
 * binding of id (unpacking, augmented assignment, a for target). */
static Node *bindings(const NodeList *l, const char *id, int *count) {
    Node *one = NULL, *r;
    for (int i = 0; i < l->n; i++) {
        const Node *s = l->v[i];
        switch (s->kind) {
        case S_ASSIGN:
            for (int j = 0; j < s->assign.targets.n; j++) {
                const Node *t = s->assign.targets.v[j];
                int before = *count;
                target_binds(t, id, 1, count);
                if (t->kind == E_NAME && *count == before + 1) one = s->assign.value;
            }
            break;
        case S_AUGASSIGN: target_binds(s->aug.target, id, 2, count); break;
        case S_FOR:
            target_binds(s->fors.target, id, 2, count);
            if ((r = bindings(&s->fors.body, id, count))) one = r;
            if ((r = bindings(&s->fors.orelse, id, count))) one = r;
            break;
        case S_IF: /* an elif chain with a loop: any length costs no stack */
            for (const Node *e = s; e; e = elif_of(e)) {
                if ((r = bindings(&e->ifs.body, id, count))) one = r;
                if (!elif_of(e) && (r = bindings(&e->ifs.orelse, id, count))) one = r;
            }
            break;
        case S_WHILE:
            if ((r = bindings(&s->ifs.body, id, count))) one = r;
            if ((r = bindings(&s->ifs.orelse, id, count))) one = r;
            break;
        default: break;
        }
    }
    return one;
}

static int param_of(const FuncSpec *f, const char *id) {
    for (int i = 0; i < f->nparams; i++)
        if (strcmp(f->def->def.params[i].name, id) == 0) return i;
    return -1;
}

/* The dotted path of a name or attribute chain (a.b.c), or NULL. */
static const char *dotted(Compiler *C, const Node *n) {
    if (n->kind == E_NAME) return n->name.id;
    if (n->kind != E_ATTR) return NULL;
    const char *b = dotted(C, n->attr.base);
    return b ? arena_printf(&C->arena, "%s.%s", b, n->attr.attr) : NULL;
}

static const char *head_of(const Node *n) {
    while (n->kind == E_ATTR) n = n->attr.base;
    return n->kind == E_NAME ? n->name.id : NULL;
}

/* A name of the function: a parameter or a local (bound somewhere in it). */
static bool is_local(Unroll *U, const char *id) {
    int count = 0;
    return param_of(U->f, id) >= 0 || (bindings(&U->f->def->def.body, id, &count), count > 0);
}

/* Whether call is literal_unroll(X) (Numba's, kiln's: through the resolver). */
static bool is_unroll_call(Unroll *U, const Node *call) {
    if (call->kind != E_CALL || call->call.args.n != 1 || call->call.kwvals.n) return false;
    const char *head = head_of(call->call.fn);
    const char *path = dotted(U->S->C, call->call.fn);
    if (!head || !path) return false;
    int saved = U->S->C->muted;
    U->S->C->muted++; /* a name that fails to resolve is reported where it is typed */
    GVal *g = sema_resolve(U->S, U->f->fi->scope, path, call->call.fn->sp);
    U->S->C->muted = saved;
    /* the resolver's answer is cached; whether a local shadows it walks the body, so last */
    return g->kind == KILN_VAL_NAMESPACE && g->ns && g->ns->intr &&
           g->ns->intr->kind == IK_LITERAL_UNROLL && !is_local(U, head);
}

/* ---- the length of X ------------------------------------------------------------- */

/* The items of X, or -1 with *why set. */
static int length_of(Unroll *U, Node *x, const char **why) {
    Compiler *C = U->S->C;
    if (x->kind == E_TUPLE) return x->tuple.n;
    const char *head = head_of(x);
    if (x->kind == E_ATTR && head && !is_local(U, head)) { /* cfg.T: a module's tuple */
        GVal *g = sema_resolve(U->S, U->f->fi->scope, dotted(C, x), x->sp);
        if (g->kind == KILN_VAL_TUPLE) return g->ntuple;
        *why = arena_printf(&C->arena, "literal_unroll() takes a tuple; '%s' is %s", dotted(C, x),
                            g->kind == KILN_VAL_OTHER ? g->other : ty_name(C, g->ty));
        return -1;
    }
    if (x->kind != E_NAME) {
        *why = "literal_unroll() needs a tuple whose length is known before typing: a global "
               "or closure tuple, an argument, a tuple literal, or a local assigned one tuple "
               "literal once";
        return -1;
    }
    int p = param_of(U->f, x->name.id);
    if (p >= 0) {
        const Type *t = U->f->params[p];
        if (t->kind == TY_TUPLE) return t->n;
        *why = arena_printf(&C->arena, "literal_unroll() takes a tuple; argument '%s' is %s",
                            x->name.id, ty_name(C, t));
        return -1;
    }
    int count = 0;
    Node *v = bindings(&U->f->def->def.body, x->name.id, &count);
    if (count == 1 && v && v->kind == E_TUPLE) return v->tuple.n;
    if (count > 0) {
        *why = arena_printf(&C->arena, "the length of '%s' is not known before typing: literal_unroll() "
                            "takes a local assigned one tuple literal once, an argument, or a "
                            "global or closure tuple", x->name.id);
        return -1;
    }
    GVal *g = sema_resolve(U->S, U->f->fi->scope, x->name.id, x->sp);
    if (g->kind == KILN_VAL_TUPLE) return g->ntuple;
    if (g->kind == KILN_VAL_MISSING)
        *why = arena_printf(&C->arena, "name '%s' is not defined", x->name.id);
    else if (g->kind == KILN_VAL_OTHER)
        *why = arena_printf(&C->arena, "global '%s' is %s, which kernels cannot use", x->name.id,
                            g->other);
    else
        *why = arena_printf(&C->arena, "literal_unroll() takes a tuple; global '%s' is %s", x->name.id,
                            ty_name(C, g->ty));
    return -1;
}

/* ---- copying the body ------------------------------------------------------------ */

static Node *clone(Compiler *C, const Node *n);

static NodeList clone_list(Compiler *C, NodeList l) {
    NodeList o = {NULL, 0};
    int cap = 0;
    for (int i = 0; i < l.n; i++) nodelist_push(C, &o, clone(C, l.v[i]), &cap);
    return o;
}

/* A deep copy of a tree sema has not annotated yet (the parser's fields only; the
 * constant arrays it made, comparison operators and keyword names, are shared). */
static Node *clone(Compiler *C, const Node *n) {
    if (!n) return NULL;
    Node *c = node_new(C, (NodeKind)n->kind, n->sp);
    *c = *n;
    switch ((NodeKind)n->kind) {
    case E_BINOP:
    case E_BOOLOP:
        c->bin.l = clone(C, n->bin.l);
        c->bin.r = clone(C, n->bin.r);
        break;
    case E_UNARY: c->un.x = clone(C, n->un.x); break;
    case E_COMPARE: c->cmp.operands = clone_list(C, n->cmp.operands); break;
    case E_IFEXP:
        c->ifexp.cond = clone(C, n->ifexp.cond);
        c->ifexp.then = clone(C, n->ifexp.then);
        c->ifexp.orelse = clone(C, n->ifexp.orelse);
        break;
    case E_CALL:
        c->call.fn = clone(C, n->call.fn);
        c->call.args = clone_list(C, n->call.args);
        c->call.kwvals = clone_list(C, n->call.kwvals);
        break;
    case E_SUBSCRIPT:
        c->sub.base = clone(C, n->sub.base);
        c->sub.idx = clone_list(C, n->sub.idx);
        break;
    case E_ATTR: c->attr.base = clone(C, n->attr.base); break;
    case E_TUPLE: c->tuple = clone_list(C, n->tuple); break;
    case E_SLICE:
        c->slice.lo = clone(C, n->slice.lo);
        c->slice.hi = clone(C, n->slice.hi);
        c->slice.step = clone(C, n->slice.step);
        break;
    case S_EXPR: c->expr = clone(C, n->expr); break;
    case S_ASSIGN:
        c->assign.targets = clone_list(C, n->assign.targets);
        c->assign.value = clone(C, n->assign.value);
        break;
    case S_AUGASSIGN:
        c->aug.target = clone(C, n->aug.target);
        c->aug.value = clone(C, n->aug.value);
        break;
    case S_IF: /* an elif chain with a loop: any length costs no stack */
        for (Node *d = c;; n = elif_of(n)) {
            d->ifs.cond = clone(C, n->ifs.cond);
            d->ifs.body = clone_list(C, n->ifs.body);
            if (!elif_of(n)) {
                d->ifs.orelse = clone_list(C, n->ifs.orelse);
                break;
            }
            Node *e = node_new(C, S_IF, n->ifs.orelse.v[0]->sp);
            *e = *n->ifs.orelse.v[0];
            NodeList one = {NULL, 0};
            int cap = 0;
            nodelist_push(C, &one, e, &cap);
            d->ifs.orelse = one;
            d = e;
        }
        break;
    case S_WHILE:
        c->ifs.cond = clone(C, n->ifs.cond);
        c->ifs.body = clone_list(C, n->ifs.body);
        c->ifs.orelse = clone_list(C, n->ifs.orelse);
        break;
    case S_FOR:
        c->fors.target = clone(C, n->fors.target);
        c->fors.iter = clone(C, n->fors.iter);
        c->fors.body = clone_list(C, n->fors.body);
        c->fors.orelse = clone_list(C, n->fors.orelse);
        break;
    case S_RETURN: c->ret.value = clone(C, n->ret.value); break;
    case S_ASSERT:
        c->assrt.test = clone(C, n->assrt.test);
        c->assrt.msg = clone(C, n->assrt.msg);
        c->assrt.exc = clone(C, n->assrt.exc);
        break;
    case S_DEF: c->def.body = clone_list(C, n->def.body); break; /* refused when typed */
    default: break;
    }
    return c;
}

Node *sema_clone_tree(Compiler *C, const Node *n) { return clone(C, n); }

/* ---- building ---------------------------------------------------------------------- */

static Node *name(Compiler *C, const char *id, Span sp) {
    Node *n = node_new(C, E_NAME, sp);
    n->name.id = id;
    return n;
}

static Node *int_lit(Compiler *C, int64_t v, Span sp) {
    Node *n = node_new(C, E_INT, sp);
    n->ilit.v = (uint64_t)v;
    return n;
}

static Node *assign(Compiler *C, Node *target, Node *value) {
    Node *a = node_new(C, S_ASSIGN, target->sp);
    int cap = 0;
    nodelist_push(C, &a->assign.targets, target, &cap);
    a->assign.value = value;
    return a;
}

static Node *bool_lit(Compiler *C, bool v, Span sp) {
    Node *n = node_new(C, E_BOOL, sp);
    n->blit = v;
    return n;
}

/* `if not flag:` around body */
static Node *unless(Compiler *C, const char *flag, NodeList body, Span sp) {
    Node *n = node_new(C, S_IF, sp);
    Node *u = node_new(C, E_UNARY, sp);
    u->op = U_NOT;
    u->un.x = name(C, flag, sp);
    u->depth = 2;
    n->ifs.cond = u;
    n->ifs.body = body;
    return n;
}

/* Whether l has a break (brk) or continue (!brk) of the loop it is the body of. */
static bool has_jump(const NodeList *l, bool brk) {
    for (int i = 0; i < l->n; i++) {
        const Node *s = l->v[i];
        if (s->kind == (brk ? S_BREAK : S_CONTINUE)) return true;
        if (s->kind == S_IF) {
            for (const Node *e = s; e; e = elif_of(e))
                if (has_jump(&e->ifs.body, brk) || (!elif_of(e) && has_jump(&e->ifs.orelse, brk)))
                    return true;
        }
        if ((s->kind == S_FOR && has_jump(&s->fors.orelse, brk)) ||
            (s->kind == S_WHILE && has_jump(&s->ifs.orelse, brk)))
            return true; /* a loop's else belongs to the enclosing loop */
    }
    return false;
}

/* Each break of the unrolled loop in l becomes `flag = True; break`. */
static void mark_breaks(Compiler *C, NodeList *l, const char *flag) {
    for (int i = 0; i < l->n; i++) {
        Node *s = l->v[i];
        if (s->kind == S_BREAK) {
            NodeList b = {NULL, 0};
            int cap = 0;
            for (int j = 0; j < l->n; j++) {
                if (j == i) nodelist_push(C, &b, assign(C, name(C, flag, s->sp), bool_lit(C, true, s->sp)), &cap);
                nodelist_push(C, &b, l->v[j], &cap);
            }
            *l = b;
            i++;
        } else if (s->kind == S_IF) {
            for (Node *e = s; e; e = elif_of(e)) {
                mark_breaks(C, &e->ifs.body, flag);
                if (!elif_of(e)) mark_breaks(C, &e->ifs.orelse, flag);
            }
        } else if (s->kind == S_FOR) {
            mark_breaks(C, &s->fors.orelse, flag);
        } else if (s->kind == S_WHILE) {
            mark_breaks(C, &s->ifs.orelse, flag);
        }
    }
}

/* An item expression that can be written in place of X[i] at each copy: a literal or a
 * name the body does not rebind. */
static bool simple_item(const Node *e, const NodeList *body) {
    if (e->kind == E_INT || e->kind == E_FLOAT || e->kind == E_BOOL || e->kind == E_IMAG ||
        e->kind == E_STR) /* (a string: a constant per copy, strings.c) */
        return true;
    if (e->kind == E_UNARY && e->op == U_NEG) return simple_item(e->un.x, body);
    if (e->kind != E_NAME) return false;
    int count = 0;
    bindings(body, e->name.id, &count);
    return count == 0;
}

static void expand_list(Unroll *U, NodeList *l);

/* The statements that replace loop n (over X, of len items), pushed onto out. */
static void unroll(Unroll *U, Node *n, int len, NodeList *out, int *cap) {
    Compiler *C = U->S->C;
    Node *x = n->fors.iter->call.args.v[0];
    Span sp = n->sp;
    unsigned off = (unsigned)n->sp.off;
    bool literal = x->kind == E_TUPLE;
    if (literal)
        for (int i = 0; i < x->tuple.n && literal; i++) literal = simple_item(x->tuple.v[i], &n->fors.body);
    if (x->kind == E_TUPLE && !literal) { /* evaluated once, as Python does */
        const char *tmp = arena_printf(&C->arena, "unroll.%u", off);
        nodelist_push(C, out, assign(C, name(C, tmp, x->sp), x), cap);
        x = name(C, tmp, x->sp);
    }
    bool brk = has_jump(&n->fors.body, true), wrap = brk || has_jump(&n->fors.body, false);
    const char *flag = brk ? arena_printf(&C->arena, "unroll.brk.%u", off) : NULL;
    const char *k = arena_printf(&C->arena, "unroll.k.%u", off);
    if (brk) nodelist_push(C, out, assign(C, name(C, flag, sp), bool_lit(C, false, sp)), cap);
    for (int i = 0; i < len; i++) {
        Node *item;
        if (literal) {
            item = clone(C, x->tuple.v[i]);
        } else {
            item = node_new(C, E_SUBSCRIPT, x->sp);
            item->sub.base = clone(C, x);
            int c1 = 0;
            nodelist_push(C, &item->sub.idx, int_lit(C, i, x->sp), &c1);
            item->depth = 2;
        }
        NodeList body = {NULL, 0};
        int bc = 0;
        nodelist_push(C, &body, assign(C, clone(C, n->fors.target), item), &bc);
        NodeList copy = clone_list(C, n->fors.body);
        if (brk) mark_breaks(C, &copy, flag);
        for (int j = 0; j < copy.n; j++) nodelist_push(C, &body, copy.v[j], &bc);
        if (wrap) { /* a loop of one trip: `continue` ends this copy, `break` it and the flag */
            Node *loop = node_new(C, S_FOR, sp);
            loop->fors.target = name(C, k, sp);
            Node *one[1] = {int_lit(C, 1, sp)};
            Node *r = node_new(C, E_CALL, sp);
            r->call.fn = name(C, "range", sp);
            int c2 = 0;
            nodelist_push(C, &r->call.args, one[0], &c2);
            r->depth = 2;
            loop->fors.iter = r;
            loop->fors.body = body;
            body.v = NULL;
            body.n = 0;
            bc = 0;
            nodelist_push(C, &body, loop, &bc);
        }
        if (brk && i > 0) {
            Node *g = unless(C, flag, body, sp);
            nodelist_push(C, out, g, cap);
        } else {
            for (int j = 0; j < body.n; j++) nodelist_push(C, out, body.v[j], cap);
        }
    }
    if (n->fors.orelse.n) {
        if (brk) nodelist_push(C, out, unless(C, flag, n->fors.orelse, sp), cap);
        else
            for (int j = 0; j < n->fors.orelse.n; j++) nodelist_push(C, out, n->fors.orelse.v[j], cap);
    }
}

/* A loop that cannot be unrolled: the call alone, whose typing reports why. */
static Node *refuse(Unroll *U, Node *n, const char *why) {
    Node *call = n->fors.iter;
    vec_push(&U->S->C->arena, &U->S->unroll_why, call);
    vec_push(&U->S->C->arena, &U->S->unroll_why, (void *)why);
    Node *e = node_new(U->S->C, S_EXPR, n->sp);
    e->expr = call;
    return e;
}

static void expand_list(Unroll *U, NodeList *l) {
    Compiler *C = U->S->C;
    NodeList out = {NULL, 0};
    int cap = 0;
    bool changed = false;
    for (int i = 0; i < l->n; i++) {
        Node *s = l->v[i];
        switch (s->kind) {
        case S_IF:
            for (Node *e = s; e; e = elif_of(e)) {
                expand_list(U, &e->ifs.body);
                if (!elif_of(e)) expand_list(U, &e->ifs.orelse);
            }
            break;
        case S_WHILE:
            expand_list(U, &s->ifs.body);
            expand_list(U, &s->ifs.orelse);
            break;
        case S_FOR:
            /* inner loops first: a failed one is reported once, not once per copy */
            expand_list(U, &s->fors.body);
            expand_list(U, &s->fors.orelse);
            if (is_unroll_call(U, s->fors.iter)) {
                const char *why = NULL;
                int len = length_of(U, s->fors.iter->call.args.v[0], &why);
                if (len > KILN_MAX_UNROLL)
                    why = arena_printf(&C->arena,
                                       "literal_unroll() of %d items; it unrolls at most %d "
                                       "(KILN_MAX_UNROLL)", len, KILN_MAX_UNROLL);
                else if (len >= 0 && U->copies + len > KILN_MAX_UNROLL_COPIES)
                    why = arena_printf(&C->arena,
                                       "literal_unroll() loops of this function copy their "
                                       "bodies more than %d times in all "
                                       "(KILN_MAX_UNROLL_COPIES)", KILN_MAX_UNROLL_COPIES);
                if (why) {
                    nodelist_push(C, &out, refuse(U, s, why), &cap);
                } else {
                    U->copies += len;
                    unroll(U, s, len, &out, &cap);
                }
                changed = true;
                continue;
            }
            break;
        default: break;
        }
        nodelist_push(C, &out, s, &cap);
    }
    if (changed) *l = out;
}

void literal_unroll_expand(Sema *S, FuncSpec *f) {
    Unroll U = {S, f, 0};
    expand_list(&U, &f->def->def.body);
}

const Type *literal_unroll_misuse(Sema *S, Node *n) {
    for (int i = 0; i + 1 < S->unroll_why.n; i += 2)
        if (S->unroll_why.v[i] == n) {
            error_at(S->C, n->sp, NULL, "%s", (const char *)S->unroll_why.v[i + 1]);
            return &ty_error;
        }
    error_at(S->C, n->sp, "write for x in literal_unroll(t):",
             "literal_unroll() can only be the iterable of a for loop");
    return &ty_error;
}
