/* emit.c: the typed IR as C (CPU) or CUDA C++ (GPU).
 *
 * The output is, in order: the target prelude and rt_common.h (embedded
 * text), the struct types of the arrays and tuples the program uses, helper
 * functions made for this program (array views, tuple accessors), the device
 * functions (callees before callers; kiln has no recursion), the kernel, and
 * the entry point.
 *
 * Conversions are where sema recorded them: each operation's operands are
 * converted to its `opty`, assigned values to the variable's type, call
 * arguments to the callee's parameter types.  All locals are declared at the
 * top of their function with their single inferred type.  Values that Python
 * evaluates once but C would evaluate twice (the middle of a chained
 * comparison, the left of a non-boolean `or`) use a GNU statement expression,
 * which both GCC and NVRTC accept.
 *
 * On the CPU a kernel that plan.c puts in lane mode (plan.h) is written twice:
 * as kiln_body and as kiln_lanes_, the same statements with varying names
 * indexed by the lane and each run of them inside a vectorised loop over the
 * lanes (lane_block), called through kiln_body_lanes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "plan.h"

typedef struct LoopCtx {
    int flag; /* temp number of the "left by break" flag, or -1 */
} LoopCtx;

typedef struct Emit {
    Compiler *C;
    const SemaResult *R;
    bool cuda;
    bool debug;
    bool fastmath;
    Buf types;          /* struct typedefs and their constructors */
    Buf helpers;        /* per-program helper functions (views...) */
    Buf funcs;          /* functions */
    Buf *o;             /* where text goes now */
    int ind;            /* indentation of statements */
    const char **names; /* registered keys: an open-addressing set (see registered) */
    const char **named; /* the value stored with each key (a struct's C name) */
    int nnames, capnames;
    int ngarrays;       /* frozen tuples written as static arrays, kga<i> (global_array) */
    PtrVec gvalues;     /* frozen tuples used as values in this function (GVal *), kgv<i> */
    FuncSpec *f;        /* the function being written */
    int tmp;            /* temporaries in this function */
    int line;           /* last #line written */
    int nhelp;          /* helpers made */
    LoopCtx loops[128];
    int nloops;
    const char *leave;  /* statement that leaves the function after a runtime error */
    PtrVec files;       /* source file names; runtime errors carry an index */
    CpuPlan plan;       /* CPU: the guard folded into the loops, and their order */
    bool in_entry;      /* writing the entry: parameters are p0, p1... */
    const Node *subst;  /* this node is written as subst_text (a[i] op= v) */
    const char *subst_text;
    Buf *body;          /* the function body being written (function()) */
    bool too_big;       /* KILN_MAX_SOURCE_BYTES was reported: write no more */
    bool lanes;         /* writing kiln_body_lanes (plan.h, lane mode) */
    bool in_lane;       /* ...inside one of its lane loops: varying names take [l_] */
    int *declared;      /* per symbol id: the run whose lane loop declared it */
    int run;            /* lane loops written so far */
    const char *mask;   /* the lanes still in the varying while loop being written */
} Emit;

static void ex(Emit *E, Node *n);
static void ex_as(Emit *E, Node *n, const Type *to);
static const char *ctype(Emit *E, const Type *t);

#define P(...) buf_printf(E->o, __VA_ARGS__)
#define PS(s) buf_puts(E->o, s)

static void indent(Emit *E) {
    for (int i = 0; i < E->ind; i++) PS("    ");
}

static const char *cfile(Emit *E, const char *name) {
    Buf b;
    buf_init_arena(&b, &E->C->arena);
    for (const char *s = name; *s; s++) {
        if (*s == '"' || *s == '\\') buf_putc(&b, '\\');
        if ((unsigned char)*s < 32) continue;
        buf_putc(&b, *s);
    }
    return b.p ? b.p : "";
}

static void line_marker(Emit *E, Span sp) {
    if (!sp.file || sp.line == E->line) return;
    E->line = sp.line;
    P("#line %d \"%s\"\n", sp.line, cfile(E, sp.file->name));
}

/* Where a runtime error happened: (file index << 20) | line, as kiln.h says. */
static int loc(Emit *E, Span sp) {
    int idx = -1;
    const char *name = sp.file ? sp.file->name : "?";
    for (int i = 0; i < E->files.n; i++)
        if (strcmp(E->files.v[i], name) == 0) idx = i;
    if (idx < 0) {
        idx = E->files.n;
        vec_push(&E->C->arena, &E->files, (void *)name);
    }
    return (idx << 20) | (sp.line & 0xFFFFF);
}

/* ---- names ------------------------------------------------------------------ */

static const char *sanitize(Emit *E, const char *s) {
    Buf b;
    buf_init_arena(&b, &E->C->arena);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
            buf_putc(&b, (char)c);
        else
            buf_printf(&b, "_x%02X", c);
    }
    return b.p ? b.p : "";
}

static const char *sym_name(Emit *E, const Sym *s) {
    if (E->in_entry && s->param >= 0) return arena_printf(&E->C->arena, "p%d", s->param);
    if (E->in_lane) {
        /* lane mode (plan.h): a varying local is one value per lane, the
         * innermost coordinate the chunk's base plus the lane */
        int c = E->plan.lanes.cls[s->id];
        if (c == LANE_VARYING)
            return arena_printf(&E->C->arena, "v%d_%s[l_]", s->id, sanitize(E, s->name));
        if (c == LANE_COORD)
            return arena_printf(&E->C->arena, "(v%d_%s + l_)", s->id, sanitize(E, s->name));
    }
    return arena_printf(&E->C->arena, "v%d_%s", s->id, sanitize(E, s->name));
}

static const char *func_name(Emit *E, const FuncSpec *f) {
    return arena_printf(&E->C->arena, "kf%d_%s", f->id, sanitize(E, f->fi->name));
}

/* ---- types ------------------------------------------------------------------ */

static const char *scalar_ctype(const Type *t) {
    static const char *const names[KILN_NDTYPES] = {"kbool", "i8",  "i16", "i32", "i64", "u8",
                                                    "u16",   "u32", "u64", "f32", "f32", "f64"};
    return names[t->dtype];
}

/* The slot of key in the set of registered keys (types, helpers). */
static int name_slot(Emit *E, const char *key) {
    size_t mask = (size_t)E->capnames - 1;
    size_t i = (size_t)hash_bytes(key, strlen(key)) & mask;
    while (E->names[i] && strcmp(E->names[i], key) != 0) i = (i + 1) & mask;
    return (int)i;
}

/* Whether key was registered before; registers it (with value) if not.  A
 * hash set, so that a program with many types or helpers stays linear. */
static bool register_as(Emit *E, const char *key, const char *value, const char **old) {
    if (2 * (E->nnames + 1) > E->capnames) {
        const char **on = E->names, **ov = E->named;
        int ocap = E->capnames;
        E->capnames = ocap ? ocap * 2 : 64;
        E->names = arena_alloc(&E->C->arena, sizeof(char *) * (size_t)E->capnames);
        E->named = arena_alloc(&E->C->arena, sizeof(char *) * (size_t)E->capnames);
        for (int i = 0; i < ocap; i++)
            if (on[i]) {
                int j = name_slot(E, on[i]);
                E->names[j] = on[i];
                E->named[j] = ov[i];
            }
    }
    int i = name_slot(E, key);
    if (E->names[i]) {
        if (old) *old = E->named[i];
        return true;
    }
    E->names[i] = key;
    E->named[i] = value;
    E->nnames++;
    return false;
}

static bool registered(Emit *E, const char *key) { return register_as(E, key, NULL, NULL); }

static const char *array_ctype(Emit *E, const Type *t) {
    const char *el = scalar_ctype(t->elem);
    const char *name = arena_printf(&E->C->arena, "KA_%s_%d", el, t->ndim);
    if (registered(E, name)) return name;
    Buf *b = &E->types;
    int nd = t->ndim;
    buf_printf(b, "typedef struct { %s *data; i64 shape[%d]; i64 strides[%d]; } %s;\n", el, nd,
               nd, name);
    /* constructor for local and shared storage: C-contiguous strides */
    buf_printf(b, "KILN_FN %s %s_local(%s *d", name, name, el);
    for (int i = 0; i < nd; i++) buf_printf(b, ", i64 s%d", i);
    buf_printf(b, ") {\n    %s r;\n    r.data = d;\n", name);
    for (int i = 0; i < nd; i++) buf_printf(b, "    r.shape[%d] = s%d;\n", i, i);
    buf_printf(b, "    r.strides[%d] = 1;\n", nd - 1);
    for (int i = nd - 2; i >= 0; i--)
        buf_printf(b, "    r.strides[%d] = r.strides[%d] * s%d;\n", i, i + 1, i + 1);
    buf_printf(b, "    return r;\n}\n");
    return name;
}

/* A tuple type is a struct of fields f0, f1 ...; its constructor (_make) and
 * run-time indexing (_get) are written when first used, so a large tuple that
 * is only indexed costs no code for them. */
static const char *tuple_ctype(Emit *E, const Type *t) {
    Buf k;
    buf_init_arena(&k, &E->C->arena);
    const char **el = arena_alloc(&E->C->arena, sizeof(char *) * (size_t)(t->n + 1));
    buf_puts(&k, "tuple:");
    for (int i = 0; i < t->n; i++) {
        el[i] = ctype(E, t->elems[i]);
        buf_printf(&k, "%s,", el[i]);
    }
    /* the full key finds the struct; its name is KT<n>_<number>, short and
     * the same for the same program */
    const char *key = k.p, *name = NULL;
    if (register_as(E, key, NULL, &name)) return name;
    name = arena_printf(&E->C->arena, "KT%d_%d", t->n, E->nnames);
    E->named[name_slot(E, key)] = name; /* the value of the key just added */
    Buf *b = &E->types;
    buf_printf(b, "typedef struct {");
    for (int i = 0; i < t->n; i++) buf_printf(b, " %s f%d;", el[i], i);
    if (t->n == 0) buf_printf(b, " char unused;");
    buf_printf(b, " } %s;\n", name);
    return name;
}

/* The tuple's constructor, NAME_make(a0, a1, ...). */
static const char *tuple_make(Emit *E, const Type *t) {
    const char *name = ctype(E, t);
    const char *fn = arena_printf(&E->C->arena, "%s_make", name);
    if (registered(E, fn)) return fn;
    Buf *b = &E->types;
    buf_printf(b, "KILN_FN %s %s(", name, fn);
    for (int i = 0; i < t->n; i++) buf_printf(b, "%s%s a%d", i ? ", " : "", ctype(E, t->elems[i]), i);
    if (t->n == 0) buf_printf(b, "void");
    buf_printf(b, ") {\n    %s r;\n", name);
    if (t->n == 0) buf_printf(b, "    r.unused = 0;\n");
    for (int i = 0; i < t->n; i++) buf_printf(b, "    r.f%d = a%d;\n", i, i);
    buf_printf(b, "    return r;\n}\n");
    return fn;
}

/* Tuples of one scalar type with more items than this are read at a run-time
 * index as an array (below it, a switch keeps them in registers), and a frozen
 * one is copied from its static array: a C compiler takes time far beyond
 * linear on a constructor call with thousands of arguments. */
enum { TUPLE_AS_ARRAY = 16 };

static bool tuple_homogeneous(Emit *E, const Type *t) {
    if (t->n == 0 || !ty_is_scalar(t->elems[0])) return false;
    const char *el = ctype(E, t->elems[0]);
    for (int i = 1; i < t->n; i++)
        if (!ty_is_scalar(t->elems[i]) || strcmp(ctype(E, t->elems[i]), el) != 0) return false;
    return true;
}

/* Declares that tuple type t (of one scalar type) is laid out as an array of
 * its items, so that a pointer can index it; the compiler checks it. */
static void tuple_is_array(Emit *E, const Type *t) {
    const char *name = ctype(E, t);
    const char *key = arena_printf(&E->C->arena, "%s_is_an_array", name);
    if (registered(E, key)) return;
    buf_printf(&E->types, "typedef char %s[sizeof(%s) == %d * sizeof(%s) ? 1 : -1];\n", key, name,
               t->n, ctype(E, t->elems[0]));
}

/* NAME_get(E_, t, i, line): item i of a tuple of one scalar type, i wrapped
 * as Python does; out of range it is an IndexError (always: a tuple is small
 * and the check is cheap) and item 0 is read. */
static const char *tuple_get(Emit *E, const Type *t) {
    const char *name = ctype(E, t);
    const char *fn = arena_printf(&E->C->arena, "%s_get", name);
    if (registered(E, fn)) return fn;
    const char *el = ctype(E, t->elems[0]);
    Buf *b = &E->types;
    if (t->n > TUPLE_AS_ARRAY) {
        tuple_is_array(E, t);
        buf_printf(b, "KILN_FN %s %s(struct kiln_err *E_, %s t, i64 i, int line) {\n"
                      "    return ((const %s *)&t)[kiln_chk(E_, i, %d, 0, line)];\n}\n",
                   el, fn, name, el, t->n);
        return fn;
    }
    buf_printf(b, "KILN_FN %s %s(struct kiln_err *E_, %s t, i64 i, int line) {\n", el, fn, name);
    buf_printf(b, "    switch (i < 0 ? i + %d : i) {\n    case 0: return t.f0;\n", t->n);
    for (int i = 1; i < t->n; i++) buf_printf(b, "    case %d: return t.f%d;\n", i, i);
    buf_printf(b, "    default: kiln_fail(E_, 1, line, i, 0, %d); return t.f0;\n    }\n}\n", t->n);
    return fn;
}

static const char *ctype(Emit *E, const Type *t) {
    switch ((TypeKind)t->kind) {
    case TY_BOOL:
    case TY_INT:
    case TY_FLOAT: return t->weak ? (t->kind == TY_INT ? "i64" : "f64") : scalar_ctype(t);
    case TY_ARRAY: return array_ctype(E, t);
    case TY_TUPLE: return tuple_ctype(E, t);
    case TY_NONE: return "void";
    default: return "i64"; /* compile-time values never reach code */
    }
}

static bool same_ctype(Emit *E, const Type *a, const Type *b) {
    return strcmp(ctype(E, a), ctype(E, b)) == 0;
}

/* A converter between two tuple types of the same length. */
static const char *tuple_conv(Emit *E, const Type *from, const Type *to) {
    const char *fn = ctype(E, from), *tn = ctype(E, to);
    const char *name = arena_printf(&E->C->arena, "%s_from_%s", tn, fn);
    if (registered(E, name)) return name;
    Buf *b = &E->helpers;
    buf_printf(b, "KILN_FN %s %s(%s x) {\n    %s r;\n", tn, name, fn, tn);
    for (int i = 0; i < to->n; i++) {
        const Type *ft = from->elems[i], *tt = to->elems[i];
        if (tt->kind == TY_TUPLE && !same_ctype(E, ft, tt))
            buf_printf(b, "    r.f%d = %s(x.f%d);\n", i, tuple_conv(E, ft, tt), i);
        else
            buf_printf(b, "    r.f%d = (%s)x.f%d;\n", i, ctype(E, tt), i);
    }
    buf_printf(b, "    return r;\n}\n");
    return name;
}

/* ---- constants ------------------------------------------------------------------ */

static void emit_float(Emit *E, double v, bool f32) {
    if (isnan(v)) {
        PS(f32 ? "KILN_NANF" : "KILN_NAN");
        return;
    }
    if (isinf(v)) {
        PS(v < 0 ? "(-" : "(");
        PS(f32 ? "KILN_INFF)" : "KILN_INF)");
        return;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", v);
    if (!strpbrk(buf, ".eE")) strcat(buf, ".0");
    if (f32) {
        P("((f32)%s)", buf);
    } else {
        P("%s", buf);
    }
}

static void emit_const(Emit *E, const Type *t, ConstVal v) {
    switch ((TypeKind)t->kind) {
    case TY_BOOL: PS(v.i ? "((kbool)1)" : "((kbool)0)"); return;
    case TY_INT: {
        const char *ct = ctype(E, t);
        if (!ty_is_signed(t) && !t->weak) {
            P("((%s)%lluULL)", ct, (unsigned long long)v.u);
        } else if (v.i == INT64_MIN) {
            P("((%s)(-9223372036854775807LL - 1))", ct);
        } else if (strcmp(ct, "i64") == 0) {
            P("%lldLL", (long long)v.i);
        } else {
            P("((%s)%lldLL)", ct, (long long)v.i);
        }
        return;
    }
    case TY_FLOAT: emit_float(E, v.f, !t->weak && t->dtype == KILN_FLOAT32); return;
    default: UNREACHABLE();
    }
}

/* ---- expressions ------------------------------------------------------------------ */

/* Renders an expression to a string (for text used more than once). */
static const char *ex_str(Emit *E, Node *n, const Type *as) {
    Buf tmp, *saved = E->o;
    buf_init_arena(&tmp, &E->C->arena);
    E->o = &tmp;
    if (as) ex_as(E, n, as);
    else ex(E, n);
    E->o = saved;
    return tmp.p ? tmp.p : "";
}

static void convert(Emit *E, const Type *from, const Type *to, const char *text) {
    if (to->kind == TY_TUPLE && from->kind == TY_TUPLE && !same_ctype(E, from, to)) {
        P("%s(%s)", tuple_conv(E, from, to), text);
        return;
    }
    if (same_ctype(E, from, to) || !ty_is_scalar(to)) {
        PS(text);
        return;
    }
    if (to->kind == TY_BOOL) {
        P("((%s) != 0)", text);
        return;
    }
    P("((%s)%s)", ctype(E, to), text);
}

static void ex_as(Emit *E, Node *n, const Type *to) {
    if (!to || !n->ty || ty_equal(n->ty, to) || same_ctype(E, n->ty, to)) {
        ex(E, n);
        return;
    }
    if ((n->flags & NF_CONST) && ty_is_scalar(n->ty) && ty_is_scalar(to) && to->kind != TY_BOOL) {
        /* constants: convert at compile time where exact */
        if (n->ty->kind == TY_INT && to->kind == TY_FLOAT) {
            ConstVal v;
            v.f = ty_is_signed(n->ty) || n->ty->weak ? (double)n->cval.i : (double)n->cval.u;
            emit_const(E, to, v);
            return;
        }
        if (n->ty->kind == TY_INT && to->kind == TY_INT && ty_int_fits(to, n->cval.i, false) &&
            (ty_is_signed(n->ty) || n->ty->weak || n->cval.i >= 0)) {
            emit_const(E, to, n->cval);
            return;
        }
    }
    convert(E, n->ty, to, ex_str(E, n, NULL));
}

static void truthy(Emit *E, Node *n) {
    if (n->ty->kind == TY_BOOL) {
        ex(E, n);
        return;
    }
    PS("(");
    ex(E, n);
    PS(" != 0)");
}

static const char *fsuffix(const Type *t) { return (t->dtype == KILN_FLOAT32 && !t->weak) ? "f" : ""; }
static bool is_f32(const Type *t) { return t->kind == TY_FLOAT && !t->weak && t->dtype == KILN_FLOAT32; }

static void emit_index_of(Emit *E, const char *b, const Type *at, const char **ix,
                          const bool *nn, int line, Buf *out) {
    /* line: an error location from loc() */
    const char *w[KILN_MAX_NDIM];
    for (int k = 0; k < at->ndim; k++) {
        if (E->debug)
            w[k] = arena_printf(&E->C->arena, "kiln_chk(E_, %s, %s.shape[%d], %d, %d)", ix[k], b,
                                k, k, line);
        else if (nn[k])
            w[k] = ix[k];
        else
            w[k] = arena_printf(&E->C->arena, "kiln_wrap(%s, %s.shape[%d])", ix[k], b, k);
    }
    int nd = at->ndim;
    if (nd == 1) {
        if (at->layout == 'A') buf_printf(out, "%s * %s.strides[0]", w[0], b);
        else buf_printf(out, "%s", w[0]);
        return;
    }
    if (at->layout == 'C') {
        for (int k = 0; k < nd - 1; k++) buf_puts(out, "(");
        buf_puts(out, w[0]);
        for (int k = 1; k < nd; k++) buf_printf(out, " * %s.shape[%d] + %s)", b, k, w[k]);
    } else if (at->layout == 'F') {
        for (int k = 0; k < nd - 1; k++) buf_printf(out, "%s + %s.shape[%d] * (", w[k], b, k);
        buf_puts(out, w[nd - 1]);
        for (int k = 0; k < nd - 1; k++) buf_puts(out, ")");
    } else {
        for (int k = 0; k < nd; k++)
            buf_printf(out, "%s%s * %s.strides[%d]", k ? " + " : "", w[k], b, k);
    }
}

/* The indices of a full subscript as i64 strings, from index nodes or a tuple. */
static int index_strings(Emit *E, NodeList *idx, const char **ix, bool *nn) {
    if (idx->n == 1 && idx->v[0]->ty->kind == TY_TUPLE) {
        Node *t = idx->v[0];
        if (t->kind == E_TUPLE) {
            for (int k = 0; k < t->tuple.n; k++) {
                ix[k] = ex_str(E, t->tuple.v[k], ty_scalar(KILN_INT64));
                nn[k] = (t->tuple.v[k]->flags & NF_NONNEG) != 0;
            }
            return t->tuple.n;
        }
        const char *ts = ex_str(E, t, NULL);
        for (int k = 0; k < t->ty->n; k++) {
            ix[k] = arena_printf(&E->C->arena, "((i64)(%s).f%d)", ts, k);
            nn[k] = !ty_is_signed(t->ty->elems[k]) || sema_elem_nonneg(t, k);
        }
        return t->ty->n;
    }
    for (int k = 0; k < idx->n; k++) {
        ix[k] = ex_str(E, idx->v[k], ty_scalar(KILN_INT64));
        nn[k] = (idx->v[k]->flags & NF_NONNEG) != 0;
    }
    return idx->n;
}

/* "base.data[offset]" for a full subscript, as an lvalue. */
static const char *element(Emit *E, Node *n) {
    Node *base = n->sub.base;
    const char *b = ex_str(E, base, NULL);
    if (base->kind != E_NAME) b = arena_printf(&E->C->arena, "(%s)", b);
    const char *ix[KILN_MAX_NDIM];
    bool nn[KILN_MAX_NDIM];
    index_strings(E, &n->sub.idx, ix, nn);
    Buf off;
    buf_init_arena(&off, &E->C->arena);
    emit_index_of(E, b, base->ty, ix, nn, loc(E, n->sp), &off);
    const char *r = arena_printf(&E->C->arena, "%s.data[%s]", b, off.p ? off.p : "0");
    buf_free(&off);
    return r;
}

/* A view: a helper function per site computes the new array struct. */
static void view(Emit *E, Node *n) {
    Node *base = n->sub.base;
    const Type *bt = base->ty, *rt = n->ty;
    const char *bn = ctype(E, bt), *rn = ctype(E, rt);
    int id = E->nhelp++;
    Buf *h = &E->helpers;
    NodeList *idx = &n->sub.idx;
    bool from_tuple = idx->n == 1 && idx->v[0]->ty->kind == TY_TUPLE;
    buf_printf(h, "KILN_FN %s kview%d(struct kiln_err *E_, %s a", rn, id, bn);
    Buf args;
    buf_init_arena(&args, &E->C->arena);
    int nargs = 0;
    if (from_tuple) {
        buf_printf(h, ", %s t", ctype(E, idx->v[0]->ty));
        buf_printf(&args, ", %s", ex_str(E, idx->v[0], NULL));
    } else {
        for (int k = 0; k < idx->n; k++) {
            Node *x = idx->v[k];
            if (x->kind == E_SLICE) {
                Node *parts[3] = {x->slice.lo, x->slice.hi, x->slice.step};
                for (int j = 0; j < 3; j++)
                    if (parts[j] && parts[j]->ty->kind != TY_NONE) {
                        buf_printf(h, ", i64 x%d", nargs++);
                        buf_printf(&args, ", %s", ex_str(E, parts[j], ty_scalar(KILN_INT64)));
                    }
            } else {
                buf_printf(h, ", i64 x%d", nargs++);
                buf_printf(&args, ", %s", ex_str(E, x, ty_scalar(KILN_INT64)));
            }
        }
    }
    buf_printf(h, ") {\n    %s r;\n    i64 off = 0, st, len;\n    (void)st; (void)len; (void)E_;\n", rn);
    int j = 0, a = 0;
    int line = loc(E, n->sp);
    for (int k = 0; k < bt->ndim; k++) {
        Node *x = (!from_tuple && k < idx->n) ? idx->v[k] : NULL;
        bool is_int = from_tuple ? k < idx->v[0]->ty->n : (x && x->kind != E_SLICE);
        if (is_int) {
            const char *v = from_tuple ? arena_printf(&E->C->arena, "(i64)t.f%d", k)
                                       : arena_printf(&E->C->arena, "x%d", a++);
            if (E->debug)
                buf_printf(h, "    off += kiln_chk(E_, %s, a.shape[%d], %d, %d) * a.strides[%d];\n",
                           v, k, k, line, k);
            else
                buf_printf(h, "    off += kiln_wrap(%s, a.shape[%d]) * a.strides[%d];\n", v, k, k);
        } else if (x && x->kind == E_SLICE) {
            bool hl = x->slice.lo && x->slice.lo->ty->kind != TY_NONE;
            bool hh = x->slice.hi && x->slice.hi->ty->kind != TY_NONE;
            bool hs = x->slice.step && x->slice.step->ty->kind != TY_NONE;
            const char *lo = hl ? arena_printf(&E->C->arena, "x%d", a++) : "0";
            const char *hi = hh ? arena_printf(&E->C->arena, "x%d", a++) : "0";
            const char *sp = hs ? arena_printf(&E->C->arena, "x%d", a++) : "1";
            buf_printf(h, "    kiln_slice(%s, %s, %s, %d, %d, a.shape[%d], &st, &len);\n", lo, hi,
                       sp, hl, hh, k);
            buf_printf(h, "    off += st * a.strides[%d];\n    r.shape[%d] = len;\n", k, j);
            buf_printf(h, "    r.strides[%d] = (%s == 0 ? 1 : %s) * a.strides[%d];\n", j, sp, sp, k);
            j++;
        } else {
            buf_printf(h, "    r.shape[%d] = a.shape[%d];\n    r.strides[%d] = a.strides[%d];\n", j,
                       k, j, k);
            j++;
        }
    }
    buf_printf(h, "    r.data = a.data + off;\n    return r;\n}\n");
    P("kview%d(E_, %s%s)", id, ex_str(E, base, NULL), args.p ? args.p : "");
    buf_free(&args);
}

static int storage_index(Emit *E, const Node *n) {
    for (int i = 0; i < E->f->storage.n; i++)
        if (E->f->storage.v[i] == n) return i;
    return -1;
}

static void emit_atomic(Emit *E, Node *n) {
    NodeList *a = &n->call.bound;
    Node *arr = a->v[0];
    const Type *el = arr->ty->elem;
    const char *ct = ctype(E, el);
    static const char *const ops[] = {"add", "sub", "max", "min", "exch", "cas",
                                      "and", "or",  "xor", "inc", "dec"};
    int sub = n->intr->sub;
    const char *b = ex_str(E, arr, NULL);
    if (arr->kind != E_NAME) b = arena_printf(&E->C->arena, "(%s)", b);
    const char *addr;
    int first_val;
    if (sub == IA_CAS && a->n == 3) {
        addr = arena_printf(&E->C->arena, "&%s.data[0]", b);
        first_val = 1;
    } else {
        const char *ix[KILN_MAX_NDIM];
        bool nn[KILN_MAX_NDIM];
        NodeList one = {&a->v[1], 1};
        index_strings(E, &one, ix, nn);
        Buf off;
        buf_init_arena(&off, &E->C->arena);
        emit_index_of(E, b, arr->ty, ix, nn, loc(E, n->sp), &off);
        addr = arena_printf(&E->C->arena, "&%s.data[%s]", b, off.p ? off.p : "0");
        buf_free(&off);
        first_val = 2;
    }
    if (E->f->is_kernel && arr->kind == E_NAME && arr->sym && arr->sym->param >= 0 &&
        arr->sym->param < 64 && ((E->plan.priv >> arr->sym->param) & 1)) {
        /* a private copy when the entry made one (plan.h) */
        const char *v = ex_str(E, a->v[2], el);
        if ((E->plan.acc >> arr->sym->param) & 1) { /* a reduction variable */
            P("(void)(*ra%d_ %s= (%s))", arr->sym->param, sub == IA_SUB ? "-" : "+", v);
            return;
        }
        P("(pv%d_ ? (void)(*(%s) %s= (%s)) : (void)kiln_atomic_%s_%s(%s, %s))", arr->sym->param,
          addr, sub == IA_SUB ? "-" : "+", v, ops[sub], ct, addr, v);
        return;
    }
    P("kiln_atomic_%s_%s(%s", ops[sub], ct, addr);
    for (int i = first_val; i < a->n; i++) {
        PS(", ");
        ex_as(E, a->v[i], el);
    }
    PS(")");
}

static const char *sreg(int s) {
    static const char *const r[] = {"KILN_TID_X",  "KILN_TID_Y",  "KILN_TID_Z",  "KILN_BID_X",
                                    "KILN_BID_Y",  "KILN_BID_Z",  "KILN_BDIM_X", "KILN_BDIM_Y",
                                    "KILN_BDIM_Z", "KILN_GDIM_X", "KILN_GDIM_Y", "KILN_GDIM_Z"};
    return r[s];
}

static void math_call(Emit *E, const char *name, const Type *t, Node **args, int nargs) {
    bool f = is_f32(t);
    const char *fast = NULL;
    if (E->fastmath && E->cuda && f) {
        if (strcmp(name, "exp") == 0) fast = "__expf";
        else if (strcmp(name, "log") == 0) fast = "__logf";
        else if (strcmp(name, "sin") == 0) fast = "__sinf";
        else if (strcmp(name, "cos") == 0) fast = "__cosf";
        else if (strcmp(name, "tan") == 0) fast = "__tanf";
        else if (strcmp(name, "pow") == 0) fast = "__powf";
        else if (strcmp(name, "log2") == 0) fast = "__log2f";
        else if (strcmp(name, "log10") == 0) fast = "__log10f";
        else if (strcmp(name, "exp2") == 0) fast = "exp2f";
    }
    if (fast) P("%s(", fast);
    else P("%s%s(", name, f ? "f" : "");
    for (int i = 0; i < nargs; i++) {
        if (i) PS(", ");
        ex_as(E, args[i], ty_strong(t));
    }
    PS(")");
}

static void call_intrinsic(Emit *E, Node *n) {
    const Intrinsic *in = n->intr;
    Node **a = n->call.bound.v;
    int na = n->call.bound.n;
    const Type *ot = n->opty;
    switch ((IntrKind)in->kind) {
    case IK_GRID:
    case IK_GRIDSIZE: {
        int64_t nd = 1;
        sema_const_int(a[0], &nd);
        const char *ax[3] = {"X", "Y", "Z"};
        if (nd > 1) P("%s(", tuple_make(E, n->ty));
        for (int i = 0; i < nd; i++) {
            if (i) PS(", ");
            if (in->kind == IK_GRID && i == 0)
                PS("KILN_GX");
            else if (in->kind == IK_GRID)
                P("(KILN_BID_%s * KILN_BDIM_%s + KILN_TID_%s)", ax[i], ax[i], ax[i]);
            else
                P("(KILN_BDIM_%s * KILN_GDIM_%s)", ax[i], ax[i]);
        }
        if (nd > 1) PS(")");
        return;
    }
    case IK_SYNCTHREADS:
        if (in->sub) {
            PS("__syncwarp(");
            if (a[0]) ex_as(E, a[0], ty_scalar(KILN_UINT32));
            else PS("0xffffffffu");
            PS(")");
        } else {
            PS("__syncthreads()");
        }
        return;
    case IK_THREADFENCE:
        if (!E->cuda) PS("KILN_FENCE()");
        else PS(in->sub == 0 ? "__threadfence()" : in->sub == 1 ? "__threadfence_block()" : "__threadfence_system()");
        return;
    case IK_SHARED_ARRAY:
    case IK_LOCAL_ARRAY: {
        int64_t dims[KILN_MAX_NDIM];
        int nd = sema_shape(a[0], dims, KILN_MAX_NDIM);
        const char *tn = ctype(E, n->ty);
        int k = storage_index(E, n);
        bool dyn = in->kind == IK_SHARED_ARRAY && nd == 1 && dims[0] == 0;
        if (dyn) {
            P("%s_local((%s *)kiln_dsmem, (i64)(KILN_DSMEM_BYTES / sizeof(%s)))", tn,
              scalar_ctype(n->ty->elem), scalar_ctype(n->ty->elem));
            return;
        }
        P("%s_local(%s%d", tn, in->kind == IK_SHARED_ARRAY ? "sst" : "lst", k);
        for (int i = 0; i < nd; i++) P(", %lldLL", (long long)dims[i]);
        PS(")");
        return;
    }
    case IK_ATOMIC: emit_atomic(E, n); return;
    case IK_SHFL: {
        static const char *const f[] = {"__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync",
                                        "__shfl_sync"};
        P("%s(", f[in->sub]);
        ex_as(E, a[0], ty_scalar(KILN_UINT32));
        PS(", ");
        ex_as(E, a[1], ot);
        PS(", ");
        ex_as(E, a[2], ty_scalar(KILN_INT32));
        PS(")");
        return;
    }
    case IK_VOTE: {
        static const char *const f[] = {"__ballot_sync", "__all_sync", "__any_sync"};
        P("(%s(", f[in->sub]);
        ex_as(E, a[0], ty_scalar(KILN_UINT32));
        PS(", ");
        truthy(E, a[1]);
        PS(in->sub ? ") != 0)" : "))");
        return;
    }
    case IK_ACTIVEMASK: PS("__activemask()"); return;
    case IK_MATH1: math_call(E, math1_names[in->sub], ot, a, 1); return;
    case IK_MATH2: math_call(E, math2_names[in->sub], ot, a, 2); return;
    case IK_FMA: math_call(E, "fma", ot, a, 3); return;
    case IK_BITS: {
        /* counted in the argument type's width W, through the 64-bit helper */
        static const char *const fn[] = {"kiln_popc64", "kiln_brev64", "kiln_clz64", "kiln_ffs64"};
        int w = ty_bits(ot);
        P("((%s)(%s((u64)(u%d)(", ctype(E, ot), fn[in->sub], w);
        ex_as(E, a[0], ot);
        PS("))");
        if (in->sub == IB_BREV && w < 64) P(" >> %d", 64 - w);
        if (in->sub == IB_CLZ && w < 64) P(" - %d", 64 - w);
        PS("))");
        return;
    }
    case IK_SELP:
        PS("(");
        truthy(E, a[0]);
        PS(" ? ");
        ex_as(E, a[1], ot);
        PS(" : ");
        ex_as(E, a[2], ot);
        PS(")");
        return;
    case IK_LOG:
        if (!a[1]) {
            math_call(E, "log", ot, a, 1);
        } else {
            PS("(");
            math_call(E, "log", ot, a, 1);
            PS(" / ");
            math_call(E, "log", ot, a + 1, 1);
            PS(")");
        }
        return;
    case IK_ROUNDING: {
        static const char *const f[] = {"floor", "ceil", "trunc"};
        if (ot->kind != TY_FLOAT) {
            if (in->flags & IF_NUMPY) {
                P("%s((f64)", f[in->sub]);
                ex(E, a[0]);
                PS(")");
            } else {
                ex_as(E, a[0], ot);
            }
            return;
        }
        if (!(in->flags & IF_NUMPY)) P("((%s)", ctype(E, n->ty));
        math_call(E, f[in->sub], ot, a, 1);
        if (!(in->flags & IF_NUMPY)) PS(")");
        return;
    }
    case IK_PRED: {
        static const char *const f[] = {"isnan", "isinf", "isfinite"};
        if (ot->kind != TY_FLOAT) {
            PS(in->sub == 2 ? "((kbool)1)" : "((kbool)0)");
            return;
        }
        P("((kbool)%s(", f[in->sub]);
        ex(E, a[0]);
        PS("))");
        return;
    }
    case IK_ABS:
        if (ot->kind == TY_FLOAT) {
            math_call(E, "fabs", ot, a, 1);
        } else if (!ty_is_signed(ot)) {
            ex_as(E, a[0], ot);
        } else {
            P("((%s)kiln_abs_i64(", ctype(E, ot));
            ex_as(E, a[0], ty_scalar(KILN_INT64));
            PS("))");
        }
        return;
    case IK_SIGN:
        if (ot->kind == TY_FLOAT) {
            P("kiln_sign_%s(", ctype(E, ot));
            ex_as(E, a[0], ot);
            PS(")");
        } else {
            P("((%s)kiln_sign_i64((i64)", ctype(E, ot));
            ex(E, a[0]);
            PS("))");
        }
        return;
    case IK_MINMAX:
    case IK_NPMINMAX: {
        const char *ct = ctype(E, ot);
        bool npf = in->kind == IK_NPMINMAX && ot->kind == TY_FLOAT;
        const char *fn = npf ? (in->sub ? "kiln_npmax" : "kiln_npmin") : (in->sub ? "kiln_max" : "kiln_min");
        for (int i = na - 1; i >= 1; i--) P("%s_%s(", fn, ct);
        ex_as(E, a[0], ot);
        for (int i = 1; i < na; i++) {
            PS(", ");
            ex_as(E, a[i], ot);
            PS(")");
        }
        return;
    }
    case IK_POWER: break; /* handled as a binary operator below */
    case IK_INT:
    case IK_FLOAT:
        if (!a[0]) {
            emit_const(E, n->ty, n->cval);
            return;
        }
        P("((%s)", ctype(E, n->ty));
        ex(E, a[0]);
        PS(")");
        return;
    case IK_BOOL:
        if (!a[0]) PS("((kbool)0)");
        else truthy(E, a[0]);
        return;
    case IK_ROUND:
        if (ot->kind == TY_FLOAT) {
            if (!a[1]) {
                P("((%s)rint%s(", ctype(E, n->ty), fsuffix(ot));
                ex_as(E, a[0], ot);
                PS("))");
            } else {
                P("kiln_round_%s(", ctype(E, ot));
                ex_as(E, a[0], ot);
                PS(", ");
                ex_as(E, a[1], ty_scalar(KILN_INT64));
                PS(")");
            }
        } else if (a[1]) {
            P("((%s)kiln_round_i64((i64)", ctype(E, ot));
            ex(E, a[0]);
            PS(", ");
            ex_as(E, a[1], ty_scalar(KILN_INT64));
            PS("))");
        } else {
            ex_as(E, a[0], ot);
        }
        return;
    case IK_LEN: {
        const char *b = ex_str(E, a[0], NULL);
        P("(%s).shape[0]", b);
        return;
    }
    default: break;
    }
    UNREACHABLE();
}

static void binop_text(Emit *E, Node *at, BinOp op, const Type *t, Node *l, Node *r) {
    const char *ct = ctype(E, t);
    bool isint = t->kind == TY_INT || t->kind == TY_BOOL;
    bool sgn = ty_is_signed(t) || t->weak;
    bool narrow = isint && ty_bits(t) < 32 && !t->weak;
    int bits = t->weak ? 64 : ty_bits(t);
    switch (op) {
    case B_ADD:
    case B_SUB:
    case B_MUL: {
        static const char *const s[] = {" + ", " - ", " * "};
        if (narrow) P("((%s)(", ct);
        else PS("(");
        ex_as(E, l, t);
        PS(s[op]);
        ex_as(E, r, t);
        PS(narrow ? "))" : ")");
        return;
    }
    case B_DIV:
        if (E->fastmath && E->cuda && is_f32(t)) {
            PS("__fdividef(");
            ex_as(E, l, t);
            PS(", ");
            ex_as(E, r, t);
            PS(")");
            return;
        }
        PS("(");
        ex_as(E, l, t);
        PS(" / ");
        ex_as(E, r, t);
        PS(")");
        return;
    case B_FLOORDIV:
    case B_MOD: {
        const char *what = op == B_FLOORDIV ? "fdiv" : "mod";
        if (t->kind == TY_FLOAT) {
            P("kiln_%s_%s(", what, ct);
            ex_as(E, l, t);
            PS(", ");
            ex_as(E, r, t);
            PS(")");
            return;
        }
        bool nn = (l->flags & NF_NONNEG) && (r->flags & NF_NONNEG) && sgn;
        const char *wt = sgn ? "i64" : "u64";
        const char *fn = nn ? arena_printf(&E->C->arena, "kiln_%s_nn", what)
                            : arena_printf(&E->C->arena, "kiln_%s_%s", what, wt);
        P("((%s)%s(", ct, fn);
        ex_as(E, l, sgn ? ty_scalar(KILN_INT64) : ty_scalar(KILN_UINT64));
        PS(", ");
        if (E->debug) P("kiln_zchk_%s(E_, %d, ", wt, loc(E, at->sp));
        ex_as(E, r, sgn ? ty_scalar(KILN_INT64) : ty_scalar(KILN_UINT64));
        PS(E->debug ? ")))" : "))");
        return;
    }
    case B_POW: {
        if (isint) {
            if (sgn) {
                /* a negative exponent is an error (LANGUAGE.md), with or without
                 * debug=True: Python would give a float, NumPy raises */
                if (!(r->flags & NF_NONNEG))
                    P("((%s)kiln_ipow_i64_chk(E_, %d, ", ct, loc(E, at->sp));
                else P("((%s)kiln_ipow_i64(", ct);
                ex_as(E, l, ty_scalar(KILN_INT64));
                PS(", ");
                ex_as(E, r, ty_scalar(KILN_INT64));
            } else {
                P("((%s)kiln_ipow_u64(", ct);
                ex_as(E, l, ty_scalar(KILN_UINT64));
                PS(", ");
                ex_as(E, r, ty_scalar(KILN_UINT64));
            }
            PS("))");
            return;
        }
        int64_t k;
        double kf = 0;
        bool kconst = false;
        if (sema_const_int(r, &k)) {
            kconst = true;
            kf = (double)k;
        } else if ((r->flags & NF_CONST) && r->ty->kind == TY_FLOAT) {
            kconst = true;
            kf = r->cval.f;
        }
        const char *sfx = is_f32(t) ? "f32" : "f64";
        if (kconst && kf == 2.0) {
            P("kiln_sq_%s(", sfx);
            ex_as(E, l, t);
            PS(")");
            return;
        }
        if (kconst && kf == 3.0) {
            P("kiln_cube_%s(", sfx);
            ex_as(E, l, t);
            PS(")");
            return;
        }
        if (kconst && kf == 1.0) {
            ex_as(E, l, t);
            return;
        }
        Node *args[2] = {l, r};
        math_call(E, "pow", t, args, 2);
        return;
    }
    case B_LSHIFT:
    case B_RSHIFT: {
        int64_t k;
        if (t->kind == TY_BOOL) t = ty_scalar(KILN_INT64);
        if (sema_const_int(r, &k) && k >= 0 && k < bits) {
            if (op == B_LSHIFT) {
                P("((%s)((u64)", ct);
                ex_as(E, l, t);
                P(" << %lld))", (long long)k);
            } else {
                P("((%s)(", ct);
                ex_as(E, l, t);
                P(" >> %lld))", (long long)k);
            }
            return;
        }
        P("((%s)kiln_%s_%s(", ct, op == B_LSHIFT ? "shl" : "shr", sgn ? "i64" : "u64");
        ex_as(E, l, sgn ? ty_scalar(KILN_INT64) : ty_scalar(KILN_UINT64));
        PS(", ");
        ex_as(E, r, sgn ? ty_scalar(KILN_INT64) : ty_scalar(KILN_UINT64));
        P(", %d))", bits);
        return;
    }
    case B_AND:
    case B_OR:
    case B_XOR: {
        static const char *const s[] = {" & ", " | ", " ^ "};
        P("((%s)(", ct);
        ex_as(E, l, t);
        PS(s[op - B_AND]);
        ex_as(E, r, t);
        PS("))");
        return;
    }
    }
}

/* Opens and closes an expression that runs statements: a GNU statement
 * expression in C, an immediately invoked lambda in CUDA C++ (NVRTC has no
 * statement expressions).  `value` is the expression's result. */
static void sx_open(Emit *E, const Type *t) {
    if (E->cuda) P("([&]() -> %s { ", ctype(E, t));
    else PS("({ ");
}

static void sx_close(Emit *E, const char *value) {
    if (E->cuda) P("return %s; })()", value);
    else P("%s; })", value);
}

static void compare_pair(Emit *E, const char *a, const Type *at, const char *b, const Type *bt,
                         const Type *o, CmpOp op) {
    static const char *const s[] = {" < ", " <= ", " > ", " >= ", " == ", " != "};
    if (!o) {
        /* exact signed/unsigned comparison */
        if (ty_is_signed(at) || at->weak)
            P("(kiln_cmp_iu((i64)%s, (u64)%s)%s0)", a, b, s[op]);
        else
            P("(0%skiln_cmp_iu((i64)%s, (u64)%s))", s[op], b, a);
        return;
    }
    PS("(");
    convert(E, at, o, a);
    PS(s[op]);
    convert(E, bt, o, b);
    PS(")");
}

static void compare(Emit *E, Node *n) {
    NodeList *ops = &n->cmp.operands;
    int np = ops->n - 1;
    /* A middle operand is written twice (a < b and b < c): only when it is
     * small and pure; a large one through a temporary, or comparisons nested in
     * middle operands would double the text at each level. */
    bool needs_tmp = false;
    for (int i = 1; i < np; i++)
        if (ops->v[i]->depth > 3 || !plan_pure(ops->v[i])) needs_tmp = true;
    if (!needs_tmp) {
        if (np > 1) PS("(");
        for (int i = 0; i < np; i++) {
            if (i) PS(" && ");
            compare_pair(E, ex_str(E, ops->v[i], NULL), ops->v[i]->ty,
                         ex_str(E, ops->v[i + 1], NULL), ops->v[i + 1]->ty, n->cmp.optys[i],
                         (CmpOp)n->cmp.ops[i]);
        }
        if (np > 1) PS(")");
        return;
    }
    /* evaluate each operand once, left to right, stopping early */
    sx_open(E, ty_scalar(KILN_BOOL));
    PS("kbool r_ = 1; ");
    int base = E->tmp;
    E->tmp += ops->n;
    P("%s t%d = ", ctype(E, ops->v[0]->ty), base);
    ex(E, ops->v[0]);
    PS("; ");
    for (int i = 0; i < np; i++) {
        P("%s t%d = ", ctype(E, ops->v[i + 1]->ty), base + i + 1);
        ex(E, ops->v[i + 1]);
        PS("; r_ = ");
        compare_pair(E, arena_printf(&E->C->arena, "t%d", base + i), ops->v[i]->ty,
                     arena_printf(&E->C->arena, "t%d", base + i + 1), ops->v[i + 1]->ty,
                     n->cmp.optys[i], (CmpOp)n->cmp.ops[i]);
        PS("; if (!r_) { ");
        for (int j = i + 2; j <= np; j++) P("(void)0; ");
        PS("} ");
        if (i + 1 < np) PS("if (r_) { ");
    }
    for (int i = 0; i + 1 < np; i++) PS("} ");
    sx_close(E, "r_");
}

/* ---- frozen tuples ---------------------------------------------------------------
 * A global tuple's items are constants, written into the program once however
 * often the kernel reads it, so a large tuple costs code linear in its size:
 * a constant index reads the constant, a run-time index reads a static array
 * written once per program (kga<i>), and the tuple as a value (assigned,
 * unpacked, passed) is a local built once at the top of each function that uses
 * it (kgv<i>). */

/* Writes the tuple g as a constructor call of constants. */
static void global_make(Emit *E, const GVal *g) {
    P("%s(", tuple_make(E, g->ty));
    for (int i = 0; i < g->ntuple; i++) {
        if (i) PS(", ");
        if (g->tuple[i].ty->kind == TY_TUPLE) global_make(E, &g->tuple[i]);
        else emit_const(E, g->tuple[i].ty, g->tuple[i].cv);
    }
    PS(")");
}

/* The name of the local holding tuple g in this function (declared by
 * function() once the body is written). */
static const char *global_value(Emit *E, const GVal *g) {
    const char *key = arena_printf(&E->C->arena, "kgv:%d:%d:%p", E->f->id, E->lanes,
                                   (const void *)g);
    const char *name = NULL;
    if (register_as(E, key, NULL, &name)) return name;
    name = arena_printf(&E->C->arena, "kgv%d", E->gvalues.n);
    E->named[name_slot(E, key)] = name;
    vec_push(&E->C->arena, &E->gvalues, (void *)g);
    return name;
}

/* The name of the static array (written once per program) of the frozen
 * tuple g, whose items are of one scalar type.  On the GPU, floats are stored
 * as their bits: a __device__ array cannot be initialised with NaN or infinity
 * otherwise. */
static const char *global_array(Emit *E, const GVal *g) {
    const char *key = arena_printf(&E->C->arena, "kga:%p", (const void *)g);
    const char *name = NULL;
    if (register_as(E, key, NULL, &name)) return name;
    name = arena_printf(&E->C->arena, "kga%d", E->ngarrays++);
    E->named[name_slot(E, key)] = name;
    const Type *et = g->tuple[0].ty;
    bool bits = E->cuda && et->kind == TY_FLOAT;
    bool f32 = bits && !et->weak && et->dtype == KILN_FLOAT32;
    Buf *saved = E->o;
    E->o = &E->helpers;
    P("static %sconst %s %s[%d] = {", E->cuda ? "__device__ " : "",
      bits ? (f32 ? "u32" : "u64") : ctype(E, et), name, g->ntuple);
    for (int i = 0; i < g->ntuple; i++) {
        PS(i % 8 ? ", " : (i ? ",\n    " : "\n    "));
        if (!bits) {
            emit_const(E, et, g->tuple[i].cv);
        } else if (f32) {
            float f = (float)g->tuple[i].cv.f;
            uint32_t u;
            memcpy(&u, &f, sizeof u);
            P("0x%08xu", u);
        } else {
            uint64_t u;
            memcpy(&u, &g->tuple[i].cv.f, sizeof u);
            P("0x%016llxull", (unsigned long long)u);
        }
    }
    PS("};\n");
    E->o = saved;
    return name;
}

/* Writes item (run-time index of node n, checked) of the frozen tuple g. */
static void global_item(Emit *E, const GVal *g, Node *n) {
    const char *arr = global_array(E, g);
    const Type *et = g->tuple[0].ty;
    bool bits = E->cuda && et->kind == TY_FLOAT;
    bool f32 = bits && !et->weak && et->dtype == KILN_FLOAT32;
    if (bits) P(f32 ? "__int_as_float((int)" : "__longlong_as_double((long long)");
    P("%s[kiln_chk(E_, ", arr);
    ex_as(E, n->sub.idx.v[0], ty_scalar(KILN_INT64));
    P(", %d, 0, %d)]", g->ntuple, loc(E, n->sp));
    if (bits) PS(")");
}

static void ex(Emit *E, Node *n) {
    if (n == E->subst) {
        PS(E->subst_text);
        return;
    }
    if ((n->flags & NF_CONST) && ty_is_scalar(n->ty)) {
        emit_const(E, n->ty, n->cval);
        return;
    }
    switch ((NodeKind)n->kind) {
    case E_NAME:
        if (n->sym) {
            PS(sym_name(E, n->sym));
            return;
        }
        if (n->intr && n->intr->kind == IK_SREG) {
            P("((i64)%s)", sreg(n->intr->sub));
            return;
        }
        if (n->intr && n->intr->kind == IK_LANEID) {
            PS("KILN_LANEID");
            return;
        }
        if (n->gv) goto tuple_const;
        UNREACHABLE();
    case E_ATTR: {
        if (n->intr) {
            if (n->intr->kind == IK_SREG) {
                P("((i64)%s)", sreg(n->intr->sub));
                return;
            }
            if (n->intr->kind == IK_LANEID) {
                PS("KILN_LANEID");
                return;
            }
        }
        if (n->gv) goto tuple_const;
        Node *b = n->attr.base;
        const Type *bt = b->ty;
        if (bt->kind == TY_ARRAY) {
            const char *bs = ex_str(E, b, NULL);
            const char *a = n->attr.attr;
            if (strcmp(a, "size") == 0) {
                PS("(");
                for (int i = 0; i < bt->ndim; i++) P("%s(%s).shape[%d]", i ? " * " : "", bs, i);
                PS(")");
                return;
            }
            bool strides = strcmp(a, "strides") == 0;
            P("%s(", tuple_make(E, n->ty));
            for (int i = 0; i < bt->ndim; i++) {
                if (strides)
                    P("%s(%s).strides[%d] * %d", i ? ", " : "", bs, i,
                      kiln_dtype_size((kiln_dtype)bt->elem->dtype));
                else
                    P("%s(%s).shape[%d]", i ? ", " : "", bs, i);
            }
            PS(")");
            return;
        }
        UNREACHABLE();
    }
    tuple_const:
        PS(global_value(E, n->gv));
        return;
    case E_BINOP: binop_text(E, n, (BinOp)n->op, n->opty, n->bin.l, n->bin.r); return;
    case E_UNARY: {
        Node *x = n->un.x;
        const Type *t = n->opty;
        switch ((UnOp)n->op) {
        case U_NOT:
            PS("(!");
            truthy(E, x);
            PS(")");
            return;
        case U_NEG:
            if (t->kind == TY_FLOAT) {
                PS("(-");
                ex_as(E, x, t);
                PS(")");
            } else {
                P("((%s)(0 - ", ctype(E, t));
                ex_as(E, x, t);
                PS("))");
            }
            return;
        case U_POS: ex_as(E, x, t); return;
        case U_INVERT:
            if (t->kind == TY_BOOL) {
                PS("(!");
                ex(E, x);
                PS(")");
            } else {
                P("((%s)(~", ctype(E, t));
                ex_as(E, x, t);
                PS("))");
            }
            return;
        }
        return;
    }
    case E_BOOLOP: {
        const Type *t = n->opty;
        Node *l = n->bin.l, *r = n->bin.r;
        if (t->kind == TY_BOOL) {
            PS("(");
            truthy(E, l);
            PS(n->op == BO_AND ? " && " : " || ");
            truthy(E, r);
            PS(")");
            return;
        }
        const char *ct = ctype(E, t);
        /* The left value is used twice (tested, then the result): written twice
         * only when it is a name or a constant.  Anything else, even pure, goes
         * through a temporary, or `a or b or c ...` would double in size with
         * each operand. */
        if ((l->kind == E_NAME && l->sym) || ((l->flags & NF_CONST) && ty_is_scalar(l->ty))) {
            const char *ls = ex_str(E, l, t);
            P("((%s != 0) ? ", ls);
            if (n->op == BO_OR) {
                PS(ls);
                PS(" : ");
                ex_as(E, r, t);
            } else {
                ex_as(E, r, t);
                PS(" : ");
                PS(ls);
            }
            PS(")");
            return;
        }
        int k = E->tmp++;
        sx_open(E, t);
        P("%s t%d = ", ct, k);
        ex_as(E, l, t);
        PS("; ");
        const char *rs = ex_str(E, r, t);
        sx_close(E, n->op == BO_OR ? arena_printf(&E->C->arena, "(t%d != 0) ? t%d : %s", k, k, rs)
                                   : arena_printf(&E->C->arena, "(t%d != 0) ? %s : t%d", k, rs, k));
        return;
    }
    case E_COMPARE: compare(E, n); return;
    case E_IFEXP:
        PS("(");
        truthy(E, n->ifexp.cond);
        PS(" ? ");
        ex_as(E, n->ifexp.then, n->opty);
        PS(" : ");
        ex_as(E, n->ifexp.orelse, n->opty);
        PS(")");
        return;
    case E_CALL:
        if (n->callee) {
            FuncSpec *f = n->callee;
            /* an explicit signature's return type wins over the inferred one */
            bool cast = f->ret->kind != TY_NONE && !same_ctype(E, f->ret, n->ty);
            if (cast) P("((%s)", ctype(E, n->ty));
            P("%s(KILN_TA", func_name(E, f));
            for (int i = 0; i < n->call.bound.n; i++) {
                PS(", ");
                ex_as(E, n->call.bound.v[i], f->params[i]);
            }
            PS(cast ? "))" : ")");
            return;
        }
        if (n->intr) {
            if (n->intr->kind == IK_POWER) {
                binop_text(E, n, B_POW, n->opty, n->call.bound.v[0], n->call.bound.v[1]);
                return;
            }
            call_intrinsic(E, n);
            return;
        }
        /* dtype cast */
        if (n->call.bound.n == 0) {
            ConstVal z;
            z.u = 0;
            emit_const(E, n->ty, z);
            return;
        }
        convert(E, n->call.bound.v[0]->ty, n->ty, ex_str(E, n->call.bound.v[0], NULL));
        return;
    case E_SUBSCRIPT: {
        const Type *bt = n->sub.base->ty;
        if (bt->kind == TY_TUPLE) {
            int64_t k;
            Node *base = n->sub.base;
            if (base->kind == E_ATTR && base->attr.base->ty->kind == TY_ARRAY && !base->gv &&
                strcmp(base->attr.attr, "shape") == 0 && sema_const_int(n->sub.idx.v[0], &k)) {
                /* a.shape[k]: the extent itself */
                if (k < 0) k += bt->n;
                P("(%s).shape[%lld]", ex_str(E, base->attr.base, NULL), (long long)k);
                return;
            }
            if (base->gv) {
                /* a frozen tuple: a constant item is the constant itself, a
                 * run-time one comes from the tuple's static array */
                const GVal *g = base->gv;
                if (sema_const_int(n->sub.idx.v[0], &k)) {
                    if (k < 0) k += g->ntuple;
                    const GVal *item = &g->tuple[k];
                    if (item->ty->kind == TY_TUPLE) PS(global_value(E, item));
                    else emit_const(E, item->ty, item->cv);
                } else {
                    global_item(E, g, n);
                }
                return;
            }
            const char *b = ex_str(E, n->sub.base, NULL);
            if (sema_const_int(n->sub.idx.v[0], &k)) {
                if (k < 0) k += bt->n;
                P("(%s).f%lld", b, (long long)k);
            } else {
                P("%s(E_, %s, ", tuple_get(E, bt), b);
                ex_as(E, n->sub.idx.v[0], ty_scalar(KILN_INT64));
                P(", %d)", loc(E, n->sp));
            }
            return;
        }
        if (n->ty->kind == TY_ARRAY) {
            view(E, n);
            return;
        }
        PS(element(E, n));
        return;
    }
    case E_TUPLE: {
        P("%s(", tuple_make(E, n->ty));
        for (int i = 0; i < n->tuple.n; i++) {
            if (i) PS(", ");
            ex(E, n->tuple.v[i]);
        }
        PS(")");
        return;
    }
    case E_INT:
    case E_FLOAT:
    case E_BOOL: emit_const(E, n->ty, n->cval); return;
    default: break;
    }
    UNREACHABLE();
}

/* ---- statements ------------------------------------------------------------------ */

static void block(Emit *E, NodeList *l);
static void guard_stmt(Emit *E, Node *n);

static void store_target(Emit *E, Node *t, const char *val, const Type *vt) {
    if (t->kind == E_NAME) {
        indent(E);
        P("%s = ", sym_name(E, t->sym));
        convert(E, vt, t->sym->ty, val);
        PS(";\n");
    } else if (t->kind == E_SUBSCRIPT) {
        indent(E);
        P("%s = ", element(E, t));
        convert(E, vt, t->ty, val);
        PS(";\n");
    } else if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++)
            store_target(E, t->tuple.v[i], arena_printf(&E->C->arena, "(%s).f%d", val, i),
                         vt->elems[i]);
    }
}

static void assign_stmt(Emit *E, Node *n) {
    Node *v = n->assign.value;
    NodeList *ts = &n->assign.targets;
    /* the common case: one simple target */
    if (ts->n == 1 && ts->v[0]->kind != E_TUPLE) {
        Node *t = ts->v[0];
        indent(E);
        if (t->kind == E_NAME) {
            P("%s = ", sym_name(E, t->sym));
            ex_as(E, v, t->sym->ty);
        } else {
            if (!plan_pure(v)) {
                /* Python evaluates the value before the target's index */
                int k = E->tmp++;
                P("{ %s t%d = ", ctype(E, v->ty), k);
                ex(E, v);
                P("; %s = ", element(E, t));
                convert(E, v->ty, t->ty, arena_printf(&E->C->arena, "t%d", k));
                PS("; }\n");
                return;
            }
            P("%s = ", element(E, t));
            ex_as(E, v, t->ty);
        }
        PS(";\n");
        return;
    }
    /* a, b = b, a: every value first, then the targets left to right */
    indent(E);
    PS("{\n");
    E->ind++;
    if (v->kind == E_TUPLE && ts->n == 1) {
        Node *t = ts->v[0];
        int base = E->tmp;
        E->tmp += v->tuple.n;
        for (int i = 0; i < v->tuple.n; i++) {
            indent(E);
            P("%s t%d = ", ctype(E, v->tuple.v[i]->ty), base + i);
            ex(E, v->tuple.v[i]);
            PS(";\n");
        }
        for (int i = 0; i < t->tuple.n; i++)
            store_target(E, t->tuple.v[i], arena_printf(&E->C->arena, "t%d", base + i),
                         v->tuple.v[i]->ty);
    } else {
        int k = E->tmp++;
        indent(E);
        P("%s t%d = ", ctype(E, v->ty), k);
        ex(E, v);
        PS(";\n");
        for (int i = 0; i < ts->n; i++)
            store_target(E, ts->v[i], arena_printf(&E->C->arena, "t%d", k), v->ty);
    }
    E->ind--;
    indent(E);
    PS("}\n");
}

static void aug_stmt(Emit *E, Node *n) {
    Node *t = n->aug.target;
    Node *v = n->aug.value;
    indent(E);
    if (t->kind == E_NAME) {
        P("%s = ", sym_name(E, t->sym));
        Buf tmp, *saved = E->o;
        buf_init_arena(&tmp, &E->C->arena);
        E->o = &tmp;
        binop_text(E, n, (BinOp)n->op, n->opty, t, v);
        E->o = saved;
        convert(E, n->ty, t->sym->ty, tmp.p ? tmp.p : "0");
        buf_free(&tmp);
        PS(";\n");
        return;
    }
    /* a[i] op= v: the element's address is computed once */
    int k = E->tmp++;
    P("{ %s *p%d = &%s; *p%d = ", ctype(E, t->ty), k, element(E, t), k);
    Buf tmp, *saved = E->o;
    buf_init_arena(&tmp, &E->C->arena);
    E->o = &tmp;
    E->subst = t;
    E->subst_text = arena_printf(&E->C->arena, "(*p%d)", k);
    binop_text(E, n, (BinOp)n->op, n->opty, t, v);
    E->subst = NULL;
    E->o = saved;
    convert(E, n->ty, t->ty, tmp.p ? tmp.p : "0");
    buf_free(&tmp);
    PS("; }\n");
}

static void for_stmt(Emit *E, Node *n) {
    Node *iter = n->fors.iter;
    NodeList *a = &iter->call.args;
    const Type *lt = iter->opty;
    const char *ct = ctype(E, lt);
    int k = E->tmp++;
    bool has_else = n->fors.orelse.n > 0;
    indent(E);
    PS("{\n");
    E->ind++;
    indent(E);
    P("%s st%d = ", ct, k);
    if (a->n == 1) PS("0");
    else ex_as(E, a->v[0], lt);
    P(", sp%d = ", k);
    ex_as(E, a->n == 1 ? a->v[0] : a->v[1], lt);
    PS(";\n");
    int64_t step = 1;
    bool const_step = true;
    if (a->n == 3) {
        const_step = sema_const_int(a->v[2], &step);
        indent(E);
        P("%s sd%d = ", ty_is_signed(lt) ? "i64" : "u64", k);
        ex_as(E, a->v[2], ty_is_signed(lt) ? ty_scalar(KILN_INT64) : lt);
        PS(";\n");
        if (!const_step) {
            indent(E);
            P("if (sd%d == 0) { kiln_fail(E_, 4, %d, 0, 0, 0); %s }\n", k, loc(E, n->sp), E->leave);
        }
    }
    if (has_else) {
        indent(E);
        P("kbool brk%d = 0;\n", k);
    }
    indent(E);
    const char *sym = sym_name(E, n->sym);
    const char *inc = a->n == 3 ? arena_printf(&E->C->arena, "it%d += sd%d", k, k)
                                : arena_printf(&E->C->arena, "it%d++", k);
    if (const_step)
        P("for (%s it%d = st%d; it%d %s sp%d; %s) {\n", ct, k, k, k, step > 0 ? "<" : ">", k, inc);
    else
        P("for (%s it%d = st%d; sd%d > 0 ? it%d < sp%d : it%d > sp%d; %s) {\n", ct, k, k, k, k, k,
          k, k, inc);
    E->ind++;
    indent(E);
    P("%s = ", sym);
    convert(E, lt, n->sym->ty, arena_printf(&E->C->arena, "it%d", k));
    PS(";\n");
    E->loops[E->nloops++].flag = has_else ? k : -1;
    block(E, &n->fors.body);
    E->nloops--;
    E->ind--;
    indent(E);
    PS("}\n");
    if (has_else) {
        indent(E);
        P("if (!brk%d) {\n", k);
        E->ind++;
        block(E, &n->fors.orelse);
        E->ind--;
        indent(E);
        PS("}\n");
    }
    E->ind--;
    indent(E);
    PS("}\n");
}

static void stmt(Emit *E, Node *n) {
    line_marker(E, n->sp);
    switch ((NodeKind)n->kind) {
    case S_EXPR:
        if (n->expr->kind == E_STR) return;
        indent(E);
        PS("(void)(");
        ex(E, n->expr);
        PS(");\n");
        return;
    case S_PASS: return;
    case S_ASSIGN: assign_stmt(E, n); return;
    case S_AUGASSIGN: aug_stmt(E, n); return;
    case S_IF:
        if (n == E->plan.guard.stmt && E->f->is_kernel) {
            guard_stmt(E, n);
            return;
        }
        indent(E);
        for (;;) {
            PS("if (");
            truthy(E, n->ifs.cond);
            PS(") {\n");
            E->ind++;
            block(E, &n->ifs.body);
            E->ind--;
            if (!elif_of(n)) break;
            /* elif: `else if` at the same level, however long the chain */
            n = elif_of(n);
            indent(E);
            PS("} else\n");
            E->line = -1;
            line_marker(E, n->sp);
            indent(E);
        }
        if (n->ifs.orelse.n) {
            indent(E);
            PS("} else {\n");
            E->ind++;
            block(E, &n->ifs.orelse);
            E->ind--;
        }
        indent(E);
        PS("}\n");
        return;
    case S_WHILE: {
        bool has_else = n->ifs.orelse.n > 0;
        int k = E->tmp++;
        if (has_else) {
            indent(E);
            P("{ kbool brk%d = 0;\n", k);
        }
        indent(E);
        PS("while (");
        truthy(E, n->ifs.cond);
        PS(") {\n");
        E->ind++;
        if (!E->cuda) {
            /* the back-edge's poll of the stop word (rt_cpu.h), at the top so that
             * `continue` passes it too: only `while` can run without end */
            indent(E);
            P("KILN_POLL(%s)\n", E->leave);
        }
        E->loops[E->nloops++].flag = has_else ? k : -1;
        block(E, &n->ifs.body);
        E->nloops--;
        E->ind--;
        indent(E);
        PS("}\n");
        if (has_else) {
            indent(E);
            P("if (!brk%d) {\n", k);
            E->ind++;
            block(E, &n->ifs.orelse);
            E->ind--;
            indent(E);
            PS("} }\n");
        }
        return;
    }
    case S_FOR: for_stmt(E, n); return;
    case S_BREAK: {
        int flag = E->nloops ? E->loops[E->nloops - 1].flag : -1;
        indent(E);
        if (flag >= 0) P("{ brk%d = 1; break; }\n", flag);
        else PS("break;\n");
        return;
    }
    case S_CONTINUE:
        indent(E);
        PS("continue;\n");
        return;
    case S_RETURN:
        indent(E);
        if (E->f->is_kernel || E->f->ret->kind == TY_NONE) {
            if (n->ret.value && n->ret.value->kind != E_NONE) {
                PS("(void)(");
                ex(E, n->ret.value);
                PS(");\n");
                indent(E);
            }
            PS("return;\n");
            return;
        }
        PS("return ");
        ex_as(E, n->ret.value, E->f->ret);
        PS(";\n");
        return;
    case S_ASSERT:
        if (!E->debug) return;
        indent(E);
        PS("if (!");
        truthy(E, n->assrt.test);
        P(") { kiln_fail(E_, 2, %d, 0, 0, 0); %s }\n", loc(E, n->sp), E->leave);
        return;
    default: UNREACHABLE();
    }
}

/* Bytes of generated text so far (without the preludes). */
static size_t emitted(const Emit *E) {
    return E->types.len + E->helpers.len + E->funcs.len + (E->body ? E->body->len : 0);
}

/* Whether the program has grown past KILN_MAX_SOURCE_BYTES; reported once, at
 * the statement sp whose code crossed it.  Each statement's code is linear in
 * its size, so checking between statements bounds the memory too. */
static bool too_big(Emit *E, Span sp) {
    if (E->too_big) return true;
    if (emitted(E) <= KILN_MAX_SOURCE_BYTES) return false;
    E->too_big = true;
    error_at(E->C, sp, "split the kernel into smaller ones, or make its global tuples smaller",
             "the generated source is larger than %d MiB (KILN_MAX_SOURCE_BYTES)",
             KILN_MAX_SOURCE_BYTES >> 20);
    return true;
}

static void lane_block(Emit *E, NodeList *l);

static void block(Emit *E, NodeList *l) {
    if (E->lanes && !E->in_lane) {
        lane_block(E, l);
        return;
    }
    for (int i = 0; i < l->n && !E->too_big; i++) {
        stmt(E, l->v[i]);
        too_big(E, l->v[i]->sp);
    }
}

/* ---- lane mode (CPU, plan.h) ------------------------------------------------------- */

/* A private local of the run being written, declared at the top of its lane loop. */
static void declare_private(void *arg, const Sym *s) {
    Emit *E = arg;
    if (E->plan.lanes.cls[s->id] != LANE_PRIVATE || E->declared[s->id] == E->run) return;
    E->declared[s->id] = E->run;
    indent(E);
    P("%s %s = 0;\n", ctype(E, s->ty), sym_name(E, s));
}

/* Statements l->v[from..to) as one loop over the lanes of the chunk, which
 * the vectoriser turns into vector code: each statement runs for every lane
 * before the next one starts. */
static void lane_run(Emit *E, NodeList *l, int from, int to) {
    E->run++;
    indent(E);
    PS("_Pragma(\"omp simd\")\n");
    indent(E);
    PS("for (int l_ = 0; l_ < nl_; l_++) {\n");
    E->ind++;
    E->in_lane = true;
    plan_lane_syms(l, from, to, declare_private, E);
    if (E->mask) {
        indent(E);
        P("if (%s[l_]) {\n", E->mask);
        E->ind++;
    }
    for (int i = from; i < to && !E->too_big; i++) {
        stmt(E, l->v[i]);
        too_big(E, l->v[i]->sp);
    }
    if (E->mask) {
        E->ind--;
        indent(E);
        PS("}\n");
    }
    E->in_lane = false;
    E->ind--;
    E->line = -1;
    indent(E);
    PS("}\n");
}

/* A while loop with a varying condition: each pass tests the condition of the
 * lanes still in the loop (a lane that leaves never comes back), ends when none
 * is, and runs the body under their mask. */
static void lane_while(Emit *E, Node *n) {
    int k = E->tmp++;
    const char *m = arena_printf(&E->C->arena, "wm%d", k);
    line_marker(E, n->sp);
    indent(E);
    P("{\n");
    E->ind++;
    indent(E);
    P("i%d %s[KILN_LANES];\n", E->plan.lanes.widest * 8, m);
    indent(E);
    PS("_Pragma(\"omp simd\")\n");
    indent(E);
    P("for (int l_ = 0; l_ < nl_; l_++) %s[l_] = 1;\n", m);
    indent(E);
    PS("for (;;) {\n");
    E->ind++;
    indent(E);
    P("KILN_POLL(%s)\n", E->leave);
    indent(E);
    P("int any%d = 0;\n", k);
    indent(E);
    P("_Pragma(\"omp simd reduction(|:any%d)\")\n", k);
    indent(E);
    PS("for (int l_ = 0; l_ < nl_; l_++) {\n");
    E->ind++;
    E->in_lane = true;
    indent(E);
    P("%s[l_] = %s[l_] && ", m, m);
    truthy(E, n->ifs.cond);
    PS(";\n");
    E->in_lane = false;
    indent(E);
    P("any%d |= %s[l_];\n", k, m);
    E->ind--;
    indent(E);
    PS("}\n");
    indent(E);
    P("if (!any%d) break;\n", k);
    E->mask = m;
    block(E, &n->ifs.body);
    E->mask = NULL;
    E->ind--;
    indent(E);
    PS("}\n");
    E->ind--;
    indent(E);
    PS("}\n");
}

/* A block outside any lane loop: its scalar statements (uniform loops and ifs,
 * whose blocks come back here, and uniform assignments) as themselves, varying
 * while loops as lane_while, each maximal run of the others as one lane loop. */
static void lane_block(Emit *E, NodeList *l) {
    for (int i = 0; i < l->n && !E->too_big;) {
        int kind = plan_lane_stmt(&E->plan, l->v[i]);
        if (kind != LANE_RUN) {
            if (kind == LANE_LOOP) lane_while(E, l->v[i]);
            else stmt(E, l->v[i]);
            too_big(E, l->v[i]->sp);
            i++;
            continue;
        }
        int j = i;
        while (j < l->n && plan_lane_stmt(&E->plan, l->v[j]) == LANE_RUN) j++;
        lane_run(E, l, i, j);
        i = j;
    }
}

/* ---- the guard plan (CPU) ----------------------------------------------------------- */

/* The guard statement with the planned conjuncts left out. */
static void guard_stmt(Emit *E, Node *n) {
    GuardPlan *g = &E->plan.guard;
    if (g->early) { /* an early return: what stays of its condition */
        if (!g->nkeep) return;
        indent(E);
        PS("if (");
        for (int i = 0; i < g->nkeep; i++) {
            if (i) PS(" || ");
            truthy(E, g->keep[i]);
        }
        P(") { %s }\n", E->leave);
        return;
    }
    if (g->nkeep) {
        indent(E);
        PS("if (");
        for (int i = 0; i < g->nkeep; i++) {
            if (i) PS(" && ");
            if (g->keep[i]) {
                truthy(E, g->keep[i]);
            } else {
                compare_pair(E, ex_str(E, g->keep_l[i], NULL), g->keep_l[i]->ty,
                             ex_str(E, g->keep_r[i], NULL), g->keep_r[i]->ty, g->keep_ty[i],
                             (CmpOp)g->keep_op[i]);
            }
        }
        PS(") {\n");
        E->ind++;
    }
    block(E, &n->ifs.body);
    if (g->nkeep) {
        E->ind--;
        indent(E);
        PS("}\n");
    }
}

/* ---- functions --------------------------------------------------------------------- */

static bool emittable(const Type *t) {
    return ty_is_scalar(t) || t->kind == TY_ARRAY || t->kind == TY_TUPLE;
}

/* Writes f; lanes: the kernel's lane body (plan.h), kiln_body_lanes. */
static void function(Emit *E, FuncSpec *f, bool lanes) {
    E->f = f;
    E->lanes = lanes;
    E->in_lane = false;
    E->mask = NULL;
    E->tmp = 0;
    E->nloops = 0;
    E->line = -1;
    E->gvalues.n = 0;
    bool value = !f->is_kernel && f->ret->kind != TY_NONE;
    const char *rt = value ? ctype(E, f->ret) : "void";
    E->leave = value ? "return r0_;" : "return;";
    /* the body first: it tells which frozen tuples need a local (kgv) */
    Buf body;
    buf_init_arena(&body, &E->C->arena);
    E->o = E->body = &body;
    E->ind = 1;
    if (lanes) {
        E->declared = arena_alloc(&E->C->arena, sizeof(int) * (size_t)(f->nsyms + 1));
        E->run = 0;
    }
    block(E, &f->def->def.body);
    E->o = &E->funcs;
    /* the parameters after KILN_TP, and their names */
    Buf ps, pa;
    buf_init_arena(&ps, &E->C->arena);
    buf_init_arena(&pa, &E->C->arena);
    for (int i = 0; i < f->nparams; i++) {
        buf_printf(&ps, ", %s p%d", ctype(E, f->params[i]), i);
        buf_printf(&pa, ", p%d", i);
    }
    for (int i = 0; f->is_kernel && i < f->nparams && i < 64; i++) {
        if ((E->plan.acc >> i) & 1) {
            buf_printf(&ps, ", %s *ra%d_", scalar_ctype(f->params[i]->elem), i);
            buf_printf(&pa, ", ra%d_", i);
        } else if ((E->plan.priv >> i) & 1) {
            buf_printf(&ps, ", int pv%d_", i);
            buf_printf(&pa, ", pv%d_", i);
        }
    }
    if (lanes) {
        P("#define KILN_LANES %d\n", E->plan.lanes.n);
        P("KILN_BODY void kiln_lanes_(KILN_TP, int nl_");
    } else if (f->is_kernel) {
        P("KILN_BODY void kiln_body(KILN_TP");
    } else {
        P("KILN_DEVFN %s %s(KILN_TP", rt, func_name(E, f));
    }
    PS(ps.p ? ps.p : "");
    PS(") {\n");
    E->ind = 1;
    /* locals, with the parameters copied into their variables */
    for (int i = 0; i < f->nsyms; i++) {
        Sym *s = f->syms[i];
        if (!emittable(s->ty)) continue;
        int lc = lanes ? E->plan.lanes.cls[s->id] : LANE_UNIFORM;
        if (lc == LANE_PRIVATE) continue; /* declared in its run's lane loop */
        indent(E);
        if (lc == LANE_VARYING) {
            P("%s %s[KILN_LANES] = {0};\n", ctype(E, s->ty), sym_name(E, s));
            continue;
        }
        P("%s %s = ", ctype(E, s->ty), sym_name(E, s));
        if (s->param >= 0)
            convert(E, f->params[s->param], s->ty, arena_printf(&E->C->arena, "p%d", s->param));
        else if (ty_is_scalar(s->ty))
            PS("0");
        else
            PS("{0}");
        PS(";\n");
        if (s->param >= 0 || !s->read) {
            indent(E);
            P("(void)%s;\n", sym_name(E, s));
        }
    }
    for (int i = 0; i < f->storage.n; i++) {
        Node *c = f->storage.v[i];
        int64_t dims[KILN_MAX_NDIM];
        int nd = sema_shape(c->call.bound.v[0], dims, KILN_MAX_NDIM);
        int64_t total = 1;
        for (int d = 0; d < nd; d++) total *= dims[d];
        bool shared = c->intr->kind == IK_SHARED_ARRAY;
        if (shared && total == 0) continue; /* dynamic: kiln_dsmem */
        indent(E);
        P("%s%s %s%d[%lld];\n", shared ? "__shared__ " : "", scalar_ctype(c->ty->elem),
          shared ? "sst" : "lst", i, (long long)total);
    }
    if (value) {
        indent(E);
        P("%s r0_ = {0};\n", rt);
        indent(E);
        PS("(void)r0_;\n");
    }
    for (int i = 0; i < E->gvalues.n; i++) {
        const GVal *g = E->gvalues.v[i];
        indent(E);
        if (g->ntuple > TUPLE_AS_ARRAY && tuple_homogeneous(E, g->ty)) {
            /* the same bits as its static array (on the GPU, floats as bits too) */
            tuple_is_array(E, g->ty);
            const char *arr = global_array(E, g);
            P("%s kgv%d;\n", ctype(E, g->ty), i);
            indent(E);
            P("memcpy(&kgv%d, %s, sizeof kgv%d);\n", i, arr, i);
            continue;
        }
        P("const %s kgv%d = ", ctype(E, g->ty), i);
        global_make(E, g);
        PS(";\n");
    }
    buf_put(E->o, body.p ? body.p : "", body.len);
    E->body = NULL;
    if (value) PS("    return r0_;\n");
    PS("}\n\n");
    if (lanes) {
        /* The entry's loops call this one function, for full chunks and the short
         * one: the lane body is compiled twice (full chunks with their lane loops
         * of constant length, whose arrays live in registers), not at every call. */
        P("static __attribute__((noinline, unused)) void kiln_body_lanes(KILN_TP, int nl_%s) {\n"
          "    if (nl_ == KILN_LANES) kiln_lanes_(KILN_TA, KILN_LANES%s);\n"
          "    else kiln_lanes_(KILN_TA, nl_%s);\n}\n\n",
          ps.p ? ps.p : "", pa.p ? pa.p : "", pa.p ? pa.p : "");
    }
    buf_free(&ps);
    buf_free(&pa);
    E->lanes = false;
    too_big(E, f->def->def.name_sp);
}

int emit_param_slots(const Type *t) { return t->kind == TY_ARRAY ? 1 + 2 * t->ndim : 1; }

/* The private copies of a thread's share (plan.h): made before its loops... */
static void priv_open(Emit *E, const FuncSpec *k, const char *in) {
    for (int i = 0; i < k->nparams && i < 64; i++) {
        if (!((E->plan.priv >> i) & 1)) continue;
        const Type *t = k->params[i];
        const char *el = scalar_ctype(t->elem);
        if ((E->plan.acc >> i) & 1) {
            P("%s%s ac%d_ = 0;\n", in, el, i);
            continue;
        }
        P("%s%s q%d_ = p%d;\n%sint pv%d_ = 0;\n%s%s *pb%d_ = 0;\n", in, ctype(E, t), i, i, in, i,
          in, el, i);
        P("%sif (p%d.shape[0] > 0 && p%d.shape[0] <= %d / (i64)sizeof(%s)) {\n", in, i, i,
          PLAN_PRIVATE_MAX_BYTES, el);
        P("%s    pb%d_ = (%s *)calloc((size_t)p%d.shape[0], sizeof(%s));\n", in, i, el, i, el);
        P("%s    if (pb%d_) { q%d_.data = pb%d_; q%d_.strides[0] = 1; pv%d_ = 1; }\n%s}\n", in, i,
          i, i, i, i, in);
    }
}

/* ...and added into the arrays after them */
static void priv_close(Emit *E, const FuncSpec *k, const char *in) {
    for (int i = 0; i < k->nparams && i < 64; i++) {
        if (!((E->plan.priv >> i) & 1)) continue;
        const Type *t = k->params[i];
        if ((E->plan.acc >> i) & 1) {
            long long c = (long long)E->plan.acc_index[i];
            P("%sif (ac%d_ != 0) kiln_atomic_add_%s(&p%d.data[(%lldLL < 0 ? %lldLL + p%d.shape[0] "
              ": %lldLL) * p%d.strides[0]], ac%d_);\n",
              in, i, ctype(E, t->elem), i, c, c, i, c, i, i);
            continue;
        }
        P("%sif (pb%d_) {\n%s    for (i64 k_ = 0; k_ < p%d.shape[0]; k_++)\n", in, i, in, i);
        P("%s        if (pb%d_[k_] != 0) kiln_atomic_add_%s(&p%d.data[k_ * p%d.strides[0]], "
          "pb%d_[k_]);\n",
          in, i, ctype(E, t->elem), i, i, i);
        P("%s    free(pb%d_);\n%s}\n", in, i, in);
    }
}

static void cpu_entry(Emit *E, FuncSpec *k) {
    E->o = &E->funcs;
    E->line = -1;
    PS("#line 1 \"<kiln entry>\"\n");
    if (E->plan.priv) PS("void *calloc(size_t, size_t);\nvoid free(void *);\n");
    PS("KILN_EXPORT void kiln_entry(const kiln_launch *L, const i64 *P) {\n");
    int slot = 0;
    for (int i = 0; i < k->nparams; i++) {
        const Type *t = k->params[i];
        const char *ct = ctype(E, t);
        if (t->kind == TY_ARRAY) {
            P("    %s p%d;\n    p%d.data = (%s *)(uintptr_t)P[%d];\n", ct, i, i,
              scalar_ctype(t->elem), slot++);
            for (int d = 0; d < t->ndim; d++) P("    p%d.shape[%d] = P[%d];\n", i, d, slot++);
            for (int d = 0; d < t->ndim; d++) P("    p%d.strides[%d] = P[%d];\n", i, d, slot++);
        } else {
            P("    %s p%d;\n    memcpy(&p%d, &P[%d], sizeof p%d);\n", ct, i, i, slot++, i);
        }
    }
    PS("    const i64 GX_ = L->grid[0], GY_ = L->grid[1], GZ_ = L->grid[2];\n"
       "    const i64 BX_ = L->block[0], BY_ = L->block[1], BZ_ = L->block[2];\n"
       "    struct kiln_err *E_ = L->err;\n"
       "    const int *S_ = L->stop ? L->stop : &kiln_never_;\n"
       "    const i64 NB = GX_ * GY_ * GZ_;\n");
    /* each grid position's weight against the parallel threshold (plan.h) */
    P("    const i64 W_ = %d;\n", E->plan.loops ? PLAN_LOOP_WEIGHT : 1);
    /* the guard's bounds on the grid coordinates (x = bx * BX + tx, and y, z
     * alike), the same for the whole launch */
    static const char cn[3] = {'x', 'y', 'z'};
    GuardPlan *g = &E->plan.guard;
    for (int d = 0; d < 3; d++)
        P("    i64 %clo_ = -9223372036854775807LL - 1, %chi_ = 9223372036854775807LL;\n", cn[d],
          cn[d]);
    E->in_entry = true;
    for (int i = 0; i < (g->stmt ? g->nb : 0); i++) {
        const Bound *b = &g->b[i];
        P("    { const i64 e_ = (i64)(%s)", ex_str(E, b->e, ty_scalar(KILN_INT64)));
        if (b->adj) P(" + %d", b->adj);
        P("; if (e_ %s %c%s) %c%s = e_; }\n", b->lower ? ">" : "<", cn[b->dim],
          b->lower ? "lo_" : "hi_", cn[b->dim], b->lower ? "lo_" : "hi_");
    }
    E->in_entry = false;
    Buf args, fp;
    buf_init_arena(&args, &E->C->arena);
    buf_init_arena(&fp, &E->C->arena);
    uint64_t arrays = E->plan.priv & ~E->plan.acc;
    for (int i = 0; i < k->nparams; i++)
        buf_printf(&args, (i < 64 && ((arrays >> i) & 1)) ? ", q%d_" : ", p%d", i);
    Buf red;
    buf_init_arena(&red, &E->C->arena);
    for (int i = 0; i < k->nparams && i < 64; i++) {
        if ((E->plan.acc >> i) & 1) {
            buf_printf(&args, ", &ac%d_", i);
            buf_printf(&red, "%sac%d_", red.len ? ", " : " reduction(+:", i);
        } else if ((E->plan.priv >> i) & 1) {
            buf_printf(&args, ", pv%d_", i);
        }
    }
    if (red.len) buf_puts(&red, ")");
    /* firstprivate: each thread's own copies, which the kernel's stores cannot alias */
    buf_puts(&fp, "firstprivate(GX_, GY_, GZ_, BX_, BY_, BZ_, E_, S_, xlo_, xhi_, ylo_, yhi_, "
                  "zlo_, zhi_");
    for (int i = 0; i < k->nparams; i++) buf_printf(&fp, ", p%d", i);
    buf_puts(&fp, ")");
    const char *a = args.p ? args.p : "";
    /* atomics keep the thread loop scalar, unless they all became reduction variables */
    const char *simd = !E->R->uses_atomics ? "omp simd"
                       : E->plan.simd_ok ? arena_printf(&E->C->arena, "omp simd%s",
                                                        red.p ? red.p : "")
                                         : "";
    /* The stop word is polled between blocks (rows, pieces of KILN_POLL_SPAN
     * threads), never inside the vectorised thread loop.  A stopped thread leaves
     * its share at once, except in the collapsed loop over the rows of a 2-D or
     * 3-D grid-only kernel, where each remaining row skips at its poll. */
    if (!E->R->uses_sregs) {
        /* The kernel sees its position only through kiln.grid()/gridsize(): run the
         * whole grid as one block, in the loop order planned from its accesses
         * (plan.h), the innermost loop vectorised, the outer two parallel. */
        PS("    const i64 NX_ = GX_ * BX_, NY_ = GY_ * BY_, NZ_ = GZ_ * BZ_;\n");
        for (int d = 0; d < 3; d++)
            P("    const i64 %c0_ = %clo_ > 0 ? %clo_ : 0, %c1_ = %chi_ < N%c_ ? %chi_ : N%c_;\n",
              cn[d], cn[d], cn[d], cn[d], cn[d], cn[d] - 32, cn[d], cn[d] - 32);
        PS("    if (x1_ <= x0_ || y1_ <= y0_ || z1_ <= z0_) return;\n"
           "    const int par_ = (x1_ - x0_) * (y1_ - y0_) * (z1_ - z0_) * W_ >= L->par_threshold "
           "&& NB > 1;\n"
           "    if (NY_ * NZ_ == 1) {\n");
        /* lane mode (plan.h): along x here, so only when the plan's lanes are */
        const bool lanes = E->plan.lanes.n > 0, lanes_x = lanes && E->plan.lanes.dim == 0;
        /* one row: each OpenMP thread takes a contiguous share (as schedule(simd:static)
         * would, in multiples of 16), run in pieces with a poll before each */
        for (int par = 1; par >= 0; par--) {
            if (par)
                P("        if (par_) {\n"
                  "            _Pragma(\"omp parallel %s\")\n"
                  "            {\n"
                  "                const i64 nt_ = omp_get_num_threads(), me_ = omp_get_thread_num();\n"
                  "                const i64 per_ = ((x1_ - x0_) / nt_ + 16) & ~(i64)15;\n"
                  "                const i64 lo_ = x0_ + me_ * per_;\n"
                  "                const i64 hi_ = x1_ - lo_ > per_ ? lo_ + per_ : x1_;\n",
                  fp.p);
            else
                PS("        } else {\n"
                   "            {\n"
                   "                const i64 lo_ = x0_, hi_ = x1_;\n");
            priv_open(E, k, "                ");
            P("                for (i64 c_ = lo_; c_ < hi_; c_ += KILN_POLL_SPAN) {\n"
              "                    KILN_POLL(break;)\n"
              "                    const i64 e_ = hi_ - c_ > KILN_POLL_SPAN ? c_ + KILN_POLL_SPAN : hi_;\n");
            if (lanes_x) /* full chunks of lanes, then one short chunk */
                P("                    const i64 le_ = c_ + (e_ - c_) / KILN_LANES * KILN_LANES;\n"
                  "                    for (i64 x = c_; x < le_; x += KILN_LANES)\n"
                  "                        kiln_body_lanes(x, 0, 0, 0, 0, 0, NX_, NY_, NZ_, 1, 1, 1, E_, S_, KILN_LANES%s);\n"
                  "                    if (le_ < e_)\n"
                  "                        kiln_body_lanes(le_, 0, 0, 0, 0, 0, NX_, NY_, NZ_, 1, 1, 1, E_, S_, (int)(e_ - le_)%s);\n"
                  "                }\n",
                  a, a);
            else
                P("                    _Pragma(\"%s\")\n"
                  "                    for (i64 x = c_; x < e_; x++)\n"
                  "                        kiln_body(x, 0, 0, 0, 0, 0, NX_, NY_, NZ_, 1, 1, 1, E_, S_%s);\n"
                  "                }\n",
                  simd, a);
            priv_close(E, k, "                ");
            PS("            }\n");
        }
        PS("        }\n    } else {\n");
        const int *o = E->plan.order;
        const char A = cn[o[0]], B = cn[o[1]], Cd = cn[o[2]];
        for (int par = 1; par >= 0; par--) {
            if (par)
                P("        if (par_) {\n            _Pragma(\"omp parallel %s\")\n            {\n",
                  fp.p);
            else PS("        } else {\n            {\n");
            priv_open(E, k, "            ");
            if (par)
                P("            _Pragma(\"omp for collapse(%d) schedule(static) nowait\")\n",
                  E->plan.tile ? 3 : 2);
            if (E->plan.tile) {
                P("            for (i64 %c = %c0_; %c < %c1_; %c++)\n"
                  "            for (i64 tb_ = %c0_; tb_ < %c1_; tb_ += %d)\n"
                  "            for (i64 tc_ = %c0_; tc_ < %c1_; tc_ += %d) {\n"
                  "                KILN_POLL(continue;)\n"
                  "                const i64 eb_ = %c1_ - tb_ > %d ? tb_ + %d : %c1_;\n"
                  "                const i64 ec_ = %c1_ - tc_ > %d ? tc_ + %d : %c1_;\n"
                  "                for (i64 %c = tb_; %c < eb_; %c++) {\n",
                  A, A, A, A, A, B, B, PLAN_TILE, Cd, Cd, PLAN_TILE, B, PLAN_TILE, PLAN_TILE, B,
                  Cd, PLAN_TILE, PLAN_TILE, Cd, B, B, B);
                if (lanes)
                    P("                    for (i64 %c = tc_; %c < ec_; %c += KILN_LANES)\n"
                      "                        kiln_body_lanes(x, y, z, 0, 0, 0, NX_, NY_, NZ_, 1, 1, 1, E_, S_, "
                      "ec_ - %c < KILN_LANES ? (int)(ec_ - %c) : KILN_LANES%s);\n",
                      Cd, Cd, Cd, Cd, Cd, a);
                else
                    P("                    _Pragma(\"%s\")\n"
                      "                    for (i64 %c = tc_; %c < ec_; %c++)\n"
                      "                        kiln_body(x, y, z, 0, 0, 0, NX_, NY_, NZ_, 1, 1, 1, E_, S_%s);\n",
                      simd, Cd, Cd, Cd, a);
                PS("                }\n"
                   "            }\n");
            } else {
                P("            for (i64 %c = %c0_; %c < %c1_; %c++)\n"
                  "            for (i64 %c = %c0_; %c < %c1_; %c++) {\n"
                  "                KILN_POLL(continue;)\n",
                  A, A, A, A, A, B, B, B, B, B);
                if (lanes)
                    P("                const i64 le_ = %c0_ + (%c1_ - %c0_) / KILN_LANES * KILN_LANES;\n"
                      "                for (i64 %c = %c0_; %c < le_; %c += KILN_LANES)\n"
                      "                    kiln_body_lanes(x, y, z, 0, 0, 0, NX_, NY_, NZ_, 1, 1, 1, E_, S_, KILN_LANES%s);\n"
                      "                if (le_ < %c1_) {\n"
                      "                    const i64 %c = le_;\n"
                      "                    kiln_body_lanes(x, y, z, 0, 0, 0, NX_, NY_, NZ_, 1, 1, 1, E_, S_, (int)(%c1_ - le_)%s);\n"
                      "                }\n"
                      "            }\n",
                      Cd, Cd, Cd, Cd, Cd, Cd, Cd, a, Cd, Cd, Cd, a);
                else
                    P("                _Pragma(\"%s\")\n"
                      "                for (i64 %c = %c0_; %c < %c1_; %c++)\n"
                      "                    kiln_body(x, y, z, 0, 0, 0, NX_, NY_, NZ_, 1, 1, 1, E_, S_%s);\n"
                      "            }\n",
                      simd, Cd, Cd, Cd, Cd, Cd, a);
            }
            priv_close(E, k, "            ");
            PS("            }\n");
        }
        PS("        }\n    }\n}\n");
        buf_free(&args);
        buf_free(&fp);
        buf_free(&red);
        return;
    }
    for (int par = 1; par >= 0; par--) {
        /* each OpenMP thread a contiguous range of blocks (as schedule(static)),
         * so a stopped thread leaves its loop at once */
        if (par)
            P("    if (NB > 1 && NB * BX_ * BY_ * BZ_ * W_ >= L->par_threshold) {\n"
              "        _Pragma(\"omp parallel %s\")\n"
              "        {\n"
              "        const i64 nt_ = omp_get_num_threads(), me_ = omp_get_thread_num();\n"
              "        const i64 per_ = NB / nt_ + (NB %% nt_ != 0);\n"
              "        const i64 b0_ = me_ * per_, b1_ = NB - b0_ > per_ ? b0_ + per_ : NB;\n",
              fp.p);
        else
            PS("    } else {\n"
               "        {\n"
               "        const i64 b0_ = 0, b1_ = NB;\n");
        priv_open(E, k, "        ");
        PS("        for (i64 b = b0_; b < b1_; b++) {\n"
           "            KILN_POLL(break;)\n"
           "            const i64 bx_ = b % GX_, by_ = (b / GX_) % GY_, bz_ = b / (GX_ * GY_);\n");
        /* the threads of this block inside the guard's bounds, in each dimension */
        static const char *blk[3][2] = {{"bx_", "BX_"}, {"by_", "BY_"}, {"bz_", "BZ_"}};
        for (int d = 0; d < 3; d++) {
            const char *bi = blk[d][0], *bd = blk[d][1];
            P("            const i64 %cb_ = %s * %s;\n"
              "            const i64 t%clo_ = %clo_ > %cb_ ? (%clo_ - %cb_ < %s ? %clo_ - %cb_ : %s) : 0;\n"
              "            const i64 t%chi_ = %chi_ - %cb_ < %s ? %chi_ - %cb_ : %s;\n",
              cn[d], bi, bd, cn[d], cn[d], cn[d], cn[d], cn[d], bd, cn[d], cn[d], bd, cn[d],
              cn[d], cn[d], bd, cn[d], cn[d], bd);
        }
        PS("            for (i64 tz_ = tzlo_; tz_ < tzhi_; tz_++)\n"
           "            for (i64 ty_ = tylo_; ty_ < tyhi_; ty_++) {\n");
        P("                _Pragma(\"%s\")\n", simd);
        P("                for (i64 tx_ = txlo_; tx_ < txhi_; tx_++)\n"
          "                    kiln_body(tx_, ty_, tz_, bx_, by_, bz_, BX_, BY_, BZ_, GX_, GY_, "
          "GZ_, E_, S_%s);\n",
          a);
        PS("            }\n        }\n");
        priv_close(E, k, "        ");
        PS("        }\n");
    }
    PS("    }\n}\n");
    buf_free(&args);
    buf_free(&fp);
    buf_free(&red);
}

/* Whether the kernel may run several grid positions per thread: it sees its
 * position only through kiln.grid() (no thread or block indices, gridsize,
 * barriers, shared memory or warp operations), so each position is an
 * independent run of the body, whichever thread makes it.  CUDA only. */
static bool widens(Emit *E, const FuncSpec *k) {
    const SemaResult *R = E->R;
    if (R->gpu_only || R->uses_sregs || R->uses_gridsize) return false;
    for (int i = 0; i < k->nparams; i++)
        if (k->params[i]->kind != TY_ARRAY && !ty_is_scalar(k->params[i])) return false;
    return true;
}

/* The CUDA entry points.  kiln_entry runs the body once per thread.  For a
 * kernel that widens, kiln_entry_wide runs it for KILN_CUDA_WIDE positions per
 * thread, block-strided so that each pass stays coalesced, up to n_ (the
 * launch's threads).  The launcher takes it for a 1-D launch large enough to
 * fill the GPU whose arrays do not overlap: its arrays arrive as separate
 * __restrict__ pointers (const for those the kernel never writes), so NVRTC
 * loads them through the read-only path and batches the loads of the passes. */
static void cuda_entry(Emit *E, FuncSpec *k) {
    E->o = &E->funcs;
    E->line = -1;
    PS("#line 1 \"<kiln entry>\"\n");
    Buf args;
    buf_init_arena(&args, &E->C->arena);
    for (int i = 0; i < k->nparams; i++) buf_printf(&args, ", p%d", i);
    const char *a = args.p ? args.p : "";
    PS("extern \"C\" __global__ void kiln_entry(struct kiln_err *E_");
    for (int i = 0; i < k->nparams; i++) P(", %s p%d", ctype(E, k->params[i]), i);
    P(") {\n    kiln_body(E_, KILN_BID_X * KILN_BDIM_X + KILN_TID_X%s);\n}\n\n", a);
    if (widens(E, k)) {
        PS("extern \"C\" __global__ void kiln_entry_wide(struct kiln_err *E_");
        for (int i = 0; i < k->nparams; i++) {
            const Type *t = k->params[i];
            if (t->kind != TY_ARRAY) {
                P(", %s p%d", ctype(E, t), i);
                continue;
            }
            bool ro = !spec_writes(k, i);
            P(", %s%s *__restrict__ p%dd", ro ? "const " : "", scalar_ctype(t->elem), i);
            for (int d = 0; d < t->ndim; d++) P(", i64 p%ds%d", i, d);
            for (int d = 0; d < t->ndim; d++) P(", i64 p%dt%d", i, d);
        }
        PS(", i64 n_) {\n");
        for (int i = 0; i < k->nparams; i++) {
            const Type *t = k->params[i];
            if (t->kind != TY_ARRAY) continue;
            P("    %s p%d;\n    p%d.data = (%s *)p%dd;\n", ctype(E, t), i, i,
              scalar_ctype(t->elem), i);
            for (int d = 0; d < t->ndim; d++) P("    p%d.shape[%d] = p%ds%d;\n", i, d, i, d);
            for (int d = 0; d < t->ndim; d++) P("    p%d.strides[%d] = p%dt%d;\n", i, d, i, d);
        }
        P("    const i64 x0_ = KILN_BID_X * KILN_BDIM_X * %d + KILN_TID_X;\n"
          "#pragma unroll\n"
          "    for (int k_ = 0; k_ < %d; k_++) {\n"
          "        const i64 x_ = x0_ + k_ * KILN_BDIM_X;\n"
          "        if (x_ < n_) kiln_body(E_, x_%s);\n"
          "    }\n}\n\n",
          KILN_CUDA_WIDE, KILN_CUDA_WIDE, a);
    }
    buf_free(&args);
}

int emit_program(Compiler *C, const SemaResult *r, Buf *out, PtrVec *files) {
    Emit EM;
    memset(&EM, 0, sizeof EM);
    Emit *E = &EM;
    E->C = C;
    E->R = r;
    E->cuda = C->opts.target == KILN_TARGET_CUDA;
    E->debug = C->opts.debug != 0;
    E->fastmath = C->opts.fastmath != 0;
    buf_init_arena(&E->types, &E->C->arena);
    buf_init_arena(&E->helpers, &E->C->arena);
    buf_init_arena(&E->funcs, &E->C->arena);
    if (!E->cuda) plan_cpu(r, E->debug, &C->arena, &E->plan);
    for (int i = 0; i < r->order.n && !E->too_big; i++) function(E, r->order.v[i], false);
    /* the lane body, unless the source is large already (it holds the kernel twice) */
    if (E->plan.lanes.n && emitted(E) > KILN_MAX_SOURCE_BYTES / 4) E->plan.lanes.n = 0;
    if (E->plan.lanes.n && !E->too_big) function(E, r->kernel, true);
    if (E->too_big) return -1;
    if (E->cuda) cuda_entry(E, r->kernel);
    else cpu_entry(E, r->kernel);

    buf_printf(out, "%s %s\n", KILN_CFLAGS_MARKER, (!E->cuda && E->fastmath) ? "-ffast-math" : "");
    buf_printf(out, "/* generated by kiln %s from %s (%s) */\n", KILN_VERSION,
               r->kernel->fi->name, E->cuda ? "cuda" : "cpu");
    buf_puts(out, E->cuda ? kiln_rt_cuda_h : kiln_rt_cpu_h);
    buf_puts(out, kiln_rt_common_h);
    buf_puts(out, "\n/* ---- types ---- */\n");
    buf_put(out, E->types.p ? E->types.p : "", E->types.len);
    buf_puts(out, "\n/* ---- helpers ---- */\n");
    buf_put(out, E->helpers.p ? E->helpers.p : "", E->helpers.len);
    buf_puts(out, "\n/* ---- functions ---- */\n");
    buf_put(out, E->funcs.p ? E->funcs.p : "", E->funcs.len);
    *files = E->files;
    bool oom = E->types.oom || E->helpers.oom || E->funcs.oom || out->oom;
    buf_free(&E->types);
    buf_free(&E->helpers);
    buf_free(&E->funcs);
    if (oom) {
        diag_plain(C->ctx, KILN_ERROR, NULL, "out of memory while generating code");
        return -1;
    }
    return 0;
}
