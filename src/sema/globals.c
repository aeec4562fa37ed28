/* globals.c: what a kernel's free names are.
 *
 * The resolver (kiln_options.resolve, the Python side) answers a dotted name
 * with a kiln_value; this file freezes that answer into a GVal: a constant,
 * a namespace or intrinsic, a kiln function (its source parsed into a
 * FuncInfo, with its explicit signatures), a constant array or an external
 * device function.  sema_global gives an expression naming one its type.
 */
#include <string.h>

#include "sema_int.h"

const NsRef *sema_ns(Sema *S, const char *name, const Intrinsic *in, void *scope) {
    NsRef *r = arena_alloc(&S->C->arena, sizeof *r);
    r->name = arena_strdup(&S->C->arena, name);
    r->intr = in;
    r->scope = scope;
    return r;
}

static const Type *ns_type(Sema *S, const NsRef *ns) {
    Type *t = arena_alloc(&S->C->arena, sizeof *t);
    t->kind = TY_NS;
    t->ns = ns;
    return t;
}

static FuncInfo *funcinfo_for(Sema *S, const kiln_value *kv) {
    for (FuncInfo *fi = S->funcs; fi; fi = fi->next)
        if (fi->scope == kv->scope) return fi;
    FuncInfo *fi = sema_funcinfo(S->C, kv->scope, kv->text, kv->text_len, kv->filename,
                                 kv->first_line);
    fi->is_device = kv->is_device != 0;
    fi->next = S->funcs;
    S->funcs = fi;
    if (kv->signature && *kv->signature) {
        /* one or more signatures, separated by ';' (the Dispatcher joins a list so) */
        int cap = 0;
        for (const char *p = kv->signature; *p;) {
            const char *end = strchr(p, ';');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            SrcFile *sf = arena_alloc(&S->C->arena, sizeof *sf);
            sf->name = arena_printf(&S->C->arena, "<signature of %s>", fi->name ? fi->name : "?");
            sf->text = arena_strndup(&S->C->arena, p, len);
            sf->len = len;
            sf->first_line = 1;
            kiln_argtype args[KILN_MAX_PARAMS];
            FuncSig sig = {NULL, 0, {0}, false};
            int saved = S->C->muted;
            S->C->muted = 0;
            int n = parse_signature(S->C, sf, &sig.ret, args, KILN_MAX_PARAMS, &sig.ret_void);
            S->C->muted = saved;
            if (n < 0) {
                fi->parse_failed = true;
                break;
            }
            sig.nargs = n;
            sig.args = arena_alloc(&S->C->arena, sizeof(kiln_argtype) * (size_t)(n + 1));
            memcpy(sig.args, args, sizeof(kiln_argtype) * (size_t)n);
            fi->sigs = arena_grow(&S->C->arena, fi->sigs, &cap, fi->nsigs + 1, sizeof(FuncSig));
            fi->sigs[fi->nsigs++] = sig;
            fi->has_sig = true;
            p = end ? end + 1 : p + len;
        }
    }
    return fi;
}

/* The element type of a global array: a scalar, or a record of the layout it names. */
static const Type *global_elem(Compiler *C, const kiln_value *kv) {
    if (kv->record) return ty_record(C, kv->record, (int)kv->dtype - KILN_RECORD0);
    return ty_scalar(kv->dtype);
}

static GVal *convert_value(Sema *S, const kiln_value *kv, const char *dotted, void *scope) {
    Compiler *C = S->C;
    GVal *g = arena_alloc(&C->arena, sizeof *g);
    g->kind = kv->kind;
    switch (kv->kind) {
    case KILN_VAL_MISSING: g->ty = &ty_error; break;
    case KILN_VAL_INT:
        g->ty = &ty_weak_int;
        g->cv.i = kv->v.i;
        break;
    case KILN_VAL_FLOAT:
        g->ty = &ty_weak_float;
        g->cv.f = kv->v.f;
        break;
    case KILN_VAL_BOOL:
        g->ty = ty_scalar(KILN_BOOL);
        g->cv.i = kv->v.i != 0;
        break;
    case KILN_VAL_COMPLEX:
        g->ty = &ty_weak_complex;
        g->cv.f = kv->v.f;
        g->im = kv->im;
        break;
    case KILN_VAL_SCALAR:
        if ((unsigned)kv->dtype >= KILN_NDTYPES) {
            g->kind = KILN_VAL_OTHER;
            g->other = "a scalar of an unknown type";
            g->ty = &ty_error;
            break;
        }
        g->ty = ty_scalar(kv->dtype);
        g->cv.u = kv->v.u;
        if (g->ty->kind == TY_FLOAT || g->ty->kind == TY_COMPLEX) g->cv.f = kv->v.f;
        g->im = kv->im;
        break;
    case KILN_VAL_TUPLE: {
        g->ntuple = kv->ntuple;
        g->tuple = arena_alloc(&C->arena, sizeof(GVal) * (size_t)(kv->ntuple + 1));
        const Type **el = arena_alloc(&C->arena, sizeof(Type *) * (size_t)(kv->ntuple + 1));
        for (int i = 0; i < kv->ntuple; i++) {
            GVal *e = convert_value(S, &kv->tuple[i], dotted, scope);
            /* arrays too: each is its own frozen array (or device array by address) */
            if ((!ty_is_scalar(e->ty) && e->ty->kind != TY_TUPLE && e->ty->kind != TY_ARRAY &&
                 e->ty->kind != TY_STR) || /* (strings: read as X[k] constants, strings.c) */
                e->ty->kind == TY_COMPLEX) {
                g->kind = KILN_VAL_OTHER;
                g->other = e->ty->kind == TY_COMPLEX
                               ? "a tuple holding a complex number (frozen tuples hold real ones)"
                           : e->kind == KILN_VAL_OTHER
                               ? arena_printf(&C->arena, "a tuple holding %s", e->other)
                               : "a tuple holding something other than numbers and arrays";
                g->ty = &ty_error;
                return g;
            }
            g->tuple[i] = *e;
            el[i] = e->ty;
        }
        g->ty = ty_tuple(C, kv->ntuple, el);
        break;
    }
    case KILN_VAL_NAMESPACE: {
        const Intrinsic *in = kv->name ? intrinsic_lookup(kv->name) : NULL;
        if (!in) {
            g->kind = KILN_VAL_OTHER;
            g->other = arena_printf(&C->arena, "'%s'", kv->name ? kv->name : "?");
            g->ty = &ty_error;
            break;
        }
        g->ns = sema_ns(S, kv->name, in, scope);
        g->ty = in->kind == IK_DTYPE ? ty_dtype(C, (kiln_dtype)in->sub) : ns_type(S, g->ns);
        break;
    }
    case KILN_VAL_MODULE:
        g->ns = sema_ns(S, dotted, NULL, scope);
        if (kv->name && strcmp(kv->name, "enum") == 0) ((NsRef *)g->ns)->by_name = true;
        if (kv->name && strncmp(kv->name, "namedtuple:", 11) == 0)
            sema_namedtuple_class(C, (NsRef *)g->ns, kv->name);
        g->ty = ns_type(S, g->ns);
        break;
    case KILN_VAL_DTYPE:
        if (kv->record) { /* a record type (kiln.from_dtype) or structured dtype */
            Type *t = arena_alloc(&C->arena, sizeof *t);
            t->kind = TY_DTYPE;
            t->dtype = KILN_RECORD0;
            t->rec = kv->record;
            t->recid = (int)kv->dtype - KILN_RECORD0;
            g->ty = t;
            break;
        }
        if ((unsigned)kv->dtype >= KILN_NDTYPES) {
            g->kind = KILN_VAL_OTHER;
            g->other = "a type kiln does not know";
            g->ty = &ty_error;
            break;
        }
        g->ty = ty_dtype(C, kv->dtype);
        break;
    case KILN_VAL_FUNCTION: {
        /* a device function's own link= code joins the GPU program that uses it (Numba's
         * @cuda.jit(device=True, link=[...])); the CPU target compiles only the C sources
         * of the external functions it calls (emit_extern.c) */
        for (int i = 0; C->opts.target == KILN_TARGET_CUDA && i < kv->nlinks; i++)
            sema_extern_source(S, kv->links[i], kv->link_lens[i], true);
        g->fn = funcinfo_for(S, kv);
        Type *t = arena_alloc(&C->arena, sizeof *t);
        t->kind = TY_FUNC;
        t->fn = g->fn;
        g->ty = t;
        break;
    }
    case KILN_VAL_EXTERN: {
        g->fn = sema_extern_info(S, kv);
        Type *t = arena_alloc(&C->arena, sizeof *t);
        t->kind = TY_FUNC;
        t->fn = g->fn;
        g->ty = t;
        break;
    }
    case KILN_VAL_ARRAY: {
        if (!kv->data && kv->address) {
            /* a global device array, by address.  GPU memory cannot be read by a CPU
             * kernel; the other way round only happens under KILN_TARGET=cpu (host-memory
             * device arrays), where nothing launches on a GPU and CUDA C is only checked
             * (KILN_CHECK_CUDA), so it compiles */
            bool cpu = C->opts.target == KILN_TARGET_CPU;
            bool ok = ((unsigned)kv->dtype < KILN_NDTYPES || kv->record) && kv->ndim >= 0 &&
                      kv->ndim <= KILN_MAX_NDIM && (kv->shape || kv->ndim == 0); /* 0-d too */
            for (int i = 0; ok && i < kv->ndim; i++) ok = kv->shape[i] >= 0;
            if (!ok || (cpu && kv->device >= 0)) {
                g->kind = KILN_VAL_OTHER;
                g->other = !ok ? "a device array kiln cannot read"
                               : "a device array in GPU memory, but this kernel is being "
                                 "compiled for the CPU";
                g->ty = &ty_error;
                break;
            }
            int64_t *shape = arena_alloc(&C->arena, sizeof(int64_t) * KILN_MAX_NDIM);
            memcpy(shape, kv->shape, sizeof(int64_t) * (size_t)kv->ndim);
            g->shape = shape;
            g->address = kv->address;
            g->ty = ty_array(C, global_elem(C, kv), kv->ndim, 'C');
            break;
        }
        /* a global array frozen into the program: its elements are copied here */
        size_t esize = kv->record ? (size_t)kv->record->itemsize
                       : (unsigned)kv->dtype < KILN_NDTYPES ? (size_t)kiln_dtype_size(kv->dtype) : 0;
        size_t bytes = esize;
        bool ok = (esize || kv->record) && kv->ndim >= 1 && kv->ndim <= KILN_MAX_NDIM && kv->shape && kv->data;
        for (int i = 0; ok && i < kv->ndim; i++) {
            if (kv->shape[i] < 0 ||
                (kv->shape[i] && bytes > (size_t)KILN_MAX_CONST_ARRAY_BYTES / (size_t)kv->shape[i]))
                ok = false;
            else
                bytes *= (size_t)kv->shape[i];
        }
        if (!ok || bytes > (size_t)KILN_MAX_CONST_ARRAY_BYTES) {
            g->kind = KILN_VAL_OTHER;
            g->other = arena_printf(&C->arena,
                                    "an array over the %d bytes of a global array captured as a "
                                    "constant (KILN_MAX_CONST_ARRAY_BYTES)",
                                    KILN_MAX_CONST_ARRAY_BYTES);
            g->ty = &ty_error;
            break;
        }
        int64_t *shape = arena_alloc(&C->arena, sizeof(int64_t) * KILN_MAX_NDIM);
        memcpy(shape, kv->shape, sizeof(int64_t) * (size_t)kv->ndim);
        void *data = arena_alloc(&C->arena, bytes ? bytes : 1);
        memcpy(data, kv->data, bytes);
        g->shape = shape;
        g->data = data;
        g->ty = ty_array(C, global_elem(C, kv), kv->ndim, 'C');
        break;
    }
    case KILN_VAL_STR: /* a string constant (strings.c) */
        g->ty = ty_str_lit(C, kv->name ? kv->name : "", kv->name ? (size_t)kv->v.i : 0);
        break;
    case KILN_VAL_OTHER:
        /* a type name ('dict'), or a phrase that already says what it is ("a NumPy
         * array of dtype <U1 (...)") */
        if (kv->name && (strncmp(kv->name, "a ", 2) == 0 || strncmp(kv->name, "an ", 3) == 0))
            g->other = arena_strdup(&C->arena, kv->name);
        else
            g->other = arena_printf(&C->arena, "a '%s'", kv->name ? kv->name : "object");
        if (kv->exception) g->exception = arena_strdup(&C->arena, kv->exception);
        /* a global None (alignment = None, DEBUG = None): the constant None */
        g->ty = kv->name && strcmp(kv->name, "NoneType") == 0 ? &ty_none : &ty_error;
        break;
    }
    return g;
}

GVal *sema_resolve(Sema *S, void *scope, const char *dotted, Span sp) {
    for (int i = 0; i < S->nrc; i++)
        if (S->rc[i].scope == scope && strcmp(S->rc[i].name, dotted) == 0) return S->rc[i].v;
    kiln_value kv;
    memset(&kv, 0, sizeof kv);
    GVal *g;
    if (!S->C->resolve || S->C->resolve(S->C->resolve_ud, scope, dotted, &kv) != 0) {
        int saved = S->C->muted;
        S->C->muted = 0;
        error_at(S->C, sp, NULL, "looking up '%s' failed", dotted);
        S->C->muted = saved;
        g = arena_alloc(&S->C->arena, sizeof *g);
        g->kind = KILN_VAL_OTHER;
        g->other = "an object whose lookup failed";
        g->ty = &ty_error;
    } else {
        g = convert_value(S, &kv, dotted, scope);
    }
    S->rc = arena_grow(&S->C->arena, S->rc, &S->caprc, S->nrc + 1, sizeof(RCacheEntry));
    S->rc[S->nrc].scope = scope;
    S->rc[S->nrc].name = arena_strdup(&S->C->arena, dotted);
    S->rc[S->nrc].v = g;
    S->nrc++;
    return g;
}

const Type *sema_global(Sema *S, Node *n, const GVal *g, const char *what) {
    Compiler *C = S->C;
    switch (g->kind) {
    case KILN_VAL_MISSING:
        if (strcmp(what, "print") == 0)
            error_at(C, n->sp, "write results to an array and print them on the host",
                     "print() is not supported in kernels");
        else
            error_at(C, n->sp, NULL,
                     "name '%s' is not defined\n(Numba: NameError: name '%s' is not defined)",
                     what, what);
        return &ty_error;
    case KILN_VAL_COMPLEX: n->gv = g; return g->ty; /* no NF_CONST: ConstVal holds one number */
    case KILN_VAL_INT:
    case KILN_VAL_FLOAT:
    case KILN_VAL_BOOL:
    case KILN_VAL_SCALAR:
        if (g->ty->kind == TY_COMPLEX) {
            n->gv = g;
            return g->ty;
        }
        n->flags |= NF_CONST;
        n->cval = g->cv;
        if (ty_is_int(g->ty) && (!ty_is_signed(g->ty) || g->cv.i >= 0)) n->flags |= NF_NONNEG;
        return g->ty;
    case KILN_VAL_TUPLE: n->gv = g; return g->ty;
    case KILN_VAL_ARRAY: n->gv = g; return g->ty; /* read-only: sema_mark_written */
    case KILN_VAL_NAMESPACE:
    case KILN_VAL_MODULE:
    case KILN_VAL_DTYPE:
    case KILN_VAL_FUNCTION:
    case KILN_VAL_EXTERN:
    case KILN_VAL_STR: return g->ty;
    case KILN_VAL_OTHER:
        if (g->ty->kind == TY_NONE) { /* read as the literal None */
            n->kind = E_NONE;
            return &ty_none;
        }
        if (strcmp(what, "print") == 0) {
            error_at(C, n->sp, "write results to an array and print them on the host",
                     "print() is not supported in kernels");
            return &ty_error;
        }
        if (g->other && strstr(g->other, "builtin_function_or_method")) {
            /* sum(), isinstance(), random.random(): not a value the user gave a name */
            error_at(C, n->sp,
                     "kernels call the math, cmath and NumPy functions docs/language.md "
                     "lists, kiln's intrinsics and @kiln.jit device functions; write the "
                     "loop (a sum of a tuple: for v in t: s += v)",
                     "the built-in function '%s' is not supported in kernels (Untyped global "
                     "name '%s')",
                     what, what);
            return &ty_error;
        }
        error_at(C, n->sp,
                 "kernels can read ints, floats, bools, NumPy scalars and arrays, tuples of "
                 "numbers and arrays, and kiln functions; pass other values as arguments",
                 /* Numba's phrase in parentheses: code matching its text keeps working */
                 "global '%s' is %s, which kernels cannot use (Untyped global name '%s')", what,
                 g->other, what);
        return &ty_error;
    }
    return &ty_error;
}


FuncInfo *sema_funcinfo(Compiler *C, void *scope, const char *text, size_t len,
                        const char *filename, int first_line) {
    FuncInfo *fi = arena_alloc(&C->arena, sizeof *fi);
    fi->scope = scope;
    fi->file.name = arena_strdup(&C->arena, filename ? filename : "<unknown>");
    fi->file.text = arena_strndup(&C->arena, text ? text : "", text ? len : 0);
    fi->file.len = text ? len : 0;
    fi->file.first_line = first_line > 0 ? first_line : 1;
    int saved = C->muted;
    C->muted = 0;
    fi->proto = parse_function(C, &fi->file);
    C->muted = saved;
    if (!fi->proto) {
        fi->parse_failed = true;
        fi->name = "?";
    } else {
        fi->name = fi->proto->def.name;
    }
    return fi;
}
