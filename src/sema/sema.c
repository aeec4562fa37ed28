/* sema.c: statements and the names of a function.
 *
 * See sema.h for the design: one FuncSpec per function and argument types,
 * typed to a fixed point with diagnostics muted, then once more with
 * diagnostics on (spec.c drives that).  This file collects a function's
 * locals and types its statements: assignments and the widening of a
 * variable's type, returns (Optional ones included), loops, dead branches and
 * the facts conditions give.  Expressions are in sema_expr.c, the resolver's
 * answers (globals) in globals.c.
 */
#include <string.h>

#include "sema_int.h"

/* ---- symbols ------------------------------------------------------------------- */

static Sym *sym_find(FuncSpec *f, const char *name) {
    for (int i = 0; i < f->nsyms; i++)
        if (strcmp(f->syms[i]->name, name) == 0) return f->syms[i];
    return NULL;
}

Sym *sema_local(Sema *S, const char *name) {
    Sym *s = sym_find(S->cur, name);
    return s && (s->is_local || s->param >= 0) ? s : NULL;
}

/* The locals an assignment's target names: assigned there, or, for a refused loop's target
 * (dead), never assigned and quiet where used (the loop's error was reported). */
static void collect_target_as(Sema *S, FuncSpec *f, Node *t, bool dead) {
    if (t->kind == E_NAME) {
        Sym *s = sym_find(f, t->name.id);
        if (!s) {
            s = sema_sym_new(S, f, t->name.id);
            s->first_assign = UINT32_MAX;
        }
        s->is_local = true;
        if (dead) {
            s->poisoned = true;
            return;
        }
        s->nassign++;
        if (s->param < 0 && t->sp.off < s->first_assign) s->first_assign = t->sp.off;
    } else if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++) collect_target_as(S, f, t->tuple.v[i], dead);
    }
}

static void collect_target(Sema *S, FuncSpec *f, Node *t) { collect_target_as(S, f, t, false); }

void sema_collect_locals(Sema *S, FuncSpec *f, NodeList *body) {
    for (int i = 0; i < body->n; i++) {
        Node *n = body->v[i];
        switch (n->kind) {
        case S_ASSIGN:
            for (int j = 0; j < n->assign.targets.n; j++)
                collect_target(S, f, n->assign.targets.v[j]);
            break;
        case S_AUGASSIGN: collect_target(S, f, n->aug.target); break;
        case S_EXPR:
            ufunc_stmt_prepare(S->C, n);
            for (int k = 0; n->uf && k <= n->uf->nin; k++) {
                collect_target(S, f, n->uf->assigns[k]->assign.targets.v[0]);
                if (k < n->uf->nin) collect_target(S, f, n->uf->elem[k]);
            }
            break;
        case S_FOR:
            if (for_iter_needed(n) && for_iter_rewrite(S->C, n) != n) {
                sema_collect_locals(S, f, &n->ifs.body); /* the locals, then the loop */
                break;
            }
            collect_target(S, f, n->fors.target);
            if (n->fors.dead) collect_target_as(S, f, n->fors.dead, true);
            sema_collect_locals(S, f, &n->fors.body);
            sema_collect_locals(S, f, &n->fors.orelse);
            break;
        case S_IF:
            for (; elif_of(n); n = elif_of(n)) sema_collect_locals(S, f, &n->ifs.body);
            sema_collect_locals(S, f, &n->ifs.body);
            sema_collect_locals(S, f, &n->ifs.orelse);
            break;
        case S_WHILE:
            sema_collect_locals(S, f, &n->ifs.body);
            sema_collect_locals(S, f, &n->ifs.orelse);
            break;
        default: break;
        }
    }
}

void sema_spin_point(Sema *S, const Node *n) {
    if (S->in_loop == 0 || (n && n == S->discarded)) return;
    S->res->spin = true; /* a thread may wait in this loop for another: fibers that yield */
    S->res->block_mode = true;
}

void sema_block_feature(Sema *S, Span sp, const char *what) {
    if (!S->res->gpu_only) { /* a CUDA kernel with one does not widen (emit.c) */
        S->res->gpu_only = what;
        S->res->gpu_only_sp = sp;
    }
    S->res->block_mode = true;
}

/* ---- statements ------------------------------------------------------------------ */

bool sema_storable(const Type *t) {
    if (ty_is_scalar(t) || t->kind == TY_ARRAY || t->kind == TY_RECORD ||
        t->kind == TY_GROUP)
        return true;
    if (t->kind == TY_TUPLE) {
        for (int i = 0; i < t->n; i++)
            if (!sema_storable(t->elems[i])) return false;
        return true;
    }
    return false;
}


static const char *not_storable_hint(const Type *t) {
    switch (t->kind) {
    case TY_NONE: return "give the variable a value of its type, such as 0 or 0.0";
    case TY_RANGE: return "use range() directly in a for loop";
    case TY_STR: return "kernels have no string variables: compare the constant where it is, "
                        "or pass it to a device function";
    default: return "use the module, function or type directly where it is needed";
    }
}

/* ty_unify of the type a variable (or a function's returns) had and a new value's, vt (v:
 * its expression, or NULL), where a Python int meets a typed integer narrower than 64
 * bits: int64, as in Numba, so that no value wraps to the typed width.
 * - A Python int first (`s = 0`), then a typed integer (`s += x[i]` with int32 x): the
 *   earlier values are not known here, and an accumulator would overflow where Python's
 *   integers do not (LANGUAGE.md).
 * - A typed integer first (`w = x8[i]`), then a Python int that may not fit it (`w = 1000`,
 *   a counter, a parameter given a Python int): sema_hold_weak_int.
 * Tuples element by element. */
static const Type *unify_held(Compiler *C, const Type *old, const Type *vt, const Node *v) {
    const Type *u = ty_unify(C, old, vt);
    if (!u) return NULL;
    if (u->kind == TY_TUPLE && old->kind == TY_TUPLE && vt->kind == TY_TUPLE &&
        old->n == u->n && vt->n == u->n) {
        const Type **el = arena_alloc(&C->arena, sizeof(Type *) * (size_t)(u->n ? u->n : 1));
        bool changed = false;
        for (int i = 0; i < u->n; i++) {
            const Node *vi = v && v->kind == E_TUPLE && v->tuple.n == u->n ? v->tuple.v[i] : NULL;
            el[i] = unify_held(C, old->elems[i], vt->elems[i], vi);
            if (!el[i]) return NULL;
            changed |= !ty_equal(el[i], u->elems[i]);
        }
        if (!changed) return u;
        if (u->tname) {
            Type *t = (Type *)ty_named_tuple(C, u->n, el, u->tname, u->fields);
            t->vec = u->vec;
            return t;
        }
        return ty_tuple(C, u->n, el);
    }
    if (old->kind != TY_INT || vt->kind != TY_INT || old->weak == vt->weak) return u;
    if (old->weak) return ty_bits(vt) < 64 ? ty_scalar(KILN_INT64) : u;
    return v ? sema_hold_weak_int(v, vt, u) : ty_bits(old) < 64 ? ty_scalar(KILN_INT64) : u;
}

/* v: the value's expression, or NULL */
static void widen(Sema *S, Sym *s, const Type *t, const Node *v, Span sp) {
    if (IS_UNKNOWN(t)) return;
    if (IS_ERR(t)) return;
    const Type *u = unify_held(S->C, s->ty, t, v);
    if (!u) {
        error_at(S->C, sp, "use a different variable for the new value",
                 "variable '%s' is %s (assigned at line %d) and cannot also hold %s", s->name,
                 ty_name(S->C, s->ty), s->def_sp.line, ty_name(S->C, t));
        return;
    }
    if (!ty_equal(u, s->ty)) {
        if (IS_UNKNOWN(s->ty)) s->def_sp = sp;
        s->ty = u;
        s->change_sp = sp;
        S->changed = true;
    }
}

static void assign(Sema *S, Node *t, Node *v, const Type *vt, bool nonneg, uint64_t hi,
                   uint64_t origins);

/* The values a Python int variable may hold: the constants assigned to it, or any
 * (sema_weak_int_range). */
static void weak_range(Sema *S, Sym *s, const Node *v, const Type *vt) {
    if (!s->ty->weak || s->ty->kind != TY_INT || s->wk_any) return;
    if (!v || !sema_is_weak_int_const(v, vt)) {
        s->wk_any = true;
        S->changed = true;
        return;
    }
    int64_t c = v->cval.i;
    if (!s->wk_set) {
        s->wk_set = true;
        s->wk_lo = s->wk_hi = c;
        S->changed = true;
    } else if (c < s->wk_lo || c > s->wk_hi) {
        s->wk_lo = MIN(s->wk_lo, c);
        s->wk_hi = MAX(s->wk_hi, c);
        S->changed = true;
    }
}

/* nonneg: the value is a non-negative integer, at most hi; v the value's expression,
 * or NULL */
static void assign_name(Sema *S, Node *t, const Node *v, const Type *vt, bool nonneg,
                        uint64_t hi, uint64_t origins) {
    Sym *s = t->sym ? t->sym : sema_local(S, t->name.id); /* preset: one web of a name */
    ASSERT(s);
    t->sym = s;
    if (IS_ERR(vt)) s->poisoned = true;
    if (vt->kind == TY_STR && vt->lit && !IS_ERR(s->ty)) {
        /* a string constant (strings.c): the variable holds that one text; no code */
        if (IS_UNKNOWN(s->ty)) {
            s->ty = vt;
            s->def_sp = t->sp;
            S->changed = true;
        } else if (!ty_equal(s->ty, vt)) {
            error_at(S->C, t->sp, "use a variable per string, or compare where it is assigned",
                     "variable '%s' is given %s and %s: a string variable holds one constant "
                     "(kernels have no string values)", s->name, ty_name(S->C, s->ty),
                     ty_name(S->C, vt));
            t->ty = &ty_error;
            s->poisoned = true;
            return;
        }
        t->ty = s->ty;
        return;
    }
    if (!IS_UNKNOWN(vt) && !IS_ERR(vt) && !sema_storable(vt)) {
        error_at(S->C, t->sp, not_storable_hint(vt), "cannot store %s in variable '%s'",
                 ty_name(S->C, vt), s->name);
        t->ty = &ty_error;
        s->poisoned = true; /* its uses stay quiet */
        return;
    }
    widen(S, s, vt, v, t->sp);
    weak_range(S, s, v, vt);
    /* a value past the variable's type wraps when stored (bounds.c) */
    if (nonneg && ty_is_int(s->ty) && hi > bound_tymax(s->ty)) nonneg = false;
    if (!nonneg && !s->maybe_neg && ty_is_int(vt)) {
        s->maybe_neg = true;
        S->changed = true;
    }
    if (nonneg && (ty_is_int(vt) || vt->kind == TY_BOOL)) bound_assign(S, s, hi);
    if ((s->origins | origins) != s->origins) {
        s->origins |= origins;
        S->changed = true;
    }
    t->ty = s->ty;
}

/* The names of target t (a name, or a tuple of them) after an error in what they were
 * to be given: poisoned, so that their uses report nothing more. */
static void poison_names(Sema *S, Node *t) {
    if (t->kind == E_NAME) assign_name(S, t, NULL, &ty_error, false, 0, 0);
    else if (t->kind == E_TUPLE)
        for (int i = 0; i < t->tuple.n; i++) poison_names(S, t->tuple.v[i]);
}

/* r.f as an assignment's target: the field's type (the record's array is written), NULL
 * after an error (reported here unless already reported). */
static const Type *record_target(Sema *S, Node *t) {
    const Type *bt = sema_expr(S, t->attr.base);
    if (IS_ERR(bt) || IS_UNKNOWN(bt)) return NULL;
    if (bt->kind != TY_RECORD) {
        error_at(S->C, t->sp, "write to an array element instead",
                 "cannot assign to an attribute in a kernel");
        return NULL;
    }
    const Type *et = sema_expr(S, t);
    t->ty = et;
    if (IS_ERR(et)) return NULL;
    sema_mark_written(S, t->attr.base);
    return et;
}

static void assign(Sema *S, Node *t, Node *v, const Type *vt, bool nonneg, uint64_t hi,
                   uint64_t origins) {
    switch (t->kind) {
    case E_NAME: {
        assign_name(S, t, v, vt, nonneg, hi, origins);
        /* `N = 100` and nothing else assigns N: N is a constant (shapes may use it) */
        int64_t c;
        Sym *s = t->sym;
        if (s && v && !s->maybe_none && sema_maybe_none(v)) {
            s->maybe_none = true;
            S->changed = true;
        }
        if (s && s->param < 0 && s->nassign == 1 && v && sema_const_int(v, &c) &&
            ty_is_int(s->ty)) {
            s->has_cint = true;
            s->cint = c;
        }
        if (s && s->param < 0 && s->nassign == 1 && v && v->kind == E_CALL && v->intr &&
            (v->intr->kind == IK_LOCAL_ARRAY || v->intr->kind == IK_SHARED_ARRAY))
            s->storage = v;
        return;
    }
    case E_SUBSCRIPT: {
        const Type *et = sema_subscript(S, t, true);
        if (IS_ERR(et) || IS_UNKNOWN(et) || IS_ERR(vt) || IS_UNKNOWN(vt)) return;
        sema_check_store(S, et, vt, v, v ? v->sp : t->sp);
        return;
    }
    case E_TUPLE: {
        if (IS_ERR(vt) || IS_UNKNOWN(vt)) {
            for (int i = 0; i < t->tuple.n; i++) assign(S, t->tuple.v[i], NULL, vt, false, 0, 0);
            return;
        }
        if (vt->kind != TY_TUPLE || vt->n != t->tuple.n) {
            if (vt->kind != TY_TUPLE)
                error_at(S->C, v ? v->sp : t->sp, NULL, "cannot unpack %s into %d variables",
                         ty_name(S->C, vt), t->tuple.n);
            else
                error_at(S->C, v ? v->sp : t->sp, NULL,
                         "cannot unpack a tuple of %d values into %d variables", vt->n,
                         t->tuple.n);
            /* the targets stay quiet where they are used (the error is said) */
            for (int i = 0; i < t->tuple.n; i++) assign(S, t->tuple.v[i], NULL, &ty_error, false, 0, 0);
            return;
        }
        t->ty = vt;
        for (int i = 0; i < t->tuple.n; i++) {
            Node *ev = v && v->kind == E_TUPLE ? v->tuple.v[i] : NULL;
            uint64_t h = 0;
            bool nn = ev ? bound_nonneg(ev, vt->elems[i]) : bound_elem(v, i, &h);
            if (ev && nn) h = bound_of(ev, vt->elems[i]);
            uint64_t o = ev ? sema_origins(S, ev) : (v ? sema_origins(S, v) : 0);
            assign(S, t->tuple.v[i], ev, vt->elems[i], nn, h, o);
        }
        return;
    }
    case E_ATTR: {
        const Type *et = record_target(S, t);
        if (!et || IS_ERR(vt) || IS_UNKNOWN(vt)) return;
        if (et->kind == TY_ARRAY && et->chars) { /* a string field: a string constant */
            sema_check_store(S, et, vt, v, v ? v->sp : t->sp);
            return;
        }
        if (et->kind == TY_ARRAY) { /* a subarray field: copied element by element */
            if (vt->kind != TY_ARRAY || vt->ndim != et->ndim || !ty_is_scalar(vt->elem)) {
                error_at(S->C, v ? v->sp : t->sp, NULL,
                         "cannot store %s in the %dd subarray field '%s'", ty_name(S->C, vt),
                         et->ndim, t->attr.attr);
                return;
            }
            sema_check_store(S, et->elem, vt->elem, NULL, v ? v->sp : t->sp);
            return;
        }
        sema_check_store(S, et, vt, v, v ? v->sp : t->sp);
        return;
    }
    default: error_at(S->C, t->sp, NULL, "cannot assign to this expression"); return;
    }
}

/* ---- dead branches ------------------------------------------------------------------- */

/* The truth of a condition known when compiling (a literal, a frozen global, a device
 * function's literal bool argument, arithmetic of those): 1 or 0, or -1 when it is not
 * known.  A complex constant is never NF_CONST. */
static int const_truth(const Node *cond) {
    if (!(cond->flags & NF_CONST) || (cond->flags & NF_PROVISIONAL) || !cond->ty) return -1;
    if (cond->ty->kind == TY_FLOAT) return cond->cval.f != 0;
    if (cond->ty->kind == TY_BOOL || cond->ty->kind == TY_INT) return cond->cval.i != 0;
    return -1;
}

/* A branch that never runs, replaced by one `pass` (passes after sema expect a statement
 * where Python has one): its statements are never typed, so what only it does (a value of
 * another type, an index of the wrong type) is no error, as in Numba, which prunes dead
 * branches of constant conditions before typing. */
static NodeList pass_list(Compiler *C, NodeList dead) {
    if (dead.n == 0) return dead;
    if (dead.n == 1 && dead.v[0]->kind == S_PASS) return dead;
    NodeList l = {0};
    int cap = 0;
    nodelist_push(C, &l, node_new(C, S_PASS, dead.v[0]->sp), &cap);
    return l;
}

/* Whether block l never reaches its end: its last statement returns or raises, or is an
 * if whose live arms all do; with loops, also a `while True:` (which leaves only by
 * return, or by break, which the check at a function's end accepts). */
static bool ends_in_return(const NodeList *l, bool loops) {
    if (l->n == 0) return false;
    const Node *last = l->v[l->n - 1];
    if (last->kind == S_RETURN) return true;
    if (last->kind == S_ASSERT && last->assrt.exc) return true; /* raise */
    if (last->kind == S_IF) { /* an arm whose condition is known decides (dead branches) */
        for (; elif_of(last); last = elif_of(last)) {
            int live = const_truth(last->ifs.cond);
            if (live == 1) return ends_in_return(&last->ifs.body, loops);
            if (live != 0 && !ends_in_return(&last->ifs.body, loops)) return false;
        }
        int live = const_truth(last->ifs.cond);
        if (live == 1) return ends_in_return(&last->ifs.body, loops);
        if (live == 0) return ends_in_return(&last->ifs.orelse, loops);
        return ends_in_return(&last->ifs.body, loops) && ends_in_return(&last->ifs.orelse, loops);
    }
    if (loops && last->kind == S_WHILE && last->ifs.cond->kind == E_BOOL && last->ifs.cond->blit)
        return true;
    return false;
}

bool sema_always_returns(const NodeList *l) { return ends_in_return(l, true); }

static const Type *range_type(Sema *S, Node *n) {
    /* n: the call range(...) in a for statement */
    Node *iter = n->fors.iter;
    if (iter->kind != E_CALL) goto bad;
    const Type *ft = sema_expr(S, iter->call.fn);
    if (IS_ERR(ft)) return &ty_error;
    if (ft->kind != TY_NS || !ft->ns->intr || ft->ns->intr->kind != IK_RANGE) {
        if (iter->call.fn->kind == E_NAME && strcmp(iter->call.fn->name.id, "range") == 0) {
            error_at(S->C, iter->call.fn->sp, "rename the variable: the loop needs the builtin",
                     "'range' here is %s, a variable of the kernel that hides the builtin "
                     "range()", ty_name(S->C, ft));
            return &ty_error;
        }
        goto bad;
    }
    iter->intr = ft->ns->intr;
    iter->ty = &ty_range;
    if (iter->call.kwvals.n > 0) {
        error_at(S->C, iter->sp, NULL, "range() takes no keyword arguments");
        return &ty_error;
    }
    int star = sema_unpack_star(S, iter); /* range(*t) */
    if (star <= 0) return star < 0 ? &ty_unknown : &ty_error;
    int na = iter->call.args.n;
    if (na < 1 || na > 3) {
        error_at(S->C, iter->sp, NULL, "range expected 1 to 3 arguments, got %d", na);
        return &ty_error;
    }
    const Type *lt = &ty_weak_int;
    bool any_u64 = false, any_signed = false;
    for (int i = 0; i < na; i++) {
        Node *a = iter->call.args.v[i];
        const Type *at = sema_expr(S, a);
        if (IS_ERR(at)) return &ty_error;
        if (IS_UNKNOWN(at)) return &ty_unknown;
        if (!(at->kind == TY_INT || at->kind == TY_BOOL)) {
            error_at(S->C, a->sp, "convert it with int(...)",
                     "range() arguments must be integers, not %s", ty_name(S->C, at));
            return &ty_error;
        }
        int64_t v;
        if (at->dtype == KILN_UINT64 && !at->weak) any_u64 = true;
        else if (ty_is_signed(at) && !(at->weak && sema_const_int(a, &v) && v >= 0))
            any_signed = true; /* a signed type, or a Python int that may be negative */
    }
    if (na == 3) {
        int64_t step;
        if (sema_const_int(iter->call.args.v[2], &step) && step == 0) {
            error_at(S->C, iter->call.args.v[2]->sp, NULL, "range() arg 3 must not be zero");
            return &ty_error;
        }
    }
    /* uint64 bounds count in uint64 unless a bound may be negative: then int64, as
     * Numba's range of mixed bounds does (a uint64 value above 2**63-1 wraps there) */
    lt = any_u64 && !any_signed ? ty_scalar(KILN_UINT64) : ty_scalar(KILN_INT64);
    iter->opty = lt;
    return lt;
bad:
    error_at(S->C, iter->sp, "loop over indices: for i in range(len(a)):",
             "kernels can only loop over range(...)");
    return &ty_error;
}

/* A variable whose value cannot change inside the if's body: a local assigned
 * once, or a parameter never assigned. */
static const Sym *fact_sym(Sema *S, const Node *n) {
    if (n->kind != E_NAME || !n->sym) return NULL;
    const Sym *s = n->sym;
    if (!ty_is_int(s->ty) || !ty_is_signed(s->ty)) return NULL;
    if (s->param >= 0 ? s->is_local : s->nassign != 1) return NULL;
    return s;
}

static void add_fact(Sema *S, const Sym *s, int64_t lo) {
    if (S->nfacts < (int)COUNTOF(S->facts)) {
        S->facts[S->nfacts].sym = s;
        S->facts[S->nfacts].lo = lo;
        S->nfacts++;
    }
}

static void fact_pair(Sema *S, Node *l, int op, Node *r) {
    int64_t c;
    const Sym *s;
    if ((s = fact_sym(S, l)) && sema_const_int(r, &c) && c > INT64_MIN + 1 && c < INT64_MAX) {
        if (op == C_GT) add_fact(S, s, c + 1);
        else if (op == C_GE || op == C_EQ) add_fact(S, s, c);
    } else if ((s = fact_sym(S, r)) && sema_const_int(l, &c) && c < INT64_MAX) {
        if (op == C_LT) add_fact(S, s, c + 1);
        else if (op == C_LE || op == C_EQ) add_fact(S, s, c);
    }
}

static void add_facts(Sema *S, Node *c) {
    if (c->kind == E_BOOLOP && c->op == BO_AND) {
        add_facts(S, c->bin.l);
        add_facts(S, c->bin.r);
    } else if (c->kind == E_COMPARE) {
        for (int i = 0; i + 1 < c->cmp.operands.n; i++)
            fact_pair(S, c->cmp.operands.v[i], c->cmp.ops[i], c->cmp.operands.v[i + 1]);
    }
}

bool sema_fact_lo(Sema *S, const Node *n, int64_t *lo) {
    if (n->kind != E_NAME || !n->sym) return false;
    bool found = false;
    for (int i = 0; i < S->nfacts; i++)
        if (S->facts[i].sym == n->sym && (!found || S->facts[i].lo > *lo)) {
            *lo = S->facts[i].lo;
            found = true;
        }
    return found;
}

static void stmt(Sema *S, Node *n);

/* Whether a function may return t on some paths and None on others (Numba's Optional):
 * a real number or bool, not a half-precision one (a struct in C) or a complex. */
bool sema_optional_of(const Type *t) {
    return ty_is_real(t) && !(t->kind == TY_FLOAT && !t->weak &&
                              (t->dtype == KILN_FLOAT16 || t->dtype == KILN_BFLOAT16));
}

/* Whether f can return a value of type vt next to its other returns so far: a scalar,
 * none, or a tuple of scalars, that unifies with the type they gave. */
static bool returnable_as(Compiler *C, const FuncSpec *f, const Type *vt) {
    if (vt->kind == TY_ARRAY || (vt->kind != TY_NONE && !sema_storable(vt))) return false;
    if (vt->kind == TY_TUPLE)
        for (int i = 0; i < vt->n; i++)
            if (!ty_is_scalar(vt->elems[i])) return false;
    if (IS_UNKNOWN(f->ret)) return true;
    if (vt->kind == TY_NONE || f->ret->kind == TY_NONE) return vt->kind == f->ret->kind;
    return ty_unify(C, f->ret, vt) != NULL;
}

void sema_stmt(Sema *S, Node *n) { stmt(S, n); }

void sema_assign_local(Sema *S, Node *t, const Type *vt) { assign(S, t, NULL, vt, false, 0, 0); }

/* Whether every leaf of a tuple (nested tuples too) is a scalar. */
static bool scalar_leaves(const Type *t) {
    for (int i = 0; i < t->n; i++)
        if (!(ty_is_scalar(t->elems[i]) ||
              (t->elems[i]->kind == TY_TUPLE && !t->elems[i]->vec && scalar_leaves(t->elems[i]))))
            return false;
    return true;
}

/* An intrinsic that is a function (kiln.syncthreads, math.sqrt), not a namespace, a
 * value (threadIdx, warpsize, math.pi) or a type (kiln.float32, int, a namedtuple). */
static bool names_function(const Type *t) {
    if (t->kind != TY_NS || !t->ns || !t->ns->intr) return false;
    switch ((IntrKind)t->ns->intr->kind) {
    case IK_NS: case IK_SREG: case IK_DIM3: case IK_WARPSIZE: case IK_LANEID: case IK_CONST:
    case IK_DTYPE: case IK_INT: case IK_FLOAT: case IK_BOOL: case IK_COMPLEX:
    case IK_NAMEDTUPLE: case IK_VECTOR:
        return false;
    default:
        return true;
    }
}

static void stmt(Sema *S, Node *n) {
    Compiler *C = S->C;
    FuncSpec *f = S->cur;
    switch ((NodeKind)n->kind) {
    case S_EXPR: {
        if (n->expr->kind == E_STR) return; /* docstrings and string comments */
        if (n->uf && sema_ufunc_stmt(S, n)) return;
        const Node *was = S->discarded;
        S->discarded = n->expr;
        const Type *t = sema_expr(S, n->expr);
        S->discarded = was;
        /* None, or a bare module or type (`math`, `np.float32`): Python evaluates
         * it and drops it; there is no value to compute, so no code */
        NodeKind k = (NodeKind)n->expr->kind;
        if ((k == E_NAME || k == E_ATTR) && (t->kind == TY_FUNC || names_function(t))) {
            /* `cuda.syncthreads` without the call: Python evaluates the name and drops
             * it, so the barrier (or the device function's effect) silently never
             * happens; no kernel means that */
            error_at(C, n->expr->sp, "call it: add the parentheses (and its arguments), e.g. cuda.syncthreads()",
                     "this names a function without calling it, which does nothing");
            return;
        }
        if (k == E_NONE || ((k == E_NAME || k == E_ATTR) && (t->kind == TY_FUNC ||
                                                           t->kind == TY_NS ||
                                                           t->kind == TY_DTYPE))) {
            n->kind = S_PASS;
        } else if (!IS_ERR(t) && !IS_UNKNOWN(t) && t->kind != TY_NONE && !sema_storable(t)) {
            error_at(C, n->expr->sp, "remove the statement, or compute the values you need",
                     "this expression is %s, which has no value in a kernel", ty_name(C, t));
        }
        return;
    }
    case S_PASS: return;
    case S_ASSIGN: {
        Node *v = n->assign.value;
        /* a string constant stored into elements: checked there (a string field) */
        bool into = v->kind == E_STR;
        for (int i = 0; into && i < n->assign.targets.n; i++)
            into = n->assign.targets.v[i]->kind == E_SUBSCRIPT ||
                   n->assign.targets.v[i]->kind == E_ATTR;
        const Type *vt = into ? (v->ty = &ty_str) : sema_expr(S, v);
        bool nn = !IS_ERR(vt) && !IS_UNKNOWN(vt) && bound_nonneg(v, vt);
        uint64_t hi = nn ? bound_of(v, vt) : 0;
        uint64_t o = sema_origins(S, v);
        for (int i = 0; i < n->assign.targets.n; i++)
            assign(S, n->assign.targets.v[i], v, vt, nn, hi, o);
        return;
    }
    case S_AUGASSIGN: {
        Node *t = n->aug.target;
        const Type *tt;
        if (t->kind == E_ATTR) {
            tt = record_target(S, t);
            if (!tt) return;
            if (tt->kind == TY_ARRAY) {
                error_at(C, t->sp, "update the elements one by one",
                         "augmented assignment to a subarray field is not supported");
                return;
            }
        } else if (t->kind == E_SUBSCRIPT) {
            tt = sema_subscript(S, t, true);
            if (t->kind == E_ATTR) tt = t->ty; /* r['f'] += v: rewritten into r.f */
        } else {
            tt = sema_expr(S, t);
        }
        const Type *vt = sema_expr(S, n->aug.value);
        const Type *opty = NULL;
        const Type *rt = sema_binop(S, n, (BinOp)n->op, t, n->aug.value, tt, vt, &opty);
        n->ty = rt;
        n->opty = opty;
        if (t->kind == E_NAME) {
            bool nn = !IS_ERR(rt) && !IS_UNKNOWN(rt) && bound_nonneg(n, rt);
            assign_name(S, t, NULL, rt, nn, nn ? bound_of(n, rt) : 0, 0);
        } else if (!IS_ERR(rt) && !IS_UNKNOWN(rt) && !IS_ERR(tt) && !IS_UNKNOWN(tt)) {
            sema_check_store(S, tt, rt, NULL, n->sp);
        }
        return;
    }
    case S_IF:
        for (;;) {
            sema_cond(S, n->ifs.cond);
            int live = const_truth(n->ifs.cond);
            if (live == 0) { /* never runs: not typed, as Numba prunes it (dead_branch) */
                n->ifs.body = pass_list(C, n->ifs.body);
            } else if (live == 1) { /* always runs: the elifs and else never do */
                n->ifs.orelse = pass_list(C, n->ifs.orelse);
            }
            int saved = S->nfacts;
            add_facts(S, n->ifs.cond);
            sema_block(S, &n->ifs.body);
            S->nfacts = saved;
            if (!elif_of(n)) break;
            n = elif_of(n);
        }
        sema_block(S, &n->ifs.orelse);
        return;
    case S_WHILE: {
        S->res->uses_loops = true;
        S->in_loop++;
        const Node *outer = S->loop;
        S->loop = n;
        S->loop_depth++; /* the condition runs again after the body's assignments */
        sema_cond(S, n->ifs.cond);
        /* `while N > 0:` with a frozen N = 0: the body never runs (the else does) */
        if (const_truth(n->ifs.cond) == 0) n->ifs.body = pass_list(C, n->ifs.body);
        sema_block(S, &n->ifs.body);
        S->loop_depth--;
        S->loop = outer;
        S->in_loop--;
        sema_block(S, &n->ifs.orelse);
        return;
    }
    case S_FOR: {
        S->res->uses_loops = true;
        /* a rewritten loop's iterable is checked first: its own error, not len()'s */
        bool iter_ok = for_iter_check(S, n);
        const Type *lt = iter_ok ? range_type(S, n) : &ty_error;
        Node *t = n->fors.target;
        if (t->kind != E_NAME) {
            error_at(C, t->sp, "unpack inside the loop body",
                     "a for loop over range() needs a single variable");
        } else {
            uint64_t hi = 0;
            bool nn = !IS_ERR(lt) && !IS_UNKNOWN(lt) && bound_range(n->fors.iter, &hi);
            assign_name(S, t, NULL, lt, nn, hi, 0);
            n->sym = t->sym;
            if (S->final && t->sym && t->sym->maybe_none) /* (a counter is a plain number) */
                error_at(C, t->sp, "count with a variable of its own",
                         "'%s' counts this loop and also holds a result that may be None "
                         "(a function that returns None on some paths)", t->sym->name);
        }
        /* a rewritten body starts with `target = ELEM`, of the iterable that failed */
        NodeList body = n->fors.body;
        if (!iter_ok && body.n > 0) {
            /* its names are poisoned, not unassigned: their uses say nothing more */
            if (body.v[0]->kind == S_ASSIGN)
                for (int i = 0; i < body.v[0]->assign.targets.n; i++)
                    poison_names(S, body.v[0]->assign.targets.v[i]);
            body.v++;
            body.n--;
        }
        S->loop_depth++;
        S->in_loop++;
        const Node *outer = S->loop;
        S->loop = n;
        sema_block(S, &body);
        S->loop = outer;
        S->in_loop--;
        S->loop_depth--;
        sema_block(S, &n->fors.orelse);
        return;
    }
    case S_BREAK:
    case S_CONTINUE:
        if (S->loop_depth == 0)
            error_at(C, n->sp, NULL, "'%s' outside loop", n->kind == S_BREAK ? "break" : "continue");
        return;
    case S_RETURN: {
        Node *v = n->ret.value;
        int rec_before = S->rec_calls;
        const Type *vt = v ? sema_expr(S, v) : &ty_none;
        if (S->rec_calls != rec_before && !f->is_kernel && !IS_ERR(vt) && !IS_UNKNOWN(vt) &&
            !returnable_as(C, f, vt)) {
            error_at(C, v->sp, "give every return the same type",
                     "'%s' returns %s here, which its other returns (%s) cannot take: the "
                     "value grows with each call (Return type of recursive function does "
                     "not converge)",
                     f->fi->name, ty_name(C, vt), ty_name(C, f->ret));
            f->ret_error = true;
            return;
        }
        if (f->is_kernel) {
            if (vt->kind != TY_NONE && !IS_ERR(vt))
                error_at(C, v->sp, "write results to an array argument",
                         "kernels cannot return a value");
            return;
        }
        if (IS_ERR(vt)) f->ret_error = true;
        if (IS_ERR(vt) || IS_UNKNOWN(vt)) return;
        if (vt->kind == TY_ARRAY || (vt->kind != TY_NONE && !sema_storable(vt))) {
            error_at(C, v->sp, "write results to an array argument",
                     "device functions can return scalars and tuples of scalars, not %s",
                     ty_name(C, vt));
            f->ret_error = true; /* its callers stay quiet */
            return;
        }
        if (vt->kind == TY_TUPLE && !scalar_leaves(vt)) {
            error_at(C, v->sp, "write the arrays' results to an argument",
                     "device functions can return tuples of scalars (nested too), not %s",
                     ty_name(C, vt));
            return;
        }
        if (IS_UNKNOWN(f->ret)) {
            f->ret = vt;
            f->ret_sp = n->sp;
            S->changed = true;
            return;
        }
        if (vt->kind == TY_NONE || f->ret->kind == TY_NONE) {
            if (vt->kind == f->ret->kind) return;
            /* None on some paths and a number on others: Numba's Optional of the number */
            const Type *val = vt->kind == TY_NONE ? f->ret : vt;
            if (!sema_optional_of(val)) {
                error_at(C, n->sp, "return a value on every path",
                         "function '%s' returns %s at line %d but nothing here: a function "
                         "that returns None on some paths returns a number on the others",
                         f->fi->name, ty_name(C, val), f->ret_sp.line);
                return;
            }
            if (vt->kind != TY_NONE) { /* the first number after returns of None */
                f->ret = vt;
                f->ret_sp = n->sp;
                S->changed = true;
            }
            if (!f->ret_none) {
                f->ret_none = true;
                S->changed = true;
            }
            return;
        }
        if (v && sema_maybe_none(v) && !f->ret_none && sema_optional_of(vt)) {
            f->ret_none = true; /* `return r`, r a result that may be None */
            S->changed = true;
        }
        /* a narrower typed integer and a Python int among the returns: as a variable's */
        const Type *u = unify_held(C, f->ret, vt, v);
        if (!u) {
            error_at(C, n->sp, NULL, "function '%s' returns %s at line %d but %s here",
                     f->fi->name, ty_name(C, f->ret), f->ret_sp.line, ty_name(C, vt));
            return;
        }
        if (!ty_equal(u, f->ret)) {
            f->ret = u;
            S->changed = true;
        }
        return;
    }
    case S_ASSERT:
        if (n->assrt.exc) {
            if (!(n->assrt.exc->flags & NF_UNBOUND)) sema_raise(S, n); /* else unbound.c's */
            return;
        }
        sema_cond(S, n->assrt.test);
        if (n->assrt.msg && n->assrt.msg->kind != E_STR) sema_expr(S, n->assrt.msg);
        sema_assert_site(S, n);
        return;
    case S_DEF:
        if (nested_is_def(S->cur, n)) return; /* a device function of its own (nested.c) */
        error_at(C, n->sp, NULL, "nested functions are not supported in kernels");
        return;
    default: UNREACHABLE();
    }
}

void sema_block(Sema *S, NodeList *l) {
    S->depth++; /* a level of nesting for the bound across calls (sema_expr.c) */
    for (int i = 0; i < l->n; i++) {
        stmt(S, l->v[i]);
        /* what follows a statement that always returns (or raises) never runs: Numba
         * drops it before typing, so it is never typed here either */
        NodeList one = {&l->v[i], 1};
        if (i + 1 < l->n && ends_in_return(&one, false)) l->n = i + 1;
    }
    S->depth--;
}
