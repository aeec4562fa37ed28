/* libdevice.c: kiln.libdevice (Numba's cuda.libdevice), CUDA's libdevice functions called
 * by name from kernels.
 *
 * The table (libdevice_table.h) is written by tools/gen_libdevice.py from the toolkit's
 * libdevice bitcode, which NVRTC links into every program: a kernel's call of
 * libdevice.sincos(x) becomes a call of __nv_sincos (emit_libdevice.c declares it and wraps
 * its pointer results into a tuple).  On the CPU the same names are rt_libdevice_cpu.h's
 * C functions (all but rcp64h, which has no CPU version).
 */
#include <string.h>

#include "sema_int.h"

#define LD(name, ret, params, outs) {"kiln.libdevice." #name, IK_LIBDEVICE, 0, 0, NULL},
static const Intrinsic ld_intrinsics[] = {
#include "libdevice_table.h"
};
#undef LD
#define LD(name, ret, params, outs) {#name, ret, params, outs},
static const LibdeviceFn ld_fns[] = {
#include "libdevice_table.h"
};
#undef LD

#define LD_PREFIX "kiln.libdevice."

const Intrinsic *libdevice_lookup(const char *name) {
    if (strncmp(name, LD_PREFIX, sizeof LD_PREFIX - 1) != 0) return NULL;
    /* the table is sorted by name (the generator sorts it) */
    size_t lo = 0, hi = COUNTOF(ld_intrinsics);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(ld_intrinsics[mid].name, name);
        if (c == 0) return &ld_intrinsics[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

_Static_assert(COUNTOF(ld_fns) <= 64 * LIBDEVICE_WORDS, "SemaResult.libdevice is too small");

int libdevice_count(void) { return (int)COUNTOF(ld_fns); }

const LibdeviceFn *libdevice_at(int i) { return &ld_fns[i]; }

const LibdeviceFn *libdevice_fn(const Intrinsic *in) {
    ASSERT(in >= ld_intrinsics && in < ld_intrinsics + COUNTOF(ld_intrinsics));
    return &ld_fns[in - ld_intrinsics];
}

const Type *libdevice_type(char c) {
    switch (c) {
    case 'i': return ty_scalar(KILN_INT32);
    case 'u': return ty_scalar(KILN_UINT32);
    case 'l': return ty_scalar(KILN_INT64);
    case 'm': return ty_scalar(KILN_UINT64);
    case 'f': return ty_scalar(KILN_FLOAT32);
    case 'd': return ty_scalar(KILN_FLOAT64);
    default: return &ty_none;
    }
}

/* The function's value: its result, then what it stores through its pointers, as a tuple
 * when there is more than one (Numba's create_signature); a lone result as itself. */
const Type *libdevice_result(Compiler *C, const LibdeviceFn *f) {
    const Type *el[LIBDEVICE_MAX_PARAMS + 1];
    int n = 0;
    if (f->ret != 'v') el[n++] = libdevice_type(f->ret);
    for (int k = 0; f->params[k] && k < LIBDEVICE_MAX_PARAMS; k++)
        if (f->outs >> k & 1) el[n++] = libdevice_type(f->params[k]);
    if (n == 0) return &ty_none;
    if (n == 1) return el[0];
    return ty_tuple(C, n, el);
}

static int libdevice_nin(const LibdeviceFn *f) {
    int n = 0;
    for (int k = 0; f->params[k]; k++) n += !(f->outs >> k & 1);
    return n;
}

const Type *sema_libdevice_call(Sema *S, Node *n, const Intrinsic *in) {
    Compiler *C = S->C;
    const LibdeviceFn *f = libdevice_fn(in);
    const char *name = in->name + strlen("kiln.");
    if (C->opts.target == KILN_TARGET_CPU && strcmp(f->name, "rcp64h") == 0) {
        error_at(C, n->sp, "run the kernel on a GPU, or compute 1.0 / x",
                 "%s() has no CPU version: its result depends on how the GPU approximates "
                 "the reciprocal", name);
        return &ty_error;
    }
    if (n->call.kwvals.n) {
        error_at(C, n->call.kwvals.v[0]->sp, "pass the arguments by position",
                 "%s() takes no keyword arguments", name);
        return &ty_error;
    }
    int nin = libdevice_nin(f);
    if (n->call.args.n != nin) {
        error_at(C, n->sp, NULL, "%s() takes %d positional argument%s but %d were given", name,
                 nin, nin == 1 ? "" : "s", n->call.args.n);
        return &ty_error;
    }
    bool unk = false;
    for (int i = 0; i < nin; i++) {
        Node *a = n->call.args.v[i];
        const Type *t = sema_expr(S, a);
        if (IS_ERR(t)) return &ty_error;
        if (IS_UNKNOWN(t)) {
            unk = true;
            continue;
        }
        if (!sema_check_scalar_operand(S, a, t, "a function argument")) return &ty_error;
        if (t->kind == TY_COMPLEX) {
            error_at(C, a->sp, "pass its .real and .imag parts", "%s() takes real numbers, not %s",
                     name, ty_name(C, t));
            return &ty_error;
        }
    }
    n->intr = in;
    n->call.bound = n->call.args;
    if (unk) return &ty_unknown;
    size_t k = (size_t)(f - ld_fns);
    S->res->libdevice[k / 64] |= (uint64_t)1 << (k % 64);
    return libdevice_result(C, f);
}
