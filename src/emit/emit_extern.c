/* emit_extern.c: external CUDA device functions (kiln.declare_device) in the program.
 *
 * sema_extern.c recorded the functions a kernel calls and their CUDA C sources (and the
 * kernel's own @jit(link=...) sources), each text once.  The sources go at the very top
 * of the CUDA program, ahead of kiln's prelude, as in a translation unit of their own
 * (each after a marker, KILN_EXTERN_SRC_MARKER, that tells the CUDA target to give NVRTC
 * the toolkit's include directories); then, after kiln's types, a declaration of each
 * function where its sources do not declare it and a wrapper that kiln's calls go through
 * (emit_expr.c writes `kiln_ext_NAME(args)`).
 *
 * On the CPU the same sources are compiled as C by the system compiler (cpu.c), after
 * kiln's prelude: CUDA's function qualifiers are defined away and `extern "C"` is taken
 * out of the text (blocks `extern "C" { ... }` with their closing brace), so a device
 * function written in the C subset of CUDA C runs on the host; anything else (CUDA's
 * headers, C++) is the C compiler's error, which the first call raises.  The wrappers
 * are C: with Numba's ABI the result comes back through a buffer large enough for any
 * scalar, so a source whose out parameter is wider than the signature's type cannot
 * write past it.
 */
#include "emit_int.h"

/* The CUDA C text t as C for the host: `extern "C"` replaced by spaces, and the closing
 * brace of an `extern "C" { ... }` block too; comments, strings and character constants
 * are copied as they are. */
/* extern "C" { ... } blocks open at once that host_text takes apart; a deeper one keeps
 * its brace, which the C compiler then reports (docs/limits.md) */
enum { KILN_EXTERN_C_BLOCKS_MAX = 64 };

static void host_text(Buf *out, const char *t, size_t n) {
    int open[KILN_EXTERN_C_BLOCKS_MAX], nopen = 0, depth = 0;
    size_t i = 0;
    while (i < n) {
        char c = t[i];
        if (c == '/' && i + 1 < n && (t[i + 1] == '/' || t[i + 1] == '*')) {
            size_t j = i + 2;
            if (t[i + 1] == '/') {
                while (j < n && t[j] != '\n') j++;
            } else {
                while (j + 1 < n && !(t[j] == '*' && t[j + 1] == '/')) j++;
                j = j + 2 < n ? j + 2 : n;
            }
            buf_put(out, t + i, j - i);
            i = j;
            continue;
        }
        if (c == '"' || c == '\'') {
            size_t j = i + 1;
            while (j < n && t[j] != c && t[j] != '\n') j += t[j] == '\\' ? 2 : 1;
            j = j < n ? j + 1 : n;
            buf_put(out, t + i, j - i);
            i = j;
            continue;
        }
        bool word_start = i == 0 || !(t[i - 1] == '_' || (t[i - 1] >= '0' && t[i - 1] <= '9') ||
                                      ((t[i - 1] | 32) >= 'a' && (t[i - 1] | 32) <= 'z'));
        if (word_start && n - i >= 6 && memcmp(t + i, "extern", 6) == 0) {
            size_t j = i + 6;
            while (j < n && (t[j] == ' ' || t[j] == '\t' || t[j] == '\n')) j++;
            if (n - j >= 3 && memcmp(t + j, "\"C\"", 3) == 0) {
                size_t k = j + 3;
                while (k < n && (t[k] == ' ' || t[k] == '\t' || t[k] == '\n')) k++;
                bool block = k < n && t[k] == '{';
                for (size_t m = i; m < (block ? k + 1 : j + 3); m++)
                    buf_put(out, t[m] == '\n' ? "\n" : " ", 1);
                if (block && nopen < KILN_EXTERN_C_BLOCKS_MAX) open[nopen++] = depth;
                i = block ? k + 1 : j + 3;
                continue;
            }
        }
        if (c == '{') depth++;
        if (c == '}') {
            if (nopen && open[nopen - 1] == depth) {
                nopen--;
                buf_put(out, " ", 1);
                i++;
                continue;
            }
            depth--;
        }
        buf_put(out, &c, 1);
        i++;
    }
}

void emit_extern_sources(Emit *E, Buf *out) {
    const SemaResult *r = E->R;
    if (!E->cuda) { /* the host's C, after kiln's prelude (emit.c), when a function of
                     * theirs is called: a kernel's own link= sources alone stay the GPU's */
        if (!r->ext_srcs.n || !r->externs.n) return;
        buf_puts(out, "\n/* ---- external device functions' sources, as C ---- */\n"
                      "#define __device__\n#define __host__\n#define __forceinline__ inline\n"
                      "#define __noinline__\n");
        for (int i = 0; i < r->ext_srcs.n; i++) {
            const ExternSrc *x = r->ext_srcs.v[i];
            host_text(out, x->text, x->len);
            buf_puts(out, "\n");
        }
        buf_puts(out, "#undef __device__\n#undef __host__\n#undef __forceinline__\n"
                      "#undef __noinline__\n#line 1 \"<kiln program>\"\n");
        return;
    }
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

int emit_extern_check_cpu(Emit *E) {
    const SemaResult *r = E->R;
    for (int i = 0; i < r->externs.n; i++) {
        const ExternFn *x = r->externs.v[i];
        if (declared_in_sources(r, x->name)) continue;
        diag_plain(E->C->ctx, KILN_ERROR,
                   "declare it with its CUDA C source, declare_device(name, sig, link=\"f.cu\"), "
                   "in the C subset the CPU target compiles; or run the kernel on a GPU",
                   "external device function '%s' has no source on the CPU target: a kernel's "
                   "own link= code (and compiled code: .ptx, .cubin, ...) is the GPU's",
                   x->name);
        return -1;
    }
    return 0;
}

/* The parameter list ("T a0, T a1") and the argument list (", a0, a1") of x's wrapper, or
 * false when an earlier declaration of the same symbol already has one (sema_extern.c let
 * only agreeing ones through, so one wrapper serves them). */
static bool wrapper_lists(Emit *E, int i, const char **ps, const char **as) {
    const ExternFn *x = E->R->externs.v[i];
    for (int j = 0; j < i; j++)
        if (strcmp(((const ExternFn *)E->R->externs.v[j])->name, x->name) == 0) return false;
    Buf params, args;
    buf_init_arena(&params, &E->C->arena);
    buf_init_arena(&args, &E->C->arena);
    for (int k = 0; k < x->nparams; k++) {
        buf_printf(&params, "%s%s a%d", k ? ", " : "", extern_ctype(E, x->params[k]), k);
        buf_printf(&args, ", a%d", k);
    }
    *ps = params.p ? params.p : "";
    *as = args.p ? args.p : "";
    return true;
}

/* The CPU target's declarations and wrappers (C): as emit_extern_decls's below, with
 * Numba's ABI's result read from a union large enough for any scalar the source's out
 * parameter may point to (C has no decltype to ask the source which). */
static void host_decls(Emit *E) {
    for (int i = 0; i < E->R->externs.n; i++) {
        const ExternFn *x = E->R->externs.v[i];
        const char *ps, *as;
        if (!wrapper_lists(E, i, &ps, &as)) continue;
        bool is_void = x->ret->kind == TY_NONE, ptr = ty_is_ptr(x->ret);
        const char *ct = is_void ? "int" : extern_ctype(E, x->ret);
        const char *rt = is_void ? "void" : emit_ctype(E, x->ret);
        bool declared = declared_in_sources(E->R, x->name);
        const char *val;
        if (x->abi == KILN_ABI_NUMBA) {
            if (!declared)
                P("int %s(void *out%s%s);\n", x->name, x->nparams ? ", " : "", ps);
            P("KILN_FN %s kiln_ext_%s(%s) {\n"
              "    union { %s v; long double ld; unsigned char b[64]; } r;\n"
              "    (void)%s((void *)&r%s);\n",
              rt, x->name, x->nparams ? ps : "void", ct, x->name, as);
            val = "r.v";
        } else {
            if (!declared)
                P("%s %s(%s);\n", is_void ? "void" : ct, x->name, x->nparams ? ps : "void");
            P("KILN_FN %s kiln_ext_%s(%s) {\n", rt, x->name, x->nparams ? ps : "void");
            val = arena_printf(&E->C->arena, "%s(%s)", x->name, x->nparams ? as + 2 : "");
        }
        if (is_void && x->abi != KILN_ABI_NUMBA) P("    %s;\n", val);
        else if (ptr) P("    %s p_; p_.data = (%s)(uintptr_t)(%s); return p_;\n", rt, ct, val);
        else if (!is_void) P("    return (%s)(%s);\n", rt, val);
        PS("}\n");
    }
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
    if (!E->cuda) { /* the host's wrappers, in C */
        host_decls(E);
        E->o = saved;
        return;
    }
    PS("template <class F, class D> struct kiln_out { typedef D type; };\n"
       "template <class R, class P, class... A, class D> struct kiln_out<R(P *, A...), D> "
       "{ typedef P type; };\n"
       "template <class R, class... A, class D> struct kiln_out<R(void *, A...), D> "
       "{ typedef D type; };\n");
    for (int i = 0; i < E->R->externs.n; i++) {
        const ExternFn *x = E->R->externs.v[i];
        const char *ps, *as;
        if (!wrapper_lists(E, i, &ps, &as)) continue; /* agreeing declarations: one wrapper */
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
