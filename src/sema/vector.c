/* vector.c: CUDA's vector types in kernels (Numba's cuda.float32x4, cuda.float4...).
 *
 * A vector type is n (1-4) lanes of one integer or float type, read as v.x, v.y, v.z,
 * v.w; it has no other operation.  Its value is a named tuple (types.h: vec set), so
 * variables, device functions' arguments and results, and loops over tuples of vectors
 * take it as they take tuples; on the GPU its struct has the layout and alignment of
 * CUDA's own type (float4: 16 bytes, aligned to 16), on the CPU a C struct of the same
 * layout (emit_text.c).
 *
 * The constructor takes lanes in order from scalars (converted to the lane type, as
 * float32(x) converts) and from vectors of the same lane type ("fancy" creation:
 * float32x4(v2, 1.0, 2.0)), as Numba's overloads of each vector type do; the lanes
 * given must be exactly n.  Names follow Numba: <dtype>x<n> for int8...uint64, float32
 * and float64, and CUDA's aliases (char4, uchar2, short3, int2, long4, longlong1,
 * float4, double2...), where char/short/int/long/longlong are int8/16/32/64/64 and u...
 * their unsigned types, as NumPy's C types on Linux.
 */
#include <string.h>

#include "sema_int.h"

#define VT(n, d, k) {"kiln." n "x" #k, IK_VECTOR, VEC_SUB(d, k), 0, NULL}
#define VT4(n, d) VT(n, d, 1), VT(n, d, 2), VT(n, d, 3), VT(n, d, 4)

static const Intrinsic vectors[] = {
    VT4("int8", KILN_INT8),     VT4("int16", KILN_INT16),   VT4("int32", KILN_INT32),
    VT4("int64", KILN_INT64),   VT4("uint8", KILN_UINT8),   VT4("uint16", KILN_UINT16),
    VT4("uint32", KILN_UINT32), VT4("uint64", KILN_UINT64), VT4("float32", KILN_FLOAT32),
    VT4("float64", KILN_FLOAT64),
};

/* CUDA's names of the lane types */
static const struct { const char *alias, *base; } aliases[] = {
    {"char", "int8"},     {"short", "int16"},       {"int", "int32"},    {"long", "int64"},
    {"longlong", "int64"}, {"uchar", "uint8"},      {"ushort", "uint16"}, {"uint", "uint32"},
    {"ulong", "uint64"},  {"ulonglong", "uint64"}, {"float", "float32"}, {"double", "float64"},
};

static const Intrinsic *by_name(const char *base, int lanes) {
    for (size_t i = 0; i < COUNTOF(vectors); i++) {
        const char *nm = vectors[i].name + 5; /* after "kiln." */
        size_t bl = strlen(base);
        if (strncmp(nm, base, bl) == 0 && nm[bl] == 'x' && nm[bl + 1] == '0' + lanes &&
            nm[bl + 2] == 0)
            return &vectors[i];
    }
    return NULL;
}

const Intrinsic *vector_lookup(const char *name) {
    if (strncmp(name, "kiln.", 5) != 0) return NULL;
    name += 5;
    size_t len = strlen(name);
    if (len < 2 || name[len - 1] < '1' || name[len - 1] > '4') return NULL;
    int lanes = name[len - 1] - '0';
    if (name[len - 2] == 'x') { /* float32x4 */
        char base[16];
        if (len - 2 >= sizeof base) return NULL;
        memcpy(base, name, len - 2);
        base[len - 2] = 0;
        return by_name(base, lanes);
    }
    for (size_t i = 0; i < COUNTOF(aliases); i++) { /* float4 */
        size_t al = strlen(aliases[i].alias);
        if (len == al + 1 && strncmp(name, aliases[i].alias, al) == 0)
            return by_name(aliases[i].base, lanes);
    }
    return NULL;
}

const Type *sema_vector_call(Sema *S, Node *n, const Intrinsic *in) {
    Compiler *C = S->C;
    kiln_dtype d = VEC_DTYPE(in->sub);
    int want = VEC_LANES(in->sub);
    const Type *rt = ty_vector(C, d, want), *lane = ty_scalar(d);
    NodeList *args = &n->call.args;
    if (n->call.kwvals.n) {
        error_at(C, n->sp, NULL, "%s() takes its lanes as positional arguments", rt->tname);
        return &ty_error;
    }
    n->call.bound = *args;
    n->opty = lane;
    int lanes = 0;
    bool unk = false;
    for (int i = 0; i < args->n; i++) {
        Node *x = args->v[i];
        const Type *xt = sema_expr(S, x);
        if (IS_ERR(xt)) return xt;
        if (IS_UNKNOWN(xt)) {
            unk = true;
            continue;
        }
        if (ty_is_vector(xt)) {
            if (xt->elems[0]->dtype != d) {
                error_at(C, x->sp, "convert the lanes one by one: float32x2(float32(v.x), ...)",
                         "%s() takes vectors of %s lanes, not %s", rt->tname,
                         kiln_dtype_name(d), xt->tname);
                return &ty_error;
            }
            lanes += xt->n;
            continue;
        }
        if (!ty_is_real(xt)) {
            error_at(C, x->sp, NULL, "%s() takes %s lanes and vectors of them, not %s",
                     rt->tname, kiln_dtype_name(d), ty_name(C, xt));
            return &ty_error;
        }
        if (sema_is_weak_int_const(x, xt) && lane->kind == TY_INT &&
            !ty_int_fits(lane, x->cval.i, false)) {
            error_at(C, x->sp, NULL, "Python integer %lld out of bounds for %s",
                     (long long)x->cval.i, kiln_dtype_name(d));
            return &ty_error;
        }
        lanes += 1;
    }
    if (unk) return &ty_unknown;
    if (lanes != want) {
        error_at(C, n->sp, NULL, "%s() takes %d lane%s (scalars and vectors), given %d",
                 rt->tname, want, want == 1 ? "" : "s", lanes);
        return &ty_error;
    }
    return rt;
}
