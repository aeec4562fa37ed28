/* sema_extern.c: calls of external CUDA device functions (kiln.declare_device).
 *
 * An external function is a C symbol with one explicit signature and the CUDA C sources
 * that define it; kiln never sees its body.  A global that names one becomes a FuncInfo
 * with `ext` set (one per symbol in a translation, so a kernel and its callees that
 * reach the same declaration share it), and a call of it is typed here: its arguments
 * are converted to the signature's types, as for a device function with a signature,
 * and it returns the signature's return type (a real scalar, a pointer or nothing).  Its parameters are scalars and pointers
 * (CPointer): Numba passes an array as a structure whose layout CUDA C code would have to
 * spell out, which kiln does not promise.  The first call records the function and its
 * sources in the SemaResult, each source text once (two declarations that share a
 * source, or a callee's declaration, paste it once), in the order first met, for the
 * emitter (emit.c), after the kernel's own @jit(link=...) sources (kiln_options.links,
 * recorded by sema_run).  On the CPU the sources are compiled as C (emit_extern.c), so
 * a function written in the C subset of CUDA C runs there too; a cooperative one is refused.
 */
#include <string.h>

#include "sema_int.h"

FuncInfo *sema_extern_info(Sema *S, const kiln_value *kv) {
    Compiler *C = S->C;
    const char *name = kv->name ? kv->name : "?";
    const char *sig = kv->signature ? kv->signature : "";
    for (FuncInfo *fi = S->funcs; fi; fi = fi->next) {
        const ExternFn *e = fi->ext;
        bool same = e && strcmp(e->name, name) == 0 && strcmp(e->sigtext, sig) == 0 &&
                    e->abi == kv->abi && e->nlinks == kv->nlinks &&
                    e->cooperative == (kv->cooperative != 0);
        for (int i = 0; same && i < kv->nlinks; i++)
            same = e->link_lens[i] == kv->link_lens[i] &&
                   memcmp(e->links[i], kv->links[i], kv->link_lens[i]) == 0;
        if (same) return fi;
    }
    FuncInfo *fi = arena_alloc(&C->arena, sizeof *fi);
    ExternFn *x = arena_alloc(&C->arena, sizeof *x);
    fi->ext = x;
    fi->name = x->name = arena_strdup(&C->arena, name);
    fi->is_device = true;
    x->sigtext = arena_strdup(&C->arena, sig);
    /* an external function may return a pointer ("int32*(...)"), which kiln's own
     * functions cannot: the parser reads the signature without that star */
    bool ret_ptr = false;
    const char *paren = strchr(sig, '(');
    size_t rl = paren ? (size_t)(paren - sig) : 0;
    while (rl && (sig[rl - 1] == ' ' || sig[rl - 1] == '\t')) rl--;
    char *text = arena_strdup(&C->arena, sig);
    if (rl && sig[rl - 1] == '*') {
        ret_ptr = true;
        text[rl - 1] = ' ';
    }
    fi->file.name = arena_printf(&C->arena, "<signature of %s>", x->name);
    fi->file.text = text;
    fi->file.len = strlen(text);
    fi->file.first_line = 1;
    x->abi = kv->abi;
    x->cooperative = kv->cooperative != 0;
    const char **texts = arena_alloc(&C->arena, sizeof(char *) * (size_t)(kv->nlinks + 1));
    size_t *lens = arena_alloc(&C->arena, sizeof(size_t) * (size_t)(kv->nlinks + 1));
    for (int i = 0; i < kv->nlinks; i++) {
        texts[i] = arena_strndup(&C->arena, kv->links[i], kv->link_lens[i]);
        lens[i] = kv->link_lens[i];
    }
    x->links = texts;
    x->link_lens = lens;
    x->nlinks = kv->nlinks;
    kiln_argtype args[KILN_MAX_PARAMS];
    FuncSig s = {NULL, 0, {0}, false};
    int saved = C->muted;
    C->muted = 0;
    int n = parse_signature(C, &fi->file, &s.ret, args, KILN_MAX_PARAMS, NULL);
    C->muted = saved;
    if (n < 0) {
        fi->parse_failed = true;
    } else {
        if (ret_ptr && s.ret.dtype != KILN_NDTYPES && !s.ret.is_array)
            s.ret.layout = KILN_LAYOUT_PTR;
        s.nargs = n;
        s.args = arena_alloc(&C->arena, sizeof(kiln_argtype) * (size_t)(n + 1));
        memcpy(s.args, args, sizeof(kiln_argtype) * (size_t)n);
        fi->sigs = arena_alloc(&C->arena, sizeof(FuncSig));
        fi->sigs[0] = s;
        fi->nsigs = 1;
        fi->has_sig = true;
        x->params = arena_alloc(&C->arena, sizeof(Type *) * (size_t)(n + 1));
        for (int i = 0; i < n; i++) x->params[i] = ty_from_argtype(C, &args[i]);
        x->nparams = n;
        x->ret = s.ret.dtype == KILN_NDTYPES ? &ty_none : ty_from_argtype(C, &s.ret);
    }
    fi->next = S->funcs;
    S->funcs = fi;
    return fi;
}

void sema_extern_source(Sema *S, const char *text, size_t len, bool copy) {
    Compiler *C = S->C;
    for (int j = 0; j < S->res->ext_srcs.n; j++) {
        const ExternSrc *e = S->res->ext_srcs.v[j];
        if (e->len == len && memcmp(e->text, text, len) == 0) return;
    }
    ExternSrc *e = arena_alloc(&C->arena, sizeof *e);
    e->text = copy ? arena_strndup(&C->arena, text, len) : text;
    e->len = len;
    vec_push(&C->arena, &S->res->ext_srcs, e);
}

/* Records x and its sources for the emitter, once; false (reported) when another
 * declaration of the same symbol that the kernel calls has another signature or ABI (one
 * C function cannot be both).  Two declarations that agree share one wrapper (emit). */
static bool record_use(Sema *S, Node *call, ExternFn *x) {
    if (x->used) return true;
    for (int i = 0; i < S->res->externs.n; i++) {
        const ExternFn *o = S->res->externs.v[i];
        if (strcmp(o->name, x->name) != 0) continue;
        if (strcmp(o->sigtext, x->sigtext) != 0 || o->abi != x->abi) {
            error_at(S->C, call->sp, "declare the function once and use that declaration",
                     "two declarations of external device function '%s' differ: '%s' (abi "
                     "\"%s\") and '%s' (abi \"%s\")",
                     x->name, o->sigtext, o->abi == KILN_ABI_C ? "c" : "numba", x->sigtext,
                     x->abi == KILN_ABI_C ? "c" : "numba");
            return false;
        }
    }
    size_t ml = strlen(KILN_LINKED_MARKER);
    int sources = 0; /* CUDA C among the links: the CPU target compiles those */
    for (int i = 0; i < x->nlinks; i++)
        sources += x->link_lens[i] <= ml || memcmp(x->links[i], KILN_LINKED_MARKER, ml) != 0;
    for (int i = 0; S->C->opts.target == KILN_TARGET_CPU && !sources && i < x->nlinks; i++) {
        if (x->link_lens[i] <= ml || memcmp(x->links[i], KILN_LINKED_MARKER, ml) != 0) continue;
        /* the marker, then "<kind> <digest> <name> (<kind name>)" and the comment's end */
        const char *t = x->links[i], *end = t + x->link_lens[i] - 3;
        const char *p = memchr(t + ml, ' ', (size_t)(end - t) - ml);
        p = p ? memchr(p + 1, ' ', (size_t)(end - p - 1)) : NULL;
        const char *from = p ? p + 1 : t + ml;
        error_at(S->C, call->sp,
                 "to run it on the CPU, declare it with its CUDA C source (a .cu file in "
                 "the C subset the CPU target compiles); or run the kernel on a GPU",
                 "'%s' is defined in compiled GPU code (%.*s), which the CPU target cannot run",
                 x->name, (int)(end - from), from);
        return false;
    }
    x->used = true;
    vec_push(&S->C->arena, &S->res->externs, x);
    if (x->cooperative) S->res->cooperative = true; /* a cooperative launch, as Numba's */
    for (int i = 0; i < x->nlinks; i++) sema_extern_source(S, x->links[i], x->link_lens[i], false);
    return true;
}

static bool is_complex(kiln_dtype d) { return d == KILN_COMPLEX64 || d == KILN_COMPLEX128; }

const Type *sema_call_extern(Sema *S, Node *call, FuncInfo *fi) {
    Compiler *C = S->C;
    ExternFn *x = fi->ext;
    if (fi->parse_failed || fi->nsigs != 1) return &ty_error;
    const FuncSig *sig = &fi->sigs[0];
    if (C->opts.target == KILN_TARGET_CPU && x->cooperative) {
        error_at(C, call->sp, "run the kernel on a GPU",
                 "'%s' is external CUDA device code that synchronises the grid "
                 "(declare_device(..., cooperative=True)), which the CPU target cannot run",
                 x->name);
        return &ty_error;
    }
    if (call->call.kwvals.n) {
        error_at(C, call->call.kwvals.v[0]->sp, "pass the arguments by position",
                 "external device function '%s' takes no keyword arguments", x->name);
        return &ty_error;
    }
    int np = sig->nargs;
    if (call->call.args.n != np) {
        error_at(C, call->sp, NULL, "%s() takes %d positional argument%s but %d were given",
                 x->name, np, np == 1 ? "" : "s", call->call.args.n);
        return &ty_error;
    }
    if (sig->ret.dtype != KILN_NDTYPES &&
        (sig->ret.is_array || is_complex((kiln_dtype)sig->ret.dtype))) {
        error_at(C, call->sp, "return a scalar through a CPointer argument instead",
                 "external device function '%s' returns %s: kiln calls external functions "
                 "that return a real scalar, a pointer (CPointer) or nothing (void)",
                 x->name, sig->ret.is_array ? "an array" : "a complex number");
        return &ty_error;
    }
    bool unknown = false;
    for (int i = 0; i < np; i++) {
        Node *a = call->call.args.v[i];
        const kiln_argtype *want = &sig->args[i];
        if (want->is_array || is_complex((kiln_dtype)want->dtype)) {
            error_at(C, a->sp, "declare the parameter as a pointer, CPointer(dtype), and pass one",
                     "parameter %d of external device function '%s' is %s: external "
                     "functions take real scalars and pointers (CPointer)",
                     i + 1, x->name, want->is_array ? "an array" : "a complex number");
            return &ty_error;
        }
        const Type *t = sema_expr(S, a);
        if (IS_ERR(t)) return &ty_error;
        if (IS_UNKNOWN(t)) {
            unknown = true;
            continue;
        }
        bool ok = want->layout == KILN_LAYOUT_PTR
                      ? ty_is_ptr(t) && t->elem->dtype == want->dtype
                      : ty_is_scalar(t) && t->kind != TY_COMPLEX;
        if (!ok) {
            char buf[64];
            kiln_argtype_format(want, buf, sizeof buf);
            error_at(C, a->sp, NULL,
                     "argument %d of '%s' is %s, which its signature's %s does not accept",
                     i + 1, x->name, ty_name(C, t), buf);
            return &ty_error;
        }
    }
    call->call.bound = call->call.args;
    if (unknown) return &ty_unknown;
    if (!record_use(S, call, x)) return &ty_error;
    call->ext = x;
    return x->ret;
}
