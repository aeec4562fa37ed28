/* sema_raise.c: `raise E` and `raise E(constants)` in kernels.
 *
 * The parser makes a raise an assert whose test is False, with the exception in
 * assrt.exc.  Here the exception is checked: a global exception class (the resolver
 * gives its key in kiln._compile's registry: kiln_value.exception), called with no
 * arguments or with literal constants (strings, numbers, booleans, None).  The raise
 * site's fields are kept in assrt.site for emit_stmt.c, which names the site as the
 * error's "file" (emit_loc's table): "\x01raise", the class's key, the function's
 * name, the file, and the arguments' source text, each after a \x1f.  The host builds
 * the exception from them after the launch (errors.c, kiln._compile.user_exception).
 */
#include <string.h>

#include "sema_int.h"

/* Whether n is a literal constant an exception can be built with; its source text. */
static bool constant_arg(const Node *n) {
    if (n->kind == E_UNARY && (n->op == U_NEG || n->op == U_POS))
        return n->un.x->kind == E_INT || n->un.x->kind == E_FLOAT;
    return n->kind == E_STR || n->kind == E_INT || n->kind == E_FLOAT || n->kind == E_BOOL ||
           n->kind == E_NONE;
}

/* The site of `assert test, "text"`: Numba raises AssertionError("text") when the test
 * fails (debug=True), so the message reaches the host as a raise's does.  Nothing when
 * AssertionError is not the builtin (a plain assert's message is then the line). */
void sema_assert_site(Sema *S, Node *n) {
    Node *msg = n->assrt.msg;
    if (!msg || msg->kind != E_STR || sema_local(S, "AssertionError")) return;
    GVal *g = sema_resolve(S, S->cur->fi->scope, "AssertionError", n->sp);
    if (!g || g->kind != KILN_VAL_OTHER || !g->exception) return;
    const char *text = msg->sp.file->text + msg->sp.off;
    if (memchr(text, '\x1e', msg->sp.len) || memchr(text, '\x1f', msg->sp.len)) return;
    Buf b;
    buf_init_arena(&b, &S->C->arena);
    buf_printf(&b, "\x01raise\x1f%s\x1f%s\x1f%s\x1f%.*s", g->exception, S->cur->fi->name,
               n->sp.file ? n->sp.file->name : "?", (int)msg->sp.len, text);
    n->assrt.site = b.p;
}

/* A Python string literal of the n bytes at s, as the host reads the site's arguments
 * (ast.literal_eval): quotes, backslashes and control characters escaped; the site's own
 * separators (\x1e, \x1f) never appear raw. */
static void py_literal(Buf *b, const char *s, size_t n) {
    buf_puts(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') buf_printf(b, "\\%c", c);
        else if (c < 32 || c == 127) buf_printf(b, "\\x%02x", c);
        else buf_put(b, (const char *)&c, 1);
    }
    buf_puts(b, "\"");
}

void sema_raise(Sema *S, Node *n) {
    Compiler *C = S->C;
    Node *exc = n->assrt.exc, *fn = exc;
    NodeList *args = NULL;
    if (exc->kind == E_CALL) {
        fn = exc->call.fn;
        args = &exc->call.args;
        if (exc->call.kwvals.n) {
            error_at(C, exc->call.kwvals.v[0]->sp, "pass the arguments by position",
                     "an exception raised in a kernel takes no keyword arguments");
            return;
        }
    }
    const char *dotted = sema_dotted(S, fn);
    const Sym *local = fn->kind == E_NAME ? sema_local(S, fn->name.id) : NULL;
    GVal *g = dotted && !local ? sema_resolve(S, S->cur->fi->scope, dotted, fn->sp) : NULL;
    if (!g || g->kind != KILN_VAL_OTHER || !g->exception) {
        error_at(C, fn->sp, "raise a class derived from Exception, named by a global",
                 "kernels can raise exception classes (raise ValueError, raise "
                 "ValueError(\"text\")), not %s",
                 !dotted || local ? "a value computed in the kernel"
                 : g && g->kind == KILN_VAL_MISSING ? "an undefined name"
                 : "this value");
        return;
    }
    Buf b;
    buf_init_arena(&b, &C->arena);
    const char *file = n->sp.file ? n->sp.file->name : "?";
    buf_printf(&b, "\x01raise\x1f%s\x1f%s\x1f%s\x1f", g->exception, S->cur->fi->name, file);
    for (int i = 0; args && i < args->n; i++) {
        Node *a = args->v[i];
        const Type *st = a->kind == E_NAME ? sema_expr(S, a) : NULL;
        if (st && st->kind == TY_STR && st->lit) { /* a name's string constant (strings.c) */
            buf_printf(&b, "%s", i ? "\x1e" : "");
            py_literal(&b, st->str, (size_t)st->litv);
            continue;
        }
        if (!constant_arg(a)) {
            error_at(C, a->sp, "raise with a constant message, and write the values to an array",
                     "an exception raised in a kernel takes constants (strings, numbers, "
                     "booleans, None, a name holding a string constant) as its arguments");
            return;
        }
        const char *text = a->sp.file->text + a->sp.off;
        if (memchr(text, '\x1e', a->sp.len) || memchr(text, '\x1f', a->sp.len)) {
            error_at(C, a->sp, NULL, "this constant cannot be an exception's argument");
            return;
        }
        buf_printf(&b, "%s%.*s", i ? "\x1e" : "", (int)a->sp.len, text);
    }
    n->assrt.site = b.p;
}
