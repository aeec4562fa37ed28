/* sema_reduce.c: NumPy's reductions of a whole array inside a kernel.
 *
 * np.sum(a), a.sum(), np.prod, np.mean, np.var, np.std, np.min/np.amin, np.max/np.amax,
 * np.nansum, nanprod, nanmean, nanvar, nanstd, nanmin, nanmax, np.all, np.any and
 * np.count_nonzero of an array of any layout and dimensions give a number; so do those of a
 * scalar, which NumPy reduces as a 0-d array (a 0-d global array is a scalar in kiln).  The thread
 * that evaluates the call loops over every element in order (emit_reduce.c), as Numba's
 * CUDA target does: a reduction over a block or grid is kiln.reduce's or the user's job.
 *
 * Result types are NumPy's (on 64-bit Linux):
 *   sum, prod, nansum, nanprod   bool and integers narrower than 64 bits widen to int64
 *                                (uint64 for unsigned); floats and complex keep theirs
 *   mean, var, std (and nan*)    float64 for bool and integers; a float's own type; a
 *                                complex mean is complex, its var and std are real
 *   min, max, nanmin, nanmax     the element type (complex in NumPy's lexicographic order)
 *   all, any                     bool;  count_nonzero: int64
 * The sum starts from 0 and adds in order: NumPy adds pairwise past 8 elements, so a
 * float sum of a long array can differ from NumPy's in the last bits (as Numba's does).
 * axis=, dtype=, out= and the other keywords are refused; float16 arrays too.
 */
#include <string.h>

#include "sema_int.h"

/* the methods of arrays typed as intrinsics "array.NAME": the reductions, and a.view(dtype)
 * (array_view.c), which is recognised the same way */
static const char *const method_names[] = {"sum", "prod", "mean", "var", "std", "min",
                                           "max", "all", "any", "view"};

const Intrinsic *sema_reduce_method(Sema *S, Node *n) {
    Node *f = n->call.fn;
    if (f->kind != E_ATTR) return NULL;
    const char *name = NULL;
    for (size_t i = 0; i < COUNTOF(method_names); i++)
        if (strcmp(f->attr.attr, method_names[i]) == 0) name = method_names[i];
    if (!name) return NULL;
    const Intrinsic *in = intrinsic_lookup(arena_printf(&S->C->arena, "array.%s", name));
    NodeList *a = &n->call.args;
    if (a->n >= 1 && a->v[0] == f->attr.base) return in; /* a later pass */
    const Type *bt = sema_expr(S, f->attr.base);
    if (IS_ERR(bt) || IS_UNKNOWN(bt)) return NULL;
    /* x.view(dtype) of a typed number too: its bits as another type of the same size */
    if (bt->kind != TY_ARRAY && !(strcmp(name, "view") == 0 && ty_is_scalar(bt) && !bt->weak))
        return NULL;
    Node **v = arena_alloc(&S->C->arena, sizeof(Node *) * (size_t)(a->n + 1));
    v[0] = f->attr.base;
    for (int i = 0; i < a->n; i++) v[i + 1] = a->v[i];
    a->v = v;
    a->n++;
    return in;
}

/* The type sum and prod accumulate in. */
static const Type *sum_type(const Type *e) {
    if (e->kind == TY_BOOL) return ty_scalar(KILN_INT64);
    if (e->kind == TY_INT && ty_bits(e) < 64)
        return ty_scalar(ty_is_signed(e) ? KILN_INT64 : KILN_UINT64);
    return e;
}

static const Type *mean_type(const Type *e) {
    return e->kind == TY_FLOAT || e->kind == TY_COMPLEX ? e : ty_scalar(KILN_FLOAT64);
}

const Type *sema_reduce(Sema *S, Node *n, const Intrinsic *in) {
    Compiler *C = S->C;
    const char *name = strchr(in->name, '.') + 1;
    bool method = strncmp(in->name, "array.", 6) == 0;
    NodeList *a = &n->call.args;
    if (n->call.kwvals.n || a->n != 1) {
        error_at(C, n->sp, "reduce the whole array, or loop over the axis yourself",
                 "%s%s() in a kernel takes the array alone (no axis, dtype, out or other "
                 "arguments)", method ? "a." : "np.", name);
        return &ty_error;
    }
    n->call.bound = *a;
    Node *x = a->v[0];
    const Type *t = sema_expr(S, x);
    if (IS_ERR(t) || IS_UNKNOWN(t)) return t;
    bool scalar = ty_is_scalar(t) && !method; /* NumPy's 0-d array: np.sum(3) is 3 */
    if ((t->kind != TY_ARRAY && !scalar) || ty_is_ptr(t)) {
        error_at(C, x->sp, NULL, "np.%s() in a kernel reduces an array, not %s", name,
                 ty_name(C, t));
        return &ty_error;
    }
    const Type *e = t->kind == TY_ARRAY ? t->elem : t;
    if (e->weak) /* a Python number: NumPy's int64, float64 or complex128 */
        e = ty_scalar(e->kind == TY_INT ? KILN_INT64 : e->kind == TY_FLOAT ? KILN_FLOAT64
                                                                            : KILN_COMPLEX128);
    if (!ty_is_scalar(e) || (e->kind == TY_FLOAT && ty_bits(e) < 32)) {
        error_at(C, x->sp, "convert the elements into a float32 local array first",
                 "np.%s() in a kernel does not reduce arrays of %s", name, ty_name(C, e));
        return &ty_error;
    }
    switch ((Reduce)in->sub) {
    case RD_SUM:
    case RD_PROD:
    case RD_NANSUM:
    case RD_NANPROD: n->opty = sum_type(e); return n->opty;
    case RD_MEAN:
    case RD_NANMEAN: n->opty = mean_type(e); return n->opty;
    case RD_VAR:
    case RD_STD:
    case RD_NANVAR:
    case RD_NANSTD:
        n->opty = mean_type(e);
        return n->opty->kind == TY_COMPLEX ? ty_complex_part(n->opty) : n->opty;
    case RD_MIN:
    case RD_MAX:
    case RD_NANMIN:
    case RD_NANMAX: n->opty = e; return e;
    case RD_ALL:
    case RD_ANY: n->opty = e; return ty_scalar(KILN_BOOL);
    case RD_COUNT_NONZERO: n->opty = e; return ty_scalar(KILN_INT64);
    }
    UNREACHABLE();
}
