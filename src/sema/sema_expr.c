/* sema_expr.c: types of expressions.
 *
 * Each expression gets its type (Node.ty), the type its operands are
 * converted to (Node.opty), and flags: NF_CONST with the folded value for
 * compile-time integers and floats (literals, frozen globals, and arithmetic
 * on them), NF_NONNEG for integers known never to be negative, with an upper
 * bound so that arithmetic that may wrap is not (bounds.c).  Operators
 * follow NumPy 2 for typed values and Python for the meaning of `/`, `//`,
 * `%`, `**` and comparisons; see types.h for promotion and LANGUAGE.md for the
 * contract.  Errors name the operator and both types, and hint at the fix.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chars.h"
#include "sema_int.h"

static const char *const binop_sym[] = {"+", "-", "*", "/", "//", "%", "**",
                                        "<<", ">>", "&", "|", "^"};

bool sema_const_int(const Node *n, int64_t *v) {
    if (!(n->flags & NF_CONST) || !n->ty) return false;
    if (n->ty->kind != TY_INT && n->ty->kind != TY_BOOL) return false;
    *v = n->cval.i;
    return true;
}

bool sema_is_weak_int_const(const Node *n, const Type *t) {
    return t->weak && t->kind == TY_INT && (n->flags & NF_CONST);
}

bool sema_weak_int_range(const Node *n, const Type *t, int64_t *lo, int64_t *hi) {
    if (!t->weak || t->kind != TY_INT) return false;
    if (n->flags & NF_CONST) {
        *lo = *hi = n->cval.i;
        return true;
    }
    const Sym *s = n->kind == E_NAME ? n->sym : NULL;
    if (!s || !s->wk_set || s->wk_any || !s->ty->weak) return false;
    *lo = s->wk_lo;
    *hi = s->wk_hi;
    return true;
}

bool sema_weak_may_not_fit(const Node *n, const Type *t, const Type *other) {
    if (!t->weak || t->kind != TY_INT || other->weak || other->kind != TY_INT) return false;
    int64_t lo, hi;
    return !sema_weak_int_range(n, t, &lo, &hi) || !ty_int_fits(other, lo, false) ||
           !ty_int_fits(other, hi, false);
}
#define weak_may_not_fit sema_weak_may_not_fit

const Type *sema_hold_weak_int(const Node *n, const Type *nt, const Type *t) {
    if (t->weak || t->kind != TY_INT || ty_bits(t) >= 64) return t;
    return weak_may_not_fit(n, nt, t) ? ty_scalar(KILN_INT64) : t;
}

/* NumPy 2 raises when a Python int meets a typed integer it does not fit: a constant, or
 * a variable only ever assigned constants, one of which does not fit.  A Python int
 * variable whose values kiln cannot know takes the typed operand's type. */
bool sema_check_weak_fits(Sema *S, Node *c, const Type *ct, const Type *other) {
    int64_t lo, hi;
    if (!sema_weak_int_range(c, ct, &lo, &hi) || other->weak || other->kind != TY_INT) return true;
    int64_t bad = !ty_int_fits(other, lo, false) ? lo : hi;
    if (ty_int_fits(other, bad, false)) return true;
    if (c->flags & NF_CONST)
        error_at(S->C, c->sp, "convert one side explicitly, e.g. kiln.int64(x)",
                 "Python integer %lld out of bounds for %s", (long long)bad,
                 ty_name(S->C, other));
    else
        error_at(S->C, c->sp, "convert one side explicitly, e.g. kiln.int64(x)",
                 "Python integer %lld out of bounds for %s ('%s' is given it, at line %d)",
                 (long long)bad, ty_name(S->C, other), c->sym->name, c->sym->def_sp.line);
    return false;
}

void sema_set_const_int(Node *n, int64_t v) {
    n->flags |= NF_CONST;
    n->cval.i = v;
    if (v >= 0) n->flags |= NF_NONNEG;
}

/* Python int constants (literals, and operations on them) fold exactly, in 128 bits, as
 * Python computes them: a value in [2**63, 2**64) is a uint64 constant (as such a literal
 * is, and Numba types it); past 64 bits it is an error, as Numba's "Int value is too
 * large" (computed at run time it would wrap). */
typedef ast_i128 i128_;

/* Whether n is such a constant (t its type); *v its value. */
static bool pyint_const(const Node *n, const Type *t, i128_ *v) {
    if (!(n->flags & NF_CONST) || t->kind != TY_INT) return false;
    if (t->weak) {
        *v = n->cval.i;
        return true;
    }
    if (!(n->flags & NF_PYINT)) return false;
    *v = t->dtype == KILN_UINT64 ? (i128_)n->cval.u : (i128_)n->cval.i;
    return true;
}

/* Makes at the constant r: a weak int, a uint64, or (past 64 bits) an error. */
static const Type *set_pyint(Sema *S, Node *at, i128_ r) {
    if (r >= INT64_MIN && r <= INT64_MAX) {
        sema_set_const_int(at, (int64_t)r);
        at->flags |= NF_PYINT;
        return &ty_weak_int;
    }
    if (r > 0 && r <= (i128_)UINT64_MAX) {
        at->flags |= NF_CONST | NF_NONNEG | NF_PYINT;
        at->cval.u = (uint64_t)r;
        return ty_scalar(KILN_UINT64);
    }
    error_at(S->C, at->sp, "compute it in floats (1e30, 2.0**70), or give a typed value, "
             "e.g. np.uint64(...)",
             "the value of this constant expression does not fit in 64 bits (Numba: Int value "
             "is too large)");
    return &ty_error;
}

/* a op b of two Python int constants, exactly (ast_int_binop); NULL for an operator not
 * folded here (true division). */
static const Type *fold_pyint(Sema *S, Node *at, BinOp op, i128_ a, i128_ b) {
    i128_ r = 0;
    switch (ast_int_binop(op, a, b, &r)) {
    case AST_INT_OK: return set_pyint(S, at, r);
    case AST_INT_BIG: return set_pyint(S, at, (i128_)1 << 100); /* past 64 bits: said */
    case AST_INT_ZERODIV:
        error_at(S->C, at->sp, NULL, "integer division or modulo by zero");
        return &ty_error;
    case AST_INT_NEGSHIFT:
        error_at(S->C, at->sp, NULL, "negative shift count");
        return &ty_error;
    case AST_INT_NEGPOW: return &ty_error; /* said by sema_binop */
    default: return NULL;
    }
}

static void fold_float(Node *at, BinOp op, double a, double b) {
    double r;
    switch (op) {
    case B_ADD: r = a + b; break;
    case B_SUB: r = a - b; break;
    case B_MUL: r = a * b; break;
    case B_DIV:
        if (b == 0) return;
        r = a / b;
        break;
    default: return;
    }
    at->flags |= NF_CONST;
    at->cval.f = r;
}

double sema_const_as_double(const Node *n) {
    return n->ty->kind == TY_FLOAT ? n->cval.f : (double)n->cval.i;
}

const Type *sema_binop(Sema *S, Node *at, BinOp op, Node *l, Node *r, const Type *lt,
                       const Type *rt, const Type **opty) {
    Compiler *C = S->C;
    *opty = NULL;
    if (IS_ERR(lt) || IS_ERR(rt)) return &ty_error;
    if (IS_UNKNOWN(lt) || IS_UNKNOWN(rt)) return &ty_unknown;
    if (!ty_is_scalar(lt) || !ty_is_scalar(rt)) {
        if (lt->kind == TY_ARRAY || rt->kind == TY_ARRAY)
            error_at(C, at->sp,
                     (lt->kind == TY_ARRAY && lt->ndim == 0) || (rt->kind == TY_ARRAY && rt->ndim == 0)
                         ? "a 0-d array's value is a[()]: use a[()] in the arithmetic"
                         : "index the elements: a[i] + b[i]",
                     "arithmetic on whole arrays is not supported in kernels");
        else
            error_at(C, at->sp, NULL, "unsupported operand types for %s: %s and %s",
                     binop_sym[op], ty_name(C, lt), ty_name(C, rt));
        return &ty_error;
    }
    if (lt->kind == TY_COMPLEX || rt->kind == TY_COMPLEX) {
        at->flags &= (uint16_t)~(NF_CONST | NF_NONNEG | NF_BOUNDED);
        const Type *t = sema_complex_binop(S, at, op, lt, rt);
        if (!IS_ERR(t)) *opty = t;
        return t;
    }
    i128_ va, vb;
    if (pyint_const(l, lt, &va) && pyint_const(r, rt, &vb)) { /* Python's exact value */
        at->flags &= (uint16_t)~(NF_CONST | NF_NONNEG | NF_BOUNDED | NF_PYINT);
        if (op == B_POW && vb < 0) {
            error_at(C, at->sp, "use a float base, e.g. 1.0 / x**n or float(x)**n",
                     "integers to negative integer powers are not allowed");
            return &ty_error;
        }
        const Type *ft = fold_pyint(S, at, op, va, vb);
        if (ft) {
            *opty = IS_ERR(ft) ? NULL : ft;
            return ft;
        }
    }
    if (!sema_check_weak_fits(S, l, lt, rt) || !sema_check_weak_fits(S, r, rt, lt)) return &ty_error;
    /* a Python int of values unknown here (a parameter given one, a counter) meeting a
     * narrower typed integer: int64, as Numba types it, not wrapped to the typed width
     * (known values were range-checked just above, as NumPy checks them) */
    const Type *t = sema_hold_weak_int(r, rt, sema_hold_weak_int(l, lt, ty_promote(lt, rt)));
    if (t->kind == TY_FLOAT && lt->kind == TY_INT && rt->kind == TY_INT) S->mixed_sign = true;
    switch (op) {
    case B_ADD:
    case B_MUL:
        if (t->kind == TY_BOOL) t = ty_scalar(KILN_INT64);
        break;
    case B_SUB:
        if (t->kind == TY_BOOL) t = ty_scalar(KILN_INT64);
        break;
    case B_DIV:
        if (t->kind != TY_FLOAT) t = (lt->weak && rt->weak) ? &ty_weak_float : ty_scalar(KILN_FLOAT64);
        break;
    case B_FLOORDIV:
    case B_MOD:
        if (t->kind == TY_BOOL) t = ty_scalar(KILN_INT64);
        break;
    case B_POW: {
        if (t->kind == TY_BOOL) t = ty_scalar(KILN_INT64);
        /* a float32 base to a typed integer power stays float32, as in Numba (its
         * BinOpPower: "float32 ** int doesn't go through DP computations"); NumPy
         * would give float64 */
        if (lt->kind == TY_FLOAT && !lt->weak && lt->dtype == KILN_FLOAT32 &&
            (rt->kind == TY_INT || rt->kind == TY_BOOL) && !rt->weak)
            t = lt;
        int64_t e;
        if (t->kind == TY_INT && sema_const_int(r, &e) && e < 0) {
            error_at(C, at->sp, "use a float base, e.g. 1.0 / x**n or float(x)**n",
                     "integers to negative integer powers are not allowed");
            return &ty_error;
        }
        break;
    }
    case B_LSHIFT:
    case B_RSHIFT:
    case B_AND:
    case B_OR:
    case B_XOR:
        if (lt->kind == TY_FLOAT || rt->kind == TY_FLOAT) {
            error_at(C, at->sp, "convert with int(...) first",
                     "unsupported operand types for %s: %s and %s", binop_sym[op],
                     ty_name(C, lt), ty_name(C, rt));
            return &ty_error;
        }
        if (t->kind == TY_FLOAT) {
            error_at(C, at->sp, "cast one side, e.g. kiln.int64(x) or kiln.uint64(x)",
                     "no integer type holds both %s and %s for %s", ty_name(C, lt),
                     ty_name(C, rt), binop_sym[op]);
            return &ty_error;
        }
        if (t->kind == TY_BOOL && (op == B_LSHIFT || op == B_RSHIFT)) t = ty_scalar(KILN_INT64);
        break;
    }
    *opty = t;
    at->flags &= (uint16_t)~(NF_CONST | NF_NONNEG | NF_BOUNDED);
    /* non-negative only where the result cannot wrap past its type's maximum */
    int64_t lo;
    bool has_lo = op == B_SUB && sema_fact_lo(S, l, &lo);
    uint64_t hi;
    if (bound_binop(op, l, r, lt, rt, t, has_lo ? &lo : NULL, &hi)) bound_set(at, hi);
    if ((l->flags & NF_CONST) && (r->flags & NF_CONST) && lt->weak && rt->weak &&
        t->kind != TY_INT)
        fold_float(at, op, sema_const_as_double(l), sema_const_as_double(r));
    return t;
}

const char *sema_scalar_param_hint(const Node *n, const Type *t) {
    if (n->kind != E_NAME || !n->sym || n->sym->param < 0 || !ty_is_scalar(t)) return NULL;
    return "this argument is a number (a NumPy scalar or a Python number): to write "
           "through it, pass an array, e.g. a 0-d one, np.zeros(()), written as a[()]";
}

bool sema_check_scalar_operand(Sema *S, Node *n, const Type *t, const char *what) {
    if (ty_is_scalar(t)) return true;
    if (strstr(what, "argument")) { /* a call's: nothing is tested for truth there */
        error_at(S->C, n->sp,
                 t->kind == TY_ARRAY   ? "pass an element, e.g. a[i]"
                 : t->kind == TY_TUPLE ? "pass an element of the tuple, e.g. t[0]"
                                       : NULL,
                 "%s must be a number, not %s", what, ty_name(S->C, t));
        return false;
    }
    if (t->kind == TY_ARRAY)
        error_at(S->C, n->sp, "use an element, e.g. a[i]",
                 "the truth value of an array is ambiguous (%s)", what);
    else if (t->kind == TY_TUPLE)
        error_at(S->C, n->sp, "test an element of the tuple",
                 "a tuple is not a number or a condition (%s)", what);
    else
        error_at(S->C, n->sp, NULL, "%s is not a number or a condition (%s)", ty_name(S->C, t),
                 what);
    return false;
}

void sema_cond(Sema *S, Node *n) {
    const Type *t = sema_expr(S, n);
    if (IS_ERR(t) || IS_UNKNOWN(t)) return;
    sema_check_scalar_operand(S, n, t, "used as a condition");
}

/* A frozen array, or a frozen tuple holding one, is read-only (sema_mark_written). */
static uint64_t frozen_origin(const GVal *g) {
    if (g->kind == KILN_VAL_ARRAY) return g->data ? ORIGIN_FROZEN : 0;
    uint64_t o = 0;
    if (g->kind == KILN_VAL_TUPLE)
        for (int i = 0; i < g->ntuple; i++) o |= frozen_origin(&g->tuple[i]);
    return o;
}

uint64_t sema_origins(Sema *S, Node *n) {
    switch (n->kind) {
    case E_NAME: {
        if (n->gv) return frozen_origin(n->gv);
        Sym *s = n->sym ? n->sym : sema_local(S, n->name.id);
        return s ? s->origins : 0;
    }
    case E_SUBSCRIPT: return sema_origins(S, n->sub.base);
    case E_ATTR: /* a.real, a.imag: views of a; cfg.TABLE: a frozen array */
        if (n->gv) return frozen_origin(n->gv);
        return sema_origins(S, n->attr.base);
    case E_IFEXP: return sema_origins(S, n->ifexp.then) | sema_origins(S, n->ifexp.orelse);
    case E_CALL: /* a.reshape(...): a view of a; kiln.const.array_like(T): the frozen T */
        if (n->gv) return frozen_origin(n->gv);
        if (n->intr && (n->intr->kind == IK_RESHAPE || n->intr->kind == IK_VIEW) && n->call.args.n)
            return sema_origins(S, n->call.args.v[0]);
        return 0;
    case E_TUPLE: { /* a tuple of arrays: written through, any of them may be */
        uint64_t o = 0;
        for (int i = 0; i < n->tuple.n; i++) o |= sema_origins(S, n->tuple.v[i]);
        return o;
    }
    default: return 0;
    }
}

void sema_mark_written(Sema *S, Node *array) {
    uint64_t o = sema_origins(S, array);
    if (o & ORIGIN_FROZEN)
        error_at(S->C, array->sp,
                 "pass the array as an argument to write to it (or copy it into a local array)",
                 "this array may be a global array, which the kernel captured as a constant when "
                 "it compiled: kernels cannot write to it");
    S->cur->written |= o & ~ORIGIN_FROZEN;
}

bool sema_check_store(Sema *S, const Type *dst, const Type *vt, Node *v, Span sp) {
    const kiln_field *cf = chars_field(dst);
    if (cf || vt->kind == TY_STR) { /* a string constant into a NumPy string element */
        const char *why = !cf ? "strings are stored only into string fields and arrays"
                          : !v || vt->kind != TY_STR
                              ? "a string field or element takes a string constant"
                              : chars_encode(v, vt, cf, NULL);
        if (!why) return true;
        error_at(S->C, sp, NULL, "cannot store %s in %s: %s", ty_name(S->C, vt),
                 cf ? (cf->chars == 'S' ? "a bytes field" : "a str field")
                    : ty_name(S->C, dst), why);
        return false;
    }
    if (dst->kind == TY_RECORD || vt->kind == TY_RECORD) { /* a whole record: its bytes */
        if (ty_equal(dst, vt)) return true;
        error_at(S->C, sp, "assign field by field",
                 "cannot store %s in an element of type %s: a record is copied only into a "
                 "record of the same layout",
                 ty_name(S->C, vt), ty_name(S->C, dst));
        return false;
    }
    if (!ty_is_scalar(vt)) {
        error_at(S->C, sp, NULL, "cannot store %s in an element of type %s", ty_name(S->C, vt),
                 ty_name(S->C, dst));
        return false;
    }
    if (vt->kind == TY_COMPLEX && dst->kind != TY_COMPLEX) {
        error_at(S->C, sp, "store z.real, z.imag or abs(z)",
                 "cannot store %s in an element of type %s: it would drop the imaginary part",
                 ty_name(S->C, vt), ty_name(S->C, dst));
        return false;
    }
    if (v && (v->flags & NF_CONST) && (v->flags & NF_PYINT) && vt->kind == TY_INT &&
        !vt->weak && vt->dtype == KILN_UINT64 && dst->kind == TY_INT && !dst->weak &&
        dst->dtype != KILN_UINT64) {
        /* a Python int in [2**63, 2**64) (a uint64 constant) fits no other integer type:
         * NumPy 2's OverflowError, as for the weak ints below */
        error_at(S->C, v->sp, "convert one side explicitly, e.g. kiln.int64(x)",
                 "Python integer %llu out of bounds for %s", (unsigned long long)v->cval.u,
                 ty_name(S->C, dst));
        return false;
    }
    if (v && !sema_check_weak_fits(S, v, vt, dst)) return false;
    return true;
}

/* ---- subscripts ------------------------------------------------------------------ */

bool sema_index_type_ok(Sema *S, Node *ix, const Type *t) {
    if (IS_ERR(t) || IS_UNKNOWN(t)) return false;
    if (t->kind == TY_FLOAT && S->mixed_sign) { /* (sema_binop saw the float made) */
        error_at(S->C, ix->sp,
                 "a signed integer and a uint64 make a float64, as in NumPy (Numba gives "
                 "int64 here): convert the uint64 side, e.g. kiln.int64(n)",
                 "array indices must be integers, not %s", ty_name(S->C, t));
        return false;
    }
    if (t->kind == TY_INT) return true;
    if (t->kind == TY_BOOL) {
        error_at(S->C, ix->sp, "convert with int(...)",
                 "boolean indices (masks) are not supported in kernels");
        return false;
    }
    error_at(S->C, ix->sp, t->kind == TY_FLOAT ? "convert with int(...)" : NULL,
             "array indices must be integers, not %s", ty_name(S->C, t));
    return false;
}

static bool slice_part_ok(Sema *S, Node *p) {
    if (!p) return true;
    const Type *t = sema_expr(S, p);
    if (t->kind == TY_NONE) return true;
    return sema_index_type_ok(S, p, t);
}

static char view_layout(const Type *bt, Node **idx, int nidx) {
    /* C stays C when ints lead, then at most one stepless slice, then full
     * slices; F mirrors that from the end.  Anything else is A. */
    int nd = bt->ndim;
    bool is_slice[KILN_MAX_NDIM], full[KILN_MAX_NDIM], stepless[KILN_MAX_NDIM];
    for (int i = 0; i < nd; i++) {
        Node *x = i < nidx ? idx[i] : NULL;
        is_slice[i] = !x || x->kind == E_SLICE;
        full[i] = !x || (x->kind == E_SLICE && !x->slice.lo && !x->slice.hi && !x->slice.step);
        stepless[i] = !x || (x->kind == E_SLICE && !x->slice.step);
    }
    if (bt->layout == 'C') {
        int i = 0;
        while (i < nd && !is_slice[i]) i++;
        if (i < nd && stepless[i]) i++;
        while (i < nd && full[i]) i++;
        if (i == nd) return 'C';
    } else if (bt->layout == 'F') {
        int i = nd - 1;
        while (i >= 0 && !is_slice[i]) i--;
        if (i >= 0 && stepless[i]) i--;
        while (i >= 0 && full[i]) i--;
        if (i < 0) return 'F';
    }
    return 'A';
}


/* The type of field `name` of record type rt (a subarray field: a C-contiguous array view
 * of the record's bytes), or an error at sp naming the fields there are. */
static const Type *record_field(Sema *S, const Type *rt, const char *name, Span sp) {
    Compiler *C = S->C;
    const kiln_field *f = ty_field(rt, name);
    if (!f) {
        Buf b;
        buf_init_arena(&b, &C->arena);
        for (int i = 0; i < rt->rec->nfields; i++)
            buf_printf(&b, "%s'%s'", i ? ", " : "", rt->rec->fields[i].name);
        error_at(C, sp, arena_printf(&C->arena, "its fields are %s", b.p ? b.p : "none"),
                 "%s has no field '%s'", ty_name(C, rt), name);
        return &ty_error;
    }
    int64_t a = kiln_dtype_size((kiln_dtype)f->dtype);
    if (f->dtype == KILN_COMPLEX64 || f->dtype == KILN_COMPLEX128) a /= 2;
    if (C->opts.target == KILN_TARGET_CUDA &&
        (f->offset % a != 0 || rt->rec->itemsize % a != 0)) {
        /* the GPU faults on a misaligned load; Numba refuses the same records */
        error_at(C, sp, "make the dtype with np.dtype(..., align=True)",
                 "type %s is not aligned: field '%s' of %s is at byte %lld of a %lld-byte "
                 "record, which the GPU cannot read as %s",
                 kiln_dtype_name((kiln_dtype)f->dtype), name, ty_name(C, rt),
                 (long long)f->offset, (long long)rt->rec->itemsize,
                 kiln_dtype_name((kiln_dtype)f->dtype));
        return &ty_error;
    }
    if (f->ndim && f->chars) { /* a string field: its code units, for string stores */
        Type *t = (Type *)ty_array(C, ty_scalar((kiln_dtype)f->dtype), f->ndim, 'C');
        t->chars = f;
        return t;
    }
    if (f->ndim) return ty_array(C, ty_scalar((kiln_dtype)f->dtype), f->ndim, 'C');
    return ty_scalar((kiln_dtype)f->dtype);
}

/* a.f or a['f'] of an array of records: field f of each element, a view of the same
 * extents whose strides are the array's times (record size / field size), so the field's
 * size must divide the record's and its offset (emit_expr.c field_view); kiln's strides
 * count items. */
static const Type *field_view(Sema *S, Node *n, const Type *bt, const char *name) {
    Compiler *C = S->C;
    const kiln_field *f = ty_field(bt->elem, name);
    const Type *ft = record_field(S, bt->elem, name, n->attr.attr_sp);
    if (IS_ERR(ft)) return ft;
    if (f->ndim) {
        error_at(C, n->attr.attr_sp, "index the record first: a[i].f",
                 "a view of the subarray or string field '%s' across an array of records is "
                 "not supported in kernels", name);
        return &ty_error;
    }
    int64_t size = kiln_dtype_size((kiln_dtype)f->dtype);
    int64_t align = f->dtype == KILN_COMPLEX64 || f->dtype == KILN_COMPLEX128 ? size / 2 : size;
    if (bt->elem->rec->itemsize % size || f->offset % align) {
        error_at(C, n->attr.attr_sp, "make the dtype with np.dtype(..., align=True), or index "
                 "the record first: a[i].f",
                 "the field '%s' (%s at byte %lld of a %lld-byte record) has no view in a "
                 "kernel: its elements are not a whole number of %s apart", name,
                 kiln_dtype_name((kiln_dtype)f->dtype), (long long)f->offset,
                 (long long)bt->elem->rec->itemsize, kiln_dtype_name((kiln_dtype)f->dtype));
        return &ty_error;
    }
    return ty_array(C, ft, bt->ndim, 'A');
}

/* The text of an index that names a field: a string literal, or a name holding a
 * string constant (a variable, a literal_unroll item, a global, a device function's
 * parameter: strings.c); NULL otherwise (*unknown: its type is not known yet). */
static const char *field_name_of(Sema *S, Node *x, bool *unknown) {
    *unknown = false;
    if (x->kind == E_STR) return sema_string_text(S, x);
    if (x->kind != E_NAME) return NULL;
    const Type *t = sema_expr(S, x);
    *unknown = IS_UNKNOWN(t);
    if (t->kind != TY_STR || !t->lit || memchr(t->str, '\0', (size_t)t->litv)) return NULL;
    return t->str;
}

/* r['f'] and r[k] (a constant position) on a record: rewritten in place into the
 * attribute r.f, which is what sema and emit know. */
static const Type *record_subscript(Sema *S, Node *n, const Type *bt, bool store) {
    Compiler *C = S->C;
    Node *base = n->sub.base;
    if (n->sub.idx.n != 1) {
        error_at(C, n->sp, NULL, "a record takes one index: a field name or position");
        return n->ty = &ty_error;
    }
    Node *x = n->sub.idx.v[0];
    bool unknown;
    const char *name = field_name_of(S, x, &unknown);
    if (unknown) return n->ty = &ty_unknown;
    if (!name && x->kind != E_STR) {
        const Type *xt = sema_expr(S, x);
        int64_t k;
        if (!IS_ERR(xt) && ty_is_int(xt) && sema_const_int(x, &k)) {
            if (k < 0) k += bt->rec->nfields;
            if (k >= 0 && k < bt->rec->nfields) name = bt->rec->fields[k].name;
        }
    }
    if (!name) {
        error_at(C, x->sp, "write the field's name, r['f'] or r.f",
                 "a record's index is a field name or a constant position in range");
        return n->ty = &ty_error;
    }
    Span sp = x->sp;
    n->kind = E_ATTR;
    n->attr.base = base;
    n->attr.attr = name;
    n->attr.attr_sp = sp;
    const Type *t = record_field(S, bt, name, sp);
    if (store && !IS_ERR(t)) sema_mark_written(S, base);
    return n->ty = t;
}

static const Type *attribute(Sema *S, Node *n);
static const Type *tuple_slice(Sema *S, Node *n, const Type *bt);
static const Type *tuple_concat(Sema *S, Node *n, const Type *lt, const Type *rt);

/* Rewrites n, base["name"] with one string index, in place into the attribute base.name,
 * which is what sema and emit know; false when the string has no text. */
static bool subscript_to_attr(Sema *S, Node *n) {
    Node *x = n->sub.idx.v[0];
    bool unknown;
    const char *name = field_name_of(S, x, &unknown);
    if (!name) return false;
    Node *base = n->sub.base;
    Span sp = x->sp;
    n->kind = E_ATTR;
    n->attr.base = base;
    n->attr.attr = name;
    n->attr.attr_sp = sp;
    return true;
}

/* A constant index of a local or shared array whose shape is known (the name is assigned
 * once, from kiln.local.array or kiln.shared.array): out of its bounds is an error here,
 * as NumPy's IndexError, where it would read or write outside the array at run time (no
 * check is emitted for these arrays).  Negative indices count from the end. */
static bool storage_index_ok(Sema *S, const Node *n) {
    const Node *b = n->sub.base;
    const NodeList *ix = &n->sub.idx;
    if (b->kind != E_NAME || !b->sym || !b->sym->storage || b->sym->nassign != 1) return true;
    int64_t dims[KILN_MAX_NDIM];
    int nd = storage_dims(b->sym->storage, dims, KILN_MAX_NDIM);
    if (nd != ix->n) return true; /* a tuple index, or a shape not known */
    for (int i = 0; i < nd; i++) {
        int64_t k;
        if (dims[i] <= 0 || !sema_const_int(ix->v[i], &k)) continue; /* dynamic shared: 0 */
        if (k < -dims[i] || k >= dims[i]) {
            error_at(S->C, ix->v[i]->sp, NULL,
                     "index %lld is out of bounds for axis %d with size %lld (the %s array "
                     "'%s')",
                     (long long)k, i, (long long)dims[i],
                     b->sym->storage->intr->kind == IK_SHARED_ARRAY ? "shared" : "local",
                     b->sym->name);
            return false;
        }
    }
    return true;
}

const Type *sema_subscript(Sema *S, Node *n, bool store) {
    Compiler *C = S->C;
    const Type *bt = sema_expr(S, n->sub.base);
    if (IS_ERR(bt) || IS_UNKNOWN(bt)) {
        n->ty = bt;
        return bt;
    }
    if (bt->kind == TY_RECORD) return record_subscript(S, n, bt, store);
    NodeList *ix = &n->sub.idx;
    bool str_unknown = false;
    if (bt->kind == TY_ARRAY && bt->elem->kind == TY_RECORD && ix->n == 1 &&
        (ix->v[0]->kind == E_STR ||
         (ix->v[0]->kind == E_NAME && field_name_of(S, ix->v[0], &str_unknown)))) {
        /* a["f"] of an array of records: the view of field f, as a.f (attribute) */
        if (subscript_to_attr(S, n)) {
            const Type *t = sema_expr(S, n);
            if (store && !IS_ERR(t)) {
                error_at(C, n->sp, "write the elements: a['f'][i] = v",
                         "cannot assign to a whole field of an array of records in a kernel");
                t = &ty_error;
            }
            return n->ty = t;
        }
    }
    if (bt->kind == TY_NS && bt->ns->by_name && !store && ix->n == 1 && ix->v[0]->kind == E_STR) {
        /* Color["red"]: the member by name, as Color.red */
        if (subscript_to_attr(S, n)) return n->ty = attribute(S, n);
    }
    if (ty_is_vector(bt)) {
        error_at(C, n->sp, "read the lanes as v.x, v.y, v.z and v.w",
                 "a vector (%s) cannot be indexed in kernels", bt->tname);
        return n->ty = &ty_error;
    }
    if (bt->kind == TY_TUPLE) {
        if (store) {
            error_at(C, n->sp, NULL, "'tuple' object does not support item assignment");
            return n->ty = &ty_error;
        }
        if (ix->n == 1 && ix->v[0]->kind == E_SLICE) return n->ty = tuple_slice(S, n, bt);
        if (ix->n != 1) {
            error_at(C, n->sp, NULL, "tuples take one integer index in kernels");
            return n->ty = &ty_error;
        }
        const Type *it = sema_expr(S, ix->v[0]);
        if (!sema_index_type_ok(S, ix->v[0], it)) return n->ty = &ty_error;
        int64_t k;
        if (sema_const_int(ix->v[0], &k)) {
            if (k < 0) k += bt->n;
            if (k < 0 || k >= bt->n) {
                error_at(C, ix->v[0]->sp, NULL, "tuple index out of range");
                return n->ty = &ty_error;
            }
            uint64_t hi;
            if (bound_elem(n->sub.base, (int)k, &hi)) bound_set(n, hi);
            return n->ty = bt->elems[k];
        }
        /* one element type; a Python number among typed ones of its kind counts as theirs
         * ((n, 1) with n an int64: the same 8 bytes each) */
        bool same_scalars = ty_is_scalar(bt->elems[0]), all_equal = true;
        for (int i = 1; i < bt->n; i++) all_equal &= ty_equal(bt->elems[i], bt->elems[0]);
        if (all_equal) same_scalars = false; /* one type (Python floats stay Python floats) */
        for (int i = 1; i < bt->n && same_scalars; i++)
            same_scalars = ty_is_scalar(bt->elems[i]) &&
                           ty_equal(ty_strong(bt->elems[i]), ty_strong(bt->elems[0])) &&
                           (bt->elems[0]->dtype == KILN_INT64 || bt->elems[0]->dtype == KILN_FLOAT64 ||
                            bt->elems[0]->kind == TY_COMPLEX);
        for (int i = 1; i < bt->n && !same_scalars; i++)
            if (!ty_equal(bt->elems[i], bt->elems[0]) ||
                (!ty_is_scalar(bt->elems[0]) && bt->elems[0]->kind != TY_ARRAY &&
                 bt->elems[0]->kind != TY_TUPLE)) { /* (of tuples: namedtuples of one class) */
                error_at(C, ix->v[0]->sp,
                         "index it with a constant, or loop over it with literal_unroll(t)",
                         "a tuple of mixed types needs a constant index");
                return n->ty = &ty_error;
            }
        if (bt->n == 0) {
            error_at(C, n->sp, NULL, "tuple index out of range");
            return n->ty = &ty_error;
        }
        uint64_t hi;
        if (bound_elem(n->sub.base, -1, &hi)) bound_set(n, hi);
        return n->ty = same_scalars ? ty_strong(bt->elems[0]) : bt->elems[0];
    }
    if (bt->kind == TY_FUNC) { /* k[grid, block](...) inside a kernel */
        error_at(C, n->sp, "call it as a device function, k(...), which runs it in this thread",
                 "kernels cannot launch kernels (no dynamic parallelism in kiln)");
        return n->ty = &ty_error;
    }
    if (bt->kind != TY_ARRAY) {
        const Node *b = n->sub.base;
        if (b->kind == E_NAME && b->sym && b->sym->param >= 0 && bt->kind != TY_ERROR)
            /* the caller passed it: say so, as the type came from the launch's argument */
            error_at(C, b->sp, sema_scalar_param_hint(b, bt),
                     "parameter '%s' is %s (what the call passed), not an array: it is not "
                     "subscriptable",
                     b->name.id, ty_name(C, bt));
        else
            error_at(C, b->sp, sema_scalar_param_hint(b, bt), "%s is not subscriptable",
                     ty_name(C, bt));
        return n->ty = &ty_error;
    }
    if (bt->ptr && (ix->n != 1 || ix->v[0]->kind == E_SLICE)) {
        error_at(C, n->sp, "index one element, x[i]; the caller owns the extent",
                 "a %s takes one integer index: a pointer has no shape to slice", ty_name(C, bt));
        return n->ty = &ty_error;
    }
    int nint = 0, nslice = 0;
    bool ok = true;
    Node **idx = ix->v;
    int nidx = ix->n;
    for (int i = 0; i < nidx; i++) {
        Node *x = idx[i];
        if (x->kind == E_SLICE) {
            nslice++;
            x->ty = &ty_none;
            if (!slice_part_ok(S, x->slice.lo) || !slice_part_ok(S, x->slice.hi) ||
                !slice_part_ok(S, x->slice.step))
                ok = false;
            int64_t st;
            if (x->slice.step && sema_const_int(x->slice.step, &st) && st == 0) {
                error_at(C, x->slice.step->sp, NULL, "slice step cannot be zero");
                ok = false;
            }
            continue;
        }
        const Type *t = sema_expr(S, x);
        if (t->kind == TY_TUPLE && bt->ptr) {
            error_at(C, x->sp, "index one element, x[i]",
                     "a %s takes one integer index, not a tuple", ty_name(C, bt));
            return n->ty = &ty_error;
        }
        if (t->kind == TY_TUPLE && nidx == 1) {
            /* a[idx] with idx a tuple of integers */
            for (int k = 0; k < t->n; k++)
                if (!ty_is_int(t->elems[k])) {
                    error_at(C, x->sp, NULL, "array indices must be integers, not %s",
                             ty_name(C, t->elems[k]));
                    return n->ty = &ty_error;
                }
            nint = t->n;
            continue;
        }
        if (IS_UNKNOWN(t)) return n->ty = &ty_unknown;
        if (!sema_index_type_ok(S, x, t)) ok = false;
        nint++;
    }
    if (!ok) return n->ty = &ty_error;
    if (nint + nslice > bt->ndim) {
        error_at(C, n->sp, NULL,
                 "too many indices for array: array is %d-dimensional, but %d were indexed",
                 bt->ndim, nint + nslice);
        return n->ty = &ty_error;
    }
    if (nslice == 0 && nint == bt->ndim) {
        if (!storage_index_ok(S, n)) return n->ty = &ty_error;
        if (store) sema_mark_written(S, n->sub.base);
        return n->ty = bt->elem;
    }
    if (store) {
        error_at(C, n->sp, "assign element by element in a loop",
                 "assigning to a slice or a partly indexed array is not supported in kernels");
        return n->ty = &ty_error;
    }
    if (nidx == 1 && idx[0]->kind != E_SLICE && idx[0]->ty->kind == TY_TUPLE) {
        return n->ty = ty_array(C, bt->elem, bt->ndim - nint, bt->layout == 'C' ? 'C' : 'A');
    }
    char lay = view_layout(bt, idx, nidx);
    return n->ty = ty_array(C, bt->elem, bt->ndim - nint, lay);
}

/* ---- intrinsics as values ------------------------------------------------------------- */

static const Type *intrinsic_value(Sema *S, Node *n, const NsRef *ns) {
    const Intrinsic *in = ns->intr;
    n->intr = in;
    switch ((IntrKind)in->kind) {
    case IK_SREG:
        bound_set(n, bound_sreg(in->sub));
        S->res->uses_sregs = true;
        return ty_scalar(KILN_INT64);
    case IK_WARPSIZE:
        sema_set_const_int(n, 32);
        return &ty_weak_int;
    case IK_LANEID:
        S->res->uses_sregs = true;
        sema_block_feature(S, n->sp, "kiln.laneid");
        bound_set(n, 31);
        return ty_scalar(KILN_INT64);
    case IK_CONST: {
        static const double v[] = {3.141592653589793, 2.718281828459045, INFINITY, NAN,
                                   6.283185307179586};
        n->flags |= NF_CONST;
        n->cval.f = v[in->sub];
        return &ty_weak_float;
    }
    case IK_DTYPE: return ty_dtype(S->C, (kiln_dtype)in->sub);
    default: {
        Type *t = arena_alloc(&S->C->arena, sizeof *t);
        t->kind = TY_NS;
        t->ns = ns;
        return t;
    }
    }
}

static const Type *attribute(Sema *S, Node *n) {
    Compiler *C = S->C;
    const Type *bt = sema_expr(S, n->attr.base);
    const char *a = n->attr.attr;
    if (IS_ERR(bt) || IS_UNKNOWN(bt)) return bt;
    if (bt->kind == TY_NS) {
        const NsRef *ns = bt->ns;
        const char *full = arena_printf(&C->arena, "%s.%s", ns->name, a);
        if (!ns->intr) {
            GVal *g = sema_resolve(S, ns->scope, full, n->sp);
            if (g->kind == KILN_VAL_NAMESPACE && g->ns && g->ns->intr)
                return intrinsic_value(S, n, g->ns);
            return sema_global(S, n, g, full);
        }
        const Intrinsic *in = intrinsic_lookup(full);
        const char *dotted = NULL;
        if (!in && ns->scope && strcmp(ns->name, "kiln") == 0 && strcmp(a, "random") == 0 &&
            (dotted = sema_dotted(S, n)) != NULL) {
            /* kiln.random (Numba's cuda.random): a module of device functions written in
             * Python, found through the resolver like any module */
            GVal *g = sema_resolve(S, ns->scope, dotted, n->sp);
            return sema_global(S, n, g, dotted);
        }
        if (!in && strcmp(ns->name, "kiln") == 0 && strcmp(a, "types") == 0)
            return bt; /* kiln.types.float16 (Numba's cuda.types.float16) is kiln.float16 */
        if (!in) {
            /* Numba names kiln does not have, with what to write instead */
            static const char *const numba_hints[][2] = {
                {"libdevice", "use math.* (sqrt, exp, erf...), which map to the same functions"},
                {"mapped_array", "allocate outside the kernel and pass the array"},
                {"device_array", "allocate outside the kernel, or use kiln.local.array(n, dtype)"},
                {"to_device", "copy outside the kernel and pass the device array"},
            };
            const char *hint = "see LANGUAGE.md for the kernel intrinsics";
            for (size_t i = 0; i < COUNTOF(numba_hints); i++)
                if (strcmp(a, numba_hints[i][0]) == 0) hint = numba_hints[i][1];
            if (strcmp(ns->name, "kiln") == 0)
                error_at(C, n->attr.attr_sp, hint, "kiln.%s is not available in kernels", a);
            else
                error_at(C, n->attr.attr_sp, NULL, "%s is not supported in kernels", full);
            return &ty_error;
        }
        return intrinsic_value(S, n, sema_ns(S, full, in, NULL));
    }
    if (ty_is_ptr(bt)) {
        error_at(C, n->attr.attr_sp, "pass the length as a kernel argument",
                 "a %s has no attribute '%s': a pointer has no shape or size, the caller owns "
                 "the extent", ty_name(C, bt), a);
        return &ty_error;
    }
    if (bt->kind == TY_GROUP) { /* g.sync() itself is a call (group_method) */
        if (strcmp(a, "sync") == 0)
            error_at(C, n->attr.attr_sp, "call g.sync() with no arguments",
                     "a grid group's sync() is called with no arguments, as g.sync()");
        else
            error_at(C, n->attr.attr_sp, "call g.sync() with no arguments",
                     "a grid group has no attribute '%s' in kernels (only sync())", a);
        return &ty_error;
    }
    if (bt->kind == TY_ARRAY) {
        if (strcmp(a, "shape") == 0 || strcmp(a, "strides") == 0) {
            const Type *el[KILN_MAX_NDIM];
            for (int i = 0; i < bt->ndim; i++) el[i] = ty_scalar(KILN_INT64);
            n->flags |= NF_NONNEG;
            return ty_tuple(C, bt->ndim, el);
        }
        if (strcmp(a, "size") == 0) {
            n->flags |= NF_NONNEG;
            return ty_scalar(KILN_INT64);
        }
        if (strcmp(a, "ndim") == 0) {
            sema_set_const_int(n, bt->ndim);
            return &ty_weak_int;
        }
        if (strcmp(a, "itemsize") == 0) {
            sema_set_const_int(n, kiln_dtype_size((kiln_dtype)bt->elem->dtype));
            return &ty_weak_int;
        }
        if (strcmp(a, "dtype") == 0) return ty_dtype(C, (kiln_dtype)bt->elem->dtype);
        if (strcmp(a, "real") == 0 || strcmp(a, "imag") == 0) {
            if (bt->elem->kind == TY_COMPLEX) /* a view of every other float */
                return ty_array(C, ty_complex_part(bt->elem), bt->ndim, 'A');
            if (a[0] == 'r') return bt;
            error_at(C, n->attr.attr_sp, "use the elements: x[i].imag is 0",
                     "a.imag of a real array is not supported in kernels");
            return &ty_error;
        }
        if (strcmp(a, "T") == 0 && !bt->ptr) { /* a view with the axes reversed */
            if (bt->ndim < 2) return bt;
            char lay = bt->layout == 'C' ? 'F' : bt->layout == 'F' ? 'C' : 'A';
            return ty_array(C, bt->elem, bt->ndim, lay);
        }
        if (bt->elem->kind == TY_RECORD && !bt->ptr && ty_field(bt->elem, a))
            return field_view(S, n, bt, a);
        error_at(C, n->attr.attr_sp, "kernels can use a.shape, a.size, a.ndim, a.dtype and a.T",
                 "arrays have no attribute '%s' in kernels", a);
        return &ty_error;
    }
    if (bt->kind == TY_RECORD) return record_field(S, bt, a, n->attr.attr_sp);
    if (bt->kind == TY_TUPLE && bt->fields) { /* a vector's lane, a namedtuple's field */
        int k = ty_tuple_field(bt, a);
        if (k >= 0) return bt->elems[k];
    }
    if (ty_is_scalar(bt) && (strcmp(a, "real") == 0 || strcmp(a, "imag") == 0))
        return sema_complex_part(S, n, bt);
    const Node *b = n->attr.base;
    if (b->kind == E_NAME && b->sym && b->sym->param >= 0 && ty_is_scalar(bt) &&
        (strcmp(a, "size") == 0 || strcmp(a, "shape") == 0 || strcmp(a, "ndim") == 0 ||
         strcmp(a, "strides") == 0))
        /* an array attribute of a number: the caller passed a number for an array */
        error_at(C, n->attr.attr_sp, "pass an array for it",
                 "parameter '%s' is %s (what the call passed), not an array: it has no "
                 "attribute '%s'",
                 b->name.id, ty_name(C, bt), a);
    else
        error_at(C, n->attr.attr_sp, NULL, "%s has no attribute '%s'", ty_name(C, bt), a);
    return &ty_error;
}

/* ---- expressions -------------------------------------------------------------------- */

/* `a is b`, `a is not b`: Python's identity, for what has one in a kernel: None (a value
 * is None only when it is None: a constant), and True/False, whose identity among bools is
 * equality; a bool literal against another type is never identical.  Two typed numbers
 * take Numba's meaning: == when their types are one, else never identical; so do two
 * tuples of typed numbers (variables, arguments).  A Python number (a literal) and arrays
 * have no identity a kernel can ask for. */
static const Type *compare(Sema *S, Node *n);
static bool tuple_readable(const Node *n);

bool sema_maybe_none(const Node *n) {
    if (!n) return false;
    if (n->kind == E_NAME) return n->sym && n->sym->maybe_none;
    return n->kind == E_CALL && n->callee && n->callee->ret_none;
}


/* The IntEnum class tag of a kernel parameter named as it was passed (never assigned in
 * the body): 0 for a plain int; -1 when unknown (another expression, a device function's
 * parameter), where `is` compares values. */
static int enum_tag_of(Sema *S, const Node *o) {
    if (!S->cur || !S->cur->is_kernel || o->kind != E_NAME || !o->sym || o->sym->param < 0 ||
        o->sym->param >= KILN_MAX_PARAMS || o->sym->nassign > 0)
        return -1;
    return S->C->enum_tags[o->sym->param];
}

static const Type *identity(Sema *S, Node *n) {
    Compiler *C = S->C;
    NodeList *ops = &n->cmp.operands;
    if (ops->n != 2) {
        error_at(C, n->sp, "write (a is b) and (b is c)",
                 "'is' in a chained comparison is not supported in kernels");
        return &ty_error;
    }
    const Type *a = sema_expr(S, ops->v[0]), *b = sema_expr(S, ops->v[1]);
    if (IS_ERR(a) || IS_ERR(b)) return &ty_error;
    if (IS_UNKNOWN(a) || IS_UNKNOWN(b)) return &ty_unknown;
    bool neg = n->cmp.ops[0] == C_ISNOT;
    bool lit_a = (ops->v[0]->flags & NF_CONST) && a->kind == TY_BOOL;
    bool lit_b = (ops->v[1]->flags & NF_CONST) && b->kind == TY_BOOL;
    n->flags &= (uint16_t)~(NF_CONST | NF_PROVISIONAL); /* (what a pass before knew) */
    if ((a->kind == TY_NONE && sema_maybe_none(ops->v[1])) ||
        (b->kind == TY_NONE && sema_maybe_none(ops->v[0])))
        return ty_scalar(KILN_BOOL); /* a result that may be None: asked at run time */
    if (a->kind == TY_NONE || b->kind == TY_NONE) {
        const Node *o = ops->v[a->kind == TY_NONE ? 1 : 0];
        /* a local may turn out to hold such a result in a later pass (an assignment
         * further down a loop): known only in the last pass */
        if (!S->final && o->kind == E_NAME && o->sym && o->sym->param < 0 && ty_is_scalar(o->ty))
            n->flags |= NF_PROVISIONAL;
        n->flags |= NF_CONST;
        n->cval.i = (a->kind == TY_NONE && b->kind == TY_NONE) != neg;
        return ty_scalar(KILN_BOOL);
    }
    if (a->kind == TY_BOOL && b->kind == TY_BOOL) { /* equality, as a compare */
        n->cmp.ops[0] = neg ? C_NE : C_EQ;
        return compare(S, n);
    }
    if ((lit_a || lit_b) && ty_is_scalar(a) && ty_is_scalar(b)) {
        n->flags |= NF_CONST; /* a bool literal is not any other type's value */
        n->cval.i = neg;
        return ty_scalar(KILN_BOOL);
    }
    if (ty_is_scalar(a) && ty_is_scalar(b) && !a->weak && !b->weak) {
        /* Numba's meaning for immutable values: of one type, `is` is ==; of two types,
         * never identical.  An IntEnum member passed as an argument is its int, tagged with
         * its class (kiln.c): members of two classes (or one and a plain int) are never
         * identical, whatever their values, while both parameters hold what was passed */
        int ta = enum_tag_of(S, ops->v[0]), tb = enum_tag_of(S, ops->v[1]);
        if (ta >= 0 && tb >= 0 && ta != tb) {
            n->flags |= NF_CONST;
            n->cval.i = neg;
            return ty_scalar(KILN_BOOL);
        }
        if (ty_equal(ty_strong(a), ty_strong(b))) {
            n->cmp.ops[0] = neg ? C_NE : C_EQ;
            return compare(S, n);
        }
        n->flags |= NF_CONST;
        n->cval.i = neg;
        return ty_scalar(KILN_BOOL);
    }
    if (a->kind == TY_TUPLE && b->kind == TY_TUPLE && !(ops->v[0]->flags & NF_CONST) &&
        !(ops->v[1]->flags & NF_CONST) && tuple_readable(ops->v[0]) &&
        tuple_readable(ops->v[1])) {
        /* tuples of typed numbers, as numbers: Numba's meaning for immutable values (an
         * Enum member passed as an argument is its value, a tuple for Planet.EARTH) */
        if (ty_equal(a, b)) {
            n->cmp.ops[0] = neg ? C_NE : C_EQ;
            return compare(S, n);
        }
        n->flags |= NF_CONST;
        n->cval.i = neg;
        return ty_scalar(KILN_BOOL);
    }
    error_at(C, n->sp, "compare values with == or !=",
             "'is' compares with None, True, False or a typed number in kernels, not %s and %s",
             ty_name(C, a),
             ty_name(C, b));
    return &ty_error;
}

/* A tuple operand whose elements tuple_equality reads one by one: a tuple written out,
 * or a pure expression (a name, a.shape) read again per element. */
static bool tuple_readable(const Node *n) { return n->kind == E_TUPLE || ast_is_pure(n, 0); }

/* Element i of a tuple operand: the written-out element, or x[i] on a copy of x. */
static Node *tuple_elem(Compiler *C, Node *x, int i) {
    if (x->kind == E_TUPLE) return x->tuple.v[i];
    Node *e = node_new(C, E_SUBSCRIPT, x->sp);
    e->sub.base = ast_copy_pure(C, x);
    Node *k = node_new(C, E_INT, x->sp);
    k->ilit.v = (uint64_t)i;
    int cap = 0;
    nodelist_push(C, &e->sub.idx, k, &cap);
    return e;
}

/* t + u of tuples: the tuple of t's elements then u's, written out (n becomes it). */
static const Type *tuple_concat(Sema *S, Node *n, const Type *lt, const Type *rt) {
    Compiler *C = S->C;
    Node *l = n->bin.l, *r = n->bin.r;
    if ((l->kind != E_TUPLE && !ast_is_pure(l, 0)) || (r->kind != E_TUPLE && !ast_is_pure(r, 0))) {
        error_at(C, n->sp, "assign the tuples to variables first",
                 "tuples joined with + in a kernel must be variables or written out, not calls");
        return &ty_error;
    }
    Node *t = node_new(C, E_TUPLE, n->sp);
    int cap = 0;
    for (int k = 0; k < lt->n; k++) nodelist_push(C, &t->tuple, tuple_elem(C, l, k), &cap);
    for (int k = 0; k < rt->n; k++) nodelist_push(C, &t->tuple, tuple_elem(C, r, k), &cap);
    Span sp = n->sp;
    *n = *t;
    n->sp = sp;
    return sema_expr(S, n);
}

/* A slice bound: absent, or a constant integer (false: not a constant). */
static bool slice_bound(Sema *S, Node *b, int64_t *v, bool *given) {
    *given = b != NULL;
    if (!b) return true;
    const Type *t = sema_expr(S, b);
    return !IS_ERR(t) && sema_const_int(b, v);
}

/* t[lo:hi:step] of a tuple with constant bounds: the tuple of the elements it picks, as
 * Python's slice picks them (n becomes that tuple written out). */
static const Type *tuple_slice(Sema *S, Node *n, const Type *bt) {
    Compiler *C = S->C;
    Node *base = n->sub.base, *sl = n->sub.idx.v[0];
    int64_t lo = 0, hi = 0, step = 1;
    bool glo, ghi, gstep;
    if (!slice_bound(S, sl->slice.lo, &lo, &glo) || !slice_bound(S, sl->slice.hi, &hi, &ghi) ||
        !slice_bound(S, sl->slice.step, &step, &gstep)) {
        error_at(C, sl->sp, "slice tuples with constants: t[1:], t[:-1], t[::2]",
                 "a tuple's slice bounds must be constant integers in kernels");
        return &ty_error;
    }
    if (step == 0) {
        error_at(C, sl->sp, NULL, "slice step cannot be zero");
        return &ty_error;
    }
    if (base->kind != E_TUPLE && !ast_is_pure(base, 0)) {
        error_at(C, base->sp, "assign the tuple to a variable first",
                 "a tuple sliced in a kernel must be a variable or written out, not a call");
        return &ty_error;
    }
    int64_t len = bt->n; /* Python's PySlice_AdjustIndices */
    if (!glo) lo = step < 0 ? len - 1 : 0;
    else if (lo < 0) lo = lo + len < 0 ? (step < 0 ? -1 : 0) : lo + len;
    else if (lo >= len) lo = step < 0 ? len - 1 : len;
    if (!ghi) hi = step < 0 ? -1 : len;
    else if (hi < 0) hi = hi + len < 0 ? (step < 0 ? -1 : 0) : hi + len;
    else if (hi >= len) hi = step < 0 ? len - 1 : len;
    Node *t = node_new(C, E_TUPLE, n->sp);
    int cap = 0;
    for (int64_t k = lo; step > 0 ? k < hi : k > hi; k += step)
        nodelist_push(C, &t->tuple, tuple_elem(C, base, (int)k), &cap);
    Span sp = n->sp;
    *n = *t;
    n->sp = sp;
    return sema_expr(S, n);
}

/* t == u and t != u on tuples, as Python compares them: element by element, joined by
 * and (or, for !=), a balanced tree; tuples of other lengths are never equal.  n becomes
 * that expression (typed again on every pass, as any node). */
static Node *tuple_cmp_tree(Compiler *C, Node *a, Node *b, int lo, int hi, bool ne, Span sp) {
    if (hi - lo == 1) {
        Node *c = node_new(C, E_COMPARE, sp);
        int cap = 0;
        nodelist_push(C, &c->cmp.operands, tuple_elem(C, a, lo), &cap);
        nodelist_push(C, &c->cmp.operands, tuple_elem(C, b, lo), &cap);
        c->cmp.ops = arena_alloc(&C->arena, 1);
        c->cmp.ops[0] = (uint8_t)(ne ? C_NE : C_EQ);
        return c;
    }
    int mid = lo + (hi - lo) / 2;
    Node *j = node_new(C, E_BOOLOP, sp);
    j->op = ne ? BO_OR : BO_AND;
    j->bin.l = tuple_cmp_tree(C, a, b, lo, mid, ne, sp);
    j->bin.r = tuple_cmp_tree(C, a, b, mid, hi, ne, sp);
    return j;
}

static const Type *tuple_equality(Sema *S, Node *n, const Type *ta, const Type *tb) {
    Compiler *C = S->C;
    Node *a = n->cmp.operands.v[0], *b = n->cmp.operands.v[1];
    bool ne = n->cmp.ops[0] == C_NE;
    if (!tuple_readable(a) || !tuple_readable(b)) {
        error_at(C, n->sp, "assign the tuple to a variable first",
                 "tuples compare element by element here, so each side must be a tuple written "
                 "out or a variable (or attribute such as a.shape), not a call");
        return &ty_error;
    }
    Node *r;
    if (ta->n != tb->n || ta->n == 0) { /* () == () is True; other lengths never equal */
        r = node_new(C, E_BOOL, n->sp);
        r->blit = (ta->n == tb->n) != ne;
    } else {
        r = tuple_cmp_tree(C, a, b, 0, ta->n, ne, n->sp);
    }
    Span sp = n->sp;
    *n = *r;
    n->sp = sp;
    return sema_expr(S, n);
}

/* A scalar constant's value, for folding a comparison or a truth test: an exact integer
 * (*isf false) or a double.  False for anything else; *prov set when the constant is only
 * this pass's (NF_PROVISIONAL). */
static bool const_num(const Node *n, const Type *t, bool *isf, i128_ *iv, double *fv,
                      bool *prov) {
    if (!(n->flags & NF_CONST) || !t || !ty_is_scalar(t)) return false;
    if (n->flags & NF_PROVISIONAL) *prov = true;
    *isf = false;
    switch (t->kind) {
    case TY_FLOAT: *isf = true; *fv = n->cval.f; return true;
    case TY_BOOL: *iv = n->cval.i != 0; return true;
    case TY_INT:
        *iv = !t->weak && t->dtype == KILN_UINT64 ? (i128_)n->cval.u : (i128_)n->cval.i;
        return true;
    default: return false;
    }
}

/* op of two constants as Python compares them: 0 or 1, or -1 when an integer past 2**53
 * meets a float (a double would not hold it exactly). */
static int const_compare(CmpOp op, bool af, i128_ ai, double ad, bool bf, i128_ bi, double bd) {
    int lt, eq;
    if (!af && !bf) {
        lt = ai < bi;
        eq = ai == bi;
    } else {
        const i128_ exact = (i128_)1 << 53;
        if ((!af && (ai > exact || ai < -exact)) || (!bf && (bi > exact || bi < -exact))) return -1;
        double x = af ? ad : (double)ai, y = bf ? bd : (double)bi;
        if (x != x || y != y) return op == C_NE; /* NaN: unordered */
        lt = x < y;
        eq = x == y;
    }
    switch (op) {
    case C_LT: return lt;
    case C_LE: return lt || eq;
    case C_GT: return !lt && !eq;
    case C_GE: return !lt;
    case C_EQ: return eq;
    case C_NE: return !eq;
    default: return -1;
    }
}

/* A chained comparison of constants, folded (as Python evaluates it), so that a branch
 * it decides is pruned (sema.c, const_truth): `if N > 0:` with a frozen N = 0. */
static void fold_compare(Node *n) {
    NodeList *ops = &n->cmp.operands;
    bool prov = false;
    int all = 1;
    for (int i = 0; i + 1 < ops->n; i++) {
        bool af, bf;
        i128_ ai = 0, bi = 0;
        double ad = 0, bd = 0;
        if (!const_num(ops->v[i], ops->v[i]->ty, &af, &ai, &ad, &prov) ||
            !const_num(ops->v[i + 1], ops->v[i + 1]->ty, &bf, &bi, &bd, &prov))
            return;
        int r = const_compare((CmpOp)n->cmp.ops[i], af, ai, ad, bf, bi, bd);
        if (r < 0) return;
        all = all && r;
    }
    n->flags |= NF_CONST;
    if (prov) n->flags |= NF_PROVISIONAL;
    n->cval.i = all;
}

/* The truth of a constant that is not provisional: 0 or 1, or -1 (not known now). */
static int const_truth_of(const Node *n) {
    bool isf, prov = false;
    i128_ iv = 0;
    double fv = 0;
    if (!const_num(n, n->ty, &isf, &iv, &fv, &prov) || prov) return -1;
    return isf ? fv != 0 : iv != 0;
}

/* n becomes `live`, an operand already typed (the other one never runs): a dead operand
 * is not typed, as Numba prunes dead branches before typing, so what only it does (a
 * division by a constant zero, a value of another type) is no error.  n keeps its span. */
static const Type *become(Node *n, Node *live) {
    Span sp = n->sp;
    *n = *live;
    n->sp = sp;
    return live->ty;
}

/* Whether link i - 1 of chained comparison n, between two constants, is False: Python
 * stops there, so the operands after i are dropped, never typed (`0 < N <= TOTAL // N`
 * with a frozen N = 0), and the chain folds to False. */
static bool chain_ends(Node *n, int i) {
    NodeList *ops = &n->cmp.operands;
    bool af, bf, prov = false;
    i128_ ai = 0, bi = 0;
    double ad = 0, bd = 0;
    if (i + 1 >= ops->n || !const_num(ops->v[i - 1], ops->v[i - 1]->ty, &af, &ai, &ad, &prov) ||
        !const_num(ops->v[i], ops->v[i]->ty, &bf, &bi, &bd, &prov) || prov ||
        const_compare((CmpOp)n->cmp.ops[i - 1], af, ai, ad, bf, bi, bd) != 0)
        return false;
    ops->n = i + 1;
    return true;
}

static const Type *compare(Sema *S, Node *n) {
    Compiler *C = S->C;
    NodeList *ops = &n->cmp.operands;
    n->flags &= (uint16_t)~NF_PROVISIONAL;
    for (int i = 0; i + 1 < ops->n; i++)
        if (n->cmp.ops[i] >= C_IS) return identity(S, n);
    if (ops->n == 2 && (n->cmp.ops[0] == C_EQ || n->cmp.ops[0] == C_NE)) {
        const Type *ta = sema_expr(S, ops->v[0]), *tb = sema_expr(S, ops->v[1]);
        if (IS_ERR(ta) || IS_ERR(tb)) return &ty_error;
        if (ta->kind == TY_TUPLE && tb->kind == TY_TUPLE && !ta->vec && !tb->vec)
            return tuple_equality(S, n, ta, tb);
    }
    if (ops->n >= 2) { /* string constants (strings.c) */
        const Type *ta = sema_expr(S, ops->v[0]), *tb = sema_expr(S, ops->v[1]), *st;
        if (IS_ERR(ta) || IS_ERR(tb)) return &ty_error;
        if (sema_str_compare(S, n, ta, tb, &st)) return st;
    }
    const Type **tys = arena_alloc(&C->arena, sizeof(Type *) * (size_t)ops->n);
    bool unk = false;
    for (int i = 0; i < ops->n; i++) {
        tys[i] = sema_expr(S, ops->v[i]);
        if (IS_ERR(tys[i])) return &ty_error;
        if (i > 0 && chain_ends(n, i)) break; /* the operands after it never run */
        if (IS_UNKNOWN(tys[i])) unk = true;
        else if (!ty_is_scalar(tys[i])) {
            if (tys[i]->kind == TY_NONE)
                error_at(C, ops->v[i]->sp, "keep a flag variable instead of None",
                         "comparisons with None are not supported in kernels");
            else
                error_at(C, ops->v[i]->sp,
                         tys[i]->kind == TY_ARRAY   ? "compare elements: a[i] < b[i]"
                         : tys[i]->kind == TY_TUPLE ? "compare the elements in order: "
                                                      "a[0] < b[0] or (a[0] == b[0] and a[1] < b[1])"
                                                    : NULL,
                         tys[i]->kind == TY_TUPLE
                             ? "cannot order %s: tuples compare with == and != only in kernels"
                             : "cannot compare %s",
                         ty_name(C, tys[i]));
            return &ty_error;
        }
    }
    if (unk) return &ty_unknown;
    n->cmp.optys = arena_alloc(&C->arena, sizeof(Type *) * (size_t)ops->n);
    for (int i = 0; i + 1 < ops->n; i++) {
        const Type *a = tys[i], *b = tys[i + 1];
        Node *na = ops->v[i], *nb = ops->v[i + 1];
        const Type *o;
        bool ai = a->kind != TY_FLOAT, bi = b->kind != TY_FLOAT;
        if (a->kind == TY_COMPLEX || b->kind == TY_COMPLEX) {
            CmpOp op = (CmpOp)n->cmp.ops[i];
            if (op != C_EQ && op != C_NE) {
                error_at(C, n->sp, "compare abs(z) or z.real",
                         "complex numbers are not ordered: %s and %s cannot be compared with "
                         "<, <=, > or >=",
                         ty_name(C, a), ty_name(C, b));
                return &ty_error;
            }
            o = ty_promote(a, b);
        } else if (ai && bi && !a->weak && !b->weak && ty_is_signed(a) != ty_is_signed(b) &&
            a->kind != TY_BOOL && b->kind != TY_BOOL) {
            o = ty_promote(a, b);
            if (o->kind == TY_FLOAT) o = NULL; /* int64 vs uint64: exact comparison */
        } else if ((a->weak && (a->kind == TY_FLOAT || a->kind == TY_INT) && !b->weak &&
                    b->kind == TY_FLOAT && b->dtype != KILN_FLOAT64) ||
                   (b->weak && (b->kind == TY_FLOAT || b->kind == TY_INT) && !a->weak &&
                    a->kind == TY_FLOAT && a->dtype != KILN_FLOAT64)) {
            /* a Python number against a float32 (or float16) compares exactly, in float64,
             * as Python and Numba do: float32(0.1) > 0.1 is True there, where rounding
             * the literal to float32 (NumPy 2's weak rule) would make them equal */
            o = ty_scalar(KILN_FLOAT64);
        } else if (weak_may_not_fit(na, a, b) || weak_may_not_fit(nb, b, a)) {
            /* a Python int compares exactly: in int64, or signed against uint64 */
            const Type *typed = a->weak ? b : a;
            o = typed->dtype == KILN_UINT64 ? NULL : ty_scalar(KILN_INT64);
        } else {
            o = ty_promote(a, b);
        }
        n->cmp.optys[i] = o;
    }
    fold_compare(n);
    return ty_scalar(KILN_BOOL);
}

/* The type of a value that is one of two operands (and/or, a conditional expression),
 * t their promotion: int64 where t is a narrower typed integer that a Python int among
 * them may not fit, as Numba types it, so that the value (and its truth) stays the one
 * Python gives. */
static const Type *hold_weak(Sema *S, const Node *n, const char *what, const Node *a,
                             const Type *at, const Node *b, const Type *bt, const Type *t) {
    if (!t->weak && t->kind == TY_INT && t->dtype == KILN_UINT64) {
        /* a negative Python int and a uint64: no integer type holds both */
        int64_t lo, hi;
        if ((sema_weak_int_range(a, at, &lo, &hi) && lo < 0) ||
            (sema_weak_int_range(b, bt, &lo, &hi) && lo < 0)) {
            error_at(S->C, n->sp, "convert the uint64 side, e.g. kiln.int64(x)",
                     "a negative Python int and a uint64: no integer type holds both %s", what);
            return &ty_error;
        }
        return t;
    }
    if (t->weak || t->kind != TY_INT || t->dtype == KILN_INT64)
        return t;
    return weak_may_not_fit(a, at, t) || weak_may_not_fit(b, bt, t) ? ty_scalar(KILN_INT64) : t;
}

static const Type *expr_inner(Sema *S, Node *n) {
    Compiler *C = S->C;
    switch ((NodeKind)n->kind) {
    case E_INT:
        if (n->ilit.big) {
            n->flags |= NF_CONST | NF_NONNEG | NF_PYINT;
            n->cval.u = n->ilit.v;
            return ty_scalar(KILN_UINT64);
        }
        sema_set_const_int(n, (int64_t)n->ilit.v);
        n->flags |= NF_PYINT;
        return &ty_weak_int;
    case E_FLOAT:
        n->flags |= NF_CONST;
        n->cval.f = n->flit;
        return &ty_weak_float;
    case E_BOOL:
        sema_set_const_int(n, n->blit);
        return ty_scalar(KILN_BOOL);
    case E_IMAG: return &ty_weak_complex; /* emitted from n->flit: never NF_CONST */
    case E_NONE: return &ty_none;
    case E_STR: return sema_str_literal(S, n); /* a constant (strings.c) */
    case E_NAME: {
        if (n->flags & NF_BUILTIN) { /* a rewritten loop's len/min/range/int (for_iter.c) */
            const Intrinsic *in =
                intrinsic_lookup(arena_printf(&C->arena, "builtins.%s", n->name.id));
            ASSERT(in);
            return intrinsic_value(S, n, sema_ns(S, in->name, in, NULL));
        }
        Sym *s = n->sym ? n->sym : sema_local(S, n->name.id); /* preset: syms.c's web */
        if (s) {
            n->sym = s;
            s->read = true;
            if (S->final && s->param < 0 && S->loop_depth == 0 && n->sp.off < s->first_assign) {
                error_at(C, n->sp, "assign it before this line",
                         "local variable '%s' is used before it is assigned", s->name);
                return &ty_error;
            }
            if (IS_UNKNOWN(s->ty) && s->poisoned) {
                /* silent only after the error that poisoned it was reported; never
                 * let an unreported error reach the emitter */
                if (S->final && C->nerrors == 0)
                    error_at(C, n->sp, NULL, "local variable '%s' is used before it is assigned",
                             s->name);
                return &ty_error;
            }
            if (IS_UNKNOWN(s->ty)) {
                if (S->final) {
                    error_at(C, n->sp, NULL, "local variable '%s' is used before it is assigned",
                             s->name);
                    return &ty_error;
                }
                return &ty_unknown;
            }
            if (s->ty->kind == TY_BOOL && s->ty->lit && s->param >= 0 && s->nassign == 0) {
                n->flags |= NF_CONST; /* a literal bool argument (sema.c literal_arg) */
                n->cval.i = s->ty->litv;
            }
            int64_t lo;
            if (ty_is_int(s->ty) && (!s->maybe_neg || !ty_is_signed(s->ty)))
                bound_set(n, bound_sym(s));
            else if (sema_fact_lo(S, n, &lo) && lo >= 0)
                bound_set(n, bound_tymax(s->ty));
            return s->ty;
        }
        const Type *nt = nested_value(S, n);
        if (nt) return nt;
        GVal *g = sema_resolve(S, S->cur->fi->scope, n->name.id, n->sp);
        if (g->kind == KILN_VAL_NAMESPACE && g->ns && g->ns->intr)
            return intrinsic_value(S, n, g->ns);
        return sema_global(S, n, g, n->name.id);
    }
    case E_BINOP: {
        if (n->bin.l->kind == E_STR && (n->op == B_MOD || n->op == B_ADD)) { /* 'x=%f' % v */
            error_at(C, n->sp, "give print() the parts: print('x =', v), which it formats as "
                     "Python does",
                     n->op == B_MOD ? "%%-formatting of strings is not supported in kernels"
                                    : "joining strings is not supported in kernels");
            return &ty_error;
        }
        const Type *lt = sema_expr(S, n->bin.l);
        const Type *rt = sema_expr(S, n->bin.r);
        if (n->op == B_ADD && lt->kind == TY_TUPLE && rt->kind == TY_TUPLE && !lt->vec &&
            !rt->vec)
            return tuple_concat(S, n, lt, rt);
        return sema_binop(S, n, (BinOp)n->op, n->bin.l, n->bin.r, lt, rt, &n->opty);
    }
    case E_UNARY: {
        Node *x = n->un.x;
        const Type *t = sema_expr(S, x);
        if (IS_ERR(t) || IS_UNKNOWN(t)) return t;
        if (n->op == U_NOT) {
            if (!sema_check_scalar_operand(S, x, t, "the operand of not")) return &ty_error;
            n->opty = t;
            n->flags &= (uint16_t)~NF_PROVISIONAL;
            bool isf, prov = false;
            i128_ iv = 0;
            double fv = 0;
            if (const_num(x, t, &isf, &iv, &fv, &prov)) { /* `not DEBUG`: a constant */
                n->flags |= NF_CONST | (prov ? NF_PROVISIONAL : 0);
                n->cval.i = isf ? fv == 0 : iv == 0;
            }
            return ty_scalar(KILN_BOOL);
        }
        if (!ty_is_scalar(t)) {
            error_at(C, n->sp, t->kind == TY_ARRAY ? "index the elements: -a[i]" : NULL,
                     "bad operand type for unary %s: %s",
                     n->op == U_NEG ? "-" : n->op == U_POS ? "+" : "~", ty_name(C, t));
            return &ty_error;
        }
        bool c = (x->flags & NF_CONST) != 0;
        i128_ pv;
        if ((n->op == U_NEG || n->op == U_INVERT) && pyint_const(x, t, &pv)) {
            n->flags &= (uint16_t)~(NF_CONST | NF_NONNEG | NF_BOUNDED | NF_PYINT);
            const Type *ft = set_pyint(S, n, n->op == U_NEG ? -pv : -pv - 1);
            n->opty = IS_ERR(ft) ? NULL : ft;
            return ft;
        }
        switch ((UnOp)n->op) {
        case U_NEG:
            n->opty = t->kind == TY_BOOL ? ty_scalar(KILN_INT64) : t;
            if (c && t->weak) {
                if (t->kind == TY_INT && x->cval.i != INT64_MIN) sema_set_const_int(n, -x->cval.i);
                else if (t->kind == TY_FLOAT) {
                    n->flags |= NF_CONST;
                    n->cval.f = -x->cval.f;
                }
            }
            return n->opty;
        case U_POS:
            n->opty = t->kind == TY_BOOL ? ty_scalar(KILN_INT64) : t;
            n->flags &= (uint16_t)~NF_PROVISIONAL; /* (what a pass before knew) */
            n->flags |= x->flags & (NF_CONST | NF_NONNEG | NF_BOUNDED | NF_PROVISIONAL);
            n->cval = x->cval;
            n->nnhi = x->nnhi;
            return n->opty;
        case U_INVERT:
            if (t->kind == TY_FLOAT || t->kind == TY_COMPLEX) {
                error_at(C, n->sp, "convert with int(...) first",
                         "bad operand type for unary ~: %s", ty_name(C, t));
                return &ty_error;
            }
            n->opty = t;
            if (c && t->weak) sema_set_const_int(n, ~x->cval.i);
            if (ty_is_int(t) && !ty_is_signed(t)) n->flags |= NF_NONNEG;
            return t;
        default: UNREACHABLE();
        }
    }
    case E_BOOLOP: {
        const Type *lt = sema_expr(S, n->bin.l);
        if (IS_ERR(lt)) return &ty_error;
        int lv = const_truth_of(n->bin.l);
        if (lv >= 0) { /* a constant left operand decides which operand is the value */
            bool left = n->op == BO_AND ? !lv : lv;
            if (left) return become(n, n->bin.l);
            const Type *rt = sema_expr(S, n->bin.r);
            if (IS_ERR(rt) || IS_UNKNOWN(rt)) return rt;
            return become(n, n->bin.r);
        }
        const Type *rt = sema_expr(S, n->bin.r);
        if (IS_ERR(lt) || IS_ERR(rt)) return &ty_error;
        if (IS_UNKNOWN(lt) || IS_UNKNOWN(rt)) return &ty_unknown;
        const char *w = n->op == BO_AND ? "an operand of and" : "an operand of or";
        if (!sema_check_scalar_operand(S, n->bin.l, lt, w) || !sema_check_scalar_operand(S, n->bin.r, rt, w))
            return &ty_error;
        const Type *t = (lt->kind == TY_BOOL && rt->kind == TY_BOOL) ? lt : ty_promote(lt, rt);
        t = hold_weak(S, n, "values of this 'and'/'or'", n->bin.l, lt, n->bin.r, rt, t);
        if (IS_ERR(t)) return t;
        n->opty = t;
        if (ty_is_int(t) && bound_nonneg(n->bin.l, lt) && bound_nonneg(n->bin.r, rt))
            bound_set(n, MAX(bound_of(n->bin.l, lt), bound_of(n->bin.r, rt)));
        return t;
    }
    case E_COMPARE: return compare(S, n);
    case E_IFEXP: {
        sema_cond(S, n->ifexp.cond);
        int live = const_truth_of(n->ifexp.cond);
        if (live >= 0) { /* `x if DEBUG else y`: the other arm never runs, nor is typed */
            Node *arm = live ? n->ifexp.then : n->ifexp.orelse;
            const Type *t = sema_expr(S, arm);
            if (IS_ERR(t) || IS_UNKNOWN(t)) return t;
            return become(n, arm);
        }
        const Type *a = sema_expr(S, n->ifexp.then), *b = sema_expr(S, n->ifexp.orelse);
        if (IS_ERR(a) || IS_ERR(b)) return &ty_error;
        if (IS_UNKNOWN(a) || IS_UNKNOWN(b)) return IS_UNKNOWN(a) ? b : a;
        const Type *u = ty_unify(C, a, b);
        if (u && ty_is_scalar(u)) {
            u = hold_weak(S, n, "branches of this conditional expression", n->ifexp.then, a,
                          n->ifexp.orelse, b, u);
            if (IS_ERR(u)) return u;
        }
        if (!u || !(ty_is_scalar(u) || u->kind == TY_ARRAY || u->kind == TY_TUPLE)) {
            error_at(C, n->sp, NULL,
                     "the branches of this conditional expression have types %s and %s",
                     ty_name(C, a), ty_name(C, b));
            return &ty_error;
        }
        n->opty = u;
        if (ty_is_int(u) && bound_nonneg(n->ifexp.then, a) && bound_nonneg(n->ifexp.orelse, b))
            bound_set(n, MAX(bound_of(n->ifexp.then, a), bound_of(n->ifexp.orelse, b)));
        return u;
    }
    case E_CALL: {
        int star = sema_unpack_star(S, n);
        if (star <= 0) return star < 0 ? &ty_unknown : &ty_error;
        if (sema_int_method(S, n)) return sema_call_intrinsic(S, n, intrinsic_lookup("int.bit_count"));
        if (sema_array_method(S, n)) return sema_call_intrinsic(S, n, intrinsic_lookup("array.reshape"));
        if (sema_copy_method(S, n)) return sema_call_intrinsic(S, n, intrinsic_lookup("array.copy"));
        const Intrinsic *rd = sema_reduce_method(S, n);
        if (rd) return sema_call_intrinsic(S, n, rd);
        if (sema_complex_method(S, n))
            return sema_call_intrinsic(S, n, intrinsic_lookup("complex.conjugate"));
        if (sema_group_method(S, n)) return sema_call_intrinsic(S, n, intrinsic_lookup("kiln.cg.grid_group.sync"));
        const Type *ft = sema_expr(S, n->call.fn);
        if (IS_ERR(ft)) return &ty_error;
        if (IS_UNKNOWN(ft)) return &ty_unknown;
        if (ft->kind == TY_NS && ft->ns->intr) return sema_call_intrinsic(S, n, ft->ns->intr);
        if (ft->kind == TY_DTYPE && ft->rec) {
            error_at(S->C, n->sp, "take records from an array of them, or make one with "
                     "kiln.local.array(1, rec)", "a record type cannot be called in kernels");
            return &ty_error;
        }
        if (ft->kind == TY_DTYPE) return sema_dtype_cast(S, n, (kiln_dtype)ft->dtype);
        if (ft->kind == TY_FUNC && ft->fn->ext) return sema_call_extern(S, n, ft->fn);
        if (ft->kind == TY_FUNC) {
            const Type *rt;
            sema_call_function(S, n, ft->fn, &rt);
            return rt;
        }
        if (ft->kind == TY_NS && ft->ns->tname) return sema_namedtuple_make(S, n, ft->ns);
        if (ft->kind == TY_NS)
            error_at(C, n->call.fn->sp, NULL, "module '%s' is not callable", ft->ns->name);
        else
            error_at(C, n->call.fn->sp, NULL, "%s is not callable", ty_name(C, ft));
        return &ty_error;
    }
    case E_SUBSCRIPT: return sema_subscript(S, n, false);
    case E_ATTR: return attribute(S, n);
    case E_TUPLE: {
        const Type **el = arena_alloc(&C->arena, sizeof(Type *) * (size_t)(n->tuple.n + 1));
        bool unk = false;
        bool err = false;
        /* every element, even after an error: a later one may be the error that
         * explains an earlier silent one (a poisoned name) */
        for (int i = 0; i < n->tuple.n; i++) {
            el[i] = sema_expr(S, n->tuple.v[i]);
            if (IS_ERR(el[i])) err = true;
            else if (IS_UNKNOWN(el[i])) unk = true;
            else if (el[i]->kind == TY_STR && !err) { /* a constant with no value (strings.c) */
                error_at(C, n->tuple.v[i]->sp,
                         "assign or pass the string on its own; `x in (\"a\", \"b\")` and "
                         "literal_unroll((\"a\", \"b\")) take a tuple literal of them",
                         "a tuple value cannot hold a string in a kernel");
                err = true;
            }
        }
        if (err) return &ty_error;
        if (unk) return &ty_unknown;
        return ty_tuple(C, n->tuple.n, el);
    }
    case E_SLICE:
        error_at(C, n->sp, NULL, "a slice can only appear inside [...]");
        return &ty_error;
    default: UNREACHABLE();
    }
}

/* The parser and the lexer bound the nesting of each function's expressions
 * and blocks; a device function is typed while its caller's expression is open
 * on the stack, so the levels along a chain of calls add up, and the sum is
 * bounded here (S->depth counts expressions here and blocks in sema.c).  One
 * function alone never reaches it. */
enum { SEMA_MAX_DEPTH = KILN_MAX_EXPR_DEPTH + KILN_MAX_INDENT + 1 };

static bool depth_ok(Sema *S, Node *n) {
    if (S->depth < SEMA_MAX_DEPTH) return true;
    if (!S->too_deep && !S->C->muted) {
        S->too_deep = true;
        error_at(S->C, n->sp, "split the expressions that call device functions",
                 "expressions and blocks nested too deeply through device function calls: "
                 "more than %d levels in all (KILN_MAX_EXPR_DEPTH + KILN_MAX_INDENT)",
                 SEMA_MAX_DEPTH - 1);
    }
    return false;
}

const Type *sema_expr(Sema *S, Node *n) {
    n->flags &= (uint16_t)~(NF_CONST | NF_NONNEG | NF_BOUNDED);
    if (!depth_ok(S, n)) return n->ty = &ty_error;
    S->depth++;
    const Type *t = expr_inner(S, n);
    S->depth--;
    n->ty = t;
    if (ty_is_int(t) && !ty_is_signed(t)) n->flags |= NF_NONNEG;
    if (t->kind == TY_BOOL) n->flags |= NF_NONNEG;
    return t;
}

const char *sema_dotted(Sema *S, Node *n) {
    if (n->kind == E_NAME) return n->name.id;
    if (n->kind == E_ATTR) {
        const char *b = sema_dotted(S, n->attr.base);
        return b ? arena_printf(&S->C->arena, "%s.%s", b, n->attr.attr) : NULL;
    }
    return NULL;
}
