/* fuse.c: kiln.fuse's lowering, the expressions: typed as NumPy types arrays.
 *
 * The fused function is parsed by the kernel front end and walked once,
 * statement by statement (fuse_stmt.c); each expression becomes a typed tree
 * (fuse.h) here.  Typing follows NumPy 2 for arrays: NEP 50
 * promotion (ty_promote; Python scalars are weak), the dtype of each ufunc's
 * loop (int16 into np.exp is float32, int8 would be float16, which kiln.fuse
 * does not take: kernels have float16, fusion does not yet), bool arithmetic (+ is or, * is and, - is refused), true division
 * of integers to float64, and the reductions' accumulators (a sum of int32 is
 * int64, a mean of ints float64).  Shapes follow broadcasting, counted from
 * the right: a node knows its number of dimensions and which have extent 1
 * (from the specialisation), so the kernel indexes an extent-1 dimension with
 * 0 and never needs a broadcast view.
 *
 * Everything that cannot become one kernel is an error at the user's source,
 * never a fallback: loops, ifs, subscripts, unknown functions, an axis other
 * than None or the last, a reduction of a reduction, a reduced value combined
 * with unreduced arrays, outputs of different shapes.
 */
#include <stdlib.h>
#include <string.h>

#include "sema/fuse_int.h"

static FNode *err_null(void) { return NULL; }
#define ERR(sp, hint, ...) (error_at(F->C, (sp), (hint), __VA_ARGS__), err_null())


/* ---- names ------------------------------------------------------------------- */

static FNode *lookup_local(Fuse *F, const char *name) {
    for (int i = F->nenv - 1; i >= 0; i--)
        if (strcmp(F->env[i].name, name) == 0) return F->env[i].v;
    return NULL;
}

void fuse_bind(Fuse *F, const char *name, FNode *v, int obj) {
    F->env = arena_grow(&F->C->arena, F->env, &F->capenv, F->nenv + 1, sizeof *F->env);
    F->env[F->nenv].name = name;
    F->env[F->nenv].v = v;
    F->env[F->nenv].obj = obj ? obj : ++F->nobj;
    F->nenv++;
}

int fuse_obj_of(Fuse *F, const char *name) {
    for (int i = F->nenv - 1; i >= 0; i--)
        if (strcmp(F->env[i].name, name) == 0) return F->env[i].obj;
    for (int i = 0; i < F->npnames; i++)
        if (strcmp(F->pnames[i], name) == 0) return -(i + 1);
    F->pnames = arena_grow(&F->C->arena, F->pnames, &F->cappnames, F->npnames + 1,
                           sizeof *F->pnames);
    F->pnames[F->npnames++] = name;
    return -F->npnames;
}

/* The dotted path of a name or attribute chain (np.random.rand), or NULL. */
static const char *dotted(Fuse *F, const Node *n) {
    if (n->kind == E_NAME) return n->name.id;
    if (n->kind != E_ATTR) return NULL;
    const char *b = dotted(F, n->attr.base);
    return b ? arena_printf(&F->C->arena, "%s.%s", b, n->attr.attr) : NULL;
}

/* What a global path names: a value through the resolver, with the head of a
 * known namespace turned into a canonical name (np.exp -> "numpy.exp"). */
static bool resolve(Fuse *F, const Node *n, const char *path, kiln_value *kv,
                    const char **canon) {
    *canon = NULL;
    memset(kv, 0, sizeof *kv);
    char head[256];
    size_t hl = strcspn(path, ".");
    if (hl >= sizeof head) hl = sizeof head - 1;
    memcpy(head, path, hl);
    head[hl] = 0;
    if (!F->C->resolve || F->C->resolve(F->C->resolve_ud, F->scope, head, kv) != 0) {
        error_at(F->C, n->sp, NULL, "looking up '%s' failed", head);
        return false;
    }
    if (kv->kind == KILN_VAL_NAMESPACE) {
        *canon = path[hl] ? arena_printf(&F->C->arena, "%s%s", kv->name, path + hl)
                          : arena_strdup(&F->C->arena, kv->name);
        return true;
    }
    if (kv->kind == KILN_VAL_MODULE && path[hl]) {
        memset(kv, 0, sizeof *kv);
        if (F->C->resolve(F->C->resolve_ud, F->scope, path, kv) != 0) {
            error_at(F->C, n->sp, NULL, "looking up '%s' failed", path);
            return false;
        }
        if (kv->kind == KILN_VAL_NAMESPACE) *canon = arena_strdup(&F->C->arena, kv->name);
        return true;
    }
    if (path[hl]) {
        error_at(F->C, n->sp, NULL, "kiln.fuse cannot look up '%s'", path);
        return false;
    }
    return true;
}

/* A frozen global value as a constant node. */
static FNode *global_value(Fuse *F, const Node *n, const char *path, const kiln_value *kv) {
    switch (kv->kind) {
    case KILN_VAL_INT:
        return fuse_constant(F, n->sp, &ty_weak_int,
                        arena_printf(&F->C->arena, kv->v.i < 0 ? "(%lld)" : "%lld",
                                     (long long)kv->v.i));
    case KILN_VAL_FLOAT: return fuse_constant(F, n->sp, &ty_weak_float, fuse_float_text(F, kv->v.f));
    case KILN_VAL_BOOL:
        return fuse_constant(F, n->sp, ty_scalar(KILN_BOOL), kv->v.i ? "True" : "False");
    case KILN_VAL_COMPLEX:
        return ERR(n->sp, "write the loop as a @kiln.jit kernel, which takes complex values",
                   "'%s' is complex: kiln.fuse does not fuse complex values yet", path);
    case KILN_VAL_SCALAR: {
        const Type *t = ty_scalar(kv->dtype);
        if (t->kind == TY_COMPLEX)
            return ERR(n->sp, "write the loop as a @kiln.jit kernel, which takes complex values",
                       "'%s' is complex: kiln.fuse does not fuse complex values yet", path);
        const char *v = t->kind == TY_FLOAT ? fuse_float_text(F, kv->v.f)
                        : t->kind == TY_BOOL ? (kv->v.i ? "True" : "False")
                        : ty_is_signed(t) ? arena_printf(&F->C->arena, "(%lld)", (long long)kv->v.i)
                                          : arena_printf(&F->C->arena, "%llu",
                                                         (unsigned long long)kv->v.u);
        return fuse_constant(F, n->sp, t,
                        arena_printf(&F->C->arena, "kiln.%s(%s)", ty_name(F->C, t), v));
    }
    case KILN_VAL_MISSING: return ERR(n->sp, NULL, "name '%s' is not defined", path);
    default:
        return ERR(n->sp, "pass it as an argument",
                   "'%s' is %s, which kiln.fuse cannot use as a value", path,
                   kv->kind == KILN_VAL_OTHER && kv->name ? kv->name : "not a number");
    }
}

/* ---- expressions --------------------------------------------------------------- */


static FNode *un(Fuse *F, const Node *n, int op, FNode *x) {
    FNode *r = fuse_new(F, FN_UN, n->sp);
    r->op = (uint8_t)op;
    r->a = x;
    fuse_combine(F, r, x, NULL);
    if (op == U_NOT)
        return ERR(n->sp, "use ~x (np.logical_not) for arrays",
                   "'not' asks for one truth value; on an array NumPy raises ValueError");
    if (x->py && op == U_INVERT && x->t->kind == TY_FLOAT)
        return ERR(n->sp, NULL, "bad operand type for unary ~: 'float' (Python's TypeError)");
    if (x->py) return fuse_python_op(r, op, x, NULL, false);
    if (fuse_is_bool(x->t) && op != U_INVERT)
        return ERR(n->sp, "use ~x for a logical not", "NumPy does not support %s on bool",
                   op == U_NEG ? "unary -" : "unary +");
    if (op == U_INVERT && x->t->kind == TY_FLOAT)
        return ERR(n->sp, NULL, "'~' is not supported for %s in NumPy", fuse_type_name(x->t));
    r->t = r->opty = x->t;
    return r;
}

FNode *fuse_bin(Fuse *F, const Node *n, int op, FNode *a, FNode *b) {
    static const char *const sym[] = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^"};
    FNode *r = fuse_new(F, FN_BIN, n->sp);
    r->op = (uint8_t)op;
    r->a = a;
    r->b = b;
    if (!fuse_combine(F, r, a, b)) return NULL;
    if (a->py && b->py)
        return fuse_python_divides(F, n, op, a, b) ? fuse_python_op(r, op, a, b, false) : NULL;
    const Type *t = fuse_promote(F, a, b);
    if (!t) return NULL;
    bool both_bool = fuse_is_bool(a->t) && fuse_is_bool(b->t);
    switch (op) {
    case B_SUB:
        if (both_bool)
            return ERR(n->sp, "use ^ (bitwise_xor) or np.logical_xor",
                       "NumPy does not support - on two bool arrays");
        break;
    case B_DIV:
        if (t->kind != TY_FLOAT) t = ty_scalar(KILN_FLOAT64);
        break;
    case B_FLOORDIV:
    case B_MOD:
    case B_POW:
    case B_LSHIFT:
    case B_RSHIFT:
        if (both_bool) t = ty_scalar(KILN_INT8);
        if (op == B_POW && (ty_is_int(t) || fuse_is_bool(t))) {
            int64_t e;
            bool big = false;
            if (fuse_py_int(b, &e, &big) && !big && e < 0)
                return ERR(n->sp, "use a float base, e.g. x.astype(np.float64) ** -1",
                           "Integers to negative integer powers are not allowed (NumPy's "
                           "ValueError)");
        }
        if (op >= B_LSHIFT && t->kind == TY_FLOAT)
            return ERR(n->sp, NULL, "NumPy does not support %s on %s and %s", sym[op],
                       fuse_type_name(a->t), fuse_type_name(b->t));
        break;
    case B_AND:
    case B_OR:
    case B_XOR:
        if (t->kind == TY_FLOAT)
            return ERR(n->sp, NULL, "NumPy does not support %s on %s and %s", sym[op],
                       fuse_type_name(a->t), fuse_type_name(b->t));
        break;
    default: break;
    }
    r->t = r->opty = t;
    return r;
}

static const char *const red_names[] = {"sum", "prod", "max", "min", "mean"};

/* np.sum(x, axis, keepdims) and x.sum(axis, keepdims): which reduction a name is. */
static int red_of(const char *name) {
    static const char *const alias[][2] = {{"sum", "sum"},   {"prod", "prod"}, {"max", "max"},
                                           {"amax", "max"},  {"min", "min"},   {"amin", "min"},
                                           {"mean", "mean"}, {"product", "prod"}};
    for (size_t i = 0; i < COUNTOF(alias); i++)
        if (strcmp(name, alias[i][0]) == 0)
            for (int r = 0; r < 5; r++)
                if (strcmp(alias[i][1], red_names[r]) == 0) return r;
    return -1;
}

static const Type *red_acc(int op, const Type *t) {
    if (op == FR_MAX || op == FR_MIN) return t;
    if (op == FR_MEAN) return t->kind == TY_FLOAT ? t : ty_scalar(KILN_FLOAT64);
    if (t->kind == TY_FLOAT) return t;
    if (fuse_is_bool(t) || ty_is_signed(t)) return ty_scalar(KILN_INT64);
    return ty_scalar(KILN_UINT64);
}

/* A reduction of x; posargs after x and the keywords give axis and keepdims. */
static FNode *reduction(Fuse *F, const Node *n, int op, FNode *x, const Node *const *pos,
                        int npos) {
    const Node *axis = npos > 0 ? pos[0] : NULL, *keep = NULL;
    if (npos > 1)
        return ERR(pos[1]->sp, "write axis= and keepdims= only",
                   "kiln.fuse takes no dtype or out argument for np.%s", red_names[op]);
    for (int i = 0; i < n->call.kwvals.n; i++) {
        const char *k = n->call.kwnames[i];
        if (strcmp(k, "axis") == 0) axis = n->call.kwvals.v[i];
        else if (strcmp(k, "keepdims") == 0) keep = n->call.kwvals.v[i];
        else
            return ERR(n->call.kwvals.v[i]->sp, "write axis= and keepdims= only",
                       "kiln.fuse does not take %s= for np.%s", k, red_names[op]);
    }
    if (!x) return NULL;
    if (x->level == FL_POST)
        return ERR(n->sp, "reduce the array once", "kiln.fuse cannot reduce a reduced value");
    bool rows = false;
    if (axis && axis->kind == E_TUPLE) {
        /* NumPy's tuple of axes: one axis as itself, every axis as None */
        int na = axis->tuple.n, nd = x->ndim;
        if (na == 1) {
            axis = axis->tuple.v[0];
        } else {
            uint64_t seen = 0;
            bool all = na == nd && nd > 0 && nd <= 64;
            for (int i = 0; i < na && all; i++) {
                const Node *e = axis->tuple.v[i];
                bool neg = e->kind == E_UNARY && e->op == U_NEG && e->un.x->kind == E_INT;
                const Node *lit = neg ? e->un.x : e;
                int64_t v = lit->kind == E_INT ? (neg ? -(int64_t)lit->ilit.v : (int64_t)lit->ilit.v) : nd;
                if (v < 0) v += nd;
                all = lit->kind == E_INT && v >= 0 && v < nd && !((seen >> v) & 1);
                if (all) seen |= UINT64_C(1) << v;
            }
            if (!all)
                return ERR(axis->sp, "write axis=None or axis=-1",
                           "kiln.fuse reduces over all axes or the last one; a tuple of axes "
                           "must name one axis or each axis once");
            axis = NULL;
        }
    }
    if (axis && axis->kind != E_NONE) {
        int64_t v = 0;
        bool neg = axis->kind == E_UNARY && axis->op == U_NEG && axis->un.x->kind == E_INT;
        const Node *lit = neg ? axis->un.x : axis;
        if (lit->kind != E_INT)
            return ERR(axis->sp, "write axis=-1 or axis=None",
                       "kiln.fuse needs the axis as a literal");
        v = neg ? -(int64_t)lit->ilit.v : (int64_t)lit->ilit.v;
        /* NumPy's ufunc reductions take axis 0 or -1 of a 0-d value as all axes (its one
         * element); np.mean checks the axis first and raises */
        bool zero_d = x->ndim == 0 && op != FR_MEAN && (v == 0 || v == -1);
        if (!zero_d && (v < -x->ndim || v >= x->ndim))
            return ERR(axis->sp, NULL, "axis %lld is out of bounds for array of dimension %d",
                       (long long)v, x->ndim);
        if (!zero_d && v != -1 && v != x->ndim - 1)
            return ERR(axis->sp, "transpose the inputs so the axis is the last one",
                       "kiln.fuse reduces over all axes (axis=None) or the last one "
                       "(axis=-1), not axis %lld of %d",
                       (long long)v, x->ndim);
        rows = !zero_d;
    }
    bool keepdims = false;
    if (keep) {
        if (keep->kind != E_BOOL)
            return ERR(keep->sp, NULL, "kiln.fuse needs keepdims=True or keepdims=False");
        keepdims = keep->blit;
    }
    if (x->level == FL_SCALAR) /* np.sum(3): the value itself, in the result's dtype */
        return fuse_cast(F, n->sp, x, red_acc(op, ty_strong(x->t)));
    FuseIR *ir = F->ir;
    if (ir->nred >= KILN_FUSE_MAX_REDUCTIONS)
        return ERR(n->sp, NULL, "kiln.fuse takes at most %d reductions in one function",
                   KILN_FUSE_MAX_REDUCTIONS);
    for (int i = 0; i < ir->nred; i++) {
        /* over the last axis and over all axes are one thing for one dimension */
        FRedInfo *p = &ir->red[i];
        bool whole = !rows && x->ndim > 1, pwhole = !p->rows && p->arg->ndim > 1;
        bool row = rows && x->ndim > 1, prow = p->rows && p->arg->ndim > 1;
        if (p->keepdims != keepdims || (whole && prow) || (row && pwhole))
            return ERR(n->sp, "write two functions",
                       "kiln.fuse makes one kernel of reductions with one axis and keepdims; "
                       "this one differs from the one at line %d",
                       p->sp.line);
    }
    FRedInfo *ri = &ir->red[ir->nred];
    /* the same arrays have the same broadcast shape at every call: one loop */
    int g = 0;
    while (g < ir->ngroups && ir->group_arrays[g] != x->arrays) g++;
    if (g == ir->ngroups) {
        ir->group_arrays[g] = x->arrays;
        ir->group_ndim[g] = x->ndim;
        ir->ngroups++;
    }
    ri->group = g;
    ri->arg = x;
    ri->op = (uint8_t)op;
    ri->rows = rows;
    ri->keepdims = keepdims;
    ri->acc = red_acc(op, ty_strong(x->t));
    ri->sum = (op == FR_SUM || op == FR_MEAN) && ri->acc->kind == TY_FLOAT && ty_bits(ri->acc) < 64
                  ? ty_scalar(KILN_FLOAT64)
                  : ri->acc;
    ri->sp = n->sp;
    FNode *r = fuse_new(F, FN_RED, n->sp);
    r->arg = ir->nred++;
    r->t = ri->acc;
    r->level = FL_POST;
    r->arrays = x->arrays;
    r->reds = 1u << r->arg;
    if (rows) {
        r->ndim = x->ndim - (keepdims ? 0 : 1);
        r->ones = keepdims ? ((x->ones >> 1) << 1) | 1 : x->ones >> 1;
    } else {
        r->ndim = keepdims ? x->ndim : 0;
        r->ones = keepdims ? ~(~0u << x->ndim) : 0;
    }
    r->npscalar = r->ndim == 0; /* a reduction to one value is a NumPy scalar */
    return r;
}

FNode *fuse_cast(Fuse *F, Span sp, FNode *x, const Type *t) {
    FNode *r = fuse_new(F, FN_CAST, sp);
    r->a = x;
    fuse_combine(F, r, x, NULL);
    r->npscalar = x->npscalar; /* x.astype(dt) of a 0-d array is a 0-d array */
    r->t = t;
    return r;
}

/* NumPy's other spellings of the dtypes fuse takes by name: its type codes and C-type
 * names, as np.dtype reads them on 64-bit Linux ("f4", "d", "intc", "int"...). */
static const struct { const char *name; kiln_dtype t; } dtype_aliases[] = {
    {"?", KILN_BOOL},       {"b1", KILN_BOOL},      {"bool", KILN_BOOL},
    {"bool_", KILN_BOOL},   {"b", KILN_INT8},       {"i1", KILN_INT8},
    {"byte", KILN_INT8},    {"B", KILN_UINT8},      {"u1", KILN_UINT8},
    {"ubyte", KILN_UINT8},  {"h", KILN_INT16},      {"i2", KILN_INT16},
    {"short", KILN_INT16},  {"H", KILN_UINT16},     {"u2", KILN_UINT16},
    {"ushort", KILN_UINT16}, {"i", KILN_INT32},     {"i4", KILN_INT32},
    {"intc", KILN_INT32},   {"I", KILN_UINT32},     {"u4", KILN_UINT32},
    {"uintc", KILN_UINT32}, {"l", KILN_INT64},      {"q", KILN_INT64},
    {"i8", KILN_INT64},     {"int", KILN_INT64},    {"int_", KILN_INT64},
    {"intp", KILN_INT64},   {"long", KILN_INT64},   {"longlong", KILN_INT64},
    {"L", KILN_UINT64},     {"Q", KILN_UINT64},     {"u8", KILN_UINT64},
    {"uint", KILN_UINT64},  {"uintp", KILN_UINT64}, {"ulong", KILN_UINT64},
    {"ulonglong", KILN_UINT64}, {"f", KILN_FLOAT32}, {"f4", KILN_FLOAT32},
    {"single", KILN_FLOAT32}, {"d", KILN_FLOAT64},  {"f8", KILN_FLOAT64},
    {"float", KILN_FLOAT64}, {"double", KILN_FLOAT64}, {"F", KILN_COMPLEX64},
    {"c8", KILN_COMPLEX64}, {"csingle", KILN_COMPLEX64}, {"D", KILN_COMPLEX128},
    {"c16", KILN_COMPLEX128}, {"complex", KILN_COMPLEX128}, {"cdouble", KILN_COMPLEX128},
};

/* The dtype a dtype argument names: np.float32, kiln.int8, "float64", "f4",
 * np.dtype("float32"). */
static const Type *dtype_arg(Fuse *F, const Node *a) {
    if (a->kind == E_STR) {
        const char *s = arena_strndup(&F->C->arena, a->sp.file->text + a->sp.off + 1,
                                      a->sp.len >= 2 ? a->sp.len - 2 : 0);
        const char *bare = s[0] == '<' || s[0] == '=' || s[0] == '|' ? s + 1 : s;
        for (int d = 0; d < KILN_NDTYPES; d++)
            if (d != KILN_FLOAT16 && strcmp(bare, kiln_dtype_name((kiln_dtype)d)) == 0)
                return ty_scalar((kiln_dtype)d);
        for (size_t i = 0; i < COUNTOF(dtype_aliases); i++)
            if (strcmp(bare, dtype_aliases[i].name) == 0) return ty_scalar(dtype_aliases[i].t);
        error_at(F->C, a->sp, NULL, "kiln.fuse does not know dtype '%s'", s);
        return NULL;
    }
    if (a->kind == E_CALL && a->call.args.n == 1 && a->call.kwvals.n == 0) {
        /* np.dtype(x): the dtype x names */
        const char *fpath = dotted(F, a->call.fn);
        kiln_value fv;
        const char *fcanon;
        if (fpath && !lookup_local(F, fpath) && resolve(F, a->call.fn, fpath, &fv, &fcanon) &&
            fcanon && strcmp(fcanon, "numpy.dtype") == 0)
            return dtype_arg(F, a->call.args.v[0]);
    }
    const char *path = dotted(F, a);
    kiln_value kv;
    const char *canon;
    if (path && !lookup_local(F, path) && resolve(F, a, path, &kv, &canon)) {
        if (kv.kind == KILN_VAL_DTYPE) return ty_scalar(kv.dtype);
        const Intrinsic *in = canon ? intrinsic_lookup(canon) : NULL;
        if (in && in->kind == IK_DTYPE) return ty_scalar((kiln_dtype)in->sub);
        if (canon && strcmp(canon, "builtins.float") == 0) return ty_scalar(KILN_FLOAT64);
        if (canon && strcmp(canon, "builtins.int") == 0) return ty_scalar(KILN_INT64);
        if (canon && strcmp(canon, "builtins.bool") == 0) return ty_scalar(KILN_BOOL);
    }
    if (F->C->nerrors == 0) error_at(F->C, a->sp, NULL, "kiln.fuse needs a dtype here");
    return NULL;
}

static FNode *call_fn(Fuse *F, const Node *n, const char *canon, FNode **a, int na);

static FNode *call(Fuse *F, const Node *n) {
    const Node *fn = n->call.fn;
    int npos = n->call.args.n;
    const Node *const *pos = (const Node *const *)n->call.args.v;
    for (int i = 0; i < npos; i++)
        if (pos[i]->flags & NF_STAR) {
            error_at(F->C, pos[i]->sp, "pass the arrays one by one",
                     "kiln.fuse does not unpack *t into a call's arguments");
            return NULL;
        }
    /* methods of values: x.astype(dt), x.sum(axis=...) */
    if (fn->kind == E_ATTR) {
        const char *path = dotted(F, fn);
        const char *head = path ? arena_strndup(&F->C->arena, path, strcspn(path, ".")) : NULL;
        bool value = !path || lookup_local(F, head);
        for (int i = 0; !value && i < F->ir->nargs; i++)
            if (strcmp(F->ir->pnames[i], head) == 0) value = true;
        if (value) {
            const char *m = fn->attr.attr;
            FNode *x = fuse_expr(F, fn->attr.base);
            if (!x) return NULL;
            if (x->py) /* (2).astype(...): Python's numbers have no such methods */
                return ERR(fn->attr.attr_sp, "convert it with np.int16(x) or np.float32(x)",
                           "'%s' object has no attribute '%s' (Python's AttributeError)",
                           x->t->kind == TY_FLOAT ? "float" : fuse_is_bool(x->t) ? "bool" : "int", m);
            if (strcmp(m, "astype") == 0) {
                if (npos != 1 || n->call.kwvals.n)
                    return ERR(n->sp, NULL, "kiln.fuse takes x.astype(dtype) with one argument");
                const Type *t = dtype_arg(F, pos[0]);
                return t ? fuse_cast(F, n->sp, x, t) : NULL;
            }
            int r = red_of(m);
            if (r >= 0) return reduction(F, n, r, x, pos, npos);
            return ERR(fn->attr.attr_sp, NULL, "kiln.fuse cannot fuse the method '.%s'", m);
        }
    }
    const char *path = dotted(F, fn);
    if (!path) return ERR(fn->sp, NULL, "kiln.fuse can only call functions it knows by name");
    kiln_value kv;
    const char *canon;
    if (!resolve(F, fn, path, &kv, &canon)) return NULL;
    if (kv.kind == KILN_VAL_DTYPE) canon = arena_printf(&F->C->arena, "numpy.%s",
                                                        kiln_dtype_name(kv.dtype));
    if (!canon)
        return ERR(fn->sp, "use NumPy's functions (np.exp ...) or kiln's", "kiln.fuse cannot fuse "
                   "a call of '%s'", path);
    /* reductions take their options as literals: only the first argument is a value */
    const char *dot = strrchr(canon, '.');
    if (strncmp(canon, "numpy.", 6) == 0 && red_of(dot + 1) >= 0) {
        if (npos < 1) return ERR(n->sp, NULL, "np.%s needs an array", dot + 1);
        return reduction(F, n, red_of(dot + 1), fuse_expr(F, pos[0]), pos + 1, npos - 1);
    }
    if (n->call.kwvals.n)
        return ERR(n->call.kwvals.v[0]->sp, NULL, "kiln.fuse takes no keyword arguments for '%s'",
                   path);
    FNode *a[3] = {0};
    if (npos > 3) return ERR(n->sp, NULL, "kiln.fuse cannot fuse '%s' with %d arguments", path, npos);
    for (int i = 0; i < npos; i++)
        if (!(a[i] = fuse_expr(F, pos[i]))) return NULL;
    return call_fn(F, n, canon, a, npos);
}

static FNode *call_fn(Fuse *F, const Node *n, const char *canon, FNode **a, int na) {
    if (strcmp(canon, "numpy.where") == 0) {
        if (na != 3) return ERR(n->sp, NULL, "kiln.fuse takes np.where(condition, x, y)");
        FNode *r = fuse_new(F, FN_WHERE, n->sp);
        r->a = a[0];
        r->b = a[1];
        r->c = a[2];
        FNode tmp;
        memset(&tmp, 0, sizeof tmp);
        if (!fuse_combine(F, &tmp, a[0], a[1]) || !fuse_combine(F, r, &tmp, a[2])) return NULL;
        r->npscalar = false; /* np.where returns an array, 0-d too */
        r->t = fuse_promote(F, a[1], a[2]);
        if (!r->t) return NULL;
        if (r->t->weak && r->level != FL_SCALAR) r->t = ty_strong(r->t);
        return r;
    }
    const Intrinsic *in = intrinsic_lookup(canon);
    if (in && in->kind == IK_DTYPE) {
        if (na != 1) return ERR(n->sp, NULL, "kiln.fuse takes one argument for '%s'", canon);
        int64_t v;
        bool big = false;
        const Type *dt = ty_scalar((kiln_dtype)in->sub);
        if (ty_is_int(dt) && fuse_py_int(a[0], &v, &big) && !ty_int_fits(dt, v, big))
            return ERR(a[0]->sp, NULL, "Python integer %s out of bounds for %s (NumPy's "
                       "OverflowError)", big ? arena_printf(&F->C->arena, "%llu",
                                                            (unsigned long long)v)
                                             : arena_printf(&F->C->arena, "%lld", (long long)v),
                       fuse_type_name(dt));
        FNode *r = fuse_cast(F, n->sp, a[0], dt);
        if (r) r->npscalar = r->ndim == 0 && r->level != FL_SCALAR; /* np.float32(x): a scalar */
        return r;
    }
    if (!in || in->kind == IK_NS || (in->flags & IF_VALUE))
        return ERR(n->call.fn->sp, "kiln.fuse fuses NumPy's ufuncs with a kernel counterpart "
                   "(docs/modes.md)", "kiln.fuse cannot fuse '%s'", canon);
    int want = in->kind == IK_MATH2 || in->kind == IK_NPMINMAX || in->kind == IK_POWER ? 2 : 1;
    bool known = in->kind == IK_MATH1 || in->kind == IK_MATH2 || in->kind == IK_NPMINMAX ||
                 in->kind == IK_POWER || in->kind == IK_ROUNDING || in->kind == IK_PRED ||
                 in->kind == IK_ABS || in->kind == IK_SIGN || in->kind == IK_LOG;
    if (!known)
        return ERR(n->call.fn->sp, NULL, "kiln.fuse cannot fuse '%s'", canon);
    if (na != want)
        return ERR(n->sp, NULL, "'%s' takes %d argument%s in kiln.fuse", canon, want,
                   want == 1 ? "" : "s");
    if (in->kind == IK_POWER)
        return fuse_bin(F, n, B_POW, a[0], a[1]);
    FNode *r = fuse_new(F, FN_CALL, n->sp);
    r->a = a[0];
    r->b = na > 1 ? a[1] : NULL;
    r->nargs = na;
    if (!fuse_combine(F, r, a[0], r->b)) return NULL;
    const char *short_name = strrchr(canon, '.') + 1;
    r->text = canon;
    const Type *x = a[0]->t;
    switch ((IntrKind)in->kind) {
    case IK_MATH1:
    case IK_LOG:
        r->opty = r->t = fuse_float_of(F, x, n->sp, canon);
        if (in->kind == IK_LOG) r->text = "numpy.log";
        break;
    case IK_MATH2: {
        /* NumPy picks the loop from the operands' promotion, Python scalars weak
         * (np.arctan2(-2.0, f32) is float32); fmod of integers has integer loops */
        const Type *p = fuse_promote(F, a[0], a[1]);
        if (!p) return NULL;
        if (strcmp(canon, "numpy.fmod") == 0 && (ty_is_int(p) || fuse_is_bool(p))) {
            r->opty = r->t = fuse_is_bool(p) ? ty_scalar(KILN_INT8) : ty_strong(p);
            break;
        }
        if (!(p = fuse_float_of(F, p, n->sp, canon))) return NULL;
        r->opty = r->t = p;
        break;
    }
    case IK_NPMINMAX:
        r->opty = r->t = fuse_promote(F, a[0], a[1]);
        if (r->t && r->t->weak) r->opty = r->t = ty_strong(r->t);
        break;
    case IK_ROUNDING:
        r->text = arena_printf(&F->C->arena, "numpy.%s", short_name);
        if (x->kind == TY_FLOAT) {
            r->opty = r->t = fuse_float_of(F, x, n->sp, canon);
        } else if (x->weak) { /* np.floor(2) is np.int64(2) */
            r->t = ty_strong(x);
            r->text = NULL;
        } else {
            r->t = x; /* NumPy 2: the integer (or bool) itself */
            r->text = NULL;
        }
        break;
    case IK_PRED:
        r->t = ty_scalar(KILN_BOOL);
        if (x->kind != TY_FLOAT) { /* never NaN, always finite */
            r->text = NULL;
            r->pred_const = true;
        }
        r->op = in->sub;
        break;
    case IK_ABS:
        /* Python's abs of a Python number is one (weak); np.abs makes a NumPy scalar */
        r->opty = r->t = x->weak && strcmp(canon, "builtins.abs") == 0 ? x : ty_strong(x);
        r->text = fuse_is_bool(x) ? NULL : "abs";
        break;
    case IK_SIGN:
        if (fuse_is_bool(x)) return ERR(n->sp, NULL, "NumPy does not support np.sign on bool");
        r->opty = r->t = ty_strong(x);
        r->text = "numpy.sign";
        break;
    default: UNREACHABLE();
    }
    return r->t ? r : NULL;
}

FNode *fuse_expr(Fuse *F, const Node *n) {
    switch (n->kind) {
    case E_INT:
        return fuse_constant(F, n->sp, &ty_weak_int,
                        arena_printf(&F->C->arena, "%llu", (unsigned long long)n->ilit.v));
    case E_FLOAT: return fuse_constant(F, n->sp, &ty_weak_float, fuse_float_text(F, n->flit));
    case E_BOOL: return fuse_constant(F, n->sp, ty_scalar(KILN_BOOL), n->blit ? "True" : "False");
    case E_NAME: {
        FNode *v = lookup_local(F, n->name.id);
        if (v) return v;
        for (int i = 0; i < F->ir->nargs; i++)
            if (strcmp(F->ir->pnames[i], n->name.id) == 0) {
                const kiln_fuse_arg *a = &F->ir->args[i];
                FNode *p = fuse_new(F, FN_ARG, n->sp);
                p->arg = i;
                p->text = n->name.id;
                if (a->kind == KILN_FUSE_ARRAY || a->kind == KILN_FUSE_ROW) {
                    p->t = ty_scalar(a->dtype);
                    p->ndim = a->ndim;
                    for (int d = 0; d < a->ndim; d++)
                        if (a->ones >> d & 1) p->ones |= 1u << (a->ndim - 1 - d);
                    p->arrays = p->outer = 1ull << (i & 63);
                    p->level = FL_ELEM;
                } else {
                    p->t = a->kind == KILN_FUSE_PYINT     ? &ty_weak_int
                           : a->kind == KILN_FUSE_PYFLOAT ? &ty_weak_float
                           : a->kind == KILN_FUSE_PYBOOL  ? ty_scalar(KILN_BOOL)
                                                          : ty_scalar(a->dtype);
                    p->py = a->kind != KILN_FUSE_SCALAR;
                }
                return p;
            }
        kiln_value kv;
        const char *canon;
        if (!resolve(F, n, n->name.id, &kv, &canon)) return NULL;
        if (canon) goto named;
        return global_value(F, n, n->name.id, &kv);
    named: {
        const Intrinsic *in = intrinsic_lookup(canon);
        if (in && in->kind == IK_CONST)
            return fuse_constant(F, n->sp, &ty_weak_float,
                            in->sub == IC_PI ? "math.pi" : in->sub == IC_E ? "math.e"
                            : in->sub == IC_TAU ? "math.tau" : in->sub == IC_INF ? "math.inf"
                                                                                  : "math.nan");
        return ERR(n->sp, "call it", "'%s' is not a value kiln.fuse can use", canon);
    }
    }
    case E_ATTR: {
        const char *path = dotted(F, n);
        const char *head = path ? arena_strndup(&F->C->arena, path, strcspn(path, ".")) : NULL;
        bool value = !path || lookup_local(F, head);
        for (int i = 0; !value && i < F->ir->nargs; i++)
            if (strcmp(F->ir->pnames[i], head) == 0) value = true;
        if (value)
            return ERR(n->sp, "compute on the arrays' values only",
                       "kiln.fuse cannot fuse the attribute '.%s'", n->attr.attr);
        kiln_value kv;
        const char *canon;
        if (!resolve(F, n, path, &kv, &canon)) return NULL;
        if (!canon) return global_value(F, n, path, &kv);
        const Intrinsic *in = intrinsic_lookup(canon);
        if (in && in->kind == IK_CONST)
            return fuse_constant(F, n->sp, &ty_weak_float,
                            in->sub == IC_PI ? "math.pi" : in->sub == IC_E ? "math.e"
                            : in->sub == IC_TAU ? "math.tau" : in->sub == IC_INF ? "math.inf"
                                                                                  : "math.nan");
        return ERR(n->sp, "call it", "'%s' is not a value kiln.fuse can use", canon);
    }
    case E_UNARY: {
        FNode *x = fuse_expr(F, n->un.x);
        if (!x) return NULL;
        if (n->op == U_NEG && x->kind == FN_CONST && x->t->weak)
            return fuse_constant(F, n->sp, x->t, arena_printf(&F->C->arena, "(-%s)", x->text));
        return un(F, n, n->op, x);
    }
    case E_BINOP: {
        FNode *a = fuse_expr(F, n->bin.l);
        FNode *b = a ? fuse_expr(F, n->bin.r) : NULL;
        return b ? fuse_bin(F, n, n->op, a, b) : NULL;
    }
    case E_COMPARE: {
        if (n->cmp.operands.n != 2)
            return ERR(n->sp, "write (a < b) & (b < c)",
                       "a chained comparison asks for one truth value; on arrays NumPy raises "
                       "ValueError");
        FNode *a = fuse_expr(F, n->cmp.operands.v[0]);
        FNode *b = a ? fuse_expr(F, n->cmp.operands.v[1]) : NULL;
        if (!b) return NULL;
        if (n->cmp.ops[0] >= C_IS)
            return ERR(n->sp, "compare values with == or !=",
                       "'is' compares identities, which arrays of values do not have");
        FNode *r = fuse_new(F, FN_CMP, n->sp);
        r->op = n->cmp.ops[0];
        r->a = a;
        r->b = b;
        if (!fuse_combine(F, r, a, b)) return NULL;
        if (a->py && b->py) return fuse_python_op(r, 0, a, b, true);
        if (fuse_weak_int_compare(F, r)) return r;
        /* NumPy compares in the promoted type: float32 data against 0.1 in float32 (the
         * kernel language compares a Python number exactly, so the text converts) */
        if (!(r->opty = fuse_promote(F, a, b))) return NULL;
        r->t = ty_scalar(KILN_BOOL);
        return r;
    }
    case E_CALL: return call(F, n);
    case E_BOOLOP:
        return ERR(n->sp, "use & and | (with parentheses) for arrays",
                   "'and'/'or' ask for one truth value; on arrays NumPy raises ValueError");
    case E_IFEXP:
        return ERR(n->sp, "use np.where(condition, x, y)",
                   "a conditional expression asks for one truth value; kiln.fuse needs "
                   "np.where");
    case E_SUBSCRIPT:
        return ERR(n->sp, "pass the part of the array you need as the argument",
                   "kiln.fuse cannot fuse indexing or slicing");
    default: return ERR(n->sp, NULL, "kiln.fuse cannot fuse this expression");
    }
}

