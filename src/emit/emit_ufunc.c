/* emit_ufunc.c: the loop of a ufunc statement on arrays (src/sema/ufunc_stmt.c).
 *
 * emit_stmt.c has written the temporaries (each argument evaluated once); this writes
 * the rest as C loops over the output's extents, outermost first, in the calling
 * thread:
 *
 *     if (an input's extent is neither 1 nor the output's) { kiln_fail(BROADCAST); leave }
 *     for (u_0 ...) for (u_1 ...) {
 *         e0 = in0.data[sum over its axes of (extent 1 ? 0 : u_axis) * stride];   (or in0)
 *         out.data[sum of u_d * stride_d] = (dtype of out) OP(e0, e1);
 *     }
 *
 * Inputs align with the output's last axes, as NumPy broadcasts; strides are in
 * elements and every array value carries them, so one formula serves every layout.
 */
#include "emit_int.h"

static void offset_of(Buf *b, const char *arr, int nd, int out_nd, int id, bool bcast) {
    if (nd == 0) buf_puts(b, "0");
    for (int d = 0; d < nd; d++) {
        int od = out_nd - nd + d;
        if (d) buf_puts(b, " + ");
        if (bcast)
            buf_printf(b, "(%s.shape[%d] == 1 ? 0 : u%d_%d) * %s.strides[%d]", arr, d, id, od, arr,
                       d);
        else
            buf_printf(b, "u%d_%d * %s.strides[%d]", id, od, arr, d);
    }
}

void emit_ufunc_loop(Emit *E, Node *n) {
    const UfuncStmt *uf = n->uf;
    const Sym *os = uf->tmp[uf->nin]->sym;
    const Type *ot = os->ty;
    const char *out = emit_sym_name(E, os);
    int id = E->tmp++;
    int line = emit_loc(E, n->sp);
    /* extents that do not broadcast: NumPy's ValueError, raised by the launch */
    for (int k = 0; k < uf->nin; k++) {
        const Sym *s = uf->tmp[k]->sym;
        if (s->ty->kind != TY_ARRAY) continue;
        const char *a = emit_sym_name(E, s);
        for (int d = 0; d < s->ty->ndim; d++) {
            int od = ot->ndim - s->ty->ndim + d;
            emit_indent(E);
            P("if (%s.shape[%d] != 1 && %s.shape[%d] != %s.shape[%d]) { kiln_fail(E_, %d, %d, "
              "(long long)%s.shape[%d], %d, (long long)%s.shape[%d]); %s }\n",
              a, d, a, d, out, od, (int)KILN_ERR_BROADCAST, line, a, d, od, out, od, E->leave);
        }
    }
    /* scalar inputs: their element variable once */
    for (int k = 0; k < uf->nin; k++) {
        const Sym *s = uf->tmp[k]->sym, *e = uf->elem[k]->sym;
        if (s->ty->kind == TY_ARRAY) continue;
        emit_indent(E);
        P("%s = ", emit_sym_name(E, e));
        emit_convert(E, s->ty, e->ty, emit_sym_name(E, s));
        PS(";\n");
    }
    for (int d = 0; d < ot->ndim; d++) {
        emit_indent(E);
        P("for (i64 u%d_%d = 0; u%d_%d < %s.shape[%d]; u%d_%d++) {\n", id, d, id, d, out, d, id, d);
        E->ind++;
    }
    Buf off;
    for (int k = 0; k < uf->nin; k++) {
        const Sym *s = uf->tmp[k]->sym, *e = uf->elem[k]->sym;
        if (s->ty->kind != TY_ARRAY) continue;
        const char *a = emit_sym_name(E, s);
        buf_init_arena(&off, &E->C->arena);
        offset_of(&off, a, s->ty->ndim, ot->ndim, id, true);
        emit_indent(E);
        P("%s = ", emit_sym_name(E, e));
        emit_convert(E, s->ty->elem, e->ty,
                     emit_load(E, s->ty->elem, arena_printf(&E->C->arena, "%s.data[%s]", a, off.p)));
        PS(";\n");
    }
    buf_init_arena(&off, &E->C->arena);
    offset_of(&off, out, ot->ndim, ot->ndim, id, false);
    const char *val = emit_expr_str(E, uf->tmpl, NULL);
    emit_indent(E);
    P("%s.data[%s] = ", out, off.p);
    char half = emit_narrow(ot->elem);
    if (half) {
        E->half = true;
        P("kiln_f2%c(", half);
    }
    emit_convert(E, uf->tmpl->ty, ot->elem, val);
    if (half) PS(")");
    PS(";\n");
    for (int d = 0; d < ot->ndim; d++) {
        E->ind--;
        emit_indent(E);
        PS("}\n");
    }
}
