/* spec.c: specialisations of kernels and device functions.
 *
 * A FuncSpec is one function typed for one tuple of argument types.  spec_get
 * finds or makes it, typing its body to a fixed point with diagnostics muted
 * (analyse), and finalise types it once more with them on.  A call of a device
 * function picks its specialisation here: by its explicit signatures (the best
 * conversion, as Numba resolves them) or by the argument types, with the
 * compile-time arguments (dtypes, functions, None, literal shapes and bools)
 * in its key.  sema_run is the whole of sema for one kernel; sema_dump_types
 * writes what inspect_types shows.  Statements are typed by sema.c.
 */
#include <limits.h>
#include <string.h>

#include "sema_int.h"

/* Marks in *mask the parameters (of proto) that `shape`, a shared or local array's shape,
 * names: `p` or `(p, q)`. */
static void shape_param(const Node *proto, const Node *shape, uint64_t *mask) {
    const Node *one[1] = {shape};
    const Node *const *v = shape->kind == E_TUPLE ? (const Node *const *)shape->tuple.v : one;
    int n = shape->kind == E_TUPLE ? shape->tuple.n : 1;
    for (int i = 0; i < n; i++) {
        if (v[i]->kind != E_NAME) continue;
        for (int p = 0; p < proto->def.nparams && p < 64; p++)
            if (strcmp(proto->def.params[p].name, v[i]->name.id) == 0) *mask |= UINT64_C(1) << p;
    }
}

/* The parameters a function's body uses as array shapes, by name, in statements of the
 * form `x = <...>.array(shape, dtype)` (how kernels make shared and local arrays). */
static void shape_params(const Node *proto, const NodeList *body, uint64_t *mask) {
    for (int i = 0; i < body->n; i++) {
        const Node *n = body->v[i];
        switch (n->kind) {
        case S_ASSIGN: {
            const Node *v = n->assign.value;
            if (!v || v->kind != E_CALL || v->call.fn->kind != E_ATTR ||
                strcmp(v->call.fn->attr.attr, "array") != 0)
                break;
            if (v->call.args.n > 0) shape_param(proto, v->call.args.v[0], mask);
            for (int k = 0; k < v->call.kwvals.n; k++)
                if (strcmp(v->call.kwnames[k], "shape") == 0)
                    shape_param(proto, v->call.kwvals.v[k], mask);
            break;
        }
        case S_FOR:
            shape_params(proto, &n->fors.body, mask);
            shape_params(proto, &n->fors.orelse, mask);
            break;
        case S_IF:
        case S_WHILE:
            shape_params(proto, &n->ifs.body, mask);
            shape_params(proto, &n->ifs.orelse, mask);
            break;
        default: break;
        }
    }
}

/* Marks in *mask the parameter (of proto) that a condition tests whole: `p` or `not p`. */
static void cond_param(const Node *proto, const Node *c, uint64_t *mask) {
    if (c->kind == E_UNARY && c->op == U_NOT) c = c->un.x;
    if (c->kind != E_NAME) return;
    for (int p = 0; p < proto->def.nparams && p < 64; p++)
        if (strcmp(proto->def.params[p].name, c->name.id) == 0) *mask |= UINT64_C(1) << p;
}

/* The parameters a function's body tests whole in `if` and `elif` conditions. */
static void cond_params(const Node *proto, const NodeList *body, uint64_t *mask) {
    for (int i = 0; i < body->n; i++) {
        const Node *n = body->v[i];
        switch (n->kind) {
        case S_FOR: cond_params(proto, &n->fors.body, mask); break;
        case S_WHILE: cond_params(proto, &n->ifs.body, mask); break;
        case S_IF: /* an elif chain with a loop: any length costs no stack */
            for (; n; n = elif_of(n)) {
                cond_param(proto, n->ifs.cond, mask);
                cond_params(proto, &n->ifs.body, mask);
                if (!elif_of(n)) cond_params(proto, &n->ifs.orelse, mask);
            }
            break;
        default: break;
        }
    }
}

/* An integer constant, or a tuple of them (a literal `(4, 8)` or a global tuple), given
 * to a device function without a signature for a parameter its body uses as an array's
 * shape: its type carries the values, so the callee may shape arrays with it, as Numba's
 * literal dispatch allows; a specialisation per value.  Likewise a bool constant for a
 * parameter the body tests (`if p:`): the callee's test is then constant, and the branch
 * that never runs is not typed (Numba prunes it). */
static const Type *literal_arg(Compiler *C, const Node *arg, const Type *t) {
    int64_t dims[KILN_MAX_NDIM];
    if (t->kind == TY_BOOL && !t->lit) {
        if (!(arg->flags & NF_CONST)) return t;
        Type *lt = arena_alloc(&C->arena, sizeof *lt);
        *lt = *t;
        lt->lit = true;
        lt->litv = arg->cval.i != 0;
        return lt;
    }
    if (t->kind == TY_INT && t->weak && !t->lit) {
        /* a literal, or a local assigned one once (`n = 4`, as a shape is: sema_shape) */
        if (!sema_const_int(arg, &dims[0]) &&
            !(arg->kind == E_NAME && arg->sym && arg->sym->has_cint && arg->sym->nassign == 1 &&
              (dims[0] = arg->sym->cint, true)))
            return t;
        Type *lt = arena_alloc(&C->arena, sizeof *lt);
        *lt = *t;
        lt->lit = true;
        lt->litv = dims[0];
        return lt;
    }
    if (t->kind != TY_TUPLE || t->n < 1 || t->n > KILN_MAX_NDIM) return t;
    for (int i = 0; i < t->n; i++)
        if (t->elems[i]->kind != TY_INT || !t->elems[i]->weak) return t;
    if (sema_shape(arg, dims, KILN_MAX_NDIM) != t->n) return t;
    const Type **el = arena_alloc(&C->arena, sizeof(Type *) * (size_t)t->n);
    for (int i = 0; i < t->n; i++) {
        Type *lt = arena_alloc(&C->arena, sizeof *lt);
        *lt = *t->elems[i];
        lt->lit = true;
        lt->litv = dims[i];
        el[i] = lt;
    }
    return ty_tuple(C, t->n, el);
}

static void run_pass(Sema *S, FuncSpec *f) {
    FuncSpec *saved_cur = S->cur;
    int saved_depth = S->loop_depth;
    S->cur = f;
    S->loop_depth = 0;
    f->storage.n = 0;
    f->local_bytes = 0;
    f->shared_bytes = 0;
    f->ntemps = 0;
    sema_block(S, &f->def->def.body);
    if (!f->is_kernel && f->ret->kind != TY_NONE && !IS_UNKNOWN(f->ret) && !f->ret_none &&
        !sema_always_returns(&f->def->def.body)) {
        if (sema_optional_of(f->ret)) {
            f->ret_none = true; /* Python returns None from its end: an Optional, as in Numba */
            S->changed = true;
        } else if (S->final) {
            error_at(S->C, f->def->def.name_sp, "end the function with a return statement",
                     "function '%s' returns %s on some paths but can reach its end without one",
                     f->fi->name, ty_name(S->C, f->ret));
        }
    }
    S->cur = saved_cur;
    S->loop_depth = saved_depth;
}

/* Whether a statement list (its nested blocks too) returns a value somewhere. */
static bool returns_value(const NodeList *l) {
    for (int i = 0; i < l->n; i++) {
        const Node *n = l->v[i];
        switch (n->kind) {
        case S_RETURN:
            if (n->ret.value && n->ret.value->kind != E_NONE) return true;
            break;
        case S_IF:
            for (; n->kind == S_IF; n = n->ifs.orelse.n == 1 ? n->ifs.orelse.v[0] : n) {
                if (returns_value(&n->ifs.body)) return true;
                if (n->ifs.orelse.n != 1 || n->ifs.orelse.v[0]->kind != S_IF) {
                    if (returns_value(&n->ifs.orelse)) return true;
                    break;
                }
            }
            break;
        case S_WHILE:
            if (returns_value(&n->ifs.body) || returns_value(&n->ifs.orelse)) return true;
            break;
        case S_FOR:
            if (returns_value(&n->fors.body) || returns_value(&n->fors.orelse)) return true;
            break;
        default: break;
        }
    }
    return false;
}

static void analyse(Sema *S, FuncSpec *f) {
    bool saved_changed = S->changed, saved_final = S->final;
    int rec_low = S->rec_low, me = S->stack.n;
    S->rec_low = INT_MAX;
    f->in_progress = true;
    vec_push(&S->C->arena, &S->stack, f);
    S->final = false;
    S->C->muted++;
    for (int iter = 0; iter < 100; iter++) {
        S->changed = false;
        f->runaway = false;
        run_pass(S, f);
        if (!S->changed) break;
    }
    S->C->muted--;
    if (!IS_UNKNOWN(f->ret)) f->runaway = false; /* a return gave it a type: not runaway */
    if (IS_UNKNOWN(f->ret) && !f->ret_error && !returns_value(&f->def->def.body)) {
        f->ret = &ty_none; /* no return gives a value: it returns None, recursive or not */
        f->runaway = false;
    }
    S->stack.n--;
    f->in_progress = false;
    bool outer = S->rec_low < me; /* an untyped call back into a caller of f */
    S->rec_low = S->rec_low < rec_low ? S->rec_low : rec_low;
    if (IS_UNKNOWN(f->ret) && !f->ret_error && outer) {
        /* its returns all come from a call back into a function still being typed (g of
         * f -> g -> f): not None but not known yet; typed again at the next call, when the
         * outer function may have a type (spec_get drops it), or found runaway there */
        f->provisional = true;
        S->changed = saved_changed;
        S->final = saved_final;
        return;
    }
    /* runaway: its recursive call says so (finalise); its callers stay quiet */
    if (IS_UNKNOWN(f->ret)) f->ret = f->ret_error || f->runaway ? &ty_error : &ty_none;
    f->analysed = true;
    S->changed = saved_changed;
    S->final = saved_final;
}

static void finalise(Sema *S, FuncSpec *f) {
    if (f->finalised || S->C->muted) return;
    f->finalised = true;
    sema_unbound_checks(S, f);
    bool saved_final = S->final, saved_changed = S->changed;
    int before = S->C->nerrors;
    vec_push(&S->C->arena, &S->stack, f);
    S->final = true;
    run_pass(S, f);
    S->stack.n--;
    f->failed = S->C->nerrors > before;
    S->final = saved_final;
    S->changed = saved_changed;
    vec_push(&S->C->arena, &S->res->order, f);
}

static FuncSpec *spec_get(Sema *S, FuncInfo *fi, const Type **types, int n, bool is_kernel) {
    for (FuncSpec *sp = fi->specs; sp; sp = sp->next) {
        if (sp->nparams != n || sp->is_kernel != is_kernel) continue;
        bool same = true;
        for (int i = 0; i < n && same; i++) same = ty_equal(sp->params[i], types[i]);
        if (same) return sp;
    }
    Compiler *C = S->C;
    FuncSpec *f = arena_alloc(&C->arena, sizeof *f);
    f->fi = fi;
    f->id = S->nspecs++;
    f->is_kernel = is_kernel;
    f->def = fi->inner_def ? sema_clone_tree(C, fi->inner_def) : parse_function(C, &fi->file);
    if (!f->def) return NULL;
    f->nparams = n;
    f->params = arena_alloc(&C->arena, sizeof(Type *) * (size_t)(n + 1));
    f->psyms = arena_alloc(&C->arena, sizeof(Sym *) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        f->params[i] = types[i];
        Sym *s = sema_sym_new(S, f, f->def->def.params[i].name);
        s->param = i;
        s->ty = types[i];
        s->def_sp = f->def->def.params[i].sp;
        s->maybe_neg = ty_is_int(types[i]) && ty_is_signed(types[i]);
        if (types[i]->kind == TY_ARRAY || types[i]->kind == TY_TUPLE ||
            types[i]->kind == TY_RECORD)
            s->origins = origin_of_param(i);
        f->psyms[i] = s;
    }
    literal_unroll_expand(S, f); /* copies of bodies, whose locals are collected next */
    nested_prepare(S, f);
    sema_collect_locals(S, f, &f->def->def.body);
    sema_split_webs(S, f); /* a name whose definitions never meet: several variables */
    f->ret = &ty_unknown;
    f->next = fi->specs;
    fi->specs = f;
    fi->nspecs++;
    analyse(S, f);
    if (f->provisional) { /* not kept: the next call types it again */
        for (FuncSpec **at = &fi->specs; *at; at = &(*at)->next)
            if (*at == f) { /* (specs of other types may have joined the list meanwhile) */
                *at = f->next;
                fi->nspecs--;
                break;
            }
    }
    return f;
}

/* Types a default parameter value: literal numbers and booleans only. */
static bool type_default(Sema *S, Node *d) {
    Node *x = d;
    bool neg = false;
    if (x->kind == E_UNARY && (x->op == U_NEG || x->op == U_POS)) {
        neg = x->op == U_NEG;
        x = x->un.x;
    }
    switch (x->kind) {
    case E_INT:
        d->ty = x->ilit.big ? ty_scalar(KILN_UINT64) : &ty_weak_int;
        d->cval.i = neg ? -(int64_t)x->ilit.v : (int64_t)x->ilit.v;
        d->flags |= NF_CONST | (d->cval.i >= 0 ? NF_NONNEG : 0);
        return true;
    case E_FLOAT:
        d->ty = &ty_weak_float;
        d->cval.f = neg ? -x->flit : x->flit;
        d->flags |= NF_CONST;
        return true;
    case E_BOOL:
        if (neg) break;
        d->ty = ty_scalar(KILN_BOOL);
        d->cval.i = x->blit;
        d->flags |= NF_CONST;
        return true;
    case E_NONE: /* `out=None`: tested with `is None`, a constant (ty_compile_time) */
        if (x != d) break;
        d->ty = &ty_none;
        return true;
    default: break;
    }
    error_at(S->C, d->sp, "pass the value explicitly at the call",
             "default values of device functions must be literal numbers, booleans or None");
    return false;
}

static bool sig_accepts(const kiln_argtype *s, const Type *t) {
    if (s->layout == KILN_LAYOUT_PTR) /* a pointer takes a pointer to the same type only */
        return ty_is_ptr(t) && t->elem->dtype == s->dtype;
    if (s->is_array) {
        if (t->kind != TY_ARRAY || t->ptr) return false;
        if (t->elem->dtype != s->dtype || t->ndim != s->ndim) return false;
        return s->layout == KILN_LAYOUT_A || s->layout == (uint8_t)t->layout;
    }
    /* a complex value converts to complex types only (a real one to any) */
    if (t->kind == TY_COMPLEX) return s->dtype == KILN_COMPLEX64 || s->dtype == KILN_COMPLEX128;
    return ty_is_scalar(t);
}

/* What converting a value of type t to a signature's scalar type d costs: 0 exact (a
 * Python int or float taken as int64 or float64 counts as exact), 1 safe (no value is
 * lost: wider, or an integer to a float), 2 unsafe (a float to an integer, narrower). */
static int conversion_cost(const Type *t, kiln_dtype d) {
    if (t->kind == TY_TUPLE || t->kind == TY_ARRAY) return 3;
    kiln_dtype from = (kiln_dtype)t->dtype;
    if (d == KILN_COMPLEX64 || d == KILN_COMPLEX128) {
        /* a Python complex taken as complex128 is exact; a real one converts safely
         * to complex128, and to complex64 where its parts fit float32 (NumPy's rule) */
        if (t->weak) return t->kind == TY_COMPLEX && d == KILN_COMPLEX128 ? 0 : 1;
        if (from == d) return 0;
        if (d == KILN_COMPLEX128) return 1;
        return t->kind == TY_BOOL || (t->kind != TY_COMPLEX && kiln_dtype_size(from) <= 2) ||
                       from == KILN_FLOAT32
                   ? 1
                   : 2;
    }
    bool tf = t->kind == TY_FLOAT,
         df = d == KILN_FLOAT16 || d == KILN_FLOAT32 || d == KILN_FLOAT64;
    if (t->weak) {
        if (tf) return d == KILN_FLOAT64 ? 0 : df ? 1 : 2;
        return d == KILN_INT64 ? 0 : d == KILN_BOOL ? 2 : 1;
    }
    if (from == d) return 0;
    if (tf) return df && kiln_dtype_size(d) > kiln_dtype_size(from) ? 1 : 2;
    if (df) return 1;
    if (d == KILN_BOOL) return 2;
    if (t->kind == TY_BOOL) return 1;
    bool ts = ty_is_signed(t), ds = d == KILN_INT8 || d == KILN_INT16 || d == KILN_INT32 ||
                                    d == KILN_INT64;
    size_t a = kiln_dtype_size(from), b = kiln_dtype_size(d);
    if (ts == ds) return b >= a ? 1 : 2;
    return !ts && ds && b > a ? 1 : 2;
}

/* The signature a call with argument types `types` takes: the one that needs the fewest
 * unsafe conversions, then the fewest safe ones, the first given on a tie (as Numba
 * resolves explicit signatures of device functions); NULL when none accepts them. */
static const FuncSig *best_signature(const FuncInfo *fi, const Type **types, int np) {
    const FuncSig *best = NULL;
    int best_unsafe = 0, best_safe = 0;
    for (int s = 0; s < fi->nsigs; s++) {
        const FuncSig *g = &fi->sigs[s];
        if (g->nargs != np) continue;
        int unsafe = 0, safe = 0;
        bool ok = true;
        for (int i = 0; i < np && ok; i++) {
            if (!sig_accepts(&g->args[i], types[i])) ok = false;
            else if (!g->args[i].is_array && g->args[i].layout != KILN_LAYOUT_PTR) {
                int c = conversion_cost(types[i], (kiln_dtype)g->args[i].dtype);
                unsafe += c == 2;
                safe += c == 1;
            }
        }
        if (!ok) continue;
        if (!best || unsafe < best_unsafe || (unsafe == best_unsafe && safe < best_safe)) {
            best = g;
            best_unsafe = unsafe;
            best_safe = safe;
        }
    }
    return best;
}

static const char *types_text(Compiler *C, const Type **types, int n) {
    Buf b;
    buf_init_arena(&b, &C->arena);
    for (int i = 0; i < n; i++) buf_printf(&b, "%s%s", i ? ", " : "", ty_name(C, types[i]));
    return b.p ? b.p : "";
}

/* Whether argument a, of weak type t (a Python int or float), converts to parameter type
 * p as the call's value: `f(m - 1, 1)` inside f(int64, int64), as Numba types the literal.
 * A constant int must fit p. */
static bool weak_fits(const Node *a, const Type *t, const Type *p) {
    if (!a || !t->weak || p->weak) return false;
    if (t->kind == TY_INT && p->kind == TY_INT) {
        int64_t v;
        return !sema_const_int(a, &v) || ty_int_fits(p, v, false);
    }
    return (t->kind == TY_INT || t->kind == TY_FLOAT) && p->kind == TY_FLOAT;
}

/* A call of `on`, a function being analysed (recursion, which C and CUDA run with a
 * stack): the same argument types only, since a new specialisation would be analysed
 * inside its own analysis (a Python number converts to the parameter's type, weak_fits).
 * The result is the signature's return type, or the type the
 * function's other returns gave it so far (unknown until they have: a later pass takes
 * it; a function whose every return goes through itself never gets one, Numba's
 * runaway recursion).  Array arguments are taken as written, since the callee's writes
 * are not all known yet. */
/* Whether a parameter of type t is the caller's memory (an array, a record, passed by
 * reference, or a tuple that may hold arrays): the callee's writes to it are the caller's. */
static bool passes_memory(const Type *t) {
    return t->kind == TY_ARRAY || t->kind == TY_TUPLE || t->kind == TY_RECORD;
}

static FuncSpec *recursive_call(Sema *S, Node *call, FuncSpec *on, const Type **types, int np,
                                const FuncSig *sig, const Type **ret) {
    Compiler *C = S->C;
    if (on->is_kernel) {
        error_at(C, call->sp, "move the recursive part into a device function "
                 "(@kiln.jit(device=True)) and call that from the kernel",
                 "kernel '%s' calls itself: a kernel cannot be called from kernels, itself "
                 "included", on->fi->name);
        return NULL;
    }
    bool same = on->nparams == np;
    for (int i = 0; i < np && same; i++)
        same = ty_equal(on->params[i], types[i]) ||
               weak_fits(call->call.bound.v[i], types[i], on->params[i]);
    if (!same) {
        error_at(C, call->sp, "give the function an explicit signature, or convert the "
                 "arguments to the types of the outer call",
                 "recursive call of '%s' with other argument types (%s) is not supported in "
                 "kernels", on->fi->name, types_text(C, types, np));
        return NULL;
    }
    /* every function of the cycle (on ... the caller) calls through the stack, each
     * passing the recursion's stack bound on (KILN_RFA): a member inlined would start a
     * new bound at each round of a mutual recursion, which then never trips */
    bool in_cycle = false;
    for (int i = 0; i < S->stack.n; i++) {
        FuncSpec *f = S->stack.v[i];
        if (f == on) in_cycle = true;
        if (in_cycle && !f->is_kernel) f->recursive = true;
    }
    on->recursive = true;
    S->rec_calls++;
    for (int i = 0; i < np; i++)
        if (passes_memory(types[i])) {
            on->written |= origin_of_param(i);
            sema_mark_written(S, call->call.bound.v[i]);
        }
    call->callee = on;
    if (sig && sig->ret.dtype != KILN_NDTYPES) {
        *ret = ty_scalar((kiln_dtype)sig->ret.dtype);
        return on;
    }
    if (IS_UNKNOWN(on->ret) || on->runaway) {
        if (!on->analysed) {
            on->runaway = true; /* until a pass finds a return type (analyse) */
            for (int i = 0; i < S->stack.n; i++)
                if (S->stack.v[i] == on && i < S->rec_low) S->rec_low = i;
            *ret = &ty_unknown;
            return NULL;
        }
        error_at(C, call->sp, "return a value that does not come from the recursion on "
                 "some path, or give the function an explicit signature",
                 "cannot type infer runaway recursion: no return of '%s' has a type that "
                 "does not come from calling itself", on->fi->name);
        *ret = &ty_error;
        return NULL;
    }
    *ret = on->ret;
    return on;
}

FuncSpec *sema_call_function(Sema *S, Node *call, FuncInfo *fi, const Type **ret) {
    Compiler *C = S->C;
    *ret = &ty_error;
    if (fi->parse_failed || !fi->proto) return NULL;
    /* a function decorated @jit without device=True is called as a device function, as
     * Numba-CUDA does (a kernel launched on the host is still compiled as a kernel) */
    Node *proto = fi->proto;
    int np = proto->def.nparams;
    Node **bound = arena_alloc(&C->arena, sizeof(Node *) * (size_t)(np + 1));
    if (call->call.args.n > np) {
        error_at(C, call->sp, NULL, "%s() takes %d positional argument%s but %d were given",
                 fi->name, np, np == 1 ? "" : "s", call->call.args.n);
        return NULL;
    }
    for (int i = 0; i < call->call.args.n; i++) bound[i] = call->call.args.v[i];
    for (int k = 0; k < call->call.kwvals.n; k++) {
        const char *kw = call->call.kwnames[k];
        int idx = -1;
        for (int i = 0; i < np; i++)
            if (strcmp(proto->def.params[i].name, kw) == 0) idx = i;
        if (idx < 0) {
            error_at(C, call->call.kwvals.v[k]->sp, NULL,
                     "%s() got an unexpected keyword argument '%s'", fi->name, kw);
            return NULL;
        }
        if (bound[idx]) {
            error_at(C, call->call.kwvals.v[k]->sp, NULL,
                     "%s() got multiple values for argument '%s'", fi->name, kw);
            return NULL;
        }
        bound[idx] = call->call.kwvals.v[k];
    }
    const Type **types = arena_alloc(&C->arena, sizeof(Type *) * (size_t)(np + 1));
    bool unknown = false;
    uint64_t shapes = 0;
    if (!fi->has_sig) {
        shape_params(proto, &proto->def.body, &shapes);
        cond_params(proto, &proto->def.body, &shapes);
    }
    for (int i = 0; i < np; i++) {
        if (!bound[i]) {
            Node *d = proto->def.params[i].deflt;
            if (!d) {
                error_at(C, call->sp, NULL, "%s() missing required argument '%s'", fi->name,
                         proto->def.params[i].name);
                return NULL;
            }
            if (!d->ty && !type_default(S, d)) return NULL;
            bound[i] = d;
            types[i] = d->ty;
            if (!fi->has_sig && i < 64 && (shapes >> i & 1)) types[i] = literal_arg(C, d, d->ty);
            continue;
        }
        const Type *t = sema_expr(S, bound[i]);
        if (IS_ERR(t)) return NULL;
        if (IS_UNKNOWN(t)) unknown = true;
        else if (!sema_storable(t) && (fi->has_sig || !ty_compile_time(t))) {
            error_at(C, bound[i]->sp, NULL, "cannot pass %s to device function '%s'",
                     ty_name(C, t), fi->name);
            return NULL;
        }
        if (!fi->has_sig && i < 64 && (shapes >> i & 1)) t = literal_arg(C, bound[i], t);
        types[i] = t;
    }
    call->call.bound.v = bound;
    call->call.bound.n = np;
    const FuncSig *sig = NULL;
    if (fi->has_sig && !unknown) {
        sig = best_signature(fi, types, np);
        if (!sig) {
            const FuncSig *s0 = &fi->sigs[0];
            /* Numba's phrase follows, for code that matches on it */
            if (fi->nsigs > 1)
                error_at(C, call->sp, NULL,
                         "no signature of '%s' accepts (%s) (Invalid use of type(%s) with "
                         "parameters (%s))",
                         fi->name, types_text(C, types, np), fi->name, types_text(C, types, np));
            else if (s0->nargs != np)
                error_at(C, call->sp, NULL, "the signature of '%s' has %d arguments but it takes %d",
                         fi->name, s0->nargs, np);
            for (int i = 0; fi->nsigs == 1 && s0->nargs == np && i < np; i++) {
                if (sig_accepts(&s0->args[i], types[i])) continue;
                char want[64];
                kiln_argtype_format(&s0->args[i], want, sizeof want);
                error_at(C, bound[i]->sp, NULL,
                         "argument %d of '%s' is %s, which its signature's %s does not accept",
                         i + 1, fi->name, ty_name(C, types[i]), want);
                break;
            }
            return NULL;
        }
        for (int i = 0; i < np; i++) types[i] = ty_from_argtype(C, &sig->args[i]);
    }
    if (unknown) {
        *ret = &ty_unknown;
        return NULL;
    }
    if (S->stack.n >= KILN_MAX_CALL_DEPTH) {
        error_at(C, call->sp, "call fewer functions from one another, or merge some",
                 "device functions call one another too deeply: more than %d levels "
                 "(KILN_MAX_CALL_DEPTH)",
                 KILN_MAX_CALL_DEPTH);
        return NULL;
    }
    for (int i = 0; i < S->stack.n; i++) {
        FuncSpec *on = S->stack.v[i];
        if (on->fi == fi)
            return recursive_call(S, call, on, types, np, sig, ret);
    }
    FuncSpec *spec = spec_get(S, fi, types, np, false);
    if (!spec) return NULL;
    if (S->final && !C->muted) {
        finalise(S, spec);
        if (spec->failed)
            note_at(C, call->sp,
                    "in the call of '%s' from here\n(Numba: During: resolving callee type: "
                    "type(CUDADispatcher(<function %s>)))",
                    fi->name, fi->name);
    }
    /* the callee's local arrays are inlined here: this thread holds them too */
    FuncSpec *f = S->cur;
    if (spec->local_bytes && f->local_bytes + spec->local_bytes > KILN_MAX_LOCAL_BYTES &&
        f->local_bytes <= KILN_MAX_LOCAL_BYTES && spec->local_bytes <= KILN_MAX_LOCAL_BYTES)
        error_at(C, call->sp, "use a global array passed as an argument, or fewer local arrays",
                 "local arrays are limited to %d KiB per thread in all (KILN_MAX_LOCAL_BYTES); "
                 "with those of '%s', '%s' needs %lld bytes",
                 KILN_MAX_LOCAL_BYTES >> 10, fi->name, f->fi->name,
                 (long long)(f->local_bytes + spec->local_bytes));
    f->local_bytes += spec->local_bytes;
    for (int i = 0; i < np; i++)
        if (spec_writes(spec, i) && passes_memory(types[i]))
            sema_mark_written(S, bound[i]);
    call->callee = spec;
    if (sig && sig->ret.dtype != KILN_NDTYPES && spec->ret->kind == TY_COMPLEX &&
        sig->ret.dtype != KILN_COMPLEX64 && sig->ret.dtype != KILN_COMPLEX128) {
        error_at(C, spec->ret_sp, "return z.real or abs(z), or declare a complex return type",
                 "'%s' returns %s, which its signature's return type %s cannot hold", fi->name,
                 ty_name(C, spec->ret), kiln_dtype_name((kiln_dtype)sig->ret.dtype));
        *ret = &ty_error;
        return NULL;
    }
    if (sig && sig->ret.dtype != KILN_NDTYPES && spec->ret->kind == TY_NONE) {
        error_at(C, fi->proto->def.name_sp, "return a value on every path, or declare void",
                 "'%s' returns nothing, but its signature returns %s", fi->name,
                 kiln_dtype_name((kiln_dtype)sig->ret.dtype));
        *ret = &ty_error;
        return NULL;
    }
    if (sig && sig->ret_void && spec->ret->kind != TY_NONE && spec->ret->kind != TY_ERROR) {
        error_at(C, spec->ret_sp, "return nothing here, or declare the return type in the signature",
                 "'%s' returns %s, but its signature returns void", fi->name,
                 ty_name(C, spec->ret));
        *ret = &ty_error;
        return NULL;
    }
    if (sig && sig->ret.dtype != KILN_NDTYPES && spec->ret->kind != TY_ERROR &&
        !ty_is_scalar(spec->ret)) {
        error_at(C, spec->ret_sp, "return one number, or leave the return type out of the signature",
                 "'%s' returns %s, which its signature's return type %s cannot hold", fi->name,
                 ty_name(C, spec->ret), kiln_dtype_name((kiln_dtype)sig->ret.dtype));
        *ret = &ty_error;
        return NULL;
    }
    if (sig && sig->ret.dtype != KILN_NDTYPES)
        *ret = ty_scalar((kiln_dtype)sig->ret.dtype);
    else
        *ret = spec->ret;
    return spec;
}


int sema_run(Compiler *C, FuncInfo *fi, const Type **args, int nargs, bool is_kernel,
             SemaResult *out) {
    memset(out, 0, sizeof *out);
    if (fi->parse_failed || !fi->proto) return -1;
    Sema *S = arena_alloc(&C->arena, sizeof *S);
    S->C = C;
    S->res = out;
    S->funcs = fi;
    S->rec_low = INT_MAX;
    C->sema = S;
    /* @jit(link=...)'s CUDA C sources come first, before those of the functions called */
    for (int i = 0; C->opts.target == KILN_TARGET_CUDA && i < C->opts.nlinks; i++)
        sema_extern_source(S, C->opts.links[i], C->opts.link_lens[i], true);
    Node *proto = fi->proto;
    if (proto->def.nparams != nargs) {
        error_at(C, proto->def.name_sp, NULL, "'%s' takes %d argument%s but %d were given",
                 fi->name, proto->def.nparams, proto->def.nparams == 1 ? "" : "s", nargs);
        return -1;
    }
    /* a kernel parameter's default is the launch's to fill in (launch.c), as an argument */
    FuncSpec *k = spec_get(S, fi, args, nargs, is_kernel);
    if (!k) return -1;
    finalise(S, k);
    out->kernel = k;
    /* A block has one copy of each function's shared arrays, however often it
     * is called: the sum over the functions the kernel reaches. */
    int64_t shared = 0;
    for (int i = 0; i < out->order.n; i++)
        shared += ((FuncSpec *)out->order.v[i])->shared_bytes;
    if (shared > KILN_MAX_SHARED_BYTES)
        error_at(C, proto->def.name_sp, "use dynamic shared memory: shape 0 and the launch's 4th value",
                 "static shared memory is limited to %d KiB per block (KILN_MAX_SHARED_BYTES); "
                 "the shared arrays of '%s' and its device functions need %lld bytes",
                 KILN_MAX_SHARED_BYTES >> 10, fi->name, (long long)shared);
    return C->nerrors ? -1 : 0;
}

/* ---- inspect_types -------------------------------------------------------------------- */

void sema_dump_types(Compiler *C, const SemaResult *r, Buf *out) {
    for (int i = r->order.n - 1; i >= 0; i--) {
        const FuncSpec *f = r->order.v[i];
        buf_printf(out, "%s %s(", f->is_kernel ? "kernel" : "device function", f->fi->name);
        for (int p = 0; p < f->nparams; p++)
            buf_printf(out, "%s%s: %s", p ? ", " : "", f->psyms[p]->name,
                       ty_name(C, f->params[p]));
        buf_printf(out, ") -> %s\n", ty_name(C, f->ret));
        for (int s = 0; s < f->nsyms; s++) {
            const Sym *y = f->syms[s];
            if (y->param >= 0 && !y->is_local) continue;
            if (strchr(y->name, '.')) continue; /* for_iter.c's loop index: not the user's */
            if (y->web) /* a later web of the name (syms.c), spelled as Numba's SSA names */
                buf_printf(out, "    %s.%d: %s\n", y->name, y->web, ty_name(C, y->ty));
            else
                buf_printf(out, "    %s: %s\n", y->name, ty_name(C, y->ty));
        }
    }
}
