/* emit_extern.c: external CUDA device functions (kiln.declare_device) in the program.
 *
 * sema_extern.c recorded the functions a kernel calls and their CUDA C sources (and the
 * kernel's own @jit(link=...) sources), each text once.  The sources go at the very top
 * of the CUDA program, ahead of kiln's prelude, as in a translation unit of their own
 * (each after a marker, KILN_EXTERN_SRC_MARKER, that tells the CUDA target to give NVRTC
 * the toolkit's include directories); then, after kiln's types, a declaration of each
 * function where its sources do not declare it and a wrapper that kiln's calls go through
 * (emit_expr.c writes `kiln_ext_NAME(args)`).
 */
#include "emit_int.h"

void emit_extern_sources(Emit *E, Buf *out) {
    const SemaResult *r = E->R;
    for (int i = 0; i < r->ext_srcs.n; i++) {
        const ExternSrc *x = r->ext_srcs.v[i];
        buf_printf(out, KILN_EXTERN_SRC_MARKER "%d ---- */\n", i + 1);
        buf_put(out, x->text, x->len);
        buf_puts(out, "\n");
    }
    /* the sources carry #line markers of their own (_extern.py): kiln's text is kiln's */
    if (r->ext_srcs.n) buf_puts(out, "#line 1 \"<kiln prelude>\"\n");
}

/* The C type of an external function's parameter: a pointer's element pointer. */
static const char *extern_ctype(Emit *E, const Type *t) {
    if (ty_is_ptr(t)) return arena_printf(&E->C->arena, "%s *", emit_elem_ctype(E, t->elem));
    return emit_ctype(E, t);
}

/* Whether a pasted source mentions name( : a C++ source that calls or defines a function
 * declares it, and then kiln's declaration, whose types may be spelled otherwise (Numba
 * links by name only: `int32` in a signature, `unsigned int *out` in the source), would
 * conflict with it. */
static bool declared_in_sources(const SemaResult *r, const char *name) {
    size_t nl = strlen(name);
    for (int i = 0; i < r->ext_srcs.n; i++) {
        const ExternSrc *x = r->ext_srcs.v[i];
        for (size_t k = 0; k + nl <= x->len; k++) {
            if (memcmp(x->text + k, name, nl) != 0) continue;
            char before = k ? x->text[k - 1] : ' ';
            if (before == '_' || (before >= '0' && before <= '9') ||
                ((before | 32) >= 'a' && (before | 32) <= 'z'))
                continue;
            size_t j = k + nl;
            while (j < x->len && (x->text[j] == ' ' || x->text[j] == '\t' || x->text[j] == '\n'))
                j++;
            if (j < x->len && x->text[j] == '(') return true;
        }
    }
    return false;
}

/* External device functions (sema_extern.c): an extern "C" declaration of each, as its
 * ABI spells it, unless its sources declare it, and a wrapper kiln's calls go through.
 * The wrapper takes the source's own types: with Numba's ABI the local for the result
 * is of the type the function's first parameter points to (kiln_out_t; a `void *out`
 * gets the signature's return type, or an int for void), the status is dropped, and the
 * result converts to the signature's type; arguments and a C-ABI result convert as C++
 * converts them. */
void emit_extern_decls(Emit *E, Buf *o) {
    if (!E->R->externs.n) return;
    Buf *saved = E->o;
    E->o = o;
    PS("template <class F, class D> struct kiln_out { typedef D type; };\n"
       "template <class R, class P, class... A, class D> struct kiln_out<R(P *, A...), D> "
       "{ typedef P type; };\n"
       "template <class R, class... A, class D> struct kiln_out<R(void *, A...), D> "
       "{ typedef D type; };\n");
    for (int i = 0; i < E->R->externs.n; i++) {
        const ExternFn *x = E->R->externs.v[i];
        bool dup = false; /* two declarations that agree (sema_extern.c): one wrapper */
        for (int j = 0; j < i && !dup; j++)
            dup = strcmp(((const ExternFn *)E->R->externs.v[j])->name, x->name) == 0;
        if (dup) continue;
        bool is_void = x->ret->kind == TY_NONE, ptr = ty_is_ptr(x->ret);
        /* ct: the result's C type (a pointer's `T *`); rt: the wrapper's, kiln's value type
         * (a pointer's KP_ struct, which the result's address fills) */
        const char *ct = is_void ? "void" : extern_ctype(E, x->ret);
        const char *rt = is_void ? "void" : emit_ctype(E, x->ret);
        const char *ret = ptr ? arena_printf(&E->C->arena,
                                             "%s p_; p_.data = (%s)(uintptr_t)(%%s); return p_;",
                                             rt, ct)
                              : arena_printf(&E->C->arena, "return (%s)(%%s);", rt);
        bool numba = x->abi == KILN_ABI_NUMBA;
        Buf params, args;
        buf_init_arena(&params, &E->C->arena);
        buf_init_arena(&args, &E->C->arena);
        for (int k = 0; k < x->nparams; k++) {
            buf_printf(&params, "%s%s a%d", k ? ", " : "", extern_ctype(E, x->params[k]), k);
            buf_printf(&args, ", a%d", k);
        }
        const char *ps = params.p ? params.p : "", *as = args.p ? args.p : "";
        bool declared = declared_in_sources(E->R, x->name);
        if (numba) {
            if (!declared)
                P("extern \"C\" __device__ int %s(%s *out%s%s);\n", x->name, ct,
                  x->nparams ? ", " : "", ps);
            P("KILN_FN %s kiln_ext_%s(%s) {\n    typename kiln_out<decltype(%s), %s>::type r;\n"
              "    (void)%s(&r%s);\n",
              rt, x->name, ps, x->name, is_void ? "int" : ct, x->name, as);
            if (!is_void) {
                PS("    ");
                P(ret, "r");
                PS("\n");
            }
            PS("}\n");
        } else {
            if (!declared)
                P("extern \"C\" __device__ %s %s(%s);\n", ct, x->name, x->nparams ? ps : "void");
            const char *callx = arena_printf(&E->C->arena, "%s(%s)", x->name,
                                             x->nparams ? as + 2 : "");
            P("KILN_FN %s kiln_ext_%s(%s) { ", rt, x->name, ps);
            if (is_void) P("%s;", callx);
            else P(ret, callx);
            PS(" }\n");
        }
    }
    E->o = saved;
}
