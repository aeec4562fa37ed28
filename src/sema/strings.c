/* strings.c: string constants in kernels.
 *
 * A kernel has no string values at run time; a string is a constant of its type, as
 * Numba's literal strings are: a literal ("relu"), a global that holds a str, or a device
 * function's parameter given one (a specialisation per text, as a literal shape is:
 * types.c ty_compile_time), or a variable assigned one (sema.c assign_name: one text per
 * variable; the emitters write nothing for it; literal_unroll's copies each assign their
 * item).  `==` and `!=` between them fold to constants, so
 * `if kind == "relu":` keeps one branch and the other is not typed; a string compared
 * with a constant of another type is unequal, as in Python (with anything computed, an
 * array or a dtype it is an error: the fold would drop the evaluation).  Storing one,
 * computing with one or comparing one otherwise is an error that says so.  The literal's text is taken
 * as written between its quotes: escapes, prefixes other than u, triple quotes and
 * implicit concatenation are refused (the text would not be the value).
 */
#include <string.h>

#include "sema_int.h"

const Type *sema_str_literal(Sema *S, Node *n) {
    Compiler *C = S->C;
    const char *s = n->sp.file->text + n->sp.off;
    size_t len = n->sp.len;
    const char *why = NULL;
    if (len && (*s == 'u' || *s == 'U')) s++, len--;
    if (len && strchr("bBrRfF", *s))
        why = *s == 'b' || *s == 'B' ? "bytes are not supported in kernels"
              : *s == 'f' || *s == 'F' ? "f-strings are not supported in kernels (print the "
                                         "values: print('x =', x))"
                                       : "write the string without the r prefix";
    else if (len < 2 || (s[0] != '"' && s[0] != '\'') || s[len - 1] != s[0] ||
             (len >= 6 && s[1] == s[0] && s[2] == s[0]) || memchr(s + 1, s[0], len - 2))
        why = "write one string literal (no implicit concatenation, no triple quotes)";
    else if (memchr(s + 1, '\\', len - 2))
        why = "string constants with escapes are not supported in kernels";
    if (why) {
        error_at(C, n->sp, NULL, "%s", why);
        return &ty_error;
    }
    return ty_str_lit(C, s + 1, len - 2);
}

bool sema_str_compare(Sema *S, Node *n, const Type *a, const Type *b, const Type **out) {
    if (a->kind != TY_STR && b->kind != TY_STR) return false;
    Compiler *C = S->C;
    NodeList *ops = &n->cmp.operands;
    int op = n->cmp.ops[0];
    *out = &ty_error;
    if (ops->n != 2) {
        error_at(C, n->sp, "write (a == b) and (b == c)",
                 "strings in kernels are constants: a chained comparison of them is not "
                 "supported");
        return true;
    }
    if (op != C_EQ && op != C_NE) {
        error_at(C, n->sp, "compare strings with == or !=",
                 "strings in kernels are constants: only == and != compare them");
        return true;
    }
    if (IS_UNKNOWN(a) || IS_UNKNOWN(b)) {
        *out = &ty_unknown;
        return true;
    }
    /* a string and a constant of another type are unequal, as in Python; anything else
     * (an array, a dtype, a value computed at run time, whose evaluation would be
     * dropped with the fold) is refused */
    const Node *other = a->kind == TY_STR ? ops->v[1] : ops->v[0];
    const Type *ot = a->kind == TY_STR ? b : a;
    if (ot->kind != TY_STR && !((other->flags & NF_CONST) && ty_is_scalar(ot))) {
        error_at(C, other->sp,
                 ot->kind == TY_DTYPE ? "compare with the type itself: a.dtype == np.float64"
                                      : "compare a string constant with another one",
                 "cannot compare a string with %s in a kernel", ty_name(C, ot));
        return true;
    }
    sema_set_const_int(n, ty_equal(a, b) != (op == C_NE));
    *out = ty_scalar(KILN_BOOL);
    return true;
}
