/* types.c: type construction, names and NumPy 2 promotion (see types.h). */
#include <stdio.h>
#include <string.h>

#include "types.h"

const Type ty_unknown = {.kind = TY_UNKNOWN};
const Type ty_error = {.kind = TY_ERROR};
const Type ty_none = {.kind = TY_NONE};
const Type ty_range = {.kind = TY_RANGE};
const Type ty_str = {.kind = TY_STR};
const Type ty_group = {.kind = TY_GROUP};
const Type ty_weak_int = {.kind = TY_INT, .dtype = KILN_INT64, .weak = true};
const Type ty_weak_float = {.kind = TY_FLOAT, .dtype = KILN_FLOAT64, .weak = true};
const Type ty_weak_complex = {.kind = TY_COMPLEX, .dtype = KILN_COMPLEX128, .weak = true};

static const Type scalar_types[KILN_NDTYPES] = {
    [KILN_BOOL] = {.kind = TY_BOOL, .dtype = KILN_BOOL},
    [KILN_INT8] = {.kind = TY_INT, .dtype = KILN_INT8},
    [KILN_INT16] = {.kind = TY_INT, .dtype = KILN_INT16},
    [KILN_INT32] = {.kind = TY_INT, .dtype = KILN_INT32},
    [KILN_INT64] = {.kind = TY_INT, .dtype = KILN_INT64},
    [KILN_UINT8] = {.kind = TY_INT, .dtype = KILN_UINT8},
    [KILN_UINT16] = {.kind = TY_INT, .dtype = KILN_UINT16},
    [KILN_UINT32] = {.kind = TY_INT, .dtype = KILN_UINT32},
    [KILN_UINT64] = {.kind = TY_INT, .dtype = KILN_UINT64},
    [KILN_FLOAT16] = {.kind = TY_FLOAT, .dtype = KILN_FLOAT16},
    [KILN_FLOAT32] = {.kind = TY_FLOAT, .dtype = KILN_FLOAT32},
    [KILN_FLOAT64] = {.kind = TY_FLOAT, .dtype = KILN_FLOAT64},
    [KILN_COMPLEX64] = {.kind = TY_COMPLEX, .dtype = KILN_COMPLEX64},
    [KILN_COMPLEX128] = {.kind = TY_COMPLEX, .dtype = KILN_COMPLEX128},
    [KILN_BFLOAT16] = {.kind = TY_FLOAT, .dtype = KILN_BFLOAT16},
};

static const char *const dtype_names[KILN_NDTYPES] = {
    "bool",   "int8",   "int16",  "int32",   "int64",   "uint8",
    "uint16", "uint32", "uint64", "float16", "float32", "float64", "complex64", "complex128",
    "bfloat16"};
static const int dtype_sizes[KILN_NDTYPES] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 8, 16, 2};

const char *kiln_dtype_name(kiln_dtype t) {
    return (unsigned)t < KILN_NDTYPES ? dtype_names[t] : "void";
}

int kiln_dtype_size(kiln_dtype t) { return (unsigned)t < KILN_NDTYPES ? dtype_sizes[t] : 0; }

void kiln_argtype_format(const kiln_argtype *t, char *buf, size_t size) {
    char rec[16];
    const char *dn = kiln_dtype_name((kiln_dtype)t->dtype);
    if (t->dtype >= KILN_RECORD0) { /* kiln.from_dtype's text: recordN */
        snprintf(rec, sizeof rec, "record%d", t->dtype - KILN_RECORD0);
        dn = rec;
    }
    if (t->is_array && t->ndim == 0 && t->dtype < KILN_RECORD0) { /* a 0-d array */
        snprintf(buf, size, "array(%s, 0d, C)", dn);
        return;
    }
    if (!t->is_array || t->ndim == 0) {
        snprintf(buf, size, "%s%s", dn, t->layout == KILN_LAYOUT_PTR ? "*" : "");
        return;
    }
    size_t n = (size_t)snprintf(buf, size, "%s[", dn);
    for (int i = 0; i < t->ndim && n < size; i++) {
        bool contig = (t->layout == 'C' && i == t->ndim - 1) || (t->layout == 'F' && i == 0);
        n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", contig ? "::1" : ":");
    }
    if (n < size) snprintf(buf + n, size - n, "]");
}

const Type *ty_scalar(kiln_dtype d) {
    ASSERT((unsigned)d < KILN_NDTYPES);
    return &scalar_types[d];
}

const Type *ty_array(Compiler *C, const Type *elem, int ndim, char layout) {
    Type *t = arena_alloc(&C->arena, sizeof *t);
    t->kind = TY_ARRAY;
    t->elem = ty_strong(elem);
    t->ndim = ndim;
    /* One-dimensional contiguous arrays are both C and F: call them C. */
    t->layout = (ndim == 1 && layout == 'F') ? 'C' : layout;
    return t;
}

const Type *ty_ptr(Compiler *C, const Type *elem) {
    Type *t = (Type *)ty_array(C, elem, 1, 'C');
    t->ptr = true;
    return t;
}

bool ty_compile_time(const Type *t) {
    return t->kind == TY_DTYPE || t->kind == TY_FUNC || t->kind == TY_NS || t->kind == TY_NONE ||
           (t->kind == TY_STR && t->lit);
}

const Type *ty_str_lit(Compiler *C, const char *s, size_t n) {
    Type *t = arena_alloc(&C->arena, sizeof *t);
    t->kind = TY_STR;
    t->lit = true;
    t->litv = (int64_t)n;
    t->str = arena_strndup(&C->arena, s, n);
    return t;
}

const Type *ty_tuple(Compiler *C, int n, const Type **elems) {
    Type *t = arena_alloc(&C->arena, sizeof *t);
    t->kind = TY_TUPLE;
    t->n = n;
    t->elems = arena_alloc(&C->arena, sizeof(Type *) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) t->elems[i] = elems[i];
    return t;
}

const Type *ty_named_tuple(Compiler *C, int n, const Type **elems, const char *tname,
                           const char *const *fields) {
    Type *t = (Type *)ty_tuple(C, n, elems);
    t->tname = tname;
    t->fields = fields;
    return t;
}

const Type *ty_vector(Compiler *C, kiln_dtype d, int n) {
    static const char *const lanes[] = {"x", "y", "z", "w"};
    const Type *el[4];
    for (int i = 0; i < n; i++) el[i] = ty_scalar(d);
    Type *t = (Type *)ty_named_tuple(C, n, el, arena_printf(&C->arena, "%sx%d", kiln_dtype_name(d), n),
                                     lanes);
    t->vec = true;
    return t;
}

int ty_tuple_field(const Type *t, const char *name) {
    if (t->kind != TY_TUPLE || !t->fields) return -1;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->fields[i], name) == 0) return i;
    return -1;
}

static bool same_tname(const Type *a, const Type *b) {
    if (a->vec != b->vec) return false;
    if (!a->tname || !b->tname) return a->tname == b->tname;
    if (strcmp(a->tname, b->tname) != 0 || a->n != b->n) return false;
    for (int i = 0; i < a->n; i++) /* two classes of one name */
        if (strcmp(a->fields[i], b->fields[i]) != 0) return false;
    return true;
}

const Type *ty_dtype(Compiler *C, kiln_dtype d) {
    Type *t = arena_alloc(&C->arena, sizeof *t);
    t->kind = TY_DTYPE;
    t->dtype = (uint8_t)d;
    return t;
}

const Type *ty_record(Compiler *C, const kiln_record *rec, int recid) {
    Type *t = arena_alloc(&C->arena, sizeof *t);
    t->kind = TY_RECORD;
    t->rec = rec;
    t->recid = recid;
    return t;
}

bool ty_same_record(const kiln_record *a, const kiln_record *b) {
    if (a == b) return true;
    if (a->itemsize != b->itemsize || a->nfields != b->nfields) return false;
    for (int i = 0; i < a->nfields; i++) {
        const kiln_field *x = &a->fields[i], *y = &b->fields[i];
        if (strcmp(x->name, y->name) != 0 || x->dtype != y->dtype || x->ndim != y->ndim ||
            x->offset != y->offset)
            return false;
        for (int k = 0; k < x->ndim; k++)
            if (x->shape[k] != y->shape[k]) return false;
    }
    return true;
}

int64_t ty_elem_size(const Type *elem) {
    if (elem->kind == TY_RECORD) return elem->rec->itemsize;
    return (int64_t)kiln_dtype_size((kiln_dtype)elem->dtype);
}

const kiln_field *ty_field(const Type *rec, const char *name) {
    for (int i = 0; i < rec->rec->nfields; i++)
        if (strcmp(rec->rec->fields[i].name, name) == 0) return &rec->rec->fields[i];
    return NULL;
}

const Type *ty_from_argtype(Compiler *C, const kiln_argtype *a) {
    if (a->dtype >= KILN_RECORD0) { /* kiln.c checked the index */
        int k = a->dtype - KILN_RECORD0;
        const Type *r = ty_record(C, &C->opts.records[k], k);
        return a->ndim ? ty_array(C, r, a->ndim, (char)a->layout) : r;
    }
    if (a->is_array) return ty_array(C, ty_scalar((kiln_dtype)a->dtype), a->ndim, (char)a->layout);
    if (a->layout == KILN_LAYOUT_PTR) return ty_ptr(C, ty_scalar((kiln_dtype)a->dtype));
    return ty_scalar((kiln_dtype)a->dtype);
}

const Type *ty_strong(const Type *t) {
    if (t->weak) return ty_scalar((kiln_dtype)t->dtype);
    return t;
}

bool ty_is_scalar(const Type *t) { return ty_is_real(t) || t->kind == TY_COMPLEX; }
bool ty_is_real(const Type *t) {
    return t->kind == TY_BOOL || t->kind == TY_INT || t->kind == TY_FLOAT;
}
bool ty_is_complex(const Type *t) { return t->kind == TY_COMPLEX; }
bool ty_is_numeric(const Type *t) { return ty_is_scalar(t); }
bool ty_is_int(const Type *t) { return t->kind == TY_INT; }
bool ty_is_float(const Type *t) { return t->kind == TY_FLOAT; }
bool ty_is_signed(const Type *t) {
    return t->kind == TY_FLOAT || (t->kind == TY_INT && t->dtype <= KILN_INT64);
}
int ty_bits(const Type *t) { return ty_is_scalar(t) ? dtype_sizes[t->dtype] * 8 : 0; }

kiln_dtype ty_int_dtype(bool is_signed, int bits) {
    switch (bits) {
    case 8: return is_signed ? KILN_INT8 : KILN_UINT8;
    case 16: return is_signed ? KILN_INT16 : KILN_UINT16;
    case 32: return is_signed ? KILN_INT32 : KILN_UINT32;
    default: return is_signed ? KILN_INT64 : KILN_UINT64;
    }
}

static kiln_dtype float_dtype(int bits) {
    return bits <= 16 ? KILN_FLOAT16 : bits <= 32 ? KILN_FLOAT32 : KILN_FLOAT64;
}

bool ty_equal(const Type *a, const Type *b) {
    if (a == b) return true;
    if (a->kind != b->kind) return false;
    switch ((TypeKind)a->kind) {
    case TY_INT:
        return a->dtype == b->dtype && a->weak == b->weak && a->lit == b->lit &&
               (!a->lit || a->litv == b->litv);
    case TY_BOOL: /* a literal argument's value is part of its type (sema.c literal_arg) */
        return a->lit == b->lit && (!a->lit || a->litv == b->litv);
    case TY_FLOAT:
    case TY_COMPLEX: return a->dtype == b->dtype && a->weak == b->weak;
    case TY_DTYPE: return a->dtype == b->dtype && (!a->rec || ty_same_record(a->rec, b->rec));
    case TY_ARRAY:
        return a->ndim == b->ndim && a->layout == b->layout && a->ptr == b->ptr &&
               ty_equal(a->elem, b->elem);
    case TY_TUPLE:
        if (a->n != b->n || !same_tname(a, b)) return false;
        for (int i = 0; i < a->n; i++)
            if (!ty_equal(a->elems[i], b->elems[i])) return false;
        return true;
    case TY_NS: return a->ns == b->ns;
    case TY_FUNC: return a->fn == b->fn;
    case TY_RECORD: return ty_same_record(a->rec, b->rec);
    case TY_STR: /* a constant's text is part of its type */
        return a->lit == b->lit &&
               (!a->lit || (a->litv == b->litv && memcmp(a->str, b->str, (size_t)a->litv) == 0));
    default: return true;
    }
}

/* Whether a string constant's text can stand in a message as it is. */
static bool printable_ascii(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] < 32 || s[i] > 126 || s[i] == '\'') return false;
    return true;
}

const char *ty_name(Compiler *C, const Type *t) {
    switch ((TypeKind)t->kind) {
    case TY_UNKNOWN: return "unknown";
    case TY_ERROR: return "<error>";
    case TY_NONE: return "None";
    case TY_BOOL:
    case TY_INT:
    case TY_FLOAT:
    case TY_COMPLEX:
        if (t->weak)
            return t->kind == TY_INT ? "Python int" : t->kind == TY_FLOAT ? "Python float"
                                                                          : "Python complex";
        return dtype_names[t->dtype];
    case TY_ARRAY:
        if (t->ptr) return arena_printf(&C->arena, "CPointer(%s)", dtype_names[t->elem->dtype]);
        return arena_printf(&C->arena, "array(%s, %dd, %c)",
                            t->elem->kind == TY_RECORD ? ty_name(C, t->elem)
                                                       : dtype_names[t->elem->dtype],
                            t->ndim, t->layout);
    case TY_RECORD: {
        Buf b;
        buf_init_arena(&b, &C->arena);
        buf_puts(&b, "Record(");
        for (int i = 0; i < t->rec->nfields; i++) {
            const kiln_field *f = &t->rec->fields[i];
            buf_printf(&b, "%s%s: %s", i ? ", " : "", f->name, dtype_names[f->dtype]);
            for (int k = 0; k < f->ndim; k++)
                buf_printf(&b, "%s%lld%s", k ? ", " : "[", (long long)f->shape[k],
                           k == f->ndim - 1 ? "]" : "");
        }
        buf_printf(&b, "; %lld bytes)", (long long)t->rec->itemsize);
        return b.p;
    }
    case TY_TUPLE: {
        if (t->vec) return t->tname;
        Buf b;
        buf_init_arena(&b, &C->arena);
        buf_puts(&b, t->tname ? t->tname : "tuple");
        buf_puts(&b, "(");
        for (int i = 0; i < t->n; i++) {
            if (i) buf_puts(&b, ", ");
            buf_puts(&b, ty_name(C, t->elems[i]));
        }
        buf_puts(&b, ")");
        return b.p;
    }
    case TY_NS: return "module or intrinsic";
    case TY_DTYPE:
        if (t->rec) { /* a record type: named as its records are */
            Type r = {.kind = TY_RECORD, .rec = t->rec, .recid = t->recid};
            return arena_printf(&C->arena, "dtype %s", ty_name(C, &r));
        }
        return arena_printf(&C->arena, "dtype %s", dtype_names[t->dtype]);
    case TY_FUNC: return "function";
    case TY_RANGE: return "range";
    case TY_STR:
        if (t->lit && t->litv <= 40 && printable_ascii(t->str, (size_t)t->litv))
            return arena_printf(&C->arena, "str '%.*s'", (int)t->litv, t->str);
        return "str";
    case TY_GROUP: return "grid group";
    }
    return "?";
}

/* Bits a float needs to hold every value of an integer type exactly. */
static int float_bits_for_int(const Type *i) {
    int b = ty_bits(i);
    return b <= 8 ? 16 : b <= 16 ? 32 : 64;
}

/* Bits each part of a complex result needs to hold a value of scalar type t. */
static int part_bits(const Type *t) {
    if (t->kind == TY_BOOL) return 16;
    if (t->kind == TY_COMPLEX) return ty_bits(t) / 2;
    if (t->kind == TY_FLOAT) return ty_bits(t);
    return float_bits_for_int(t);
}

static const Type *complex_of_bits(int bits) {
    return ty_scalar(bits <= 32 ? KILN_COMPLEX64 : KILN_COMPLEX128);
}

const Type *ty_complex_of(const Type *t) {
    if (t->weak) return &ty_weak_complex;
    return complex_of_bits(part_bits(t));
}

const Type *ty_complex_part(const Type *t) {
    if (t->weak) return &ty_weak_float;
    return ty_scalar(t->dtype == KILN_COMPLEX64 ? KILN_FLOAT32 : KILN_FLOAT64);
}

static const Type *promote_typed(const Type *a, const Type *b) {
    if (a->dtype == b->dtype) return ty_scalar((kiln_dtype)a->dtype);
    /* NumPy: complex64 with int16 or float32 stays complex64, with int32 or
     * float64 it is complex128 */
    if (a->kind == TY_COMPLEX || b->kind == TY_COMPLEX)
        return complex_of_bits(MAX(part_bits(a), part_bits(b)));
    if (a->kind == TY_BOOL) return ty_scalar((kiln_dtype)b->dtype);
    if (b->kind == TY_BOOL) return ty_scalar((kiln_dtype)a->dtype);
    /* bfloat16 (ml_dtypes' rules): with float16 float32, with a wider float that
     * float, with an integer of 8 bits itself, else what float16 would give */
    if (a->kind == TY_FLOAT && b->kind == TY_FLOAT)
        return ty_scalar(MAX(ty_bits(a), ty_bits(b)) > 16 ? float_dtype(MAX(ty_bits(a), ty_bits(b)))
                         : KILN_FLOAT32);
    if (a->kind == TY_FLOAT || b->kind == TY_FLOAT) {
        const Type *f = a->kind == TY_FLOAT ? a : b;
        const Type *i = a->kind == TY_FLOAT ? b : a;
        int bits = MAX(ty_bits(f), float_bits_for_int(i));
        if (f->dtype == KILN_BFLOAT16 && bits <= 16) return f;
        return ty_scalar(float_dtype(bits));
    }
    /* two integers */
    bool sa = ty_is_signed(a), sb = ty_is_signed(b);
    if (sa == sb) return ty_scalar(ty_int_dtype(sa, MAX(ty_bits(a), ty_bits(b))));
    const Type *s = sa ? a : b;
    const Type *u = sa ? b : a;
    if (ty_bits(s) > ty_bits(u)) return s;
    if (ty_bits(u) < 64) return ty_scalar(ty_int_dtype(true, ty_bits(u) * 2));
    return ty_scalar(KILN_FLOAT64); /* uint64 with a signed integer, as NumPy does */
}

const Type *ty_promote(const Type *a, const Type *b) {
    ASSERT(ty_is_scalar(a) && ty_is_scalar(b));
    if (a->weak && b->weak) {
        if (a->kind == TY_COMPLEX || b->kind == TY_COMPLEX) return &ty_weak_complex;
        if (a->kind == TY_FLOAT || b->kind == TY_FLOAT) return &ty_weak_float;
        return &ty_weak_int;
    }
    if (a->weak || b->weak) {
        const Type *w = a->weak ? a : b;
        const Type *t = a->weak ? b : a;
        if (w->kind == TY_INT) return t->kind == TY_BOOL ? ty_scalar(KILN_INT64) : t;
        if (w->kind == TY_FLOAT)
            return t->kind == TY_FLOAT || t->kind == TY_COMPLEX ? t : ty_scalar(KILN_FLOAT64);
        /* weak complex: float32 (and float16) give complex64, as in NumPy 2 */
        if (t->kind == TY_COMPLEX) return t;
        return t->kind == TY_FLOAT && ty_bits(t) <= 32 ? ty_scalar(KILN_COMPLEX64)
                                                       : ty_scalar(KILN_COMPLEX128);
    }
    return promote_typed(a, b);
}

const Type *ty_unify(Compiler *C, const Type *a, const Type *b) {
    if (a->kind == TY_UNKNOWN) return b;
    if (b->kind == TY_UNKNOWN) return a;
    if (a->kind == TY_ERROR || b->kind == TY_ERROR) return &ty_error;
    if (ty_equal(a, b)) return a;
    if (ty_is_scalar(a) && ty_is_scalar(b)) return ty_promote(a, b);
    if (a->kind == TY_ARRAY && b->kind == TY_ARRAY) {
        if (a->ndim != b->ndim || a->elem->dtype != b->elem->dtype || a->ptr || b->ptr ||
            a->elem->kind != b->elem->kind ||
            (a->elem->kind == TY_RECORD && !ty_equal(a->elem, b->elem)))
            return NULL; /* equal pointers returned above; a pointer is no array */
        return ty_array(C, a->elem, a->ndim, a->layout == b->layout ? a->layout : 'A');
    }
    if (a->kind == TY_TUPLE && b->kind == TY_TUPLE) {
        if (a->n != b->n || !same_tname(a, b)) return NULL;
        const Type **el = arena_alloc(&C->arena, sizeof(Type *) * (size_t)(a->n ? a->n : 1));
        for (int i = 0; i < a->n; i++) {
            el[i] = ty_unify(C, a->elems[i], b->elems[i]);
            if (!el[i]) return NULL;
        }
        if (a->tname) { /* a namedtuple's fields of unified types (a vector's are equal) */
            Type *t = (Type *)ty_named_tuple(C, a->n, el, a->tname, a->fields);
            t->vec = a->vec;
            return t;
        }
        return ty_tuple(C, a->n, el);
    }
    return NULL;
}

bool ty_int_fits(const Type *t, int64_t v, bool big) {
    if (t->kind == TY_BOOL) return true;
    if (t->kind != TY_INT || t->weak) return true;
    int bits = ty_bits(t);
    if (big) return t->dtype == KILN_UINT64;
    if (ty_is_signed(t)) {
        if (bits == 64) return true;
        int64_t lo = -((int64_t)1 << (bits - 1)), hi = ((int64_t)1 << (bits - 1)) - 1;
        return v >= lo && v <= hi;
    }
    if (v < 0) return false;
    if (bits == 64) return true;
    return v <= (int64_t)((UINT64_C(1) << bits) - 1);
}
