/* sema_call.c: types of calls of intrinsics (sema_expr.c types the other expressions).
 *
 * kiln's, math's, NumPy's and Python's built-in functions a kernel calls are
 * intrinsics (intrinsics.c's table): their arguments are bound to parameters
 * by name (sema_bind), typed, checked, and the call gets its result type and
 * the type its operands are converted to (Node.opty).  Shared and local array
 * storage, atomics, warp operations, grid groups, a.reshape(), x.bit_count()
 * and dtype casts (float32(x)) are here; the complex functions are in
 * sema_complex.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sema_int.h"

/* ---- calls of intrinsics ----------------------------------------------------------------- */

/* Binds a call's arguments to up to max parameters (names from `params`,
 * comma separated).  Missing optional ones stay NULL. */
bool sema_bind(Sema *S, Node *n, const Intrinsic *in, int min, int max, Node **out) {
    Compiler *C = S->C;
    NodeList *a = &n->call.args;
    const char *fname = in->name;
    for (int i = 0; i < max; i++) out[i] = NULL;
    if (a->n > max) {
        error_at(C, n->sp, NULL, "%s() takes at most %d argument%s (%d given)", fname, max,
                 max == 1 ? "" : "s", a->n);
        return false;
    }
    for (int i = 0; i < a->n; i++) out[i] = a->v[i];
    for (int k = 0; k < n->call.kwvals.n; k++) {
        const char *kw = n->call.kwnames[k];
        int idx = -1, pos = 0;
        if (in->params) {
            const char *p = in->params;
            while (*p) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                if (strlen(kw) == len && memcmp(kw, p, len) == 0) idx = pos;
                pos++;
                if (!e) break;
                p = e + 1;
            }
        }
        if (idx < 0 || idx >= max) {
            error_at(C, n->call.kwvals.v[k]->sp, NULL,
                     "%s() got an unexpected keyword argument '%s'", fname, kw);
            return false;
        }
        if (out[idx]) {
            error_at(C, n->call.kwvals.v[k]->sp, NULL,
                     "%s() got multiple values for argument '%s'", fname, kw);
            return false;
        }
        out[idx] = n->call.kwvals.v[k];
    }
    for (int i = 0; i < min; i++)
        if (!out[i]) {
            error_at(C, n->sp, NULL, "%s() takes %s %d argument%s", fname,
                     min == max ? "exactly" : "at least", min, min == 1 ? "" : "s");
            return false;
        }
    n->call.bound.v = arena_alloc(&C->arena, sizeof(Node *) * (size_t)(max + 1));
    n->call.bound.n = max;
    for (int i = 0; i < max; i++) n->call.bound.v[i] = out[i];
    return true;
}

/* Types the arguments; returns false if one is an error or not a scalar. */
bool sema_scalar_args(Sema *S, Node **a, int n, const Type **t, bool *unknown) {
    bool ok = true;
    for (int i = 0; i < n; i++) {
        if (!a[i]) {
            t[i] = NULL;
            continue;
        }
        t[i] = sema_expr(S, a[i]);
        if (IS_ERR(t[i])) ok = false;
        else if (IS_UNKNOWN(t[i])) *unknown = true;
        else if (!sema_check_scalar_operand(S, a[i], t[i], "a function argument")) ok = false;
    }
    return ok;
}

/* Python's float() of the strings "nan", "inf", "infinity" (any case, a sign, spaces
 * around): whether s is one, and its value. */
static bool float_special(const char *s, double *v) {
    if (!s) return false;
    while (*s == ' ' || *s == '\t' || *s == '\n') s++;
    double sign = *s == '-' ? -1.0 : 1.0;
    if (*s == '-' || *s == '+') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n')) n--;
    char w[9] = {0};
    if (n == 0 || n >= sizeof w) return false;
    for (size_t i = 0; i < n; i++) w[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
    if (strcmp(w, "nan") == 0) *v = sign * (double)NAN;
    else if (strcmp(w, "inf") == 0 || strcmp(w, "infinity") == 0) *v = sign * (double)INFINITY;
    else return false;
    return true;
}

/* Float type of a math function's result for an argument of type t. */
static const Type *float_of(const Type *t) {
    if (t->kind == TY_FLOAT) return t->weak ? &ty_weak_float : t;
    return t->weak ? &ty_weak_float : ty_scalar(KILN_FLOAT64);
}

/* A constant integer, or a local assigned one once (`N = 100`, Numba folds it too). */
static bool shape_int(const Node *n, int64_t *v) {
    if (sema_const_int(n, v)) return true;
    if (n->kind == E_NAME && n->sym && n->sym->has_cint && n->sym->nassign == 1) {
        *v = n->sym->cint;
        return true;
    }
    /* a device function's parameter given a constant by its caller, never reassigned */
    if (n->kind == E_NAME && n->sym && n->sym->param >= 0 && !n->sym->is_local &&
        n->sym->ty->kind == TY_INT && n->sym->ty->lit) {
        *v = n->sym->ty->litv;
        return true;
    }
    return false;
}

int sema_shape(const Node *shape, int64_t *dims, int max) {
    int64_t v;
    if (shape_int(shape, &v)) {
        dims[0] = v;
        return 1;
    }
    if (shape->kind == E_TUPLE) {
        if (shape->tuple.n > max || shape->tuple.n == 0) return -1;
        for (int i = 0; i < shape->tuple.n; i++)
            if (!shape_int(shape->tuple.v[i], &dims[i])) return -1;
        return shape->tuple.n;
    }
    if (shape->kind == E_NAME && shape->sym && shape->sym->param >= 0 && !shape->sym->is_local &&
        shape->sym->ty->kind == TY_TUPLE) {
        /* a device function's parameter given a tuple of constants (literal_arg) */
        const Type *t = shape->sym->ty;
        if (t->n > max || t->n == 0) return -1;
        for (int i = 0; i < t->n; i++) {
            if (t->elems[i]->kind != TY_INT || !t->elems[i]->lit) return -1;
            dims[i] = t->elems[i]->litv;
        }
        return t->n;
    }
    if (shape->gv && shape->gv->kind == KILN_VAL_TUPLE) {
        const GVal *g = shape->gv;
        if (g->ntuple > max || g->ntuple == 0) return -1;
        for (int i = 0; i < g->ntuple; i++) {
            if (g->tuple[i].ty->kind != TY_INT) return -1;
            dims[i] = g->tuple[i].cv.i;
        }
        return g->ntuple;
    }
    return -1;
}

/* The text between a simple string literal's quotes, or NULL. */
const char *sema_string_text(Sema *S, const Node *n) {
    const char *s = n->sp.file->text + n->sp.off;
    size_t len = n->sp.len;
    while (len && (*s == 'b' || *s == 'u' || *s == 'r')) s++, len--;
    if (len < 2) return NULL;
    char q = s[0];
    s++;
    len -= 2;
    if (s[len] != q) return NULL;
    return arena_strndup(&S->C->arena, s, len);
}

static int dtype_from_string(Sema *S, Node *n) {
    const char *name = sema_string_text(S, n);
    if (!name) return -1;
    for (int d = 0; d < KILN_NDTYPES; d++)
        if (strcmp(kiln_dtype_name((kiln_dtype)d), name) == 0) return d;
    /* NumPy's codes and Python's names for the same dtypes */
    static const struct { const char *s; int d; } alias[] = {
        {"b1", KILN_BOOL}, {"bool_", KILN_BOOL}, {"i1", KILN_INT8}, {"i2", KILN_INT16},
        {"i4", KILN_INT32}, {"i8", KILN_INT64}, {"int", KILN_INT64}, {"u1", KILN_UINT8},
        {"u2", KILN_UINT16}, {"u4", KILN_UINT32}, {"u8", KILN_UINT64}, {"f2", KILN_FLOAT16},
        {"half", KILN_FLOAT16}, {"e", KILN_FLOAT16}, {"f4", KILN_FLOAT32},
        {"f8", KILN_FLOAT64}, {"float", KILN_FLOAT64}, {"single", KILN_FLOAT32},
        {"double", KILN_FLOAT64}, {"c8", KILN_COMPLEX64}, {"c16", KILN_COMPLEX128},
        {"complex", KILN_COMPLEX128}};
    for (size_t i = 0; i < COUNTOF(alias); i++)
        if (strcmp(alias[i].s, name) == 0) return alias[i].d;
    return -1;
}

static const Type *array_storage(Sema *S, Node *n, const Intrinsic *in) {
    Compiler *C = S->C;
    bool shared = in->kind == IK_SHARED_ARRAY;
    Node *a[3];
    if (!sema_bind(S, n, in, 2, 3, a)) return &ty_error;
    if (shared) sema_block_feature(S, n->sp, "kiln.shared.array");
    int64_t align = sema_storage_align(S, in, a[2]);
    if (align < 0) return &ty_error;
    const Type *st = sema_expr(S, a[0]);
    /* a string names the dtype, as in NumPy ("int32", "f4"): not a value to type */
    const Type *dt = a[1]->kind == E_STR ? NULL : sema_expr(S, a[1]);
    if (IS_ERR(st) || (dt && IS_ERR(dt))) return &ty_error;
    int64_t dims[KILN_MAX_NDIM];
    int nd = sema_shape(a[0], dims, KILN_MAX_NDIM);
    if (nd < 0) {
        /* then Numba's words for the same rejection, which code written for Numba matches */
        const char *numba = in->kind == IK_SHARED_ARRAY ? "shared.array" : "local.array";
        error_at(C, a[0]->sp, "use literals or module-level constants, e.g. (16, 16)",
                 "the shape of %s must be a constant integer or a tuple of them\n"
                 "(Numba: No implementation of function Function(<function %s>) found for "
                 "signature:\n \n >>> array(shape=%s, dtype=%s))",
                 in->name, numba, sema_numba_name(S, a[0]), sema_numba_name(S, a[1]));
        return &ty_error;
    }
    int d;
    if (!dt) {
        d = dtype_from_string(S, a[1]);
        if (d < 0) {
            /* Numba's phrase follows, for code that matches on it */
            error_at(C, a[1]->sp, "bool, int8..int64, uint8..uint64, float16, float32, float64, complex64 or complex128",
                     "the dtype of %s must be a scalar type (Invalid NumPy dtype specified: '%s')",
                     in->name, sema_string_text(S, a[1]) ? sema_string_text(S, a[1]) : "?");
            return &ty_error;
        }
    } else if (dt->kind == TY_DTYPE && dt->rec) { /* records: NumPy's itemsize each */
        d = KILN_RECORD0;
    } else if (dt->kind == TY_DTYPE) {
        d = dt->dtype;
    } else {
        /* Python's float, int, bool and complex, as NumPy takes them (np.dtype(float) is
         * float64), unless the name is a value the kernel made */
        const char *nm = a[1]->kind == E_NAME && !ty_is_scalar(dt) ? a[1]->name.id : "";
        d = strcmp(nm, "float") == 0     ? KILN_FLOAT64
            : strcmp(nm, "int") == 0     ? KILN_INT64
            : strcmp(nm, "bool") == 0    ? KILN_BOOL
            : strcmp(nm, "complex") == 0 ? KILN_COMPLEX128
                                         : -1;
    }
    if (d < 0) {
        error_at(C, a[1]->sp, "pass a type such as kiln.float32 or np.int32",
                 "the dtype of %s must be a scalar type", in->name);
        return &ty_error;
    }
    /* the size in bytes, exact past 64 bits so that the message can say it */
    unsigned __int128 items = 1;
    bool huge = false;
    for (int i = 0; i < nd; i++) {
        if (dims[i] < 0 || (dims[i] == 0 && !(shared && nd == 1))) {
            error_at(C, a[0]->sp,
                     shared ? "shape 0 (a plain 0, not a tuple) asks for dynamic shared memory"
                            : NULL,
                     "the dimensions of %s must be positive (got %lld)", in->name,
                     (long long)dims[i]);
            return &ty_error;
        }
        /* saturate: eight dimensions could overflow 128 bits */
        const unsigned __int128 cap = (unsigned __int128)1 << 100;
        if (dims[i] && items > cap / (unsigned __int128)dims[i]) {
            huge = true;
            items = cap;
        } else {
            items *= (unsigned __int128)dims[i];
        }
    }
    int64_t esize = d == KILN_RECORD0 ? dt->rec->itemsize : (int64_t)kiln_dtype_size((kiln_dtype)d);
    unsigned __int128 bytes128 = items * (unsigned __int128)esize;
    char need[64];
    if (huge) {
        snprintf(need, sizeof need, "more than 2**100 bytes");
    } else {
        char digits[48];
        int ndig = 0;
        unsigned __int128 v = bytes128;
        do {
            digits[ndig++] = (char)('0' + (int)(v % 10));
            v /= 10;
        } while (v);
        for (int i = 0; i < ndig; i++) need[i] = digits[ndig - 1 - i];
        snprintf(need + ndig, sizeof need - (size_t)ndig, " bytes");
    }
    if (shared && bytes128 > KILN_MAX_SHARED_BYTES) {
        error_at(C, a[0]->sp, "use dynamic shared memory: shape 0 and the launch's 4th value",
                 "static shared memory is limited to %d KiB per block (KILN_MAX_SHARED_BYTES); "
                 "this array needs %s",
                 KILN_MAX_SHARED_BYTES >> 10, need);
        return &ty_error;
    }
    if (!shared && bytes128 > KILN_MAX_LOCAL_BYTES) {
        error_at(C, a[0]->sp, "use a global array passed as an argument",
                 "local arrays are limited to %d KiB per thread (KILN_MAX_LOCAL_BYTES); this "
                 "array needs %s",
                 KILN_MAX_LOCAL_BYTES >> 10, need);
        return &ty_error;
    }
    int64_t bytes = (int64_t)bytes128;
    if (shared) {
        S->cur->shared_bytes += bytes + (align > 16 ? align : 0); /* the CPU's padding */
    } else {
        /* every thread has its own: the sum over the kernel and what it calls */
        FuncSpec *f = S->cur;
        if (f->local_bytes + bytes > KILN_MAX_LOCAL_BYTES && f->local_bytes <= KILN_MAX_LOCAL_BYTES)
            error_at(C, n->sp, "use a global array passed as an argument, or fewer local arrays",
                     "local arrays are limited to %d KiB per thread in all "
                     "(KILN_MAX_LOCAL_BYTES); with this one, '%s' needs %lld bytes",
                     KILN_MAX_LOCAL_BYTES >> 10, f->fi->name, (long long)(f->local_bytes + bytes));
        f->local_bytes += bytes;
    }
    vec_push(&C->arena, &S->cur->storage, n);
    if (d == KILN_RECORD0) return ty_array(C, ty_record(C, dt->rec, dt->recid), nd, 'C');
    return ty_array(C, ty_scalar((kiln_dtype)d), nd, 'C');
}

static bool atomic_dtype_ok(int sub, kiln_dtype d) {
    switch (sub) {
    case IA_ADD:
    case IA_SUB:
    case IA_MAX:
    case IA_MIN:
    case IA_NANMAX:
    case IA_NANMIN:
    case IA_EXCH:
        return d == KILN_INT32 || d == KILN_UINT32 || d == KILN_INT64 || d == KILN_UINT64 ||
               d == KILN_FLOAT32 || d == KILN_FLOAT64;
    case IA_AND:
    case IA_OR:
    case IA_XOR:
    case IA_CAS:
        return d == KILN_INT32 || d == KILN_UINT32 || d == KILN_INT64 || d == KILN_UINT64;
    case IA_INC:
    case IA_DEC: return d == KILN_UINT32 || d == KILN_UINT64;
    }
    return false;
}

static const Type *atomic(Sema *S, Node *n, const Intrinsic *in) {
    Compiler *C = S->C;
    NodeList *args = &n->call.args;
    if (n->call.kwvals.n) {
        error_at(C, n->sp, NULL, "%s() takes positional arguments only", in->name);
        return &ty_error;
    }
    int want = in->sub == IA_CAS ? (args->n == 3 ? 3 : 4) : 3;
    if (args->n != want) {
        error_at(C, n->sp, in->sub == IA_CAS ? "compare_and_swap(ary, old, new) or cas(ary, idx, old, new)" : NULL,
                 "%s() takes %d arguments (%d given)", in->name, want, args->n);
        return &ty_error;
    }
    n->call.bound = *args;
    Node *arr = args->v[0];
    const Type *at = sema_expr(S, arr);
    if (IS_ERR(at)) return &ty_error;
    if (IS_UNKNOWN(at)) return &ty_unknown;
    if (at->kind != TY_ARRAY) {
        error_at(C, arr->sp, sema_scalar_param_hint(arr, at),
                 "the first argument of %s() must be an array, not %s", in->name, ty_name(C, at));
        return &ty_error;
    }
    kiln_dtype d = (kiln_dtype)at->elem->dtype;
    if (!atomic_dtype_ok(in->sub, d)) {
        /* the dtypes this operation takes (atomic_dtype_ok) */
        const char *hint = "use an int32, int64, uint32, uint64, float32 or float64 array";
        if (in->sub == IA_AND || in->sub == IA_OR || in->sub == IA_XOR || in->sub == IA_CAS)
            hint = "use an int32, int64, uint32 or uint64 array";
        else if (in->sub == IA_INC || in->sub == IA_DEC)
            hint = "use a uint32 or uint64 array";
        error_at(C, arr->sp, hint, "%s() does not support %s arrays", in->name,
                 kiln_dtype_name(d));
        return &ty_error;
    }
    int first_val = 1;
    if (!(in->sub == IA_CAS && want == 3)) {
        Node *ix = args->v[1];
        first_val = 2;
        const Type *it = sema_expr(S, ix);
        if (IS_ERR(it)) return &ty_error;
        if (IS_UNKNOWN(it)) return &ty_unknown;
        int nidx = 1;
        if (it->kind == TY_TUPLE) {
            nidx = it->n;
            for (int i = 0; i < it->n; i++)
                if (!ty_is_int(it->elems[i])) {
                    error_at(C, ix->sp, NULL, "array indices must be integers");
                    return &ty_error;
                }
        } else if (!sema_index_type_ok(S, ix, it)) {
            return &ty_error;
        }
        if (nidx != at->ndim) {
            error_at(C, ix->sp, NULL, "%s() needs %d indices for a %d-dimensional array, got %d",
                     in->name, at->ndim, at->ndim, nidx);
            return &ty_error;
        }
    } else if (at->ndim != 1) {
        error_at(C, arr->sp, "use cas(ary, idx, old, new)",
                 "compare_and_swap(ary, old, new) works on 1-dimensional arrays");
        return &ty_error;
    }
    for (int i = first_val; i < args->n; i++) {
        const Type *vt = sema_expr(S, args->v[i]);
        if (IS_ERR(vt)) return &ty_error;
        if (IS_UNKNOWN(vt)) return &ty_unknown;
        if (!sema_check_store(S, at->elem, vt, args->v[i], args->v[i]->sp)) return &ty_error;
    }
    sema_mark_written(S, arr);
    S->res->uses_atomics = true;
    return at->elem;
}

/* x.bit_count() on an integer (Python's and NumPy's method: the 1 bits of |x|): true
 * when n is that call, which then holds x as its one argument, as kiln.popc(x) would.
 * Passes after the first find it so already. */
bool sema_int_method(Sema *S, Node *n) {
    Node *f = n->call.fn;
    if (f->kind != E_ATTR || strcmp(f->attr.attr, "bit_count") != 0 || n->call.kwvals.n) return false;
    NodeList *a = &n->call.args;
    if (a->n == 1 && a->v[0] == f->attr.base) return true;
    if (a->n != 0) return false;
    const Type *bt = sema_expr(S, f->attr.base);
    if (IS_ERR(bt) || IS_UNKNOWN(bt) || !ty_is_int(bt) || bt->kind == TY_BOOL) return false;
    int cap = 0;
    nodelist_push(S->C, a, f->attr.base, &cap);
    return true;
}

/* a.reshape(shape) on an array: true when n is that call, which then holds a as its first
 * argument, the shape's parts after it.  Passes after the first find it so already. */
bool sema_array_method(Sema *S, Node *n) {
    Node *f = n->call.fn;
    if (f->kind != E_ATTR || strcmp(f->attr.attr, "reshape") != 0 || n->call.kwvals.n) return false;
    NodeList *a = &n->call.args;
    if (a->n >= 1 && a->v[0] == f->attr.base) return true;
    const Type *bt = sema_expr(S, f->attr.base);
    if (IS_ERR(bt) || IS_UNKNOWN(bt) || bt->kind != TY_ARRAY) return false;
    Node **v = arena_alloc(&S->C->arena, sizeof(Node *) * (size_t)(a->n + 1));
    v[0] = f->attr.base;
    for (int i = 0; i < a->n; i++) v[i + 1] = a->v[i];
    a->v = v;
    a->n++;
    return true;
}

/* a.reshape(n), a.reshape((n, m)), a.reshape(n, m): a C-order view with as many
 * dimensions as the shape has parts (known when compiling); the extents are read at run
 * time, one of them may be -1, and a shape that does not hold a.size elements is NumPy's
 * ValueError (kiln_reshape_dim).  The array must be C-contiguous (its type says so). */
static const Type *reshape(Sema *S, Node *n) {
    Compiler *C = S->C;
    NodeList *a = &n->call.args;
    const Type *bt = sema_expr(S, a->v[0]);
    if (IS_ERR(bt) || IS_UNKNOWN(bt)) return bt;
    if (a->n < 2) {
        error_at(C, n->sp, NULL, "a.reshape() needs the new shape");
        return &ty_error;
    }
    int nd = 0;
    for (int i = 1; i < a->n; i++) {
        const Type *t = sema_expr(S, a->v[i]);
        if (IS_ERR(t) || IS_UNKNOWN(t)) return t;
        bool tuple = t->kind == TY_TUPLE && a->n == 2;
        for (int k = 0; k < (tuple ? t->n : 1); k++) {
            const Type *e = tuple ? t->elems[k] : t;
            if (!ty_is_int(e) || e->kind == TY_BOOL) {
                error_at(C, a->v[i]->sp, NULL, "a.reshape() takes integer extents, not %s",
                         ty_name(C, t));
                return &ty_error;
            }
        }
        nd += tuple ? t->n : 1;
    }
    if (nd < 1 || nd > KILN_MAX_NDIM) {
        error_at(C, n->sp, NULL, "a.reshape() makes 1 to %d dimensions, not %d", KILN_MAX_NDIM, nd);
        return &ty_error;
    }
    if (bt->layout != 'C' || bt->ptr) {
        error_at(C, a->v[0]->sp, "pass a C-contiguous array, or copy into a local array first",
                 "a.reshape() in a kernel views a C-contiguous array; this one is %s",
                 ty_name(C, bt));
        return &ty_error;
    }
    n->opty = bt;
    n->call.bound = *a; /* the passes that walk an intrinsic's arguments see them all */
    return ty_array(C, bt->elem, nd, 'C');
}

/* kiln.cg.this_grid() and g.sync() (the group as its one argument, group_method).
 * Either makes the kernel cooperative, as in Numba (a kernel that takes the grid
 * group is launched cooperatively even when it never syncs); on the CPU both need
 * the whole grid's threads as fibers (rt_blocks.h). */
static const Type *cg_call(Sema *S, Node *n, const Intrinsic *in) {
    Node *a[1];
    bool sync = in->sub == IG_SYNC;
    if (!sema_bind(S, n, in, sync, sync, a)) return &ty_error;
    if (sync) {
        const Type *g = sema_expr(S, a[0]);
        if (IS_ERR(g) || IS_UNKNOWN(g)) return g;
        if (g->kind != TY_GROUP) {
            error_at(S->C, a[0]->sp, NULL, "sync() is a method of kiln.cg.this_grid()'s group");
            return &ty_error;
        }
    }
    S->res->cooperative = true;
    sema_block_feature(S, n->sp, sync ? "grid sync (g.sync())" : "kiln.cg.this_grid()");
    return sync ? &ty_none : &ty_group;
}

/* A warp operation's mask is an integer; Numba's words otherwise (test_warp_ops.py). */
static bool warp_mask_ok(Sema *S, const Intrinsic *in, Node *mask, const Type *t) {
    if (ty_is_int(t)) return true;
    error_at(S->C, mask->sp, NULL, "%s(): Mask type must be an integer, not %s", in->name,
             ty_name(S->C, t));
    return false;
}

static const Type *call_real_intrinsic(Sema *S, Node *n, const Intrinsic *in) {
    Compiler *C = S->C;
    Node *a[4];
    const Type *t[4];
    bool unk = false;
    n->intr = in;
    if (ufunc_nin(in) && sema_ufunc_misuse(S, n, in)) return &ty_error;
    switch ((IntrKind)in->kind) {
    case IK_NPCMP: return sema_ufunc_compare(S, n, in);
    case IK_NPUFUNC: return sema_npufunc(S, n, in);
    case IK_REDUCE: return sema_reduce(S, n, in);
    case IK_VIEW: return sema_view(S, n);
    case IK_VECTOR: return sema_vector_call(S, n, in);
    case IK_LIBDEVICE: return sema_libdevice_call(S, n, in);
    case IK_CACHE: return sema_cache_hint(S, n, in);
    case IK_BF16:
    case IK_BF16CVT: return sema_bf16_call(S, n, in);
    case IK_GRID:
    case IK_GRIDSIZE: {
        if (!sema_bind(S, n, in, 1, 1, a)) return &ty_error;
        sema_expr(S, a[0]);
        int64_t nd;
        if (!sema_const_int(a[0], &nd) || nd < 1 || nd > 3) {
            /* Numba's words for a value not known when compiling: RequireLiteralValue */
            error_at(C, a[0]->sp, NULL,
                     "%s() takes a constant 1, 2 or 3 (RequireLiteralValue: the number of "
                     "dimensions must be known when compiling)", in->name);
            return &ty_error;
        }
        if (in->kind == IK_GRIDSIZE) S->res->uses_gridsize = true;
        n->flags |= NF_NONNEG; /* a tuple's elements: bound_elem */
        if (nd == 1) {
            bound_set(n, bound_grid(in->kind == IK_GRIDSIZE, 0));
            return ty_scalar(KILN_INT64);
        }
        const Type *el[3] = {ty_scalar(KILN_INT64), ty_scalar(KILN_INT64), ty_scalar(KILN_INT64)};
        return ty_tuple(C, (int)nd, el);
    }
    case IK_SYNCTHREADS:
        if (in->sub >= IY_AND) {
            /* the predicate of every thread of the block, combined */
            if (!sema_bind(S, n, in, 1, 1, a)) return &ty_error;
            sema_block_feature(S, n->sp, arena_printf(&C->arena, "%s()", in->name));
            if (!sema_scalar_args(S, a, 1, t, &unk)) return &ty_error;
            return ty_scalar(KILN_INT32);
        }
        if (!sema_bind(S, n, in, 0, in->sub ? 1 : 0, a)) return &ty_error;
        if (in->sub && a[0]) {
            const Type *mt = sema_expr(S, a[0]);
            if (!IS_ERR(mt) && !ty_is_int(mt))
                error_at(C, a[0]->sp, NULL, "the mask must be an integer");
        }
        sema_block_feature(S, n->sp, in->sub ? "kiln.syncwarp()" : "kiln.syncthreads()");
        return &ty_none;
    case IK_THREADFENCE:
        if (!sema_bind(S, n, in, 0, 0, a)) return &ty_error;
        sema_spin_point(S, NULL); /* a fence in a loop is one, as a statement too */
        return &ty_none;
    case IK_SHARED_ARRAY:
    case IK_LOCAL_ARRAY: return array_storage(S, n, in);
    case IK_ATOMIC:
        if (!(in->sub == IA_CAS && sema_cas_retry(S->loop, n))) sema_spin_point(S, n);
        return atomic(S, n, in);
    case IK_SHFL: {
        if (!sema_bind(S, n, in, 3, 3, a)) return &ty_error;
        sema_block_feature(S, n->sp, in->name);
        if (!sema_scalar_args(S, a, 3, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        const Type *vt = ty_strong(t[1]);
        if (vt->kind == TY_FLOAT && ty_bits(vt) < 32) vt = ty_scalar(KILN_FLOAT32);
        else if (vt->kind == TY_BOOL || ty_bits(vt) < 32) vt = ty_scalar(KILN_INT32);
        n->opty = vt;
        return vt;
    }
    case IK_VOTE:
        if (!sema_bind(S, n, in, 2, 2, a)) return &ty_error;
        sema_block_feature(S, n->sp, in->name);
        if (!sema_scalar_args(S, a, 2, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        if (!warp_mask_ok(S, in, a[0], t[0])) return &ty_error;
        if (t[1]->kind != TY_BOOL && !ty_is_int(t[1])) {
            error_at(C, a[1]->sp, NULL, "%s(): Predicate must be an integer or boolean, not %s",
                     in->name, ty_name(C, t[1]));
            return &ty_error;
        }
        return in->sub == 0 ? ty_scalar(KILN_UINT32) : ty_scalar(KILN_BOOL);
    case IK_ACTIVEMASK:
        if (!sema_bind(S, n, in, 0, 0, a)) return &ty_error;
        sema_block_feature(S, n->sp, in->name);
        if (in->sub == 1) S->res->uses_sregs = true; /* lanemask_lt: the lane */
        return ty_scalar(KILN_UINT32);
    case IK_RESHAPE: return reshape(S, n);
    case IK_ARRAY_COPY: return sema_array_copy(S, n);
    case IK_CONST_ARRAY: {
        if (!sema_bind(S, n, in, 1, 1, a)) return &ty_error;
        const Type *at = sema_expr(S, a[0]);
        if (at->kind == TY_ERROR) return at;
        GVal *g = (GVal *)a[0]->gv;
        if (!g || g->kind != KILN_VAL_ARRAY || !g->data) {
            error_at(C, a[0]->sp, NULL,
                     "kiln.const.array_like takes a global NumPy array (its elements become the "
                     "kernel's constant memory), not %s", ty_name(C, at));
            return &ty_error;
        }
        int64_t bytes = ty_elem_size(g->ty->elem);
        for (int i = 0; i < g->ty->ndim; i++) bytes *= g->shape[i];
        if (!g->constmem) { /* counted once; checked at every pass (an early one's
                             * diagnostics may be dropped) */
            g->constmem = true;
            S->res->const_bytes += bytes;
            if (bytes > S->res->const_max) S->res->const_max = bytes;
        }
        /* said at the largest array (every pass sees them all first), not at every one */
        if (S->res->const_bytes > KILN_MAX_CONST_MEMORY_BYTES && bytes == S->res->const_max) {
            error_at(C, n->sp, NULL,
                     "the arrays of kiln.const.array_like come to %lld bytes, over the %d "
                     "bytes of constant memory (KILN_MAX_CONST_MEMORY_BYTES); read the "
                     "larger ones as globals or arguments",
                     (long long)S->res->const_bytes, KILN_MAX_CONST_MEMORY_BYTES);
            return &ty_error;
        }
        n->gv = g;
        return at;
    }
    case IK_DIVMOD: { /* (x // y, x % y): Python's floor division and modulo, typed as they are */
        if (!sema_bind(S, n, in, 2, 2, a)) return &ty_error;
        if (!ast_is_pure(a[0], 0) || !ast_is_pure(a[1], 0)) {
            error_at(C, n->sp, "assign the arguments to variables first: q, r = divmod(x, y)",
                     "divmod() reads each argument twice here (x // y, x %% y): an argument "
                     "must not call anything");
            return &ty_error;
        }
        Node *parts[2];
        for (int k = 0; k < 2; k++) {
            parts[k] = node_new(C, E_BINOP, n->sp);
            parts[k]->op = k ? B_MOD : B_FLOORDIV;
            parts[k]->bin.l = k ? ast_copy_pure(C, a[0]) : a[0];
            parts[k]->bin.r = k ? ast_copy_pure(C, a[1]) : a[1];
        }
        Node *tup = node_new(C, E_TUPLE, n->sp);
        int cap = 0;
        nodelist_push(C, &tup->tuple, parts[0], &cap);
        nodelist_push(C, &tup->tuple, parts[1], &cap);
        *n = *tup;
        return sema_expr(S, n);
    }
    case IK_MATCH: {
        if (!sema_bind(S, n, in, 2, 2, a)) return &ty_error;
        sema_block_feature(S, n->sp, in->name);
        if (!sema_scalar_args(S, a, 2, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        if (!warp_mask_ok(S, in, a[0], t[0])) return &ty_error;
        /* CUDA matches 32- and 64-bit values by their bits: narrower ints widen to int32 */
        const Type *vt = ty_strong(t[1]);
        if (vt->kind == TY_COMPLEX || (vt->kind == TY_FLOAT && ty_bits(vt) < 32)) {
            error_at(C, a[1]->sp, NULL, "%s() matches integers, float32 and float64, not %s",
                     in->name, ty_name(C, t[1]));
            return &ty_error;
        }
        if (vt->kind == TY_BOOL || ty_bits(vt) < 32) vt = ty_scalar(KILN_INT32);
        n->opty = vt;
        if (in->sub == 0) return ty_scalar(KILN_UINT32);
        const Type *pair[2] = {ty_scalar(KILN_UINT32), ty_scalar(KILN_BOOL)};
        return ty_tuple(C, 2, pair);
    }
    case IK_MATH1:
    case IK_PRED:
    case IK_ABS:
    case IK_SIGN:
    case IK_ROUNDING: {
        if (!sema_bind(S, n, in, 1, 1, a)) return &ty_error;
        if (!sema_scalar_args(S, a, 1, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        const Type *x = t[0];
        bool nn = bound_nonneg(a[0], x);
        switch ((IntrKind)in->kind) {
        case IK_MATH1: n->opty = float_of(x); return n->opty;
        case IK_PRED:
            if (x->kind == TY_COMPLEX && strncmp(in->name, "math.", 5) == 0) { /* Python's TypeError */
                error_at(C, a[0]->sp, "use cmath.isnan/isinf/isfinite for complex numbers",
                         "math.%s() takes a real number, not %s", strchr(in->name, '.') + 1,
                         ty_name(C, x));
                return &ty_error;
            }
            n->opty = x;
            return ty_scalar(KILN_BOOL);
        case IK_ABS:
            n->opty = x->kind == TY_BOOL ? ty_scalar(KILN_INT64) : x;
            if (sema_is_weak_int_const(a[0], x) && a[0]->cval.i != INT64_MIN) {
                sema_set_const_int(n, a[0]->cval.i < 0 ? -a[0]->cval.i : a[0]->cval.i);
                return x; /* a Python int, known: compared and range-checked as one */
            }
            if (sema_is_weak_int_const(a[0], x)) { /* abs(-2**63) is 2**63: a uint64 constant,
                                                    * as such a Python int is (sema_expr.c) */
                n->flags |= NF_CONST | NF_NONNEG | NF_PYINT;
                n->cval.u = (uint64_t)1 << 63;
                n->opty = ty_scalar(KILN_UINT64);
                return n->opty;
            }
            /* abs() of a signed type's minimum wraps to itself, as in NumPy */
            if (nn && ty_is_int(n->opty)) bound_set(n, bound_of(a[0], x));
            return n->opty;
        case IK_SIGN:
            n->opty = x->kind == TY_BOOL ? ty_scalar(KILN_INT64) : x;
            return n->opty;
        default: /* rounding */
            if (in->flags & IF_NUMPY) {
                n->opty = float_of(x);
                return n->opty;
            }
            if (x->kind == TY_FLOAT) {
                n->opty = x;
                if (x->weak && (a[0]->flags & NF_CONST) && fabs(a[0]->cval.f) < 9.2e18) {
                    double v = a[0]->cval.f; /* Python's int result, known */
                    sema_set_const_int(n, (int64_t)(in->sub == 0 ? floor(v)
                                                    : in->sub == 1 ? ceil(v) : trunc(v)));
                }
                return x->weak ? &ty_weak_int : ty_scalar(KILN_INT64);
            }
            /* of a typed integer: int64, or uint64 for an unsigned one, as Numba types it
             * (its int64/uint64 signatures), so a narrow one does not wrap after */
            n->opty = x->weak ? x : ty_scalar(ty_is_int(x) && x->kind != TY_BOOL &&
                                              !ty_is_signed(x) ? KILN_UINT64 : KILN_INT64);
            if (sema_is_weak_int_const(a[0], x)) sema_set_const_int(n, a[0]->cval.i); /* floor(300) */
            if (nn) bound_set(n, bound_of(a[0], x));
            return n->opty;
        }
    }
    case IK_FP16: {
        /* Numba's cuda.fp16: each argument converted to float16, as Numba casts */
        int na = in->sub >= IH_NEG ? 1 : in->sub == IH_FMA ? 3 : 2;
        if (!sema_bind(S, n, in, na, na, a)) return &ty_error;
        if (!sema_scalar_args(S, a, na, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        n->opty = ty_scalar(KILN_FLOAT16);
        return in->sub >= IH_EQ && in->sub <= IH_LE ? ty_scalar(KILN_BOOL) : n->opty;
    }
    case IK_FMA: {
        if (!sema_bind(S, n, in, 3, 3, a)) return &ty_error;
        if (!sema_scalar_args(S, a, 3, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        n->opty = ty_promote(ty_promote(float_of(t[0]), float_of(t[1])), float_of(t[2]));
        return n->opty;
    }
    case IK_BITS: {
        if (!sema_bind(S, n, in, 1, 1, a)) return &ty_error;
        if (!sema_scalar_args(S, a, 1, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        if (!ty_is_int(t[0]) || t[0]->kind == TY_BOOL) {
            error_at(C, a[0]->sp, "convert it first, e.g. kiln.uint32(x)",
                     "%s() takes an integer, not %s", in->name, ty_name(C, t[0]));
            return &ty_error;
        }
        /* the result has the argument's type: its width is the one counted in */
        n->opty = ty_strong(t[0]);
        if (in->sub != IB_BREV) bound_set(n, (uint64_t)ty_bits(n->opty)); /* a count of bits */
        return n->opty;
    }
    case IK_FROM_BUFFER: {
        /* Numba's cffi support: the address of a contiguous array's first element, for
         * external functions that take a pointer (declare_device with CPointer) */
        if (!sema_bind(S, n, in, 1, 1, a)) return &ty_error;
        const Type *x = sema_expr(S, a[0]);
        if (IS_ERR(x) || IS_UNKNOWN(x)) return x;
        if (ty_is_ptr(x)) return x;
        if (x->kind != TY_ARRAY || x->elem->kind == TY_RECORD || !ty_is_scalar(x->elem)) {
            error_at(C, a[0]->sp, "pass an array of numbers",
                     "ffi.from_buffer() takes an array of numbers, not %s", ty_name(C, x));
            return &ty_error;
        }
        if (x->ndim > 0 && x->layout != 'C' && x->layout != 'F') {
            error_at(C, a[0]->sp, "pass a C- or F-contiguous array (a copy of this one)",
                     "ffi.from_buffer() of a non-contiguous array (%s): the pointer would not "
                     "reach its elements in order", ty_name(C, x));
            return &ty_error;
        }
        /* the external function may write through it: the array counts as written (a host
         * array's copy comes back); a global array is a constant of the program (read-only
         * memory on the CPU), which no pointer may reach */
        if (sema_origins(S, a[0]) & ORIGIN_FROZEN) {
            error_at(C, a[0]->sp, "pass the array as a kernel argument, or copy it into a local "
                                  "array first",
                     "ffi.from_buffer() of a global array: kernels capture global arrays as "
                     "constants, which an external function must not write");
            return &ty_error;
        }
        sema_mark_written(S, a[0]);
        return ty_ptr(C, x->elem);
    }
    case IK_SELP: {
        if (!sema_bind(S, n, in, 3, 3, a)) return &ty_error;
        sema_cond(S, a[0]);
        if (!sema_scalar_args(S, a + 1, 2, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        n->opty = ty_promote(t[0], t[1]);
        return n->opty;
    }
    case IK_MATH2:
    case IK_NPMINMAX: {
        if (!sema_bind(S, n, in, 2, 2, a)) return &ty_error;
        if (!sema_scalar_args(S, a, 2, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        const Type *p = ty_promote(t[0], t[1]);
        if (in->kind == IK_MATH2 && strcmp(math2_names[in->sub], "fmod") == 0 &&
            strncmp(in->name, "numpy.", 6) == 0 && (ty_is_int(p) || p->kind == TY_BOOL)) {
            /* numpy.fmod of integers is NumPy's integer loop (math.fmod's is a float):
             * the remainder with the dividend's sign, of the promoted type (int8 for two
             * bools), 0 for a zero divisor */
            if (!sema_check_weak_fits(S, a[0], t[0], t[1]) ||
                !sema_check_weak_fits(S, a[1], t[1], t[0]))
                return &ty_error;
            n->opty = p->kind == TY_BOOL ? ty_scalar(KILN_INT8) : ty_strong(p);
        } else if (in->kind == IK_MATH2) {
            /* as NumPy's arctan2/hypot/fmod/power: a float32 with an int8, int16, bool or
             * Python number stays float32; with an int32 or int64, float64 */
            n->opty = float_of(p);
        } else {
            n->opty = ty_promote(t[0], t[1]);
            if (ty_is_int(n->opty) && bound_nonneg(a[0], t[0]) && bound_nonneg(a[1], t[1]))
                bound_set(n, MAX(bound_of(a[0], t[0]), bound_of(a[1], t[1])));
        }
        return n->opty;
    }
    case IK_LDEXP: {
        if (!sema_bind(S, n, in, 2, 2, a)) return &ty_error;
        if (!sema_scalar_args(S, a, 2, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        if (!ty_is_int(t[1]) && t[1]->kind != TY_BOOL) {
            error_at(C, a[1]->sp, "convert it with int(...)",
                     "math.ldexp()'s exponent must be an integer, not %s", ty_name(C, t[1]));
            return &ty_error;
        }
        n->opty = float_of(t[0]);
        return n->opty;
    }
    case IK_SPLIT: {
        /* frexp: (mantissa, exponent as a Python int); modf: (fraction, integral part) */
        if (!sema_bind(S, n, in, 1, 1, a)) return &ty_error;
        if (!sema_scalar_args(S, a, 1, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        n->opty = ty_strong(float_of(t[0]));
        const Type *el[2] = {n->opty, in->sub == 0 ? ty_scalar(KILN_INT64) : n->opty};
        return ty_tuple(C, 2, el);
    }
    case IK_POWER:
    case IK_BINOP: {
        if (!sema_bind(S, n, in, 2, 2, a)) return &ty_error;
        const Type *lt = sema_expr(S, a[0]), *rt = sema_expr(S, a[1]);
        const Type *opty = NULL;
        BinOp op = in->kind == IK_POWER ? B_POW : (BinOp)in->sub;
        const Type *r = sema_binop(S, n, op, a[0], a[1], lt, rt, &opty);
        n->opty = opty;
        n->flags &= (uint16_t)~NF_CONST;
        return r;
    }
    case IK_LOG: {
        if (!sema_bind(S, n, in, 1, 2, a)) return &ty_error;
        if (!sema_scalar_args(S, a, 2, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        n->opty = a[1] ? float_of(ty_promote(t[0], t[1])) : float_of(t[0]);
        return n->opty;
    }
    case IK_MINMAX: {
        NodeList *args = &n->call.args;
        if (n->call.kwvals.n) {
            error_at(C, n->sp, NULL, "%s() takes no keyword arguments in kernels", in->name);
            return &ty_error;
        }
        /* a call typed before has its arguments as values (a tuple's items after min(t)) */
        bool typed = n->call.bound.v == args->v && args->n > 0;
        if (!typed && args->n == 1 && !(args->v[0]->flags & NF_STAR)) {
            /* min(t) of a tuple is min(*t), as Numba lowers min and max of a tuple */
            Node *a0 = args->v[0];
            const Type *t0 = a0->kind == E_TUPLE ? NULL : sema_expr(S, a0);
            if (t0 && IS_ERR(t0)) return &ty_error;
            if (t0 && IS_UNKNOWN(t0)) return &ty_unknown;
            if (t0 && t0->kind != TY_TUPLE) {
                error_at(C, a0->sp, t0->kind == TY_ARRAY ? "use np.min(a) or a.min()" :
                         "pass two or more values: min(a, b)",
                         "%s() with one argument takes a tuple in kernels, not %s",
                         in->sub ? "max" : "min", ty_name(C, t0));
                return &ty_error;
            }
            a0->flags |= NF_STAR;
            int ok = sema_unpack_star(S, n);
            if (ok <= 0) return ok < 0 ? &ty_unknown : &ty_error;
            if (args->n == 0) {
                error_at(C, n->sp, NULL, "%s() arg is an empty sequence",
                         in->sub ? "max" : "min");
                return &ty_error;
            }
        } else if (!typed && args->n < 2) {
            error_at(C, n->sp, "pass two or more values: min(a, b)",
                     "%s() takes two or more values, or one tuple, in kernels",
                     in->sub ? "max" : "min");
            return &ty_error;
        }
        n->call.bound = *args;
        const Type *r = NULL;
        bool all_nn = true, any_nn = false;
        uint64_t lo_hi = UINT64_MAX, hi_hi = 0; /* min's bound, max's bound */
        for (int i = 0; i < args->n; i++) {
            const Type *x = sema_expr(S, args->v[i]);
            if (IS_ERR(x)) return &ty_error;
            if (IS_UNKNOWN(x)) return &ty_unknown;
            if (!sema_check_scalar_operand(S, args->v[i], x, "an argument of min/max"))
                return &ty_error;
            r = r ? ty_promote(r, x) : x;
            bool nn = bound_nonneg(args->v[i], x);
            uint64_t h = nn ? bound_of(args->v[i], x) : bound_tymax(x);
            all_nn = all_nn && nn;
            any_nn = any_nn || nn;
            lo_hi = MIN(lo_hi, h);
            hi_hi = MAX(hi_hi, h);
        }
        /* a Python int among typed integers: range-checked as in arithmetic */
        for (int i = 0; i < args->n; i++)
            if (!sema_check_weak_fits(S, args->v[i], args->v[i]->ty, r)) return &ty_error;
        /* ... and one of values unknown here makes it int64, as in arithmetic */
        for (int i = 0; i < args->n; i++) r = sema_hold_weak_int(args->v[i], args->v[i]->ty, r);
        /* an integer result only: int() of a float past int64 is not Python's */
        if (in->sub == 0 && all_nn && ty_is_int(r)) bound_set(n, lo_hi);
        if (in->sub == 1 && any_nn && ty_is_int(r)) bound_set(n, hi_hi);
        n->opty = r;
        return r;
    }
    case IK_INT:
    case IK_FLOAT:
    case IK_BOOL: {
        if (!sema_bind(S, n, in, 0, 1, a)) return &ty_error;
        if (a[0] && a[0]->kind == E_STR) {
            /* float("nan"), float("-inf"): Python's spellings of the special values */
            double v;
            if (in->kind == IK_FLOAT && float_special(sema_string_text(S, a[0]), &v)) {
                n->flags |= NF_CONST;
                n->cval.f = v;
                n->opty = &ty_weak_float;
                return &ty_weak_float;
            }
            error_at(C, a[0]->sp, in->kind == IK_FLOAT ? "float() of a string takes \"nan\", "
                     "\"inf\" or \"-inf\" in kernels" : NULL, "kernels have no strings to convert");
            return &ty_error;
        }
        if (!sema_scalar_args(S, a, 1, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        const Type *x = a[0] ? t[0] : NULL;
        n->opty = x;
        bool c = a[0] && (a[0]->flags & NF_CONST);
        if (in->kind == IK_BOOL) {
            if (!a[0]) sema_set_const_int(n, 0);
            return ty_scalar(KILN_BOOL);
        }
        if (in->kind == IK_INT) {
            if (!a[0]) {
                sema_set_const_int(n, 0);
                return &ty_weak_int;
            }
            uint64_t hi;
            if (bound_cast(a[0], x, x->weak ? &ty_weak_int : ty_scalar(KILN_INT64), &hi))
                bound_set(n, hi);
            if (c && x->weak) {
                double v = x->kind == TY_FLOAT ? a[0]->cval.f : (double)a[0]->cval.i;
                if (x->kind != TY_FLOAT) sema_set_const_int(n, a[0]->cval.i);
                else if (v > -9.2e18 && v < 9.2e18) sema_set_const_int(n, (int64_t)v);
            }
            /* int() never changes an integer's value: a uint64 stays one (Numba) */
            if (x->kind == TY_INT && x->dtype == KILN_UINT64) return x;
            return x->weak ? &ty_weak_int : ty_scalar(KILN_INT64);
        }
        if (!a[0]) {
            n->flags |= NF_CONST;
            n->cval.f = 0;
            return &ty_weak_float;
        }
        if (c && x->weak) {
            n->flags |= NF_CONST;
            n->cval.f = sema_const_as_double(a[0]);
        }
        return x->weak ? &ty_weak_float : ty_scalar(KILN_FLOAT64);
    }
    case IK_ROUND: {
        if (!sema_bind(S, n, in, 1, 2, a)) return &ty_error;
        if (!sema_scalar_args(S, a, 2, t, &unk)) return &ty_error;
        if (unk) return &ty_unknown;
        if (a[1] && !ty_is_int(t[1])) {
            error_at(C, a[1]->sp, NULL, "ndigits must be an integer");
            return &ty_error;
        }
        const Type *x = t[0];
        n->opty = x->kind == TY_BOOL ? ty_scalar(KILN_INT64) : x;
        if (x->kind == TY_FLOAT && !a[1]) return x->weak ? &ty_weak_int : ty_scalar(KILN_INT64);
        /* round() of a typed integer is int64, as Numba types it */
        if (ty_is_int(x) && !x->weak && !a[1]) n->opty = ty_scalar(KILN_INT64);
        return n->opty;
    }
    case IK_PRINT: return sema_print(S, n);
    case IK_CG: return cg_call(S, n, in);
    case IK_LITERAL_UNROLL: return literal_unroll_misuse(S, n);
    case IK_RANGE: /* a for loop's iterable is for_iter.c's; anywhere else a range object */
    case IK_ENUMERATE:
    case IK_ZIP:
    case IK_REVERSED:
        error_at(C, n->sp, "write for i in range(...):",
                 "%s() can only be used as the iterable of a for loop in kernels",
                 in->kind == IK_RANGE      ? "range"
                 : in->kind == IK_ZIP      ? "zip"
                 : in->kind == IK_REVERSED ? "reversed"
                                           : "enumerate");
        return &ty_error;
    case IK_LEN: {
        if (!sema_bind(S, n, in, 1, 1, a)) return &ty_error;
        const Type *x = sema_expr(S, a[0]);
        if (IS_ERR(x) || IS_UNKNOWN(x)) return x;
        if (ty_is_ptr(x)) {
            error_at(C, a[0]->sp, "pass the length as a kernel argument",
                     "a %s has no len(): a pointer has no extent", ty_name(C, x));
            return &ty_error;
        }
        if (x->kind == TY_ARRAY && x->ndim == 0) { /* NumPy's TypeError */
            error_at(C, a[0]->sp, "read its element as a[()]", "len() of unsized object (a 0-d array)");
            return &ty_error;
        }
        if (x->kind == TY_ARRAY) {
            n->flags |= NF_NONNEG;
            return ty_scalar(KILN_INT64);
        }
        if (x->kind == TY_TUPLE) {
            sema_set_const_int(n, x->n);
            return &ty_weak_int;
        }
        error_at(C, a[0]->sp, NULL, "object of type %s has no len()", ty_name(C, x));
        return &ty_error;
    }
    case IK_COMPLEX:
    case IK_CMATH:
    case IK_NAMEDTUPLE: break; /* sema_complex.c: call_intrinsic sends them there */
    case IK_NS:
    case IK_SREG:
    case IK_DIM3:
    case IK_WARPSIZE:
    case IK_LANEID:
    case IK_CONST:
    case IK_DTYPE: break;
    }
    error_at(C, n->call.fn->sp, NULL, "'%s' is not callable", in->name);
    return &ty_error;
}

/* Intrinsics of complex numbers are sema_complex.c's; the others are typed
 * here, and then sema_complex.c decides about the complex arguments they were
 * given (abs, isnan, NumPy's functions take them; math's do not). */
/* g.sync() of a grid group: its one method, called with the group as its argument
 * (pushed once; later passes find it there), as x.conjugate() is (sema_complex.c). */
bool sema_group_method(Sema *S, Node *n) {
    Node *f = n->call.fn;
    if (f->kind != E_ATTR || strcmp(f->attr.attr, "sync") != 0 || n->call.kwvals.n) return false;
    NodeList *a = &n->call.args;
    if (a->n == 1 && a->v[0] == f->attr.base) return true;
    if (a->n != 0) return false;
    const Type *bt = sema_expr(S, f->attr.base);
    if (bt->kind != TY_GROUP) return false;
    int cap = 0;
    nodelist_push(S->C, a, f->attr.base, &cap);
    return true;
}

const Type *sema_call_intrinsic(Sema *S, Node *n, const Intrinsic *in) {
    if (in->kind == IK_CMATH || in->kind == IK_COMPLEX) return sema_complex_call(S, n, in);
    const Type *r = call_real_intrinsic(S, n, in);
    if (IS_ERR(r) || IS_UNKNOWN(r)) return r;
    for (int i = 0; i < n->call.bound.n; i++) {
        const Node *b = n->call.bound.v[i];
        if (b && b->ty && b->ty->kind == TY_COMPLEX) return sema_complex_args(S, n, in, r);
    }
    return r;
}

const Type *sema_dtype_cast(Sema *S, Node *n, kiln_dtype d) {
    Compiler *C = S->C;
    const Type *rt = ty_scalar(d);
    NodeList *args = &n->call.args;
    if (n->call.kwvals.n || args->n > 1) {
        error_at(C, n->sp, NULL, "%s() takes one positional argument in kernels",
                 kiln_dtype_name(d));
        return &ty_error;
    }
    n->call.bound = *args;
    if (args->n == 0) {
        if (rt->kind != TY_COMPLEX) n->flags |= NF_CONST; /* ConstVal holds no complex */
        n->cval.u = 0;
        n->opty = rt;
        return rt;
    }
    Node *x = args->v[0];
    const Type *xt = sema_expr(S, x);
    if (IS_ERR(xt) || IS_UNKNOWN(xt)) return xt;
    if (!ty_is_scalar(xt)) {
        error_at(C, x->sp, "index an element first: a[i]", "cannot convert %s to %s",
                 ty_name(C, xt), kiln_dtype_name(d));
        return &ty_error;
    }
    if (xt->kind == TY_COMPLEX && rt->kind != TY_COMPLEX && rt->kind != TY_BOOL) {
        error_at(C, x->sp, "take z.real, z.imag or abs(z) first",
                 "cannot convert %s to %s: it would drop the imaginary part", ty_name(C, xt),
                 kiln_dtype_name(d));
        return &ty_error;
    }
    n->opty = xt;
    if (rt->kind == TY_INT && !sema_check_weak_fits(S, x, xt, rt)) return &ty_error;
    uint64_t hi;
    if (bound_cast(x, xt, rt, &hi)) bound_set(n, hi); /* int32(x) of a large x wraps */
    return rt;
}

