/* types.h: the types of kernel values and NumPy 2 promotion.
 *
 * Scalars are NumPy's (bool, int8..uint64, float16..float64, complex64 and
 * complex128).  A scalar type can be *weak*: the type of a Python int, float
 * or complex (a literal, a frozen global, or a variable only ever assigned
 * such values).  Following NEP 50, a
 * weak operand takes the type of the typed operand it meets, so `x[i] * 2.0`
 * stays float32 for a float32 array; two weak operands stay weak, and a weak
 * value that reaches the generated code is int64, float64 or complex128.  A
 * complex value is never a compile-time constant (NF_CONST): ConstVal holds
 * one number.
 *
 * Arrays are dtype x ndim x layout (C, F or A).  Every array value in
 * generated code carries its data pointer, shape and element strides; the
 * layout only chooses the indexing formula (a C array's last index has stride
 * one, which the C compiler can vectorise on).
 *
 * A record (TY_RECORD) is an element of an array of a NumPy structured dtype: its
 * value is a reference (Numba's semantics: `r = a[i]; r.f = v` writes a[i]), in
 * generated code a pointer to the element; a field is a scalar or a C-contiguous
 * subarray at NumPy's byte offset (records.c).  Two records are one type only
 * when their whole layouts are equal.
 *
 * Besides values, sema types the compile-time things a kernel names: modules
 * and intrinsics (TY_NS), dtype objects (TY_DTYPE), kiln functions (TY_FUNC),
 * range objects, strings and kiln.cg's grid group (TY_GROUP, a value a variable or a
 * device function's argument may hold, of one byte that nothing reads).  TY_UNKNOWN is the bottom of inference;
 * TY_ERROR marks an expression already reported, to stop cascades.
 */
#ifndef KILN_TYPES_H
#define KILN_TYPES_H

#include "front/ast.h"

typedef enum TypeKind {
    TY_UNKNOWN,
    TY_ERROR,
    TY_NONE,
    TY_BOOL,
    TY_INT,
    TY_FLOAT,
    TY_COMPLEX, /* complex64, complex128: dtype */
    TY_ARRAY,
    TY_TUPLE,
    TY_NS,    /* a module or intrinsic: ns */
    TY_DTYPE, /* a scalar type object: dtype */
    TY_FUNC,  /* a kiln function: fn */
    TY_RANGE, /* the value of range(...) */
    TY_STR,
    TY_RECORD, /* a NumPy structured dtype's record: rec; a value is a reference to one */
    TY_GROUP  /* kiln.cg.this_grid()'s grid group: no run-time value of its own */
} TypeKind;

typedef struct FuncInfo FuncInfo;
typedef struct NsRef NsRef;

struct Type {
    uint8_t kind;      /* TypeKind */
    uint8_t dtype;     /* scalars and TY_DTYPE: kiln_dtype */
    bool weak;         /* a Python scalar (see above) */
    bool lit;          /* TY_INT: a device function's argument known when compiling (litv),
                        * so the callee may use it as an array's shape; TY_BOOL: one the
                        * callee tests, whose dead branch is then not typed (sema.c);
                        * TY_STR: a string constant, str (litv bytes; strings.c) */
    int64_t litv;
    const char *str;
    /* TY_ARRAY */
    const Type *elem;  /* scalar element type */
    int ndim;
    char layout;       /* 'C', 'F', 'A' */
    const kiln_field *chars; /* a string field's code units (src/sema/chars.h) */
    bool ptr;          /* a raw pointer (CPointer): 1-d, 'C', no extent: only x[i] and
                        * atomics take it (sema refuses the rest), indices unwrapped */
    /* TY_TUPLE */
    int n;
    const Type **elems;
    /* A tuple of a named class: a namedtuple (tname its class's name) or a CUDA vector
     * type (vec: float32x4..., n lanes of one scalar, fields x y z w; tname "float32x4").
     * fields: the n field names, read as t.name; NULL for a plain tuple. */
    const char *tname;
    const char *const *fields;
    bool vec;
    /* TY_NS */
    const NsRef *ns;
    /* TY_FUNC */
    FuncInfo *fn;
    /* TY_RECORD: the layout (kiln_options.records); recid: its index there */
    const kiln_record *rec;
    int recid;
};

extern const Type ty_unknown, ty_error, ty_none, ty_range, ty_str, ty_group;
extern const Type ty_weak_int, ty_weak_float, ty_weak_complex;

const Type *ty_scalar(kiln_dtype d);
const Type *ty_array(Compiler *C, const Type *elem, int ndim, char layout);
/* A raw pointer to elem (Numba's CPointer): a 1-d 'C' array type with ptr set. */
const Type *ty_ptr(Compiler *C, const Type *elem);
static inline bool ty_is_ptr(const Type *t) { return t->kind == TY_ARRAY && t->ptr; }
const Type *ty_tuple(Compiler *C, int n, const Type **elems);
/* Whether a value of type t is known when compiling and has no run-time value: a dtype,
 * a kiln function or an intrinsic (cuda.atomic.add), a module, None (Numba's Omitted:
 * `out is None` is then a constant, its dead branch not typed) or a string constant.  A
 * device function without a signature takes one as Numba does, as part of the
 * specialisation's types (spec.c), and the emitters pass nothing for it. */
bool ty_compile_time(const Type *t);
/* A string constant's type: its text (n bytes of UTF-8) is part of it (strings.c). */
const Type *ty_str_lit(Compiler *C, const char *s, size_t n);
/* The CUDA vector type of n (1-4) lanes of scalar dtype d (kiln.float32x4...). */
const Type *ty_vector(Compiler *C, kiln_dtype d, int n);
static inline bool ty_is_vector(const Type *t) { return t->kind == TY_TUPLE && t->vec; }
/* A named tuple type: elems named fields, of the class tname. */
const Type *ty_named_tuple(Compiler *C, int n, const Type **elems, const char *tname,
                           const char *const *fields);
/* The position of field name in named tuple t, or -1. */
int ty_tuple_field(const Type *t, const char *name);
const Type *ty_dtype(Compiler *C, kiln_dtype d);
const Type *ty_from_argtype(Compiler *C, const kiln_argtype *a);
const Type *ty_record(Compiler *C, const kiln_record *rec, int recid);
/* Whether two record layouts are the same (itemsize, and each field's name, dtype, shape
 * and offset). */
bool ty_same_record(const kiln_record *a, const kiln_record *b);
/* The field of a record named name, or NULL. */
/* The bytes of one element of an array of elem: a scalar's size, a record's itemsize. */
int64_t ty_elem_size(const Type *elem);
const kiln_field *ty_field(const Type *rec, const char *name);
/* The same scalar without the weak flag (weak int -> int64, weak float -> float64). */
const Type *ty_strong(const Type *t);

bool ty_equal(const Type *a, const Type *b);
bool ty_is_scalar(const Type *t); /* bool, int, float or complex */
bool ty_is_real(const Type *t);   /* bool, int or float */
bool ty_is_complex(const Type *t);
/* The complex type whose parts hold t (float32 -> complex64, int32 -> complex128). */
const Type *ty_complex_of(const Type *t);
/* The type of a complex type's parts (complex64 -> float32; weak -> weak float). */
const Type *ty_complex_part(const Type *t);
bool ty_is_int(const Type *t);    /* int (not bool) */
bool ty_is_signed(const Type *t);
bool ty_is_float(const Type *t);
bool ty_is_numeric(const Type *t); /* bool, int, float, complex */
int ty_bits(const Type *t);
/* Names for messages: "float32", "Python int", "array(float32, 2d, C)". */
const char *ty_name(Compiler *C, const Type *t);

/* NumPy 2 (NEP 50) promotion of two scalar types; both must be scalars. */
const Type *ty_promote(const Type *a, const Type *b);
/* The type of a variable assigned values of both types, or NULL if they do
 * not unify (array with scalar, tuples of different lengths...). */
const Type *ty_unify(Compiler *C, const Type *a, const Type *b);
/* Whether a weak int constant v fits the typed integer type t. */
bool ty_int_fits(const Type *t, int64_t v, bool big);

kiln_dtype ty_int_dtype(bool is_signed, int bits);

#endif
