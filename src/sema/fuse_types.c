/* fuse_types.c: kiln.fuse's nodes, shapes and NumPy's typing rules, which the
 * expressions' side (fuse.c) builds on: new nodes, the broadcast of two shapes, NEP 50
 * promotion with Python scalars weak, the float loop of a ufunc, exact comparisons of
 * Python ints with integer arrays, Python's own arithmetic on Python scalars, and
 * constants.  It calls nothing else of kiln.fuse's.
 */
#include <stdlib.h>
#include <string.h>

#include "sema/fuse_int.h"

FNode *fuse_new(Fuse *F, int kind, Span sp) {
    FNode *n = arena_alloc(&F->C->arena, sizeof *n);
    n->kind = (uint8_t)kind;
    n->sp = sp;
    return n;
}

const char *fuse_type_name(const Type *t) {
    return t->weak ? (t->kind == TY_FLOAT ? "Python float" : "Python int")
                   : kiln_dtype_name((kiln_dtype)t->dtype);
}

/* ---- shapes ---------------------------------------------------------------- */

/* The broadcast of two values' shapes into n (ndim, ones, arrays, level). */
bool fuse_combine(Fuse *F, FNode *n, FNode *a, FNode *b) {
    n->ndim = a->ndim;
    n->ones = a->ones | (~0u << a->ndim);
    if (b) {
        n->ndim = MAX(a->ndim, b->ndim);
        n->ones &= b->ones | (~0u << b->ndim);
    }
    n->ones &= n->ndim >= 32 ? ~0u : ~(~0u << n->ndim);
    n->arrays = a->arrays | (b ? b->arrays : 0);
    n->outer = a->outer | (b ? b->outer : 0);
    n->reds = a->reds | (b ? b->reds : 0);
    n->level = (uint8_t)MAX(a->level, b ? b->level : FL_SCALAR);
    n->npscalar = n->ndim == 0 && n->level != FL_SCALAR; /* callers that keep arrays reset it */
    if (b && a->level == FL_POST && b->level == FL_POST) return true;
    if (n->level == FL_POST) {
        /* an elementwise array beside a reduced value is read after the loop, at the
         * output's position: it must not add dimensions */
        FNode *post = a->level == FL_POST ? a : b, *other = post == a ? b : a;
        uint32_t dims = other ? ~(~0u << other->ndim) : 0;
        if (other && other->level == FL_ELEM &&
            (other->ndim > post->ndim || (post->ones & ~other->ones & dims))) {
            error_at(F->C, other->sp, "reduce it too, or combine the arrays before reducing",
                     "kiln.fuse cannot combine a reduced value with an array it would "
                     "broadcast to (%d dimensions): that needs a second pass over the array",
                     other->ndim);
            return false;
        }
    }
    return true;
}

/* ---- types ----------------------------------------------------------------- */

/* NumPy's loop dtype for a float function of x: float16 is refused. */
const Type *fuse_float_of(Fuse *F, const Type *x, Span sp, const char *what) {
    if (x->kind == TY_FLOAT) return x->weak ? ty_scalar(KILN_FLOAT64) : x;
    if (x->weak) return ty_scalar(KILN_FLOAT64);
    int bits = fuse_is_bool(x) ? 8 : ty_bits(x);
    if (bits <= 8) {
        error_at(F->C, sp, "convert first, e.g. x.astype(np.float32)",
                 "%s of %s is float16 in NumPy, which kiln.fuse does not support", what,
                 fuse_type_name(x));
        return NULL;
    }
    return ty_scalar(bits <= 16 ? KILN_FLOAT32 : KILN_FLOAT64);
}

/* The value of a Python int written out: a literal or a frozen global ("(-1)"), perhaps
 * under unary - + ~ (*big: past int64, a uint64's).  False when it is not one. */
bool fuse_py_int(const FNode *n, int64_t *v, bool *big) {
    if (!n->py || n->t->kind != TY_INT) return false;
    if (n->kind == FN_UN && n->a && fuse_py_int(n->a, v, big) && !*big) {
        if (n->op == U_NEG && *v != INT64_MIN) *v = -*v;
        else if (n->op == U_INVERT) *v = ~*v;
        else if (n->op != U_POS) return false;
        return true;
    }
    if (n->kind != FN_CONST || !n->text) return false;
    const char *s = n->text;
    bool paren = *s == '(';
    if (paren) s++;
    bool neg = *s == '-';
    if (neg) s++;
    if (*s < '0' || *s > '9') return false;
    char *end;
    unsigned long long u = strtoull(s, &end, 10);
    if (*end != (paren ? ')' : '\0')) return false;
    *big = !neg && u > (unsigned long long)INT64_MAX;
    *v = neg ? (int64_t)(0ull - u) : (int64_t)u;
    return true;
}

/* The value of a Python number written out (a literal, a frozen global, under unary -). */
bool fuse_py_num(const FNode *n, double *v) {
    if (!n->py) return false;
    if (n->kind == FN_UN && n->a && (n->op == U_NEG || n->op == U_POS) && fuse_py_num(n->a, v)) {
        if (n->op == U_NEG) *v = -*v;
        return true;
    }
    if (n->kind != FN_CONST || !n->text) return false;
    if (strcmp(n->text, "True") == 0 || strcmp(n->text, "False") == 0) {
        *v = n->text[0] == 'T';
        return true;
    }
    const char *s = n->text + (n->text[0] == '(');
    char *end;
    *v = strtod(s, &end);
    return end != s && (*end == '\0' || *end == ')');
}

const Type *fuse_promote(Fuse *F, FNode *a, FNode *b) {
    const Type *t = ty_promote(a->t, b->t);
    /* NEP 50: a Python int must fit the typed integer it meets */
    FNode *w = a->t->weak ? a : b, *s = a->t->weak ? b : a;
    int64_t v;
    bool big = false;
    if (w->t->weak && !s->t->weak && ty_is_int(s->t) && w->t->kind == TY_INT &&
        fuse_py_int(w, &v, &big) && !ty_int_fits(s->t, v, big)) {
        if (big)
            error_at(F->C, w->sp, NULL, "Python integer %llu out of bounds for %s",
                     (unsigned long long)v, fuse_type_name(s->t));
        else
            error_at(F->C, w->sp, NULL, "Python integer %lld out of bounds for %s", (long long)v,
                     fuse_type_name(s->t));
        return NULL;
    }
    return t;
}

/* A comparison r of a Python int with an integer array: NumPy 2 compares exactly, even
 * where the int does not fit the array's type (x > -1 on uint8 is all True, x == 300 on
 * int8 all False; arithmetic would raise instead).  A literal outside the type's range
 * gives every element the same answer: r becomes the comparison with the range's end on
 * that side that has it (x >= 0, x < 0).  Otherwise the comparison is made in int64,
 * which holds both (an argument's value is known only at the call), except against
 * uint64, which an argument meets as uint64 (docs/modes.md).  False: r is left to the
 * usual promotion. */
bool fuse_weak_int_compare(Fuse *F, FNode *r) {
    FNode *w = r->a->t->weak ? r->a : r->b, *s = w == r->a ? r->b : r->a;
    if (!w->t->weak || w->t->kind != TY_INT || s->t->weak || s->t->kind != TY_INT) return false;
    const Type *st = ty_scalar(s->t->dtype);
    int64_t v;
    bool big = false;
    if (fuse_py_int(w, &v, &big) && !ty_int_fits(st, v, big)) {
        int op = (int)r->op;
        if (w == r->a) /* c < x is x > c */
            op = op == C_LT ? C_GT : op == C_GT ? C_LT : op == C_LE ? C_GE : op == C_GE ? C_LE : op;
        bool below = !big && v < 0;
        bool truth = below ? op == C_GT || op == C_GE || op == C_NE
                           : op == C_LT || op == C_LE || op == C_NE;
        int bits = ty_bits(st);
        const char *end;
        if (below)
            end = ty_is_signed(st) ? arena_printf(&F->C->arena, "(-%llu)",
                                                  1ull << (bits - 1))
                                   : "0";
        else
            end = arena_printf(&F->C->arena, "%llu",
                               ty_is_signed(st) ? (1ull << (bits - 1)) - 1
                                                : bits == 64 ? ~0ull : (1ull << bits) - 1);
        r->a = s;
        r->b = fuse_constant(F, w->sp, &ty_weak_int, end);
        r->op = below ? (truth ? C_GE : C_LT) : (truth ? C_LE : C_GT);
        r->opty = st;
    } else if (st->dtype == KILN_UINT64) {
        return false;
    } else {
        r->opty = ty_scalar(KILN_INT64);
    }
    r->t = ty_scalar(KILN_BOOL);
    return true;
}

/* Python's ZeroDivisionError for an operation of Python numbers whose divisor (or, for **,
 * a zero base under a negative exponent) is written out: Python raises it where the
 * kernel would compute inf or 0.  False after reporting it. */
bool fuse_python_divides(Fuse *F, const Node *n, int op, FNode *a, FNode *b) {
    double x, y;
    if ((op == B_DIV || op == B_FLOORDIV || op == B_MOD) && fuse_py_num(b, &y) && y == 0) {
        error_at(F->C, n->sp, "Python raises ZeroDivisionError here",
                 "division by zero (of Python numbers)");
        return false;
    }
    if (op == B_POW && fuse_py_num(a, &x) && x == 0 && fuse_py_num(b, &y) && y < 0) {
        error_at(F->C, n->sp, "Python raises ZeroDivisionError here",
                 "0 cannot be raised to a negative power");
        return false;
    }
    return true;
}

FNode *fuse_constant(Fuse *F, Span sp, const Type *t, const char *text) {
    FNode *c = fuse_new(F, FN_CONST, sp);
    c->t = t;
    c->text = text;
    c->py = t->weak || strcmp(text, "True") == 0 || strcmp(text, "False") == 0;
    return c;
}

/* Python's own rules for an operation of Python scalars (bools, ints, floats): what
 * NumPy sees is its result, a Python value.  bool & | ^ bool stays bool; other
 * arithmetic on bools is int. */
FNode *fuse_python_op(FNode *r, int op, FNode *a, FNode *b, bool cmp) {
    r->py = true;
    r->opty = NULL;
    if (cmp) {
        r->t = ty_scalar(KILN_BOOL);
        return r;
    }
    bool fl = a->t->kind == TY_FLOAT || (b && b->t->kind == TY_FLOAT);
    if (b && (op == B_AND || op == B_OR || op == B_XOR) && fuse_is_bool(a->t) && fuse_is_bool(b->t))
        r->t = ty_scalar(KILN_BOOL);
    else
        r->t = fl || (b && op == B_DIV) ? &ty_weak_float : &ty_weak_int;
    return r;
}

const char *fuse_float_text(Fuse *F, double v) {
    if (v != v) return "math.nan";
    if (v > 1.7976931348623157e308) return "math.inf";
    if (v < -1.7976931348623157e308) return "(-math.inf)";
    const char *s = arena_printf(&F->C->arena, "%.17g", v);
    if (!strpbrk(s, ".eEn")) s = arena_printf(&F->C->arena, "%s.0", s);
    return v < 0 ? arena_printf(&F->C->arena, "(%s)", s) : s;
}
