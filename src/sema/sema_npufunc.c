/* sema_npufunc.c: NumPy's ufuncs that have no Python operator, on numbers.
 *
 * numpy.invert (and its alias bitwise_not), logical_not/and/or/xor and fmax/fmin
 * called on scalars inside a kernel; on arrays with an output array they are ufunc
 * statements (ufunc_stmt.c), which type the same call on the elements.  NumPy's rules:
 *
 *   invert      integers and bool only; ~x of the integer's type, logical not of a bool
 *               (not Python's ~True == -2)
 *   logical_*   any numbers (a complex one is true when either part is nonzero) -> bool
 *   fmax/fmin   the promoted type; a NaN operand loses to the other one; complex numbers
 *               in NumPy's lexicographic order (rt_complex.h)
 *
 * numpy.maximum/minimum and the comparison ufuncs on complex numbers use the same order;
 * they are typed in sema_call.c and ufunc_stmt.c, and emit_npufunc.c writes them all.
 */
#include "sema_int.h"

const Type *sema_npufunc(Sema *S, Node *n, const Intrinsic *in) {
    Compiler *C = S->C;
    int na = ufunc_nin(in);
    Node *a[2] = {NULL, NULL};
    const Type *t[2] = {NULL, NULL};
    bool unk = false;
    if (!sema_bind(S, n, in, na, na, a)) return &ty_error;
    if (!sema_scalar_args(S, a, na, t, &unk)) return &ty_error;
    if (unk) return &ty_unknown;
    switch ((NpUfunc)in->sub) {
    case NU_INVERT:
        if (t[0]->kind != TY_BOOL && !ty_is_int(t[0])) {
            /* NumPy's TypeError, in its words */
            error_at(C, a[0]->sp, "invert integers or bools",
                     "ufunc '%s' not supported for the input types (%s)", in->name + 6,
                     ty_name(C, t[0]));
            return &ty_error;
        }
        n->opty = ty_strong(t[0]);
        return n->opty;
    case NU_LNOT:
    case NU_LAND:
    case NU_LOR:
    case NU_LXOR:
        n->opty = ty_scalar(KILN_BOOL);
        return n->opty;
    case NU_FMAX:
    case NU_FMIN:
        n->opty = ty_promote(t[0], t[1]);
        return n->opty;
    }
    UNREACHABLE();
}
