/* star_args.c: f(*t) in kernels, Python's unpacking of a tuple into a call's positional
 * arguments.  The call's argument list is rewritten before the call is typed: a tuple
 * written out gives its items; any other tuple value t gives t[0], t[1], ... (constant
 * indices), the text of t repeated, so t must be a value without effects: a name, an
 * attribute, or a call of a builtin or intrinsic (cmath.polar(z)), never of a device
 * function, whose body may write.  Called by sema_expr.c for every call. */
#include "sema_int.h"

static bool repeatable(const Node *a) {
    switch (a->kind) {
    case E_NAME:
    case E_ATTR: return true;
    case E_CALL: return !a->callee && !a->ext;
    case E_SUBSCRIPT: return repeatable(a->sub.base);
    default: return false;
    }
}

/* 1 when every starred argument of n is a tuple that can be unpacked, 0 after an error,
 * -1 while a type is not known yet (sema types some calls more than once); nothing is
 * changed unless 1. */
static int check(Sema *S, Node *n) {
    Compiler *C = S->C;
    for (int i = 0; i < n->call.args.n; i++) {
        Node *a = n->call.args.v[i];
        if (!(a->flags & NF_STAR) || a->kind == E_TUPLE) continue;
        const Type *t = sema_expr(S, a);
        if (t->kind == TY_ERROR) return 0;
        if (t->kind == TY_UNKNOWN) return -1;
        if (t->kind != TY_TUPLE) {
            error_at(C, a->sp, "pass the arguments one by one",
                     "*%s: only a tuple unpacks into a call's arguments in kernels",
                     ty_name(C, t));
            return 0;
        }
        if (!repeatable(a)) {
            error_at(C, a->sp, "assign the tuple to a name first, then unpack the name",
                     "*t unpacks a name, an attribute, a tuple written out or a builtin's "
                     "result in kernels, not a device function's result");
            return 0;
        }
    }
    return 1;
}

Node *sema_tuple_item(Compiler *C, Node *t, int k) {
    Node *ix = node_new(C, E_INT, t->sp);
    ix->ilit.v = (uint64_t)k;
    Node *s = node_new(C, E_SUBSCRIPT, t->sp);
    s->sub.base = t;
    int cap = 0;
    nodelist_push(C, &s->sub.idx, ix, &cap);
    return s;
}

int sema_unpack_star(Sema *S, Node *n) {
    bool any = false;
    for (int i = 0; i < n->call.args.n; i++) any |= (n->call.args.v[i]->flags & NF_STAR) != 0;
    if (!any) return 1;
    int ok = check(S, n);
    if (ok != 1) return ok;
    Compiler *C = S->C;
    NodeList out = {0};
    int cap = 0;
    for (int i = 0; i < n->call.args.n; i++) {
        Node *a = n->call.args.v[i];
        if (!(a->flags & NF_STAR)) {
            nodelist_push(C, &out, a, &cap);
        } else if (a->kind == E_TUPLE) { /* f(*(x, y)): the items themselves */
            for (int k = 0; k < a->tuple.n; k++) nodelist_push(C, &out, a->tuple.v[k], &cap);
        } else {
            for (int k = 0; k < a->ty->n; k++) nodelist_push(C, &out, sema_tuple_item(C, a, k), &cap);
        }
    }
    n->call.args = out;
    return 1;
}
