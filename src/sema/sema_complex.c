/* sema_complex.c: types of complex-number expressions.
 *
 * complex64 and complex128 are NumPy's, promoted as NumPy 2 does (types.c):
 * a Python complex (a literal like 2j) is weak and takes the precision of the
 * typed operand it meets, so `z * 1j` stays complex64 for a complex64 z.
 * Here: the operators complex values take (+ - * / ** and == !=; Python has
 * no ordering, floor division, modulo or bit operations on them), the parts
 * (.real, .imag, .conjugate(), numpy.real/imag/conj), complex(), cmath's
 * functions and NumPy's functions of one complex argument, which compute the
 * same as cmath's.  A complex value is never a compile-time constant:
 * ConstVal holds one number, so literals are emitted from their node.  The
 * runtime is rt_complex.h, and emit_complex.c writes the calls.
 */
#include <string.h>

#include "sema_int.h"

static const char *const binop_sym[] = {"+", "-", "*", "/", "//", "%", "**",
                                        "<<", ">>", "&", "|", "^"};

const Type *sema_complex_binop(Sema *S, Node *at, BinOp op, const Type *lt, const Type *rt) {
    Compiler *C = S->C;
    switch (op) {
    case B_ADD:
    case B_SUB:
    case B_MUL:
    case B_DIV:
    case B_POW: return ty_promote(lt, rt);
    case B_FLOORDIV:
    case B_MOD:
        error_at(C, at->sp, "take the parts first, e.g. z.real // y",
                 "complex numbers have no %s (unsupported operand types %s and %s)",
                 op == B_MOD ? "modulo" : "floor division", ty_name(C, lt), ty_name(C, rt));
        return &ty_error;
    default:
        error_at(C, at->sp, NULL, "unsupported operand types for %s: %s and %s",
                 binop_sym[op], ty_name(C, lt), ty_name(C, rt));
        return &ty_error;
    }
}

/* x.real and x.imag of any scalar: a real number is its own real part, and
 * its imaginary part is a zero of its type, as in Python and NumPy. */
const Type *sema_complex_part(Sema *S, Node *n, const Type *bt) {
    (void)S;
    n->opty = bt;
    if (bt->kind == TY_COMPLEX) return ty_complex_part(bt);
    return bt;
}

bool sema_complex_method(Sema *S, Node *n) {
    Node *f = n->call.fn;
    if (f->kind != E_ATTR || strcmp(f->attr.attr, "conjugate") != 0 || n->call.kwvals.n)
        return false;
    NodeList *a = &n->call.args;
    if (a->n == 1 && a->v[0] == f->attr.base) return true; /* a later pass */
    if (a->n != 0) return false;
    const Type *bt = sema_expr(S, f->attr.base);
    if (IS_ERR(bt) || IS_UNKNOWN(bt) || !ty_is_scalar(bt)) return false;
    int cap = 0;
    nodelist_push(S->C, a, f->attr.base, &cap);
    return true;
}

/* The float type of a real argument of cmath.rect and complex(). */
static const Type *real_of(const Type *t) {
    if (t->kind == TY_FLOAT) return t;
    return t->weak ? &ty_weak_float : ty_scalar(KILN_FLOAT64);
}

static bool real_args(Sema *S, const Intrinsic *in, Node **a, const Type **t, int n) {
    for (int i = 0; i < n; i++)
        if (a[i] && t[i]->kind == TY_COMPLEX) {
            error_at(S->C, a[i]->sp, "pass z.real and z.imag",
                     "%s() takes real numbers, not %s", in->name, ty_name(S->C, t[i]));
            return false;
        }
    return true;
}

const Type *sema_complex_call(Sema *S, Node *n, const Intrinsic *in) {
    Compiler *C = S->C;
    Node *a[2] = {NULL, NULL};
    const Type *t[2] = {NULL, NULL};
    bool unk = false;
    n->intr = in;
    if (in->kind == IK_COMPLEX) {
        /* Python's complex() is always complex128 (Numba types it so too) */
        if (!sema_bind(S, n, in, 0, 2, a)) return &ty_error;
        if (!sema_scalar_args(S, a, 2, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        if (a[0] && t[0]->kind == TY_COMPLEX && !a[1]) {
            n->opty = t[0]->weak ? &ty_weak_complex : ty_scalar(KILN_COMPLEX128);
            return n->opty;
        }
        if (!real_args(S, in, a, t, 2)) return &ty_error;
        bool weak = (!a[0] || t[0]->weak) && (!a[1] || t[1]->weak);
        n->opty = weak ? &ty_weak_float : ty_scalar(KILN_FLOAT64);
        return weak ? &ty_weak_complex : ty_scalar(KILN_COMPLEX128);
    }
    int nargs = in->sub == CM_RECT ? 2 : 1;
    if (in->sub == CM_LOG) nargs = 2; /* cmath.log(z[, base]) */
    if (!sema_bind(S, n, in, in->sub == CM_RECT ? 2 : 1, nargs, a)) return &ty_error;
    if (!sema_scalar_args(S, a, nargs, t, &unk)) return &ty_error;
    if (unk) return &ty_unknown;
    const Type *x = t[0];
    switch (in->sub) {
    case CM_RECT: {
        if (!real_args(S, in, a, t, 2)) return &ty_error;
        n->opty = ty_promote(real_of(t[0]), real_of(t[1]));
        return ty_complex_of(n->opty);
    }
    case CM_CONJ:
    case CM_REAL:
    case CM_IMAG:
        n->opty = x->kind == TY_BOOL && in->sub == CM_CONJ ? ty_scalar(KILN_INT64) : x;
        if (x->kind == TY_COMPLEX && in->sub != CM_CONJ) return ty_complex_part(x);
        return n->opty;
    case CM_PHASE: n->opty = ty_complex_of(x); return ty_complex_part(n->opty);
    case CM_POLAR: {
        n->opty = ty_complex_of(x);
        const Type *p = ty_strong(ty_complex_part(n->opty));
        const Type *el[2] = {p, p};
        return ty_tuple(C, 2, el);
    }
    default:
        n->opty = ty_complex_of(a[1] ? ty_promote(x, t[1]) : x);
        return n->opty;
    }
}

const Type *sema_complex_args(Sema *S, Node *n, const Intrinsic *in, const Type *r) {
    Compiler *C = S->C;
    switch ((IntrKind)in->kind) {
    case IK_ABS: return ty_complex_part(n->opty); /* |z|, a float of z's precision */
    case IK_PRED:
    case IK_BOOL:
    case IK_SELP:
    case IK_BINOP: /* an operator as a function: sema_binop typed (or refused) it */
    case IK_POWER:
    case IK_NPMINMAX: /* NumPy orders complex numbers (sema_npufunc.c) */
    case IK_NPCMP: return r;
    case IK_NPUFUNC:
        if (in->sub != NU_INVERT) return r;
        break;
    case IK_MATH1: {
        int cm = cmath_of_math1(in->sub);
        if (cm >= 0 && strncmp(in->name, "numpy.", 6) == 0) {
            /* numpy.sqrt(z) computes cmath.sqrt(z) */
            n->intr = intrinsic_lookup(arena_printf(&C->arena, "cmath.%s", cmath_names[cm]));
            ASSERT(n->intr);
            n->opty = n->call.bound.v[0]->ty;
            return n->opty;
        }
        if (cm >= 0 && cm != CM_LOG2) {
            error_at(C, n->sp, arena_printf(&C->arena, "use cmath.%s", cmath_names[cm]),
                     "%s() takes real numbers, not complex", in->name);
            return &ty_error;
        }
        break;
    }
    default: break;
    }
    const char *name = strncmp(in->name, "builtins.", 9) == 0 ? in->name + 9 : in->name;
    error_at(C, n->sp, "take z.real, z.imag or abs(z) first", "%s() does not take complex numbers",
             name);
    return &ty_error;
}
