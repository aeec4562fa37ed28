/* sema_bf16.c: types of calls of kiln.bf16's functions (Numba's cuda.bf16).
 *
 * Each argument is converted to the function's parameter type, as Numba casts an
 * argument to the signature it binds: bfloat16 for the arithmetic, comparisons and
 * math functions, int16/uint16 for the bit casts into bfloat16, the named dtype
 * for NAME_to_bfloat16_MODE.  Node.opty is that parameter type; emit_bf16.c
 * writes the calls.
 */
#include "sema_int.h"

const Type *sema_bf16_call(Sema *S, Node *n, const Intrinsic *in) {
    Node *a[3];
    const Type *t[3];
    bool unk = false;
    const Type *bf = ty_scalar(KILN_BFLOAT16);
    int na = 1;
    const Type *param = bf, *ret = bf;
    n->intr = in;
    if (in->kind == IK_BF16CVT) {
        const Type *other = ty_scalar(BF16CVT_DTYPE(in->sub));
        if (BF16CVT_TO(in->sub)) param = other;
        else ret = other;
    } else {
        int s = in->sub;
        na = s <= IBF_LE ? 2 : s <= IBF_FMA_RELU ? 3 : 1;
        if (s >= IBF_EQ && s <= IBF_LE) ret = ty_scalar(KILN_BOOL);
        if (s == IBF_ISNAN) ret = ty_scalar(KILN_BOOL);
        if (s == IBF_ISINF) ret = ty_scalar(KILN_INT32);
        if (s == IBF_AS_I16) ret = ty_scalar(KILN_INT16);
        if (s == IBF_AS_U16) ret = ty_scalar(KILN_UINT16);
        if (s == IBF_I16_AS) param = ty_scalar(KILN_INT16);
        if (s == IBF_U16_AS) param = ty_scalar(KILN_UINT16);
    }
    if (!sema_bind(S, n, in, na, na, a)) return &ty_error;
    if (!sema_scalar_args(S, a, na, t, &unk)) return &ty_error;
    if (unk) return &ty_unknown;
    for (int i = 0; i < na; i++) {
        if (t[i]->kind == TY_COMPLEX) {
            error_at(S->C, a[i]->sp, "take z.real or abs(z) first",
                     "%s() takes a real number, not %s", in->name, ty_name(S->C, t[i]));
            return &ty_error;
        }
    }
    n->opty = param;
    return ret;
}
