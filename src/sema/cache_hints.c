/* cache_hints.c: Numba's loads and stores with a cache hint, kiln.ldca/ldcg/ldcs/ldlu/ldcv
 * (array, i) and kiln.stcg/stcs/stwb/stwt(array, i, value).  The array is an array or a
 * pointer (CPointer) of an integer or float dtype; i is an integer, or a tuple of one per
 * dimension (a pointer has one).  The call keeps the element as a subscript node, typed
 * here, and for a store the value: the CPU reads and writes the element as any subscript
 * (the hint is the GPU's cache policy), the GPU through ld.global.<hint>/st.global.<hint>
 * (emit_hint.c).  Called by sema_call.c. */
#include <string.h>

#include "sema_int.h"

const char *const cache_hint_names[CH_STWT + 1] = {"ca", "cg", "cs", "lu", "cv",
                                                   "cg", "cs", "wb", "wt"};

static bool hinted_dtype(kiln_dtype d) {
    return (d >= KILN_INT8 && d <= KILN_UINT64) || d == KILN_FLOAT16 || d == KILN_FLOAT32 ||
           d == KILN_FLOAT64;
}

/* The index expression i as the subscript's list: a tuple's items (written out, or read
 * as i[0], i[1]... from a tuple value), or i itself. */
static bool index_list(Sema *S, Node *ix, const Type *it, int ndim, NodeList *out, int *cap) {
    Compiler *C = S->C;
    int n = it->kind == TY_TUPLE ? it->n : 1;
    for (int k = 0; k < n; k++) {
        const Type *et = it->kind == TY_TUPLE ? it->elems[k] : it;
        if (et->kind != TY_INT) { /* Numba's words */
            error_at(C, ix->sp, "index with integers", "%s is not a valid index",
                     ty_name(C, ty_strong(et))); /* a literal 1.0 is float64, as Numba says */
            return false;
        }
    }
    if (n != ndim) { /* Numba's words */
        if (it->kind == TY_TUPLE) error_at(C, ix->sp, NULL, "Expected %d indices, got %d", ndim, n);
        else error_at(C, ix->sp, "give one index per dimension, as a tuple",
                      "Expected %d indices, got a scalar", ndim);
        return false;
    }
    if (it->kind != TY_TUPLE) {
        nodelist_push(C, out, ix, cap);
        return true;
    }
    for (int k = 0; k < n; k++) {
        if (ix->kind == E_TUPLE) {
            nodelist_push(C, out, ix->tuple.v[k], cap);
            continue;
        }
        nodelist_push(C, out, sema_tuple_item(C, ix, k), cap);
    }
    return true;
}

const Type *sema_cache_hint(Sema *S, Node *n, const Intrinsic *in) {
    Compiler *C = S->C;
    bool store = in->sub >= CH_STCG;
    int want = store ? 3 : 2;
    if (n->call.kwvals.n || n->call.args.n != want) {
        error_at(C, n->sp, store ? "call it as kiln.stcs(array, i, value)" : "call it as kiln.ldcs(array, i)",
                 "%s() takes %d positional arguments", in->name, want);
        return &ty_error;
    }
    Node *arr = n->call.args.v[0], *ix = n->call.args.v[1];
    const Type *at = sema_expr(S, arr);
    if (IS_ERR(at)) return &ty_error;
    if (IS_UNKNOWN(at)) return &ty_unknown;
    if (at->kind != TY_ARRAY) {
        error_at(C, arr->sp, "pass an array or a pointer (CPointer)",
                 "%s() reads an array or a pointer, not %s", in->name, ty_name(C, at));
        return &ty_error;
    }
    kiln_dtype d = (kiln_dtype)at->elem->dtype;
    if (at->elem->kind == TY_RECORD || !hinted_dtype(d)) {
        error_at(C, arr->sp, "use an array of integers, float16, float32 or float64",
                 "%s requires array of integer or float type, not %s", /* Numba's words */
                 in->name + strlen("kiln."), ty_name(C, at));
        return &ty_error;
    }
    const Type *it = sema_expr(S, ix);
    if (IS_ERR(it)) return &ty_error;
    if (IS_UNKNOWN(it)) return &ty_unknown;
    Node *sub = node_new(C, E_SUBSCRIPT, n->sp);
    sub->sub.base = arr;
    int cap = 0;
    if (!index_list(S, ix, it, ty_is_ptr(at) ? 1 : at->ndim, &sub->sub.idx, &cap))
        return &ty_error;
    const Type *et = sema_expr(S, sub);
    if (IS_ERR(et)) return &ty_error;
    if (IS_UNKNOWN(et)) return &ty_unknown;
    NodeList bound = {0};
    int bcap = 0;
    nodelist_push(C, &bound, sub, &bcap);
    if (store) {
        Node *v = n->call.args.v[2];
        const Type *vt = sema_expr(S, v);
        if (IS_ERR(vt)) return &ty_error;
        if (IS_UNKNOWN(vt)) return &ty_unknown;
        if (!sema_check_store(S, et, vt, v, v->sp)) return &ty_error;
        nodelist_push(C, &bound, v, &bcap);
        sema_mark_written(S, arr);
    }
    n->call.bound = bound;
    return store ? &ty_none : et;
}
