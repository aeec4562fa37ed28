/* storage_align.c: the alignment= of kiln.local.array and kiln.shared.array (Numba's
 * keyword): a power of two from 1 to KILN_MAX_ARRAY_ALIGN bytes, or None for the
 * element type's own.  The emitters declare the array with it (emit.c): CUDA's
 * __align__(n), C11's _Alignas(n), and on the CPU's block mode an offset rounded up in
 * the block's shared buffer, whose base is rounded up at run time.
 */
#include "sema_int.h"

int64_t sema_storage_align(Sema *S, const Intrinsic *in, Node *a) {
    Compiler *C = S->C;
    if (!a || a->kind == E_NONE) return 0;
    const Type *t = sema_expr(S, a);
    if (IS_ERR(t)) return -1;
    if (t->kind == TY_NONE) return 0;
    int64_t v;
    if (!ty_is_int(t) || !sema_const_int(a, &v)) {
        /* Numba's words follow, for code that matches on them */
        error_at(C, a->sp, "write a power of two such as 16, or a global holding one",
                 "the alignment of %s must be a constant integer, not %s\n"
                 "(Numba: RequireLiteralValue: alignment must be a constant integer)",
                 in->name, IS_UNKNOWN(t) ? "a variable" : ty_name(C, t));
        return -1;
    }
    if (v <= 0 || (v & (v - 1)) != 0 || v > KILN_MAX_ARRAY_ALIGN) {
        error_at(C, a->sp, NULL,
                 "the alignment of %s must be a power of two from 1 to %d bytes "
                 "(KILN_MAX_ARRAY_ALIGN), got %lld\n(Numba: ValueError: Alignment must be a "
                 "power of 2, got %lld)",
                 in->name, KILN_MAX_ARRAY_ALIGN, (long long)v, (long long)v);
        return -1;
    }
    return v;
}

int64_t storage_alignment(const Node *call) {
    int64_t v;
    if (call->call.bound.n < 3 || !call->call.bound.v[2]) return 0;
    const Node *a = call->call.bound.v[2];
    if (!a->ty || !ty_is_int(a->ty) || !sema_const_int(a, &v)) return 0;
    return v;
}
