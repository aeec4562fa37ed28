/* emit_print.c: print(...) as one printf call (sema_print.c says what prints).
 *
 * The format is built at compile time: string literals go in as text (with %
 * doubled and C escapes), bools as %s of "True"/"False", signed integers as
 * %lld, unsigned as %llu, floats as %f of a double (CUDA's and Numba-CUDA's
 * format), tuples as Python writes them: "(1, 2)", "(1,)".  A tuple value that
 * is not a literal is read element by element from its struct (fields f0,
 * f1, ...), the text of the value repeated: sema types values, not effects,
 * and a tuple expression in a kernel is a name, a literal or a pure call.  On
 * the GPU the format is a __constant__ array of the program (kfmt<i>_).
 */
#include <string.h>

#include "emit_int.h"

typedef struct Pr {
    Emit *E;
    Buf fmt;  /* the format, C-escaped */
    Buf args; /* ", arg" for each conversion */
} Pr;

static void fmt_text(Pr *p, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0xFF) { /* a NUL of the string (sema_print.c put_code) */
            buf_puts(&p->fmt, "%c");
            buf_puts(&p->args, ", 0");
        } else if (c == '%') buf_puts(&p->fmt, "%%");
        else if (c == '"' || c == '\\') buf_printf(&p->fmt, "\\%c", c);
        else if (c == '\n') buf_puts(&p->fmt, "\\n");
        else if (c < 32 || c >= 127) buf_printf(&p->fmt, "\\%03o", c);
        else buf_put(&p->fmt, (const char *)&c, 1);
    }
}

/* One value whose C text is x and type t. */
static void value(Pr *p, const char *x, const Type *t) {
    Emit *E = p->E;
    switch (t->kind) {
    case TY_BOOL:
        buf_puts(&p->fmt, "%s");
        buf_printf(&p->args, ", (%s) ? \"True\" : \"False\"", x);
        return;
    case TY_INT: {
        bool sig = ty_is_signed(t) || t->weak;
        buf_puts(&p->fmt, sig ? "%lld" : "%llu");
        buf_printf(&p->args, ", (%s)(%s)", sig ? "long long" : "unsigned long long", x);
        return;
    }
    case TY_FLOAT: {
        Buf tmp, *saved = E->o;
        buf_init_arena(&tmp, &E->C->arena);
        E->o = &tmp;
        emit_convert(E, t, ty_scalar(KILN_FLOAT64), x);
        E->o = saved;
        buf_puts(&p->fmt, "%f");
        buf_printf(&p->args, ", (double)(%s)", tmp.p ? tmp.p : x);
        return;
    }
    case TY_TUPLE:
        buf_puts(&p->fmt, "(");
        for (int i = 0; i < t->n; i++) {
            if (i) buf_puts(&p->fmt, ", ");
            value(p, arena_printf(&E->C->arena, "(%s).f%d", x, i), t->elems[i]);
        }
        buf_puts(&p->fmt, t->n == 1 ? ",)" : ")");
        return;
    default: return; /* sema refused it */
    }
}

static void arg(Pr *p, Node *a) {
    if (a->kind == E_STR) {
        const char *s = a->name.id ? a->name.id : "";
        fmt_text(p, s, strlen(s));
        return;
    }
    if (a->kind == E_TUPLE) {
        buf_puts(&p->fmt, "(");
        for (int i = 0; i < a->tuple.n; i++) {
            if (i) buf_puts(&p->fmt, ", ");
            Node *x = a->tuple.v[i];
            if (x->kind == E_STR) { /* Python shows the repr of a string in a tuple */
                buf_puts(&p->fmt, "'");
                arg(p, x);
                buf_puts(&p->fmt, "'");
            } else {
                arg(p, x);
            }
        }
        buf_puts(&p->fmt, a->tuple.n == 1 ? ",)" : ")");
        return;
    }
    value(p, emit_expr_str(p->E, a, NULL), a->ty);
}

/* The bytes of a C string literal's contents as fmt_text writes them, and its NUL. */
static int64_t c_literal_bytes(const char *s) {
    int64_t n = 1;
    for (; *s; n++) {
        if (*s != '\\') s++;
        else if (s[1] >= '0' && s[1] <= '7') s += 4; /* \ooo */
        else s += 2;                                 /* \n \" \\ */
    }
    return n;
}

void emit_print(Emit *E, Node *n) {
    Pr p = {.E = E};
    buf_init_arena(&p.fmt, &E->C->arena);
    buf_init_arena(&p.args, &E->C->arena);
    buf_puts(&p.fmt, "");
    buf_puts(&p.args, "");
    for (int i = 0; i < n->call.args.n; i++) {
        if (i) buf_puts(&p.fmt, " ");
        arg(&p, n->call.args.v[i]);
    }
    buf_puts(&p.fmt, "\\n");
    E->print = true;
    /* the CPU flushes at once, so a kernel's lines keep their place among the
     * program's other output; the GPU's appear at the next synchronisation */
    if (E->cuda) {
        /* the format in constant memory, as Numba-CUDA puts it (get_const_mem_size counts
         * it), declared at file scope: NVRTC has no statement expressions */
        E->fmt_bytes += c_literal_bytes(p.fmt.p);
        int64_t all = E->R->const_bytes + E->fmt_bytes;
        if (all > KILN_MAX_CONST_MEMORY_BYTES) {
            error_at(E->C, n->sp, "print less text, or read the larger constant arrays as "
                     "globals or arguments",
                     "the print() formats and kiln.const.array_like arrays of this kernel come "
                     "to %lld bytes, over the %d bytes of the GPU's constant memory "
                     "(KILN_MAX_CONST_MEMORY_BYTES)", (long long)all, KILN_MAX_CONST_MEMORY_BYTES);
            return;
        }
        int id = E->nfmt++;
        buf_printf(&E->helpers, "__constant__ char kfmt%d_[] = \"%s\";\n", id, p.fmt.p);
        P("printf(kfmt%d_%s)", id, p.args.p);
    } else {
        P("(printf(\"%s\"%s), fflush(0))", p.fmt.p, p.args.p);
    }
}
