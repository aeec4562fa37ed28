/* emit_view.c: a.view(dtype) (src/sema/array_view.c) as a statement expression that
 * makes the new array value from the old one:
 *
 *     ({ OLD s = a; NEW r; r.data = (T *)(void *)s.data;
 *        r.shape/strides[d] = s.shape/strides[d] scaled by OS / NS where d is the last axis;
 *        a check per rule: a broken one records NumPy's ValueError (KILN_ERR_VIEW) and
 *        leaves an empty view;  r })
 */
#include "emit_int.h"

void emit_view(Emit *E, Node *n) {
    Node *x = n->call.bound.v[0];
    const Type *at = x->ty, *rt = n->ty;
    if (ty_is_scalar(at)) { /* a number's bits: memcpy, which compilers make a move */
        int id = E->tmp++;
        emit_sx_open(E, rt);
        P("%s b%d = %s; %s v%d; memcpy(&v%d, &b%d, sizeof v%d); ", emit_ctype(E, at), id,
          emit_expr_str(E, x, NULL), emit_ctype(E, rt), id, id, id, id);
        emit_sx_close(E, arena_printf(&E->C->arena, "v%d", id));
        return;
    }
    int os = kiln_dtype_size((kiln_dtype)at->elem->dtype);
    int ns = kiln_dtype_size((kiln_dtype)rt->elem->dtype);
    int id = E->tmp++, nd = at->ndim, L = nd - 1;
    int line = emit_loc(E, n->sp);
    const char *rc = emit_ctype(E, rt);
    emit_sx_open(E, rt);
    P("%s s%d = %s; %s r%d; int f%d = -1; r%d.data = (%s *)(void *)s%d.data; ",
      emit_ctype(E, at), id, emit_expr_str(E, x, NULL), rc, id, id, id,
      emit_elem_ctype(E, rt->elem), id);
    for (int d = 0; d < nd; d++) {
        if (d < L || os == ns)
            P("r%d.shape[%d] = s%d.shape[%d]; ", id, d, id, d);
        if (os == ns)
            P("r%d.strides[%d] = s%d.strides[%d]; ", id, d, id, d);
        else if (d < L)
            P("if ((s%d.strides[%d] * %d) %% %d) f%d = 2; "
              "r%d.strides[%d] = s%d.strides[%d] * %d / %d; ",
              id, d, os, ns, id, id, d, id, d, os, ns);
    }
    if (os != ns) {
        P("if (s%d.shape[%d] != 1 && s%d.strides[%d] != 1) f%d = 0; "
          "else if ((s%d.shape[%d] * %d) %% %d) f%d = 1; "
          "r%d.shape[%d] = s%d.shape[%d] * %d / %d; r%d.strides[%d] = 1; ",
          id, L, id, L, id, id, L, os, ns, id, id, L, id, L, os, ns, id, L);
        /* after an error: an empty view, so that no element past the array is read */
        P("if (f%d >= 0) { kiln_fail(E_, %d, %d, f%d, 0, 0); "
          "for (int k = 0; k < %d; k++) r%d.shape[k] = 0; } ",
          id, (int)KILN_ERR_VIEW, line, id, nd, id);
    }
    emit_sx_close(E, arena_printf(&E->C->arena, "r%d", id));
}
