/* sema_numba.c: Numba's spelling of a typed argument, for the line a diagnostic adds in
 * Numba's words so that code written against Numba's messages keeps matching (issue 14:
 * kiln's words first, then Numba's key phrase).  It names only what Numba names the same
 * way: scalars ("float32"), arrays ("array(float32, 1d, A)"), a literal int
 * ("Literal[int](1)"), tuples ("Tuple(Literal[int](1), int32)", "UniTuple(int32 x 2)") and
 * dtype objects ("class(float32)"); anything else is kiln's ty_name. */
#include <string.h>

#include "sema_int.h"

const char *sema_numba_name(Sema *S, const Node *n) {
    Compiler *C = S->C;
    if (n->kind == E_STR) { /* a dtype's name: not typed as a value */
        const char *text = sema_string_text(S, n);
        return text ? arena_printf(&C->arena, "Literal[str](%s)", text) : "unicode_type";
    }
    const Type *t = n->ty;
    if (!t) return "?";
    if (n->kind == E_INT && !n->ilit.big)
        return arena_printf(&C->arena, "Literal[int](%llu)", (unsigned long long)n->ilit.v);
    if (t->kind == TY_DTYPE)
        return arena_printf(&C->arena, "class(%s)", kiln_dtype_name((kiln_dtype)t->dtype));
    if (t->kind == TY_TUPLE && n->kind == E_TUPLE && n->tuple.n == t->n) {
        const char **parts = arena_alloc(&C->arena, sizeof *parts * (size_t)(t->n ? t->n : 1));
        bool same = t->n > 0;
        size_t len = 0;
        for (int i = 0; i < t->n; i++) {
            parts[i] = sema_numba_name(S, n->tuple.v[i]);
            same = same && strcmp(parts[i], parts[0]) == 0;
            len += strlen(parts[i]) + 2;
        }
        if (same) return arena_printf(&C->arena, "UniTuple(%s x %d)", parts[0], t->n);
        char *s = arena_alloc(&C->arena, len + 8);
        strcpy(s, "Tuple(");
        for (int i = 0; i < t->n; i++) {
            if (i) strcat(s, ", ");
            strcat(s, parts[i]);
        }
        strcat(s, ")");
        return s;
    }
    return ty_name(C, ty_strong(t));
}
