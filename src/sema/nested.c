/* nested.c: functions defined inside a kernel or device function.
 *
 *     def k(out, x):                        def inner(v, s):     (a device function)
 *         s = 2.0                               return v * s
 *         def inner(v):            ==>      def k(out, x):
 *             return v * s                      s = 2.0
 *         out[0] = inner(x[0])                  out[0] = inner(x[0], s=s)
 *
 * Python's closure reads a captured variable when the inner function runs, so
 * passing the variable's value at each call is the same thing.  The variables a
 * nested function captures are the names its body reads that are neither its
 * parameters nor assigned in it, and that the enclosing function assigns (or takes
 * as parameters); everything else it reads is a global, resolved as the enclosing
 * function's globals are.  Each nested def becomes a FuncInfo of its enclosing
 * FuncInfo (one per def, so its specialisations are shared by the enclosing
 * function's), whose def is a template with the captured names appended as
 * parameters; spec_get copies the template for each specialisation.  The calls in
 * the enclosing body are rewritten before typing, the captured names appended as
 * keyword arguments (after any defaults) and the callee marked NF_NESTED_CALL; the name anywhere else (passed
 * as a value, called from another nested function) is an error, since its
 * captured variables could not follow it.
 */
#include <string.h>

#include "sema_int.h"

/* A set of names, by pointer into the arena (names are compared by text). */
typedef struct {
    const char **v;
    int n, cap;
} Names;

static bool has(const Names *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0) return true;
    return false;
}

static void add(Compiler *C, Names *s, const char *name) {
    if (has(s, name)) return;
    s->v = arena_grow(&C->arena, s->v, &s->cap, s->n + 1, sizeof *s->v);
    s->v[s->n++] = name;
}

/* The names an assignment's target binds (a, (a, b)); subscripts and attributes bind
 * none. */
static void bound_by(Compiler *C, const Node *t, Names *out) {
    if (!t) return;
    if (t->kind == E_NAME) add(C, out, t->name.id);
    else if (t->kind == E_TUPLE)
        for (int i = 0; i < t->tuple.n; i++) bound_by(C, t->tuple.v[i], out);
}

/* Calls fn on each subexpression of the expression n. */
static void each_child(Node *n, void (*fn)(void *ctx, Node *c), void *ctx) {
    switch ((NodeKind)n->kind) {
    case E_BINOP:
    case E_BOOLOP:
        fn(ctx, n->bin.l);
        fn(ctx, n->bin.r);
        break;
    case E_UNARY: fn(ctx, n->un.x); break;
    case E_COMPARE:
        for (int i = 0; i < n->cmp.operands.n; i++) fn(ctx, n->cmp.operands.v[i]);
        break;
    case E_IFEXP:
        fn(ctx, n->ifexp.cond);
        fn(ctx, n->ifexp.then);
        fn(ctx, n->ifexp.orelse);
        break;
    case E_CALL:
        fn(ctx, n->call.fn);
        for (int i = 0; i < n->call.args.n; i++) fn(ctx, n->call.args.v[i]);
        for (int i = 0; i < n->call.kwvals.n; i++) fn(ctx, n->call.kwvals.v[i]);
        break;
    case E_SUBSCRIPT:
        fn(ctx, n->sub.base);
        for (int i = 0; i < n->sub.idx.n; i++) fn(ctx, n->sub.idx.v[i]);
        break;
    case E_ATTR: fn(ctx, n->attr.base); break;
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++) fn(ctx, n->tuple.v[i]);
        break;
    case E_SLICE:
        if (n->slice.lo) fn(ctx, n->slice.lo);
        if (n->slice.hi) fn(ctx, n->slice.hi);
        if (n->slice.step) fn(ctx, n->slice.step);
        break;
    default: break;
    }
}

typedef struct {
    Compiler *C;
    Names *reads;
} Walk;

static void walk_child(void *ctx, Node *c);

/* The names an expression reads. */
static void walk_expr(Compiler *C, const Node *n, Names *reads) {
    if (!n) return;
    if (n->kind == E_NAME) {
        add(C, reads, n->name.id);
        return;
    }
    Walk w = {C, reads};
    each_child((Node *)n, walk_child, &w);
}

static void walk_child(void *ctx, Node *c) {
    Walk *w = ctx;
    walk_expr(w->C, c, w->reads);
}

static void def_free_reads(Compiler *C, const Node *d, Names *reads);

/* The names a body reads and the names it binds; a nested def binds its name, and the
 * names it reads without binding them are read by the body too. */
static void walk_body(Compiler *C, const NodeList *body, Names *reads, Names *binds) {
    for (int i = 0; i < body->n; i++) {
        const Node *n = body->v[i];
        switch ((NodeKind)n->kind) {
        case S_EXPR: walk_expr(C, n->expr, reads); break;
        case S_ASSIGN:
            walk_expr(C, n->assign.value, reads);
            for (int j = 0; j < n->assign.targets.n; j++) {
                const Node *t = n->assign.targets.v[j];
                bound_by(C, t, binds);
                if (t->kind != E_NAME && t->kind != E_TUPLE) walk_expr(C, t, reads);
            }
            break;
        case S_AUGASSIGN:
            walk_expr(C, n->aug.value, reads);
            walk_expr(C, n->aug.target, reads);
            bound_by(C, n->aug.target, binds);
            break;
        case S_IF:
        case S_WHILE:
            walk_expr(C, n->ifs.cond, reads);
            walk_body(C, &n->ifs.body, reads, binds);
            walk_body(C, &n->ifs.orelse, reads, binds);
            break;
        case S_FOR:
            walk_expr(C, n->fors.iter, reads);
            bound_by(C, n->fors.target, binds);
            walk_body(C, &n->fors.body, reads, binds);
            walk_body(C, &n->fors.orelse, reads, binds);
            break;
        case S_RETURN: walk_expr(C, n->ret.value, reads); break;
        case S_ASSERT:
            walk_expr(C, n->assrt.test, reads);
            walk_expr(C, n->assrt.msg, reads);
            walk_expr(C, n->assrt.exc, reads);
            break;
        case S_DEF: /* binds its name; what it reads from here on is read here too */
            add(C, binds, n->def.name);
            def_free_reads(C, n, reads);
            break;
        default: break;
        }
    }
}

/* The names the def d reads that it does not bind (its parameters, its assignments),
 * added to reads: a def inside d that reads the kernel's `a` makes d capture it too. */
static void def_free_reads(Compiler *C, const Node *d, Names *reads) {
    Names r = {0}, b = {0};
    for (int i = 0; i < d->def.nparams; i++) add(C, &b, d->def.params[i].name);
    walk_body(C, &d->def.body, &r, &b);
    for (int i = 0; i < r.n; i++)
        if (!has(&b, r.v[i])) add(C, reads, r.v[i]);
}

/* The nested function of fi defined by the def at source offset off, or NULL. */
static NestedFn *find(FuncInfo *fi, const char *name, uint32_t off) {
    for (int i = 0; i < fi->nnested; i++)
        if (fi->nested[i].off == off && strcmp(fi->nested[i].name, name) == 0)
            return &fi->nested[i];
    return NULL;
}

/* Makes the FuncInfo of the def d, nested in f's function (whose parameters and
 * assigned names are outer). */
static NestedFn *make(Sema *S, FuncSpec *f, const Node *d, const Names *outer,
                      const Names *defnames) {
    Compiler *C = S->C;
    FuncInfo *fi = f->fi;
    Names reads = {0}, binds = {0};
    for (int i = 0; i < d->def.nparams; i++) add(C, &binds, d->def.params[i].name);
    walk_body(C, &d->def.body, &reads, &binds);
    for (int i = 0; i < d->def.nparams; i++) /* defaults are read where the def is */
        walk_expr(C, d->def.params[i].deflt, &reads);
    Names free = {0};
    for (int i = 0; i < reads.n; i++)
        if (!has(&binds, reads.v[i]) && has(outer, reads.v[i]) && !has(defnames, reads.v[i]))
            add(C, &free, reads.v[i]);

    Node *t = sema_clone_tree(C, d); /* the template, with the captured names appended */
    int np = d->def.nparams + free.n;
    Param *ps = arena_alloc(&C->arena, sizeof(Param) * (size_t)(np ? np : 1));
    for (int i = 0; i < d->def.nparams; i++) ps[i] = d->def.params[i];
    for (int i = 0; i < free.n; i++) {
        ps[d->def.nparams + i].name = free.v[i];
        ps[d->def.nparams + i].sp = d->def.name_sp;
        ps[d->def.nparams + i].deflt = NULL;
    }
    t->def.params = ps;
    t->def.nparams = np;

    FuncInfo *in = arena_alloc(&C->arena, sizeof *in);
    in->scope = fi->scope;
    in->file = fi->file;
    in->name = d->def.name;
    in->is_device = true;
    in->proto = t;
    in->inner_def = t;
    in->outer = fi;

    fi->nested = arena_grow(&C->arena, fi->nested, &fi->capnested, fi->nnested + 1,
                            sizeof *fi->nested);
    NestedFn *nf = &fi->nested[fi->nnested++];
    memset(nf, 0, sizeof *nf);
    nf->name = d->def.name;
    nf->off = d->sp.off;
    nf->fi = in;
    nf->free = free.v;
    nf->nfree = free.n;
    nf->nparams = d->def.nparams;
    Type *ty = arena_alloc(&C->arena, sizeof *ty);
    ty->kind = TY_FUNC;
    ty->fn = in;
    nf->ty = ty;
    return nf;
}

/* The nested defs of a body (in any block, not inside other nested defs). */
static void collect_defs(Compiler *C, NodeList *body, PtrVec *out) {
    for (int i = 0; i < body->n; i++) {
        Node *n = body->v[i];
        switch ((NodeKind)n->kind) {
        case S_DEF: vec_push(&C->arena, out, n); break;
        case S_IF:
        case S_WHILE:
            collect_defs(C, &n->ifs.body, out);
            collect_defs(C, &n->ifs.orelse, out);
            break;
        case S_FOR:
            collect_defs(C, &n->fors.body, out);
            collect_defs(C, &n->fors.orelse, out);
            break;
        default: break;
        }
    }
}

typedef struct {
    Sema *S;
    FuncSpec *f;
} Rewrite;

static void rewrite_child(void *ctx, Node *c);

/* Appends the captured names to the calls of nested functions in an expression. */
static void rewrite_expr(Sema *S, FuncSpec *f, Node *n) {
    if (!n) return;
    Rewrite r = {S, f};
    each_child(n, rewrite_child, &r);
    if (n->kind != E_CALL || n->call.fn->kind != E_NAME) return;
    Node *fn = n->call.fn;
    const NestedFn *nf = NULL;
    for (int i = 0; i < f->fi->nnested && !nf; i++)
        if (strcmp(f->fi->nested[i].name, fn->name.id) == 0) nf = &f->fi->nested[i];
    if (!nf || (fn->flags & NF_NESTED_CALL)) return;
    fn->flags |= NF_NESTED_CALL;
    /* Python's errors, before the captured names join the call */
    if (n->sp.off < nf->off) {
        error_at(S->C, fn->sp, "define it before the call",
                 "local variable '%s' is used before it is assigned (its def comes later)",
                 fn->name.id);
        return;
    }
    if (n->call.args.n > nf->nparams) {
        error_at(S->C, n->sp, NULL, "%s() takes %d positional argument%s but %d were given",
                 fn->name.id, nf->nparams, nf->nparams == 1 ? "" : "s", n->call.args.n);
        return;
    }
    for (int i = 0; i < n->call.kwvals.n; i++)
        for (int j = 0; j < nf->nfree; j++)
            if (strcmp(n->call.kwnames[i], nf->free[j]) == 0) {
                error_at(S->C, n->call.kwvals.v[i]->sp, NULL,
                         "%s() got an unexpected keyword argument '%s'", fn->name.id,
                         nf->free[j]);
                return;
            }
    /* by keyword: after the parameters' defaults, whatever the call leaves to them */
    int cap = n->call.kwvals.n, ncap = n->call.kwvals.n, nk = n->call.kwvals.n;
    for (int i = 0; i < nf->nfree; i++) {
        Node *a = node_new(S->C, E_NAME, n->sp);
        a->name.id = nf->free[i];
        nodelist_push(S->C, &n->call.kwvals, a, &cap);
        n->call.kwnames = arena_grow(&S->C->arena, n->call.kwnames, &ncap, nk + 1,
                                     sizeof *n->call.kwnames);
        n->call.kwnames[nk++] = nf->free[i];
    }
}

static void rewrite_child(void *ctx, Node *c) {
    Rewrite *r = ctx;
    rewrite_expr(r->S, r->f, c);
}

static void rewrite_body(Sema *S, FuncSpec *f, NodeList *body) {
    for (int i = 0; i < body->n; i++) {
        Node *n = body->v[i];
        switch ((NodeKind)n->kind) {
        case S_EXPR: rewrite_expr(S, f, n->expr); break;
        case S_ASSIGN:
            rewrite_expr(S, f, n->assign.value);
            for (int j = 0; j < n->assign.targets.n; j++)
                rewrite_expr(S, f, n->assign.targets.v[j]);
            break;
        case S_AUGASSIGN:
            rewrite_expr(S, f, n->aug.value);
            rewrite_expr(S, f, n->aug.target);
            break;
        case S_IF:
        case S_WHILE:
            rewrite_expr(S, f, n->ifs.cond);
            rewrite_body(S, f, &n->ifs.body);
            rewrite_body(S, f, &n->ifs.orelse);
            break;
        case S_FOR:
            rewrite_expr(S, f, n->fors.iter);
            rewrite_body(S, f, &n->fors.body);
            rewrite_body(S, f, &n->fors.orelse);
            break;
        case S_RETURN: rewrite_expr(S, f, n->ret.value); break;
        case S_ASSERT:
            rewrite_expr(S, f, n->assrt.test);
            rewrite_expr(S, f, n->assrt.msg);
            rewrite_expr(S, f, n->assrt.exc);
            break;
        default: break; /* S_DEF: the nested function's own body is its own */
        }
    }
}

void nested_prepare(Sema *S, FuncSpec *f) {
    Compiler *C = S->C;
    PtrVec defs = {0};
    collect_defs(C, &f->def->def.body, &defs);
    if (!defs.n) return;
    Names outer = {0}, reads = {0}, defnames = {0};
    for (int i = 0; i < f->def->def.nparams; i++) add(C, &outer, f->def->def.params[i].name);
    walk_body(C, &f->def->def.body, &reads, &outer);
    for (int i = 0; i < defs.n; i++) add(C, &defnames, ((const Node *)defs.v[i])->def.name);
    for (int i = 0; i < defs.n; i++) {
        const Node *d = defs.v[i];
        bool twice = false, copy = false; /* literal_unroll's copies share the offset */
        for (int j = 0; j < i && !twice; j++) {
            const Node *e = defs.v[j];
            if (strcmp(e->def.name, d->def.name) != 0) continue;
            if (e->sp.off == d->sp.off) copy = true;
            else twice = true;
        }
        if (copy && !twice) continue;
        if (twice) { /* the first def serves the calls; this one is only reported */
            error_at(C, d->def.name_sp, "give each nested function its own name",
                     "function '%s' is defined twice in '%s' (kiln compiles one def per name)",
                     d->def.name, f->fi->name);
            continue;
        }
        if (!find(f->fi, d->def.name, d->sp.off)) make(S, f, d, &outer, &defnames);
    }
    rewrite_body(S, f, &f->def->def.body);
}

const Type *nested_value(Sema *S, Node *n) {
    FuncInfo *fi = S->cur->fi;
    for (int i = 0; i < fi->nnested; i++) {
        if (strcmp(fi->nested[i].name, n->name.id) != 0) continue;
        if (n->flags & NF_NESTED_CALL) return fi->nested[i].ty;
        error_at(S->C, n->sp, "call it where it is defined: kiln passes its captured variables "
                 "at each call",
                 "the nested function '%s' can only be called, not used as a value",
                 n->name.id);
        return &ty_error;
    }
    /* itself, or a function nested beside it: its captured variables are not here */
    for (const FuncInfo *o = fi->outer; o; o = o->outer)
        for (int i = 0; i < o->nnested; i++)
            if (strcmp(o->nested[i].name, n->name.id) == 0) {
                error_at(S->C, n->sp,
                         "define it at module level with @kiln.jit(device=True) and call it",
                         "the nested function '%s' can be called only by '%s', the function "
                         "it is defined in", n->name.id, o->name);
                return &ty_error;
            }
    return NULL;
}

bool nested_is_def(const FuncSpec *f, const Node *d) {
    for (int i = 0; i < f->fi->nnested; i++) /* (a second def of a name: reported already) */
        if (strcmp(f->fi->nested[i].name, d->def.name) == 0) return true;
    return false;
}
