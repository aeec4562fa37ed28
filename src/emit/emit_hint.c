/* emit_hint.c: loads and stores with a cache hint (kiln.ldcs(a, i), kiln.stcs(a, i, v) ...,
 * cache_hints.c).  On the GPU the element's address goes to kiln_ld_<hint>/kiln_st_<hint>
 * (rt_cuda.h: one ld.global.<hint>.b<bits> or st.global.<hint>.b<bits>, the PTX Numba-CUDA
 * writes); on the CPU, where the hint has no meaning, the element is read or written as
 * any subscript.  float16 elements move as their 16 bits (emit_load, kiln_f2h). */
#include "emit_int.h"

void emit_cache_hint(Emit *E, Node *n) {
    Node *sub = n->call.bound.v[0];
    const char *hint = cache_hint_names[n->intr->sub];
    if (n->intr->sub < CH_STCG) { /* a load */
        if (!E->cuda) {
            emit_expr(E, sub);
            return;
        }
        const char *at = arena_printf(&E->C->arena, "kiln_ld_%s(&%s)", hint, emit_element(E, sub));
        PS(emit_load(E, sub->ty, at));
        return;
    }
    Node *v = n->call.bound.v[1];
    const char *el = emit_element(E, sub);
    if (E->cuda) P("kiln_st_%s(&%s, ", hint, el);
    else P("(%s = ", el);
    char k = emit_narrow(sub->ty); /* float16: its bits */
    if (k) {
        E->half = true;
        P("kiln_f2%c(", k);
    }
    emit_convert(E, v->ty, sub->ty, emit_expr_str(E, v, NULL));
    PS(k ? "))" : ")");
}
