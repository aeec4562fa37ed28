/* sema_print.c: print() in kernels.
 *
 * print(a, b, ...) writes its arguments separated by spaces and a newline, as
 * Python does, through printf on both targets: on the GPU CUDA buffers the
 * lines and the driver writes them at the next synchronisation; on the CPU
 * each call is one printf, so a line is never torn by another thread's.
 * Arguments are bools (True/False), integers, floats (printf's %f, as
 * Numba-CUDA prints them), string literals and tuples of these, nested.
 * Keyword arguments (sep=, end=, file=) are refused.  A string literal's text
 * is decoded here (the parser keeps only its span) and kept in the node's
 * name.id for emit_print.c.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sema_int.h"

/* A decoded character as UTF-8; NUL as the byte 0xFF, which UTF-8 never holds, since the
 * text is kept NUL-terminated (emit_print.c prints it as %c of 0). */
static void put_code(Buf *b, unsigned v) {
    unsigned char u[4];
    int n;
    if (v == 0) u[0] = 0xFF, n = 1;
    else if (v < 0x80) u[0] = (unsigned char)v, n = 1;
    else if (v < 0x800) u[0] = (unsigned char)(0xC0 | v >> 6), u[1] = (unsigned char)(0x80 | (v & 63)), n = 2;
    else if (v < 0x10000)
        u[0] = (unsigned char)(0xE0 | v >> 12), u[1] = (unsigned char)(0x80 | (v >> 6 & 63)),
        u[2] = (unsigned char)(0x80 | (v & 63)), n = 3;
    else
        u[0] = (unsigned char)(0xF0 | v >> 18), u[1] = (unsigned char)(0x80 | (v >> 12 & 63)),
        u[2] = (unsigned char)(0x80 | (v >> 6 & 63)), u[3] = (unsigned char)(0x80 | (v & 63)), n = 4;
    buf_put(b, (const char *)u, (size_t)n);
}

static int hexval(char c) {
    return c <= '9' ? c - '0' : (c | 32) - 'a' + 10;
}

/* Appends the decoded text of one literal (its span from the prefix to the closing quote)
 * to b; false after reporting what kernels cannot print. */
static bool decode_piece(Sema *S, Span sp, const char *s, size_t n, Buf *b) {
    size_t i = 0;
    bool raw = false;
    while (i < n && strchr("rRbBuUfF", s[i])) {
        if (strchr("bBfF", s[i])) {
            error_at(S->C, sp, "pass the values as print()'s arguments: print(\"x =\", x)",
                     "%s are not supported in kernels", strchr("bB", s[i]) ? "bytes" : "f-strings");
            return false;
        }
        raw |= s[i] == 'r' || s[i] == 'R';
        i++;
    }
    if (i >= n) return false;
    char q = s[i];
    size_t ql = (i + 2 < n && s[i + 1] == q && s[i + 2] == q) ? 3 : 1;
    size_t a = i + ql, e = n - ql;
    for (size_t k = a; k < e; k++) {
        char c = s[k];
        if (c != '\\' || raw || k + 1 >= e) {
            buf_put(b, &c, 1);
            continue;
        }
        char d = s[++k];
        switch (d) {
        case 'n': buf_puts(b, "\n"); break;
        case 't': buf_puts(b, "\t"); break;
        case 'r': buf_puts(b, "\r"); break;
        case 'a': buf_puts(b, "\a"); break;
        case 'b': buf_puts(b, "\b"); break;
        case 'f': buf_puts(b, "\f"); break;
        case 'v': buf_puts(b, "\v"); break;
        case '\\': buf_puts(b, "\\"); break;
        case '\'': buf_puts(b, "'"); break;
        case '"': buf_puts(b, "\""); break;
        case '\n': break; /* a continued line */
        case 'N':
            error_at(S->C, sp, "write the character itself",
                     "\\N{...} escapes are not supported in kernels' strings");
            return false;
        default:
            if (d >= '0' && d <= '7') { /* octal: up to three digits */
                unsigned v = (unsigned)(d - '0');
                for (int j = 0; j < 2 && k + 1 < e && s[k + 1] >= '0' && s[k + 1] <= '7'; j++)
                    v = v * 8 + (unsigned)(s[++k] - '0');
                put_code(b, v);
                break;
            }
            int w = d == 'x' ? 2 : d == 'u' ? 4 : d == 'U' ? 8 : 0;
            if (w) {
                unsigned long v = 0;
                int j = 0;
                for (; j < w && k + 1 < e && isxdigit((unsigned char)s[k + 1]); j++)
                    v = v * 16 + (unsigned long)hexval(s[++k]);
                if (j < w || v > 0x10FFFF) {
                    error_at(S->C, sp, NULL, "a malformed \\%c escape in a string", d);
                    return false;
                }
                put_code(b, (unsigned)v);
                break;
            }
            buf_puts(b, "\\"); /* Python keeps an unknown escape as it is */
            buf_put(b, &d, 1);
        }
    }
    return true;
}

/* The text of a string literal, its implicitly concatenated pieces joined. */
static const char *decode(Sema *S, Node *n) {
    const char *s = n->sp.file->text + n->sp.off;
    size_t len = n->sp.len, i = 0;
    Buf b;
    buf_init_arena(&b, &S->C->arena);
    buf_puts(&b, "");
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ||
                           (s[i] == '\\' && i + 1 < len && s[i + 1] == '\n')))
            i += s[i] == '\\' ? 2 : 1;
        if (i >= len) break;
        size_t p = i;
        while (p < len && strchr("rRbBuUfF", s[p])) p++;
        if (p >= len || (s[p] != '\'' && s[p] != '"')) {
            error_at(S->C, n->sp, NULL, "this string literal cannot be printed in a kernel");
            return NULL;
        }
        char q = s[p];
        bool triple = p + 2 < len && s[p + 1] == q && s[p + 2] == q;
        size_t k = p + (triple ? 3 : 1);
        while (k < len) {
            if (s[k] == '\\') {
                k += 2;
                continue;
            }
            if (s[k] == q && (!triple || (k + 2 < len && s[k + 1] == q && s[k + 2] == q))) break;
            k++;
        }
        size_t end = k + (triple ? 3 : 1);
        if (end > len) end = len;
        if (!decode_piece(S, n->sp, s + i, end - i, &b)) return NULL;
        i = end;
    }
    return b.p;
}

/* Whether t prints, counting its printf arguments into *leaves. */
static bool printable(const Type *t, int *leaves) {
    switch (t->kind) {
    case TY_BOOL:
    case TY_INT:
    case TY_FLOAT: (*leaves)++; return true;
    case TY_TUPLE:
        for (int i = 0; i < t->n; i++)
            if (!printable(t->elems[i], leaves)) return false;
        return true;
    default: return false;
    }
}

static bool check_arg(Sema *S, Node *a, int *leaves) {
    if (a->kind == E_STR && a->ty == &ty_str && a->name.id) return true; /* done before */
    if (a->kind == E_STR) {
        const char *text = decode(S, a);
        if (!text) return false;
        a->name.id = text;
        a->ty = &ty_str;
        return true;
    }
    if (a->kind == E_TUPLE) {
        for (int i = 0; i < a->tuple.n; i++)
            if (!check_arg(S, a->tuple.v[i], leaves)) return false;
        a->ty = NULL; /* printed element by element, never built */
        return true;
    }
    const Type *t = sema_expr(S, a);
    if (t->kind == TY_ERROR || t->kind == TY_UNKNOWN) return false;
    if (t->kind == TY_STR && t->lit && !memchr(t->str, '\0', (size_t)t->litv)) {
        /* a string constant's name (a global, a parameter): printed as its literal */
        Node *lit = node_new(S->C, E_STR, a->sp);
        lit->name.id = t->str;
        lit->ty = &ty_str;
        if (a->kind == E_NAME) { /* still the read of its variable (unbound.c) */
            lit->sym = a->sym;
            lit->flags = a->flags & NF_UNBOUND;
        }
        *a = *lit;
        return true;
    }
    if (a->intr && a->intr->kind == IK_DIM3) {
        /* threadIdx, blockIdx, blockDim, gridDim: printed as Numba prints a Dim3, the
         * tuple (x, y, z); the node becomes that tuple of its three attributes */
        Node *base = node_new(S->C, a->kind, a->sp);
        *base = *a;
        static const char *const xyz[3] = {"x", "y", "z"};
        NodeList items = {0};
        int cap = 0;
        for (int k = 0; k < 3; k++) {
            Node *at = node_new(S->C, E_ATTR, a->sp);
            at->attr.base = base;
            at->attr.attr = xyz[k];
            at->attr.attr_sp = a->sp;
            nodelist_push(S->C, &items, at, &cap);
        }
        memset(a, 0, sizeof *a);
        a->kind = E_TUPLE;
        a->sp = base->sp;
        a->tuple = items;
        return check_arg(S, a, leaves);
    }
    if (!printable(t, leaves)) {
        error_at(S->C, a->sp, "print numbers, bools, string literals and tuples of them",
                 "print() of %s is not supported in kernels", ty_name(S->C, t));
        return false;
    }
    return true;
}

const Type *sema_print(Sema *S, Node *n) {
    Compiler *C = S->C;
    if (n->call.kwvals.n) {
        error_at(C, n->sp, "print() in a kernel separates by a space and ends the line",
                 "print() takes no keyword arguments in kernels");
        return &ty_error;
    }
    int leaves = 0;
    for (int i = 0; i < n->call.args.n; i++)
        if (!check_arg(S, n->call.args.v[i], &leaves)) return &ty_error;
    if (leaves > KILN_MAX_PRINT_VALUES) {
        error_at(C, n->sp, "split it into several print() calls",
                 "print() of %d values; a kernel's print() takes at most %d (CUDA's printf "
                 "limit)", leaves, KILN_MAX_PRINT_VALUES);
        return &ty_error;
    }
    n->opty = &ty_none;
    return &ty_none;
}
