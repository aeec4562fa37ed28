/* emit_text.c: the text every level of the emitter writes.
 *
 * Line markers and error locations, C names for symbols and functions, the C
 * types of arrays and tuples (each struct written once per program, registered
 * in an open-addressing set of names), constants, conversions, the offset of a
 * subscript in each layout, and frozen global tuples.  Nothing here emits an
 * expression node: the files above call down into this one.
 */
#include "emit_int.h"

void emit_indent(Emit *E) {
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

void emit_line_marker(Emit *E, Span sp) {
    if (!sp.file || sp.line == E->line) return;
    E->line = sp.line;
    P("#line %d \"%s\"\n", sp.line, cfile(E, sp.file->name));
}

/* Where a runtime error happened: (file index << 20) | line, as kiln.h says. */
int emit_loc(Emit *E, Span sp) {
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

/* emit_loc of a raise site (sema_raise.c's fields) at a line: the site stands in the
 * table of files, so the error names it. */
int emit_site(Emit *E, const char *site, int line) {
    int idx = -1;
    for (int i = 0; i < E->files.n; i++)
        if (strcmp(E->files.v[i], site) == 0) idx = i;
    if (idx < 0) {
        idx = E->files.n;
        vec_push(&E->C->arena, &E->files, (void *)site);
    }
    return (idx << 20) | (line & 0xFFFFF);
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

const char *emit_sym_name(Emit *E, const Sym *s) {
    if (E->in_entry && s->param >= 0) return arena_printf(&E->C->arena, "p%d", s->param);
    if (E->in_lane) {
        /* lane mode (plan.h): a varying local is one value per lane, the
         * innermost coordinate the chunk's base plus the lane */
        int c = E->plan.lanes.cls[s->id];
        if (c == LANE_VARYING)
            return arena_printf(&E->C->arena, "v%d_%s[l_]", s->id, sanitize(E, s->name));
        if (c == LANE_COORD) /* block lanes: the base plus the thread's x */
            return arena_printf(&E->C->arena, E->plan.lanes.block ? "(v%d_%s + tx_)" : "(v%d_%s + l_)",
                                s->id, sanitize(E, s->name));
        if (c == LANE_RECOMP && E->recomp_text && E->recomp_text[s->id])
            return E->recomp_text[s->id];
    }
    return arena_printf(&E->C->arena, "v%d_%s", s->id, sanitize(E, s->name));
}

const char *emit_func_name(Emit *E, const FuncSpec *f) {
    return arena_printf(&E->C->arena, "kf%d_%s", f->id, sanitize(E, f->fi->name));
}

/* ---- types ------------------------------------------------------------------ */

const char *emit_scalar_ctype(const Type *t) {
    static const char *const names[KILN_NDTYPES] = {
        "kbool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f32", "f64",
        "c64", "c128", "f32"};
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
bool emit_registered(Emit *E, const char *key) { return registered(E, key); }

bool emit_is_f16(const Type *t) {
    return t->kind == TY_FLOAT && !t->weak && t->dtype == KILN_FLOAT16;
}

char emit_narrow(const Type *t) {
    if (t->kind != TY_FLOAT || t->weak) return 0;
    return t->dtype == KILN_FLOAT16 ? 'h' : t->dtype == KILN_BFLOAT16 ? 'b' : 0;
}

const char *emit_elem_ctype(Emit *E, const Type *t) {
    if (t->kind == TY_RECORD) return emit_record_ctype(E, t);
    if (!emit_narrow(t)) return emit_scalar_ctype(t);
    E->half = true;
    return "kh16";
}

bool emit_half_open(Emit *E, const Type *t) {
    char k = emit_narrow(t);
    if (!k) return false;
    E->half = true;
    P("kiln_%cr(", k);
    return true;
}

void emit_half_close(Emit *E, bool open) {
    if (open) PS(")");
}

const char *emit_load(Emit *E, const Type *t, const char *lv) {
    char k = emit_narrow(t);
    if (!k) return lv;
    E->half = true;
    return arena_printf(&E->C->arena, "kiln_%c2f(%s)", k, lv);
}

/* A pointer (CPointer) is a struct of its data pointer alone, so that x[i] reads as an
 * array's element and any use of an extent (x.shape) would not compile. */
static const char *ptr_ctype(Emit *E, const Type *t) {
    const char *el = emit_elem_ctype(E, t->elem);
    if (t->elem->kind == TY_COMPLEX) E->uses_complex = true;
    const char *name = arena_printf(&E->C->arena, "KP_%s", el);
    if (!registered(E, name)) buf_printf(&E->types, "typedef struct { %s *data; } %s;\n", el, name);
    return name;
}

static const char *array_ctype(Emit *E, const Type *t) {
    if (t->ptr) return ptr_ctype(E, t);
    const char *el = emit_elem_ctype(E, t->elem);
    if (t->elem->kind == TY_COMPLEX) E->uses_complex = true;
    const char *name = arena_printf(&E->C->arena, "KA_%s_%d", el, t->ndim);
    if (registered(E, name)) return name;
    Buf *b = &E->types;
    int nd = t->ndim;
    /* a 0-d array has no extents: one unused slot each, as C has no empty arrays */
    buf_printf(b, "typedef struct { %s *data; i64 shape[%d]; i64 strides[%d]; } %s;\n", el,
               nd ? nd : 1, nd ? nd : 1, name);
    /* constructor for local and shared storage: C-contiguous strides */
    buf_printf(b, "KILN_FN %s %s_local(%s *d", name, name, el);
    for (int i = 0; i < nd; i++) buf_printf(b, ", i64 s%d", i);
    buf_printf(b, ") {\n    %s r;\n    r.data = d;\n", name);
    for (int i = 0; i < nd; i++) buf_printf(b, "    r.shape[%d] = s%d;\n", i, i);
    buf_printf(b, "    r.strides[%d] = 1;\n", nd ? nd - 1 : 0);
    if (!nd) buf_printf(b, "    r.shape[0] = 1;\n");
    for (int i = nd - 2; i >= 0; i--)
        buf_printf(b, "    r.strides[%d] = r.strides[%d] * s%d;\n", i, i + 1, i + 1);
    buf_printf(b, "    return r;\n}\n");
    return name;
}

/* A record's storage: a struct of its bytes (NumPy's itemsize), so that arrays of it
 * index by whole records and `a[i] = a[j]` copies one.  Fields are read at their byte
 * offsets (emit_field).  The layout is written out in a comment, so that the source, and
 * with it every cache key, differs for records that differ in any field's name, type,
 * shape or offset. */
const char *emit_record_ctype(Emit *E, const Type *t) {
    Buf k;
    buf_init_arena(&k, &E->C->arena);
    buf_printf(&k, "record %lld:", (long long)t->rec->itemsize);
    for (int i = 0; i < t->rec->nfields; i++) {
        const kiln_field *f = &t->rec->fields[i];
        buf_printf(&k, " %s %s@%lld", f->name, kiln_dtype_name((kiln_dtype)f->dtype),
                   (long long)f->offset);
        for (int d = 0; d < f->ndim; d++)
            buf_printf(&k, "%s%lld", d ? "x" : "[", (long long)f->shape[d]);
        if (f->ndim) buf_puts(&k, "]");
    }
    const char *key = k.p, *name = NULL;
    if (register_as(E, key, NULL, &name)) return name;
    name = arena_printf(&E->C->arena, "KR%d", E->nnames);
    E->named[name_slot(E, key)] = name;
    Buf *b = &E->types;
    for (int i = 0; i < t->rec->nfields; i++)
        if (t->rec->fields[i].dtype == KILN_COMPLEX64 || t->rec->fields[i].dtype == KILN_COMPLEX128)
            E->uses_complex = true;
    buf_printf(b, "/* %s */\ntypedef struct { unsigned char b[%lld]; } %s;\n", key,
               (long long)t->rec->itemsize, name);
    return name;
}

/* A tuple type is a struct of fields f0, f1 ...; its constructor (_make) and
 * run-time indexing (_get) are written when first used, so a large tuple that
 * is only indexed costs no code for them. */
/* A vector type's struct, KV_float32x4: CUDA's layout and alignment (n of 2 or 4 lanes
 * aligned to their whole size up to 16 bytes, 1 or 3 to one lane's), so that the GPU
 * loads and stores one in a single vector instruction; on the GPU the compiler checks
 * it against CUDA's own type (not the 4-lane 8-byte ones, which CUDA 13 deprecates). */
static const char *vector_ctype(Emit *E, const Type *t) {
    const char *name = arena_printf(&E->C->arena, "KV_%s", t->tname);
    if (registered(E, name)) return name;
    static const char *const cuda_names[] = {
        [KILN_INT8] = "char",    [KILN_INT16] = "short",   [KILN_INT32] = "int",
        [KILN_INT64] = "longlong", [KILN_UINT8] = "uchar", [KILN_UINT16] = "ushort",
        [KILN_UINT32] = "uint",  [KILN_UINT64] = "ulonglong", [KILN_FLOAT32] = "float",
        [KILN_FLOAT64] = "double"};
    const Type *lane = t->elems[0];
    const char *el = emit_ctype(E, lane);
    int size = ty_bits(lane) / 8, align = t->n == 2 || t->n == 4 ? size * t->n : size;
    if (align > 16) align = 16;
    Buf *b = &E->types;
    if (E->cuda) buf_printf(b, "typedef struct __align__(%d) {", align);
    else buf_printf(b, "typedef struct {");
    for (int i = 0; i < t->n; i++)
        buf_printf(b, " %s%s f%d;", !E->cuda && i == 0 ? arena_printf(&E->C->arena,
                   "_Alignas(%d) ", align) : "", el, i);
    buf_printf(b, " } %s;\n", name);
    const char *cn = lane->dtype < COUNTOF(cuda_names) ? cuda_names[lane->dtype] : NULL;
    if (E->cuda && cn && !(size == 8 && t->n == 4))
        buf_printf(b, "typedef char %s_is_cuda[sizeof(%s) == sizeof(%s%d) && "
                      "alignof(%s) == alignof(%s%d) ? 1 : -1];\n",
                   name, name, cn, t->n, name, cn, t->n);
    return name;
}

static const char *tuple_ctype(Emit *E, const Type *t) {
    if (t->vec) return vector_ctype(E, t);
    Buf k;
    buf_init_arena(&k, &E->C->arena);
    const char **el = arena_alloc(&E->C->arena, sizeof(char *) * (size_t)(t->n + 1));
    buf_puts(&k, "tuple:");
    for (int i = 0; i < t->n; i++) {
        el[i] = emit_ctype(E, t->elems[i]);
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
const char *emit_tuple_make(Emit *E, const Type *t) {
    const char *name = emit_ctype(E, t);
    const char *fn = arena_printf(&E->C->arena, "%s_make", name);
    if (registered(E, fn)) return fn;
    Buf *b = &E->types;
    buf_printf(b, "KILN_FN %s %s(", name, fn);
    for (int i = 0; i < t->n; i++) buf_printf(b, "%s%s a%d", i ? ", " : "", emit_ctype(E, t->elems[i]), i);
    if (t->n == 0) buf_printf(b, "void");
    buf_printf(b, ") {\n    %s r;\n", name);
    if (t->n == 0) buf_printf(b, "    r.unused = 0;\n");
    for (int i = 0; i < t->n; i++) buf_printf(b, "    r.f%d = a%d;\n", i, i);
    buf_printf(b, "    return r;\n}\n");
    return fn;
}

const char *emit_array_copy_fn(Emit *E, const Type *t) {
    const char *name = emit_ctype(E, t), *el = emit_elem_ctype(E, t->elem);
    const Type *ct = ty_array(E->C, t->elem, t->ndim, 'C');
    const char *cn = emit_ctype(E, ct);
    const char *fn = arena_printf(&E->C->arena, "%s_copy", name);
    if (registered(E, fn)) return fn;
    int nd = t->ndim;
    Buf *b = &E->types;
    buf_printf(b, "KILN_FN %s %s(%s s, %s *d) {\n    %s r = %s_local(d", cn, fn, name, el, cn, cn);
    for (int i = 0; i < nd; i++) buf_printf(b, ", s.shape[%d]", i);
    buf_printf(b, ");\n    i64 n = 1;\n    for (int k = 0; k < %d; k++) n *= s.shape[k];\n", nd);
    buf_printf(b, "    for (i64 f = 0; f < n; f++) {\n        i64 q = f, off = 0;\n"
                  "        for (int k = %d; k >= 0; k--) {\n"
                  "            off += (q %% s.shape[k]) * s.strides[k];\n"
                  "            q /= s.shape[k];\n        }\n"
                  "        d[f] = s.data[off];\n    }\n    return r;\n}\n", nd - 1);
    return fn;
}

void emit_vector_make(Emit *E, const Type *t, int na, const Type **tys, const char **args) {
    const char *name = emit_ctype(E, t);
    Buf fn;
    buf_init_arena(&fn, &E->C->arena);
    buf_printf(&fn, "%s_of", name); /* KV_float32x4_of_v2_s_s: from a 2-vector, 2 scalars */
    const char **pt = arena_alloc(&E->C->arena, sizeof(char *) * (size_t)(na + 1));
    for (int i = 0; i < na; i++) {
        pt[i] = emit_ctype(E, tys[i]); /* each struct written before the helper */
        if (ty_is_vector(tys[i])) buf_printf(&fn, "_v%d", tys[i]->n);
        else buf_puts(&fn, "_s");
    }
    if (!registered(E, fn.p)) {
        Buf *b = &E->types;
        buf_printf(b, "KILN_FN %s %s(", name, fn.p);
        for (int i = 0; i < na; i++) buf_printf(b, "%s%s a%d", i ? ", " : "", pt[i], i);
        buf_printf(b, ") {\n    %s r;\n", name);
        int lane = 0;
        for (int i = 0; i < na; i++) {
            if (!ty_is_vector(tys[i])) {
                buf_printf(b, "    r.f%d = a%d;\n", lane++, i);
                continue;
            }
            for (int k = 0; k < tys[i]->n; k++) buf_printf(b, "    r.f%d = a%d.f%d;\n", lane++, i, k);
        }
        buf_printf(b, "    return r;\n}\n");
    }
    P("%s(", fn.p);
    for (int i = 0; i < na; i++) P("%s%s", i ? ", " : "", args[i]);
    PS(")");
}

/* The helper behind math.frexp (modf 0) or math.modf (1) whose result is tuple type t:
 * both parts from one evaluation of the argument.  frexp of inf or NaN gives (x, 0) as
 * Python does (C leaves the exponent unspecified); modf of inf gives (+-0.0, inf). */
const char *emit_split_fn(Emit *E, const Type *t, int modf) {
    const char *name = emit_ctype(E, t);
    const char *fn = arena_printf(&E->C->arena, "%s_%s", name, modf ? "modf" : "frexp");
    if (registered(E, fn)) return fn;
    const char *make = emit_tuple_make(E, t);
    const char *ft = emit_ctype(E, t->elems[0]);
    const char *f = strcmp(ft, "f32") == 0 ? "f" : "";
    Buf *b = &E->types;
    if (modf)
        buf_printf(b, "KILN_FN %s %s(%s x) {\n    %s ip;\n    %s fr = modf%s(x, &ip);\n"
                      "    return %s(fr, ip);\n}\n", name, fn, ft, ft, ft, f, make);
    else
        buf_printf(b, "KILN_FN %s %s(%s x) {\n    int e = 0;\n    if (!isfinite(x)) return %s(x, 0);\n"
                      "    %s m = frexp%s(x, &e);\n    return %s(m, (i64)e);\n}\n",
                   name, fn, ft, make, ft, f, make);
    return fn;
}

bool emit_tuple_homogeneous(Emit *E, const Type *t) {
    if (t->n == 0 || !ty_is_scalar(t->elems[0])) return false;
    const char *el = emit_ctype(E, t->elems[0]);
    for (int i = 1; i < t->n; i++)
        if (!ty_is_scalar(t->elems[i]) || strcmp(emit_ctype(E, t->elems[i]), el) != 0) return false;
    return true;
}

/* Declares that tuple type t (of one scalar type) is laid out as an array of
 * its items, so that a pointer can index it; the compiler checks it. */
void emit_tuple_is_array(Emit *E, const Type *t) {
    const char *name = emit_ctype(E, t);
    const char *key = arena_printf(&E->C->arena, "%s_is_an_array", name);
    if (registered(E, key)) return;
    buf_printf(&E->types, "typedef char %s[sizeof(%s) == %d * sizeof(%s) ? 1 : -1];\n", key, name,
               t->n, emit_ctype(E, t->elems[0]));
}

/* NAME_get(E_, t, i, line): item i of a tuple of one scalar type, i wrapped
 * as Python does; out of range it is an IndexError (always: a tuple is small
 * and the check is cheap; axis -1 says a tuple's, errors.c) and item 0 is read. */
const char *emit_tuple_get(Emit *E, const Type *t) {
    const char *name = emit_ctype(E, t);
    const char *fn = arena_printf(&E->C->arena, "%s_get", name);
    if (registered(E, fn)) return fn;
    const char *el = emit_ctype(E, t->elems[0]);
    Buf *b = &E->types;
    if (t->n > TUPLE_AS_ARRAY) {
        emit_tuple_is_array(E, t);
        buf_printf(b, "KILN_FN %s %s(struct kiln_err *E_, %s t, i64 i, int line) {\n"
                      "    return ((const %s *)&t)[kiln_chk(E_, i, %d, -1, line)];\n}\n",
                   el, fn, name, el, t->n);
        return fn;
    }
    buf_printf(b, "KILN_FN %s %s(struct kiln_err *E_, %s t, i64 i, int line) {\n", el, fn, name);
    buf_printf(b, "    switch (i < 0 ? i + %d : i) {\n    case 0: return t.f0;\n", t->n);
    for (int i = 1; i < t->n; i++) buf_printf(b, "    case %d: return t.f%d;\n", i, i);
    buf_printf(b, "    default: kiln_fail(E_, 1, line, i, -1, %d); return t.f0;\n    }\n}\n", t->n);
    return fn;
}

const char *emit_ctype(Emit *E, const Type *t) {
    switch ((TypeKind)t->kind) {
    case TY_BOOL:
    case TY_INT:
    case TY_FLOAT: return t->weak ? (t->kind == TY_INT ? "i64" : "f64") : emit_scalar_ctype(t);
    case TY_COMPLEX: E->uses_complex = true; return t->weak ? "c128" : emit_scalar_ctype(t);
    case TY_ARRAY: return array_ctype(E, t);
    case TY_TUPLE: return tuple_ctype(E, t);
    case TY_RECORD: return arena_printf(&E->C->arena, "%s *", emit_record_ctype(E, t));
    case TY_NONE: return "void";
    default: return "i64"; /* compile-time values never reach code */
    }
}

bool emit_same_ctype(Emit *E, const Type *a, const Type *b) {
    /* float16 and float32 share f32, but a float32 becomes a float16 by rounding */
    if (emit_narrow(b) && emit_narrow(b) != emit_narrow(a) && ty_is_scalar(a)) return false;
    return strcmp(emit_ctype(E, a), emit_ctype(E, b)) == 0;
}

/* The conversion of text (of scalar type from) to type to where either is
 * complex: between precisions, from a real (imaginary part 0), or to bool. */
static const char *complex_convert(Emit *E, const Type *from, const Type *to, const char *text) {
    Arena *A = &E->C->arena;
    const char *tn = emit_ctype(E, to), *fn = emit_ctype(E, from);
    if (strcmp(tn, fn) == 0) return text;
    if (to->kind == TY_BOOL) return arena_printf(A, "kiln_nz_%s(%s)", fn, text);
    if (from->kind == TY_COMPLEX) return arena_printf(A, "kiln_%s_%s(%s)", tn, fn, text);
    const char *part = strcmp(tn, "c64") == 0 ? "f32" : "f64";
    return arena_printf(A, "kiln_%s((%s)(%s), 0)", tn, part, text);
}

/* A converter between two tuple types of the same length. */
static const char *tuple_conv(Emit *E, const Type *from, const Type *to) {
    const char *fn = emit_ctype(E, from), *tn = emit_ctype(E, to);
    const char *name = arena_printf(&E->C->arena, "%s_from_%s", tn, fn);
    if (registered(E, name)) return name;
    Buf *b = &E->helpers;
    buf_printf(b, "KILN_FN %s %s(%s x) {\n    %s r;\n", tn, name, fn, tn);
    for (int i = 0; i < to->n; i++) {
        const Type *ft = from->elems[i], *tt = to->elems[i];
        if (tt->kind == TY_TUPLE && !emit_same_ctype(E, ft, tt))
            buf_printf(b, "    r.f%d = %s(x.f%d);\n", i, tuple_conv(E, ft, tt), i);
        else if (tt->kind == TY_COMPLEX || ft->kind == TY_COMPLEX)
            buf_printf(b, "    r.f%d = %s;\n", i,
                       complex_convert(E, ft, tt, arena_printf(&E->C->arena, "x.f%d", i)));
        else
            buf_printf(b, "    r.f%d = (%s)x.f%d;\n", i, emit_ctype(E, tt), i);
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

void emit_const(Emit *E, const Type *t, ConstVal v) {
    switch ((TypeKind)t->kind) {
    case TY_BOOL: PS(v.i ? "((kbool)1)" : "((kbool)0)"); return;
    case TY_INT: {
        const char *ct = emit_ctype(E, t);
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
    case TY_FLOAT:
        /* a float16 constant is its float16 value, exact in a f32 */
        if (emit_is_f16(t)) v.f = kiln_f16_to_f64(kiln_f16_from_f64(v.f));
        if (emit_narrow(t) == 'b') v.f = kiln_bf16_to_f64(kiln_bf16_from_f64(v.f));
        emit_float(E, v.f, emit_is_f32(t));
        return;
    case TY_COMPLEX: /* a zero (np.complex64()): complex values are never NF_CONST */
        P("kiln_%s(", emit_ctype(E, t));
        emit_float(E, v.f, t->dtype == KILN_COMPLEX64 && !t->weak);
        PS(", 0)");
        return;
    default: UNREACHABLE();
    }
}

void emit_convert(Emit *E, const Type *from, const Type *to, const char *text) {
    if (to->kind == TY_TUPLE && from->kind == TY_TUPLE && !emit_same_ctype(E, from, to)) {
        P("%s(%s)", tuple_conv(E, from, to), text);
        return;
    }
    if (emit_narrow(to) == 'b' && emit_narrow(from) != 'b' && ty_is_scalar(from)) {
        /* rounded once: integers exactly (rt_half.h), floats from their own width */
        E->half = true;
        bool wide = from->kind == TY_FLOAT && (from->weak || from->dtype == KILN_FLOAT64);
        if (from->kind == TY_INT || from->kind == TY_BOOL)
            P(ty_is_signed(from) || from->kind == TY_BOOL ? "kiln_bri((i64)(%s))"
                                                          : "kiln_bru((u64)(%s))", text);
        else
            P(wide ? "kiln_brd((f64)(%s))" : "kiln_br((f32)(%s))", text);
        return;
    }
    if (emit_is_f16(to) && !emit_is_f16(from) && ty_is_scalar(from)) {
        /* rounded once: from a float64 directly, from the rest through a float32,
         * which holds every value a float16 can (integers past 2^24 are inf either way) */
        E->half = true;
        if (from->kind == TY_INT && !from->weak) { /* one cvt.rn.f16.s8... on the GPU */
            P("kiln_hfrom_%s(%s)", emit_ctype(E, from), text);
            return;
        }
        bool wide = from->kind == TY_FLOAT && (from->weak || from->dtype == KILN_FLOAT64);
        P(wide ? "kiln_hrd((f64)(%s))" : "kiln_hr((f32)(%s))", text);
        return;
    }
    if (emit_same_ctype(E, from, to) || !ty_is_scalar(to)) {
        PS(text);
        return;
    }
    if (to->kind == TY_COMPLEX || from->kind == TY_COMPLEX) {
        PS(complex_convert(E, from, to, text));
        return;
    }
    if (to->kind == TY_BOOL) {
        P("((%s) != 0)", text);
        return;
    }
    if (!E->cuda && from->kind == TY_FLOAT && to->kind == TY_INT && !ty_is_signed(to)) {
        /* C leaves a negative float's unsigned value undefined, and gcc's and tier 0's
         * code differ: through int64 it wraps, as NumPy's astype does on the CPU */
        if (to->dtype == KILN_UINT64)
            P("kiln_f2u64((f64)(%s))", text);
        else
            P("((%s)(i64)(%s))", emit_ctype(E, to), text);
        return;
    }
    P("((%s)%s)", emit_ctype(E, to), text);
}

/* float16 and bfloat16 compute in float32 (rt_half.h): all take the f32 functions */
const char *emit_fsuffix(const Type *t) {
    return ((t->dtype == KILN_FLOAT32 || emit_narrow(t)) && !t->weak) ? "f" : "";
}
bool emit_is_f32(const Type *t) {
    return t->kind == TY_FLOAT && !t->weak && (t->dtype == KILN_FLOAT32 || emit_narrow(t));
}

void emit_index_of(Emit *E, const char *b, const Type *at, const char **ix,
                          const bool *nn, int line, Buf *out) {
    /* line: an error location from emit_loc() */
    const char *w[KILN_MAX_NDIM];
    for (int k = 0; k < at->ndim; k++) {
        if (at->ptr) /* no extent: C's pointer arithmetic, even for a negative index */
            w[k] = ix[k];
        else if (E->debug)
            w[k] = arena_printf(&E->C->arena, "kiln_chk(E_, %s, %s.shape[%d], %d, %d)", ix[k], b,
                                k, k, line);
        else if (nn[k])
            w[k] = ix[k];
        else
            w[k] = arena_printf(&E->C->arena, "kiln_wrap(%s, %s.shape[%d])", ix[k], b, k);
    }
    int nd = at->ndim;
    if (nd == 0) { /* a 0-d array: its one element */
        buf_puts(out, "0");
        return;
    }
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

const char *emit_sreg(int s) {
    static const char *const r[] = {"KILN_TID_X",  "KILN_TID_Y",  "KILN_TID_Z",  "KILN_BID_X",
                                    "KILN_BID_Y",  "KILN_BID_Z",  "KILN_BDIM_X", "KILN_BDIM_Y",
                                    "KILN_BDIM_Z", "KILN_GDIM_X", "KILN_GDIM_Y", "KILN_GDIM_Z"};
    return r[s];
}

/* Opens and closes an expression that runs statements: a GNU statement
 * expression in C, an immediately invoked lambda in CUDA C++ (NVRTC has no
 * statement expressions).  `value` is the expression's result. */
void emit_sx_open(Emit *E, const Type *t) {
    if (E->cuda) P("([&]() -> %s { ", emit_ctype(E, t));
    else PS("({ ");
}

void emit_sx_close(Emit *E, const char *value) {
    if (E->cuda) P("return %s; })()", value);
    else P("%s; })", value);
}

void emit_compare_pair(Emit *E, const char *a, const Type *at, const char *b, const Type *bt,
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
    if (o->kind == TY_COMPLEX) { /* == or != (sema): complex numbers have no order */
        P("(%skiln_eq_%s(", op == C_NE ? "!" : "", emit_ctype(E, o));
        emit_convert(E, at, o, a);
        PS(", ");
        emit_convert(E, bt, o, b);
        PS("))");
        return;
    }
    if (emit_is_f16(o)) { /* setp.lt.f16... on the GPU (rt_half.h) */
        static const char *const hf[] = {"kiln_hlt(", "kiln_hle(", "kiln_hgt(",
                                         "kiln_hge(", "kiln_heq(", "kiln_hne("};
        E->half = true;
        PS(hf[op]);
        emit_convert(E, at, o, a);
        PS(", ");
        emit_convert(E, bt, o, b);
        PS(")");
        return;
    }
    PS("(");
    emit_convert(E, at, o, a);
    PS(s[op]);
    emit_convert(E, bt, o, b);
    PS(")");
}

/* ---- frozen tuples ---------------------------------------------------------------
 * A global tuple's items are constants, written into the program once however
 * often the kernel reads it, so a large tuple costs code linear in its size:
 * a constant index reads the constant, a run-time index reads a static array
 * written once per program (kga<i>), and the tuple as a value (assigned,
 * unpacked, passed) is a local built once at the top of each function that uses
 * it (kgv<i>). */

/* Writes the tuple g as a constructor call of constants. */
void emit_global_make(Emit *E, const GVal *g) {
    P("%s(", emit_tuple_make(E, g->ty));
    for (int i = 0; i < g->ntuple; i++) {
        if (i) PS(", ");
        if (g->tuple[i].ty->kind == TY_TUPLE) emit_global_make(E, &g->tuple[i]);
        else if (g->tuple[i].ty->kind == TY_ARRAY) emit_global_view(E, &g->tuple[i]);
        else emit_const(E, g->tuple[i].ty, g->tuple[i].cv);
    }
    PS(")");
}

/* The name of the local holding tuple g in this function (declared by
 * emit_gvalue_decls once the body is written; tier 0's vector entry has its own). */
const char *emit_global_value(Emit *E, const GVal *g) {
    const char *key = arena_printf(&E->C->arena, "kgv:%d:%d:%p", E->f->id,
                                   E->lanes | (E->t0 ? 2 : 0), (const void *)g);
    const char *name = NULL;
    if (register_as(E, key, NULL, &name)) return name;
    name = arena_printf(&E->C->arena, "kgv%d", E->gvalues.n);
    E->named[name_slot(E, key)] = name;
    vec_push(&E->C->arena, &E->gvalues, (void *)g);
    return name;
}

void emit_gvalue_decls(Emit *E) {
    for (int i = 0; i < E->gvalues.n; i++) {
        const GVal *g = E->gvalues.v[i];
        emit_indent(E);
        if (g->ntuple > TUPLE_AS_ARRAY && emit_tuple_homogeneous(E, g->ty)) {
            /* the same bits as its static array (on the GPU, floats as bits too) */
            emit_tuple_is_array(E, g->ty);
            const char *arr = emit_global_array(E, g);
            P("%s kgv%d;\n", emit_ctype(E, g->ty), i);
            emit_indent(E);
            P("memcpy(&kgv%d, %s, sizeof kgv%d);\n", i, arr, i);
            continue;
        }
        P("const %s kgv%d = ", emit_ctype(E, g->ty), i);
        emit_global_make(E, g);
        PS(";\n");
    }
}

/* The name of the static array (written once per program) of the frozen
 * tuple g, whose items are of one scalar type.  On the GPU, floats are stored
 * as their bits: a __device__ array cannot be initialised with NaN or infinity
 * otherwise. */
const char *emit_global_array(Emit *E, const GVal *g) {
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
      bits ? (f32 ? "u32" : "u64") : emit_ctype(E, et), name, g->ntuple);
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

/* ---- frozen arrays ---------------------------------------------------------------
 * A global NumPy array is a static array of the program (kgc<i>, written once
 * whatever reads it), initialised with its elements' bits as unsigned words of
 * the element's size (8 bytes for complex128's halves): exact for every value,
 * NaN and infinity included, which a __device__ initialiser of floats cannot
 * spell.  Reads see it through a view of the element type, as shared memory is
 * seen through kiln_dsmem; nothing writes it (sema refuses).  On the GPU it is
 * __device__ data, or __constant__ when kiln.const.array_like took it. */
const char *emit_frozen_array(Emit *E, const GVal *g) {
    const char *key = arena_printf(&E->C->arena, "kgc:%p", (const void *)g);
    const char *name = NULL;
    if (register_as(E, key, NULL, &name)) return name;
    name = arena_printf(&E->C->arena, "kgc%d", E->ngarrays++);
    E->named[name_slot(E, key)] = name;
    size_t esize = (size_t)ty_elem_size(g->ty->elem);
    size_t count = 1;
    for (int i = 0; i < g->ty->ndim; i++) count *= (size_t)g->shape[i];
    /* the widest word that divides the element (a record's itemsize may be odd) */
    size_t word = esize % 8 == 0 ? 8 : esize % 4 == 0 ? 4 : esize % 2 == 0 ? 2 : 1;
    size_t nwords = count * esize / word;
    static const char *const wt[] = {NULL, "u8", "u16", NULL, "u32", NULL, NULL, NULL, "u64"};
    Buf *saved = E->o;
    E->o = &E->helpers;
    P("static %sconst %s %s[%zu] %s = {",
      !E->cuda ? "" : g->constmem ? "__constant__ " : "__device__ ", wt[word], name,
      nwords ? nwords : 1, E->cuda ? "__align__(16)" : "__attribute__((aligned(16)))");
    const unsigned char *p = g->data;
    for (size_t i = 0; i < nwords; i++) {
        uint64_t u = 0;
        memcpy(&u, p + i * word, word); /* little-endian hosts and devices alike */
        PS(i % 8 ? ", " : (i ? ",\n    " : "\n    "));
        P("0x%llxu", (unsigned long long)u);
    }
    if (!nwords) PS("0");
    PS("};\n");
    E->o = saved;
    return name;
}

void emit_global_view(Emit *E, const GVal *g) {
    const char *el = emit_elem_ctype(E, g->ty->elem);
    if (g->data)
        P("%s_local((%s *)%s", emit_ctype(E, g->ty), el, emit_frozen_array(E, g));
    else /* a device array, by address */
        P("%s_local((%s *)(unsigned long long)0x%llxull", emit_ctype(E, g->ty), el,
          (unsigned long long)g->address);
    for (int i = 0; i < g->ty->ndim; i++) P(", %lldLL", (long long)g->shape[i]);
    PS(")");
}
