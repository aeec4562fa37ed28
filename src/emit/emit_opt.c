/* emit_opt.c: values that may be None (Numba's Optional of a number).
 *
 * A device function that returns a number on some paths and None on others, or
 * reaches its end (FuncSpec.ret_none), returns a struct of the value and whether
 * there is one, KO_<ctype> { v; has; } (kopt_KO_<ctype>(v), knone_KO_<ctype>()).  A variable assigned such a
 * result (Sym.maybe_none) is declared as that struct.  Where the number is needed
 * (arithmetic, a store, an argument) the value is read, `.v`: 0 for None, since
 * there is no None to compute with (Numba's unwrap raises, in kernels silently);
 * `x is None` reads `.has`.  The struct moves whole only through the assignments
 * and returns written here (emit_opt_raw, emit_opt_of).
 */
#include "emit_int.h"

const char *emit_opt_ctype(Emit *E, const Type *t) {
    const char *ct = emit_ctype(E, t);
    const char *name = arena_printf(&E->C->arena, "KO_%s", ct);
    if (emit_registered(E, name)) return name;
    buf_printf(&E->types,
               "typedef struct { %s v; kbool has; } %s;\n"
               "KILN_FN %s kopt_%s(%s v) { %s r; r.v = v; r.has = 1; return r; }\n"
               "KILN_FN %s knone_%s(void) { %s r; r.v = 0; r.has = 0; return r; }\n",
               ct, name, name, name, ct, name, name, name, name);
    if (E->debug) /* the value, checked: None read as a number is a TypeError */
        buf_printf(&E->types,
                   "KILN_FN %s kval_%s(struct kiln_err *E, int line, %s x) {\n"
                   "    if (!x.has) kiln_fail(E, %d, line, 0, 0, 0);\n    return x.v;\n}\n",
                   ct, name, name, (int)KILN_ERR_NONE_VALUE);
    return name;
}

const char *emit_opt_value(Emit *E, const Type *t, const char *raw, Span sp) {
    const char *on = emit_opt_ctype(E, t);
    if (!E->debug) return arena_printf(&E->C->arena, "(%s).v", raw);
    return arena_printf(&E->C->arena, "kval_%s(E_, %d, %s)", on, emit_loc(E, sp), raw);
}

/* The optional a maybe-None expression holds (sema_maybe_none), as it is. */
static const Type *raw_type(const Node *n) {
    return n->kind == E_CALL ? n->callee->ret : n->sym->ty;
}

void emit_opt_raw(Emit *E, Node *n) {
    if (n->kind == E_NAME) {
        PS(emit_sym_name(E, n->sym));
        return;
    }
    E->opt_raw = true; /* the call, without its `.v` (emit_expr.c) */
    emit_expr(E, n);
}

/* A function from the optional of `from` to that of `to`: the value converted as a
 * store would convert it. */
static const char *converter(Emit *E, const Type *from, const Type *to) {
    const char *fo = emit_opt_ctype(E, from), *tn = emit_opt_ctype(E, to);
    const char *name = arena_printf(&E->C->arena, "kopt_%s_of_%s", tn, fo);
    if (emit_registered(E, name)) return name;
    Buf b, *saved = E->o;
    buf_init_arena(&b, &E->C->arena);
    E->o = &b;
    emit_convert(E, from, to, "x.v");
    E->o = saved;
    buf_printf(&E->types, "KILN_FN %s %s(%s x) { return x.has ? kopt_%s(%s) : knone_%s(); }\n",
               tn, name, fo, tn, b.p ? b.p : "x.v", tn);
    return name;
}

void emit_opt_of(Emit *E, Node *v, const Type *t) {
    const char *tn = emit_opt_ctype(E, t);
    if (!v || v->kind == E_NONE || (v->ty && v->ty->kind == TY_NONE)) { /* return, None */
        P("knone_%s()", tn);
        return;
    }
    if (sema_maybe_none(v)) {
        const Type *from = raw_type(v);
        bool same = emit_same_ctype(E, from, t);
        if (!same) P("%s(", converter(E, from, t));
        emit_opt_raw(E, v);
        if (!same) PS(")");
        return;
    }
    P("kopt_%s(", tn);
    emit_expr_as(E, v, t);
    PS(")");
}

void emit_opt_test(Emit *E, Node *n) {
    NodeList *ops = &n->cmp.operands;
    Node *x = sema_maybe_none(ops->v[0]) ? ops->v[0] : ops->v[1];
    PS(n->cmp.ops[0] == C_ISNOT ? "((" : "(!(");
    emit_opt_raw(E, x);
    PS(").has)");
}
