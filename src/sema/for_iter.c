/* for_iter.c: for loops over arrays, tuples, enumerate() and zip().
 *
 * Python iterates by protocol; a kernel has none, and kiln compiles one kind of
 * loop, over range().  So a loop over anything else is rewritten into that one
 * before typing:
 *
 *     for T in ITER:              for <k> in range(LEN(ITER)):
 *         body           ==>          T = ELEM(ITER, <k>)
 *                                     body
 *
 * where LEN and ELEM follow ITER's shape: an array or tuple x (a name, or a tuple
 * written out, which is made again at each iteration) is len(x) and x[k]; range(a, b, c) is its length and a + k * c; enumerate(X, s) is LEN(X)
 * and (k + s, ELEM(X, k)); zip(X, Y, ...) is min(LEN(X), LEN(Y), ...) and the tuple
 * of the ELEMs; reversed(X) (a range, an array or a tuple) is LEN(X) and
 * ELEM(X, LEN(X) - 1 - k).  <k> is a local whose name no Python identifier can take.  The
 * existing machinery then does the rest: tuple targets unpack as in assignments,
 * `break`, `continue` and `else` keep their meaning, and both targets emit it.
 *
 * The rewrite is syntactic, so collect_locals runs it and <k> is an ordinary
 * local; sema checks what the names really are afterwards (for_iter_check):
 * `enumerate` and `zip` must be the builtins, the leaves arrays or tuples.  ELEM
 * reads its names at each iteration where Python evaluated the iterable once, so
 * a loop whose body rebinds one of them is refused rather than run differently.
 */
#include <string.h>

#include "sema_int.h"

/* What an iterable is, by its syntax. */
enum { IT_BAD, IT_LEAF, IT_RANGE, IT_ENUMERATE, IT_ZIP, IT_REVERSED };

static const char *call_name(const Node *n) {
    if (n->kind != E_CALL || n->call.fn->kind != E_NAME || n->call.kwvals.n) return NULL;
    return n->call.fn->name.id;
}

static int kind_of(const Node *n) {
    const char *f = call_name(n);
    /* a name, a tuple written out, or an element or slice of an array (x[i], x[1:]),
     * which stable() checks the body leaves alone */
    if (n->kind == E_NAME || n->kind == E_TUPLE || n->kind == E_SUBSCRIPT) return IT_LEAF;
    if (!f) return IT_BAD;
    if (strcmp(f, "range") == 0) return IT_RANGE; /* range_type checks its arguments */
    for (int i = 0; i < n->call.args.n; i++) /* zip(*t): the iterables are not written out */
        if (n->call.args.v[i]->flags & NF_STAR) return IT_BAD;
    if (strcmp(f, "enumerate") == 0)
        return n->call.args.n >= 1 && n->call.args.n <= 2 ? IT_ENUMERATE : IT_BAD;
    if (strcmp(f, "zip") == 0) return n->call.args.n >= 1 ? IT_ZIP : IT_BAD;
    if (strcmp(f, "reversed") == 0) return n->call.args.n == 1 ? IT_REVERSED : IT_BAD;
    return IT_BAD;
}

bool for_iter_needed(const Node *n) {
    return n->kind == S_FOR && kind_of(n->fors.iter) != IT_RANGE;
}

/* ---- names the body rebinds ---------------------------------------------------- */

static bool target_binds(const Node *t, const char *id) {
    if (t->kind == E_NAME) return strcmp(t->name.id, id) == 0;
    if (t->kind == E_TUPLE)
        for (int i = 0; i < t->tuple.n; i++)
            if (target_binds(t->tuple.v[i], id)) return true;
    return false;
}

static bool block_binds(const NodeList *l, const char *id) {
    for (int i = 0; i < l->n; i++) {
        const Node *s = l->v[i];
        switch (s->kind) {
        case S_ASSIGN:
            for (int j = 0; j < s->assign.targets.n; j++)
                if (target_binds(s->assign.targets.v[j], id)) return true;
            break;
        case S_AUGASSIGN:
            if (target_binds(s->aug.target, id)) return true;
            break;
        case S_FOR:
            if (target_binds(s->fors.target, id) || block_binds(&s->fors.body, id) ||
                block_binds(&s->fors.orelse, id))
                return true;
            break;
        case S_IF:
        case S_WHILE:
            if (block_binds(&s->ifs.body, id) || block_binds(&s->ifs.orelse, id)) return true;
            break;
        default: break;
        }
    }
    return false;
}

/* An expression ELEM may evaluate again at each iteration: names the body does not
 * rebind, constants, attributes, subscripts, arithmetic and len(). */
static bool stable(Compiler *C, const Node *e, const NodeList *body) {
    switch (e->kind) {
    case E_INT: case E_FLOAT: case E_IMAG: case E_BOOL: return true;
    case E_NAME:
        if (!block_binds(body, e->name.id)) return true;
        error_at(C, e->sp, "iterate over a copy: assign it to another name before the loop",
                 "the loop assigns to '%s', which its iterable reads", e->name.id);
        return false;
    case E_ATTR: return stable(C, e->attr.base, body);
    case E_TUPLE: /* for v in (a, b, c): the tuple made again at each iteration */
        for (int i = 0; i < e->tuple.n; i++)
            if (!stable(C, e->tuple.v[i], body)) return false;
        return true;
    case E_UNARY: return stable(C, e->un.x, body);
    case E_BINOP: return stable(C, e->bin.l, body) && stable(C, e->bin.r, body);
    case E_SUBSCRIPT:
        for (int i = 0; i < e->sub.idx.n; i++)
            if (!stable(C, e->sub.idx.v[i], body)) return false;
        return stable(C, e->sub.base, body);
    case E_SLICE:
        return (!e->slice.lo || stable(C, e->slice.lo, body)) &&
               (!e->slice.hi || stable(C, e->slice.hi, body)) &&
               (!e->slice.step || stable(C, e->slice.step, body));
    case E_CALL: {
        const char *f = call_name(e);
        if (f && strcmp(f, "len") == 0 && e->call.args.n == 1) return stable(C, e->call.args.v[0], body);
        break;
    }
    default: break;
    }
    error_at(C, e->sp, "assign it to a variable before the loop",
             "this part of a loop's iterable must be a name, a constant or arithmetic on them");
    return false;
}

/* ---- building the rewritten tree ----------------------------------------------- */

static Node *mk(Compiler *C, NodeKind k, Span sp) { return node_new(C, k, sp); }

static Node *name(Compiler *C, const char *id, Span sp) {
    Node *n = mk(C, E_NAME, sp);
    n->name.id = id;
    return n;
}

static Node *int_lit(Compiler *C, int64_t v, Span sp) {
    if (v < 0) {
        Node *u = mk(C, E_UNARY, sp);
        u->op = U_NEG;
        u->un.x = int_lit(C, -v, sp);
        u->depth = 2;
        return u;
    }
    Node *n = mk(C, E_INT, sp);
    n->ilit.v = (uint64_t)v;
    return n;
}

static Node *binop(Compiler *C, BinOp op, Node *l, Node *r, Span sp) {
    Node *n = mk(C, E_BINOP, sp);
    n->op = (uint8_t)op;
    n->bin.l = l;
    n->bin.r = r;
    n->depth = (uint16_t)((l->depth > r->depth ? l->depth : r->depth) + 1);
    n->flags |= NF_PAREN;
    return n;
}

/* A call of the builtin fn (len, min, range, int: NF_BUILTIN, whatever the function's
 * names bind). */
static Node *call(Compiler *C, const char *fn, Node **args, int nargs, Span sp) {
    Node *n = mk(C, E_CALL, sp);
    n->call.fn = name(C, fn, sp);
    n->call.fn->flags |= NF_BUILTIN;
    int cap = 0;
    uint16_t d = 1;
    for (int i = 0; i < nargs; i++) {
        nodelist_push(C, &n->call.args, args[i], &cap);
        if (args[i]->depth > d) d = args[i]->depth;
    }
    n->depth = (uint16_t)(d + 1);
    return n;
}

/* A constant integer written as such (3, -3), for range's step. */
static bool const_step(const Node *e, int64_t *v) {
    if (e->kind == E_INT && !e->ilit.big && e->ilit.v <= (uint64_t)INT64_MAX) {
        *v = (int64_t)e->ilit.v;
        return true;
    }
    if (e->kind == E_UNARY && e->op == U_NEG && const_step(e->un.x, v)) {
        *v = -*v;
        return true;
    }
    return false;
}

/* LEN and ELEM of an iterable at index kx (the loop's counter, or an expression of it);
 * false after reporting an error. */
static bool build(Compiler *C, Node *it, const NodeList *body, Node *kx, Node **len,
                  Node **elem) {
    Span sp = it->sp;
    NodeList *a = &it->call.args;
    switch (kind_of(it)) {
    case IT_LEAF: {
        if (!stable(C, it, body)) return false;
        Node *one[1] = {it};
        *len = call(C, "len", one, 1, sp);
        Node *s = mk(C, E_SUBSCRIPT, sp);
        s->sub.base = it;
        int cap = 0;
        nodelist_push(C, &s->sub.idx, kx, &cap);
        s->depth = (uint16_t)(it->depth + 1);
        *elem = s;
        return true;
    }
    case IT_RANGE: {
        for (int i = 0; i < a->n; i++)
            if (!stable(C, a->v[i], body)) return false;
        Node *lo = a->n == 1 ? int_lit(C, 0, sp) : a->v[0];
        Node *hi = a->n == 1 ? a->v[0] : a->v[1];
        /* the length in int64, as Python's: hi - lo of two uint8 would wrap */
        Node *lo64 = call(C, "int", &lo, 1, sp), *hi64 = call(C, "int", &hi, 1, sp);
        int64_t step = 1;
        if (a->n == 3 && (!const_step(a->v[2], &step) || step == 0)) {
            error_at(C, a->v[2]->sp, "write the step as a nonzero integer constant",
                     "range() inside enumerate(), zip() or reversed() needs a constant step");
            return false;
        }
        /* Python's len(range): ceil((hi - lo) / step), here with floor division */
        Node *span = step > 0 ? binop(C, B_SUB, hi64, lo64, sp) : binop(C, B_SUB, lo64, hi64, sp);
        int64_t m = step > 0 ? step : -step;
        *len = m == 1 ? span
                      : binop(C, B_FLOORDIV, binop(C, B_ADD, span, int_lit(C, m - 1, sp), sp),
                              int_lit(C, m, sp), sp);
        Node *off = step == 1 ? kx : binop(C, B_MUL, kx, int_lit(C, step, sp), sp);
        *elem = binop(C, B_ADD, lo, off, sp);
        return true;
    }
    case IT_ENUMERATE: {
        Node *il, *ie;
        if (!build(C, a->v[0], body, kx, &il, &ie)) return false;
        Node *idx = kx;
        if (a->n == 2) {
            if (!stable(C, a->v[1], body)) return false;
            idx = binop(C, B_ADD, idx, a->v[1], sp);
        }
        Node *t = mk(C, E_TUPLE, sp);
        int cap = 0;
        nodelist_push(C, &t->tuple, idx, &cap);
        nodelist_push(C, &t->tuple, ie, &cap);
        t->depth = (uint16_t)((idx->depth > ie->depth ? idx->depth : ie->depth) + 1);
        *len = il;
        *elem = t;
        return true;
    }
    case IT_ZIP: {
        Node *t = mk(C, E_TUPLE, sp);
        int cap = 0;
        Node *n = NULL;
        uint16_t d = 1;
        for (int i = 0; i < a->n; i++) {
            Node *il, *ie;
            if (!build(C, a->v[i], body, kx, &il, &ie)) return false;
            nodelist_push(C, &t->tuple, ie, &cap);
            if (ie->depth > d) d = ie->depth;
            if (!n) {
                n = il;
            } else {
                Node *two[2] = {n, il};
                n = call(C, "min", two, 2, sp);
            }
        }
        t->depth = (uint16_t)(d + 1);
        *len = n;
        *elem = t;
        return true;
    }
    case IT_REVERSED: {
        /* reversed(X): LEN(X) positions, X's from the end: ELEM(X, LEN(X) - 1 - k) */
        int ik = kind_of(a->v[0]);
        if (ik != IT_LEAF && ik != IT_RANGE) {
            error_at(C, a->v[0]->sp, "reverse the range or the array inside it",
                     "reversed() in a kernel's for loop takes a range, an array or a tuple "
                     "(Python cannot reverse enumerate() or zip() either)");
            return false;
        }
        Node *il, *ie;
        if (!build(C, a->v[0], body, kx, &il, &ie)) return false;
        Node *back = binop(C, B_SUB, binop(C, B_SUB, il, int_lit(C, 1, sp), sp), kx, sp);
        if (!build(C, a->v[0], body, back, len, elem)) return false;
        return true;
    }
    default:
        for (int i = 0; it->kind == E_CALL && i < it->call.args.n; i++)
            if (it->call.args.v[i]->flags & NF_STAR) {
                error_at(C, it->call.args.v[i]->sp, "write the iterables out: zip(a, b)",
                         "a for loop's %s() cannot unpack *t in kernels",
                         call_name(it) ? call_name(it) : "iterable");
                return false;
            }
        error_at(C, it->sp, "loop over range(), an array, a tuple, enumerate() or zip()",
                 "kernels cannot loop over this");
        return false;
    }
}

/* ---- the iterable, evaluated once ------------------------------------------------ */

/* Python evaluates a loop's iterable once, and the rewritten loop reads its parts at each
 * iteration: the parts that are not names or constants (the view x[i], range(x[0])'s
 * bound, a tuple of elements written out) are assigned to locals before the loop, so a
 * body that writes what they read does not change the loop (an array view is still read
 * at each iteration, as NumPy's iteration reads it). */
static bool trivial(const Node *e) {
    switch (e->kind) {
    case E_NAME: case E_INT: case E_FLOAT: case E_BOOL: case E_IMAG: return true;
    case E_UNARY: return trivial(e->un.x);
    default: return false;
    }
}

typedef struct {
    Compiler *C;
    NodeList pre; /* the assignments, in order */
    int cap, n;
    unsigned off; /* the loop's offset: the locals' names, iter.<off>.<n> */
} Hoist;

static Node *hoist(Hoist *h, Node *e) {
    if (trivial(e)) return e;
    const char *nm = arena_printf(&h->C->arena, "iter.%u.%d", h->off, h->n++);
    Node *a = mk(h->C, S_ASSIGN, e->sp);
    int cap = 0;
    nodelist_push(h->C, &a->assign.targets, name(h->C, nm, e->sp), &cap);
    a->assign.value = e;
    nodelist_push(h->C, &h->pre, a, &h->cap);
    return name(h->C, nm, e->sp);
}

static Node *hoist_iter(Hoist *h, Node *it) {
    NodeList *a = &it->call.args;
    switch (kind_of(it)) {
    case IT_LEAF:
        if (it->kind == E_SUBSCRIPT) return hoist(h, it);
        if (it->kind == E_TUPLE)
            for (int i = 0; i < it->tuple.n; i++)
                if (!trivial(it->tuple.v[i])) return hoist(h, it);
        return it;
    case IT_RANGE:
        for (int i = 0; i < a->n; i++) a->v[i] = hoist(h, a->v[i]); /* a step stays constant */
        return it;
    case IT_ENUMERATE:
        a->v[0] = hoist_iter(h, a->v[0]);
        if (a->n == 2) a->v[1] = hoist(h, a->v[1]);
        return it;
    case IT_ZIP:
    case IT_REVERSED:
        for (int i = 0; i < a->n; i++) a->v[i] = hoist_iter(h, a->v[i]);
        return it;
    default: return it;
    }
}

Node *for_iter_rewrite(Compiler *C, Node *n) {
    Node *it = n->fors.iter;
    const char *tf = call_name(it);
    if (tf && strcmp(tf, "tuple") == 0 && it->call.args.n == 1 && it->call.args.v[0]->kind == E_TUPLE)
        it = n->fors.iter = it->call.args.v[0]; /* for v in tuple((a, b)): the same tuple */
    Hoist h = {.C = C, .off = n->sp.off};
    it = n->fors.iter = hoist_iter(&h, it);
    Node *loop = n;
    if (h.pre.n) { /* n becomes `if True:` around the assignments and the loop */
        loop = mk(C, S_FOR, n->sp);
        *loop = *n;
        memset(&n->ifs, 0, sizeof n->ifs);
        n->kind = S_IF;
        n->ifs.cond = mk(C, E_BOOL, n->sp);
        n->ifs.cond->blit = true;
        nodelist_push(C, &h.pre, loop, &h.cap);
        n->ifs.body = h.pre;
        n = loop;
    }
    const char *k = arena_printf(&C->arena, "for.%u", (unsigned)n->sp.off);
    Node *len, *elem;
    if (!build(C, it, &n->fors.body, name(C, k, it->sp), &len, &elem)) {
        /* reported: the loop stays, over a range of nothing, so typing goes on; its
         * target's names are left unassigned and quiet (sema_collect_locals) */
        len = int_lit(C, 0, it->sp);
        elem = NULL;
        n->fors.dead = n->fors.target;
    }
    Node *assign = NULL;
    if (elem) {
        assign = mk(C, S_ASSIGN, n->fors.target->sp);
        int cap = 0;
        nodelist_push(C, &assign->assign.targets, n->fors.target, &cap);
        assign->assign.value = elem;
    }
    Node *one[1] = {len};
    n->fors.orig = elem ? it : NULL; /* nothing left to check of a failed one */
    n->fors.iter = call(C, "range", one, 1, it->sp);
    n->fors.target = name(C, k, n->fors.target->sp);
    if (assign) {
        NodeList b = {NULL, 0};
        int cap = 0;
        nodelist_push(C, &b, assign, &cap);
        for (int i = 0; i < n->fors.body.n; i++) nodelist_push(C, &b, n->fors.body.v[i], &cap);
        n->fors.body = b;
    }
    return loop;
}

/* ---- what the names are --------------------------------------------------------- */

static bool check(Sema *S, Node *it) {
    int kind = kind_of(it);

    if (kind == IT_LEAF) {
        const Type *t = sema_expr(S, it);
        if (IS_ERR(t) || IS_UNKNOWN(t)) return !IS_ERR(t);
        if (ty_is_ptr(t)) {
            error_at(S->C, it->sp, "loop over range(n), with the length passed as an argument",
                     "a for loop cannot iterate over a %s: a pointer has no extent",
                     ty_name(S->C, t));
            return false;
        }
        if (t->kind == TY_ARRAY || t->kind == TY_TUPLE) return true;
        error_at(S->C, it->sp, "loop over range(), an array, a tuple, enumerate() or zip()",
                 "a for loop cannot iterate over %s", ty_name(S->C, t));
        return false;
    }
    if (kind == IT_ENUMERATE || kind == IT_ZIP || kind == IT_RANGE || kind == IT_REVERSED) {
        const Type *ft = sema_expr(S, it->call.fn);
        if (IS_ERR(ft)) return false;
        int want = kind == IT_ENUMERATE ? IK_ENUMERATE
                   : kind == IT_ZIP     ? IK_ZIP
                   : kind == IT_REVERSED ? IK_REVERSED
                                        : IK_RANGE;
        if (ft->kind != TY_NS || !ft->ns->intr || ft->ns->intr->kind != want) {
            error_at(S->C, it->call.fn->sp, NULL,
                     "'%s' here is not Python's builtin, so this loop cannot iterate over it",
                     it->call.fn->name.id);
            return false;
        }
        if (kind == IT_RANGE) return true;
        int from = 0, to = kind == IT_ENUMERATE ? 1 : it->call.args.n;
        for (int i = from; i < to; i++)
            if (!check(S, it->call.args.v[i])) return false;
        return true;
    }
    return true;
}

/* False after reporting an error; then the body's first statement, the assignment
 * from the iterable, is the one that failed (the rewrite put it there). */
bool for_iter_check(Sema *S, Node *n) {
    return !n->fors.orig || check(S, n->fors.orig);
}
