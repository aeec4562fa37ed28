/* sema.c: functions, specialisations, statements and names.
 *
 * See sema.h for the design: one FuncSpec per function and argument types,
 * typed to a fixed point with diagnostics muted, then once more with
 * diagnostics on.  This file drives that, types statements, and turns the
 * resolver's answers into frozen globals.  Expressions are in sema_expr.c.
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

static void collect_target(Sema *S, FuncSpec *f, Node *t) {
    if (t->kind == E_NAME) {
        Sym *s = sym_find(f, t->name.id);
        if (!s) {
            s = sema_sym_new(S, f, t->name.id);
            s->first_assign = UINT32_MAX;
        }
        s->is_local = true;
        s->nassign++;
        if (s->param < 0 && t->sp.off < s->first_assign) s->first_assign = t->sp.off;
    } else if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++) collect_target(S, f, t->tuple.v[i]);
    }
}

static void collect_locals(Sema *S, FuncSpec *f, NodeList *body) {
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
            if (for_iter_needed(n)) for_iter_rewrite(S->C, n);
            collect_target(S, f, n->fors.target);
            collect_locals(S, f, &n->fors.body);
            collect_locals(S, f, &n->fors.orelse);
            break;
        case S_IF:
            for (; elif_of(n); n = elif_of(n)) collect_locals(S, f, &n->ifs.body);
            collect_locals(S, f, &n->ifs.body);
            collect_locals(S, f, &n->ifs.orelse);
            break;
        case S_WHILE:
            collect_locals(S, f, &n->ifs.body);
            collect_locals(S, f, &n->ifs.orelse);
            break;
        default: break;
        }
    }
}

/* ---- globals ----------------------------------------------------------------- */

const NsRef *sema_ns(Sema *S, const char *name, const Intrinsic *in, void *scope) {
    NsRef *r = arena_alloc(&S->C->arena, sizeof *r);
    r->name = arena_strdup(&S->C->arena, name);
    r->intr = in;
    r->scope = scope;
    return r;
}

static const Type *ns_type(Sema *S, const NsRef *ns) {
    Type *t = arena_alloc(&S->C->arena, sizeof *t);
    t->kind = TY_NS;
    t->ns = ns;
    return t;
}

static FuncInfo *funcinfo_for(Sema *S, const kiln_value *kv) {
    for (FuncInfo *fi = S->funcs; fi; fi = fi->next)
        if (fi->scope == kv->scope) return fi;
    FuncInfo *fi = sema_funcinfo(S->C, kv->scope, kv->text, kv->text_len, kv->filename,
                                 kv->first_line);
    fi->is_device = kv->is_device != 0;
    fi->next = S->funcs;
    S->funcs = fi;
    if (kv->signature && *kv->signature) {
        /* one or more signatures, separated by ';' (the Dispatcher joins a list so) */
        int cap = 0;
        for (const char *p = kv->signature; *p;) {
            const char *end = strchr(p, ';');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            SrcFile *sf = arena_alloc(&S->C->arena, sizeof *sf);
            sf->name = arena_printf(&S->C->arena, "<signature of %s>", fi->name ? fi->name : "?");
            sf->text = arena_strndup(&S->C->arena, p, len);
            sf->len = len;
            sf->first_line = 1;
            kiln_argtype args[KILN_MAX_PARAMS];
            FuncSig sig = {NULL, 0, {0}};
            int saved = S->C->muted;
            S->C->muted = 0;
            int n = parse_signature(S->C, sf, &sig.ret, args, KILN_MAX_PARAMS);
            S->C->muted = saved;
            if (n < 0) {
                fi->parse_failed = true;
                break;
            }
            sig.nargs = n;
            sig.args = arena_alloc(&S->C->arena, sizeof(kiln_argtype) * (size_t)(n + 1));
            memcpy(sig.args, args, sizeof(kiln_argtype) * (size_t)n);
            fi->sigs = arena_grow(&S->C->arena, fi->sigs, &cap, fi->nsigs + 1, sizeof(FuncSig));
            fi->sigs[fi->nsigs++] = sig;
            fi->has_sig = true;
            p = end ? end + 1 : p + len;
        }
    }
    return fi;
}

/* The element type of a global array: a scalar, or a record of the layout it names. */
static const Type *global_elem(Compiler *C, const kiln_value *kv) {
    if (kv->record) return ty_record(C, kv->record, (int)kv->dtype - KILN_RECORD0);
    return ty_scalar(kv->dtype);
}

static GVal *convert_value(Sema *S, const kiln_value *kv, const char *dotted, void *scope) {
    Compiler *C = S->C;
    GVal *g = arena_alloc(&C->arena, sizeof *g);
    g->kind = kv->kind;
    switch (kv->kind) {
    case KILN_VAL_MISSING: g->ty = &ty_error; break;
    case KILN_VAL_INT:
        g->ty = &ty_weak_int;
        g->cv.i = kv->v.i;
        break;
    case KILN_VAL_FLOAT:
        g->ty = &ty_weak_float;
        g->cv.f = kv->v.f;
        break;
    case KILN_VAL_BOOL:
        g->ty = ty_scalar(KILN_BOOL);
        g->cv.i = kv->v.i != 0;
        break;
    case KILN_VAL_COMPLEX:
        g->ty = &ty_weak_complex;
        g->cv.f = kv->v.f;
        g->im = kv->im;
        break;
    case KILN_VAL_SCALAR:
        if ((unsigned)kv->dtype >= KILN_NDTYPES) {
            g->kind = KILN_VAL_OTHER;
            g->other = "a scalar of an unknown type";
            g->ty = &ty_error;
            break;
        }
        g->ty = ty_scalar(kv->dtype);
        g->cv.u = kv->v.u;
        if (g->ty->kind == TY_FLOAT || g->ty->kind == TY_COMPLEX) g->cv.f = kv->v.f;
        g->im = kv->im;
        break;
    case KILN_VAL_TUPLE: {
        g->ntuple = kv->ntuple;
        g->tuple = arena_alloc(&C->arena, sizeof(GVal) * (size_t)(kv->ntuple + 1));
        const Type **el = arena_alloc(&C->arena, sizeof(Type *) * (size_t)(kv->ntuple + 1));
        for (int i = 0; i < kv->ntuple; i++) {
            GVal *e = convert_value(S, &kv->tuple[i], dotted, scope);
            /* arrays too: each is its own frozen array (or device array by address) */
            if ((!ty_is_scalar(e->ty) && e->ty->kind != TY_TUPLE && e->ty->kind != TY_ARRAY) ||
                e->ty->kind == TY_COMPLEX) {
                g->kind = KILN_VAL_OTHER;
                g->other = e->ty->kind == TY_COMPLEX
                               ? "a tuple holding a complex number (frozen tuples hold real ones)"
                           : e->kind == KILN_VAL_OTHER
                               ? arena_printf(&C->arena, "a tuple holding %s", e->other)
                               : "a tuple holding something other than numbers and arrays";
                g->ty = &ty_error;
                return g;
            }
            g->tuple[i] = *e;
            el[i] = e->ty;
        }
        g->ty = ty_tuple(C, kv->ntuple, el);
        break;
    }
    case KILN_VAL_NAMESPACE: {
        const Intrinsic *in = kv->name ? intrinsic_lookup(kv->name) : NULL;
        if (!in) {
            g->kind = KILN_VAL_OTHER;
            g->other = arena_printf(&C->arena, "'%s'", kv->name ? kv->name : "?");
            g->ty = &ty_error;
            break;
        }
        g->ns = sema_ns(S, kv->name, in, scope);
        g->ty = in->kind == IK_DTYPE ? ty_dtype(C, (kiln_dtype)in->sub) : ns_type(S, g->ns);
        break;
    }
    case KILN_VAL_MODULE:
        g->ns = sema_ns(S, dotted, NULL, scope);
        if (kv->name && strcmp(kv->name, "enum") == 0) ((NsRef *)g->ns)->by_name = true;
        if (kv->name && strncmp(kv->name, "namedtuple:", 11) == 0)
            sema_namedtuple_class(C, (NsRef *)g->ns, kv->name);
        g->ty = ns_type(S, g->ns);
        break;
    case KILN_VAL_DTYPE:
        if (kv->record) { /* a record type (kiln.from_dtype) or structured dtype */
            Type *t = arena_alloc(&C->arena, sizeof *t);
            t->kind = TY_DTYPE;
            t->dtype = KILN_RECORD0;
            t->rec = kv->record;
            t->recid = (int)kv->dtype - KILN_RECORD0;
            g->ty = t;
            break;
        }
        if ((unsigned)kv->dtype >= KILN_NDTYPES) {
            g->kind = KILN_VAL_OTHER;
            g->other = "a type kiln does not know";
            g->ty = &ty_error;
            break;
        }
        g->ty = ty_dtype(C, kv->dtype);
        break;
    case KILN_VAL_FUNCTION: {
        g->fn = funcinfo_for(S, kv);
        Type *t = arena_alloc(&C->arena, sizeof *t);
        t->kind = TY_FUNC;
        t->fn = g->fn;
        g->ty = t;
        break;
    }
    case KILN_VAL_EXTERN: {
        g->fn = sema_extern_info(S, kv);
        Type *t = arena_alloc(&C->arena, sizeof *t);
        t->kind = TY_FUNC;
        t->fn = g->fn;
        g->ty = t;
        break;
    }
    case KILN_VAL_ARRAY: {
        if (!kv->data && kv->address) {
            /* a global device array, by address.  GPU memory cannot be read by a CPU
             * kernel; the other way round only happens under KILN_TARGET=cpu (host-memory
             * device arrays), where nothing launches on a GPU and CUDA C is only checked
             * (KILN_CHECK_CUDA), so it compiles */
            bool cpu = C->opts.target == KILN_TARGET_CPU;
            bool ok = ((unsigned)kv->dtype < KILN_NDTYPES || kv->record) && kv->ndim >= 0 &&
                      kv->ndim <= KILN_MAX_NDIM && (kv->shape || kv->ndim == 0); /* 0-d too */
            for (int i = 0; ok && i < kv->ndim; i++) ok = kv->shape[i] >= 0;
            if (!ok || (cpu && kv->device >= 0)) {
                g->kind = KILN_VAL_OTHER;
                g->other = !ok ? "a device array kiln cannot read"
                               : "a device array in GPU memory, but this kernel is being "
                                 "compiled for the CPU";
                g->ty = &ty_error;
                break;
            }
            int64_t *shape = arena_alloc(&C->arena, sizeof(int64_t) * KILN_MAX_NDIM);
            memcpy(shape, kv->shape, sizeof(int64_t) * (size_t)kv->ndim);
            g->shape = shape;
            g->address = kv->address;
            g->ty = ty_array(C, global_elem(C, kv), kv->ndim, 'C');
            break;
        }
        /* a global array frozen into the program: its elements are copied here */
        size_t esize = kv->record ? (size_t)kv->record->itemsize
                       : (unsigned)kv->dtype < KILN_NDTYPES ? (size_t)kiln_dtype_size(kv->dtype) : 0;
        size_t bytes = esize;
        bool ok = (esize || kv->record) && kv->ndim >= 1 && kv->ndim <= KILN_MAX_NDIM && kv->shape && kv->data;
        for (int i = 0; ok && i < kv->ndim; i++) {
            if (kv->shape[i] < 0 ||
                (kv->shape[i] && bytes > (size_t)KILN_MAX_CONST_ARRAY_BYTES / (size_t)kv->shape[i]))
                ok = false;
            else
                bytes *= (size_t)kv->shape[i];
        }
        if (!ok || bytes > (size_t)KILN_MAX_CONST_ARRAY_BYTES) {
            g->kind = KILN_VAL_OTHER;
            g->other = arena_printf(&C->arena,
                                    "an array over the %d bytes of a global array captured as a "
                                    "constant (KILN_MAX_CONST_ARRAY_BYTES)",
                                    KILN_MAX_CONST_ARRAY_BYTES);
            g->ty = &ty_error;
            break;
        }
        int64_t *shape = arena_alloc(&C->arena, sizeof(int64_t) * KILN_MAX_NDIM);
        memcpy(shape, kv->shape, sizeof(int64_t) * (size_t)kv->ndim);
        void *data = arena_alloc(&C->arena, bytes ? bytes : 1);
        memcpy(data, kv->data, bytes);
        g->shape = shape;
        g->data = data;
        g->ty = ty_array(C, global_elem(C, kv), kv->ndim, 'C');
        break;
    }
    case KILN_VAL_OTHER:
        /* a type name ('dict'), or a phrase that already says what it is ("a NumPy
         * array of dtype <U1 (...)") */
        if (kv->name && (strncmp(kv->name, "a ", 2) == 0 || strncmp(kv->name, "an ", 3) == 0))
            g->other = arena_strdup(&C->arena, kv->name);
        else
            g->other = arena_printf(&C->arena, "a '%s'", kv->name ? kv->name : "object");
        if (kv->exception) g->exception = arena_strdup(&C->arena, kv->exception);
        g->ty = &ty_error;
        break;
    }
    return g;
}

GVal *sema_resolve(Sema *S, void *scope, const char *dotted, Span sp) {
    for (int i = 0; i < S->nrc; i++)
        if (S->rc[i].scope == scope && strcmp(S->rc[i].name, dotted) == 0) return S->rc[i].v;
    kiln_value kv;
    memset(&kv, 0, sizeof kv);
    GVal *g;
    if (!S->C->resolve || S->C->resolve(S->C->resolve_ud, scope, dotted, &kv) != 0) {
        int saved = S->C->muted;
        S->C->muted = 0;
        error_at(S->C, sp, NULL, "looking up '%s' failed", dotted);
        S->C->muted = saved;
        g = arena_alloc(&S->C->arena, sizeof *g);
        g->kind = KILN_VAL_OTHER;
        g->other = "an object whose lookup failed";
        g->ty = &ty_error;
    } else {
        g = convert_value(S, &kv, dotted, scope);
    }
    S->rc = arena_grow(&S->C->arena, S->rc, &S->caprc, S->nrc + 1, sizeof(RCacheEntry));
    S->rc[S->nrc].scope = scope;
    S->rc[S->nrc].name = arena_strdup(&S->C->arena, dotted);
    S->rc[S->nrc].v = g;
    S->nrc++;
    return g;
}

const Type *sema_global(Sema *S, Node *n, const GVal *g, const char *what) {
    Compiler *C = S->C;
    switch (g->kind) {
    case KILN_VAL_MISSING:
        if (strcmp(what, "print") == 0)
            error_at(C, n->sp, "write results to an array and print them on the host",
                     "print() is not supported in kernels");
        else
            error_at(C, n->sp, NULL,
                     "name '%s' is not defined\n(Numba: NameError: name '%s' is not defined)",
                     what, what);
        return &ty_error;
    case KILN_VAL_COMPLEX: n->gv = g; return g->ty; /* no NF_CONST: ConstVal holds one number */
    case KILN_VAL_INT:
    case KILN_VAL_FLOAT:
    case KILN_VAL_BOOL:
    case KILN_VAL_SCALAR:
        if (g->ty->kind == TY_COMPLEX) {
            n->gv = g;
            return g->ty;
        }
        n->flags |= NF_CONST;
        n->cval = g->cv;
        if (ty_is_int(g->ty) && (!ty_is_signed(g->ty) || g->cv.i >= 0)) n->flags |= NF_NONNEG;
        return g->ty;
    case KILN_VAL_TUPLE: n->gv = g; return g->ty;
    case KILN_VAL_ARRAY: n->gv = g; return g->ty; /* read-only: sema_mark_written */
    case KILN_VAL_NAMESPACE:
    case KILN_VAL_MODULE:
    case KILN_VAL_DTYPE:
    case KILN_VAL_FUNCTION:
    case KILN_VAL_EXTERN: return g->ty;
    case KILN_VAL_OTHER:
        if (strcmp(what, "print") == 0) {
            error_at(C, n->sp, "write results to an array and print them on the host",
                     "print() is not supported in kernels");
            return &ty_error;
        }
        error_at(C, n->sp,
                 "kernels can read ints, floats, bools, NumPy scalars and arrays, tuples of "
                 "numbers and arrays, and kiln functions; pass other values as arguments",
                 /* Numba's phrase in parentheses: code matching its text keeps working */
                 "global '%s' is %s, which kernels cannot use (Untyped global name '%s')", what,
                 g->other, what);
        return &ty_error;
    }
    return &ty_error;
}

void sema_block_feature(Sema *S, Span sp, const char *what) {
    if (!S->res->gpu_only) { /* a CUDA kernel with one does not widen (emit.c) */
        S->res->gpu_only = what;
        S->res->gpu_only_sp = sp;
    }
    S->res->block_mode = true;
}

/* ---- statements ------------------------------------------------------------------ */

static bool storable(const Type *t) {
    if (ty_is_scalar(t) || t->kind == TY_ARRAY || t->kind == TY_RECORD ||
        t->kind == TY_GROUP)
        return true;
    if (t->kind == TY_TUPLE) {
        for (int i = 0; i < t->n; i++)
            if (!storable(t->elems[i])) return false;
        return true;
    }
    return false;
}

/* What a device function without a signature may take besides values, as Numba does:
 * a dtype, a kiln function or an intrinsic (cuda.atomic.add), a module, None (Numba's
 * Omitted or none: `out is None` is then a constant, and its dead branch is not typed).  Each is part of
 * the specialisation's types and has no run-time value (emit.c passes nothing). */
static bool compile_time_arg(const Type *t) {
    return t->kind == TY_DTYPE || t->kind == TY_FUNC || t->kind == TY_NS || t->kind == TY_NONE;
}

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
        if (!sema_const_int(arg, &dims[0])) return t;
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

static const char *not_storable_hint(const Type *t) {
    switch (t->kind) {
    case TY_NONE: return "give the variable a value of its type, such as 0 or 0.0";
    case TY_RANGE: return "use range() directly in a for loop";
    case TY_STR: return "kernels have no strings";
    default: return "use the module, function or type directly where it is needed";
    }
}

static void widen(Sema *S, Sym *s, const Type *t, Span sp) {
    if (IS_UNKNOWN(t)) return;
    if (IS_ERR(t)) return;
    const Type *u = ty_unify(S->C, s->ty, t);
    /* A variable that starts as a Python int (`s = 0`) and then takes a narrower
     * typed integer (`s += x[i]` with int32 x) is int64, as in Numba: NEP 50
     * alone would make it int32, and an accumulator would overflow where
     * Python's integers do not (LANGUAGE.md). */
    if (u && s->ty->kind == TY_INT && s->ty->weak && t->kind == TY_INT && !t->weak &&
        ty_bits(t) < 64)
        u = ty_scalar(KILN_INT64);
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

/* nonneg: the value is a non-negative integer, at most hi */
static void assign_name(Sema *S, Node *t, const Type *vt, bool nonneg, uint64_t hi,
                        uint64_t origins) {
    Sym *s = t->sym ? t->sym : sema_local(S, t->name.id); /* preset: one web of a name */
    ASSERT(s);
    t->sym = s;
    if (IS_ERR(vt)) s->poisoned = true;
    if (!IS_UNKNOWN(vt) && !IS_ERR(vt) && !storable(vt)) {
        error_at(S->C, t->sp, not_storable_hint(vt), "cannot store %s in variable '%s'",
                 ty_name(S->C, vt), s->name);
        t->ty = &ty_error;
        return;
    }
    widen(S, s, vt, t->sp);
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
        assign_name(S, t, vt, nonneg, hi, origins);
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
        if (vt->kind != TY_TUPLE) {
            error_at(S->C, v ? v->sp : t->sp, NULL, "cannot unpack %s into %d variables",
                     ty_name(S->C, vt), t->tuple.n);
            return;
        }
        if (vt->n != t->tuple.n) {
            error_at(S->C, v ? v->sp : t->sp, NULL,
                     "cannot unpack a tuple of %d values into %d variables", vt->n,
                     t->tuple.n);
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

static bool always_returns(const NodeList *l) { return ends_in_return(l, true); }

static void block(Sema *S, NodeList *l);

static const Type *range_type(Sema *S, Node *n) {
    /* n: the call range(...) in a for statement */
    Node *iter = n->fors.iter;
    if (iter->kind != E_CALL) goto bad;
    const Type *ft = sema_expr(S, iter->call.fn);
    if (IS_ERR(ft)) return &ty_error;
    if (ft->kind != TY_NS || !ft->ns->intr || ft->ns->intr->kind != IK_RANGE) goto bad;
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
    bool any_u64 = false;
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
        if (at->dtype == KILN_UINT64 && !at->weak) any_u64 = true;
    }
    if (na == 3) {
        int64_t step;
        if (sema_const_int(iter->call.args.v[2], &step) && step == 0) {
            error_at(S->C, iter->call.args.v[2]->sp, NULL, "range() arg 3 must not be zero");
            return &ty_error;
        }
    }
    lt = any_u64 ? ty_scalar(KILN_UINT64) : ty_scalar(KILN_INT64);
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
static bool optional_of(const Type *t) {
    return ty_is_real(t) && !(t->kind == TY_FLOAT && !t->weak &&
                              (t->dtype == KILN_FLOAT16 || t->dtype == KILN_BFLOAT16));
}

/* Whether f can return a value of type vt next to its other returns so far: a scalar,
 * none, or a tuple of scalars, that unifies with the type they gave. */
static bool returnable_as(Compiler *C, const FuncSpec *f, const Type *vt) {
    if (vt->kind == TY_ARRAY || (vt->kind != TY_NONE && !storable(vt))) return false;
    if (vt->kind == TY_TUPLE)
        for (int i = 0; i < vt->n; i++)
            if (!ty_is_scalar(vt->elems[i])) return false;
    if (IS_UNKNOWN(f->ret)) return true;
    if (vt->kind == TY_NONE || f->ret->kind == TY_NONE) return vt->kind == f->ret->kind;
    return ty_unify(C, f->ret, vt) != NULL;
}

void sema_stmt(Sema *S, Node *n) { stmt(S, n); }

void sema_assign_local(Sema *S, Node *t, const Type *vt) { assign(S, t, NULL, vt, false, 0, 0); }

static void stmt(Sema *S, Node *n) {
    Compiler *C = S->C;
    FuncSpec *f = S->cur;
    switch ((NodeKind)n->kind) {
    case S_EXPR: {
        if (n->expr->kind == E_STR) return; /* docstrings and string comments */
        if (n->uf && sema_ufunc_stmt(S, n)) return;
        const Type *t = sema_expr(S, n->expr);
        /* None, or a bare module, function or type (`math`, `dev`): Python evaluates
         * it and drops it; there is no value to compute, so no code */
        NodeKind k = (NodeKind)n->expr->kind;
        if (k == E_NONE || ((k == E_NAME || k == E_ATTR) && (t->kind == TY_FUNC ||
                                                           t->kind == TY_NS ||
                                                           t->kind == TY_DTYPE))) {
            n->kind = S_PASS;
        } else if (!IS_ERR(t) && !IS_UNKNOWN(t) && t->kind != TY_NONE && !storable(t)) {
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
            assign_name(S, t, rt, nn, nn ? bound_of(n, rt) : 0, 0);
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
            block(S, &n->ifs.body);
            S->nfacts = saved;
            if (!elif_of(n)) break;
            n = elif_of(n);
        }
        block(S, &n->ifs.orelse);
        return;
    case S_WHILE:
        sema_cond(S, n->ifs.cond);
        S->loop_depth++;
        block(S, &n->ifs.body);
        S->loop_depth--;
        block(S, &n->ifs.orelse);
        return;
    case S_FOR: {
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
            assign_name(S, t, lt, nn, hi, 0);
            n->sym = t->sym;
            if (S->final && t->sym && t->sym->maybe_none) /* (a counter is a plain number) */
                error_at(C, t->sp, "count with a variable of its own",
                         "'%s' counts this loop and also holds a result that may be None "
                         "(a function that returns None on some paths)", t->sym->name);
        }
        /* a rewritten body starts with `target = ELEM`, of the iterable that failed */
        NodeList body = n->fors.body;
        if (!iter_ok && body.n > 0) {
            body.v++;
            body.n--;
        }
        S->loop_depth++;
        block(S, &body);
        S->loop_depth--;
        block(S, &n->fors.orelse);
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
        if (vt->kind == TY_ARRAY || (vt->kind != TY_NONE && !storable(vt))) {
            error_at(C, v->sp, "write results to an array argument",
                     "device functions can return scalars and tuples of scalars, not %s",
                     ty_name(C, vt));
            return;
        }
        if (vt->kind == TY_TUPLE)
            for (int i = 0; i < vt->n; i++)
                if (!ty_is_scalar(vt->elems[i])) {
                    error_at(C, v->sp, NULL,
                             "device functions can return tuples of scalars, not %s",
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
            if (!optional_of(val)) {
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
        if (v && sema_maybe_none(v) && !f->ret_none && optional_of(vt)) {
            f->ret_none = true; /* `return r`, r a result that may be None */
            S->changed = true;
        }
        const Type *u = ty_unify(C, f->ret, vt);
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
            sema_raise(S, n);
            return;
        }
        sema_cond(S, n->assrt.test);
        if (n->assrt.msg && n->assrt.msg->kind != E_STR) sema_expr(S, n->assrt.msg);
        return;
    case S_DEF:
        error_at(C, n->sp, NULL, "nested functions are not supported in kernels");
        return;
    default: UNREACHABLE();
    }
}

static void block(Sema *S, NodeList *l) {
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

/* ---- passes and specialisations ------------------------------------------------------ */

static void run_pass(Sema *S, FuncSpec *f) {
    FuncSpec *saved_cur = S->cur;
    int saved_depth = S->loop_depth;
    S->cur = f;
    S->loop_depth = 0;
    f->storage.n = 0;
    f->local_bytes = 0;
    f->shared_bytes = 0;
    f->ntemps = 0;
    block(S, &f->def->def.body);
    if (!f->is_kernel && f->ret->kind != TY_NONE && !IS_UNKNOWN(f->ret) && !f->ret_none &&
        !always_returns(&f->def->def.body)) {
        if (optional_of(f->ret)) {
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

static void analyse(Sema *S, FuncSpec *f) {
    bool saved_changed = S->changed, saved_final = S->final;
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
    if (IS_UNKNOWN(f->ret)) f->ret = f->ret_error ? &ty_error : &ty_none;
    S->stack.n--;
    f->in_progress = false;
    f->analysed = true;
    S->changed = saved_changed;
    S->final = saved_final;
}

static void finalise(Sema *S, FuncSpec *f) {
    if (f->finalised || S->C->muted) return;
    f->finalised = true;
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
    f->def = parse_function(C, &fi->file);
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
    collect_locals(S, f, &f->def->def.body);
    sema_split_webs(S, f); /* a name whose definitions never meet: several variables */
    f->ret = &ty_unknown;
    f->next = fi->specs;
    fi->specs = f;
    fi->nspecs++;
    analyse(S, f);
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
    case E_NONE: /* `out=None`: tested with `is None`, a constant (compile_time_arg) */
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

/* A call of `on`, a function being analysed (recursion, which C and CUDA run with a
 * stack): the same argument types only, since a new specialisation would be analysed
 * inside its own analysis.  The result is the signature's return type, or the type the
 * function's other returns gave it so far (unknown until they have: a later pass takes
 * it; a function whose every return goes through itself never gets one, Numba's
 * runaway recursion).  Array arguments are taken as written, since the callee's writes
 * are not all known yet. */
static FuncSpec *recursive_call(Sema *S, Node *call, FuncSpec *on, const Type **types, int np,
                                const FuncSig *sig, const Type **ret) {
    Compiler *C = S->C;
    bool same = on->nparams == np && !on->is_kernel;
    for (int i = 0; i < np && same; i++) same = ty_equal(on->params[i], types[i]);
    if (!same) {
        error_at(C, call->sp, "give the function an explicit signature, or convert the "
                 "arguments to the types of the outer call",
                 "recursive call of '%s' with other argument types (%s) is not supported in "
                 "kernels", on->fi->name, types_text(C, types, np));
        return NULL;
    }
    on->recursive = true;
    S->rec_calls++;
    for (int i = 0; i < np; i++)
        if (types[i]->kind == TY_ARRAY || types[i]->kind == TY_TUPLE) {
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
        else if (!storable(t) && (fi->has_sig || !compile_time_arg(t))) {
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
        if (spec_writes(spec, i) && (types[i]->kind == TY_ARRAY || types[i]->kind == TY_TUPLE))
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
    if (sig && sig->ret.dtype != KILN_NDTYPES)
        *ret = ty_scalar((kiln_dtype)sig->ret.dtype);
    else
        *ret = spec->ret;
    return spec;
}

FuncInfo *sema_funcinfo(Compiler *C, void *scope, const char *text, size_t len,
                        const char *filename, int first_line) {
    FuncInfo *fi = arena_alloc(&C->arena, sizeof *fi);
    fi->scope = scope;
    fi->file.name = arena_strdup(&C->arena, filename ? filename : "<unknown>");
    fi->file.text = arena_strndup(&C->arena, text ? text : "", text ? len : 0);
    fi->file.len = text ? len : 0;
    fi->file.first_line = first_line > 0 ? first_line : 1;
    int saved = C->muted;
    C->muted = 0;
    fi->proto = parse_function(C, &fi->file);
    C->muted = saved;
    if (!fi->proto) {
        fi->parse_failed = true;
        fi->name = "?";
    } else {
        fi->name = fi->proto->def.name;
    }
    return fi;
}

int sema_run(Compiler *C, FuncInfo *fi, const Type **args, int nargs, bool is_kernel,
             SemaResult *out) {
    memset(out, 0, sizeof *out);
    if (fi->parse_failed || !fi->proto) return -1;
    Sema *S = arena_alloc(&C->arena, sizeof *S);
    S->C = C;
    S->res = out;
    S->funcs = fi;
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
    if (is_kernel)
        for (int i = 0; i < nargs; i++)
            if (proto->def.params[i].deflt) {
                error_at(C, proto->def.params[i].deflt->sp, "pass every argument at launch",
                         "kernel parameters cannot have default values");
                return -1;
            }
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
