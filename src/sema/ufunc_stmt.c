/* ufunc_stmt.c: NumPy ufuncs called on arrays inside a kernel, with an output array.
 *
 * Numba lets a kernel call a ufunc on arrays when it names the output (`np.sin(x, r)`,
 * `np.add(a, b, out=r)`): the thread that runs the statement computes every element of
 * the output, broadcasting its inputs, as NumPy would.  A kernel cannot allocate, so a
 * ufunc of arrays without an output array is refused, and so is such a call used as a
 * value.
 *
 * The statement is recognised by its syntax while locals are collected (the callee is
 * an attribute or name spelled as one of NumPy's ufuncs kiln knows, given one argument
 * more than the ufunc's inputs, or `out=`), because the temporaries it needs must be
 * locals before typing:
 *
 *     np.f(A, B, OUT)   ==>   <uf.k.0> = A; <uf.k.1> = B; <uf.k.2> = OUT   (once each)
 *                             for every index i of <uf.k.2> (emit_ufunc.c):
 *                                 <uf.k.e0> = <uf.k.0>[i, broadcast]; <uf.k.e1> = ...
 *                                 <uf.k.2>[i] = np.f(<uf.k.e0>, <uf.k.e1>)
 *
 * Typing then decides: when the callee is NumPy's ufunc, the statement is that loop and
 * the operation on the element variables is typed as the scalar code it is (NEP 50 for
 * weak scalars, kiln's math typing); otherwise (a device function spelled `add`, say)
 * the temporaries stay unused and the call is typed as written.  The result converts to
 * the output's dtype under NumPy's same_kind rule, and an input with more dimensions
 * than the output is an error here; extents that do not broadcast are a ValueError
 * raised by the kernel (KILN_ERR_BROADCAST).
 */
#include <string.h>

#include "sema_int.h"

int ufunc_nin(const Intrinsic *in) {
    if (!in || strncmp(in->name, "numpy.", 6) != 0) return 0;
    switch ((IntrKind)in->kind) {
    case IK_MATH1:
    case IK_ROUNDING:
    case IK_PRED:
    case IK_ABS:
    case IK_SIGN: return 1;
    case IK_CMATH: return in->sub == CM_CONJ ? 1 : 0;
    case IK_MATH2:
    case IK_POWER:
    case IK_NPMINMAX:
    case IK_BINOP:
    case IK_NPCMP: return 2;
    case IK_NPUFUNC: return in->sub == NU_INVERT || in->sub == NU_LNOT ? 1 : 2;
    default: return 0;
    }
}

/* ---- recognising the statement (collect time) --------------------------------------- */

static const char *callee_name(const Node *fn) {
    if (fn->kind == E_ATTR) return fn->attr.attr;
    if (fn->kind == E_NAME) return fn->name.id;
    return NULL;
}

static Node *name_node(Compiler *C, const char *id, Span sp) {
    Node *n = node_new(C, E_NAME, sp);
    n->name.id = id;
    return n;
}

void ufunc_stmt_prepare(Compiler *C, Node *n) {
    Node *call = n->expr;
    if (n->uf || call->kind != E_CALL) return;
    const char *name = callee_name(call->call.fn);
    if (!name) return;
    int nin = ufunc_nin(intrinsic_lookup(arena_printf(&C->arena, "numpy.%s", name)));
    if (!nin) return;
    NodeList *a = &call->call.args;
    Node *out = NULL;
    if (a->n == nin + 1 && call->call.kwvals.n == 0)
        out = a->v[nin];
    else if (a->n == nin && call->call.kwvals.n == 1 && strcmp(call->call.kwnames[0], "out") == 0)
        out = call->call.kwvals.v[0];
    if (!out) return;
    UfuncStmt *uf = arena_alloc(&C->arena, sizeof *uf);
    uf->call = call;
    uf->nin = nin;
    for (int k = 0; k <= nin; k++) {
        Node *arg = k < nin ? a->v[k] : out;
        const char *tn = arena_printf(&C->arena, "uf.%u.%d", (unsigned)n->sp.off, k);
        uf->tmp[k] = name_node(C, tn, arg->sp);
        Node *as = node_new(C, S_ASSIGN, arg->sp);
        int cap = 0;
        nodelist_push(C, &as->assign.targets, name_node(C, tn, arg->sp), &cap);
        as->assign.value = arg;
        uf->assigns[k] = as;
        if (k < nin)
            uf->elem[k] = name_node(C, arena_printf(&C->arena, "uf.%u.e%d", (unsigned)n->sp.off, k),
                                    arg->sp);
    }
    n->uf = uf;
}

/* ---- typing ------------------------------------------------------------------------- */

/* The operation on the element variables: the ufunc called on them (a comparison
 * ufunc's call becomes the comparison when typed: sema_ufunc_compare). */
static Node *template_of(Compiler *C, UfuncStmt *uf) {
    Span sp = uf->call->sp;
    int cap = 0;
    Node *c = node_new(C, E_CALL, sp);
    c->call.fn = uf->call->call.fn;
    for (int k = 0; k < uf->nin; k++)
        nodelist_push(C, &c->call.args, name_node(C, uf->elem[k]->name.id, uf->elem[k]->sp), &cap);
    c->depth = (uint16_t)(c->call.fn->depth + 1);
    return c;
}

/* NumPy's same_kind casting between scalar types: within a kind or to a later kind of
 * bool, unsigned, signed, float, complex (int64 to int8 is allowed, int8 to uint8 not). */
static int kind_rank(const Type *t) {
    switch ((TypeKind)t->kind) {
    case TY_BOOL: return 0;
    case TY_INT: return ty_is_signed(t) ? 2 : 1;
    case TY_FLOAT: return 3;
    default: return 4;
    }
}

bool sema_ufunc_stmt(Sema *S, Node *n) {
    Compiler *C = S->C;
    UfuncStmt *uf = n->uf;
    const Type *ft = sema_expr(S, uf->call->call.fn);
    const Intrinsic *in = ft->kind == TY_NS && ft->ns ? ft->ns->intr : NULL;
    if (!ufunc_nin(in) || ufunc_nin(in) != uf->nin) return false; /* not NumPy's: a call */
    uf->active = true;
    S->res->uses_ufunc_loops = true;
    uf->call->intr = in;
    uf->call->ty = &ty_none; /* the statement gives no value; passes after sema read this */
    if (!uf->tmpl) uf->tmpl = template_of(C, uf);
    for (int k = 0; k <= uf->nin; k++) sema_stmt(S, uf->assigns[k]);
    const Type *ts[UFUNC_MAX_IN + 1];
    bool bad = false;
    for (int k = 0; k <= uf->nin; k++) {
        ts[k] = uf->assigns[k]->assign.targets.v[0]->ty;
        if (!ts[k] || IS_UNKNOWN(ts[k])) return true;
        if (IS_ERR(ts[k])) bad = true;
    }
    if (bad) return true;
    const Type *ot = ts[uf->nin];
    Node *outarg = uf->assigns[uf->nin]->assign.value;
    if (ot->kind != TY_ARRAY || ty_is_ptr(ot)) {
        error_at(C, outarg->sp, "pass an array to write the results into",
                 "the output of %s() must be an array, not %s", in->name, ty_name(C, ot));
        return true;
    }
    for (int k = 0; k < uf->nin; k++) {
        const Type *t = ts[k];
        Node *arg = uf->assigns[k]->assign.value;
        if (ty_is_ptr(t) || (t->kind != TY_ARRAY && !ty_is_scalar(t))) {
            error_at(C, arg->sp, NULL, "%s() takes arrays and numbers, not %s", in->name,
                     ty_name(C, t));
            return true;
        }
        if (t->kind == TY_ARRAY && t->ndim > ot->ndim) {
            error_at(C, arg->sp, "pass an output array with as many dimensions",
                     "operands could not be broadcast together: a %d-d input of %s() does not "
                     "fit its %d-d output", t->ndim, in->name, ot->ndim);
            return true;
        }
        sema_assign_local(S, uf->elem[k], t->kind == TY_ARRAY ? t->elem : t);
    }
    const Type *rt = sema_expr(S, uf->tmpl);
    if (IS_ERR(rt) || IS_UNKNOWN(rt)) return true;
    if (!ty_is_scalar(rt)) {
        error_at(C, uf->call->sp, NULL, "%s() gives %s here, not a number", in->name,
                 ty_name(C, rt));
        return true;
    }
    const Type *dst = ot->elem;
    if (kind_rank(rt) > kind_rank(dst)) { /* a weak result as its default type */
        error_at(C, outarg->sp, "pass an output array of the result's kind, or convert the inputs",
                 "Cannot cast ufunc '%s' output from %s to %s with casting rule 'same_kind'",
                 in->name + 6, ty_name(C, rt), ty_name(C, dst));
        return true;
    }
    for (int k = 0; k <= uf->nin; k++) sema_expr(S, uf->tmp[k]); /* the names the emitter reads */
    sema_mark_written(S, uf->tmp[uf->nin]);
    return true;
}

/* ---- the ufunc as a value ----------------------------------------------------------- */

bool sema_ufunc_misuse(Sema *S, Node *n, const Intrinsic *in) {
    Compiler *C = S->C;
    int nin = ufunc_nin(in);
    bool has_out = n->call.args.n > nin;
    for (int k = 0; k < n->call.kwvals.n; k++)
        if (strcmp(n->call.kwnames[k], "out") == 0) has_out = true;
    if (has_out) {
        error_at(C, n->sp, "write the call as a statement of its own: np.sin(x, out)",
                 "%s() with an output array is a statement in kernels: it gives no value",
                 in->name);
        return true;
    }
    for (int i = 0; i < n->call.args.n; i++) {
        const Type *t = sema_expr(S, n->call.args.v[i]);
        if (t->kind == TY_ARRAY) {
            error_at(C, n->call.args.v[i]->sp,
                     "pass the output array, as a statement: np.sin(x, out) or np.sin(x, out=out)",
                     "%s() of an array would allocate its result, which a kernel cannot do",
                     in->name);
            return true;
        }
    }
    return false;
}

const Type *sema_ufunc_compare(Sema *S, Node *n, const Intrinsic *in) {
    Node *a[2];
    if (!sema_bind(S, n, in, 2, 2, a)) return &ty_error;
    if (in->sub != C_EQ && in->sub != C_NE) {
        /* NumPy orders complex numbers, Python does not: the ufunc's own order
         * (emit_npufunc.c), with the two operands kept as the bound arguments */
        const Type *t[2];
        bool unk = false;
        if (!sema_scalar_args(S, a, 2, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        if (t[0]->kind == TY_COMPLEX || t[1]->kind == TY_COMPLEX) {
            n->opty = ty_promote(t[0], t[1]);
            return ty_scalar(KILN_BOOL);
        }
    }
    Node *c = node_new(S->C, E_COMPARE, n->sp);
    int cap = 0;
    nodelist_push(S->C, &c->cmp.operands, a[0], &cap);
    nodelist_push(S->C, &c->cmp.operands, a[1], &cap);
    c->cmp.ops = arena_alloc(&S->C->arena, 1);
    c->cmp.ops[0] = in->sub;
    c->depth = (uint16_t)((a[0]->depth > a[1]->depth ? a[0]->depth : a[1]->depth) + 1);
    n->call.bound.v[0] = c; /* the emitter writes the comparison in the call's place */
    n->call.bound.n = 1;
    return sema_expr(S, c);
}
