/* array_copy.c: a.copy() in kernels (NumPy's and Numba's method): a new C-contiguous
 * array, local to the thread, holding a's elements.  Its storage is a local array
 * (f->storage, declared by emit.c as kiln.local.array's is), so its shape must be
 * known when compiling: a global array's (frozen, or a device array taken by address)
 * is.  An argument's shape is known only at the launch, and a copy of it is refused
 * with what to write instead.
 */
#include <string.h>

#include "sema_int.h"

bool sema_copy_method(Sema *S, Node *n) {
    Node *f = n->call.fn;
    if (f->kind != E_ATTR || strcmp(f->attr.attr, "copy") != 0 || n->call.kwvals.n) return false;
    NodeList *a = &n->call.args;
    if (a->n == 1 && a->v[0] == f->attr.base) return true; /* rewritten before */
    if (a->n != 0) return false;
    const Type *bt = sema_expr(S, f->attr.base);
    if (IS_ERR(bt) || IS_UNKNOWN(bt) || bt->kind != TY_ARRAY || bt->ptr) return false;
    int cap = 0;
    nodelist_push(S->C, a, f->attr.base, &cap);
    return true;
}

/* The global array behind x, or NULL. */
static const GVal *global_array(const Node *x) {
    if ((x->kind == E_NAME || x->kind == E_ATTR) && x->gv && x->gv->kind == KILN_VAL_ARRAY)
        return x->gv;
    return NULL;
}

const Type *sema_array_copy(Sema *S, Node *n) {
    Compiler *C = S->C;
    Node *x = n->call.args.v[0];
    const Type *t = sema_expr(S, x);
    if (IS_ERR(t) || IS_UNKNOWN(t)) return t;
    n->call.bound = n->call.args;
    const GVal *g = global_array(x);
    if (!g) {
        error_at(C, n->sp,
                 "make a local array of a constant shape, kiln.local.array(N, a.dtype), and copy "
                 "the elements in a loop",
                 "a.copy() in a kernel copies a global array, whose shape is known when "
                 "compiling; not this %s", ty_name(C, t));
        return &ty_error;
    }
    int64_t bytes = ty_elem_size(t->elem);
    for (int i = 0; i < t->ndim; i++) bytes *= g->shape[i];
    FuncSpec *f = S->cur;
    if (f->local_bytes + bytes > KILN_MAX_LOCAL_BYTES) {
        if (f->local_bytes <= KILN_MAX_LOCAL_BYTES)
            error_at(C, n->sp, "copy part of it, or index the global array itself",
                     "local arrays are limited to %d KiB per thread in all "
                     "(KILN_MAX_LOCAL_BYTES); a.copy() needs %lld bytes",
                     KILN_MAX_LOCAL_BYTES >> 10, (long long)bytes);
        return &ty_error;
    }
    f->local_bytes += bytes;
    vec_push(&C->arena, &f->storage, n);
    return ty_array(C, t->elem, t->ndim, 'C');
}

int storage_dims(const Node *c, int64_t *dims, int max) {
    if (c->intr->kind != IK_ARRAY_COPY) return sema_shape(c->call.bound.v[0], dims, max);
    const GVal *g = global_array(c->call.bound.v[0]);
    int nd = g->ty->ndim;
    for (int i = 0; i < nd && i < max; i++) dims[i] = g->shape[i];
    return nd;
}
