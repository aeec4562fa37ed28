/* array_view.c: a.view(dtype) in a kernel, the array's bytes read as another dtype.
 *
 * As NumPy's ndarray.view: the same data, the same extents but the last one, which scales
 * by old itemsize / new itemsize.  A different itemsize needs the last axis contiguous and
 * its bytes a multiple of the new itemsize; NumPy's ValueError otherwise, raised by the
 * launch (KILN_ERR_VIEW, emit_view.c).  kiln's strides count items, not bytes, so every
 * other axis's stride must also be a whole number of new items (always so for a
 * C-contiguous array).  The view of a C-contiguous array is C-contiguous; others are of
 * any layout.  Writing through the view writes the array (sema_origins follows it).
 */
#include "sema_int.h"

const Type *sema_view(Sema *S, Node *n) {
    Compiler *C = S->C;
    NodeList *a = &n->call.args;
    if (a->n != 2 || n->call.kwvals.n) {
        error_at(C, n->sp, "a.view(np.int32)", "a.view() in a kernel takes one dtype");
        return &ty_error;
    }
    n->call.bound = *a;
    const Type *bt = sema_expr(S, a->v[0]);
    if (IS_ERR(bt) || IS_UNKNOWN(bt)) return bt;
    const Type *dt = a->v[1]->kind == E_STR ? NULL : sema_expr(S, a->v[1]);
    if (dt && (IS_ERR(dt) || IS_UNKNOWN(dt))) return dt;
    if (!dt || dt->kind != TY_DTYPE) {
        error_at(C, a->v[1]->sp, "pass a type such as np.int32 or kiln.float32",
                 "a.view() in a kernel takes a scalar type");
        return &ty_error;
    }
    if (ty_is_scalar(bt)) { /* a number's bits as another type (NumPy's 0-d view) */
        int os = kiln_dtype_size((kiln_dtype)bt->dtype), ns = kiln_dtype_size((kiln_dtype)dt->dtype);
        if (bt->weak || os != ns) {
            error_at(C, n->sp, bt->weak ? "give it a type first: np.float32(x).view(np.int32)"
                                        : NULL,
                     bt->weak ? "x.view() of a Python number: it has no size in bits"
                              : "x.view() of a %s (%d bytes) as %s (%d bytes): a number's "
                                "view keeps its size (NumPy: changing the dtype of a 0d array "
                                "is only supported if the itemsize is unchanged)",
                     ty_name(C, bt), os, kiln_dtype_name((kiln_dtype)dt->dtype), ns);
            return &ty_error;
        }
        n->opty = bt;
        return ty_scalar((kiln_dtype)dt->dtype);
    }
    if (bt->ptr || !ty_is_scalar(bt->elem)) {
        error_at(C, a->v[0]->sp, NULL, "a.view() in a kernel views an array of numbers, not %s",
                 ty_name(C, bt));
        return &ty_error;
    }
    n->opty = bt;
    return ty_array(C, ty_scalar((kiln_dtype)dt->dtype), bt->ndim, bt->layout == 'C' ? 'C' : 'A');
}
