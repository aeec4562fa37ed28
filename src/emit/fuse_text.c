/* fuse_text.c: kiln.fuse's kernel, written in kiln's kernel language.
 *
 * The typed tree of a fused function (sema/fuse.h) becomes the text of one
 * kernel, which then goes through the front end, sema, the emitters, the cache
 * tiers and the launch path like any kernel: the fused function gets lane
 * mode, loop order, tier 0, NVRTC and the disk cache without code of its own.
 * NumPy's semantics are made explicit in the text: every operand is converted
 * to the dtype NumPy computes in (kiln.float32(...)), bool + and * become | and
 * &, ~ of a bool becomes not, so the kernel language's scalar rules (Python's,
 * for weak values) never decide a type the fused function's NumPy rules decide.
 *
 * The kernel's shape (docs/modes.md, "kiln.fuse"):
 *  - MAP: one output element per position.  CPU: kiln.grid over up to three
 *    dimensions, the last one x (plan.c orders the loops by the arrays'
 *    layouts), dimensions past three folded into z; GPU: x along the last
 *    dimension, y striding the others folded into one.
 *  - ROWS: one row of the reduced shape per position; the row's values are
 *    accumulated in registers and each output written once.  GPU: a block
 *    per row, its threads striding the row, folded in shared memory.
 *  - ALL: phase 0 makes `np` partials, each of a contiguous range of the
 *    flat index (CPU) or a grid-stride share folded per block (GPU); phase 1,
 *    one position (one block), folds the partials and writes the outputs.
 * No intermediate array is ever written: only outputs and the partials.
 */
#include <string.h>

#include "sema/fuse.h"

/* Threads of a GPU block of the whole-array reduction, whose partials loop strides
 * by it; the Python side launches with the same number (kiln/_fuse.py _GPU_BLOCK).
 * The block fold reads kiln.blockDim.x, so a row reduction runs with any power of two
 * up to FUSE_GPU_MAX_BLOCK threads per block (max-autotune times 128 to 1024). */
#define FUSE_GPU_BLOCK 256
#define FUSE_GPU_MAX_BLOCK 1024
/* Parentheses a node's text may nest before it becomes a local (below
 * KILN_MAX_NESTING, with room for the statement around it). */
#define FUSE_SPILL_NESTING 32

/* Regions of the kernel: the loop of each group of reductions (the elementwise
 * body of a MAP kernel is region 0), and what follows the loops. */
enum { POST = KILN_FUSE_MAX_REDUCTIONS, NREG };

typedef struct W {
    Compiler *C;
    const FuseIR *ir;
    Buf reg[NREG];         /* each region's statements (user variables' locals) */
    const char *idx[NREG][KILN_MAX_NDIM + 1]; /* index of each dimension, per region */
    int nidx[NREG];
    bool gpu;
    int ntemps;            /* locals made for deep expressions */
} W;

static const char *kname(const Type *t) {
    return t->kind == TY_BOOL ? "bool_" : kiln_dtype_name((kiln_dtype)t->dtype);
}

static const char *emit(W *w, FNode *n, int reg);
static const char *emit_node(W *w, FNode *n, int reg);

/* n's text converted to t (NULL: as it is). */
static const char *conv(W *w, FNode *n, const Type *t, int reg) {
    const char *s = emit(w, n, reg);
    if (!t || (!n->t->weak && !t->weak && n->t->dtype == t->dtype && n->t->kind == t->kind))
        return s;
    return arena_printf(&w->C->arena, "kiln.%s(%s)", kname(t), s);
}

static const char *load(W *w, FNode *n, int reg) {
    const kiln_fuse_arg *a = &w->ir->args[n->arg];
    const char *name = arena_printf(&w->C->arena, "u_%s", n->text);
    if (a->kind == KILN_FUSE_ROW) return arena_printf(&w->C->arena, "%s[k_c]", name);
    if (a->kind != KILN_FUSE_ARRAY) return name;
    if (a->ndim == 0) return arena_printf(&w->C->arena, "%s[0]", name);
    Buf b;
    buf_init_arena(&b, &w->C->arena);
    buf_printf(&b, "%s[", name);
    int D = w->nidx[reg];
    for (int t = 0; t < a->ndim; t++) {
        const char *ix = (a->ones >> t & 1) ? "0" : w->idx[reg][D - a->ndim + t];
        buf_printf(&b, "%s%s", t ? ", " : "", ix);
    }
    buf_putc(&b, ']');
    return b.p;
}

static const char *const binsym[] = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^"};
static const char *const cmpsym[] = {"<", "<=", ">", ">=", "==", "!="};

static const char *emit_node(W *w, FNode *n, int reg) {
    Arena *A = &w->C->arena;
    switch ((enum FKind)n->kind) {
    case FN_ARG: return load(w, n, reg);
    case FN_CONST: return n->text;
    case FN_VAR: {
        const char *name = arena_printf(A, "k_v%d_%d", n->arg, reg);
        if (!(n->emitted >> reg & 1)) {
            const char *v = emit(w, n->a, reg);
            buf_printf(&w->reg[reg], "%s = %s\n", name, v);
            n->emitted |= 1u << reg;
        }
        return name;
    }
    case FN_UN: {
        const char *x = conv(w, n->a, n->opty, reg);
        if (n->py && n->a->t->kind == TY_BOOL) /* Python: ~True is -2 */
            x = arena_printf(A, "kiln.int64(%s)", x);
        else if (n->op == U_INVERT && n->t->kind == TY_BOOL)
            return arena_printf(A, "(not %s)", x);
        return arena_printf(A, "(%s%s)", n->op == U_NEG ? "-" : n->op == U_POS ? "+" : "~", x);
    }
    case FN_BIN: {
        const char *a = conv(w, n->a, n->opty, reg), *b = conv(w, n->b, n->opty, reg);
        const char *op = binsym[n->op];
        if (n->opty && n->opty->kind == TY_BOOL) {
            if (n->op == B_ADD) op = "|";
            if (n->op == B_MUL) op = "&";
        }
        if (n->op == B_POW && n->opty) return arena_printf(A, "numpy.power(%s, %s)", a, b);
        return arena_printf(A, "(%s %s %s)", a, op, b);
    }
    case FN_CMP:
        return arena_printf(A, "(%s %s %s)", conv(w, n->a, n->opty, reg), cmpsym[n->op],
                            conv(w, n->b, n->opty, reg));
    case FN_CALL:
        if (n->pred_const) /* isnan, isinf (never) and isfinite (always) of an integer */
            return n->op == 2 ? "kiln.bool_(True)" : "kiln.bool_(False)";
        if (!n->text) /* identities: integer floor, |bool| */
            return conv(w, n->a, n->t, reg);
        if (n->nargs == 2)
            return arena_printf(A, "%s(%s, %s)", n->text, conv(w, n->a, n->opty, reg),
                                conv(w, n->b, n->opty, reg));
        return arena_printf(A, "%s(%s)", n->text, conv(w, n->a, n->opty, reg));
    case FN_WHERE: {
        const char *c = emit(w, n->a, reg);
        if (n->a->t->kind != TY_BOOL) c = arena_printf(A, "(%s != 0)", c);
        return arena_printf(A, "(%s if %s else %s)", conv(w, n->b, n->t, reg), c,
                            conv(w, n->c, n->t, reg));
    }
    case FN_CAST: return conv(w, n->a, n->t, reg);
    case FN_RED: {
        const FRedInfo *r = &w->ir->red[n->arg];
        if (r->op == FR_MEAN)
            return arena_printf(A, "kiln.%s(k_a%d / kiln.%s(k_%s%d))", kname(r->acc), n->arg,
                                kname(r->sum), w->ir->kind == KILN_FUSE_ROWS ? "m" : "total",
                                r->group);
        if (r->sum != r->acc) return arena_printf(A, "kiln.%s(k_a%d)", kname(r->acc), n->arg);
        return arena_printf(A, "k_a%d", n->arg);
    }
    }
    UNREACHABLE();
}

/* Parentheses nested in a text: the user's chain a + b + c + ... is flat in
 * Python, but its text here nests one level per operator, and the front end
 * (and Python, which compiles the kernel's def) allows KILN_MAX_NESTING. */
static int nesting(const char *s) {
    int d = 0, most = 0;
    for (; *s; s++) {
        if (*s == '(' || *s == '[') d++;
        else if (*s == ')' || *s == ']') d--;
        if (d > most) most = d;
    }
    return most;
}

/* A node's text; a text nested deeper than FUSE_SPILL_NESTING becomes a local of its
 * region (k_t<n>), so any depth the user wrote stays within the kernel's limits. */
static const char *emit(W *w, FNode *n, int reg) {
    const char *s = emit_node(w, n, reg);
    if (nesting(s) <= FUSE_SPILL_NESTING) return s;
    const char *name = arena_printf(&w->C->arena, "k_t%d", w->ntemps++);
    buf_printf(&w->reg[reg], "%s = %s\n", name, s);
    return name;
}

/* The initial value of an accumulator: the reduction's identity, or the
 * lowest (highest) value of the type for max (min). */
static const char *init_of(W *w, const FRedInfo *r) {
    const Type *t = r->sum;
    const char *k = kname(t);
    Arena *A = &w->C->arena;
    switch (r->op) {
    case FR_SUM:
    case FR_MEAN: return arena_printf(A, "kiln.%s(0)", k);
    case FR_PROD: return arena_printf(A, "kiln.%s(1)", k);
    default: break;
    }
    bool max = r->op == FR_MAX;
    if (t->kind == TY_BOOL) return max ? "kiln.bool_(False)" : "kiln.bool_(True)";
    if (t->kind == TY_FLOAT) return arena_printf(A, "kiln.%s(%smath.inf)", k, max ? "-" : "");
    int bits = ty_bits(t);
    if (!ty_is_signed(t))
        return max ? arena_printf(A, "kiln.%s(0)", k)
                   : arena_printf(A, "kiln.%s(%llu)", k,
                                  bits == 64 ? ~0ull : (1ull << bits) - 1);
    long long hi = bits == 64 ? INT64_MAX : (1ll << (bits - 1)) - 1;
    return max ? arena_printf(A, "kiln.%s(-%lld - 1)", k, hi) : arena_printf(A, "kiln.%s(%lld)", k, hi);
}

/* acc OP v, both of the accumulator's type. */
static const char *fold(W *w, const FRedInfo *r, const char *acc, const char *v) {
    Arena *A = &w->C->arena;
    switch (r->op) {
    case FR_SUM:
    case FR_MEAN: return arena_printf(A, "%s + %s", acc, v);
    case FR_PROD: return arena_printf(A, "%s * %s", acc, v);
    case FR_MAX: return arena_printf(A, "numpy.maximum(%s, %s)", acc, v);
    default: return arena_printf(A, "numpy.minimum(%s, %s)", acc, v);
    }
}

static void lines(Buf *out, int indent, const char *text) {
    while (*text) {
        const char *e = strchr(text, '\n');
        size_t n = e ? (size_t)(e - text) : strlen(text);
        buf_printf(out, "%*s%.*s\n", indent, "", (int)n, text);
        text += n + (e ? 1 : 0);
    }
}

/* The index variables k_i0..k_iD-1 of a position (CPU, and the GPU's one-dimensional
 * kernels), from the grid with the last dimension as x; dimensions past three are
 * folded into z (k_nz positions); shape_of names the extents. */
static void positions(W *w, Buf *o, int D, const char *shape_of) {
    Arena *A = &w->C->arena;
    if (D == 0) {
        buf_printf(o, "    k_p = kiln.grid(1)\n    if k_p < 1:\n");
        return;
    }
    if (D > 3) {
        buf_printf(o, "    k_i%d, k_i%d, k_z = kiln.grid(3)\n    if k_i%d < %s[%d] and k_i%d < "
                      "%s[%d] and k_z < k_nz:\n",
                   D - 1, D - 2, D - 1, shape_of, D - 1, D - 2, shape_of, D - 2);
        buf_printf(o, "        k_r = k_z\n");
        for (int d = D - 3; d >= 1; d--)
            buf_printf(o, "        k_i%d = k_r %% %s[%d]\n        k_r = k_r // %s[%d]\n", d, shape_of,
                       d, shape_of, d);
        buf_printf(o, "        k_i0 = k_r\n");
        return;
    }
    Buf names, guard;
    buf_init_arena(&names, A);
    buf_init_arena(&guard, A);
    for (int d = D - 1; d >= 0; d--) {
        buf_printf(&names, "%sk_i%d", d == D - 1 ? "" : ", ", d);
        buf_printf(&guard, "%sk_i%d < %s[%d]", d == D - 1 ? "" : " and ", d, shape_of, d);
    }
    buf_printf(o, "    %s = kiln.grid(%d)\n    if %s:\n", names.p, D, guard.p);
}

/* Region reg indexes D dimensions with position indices, the last one k_j for a
 * loop's region; first: the number of the first position index used (a loop's
 * values are aligned right with the output's positions). */
static void set_index(W *w, int reg, int D, bool loop_last, int first) {
    for (int d = 0; d < D; d++)
        w->idx[reg][d] = (loop_last && d == D - 1) ? "k_j"
                                                   : arena_printf(&w->C->arena, "k_i%d", first + d);
    w->nidx[reg] = D;
}

/* The outputs' stores (after the region's statements they need). */
static void stores(W *w, Buf *o, int indent, int reg) {
    const FuseIR *ir = w->ir;
    Buf b;
    buf_init_arena(&b, &w->C->arena);
    for (int k = 0; k < ir->nout; k++) {
        const char *v = conv(w, ir->outs[k], ir->outs[k]->t, reg);
        buf_printf(&b, "k_o%d[", k);
        if (ir->ndim_out == 0) buf_puts(&b, "0");
        for (int d = 0; d < ir->ndim_out; d++) buf_printf(&b, "%s%s", d ? ", " : "", w->idx[reg][d]);
        buf_printf(&b, "] = %s\n", v);
    }
    lines(o, indent, w->reg[reg].p);
    lines(o, indent, b.p);
}

/* Whether some argument is a row operand (KILN_FUSE_ROW; kiln.c: a 1-D map then). */
static bool has_rows(const FuseIR *ir) {
    for (int i = 0; i < ir->nargs; i++)
        if (ir->args[i].kind == KILN_FUSE_ROW) return true;
    return false;
}

static void write_map(W *w, Buf *o) {
    const FuseIR *ir = w->ir;
    int D = ir->ndim_out;
    set_index(w, 0, D, false, 0);
    if (has_rows(ir)) {
        /* a flat call with row operands (kiln.fuse's row path): the column is a local of
         * its own at the top level, which the wide entry's vector path reads a row vector
         * at (vecplan.h) */
        buf_puts(o, "    k_i0 = kiln.grid(1)\n    k_c = k_i0 % k_cols\n"
                    "    if k_i0 < k_o0.shape[0]:\n");
        stores(w, o, 8, 0);
        return;
    }
    if (!w->gpu || D < 2) {
        positions(w, o, D, "k_o0.shape");
        stores(w, o, 8, 0);
        return;
    }
    /* GPU: x along the last dimension (coalesced), y striding the leading dimensions
     * folded into one (k_nz of them; the grid's y has at most 65535 blocks), so a
     * position costs no division for two dimensions and one per further dimension */
    if (D == 2) {
        /* the row is the loop's own counter: each row's loads index by the counter and
         * the column alone, so the unrolled loop (unroll.h) issues four rows' loads first */
        buf_printf(o, "    k_i1, k_y = kiln.grid(2)\n    if k_i1 < k_o0.shape[1]:\n"
                      "        for k_i0 in range(k_y, k_nz, kiln.gridsize(2)[1]):\n");
        stores(w, o, 12, 0);
        return;
    }
    buf_printf(o, "    k_i%d, k_y = kiln.grid(2)\n    if k_i%d < k_o0.shape[%d]:\n"
                  "        for k_z in range(k_y, k_nz, kiln.gridsize(2)[1]):\n",
               D - 1, D - 1, D - 1);
    buf_printf(o, "            k_r = k_z\n");
    for (int d = D - 2; d >= 1; d--)
        buf_printf(o, "            k_i%d = k_r %% k_o0.shape[%d]\n            k_r = k_r // k_o0.shape[%d]\n",
                   d, d, d);
    buf_printf(o, "            k_i0 = k_r\n");
    stores(w, o, 12, 0);
}

/* The post region over the reduced shape (DR dimensions, then keepdims' zeros). */
static void set_post(W *w, int DR) {
    const FuseIR *ir = w->ir;
    set_index(w, POST, DR, false, 0);
    for (int d = DR; d < ir->ndim_out; d++) w->idx[POST][d] = "0";
    w->nidx[POST] = ir->ndim_out;
}

/* Each reduction of group g folded with its value at the loop's position, after the
 * group region's statements. */
static void accumulate(W *w, Buf *o, int indent, int g) {
    const FuseIR *ir = w->ir;
    Arena *A = &w->C->arena;
    Buf body;
    buf_init_arena(&body, A);
    for (int r = 0; r < ir->nred; r++) {
        if (ir->red[r].group != g) continue;
        const char *v = conv(w, ir->red[r].arg, ir->red[r].sum, g);
        buf_printf(&body, "k_a%d = %s\n", r, fold(w, &ir->red[r], arena_printf(A, "k_a%d", r), v));
    }
    lines(o, indent, w->reg[g].p);
    lines(o, indent, body.p);
}

/* Whether every accumulator is a type the warp shuffles move whole (32 or 64 bits). */
static bool shufflable(const FuseIR *ir) {
    static const char *const ok[] = {"int32", "uint32", "int64", "uint64", "float32", "float64"};
    for (int r = 0; r < ir->nred; r++) {
        bool found = false;
        for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++)
            if (!strcmp(kname(ir->red[r].sum), ok[k])) found = true;
        if (!found) return false;
    }
    return true;
}

static void inits(W *w, Buf *o, int indent, bool shared) {
    const FuseIR *ir = w->ir;
    for (int r = 0; r < ir->nred; r++) {
        buf_printf(o, "%*sk_a%d = %s\n", indent, "", r, init_of(w, &ir->red[r]));
        if (shared) /* the warps' values (32 at most), or every thread's for the tree */
            buf_printf(o, "%*sk_sh%d = kiln.shared.array(%d, kiln.%s)\n", indent, "", r,
                       shufflable(ir) ? 32 : FUSE_GPU_MAX_BLOCK, kname(ir->red[r].sum));
    }
}

/* GPU: every thread's accumulators folded over the block, the total in k_sh<r>[0] for
 * thread 0.  Each warp folds its 32 values with shuffles, then the first warp folds the
 * warps' values: two barriers where a shared-memory tree takes eight (a row of 4096
 * float32 is 16 loads per thread, so the tail is a fair part of a row reduction's time).
 * Types the shuffles do not move whole fold by the tree. */
static void block_fold(W *w, Buf *o) {
    const FuseIR *ir = w->ir;
    Arena *A = &w->C->arena;
    if (shufflable(ir)) {
        buf_printf(o, "    k_s = 16\n    while k_s > 0:\n");
        for (int r = 0; r < ir->nred; r++)
            buf_printf(o, "        k_a%d = %s\n", r,
                       fold(w, &ir->red[r], arena_printf(A, "k_a%d", r),
                            arena_printf(A, "kiln.shfl_down_sync(0xffffffff, k_a%d, k_s)", r)));
        buf_printf(o, "        k_s //= 2\n    if k_t %% 32 == 0:\n");
        for (int r = 0; r < ir->nred; r++) buf_printf(o, "        k_sh%d[k_t // 32] = k_a%d\n", r, r);
        buf_printf(o, "    kiln.syncthreads()\n    if k_t < 32:\n");
        for (int r = 0; r < ir->nred; r++)
            buf_printf(o, "        k_a%d = k_sh%d[k_t] if k_t < kiln.blockDim.x // 32 else %s\n",
                       r, r, init_of(w, &ir->red[r]));
        buf_printf(o, "        k_s = 16\n        while k_s > 0:\n");
        for (int r = 0; r < ir->nred; r++)
            buf_printf(o, "            k_a%d = %s\n", r,
                       fold(w, &ir->red[r], arena_printf(A, "k_a%d", r),
                            arena_printf(A, "kiln.shfl_down_sync(0xffffffff, k_a%d, k_s)", r)));
        buf_printf(o, "            k_s //= 2\n        if k_t == 0:\n");
        for (int r = 0; r < ir->nred; r++) buf_printf(o, "            k_sh%d[0] = k_a%d\n", r, r);
        return;
    }
    for (int r = 0; r < ir->nred; r++) buf_printf(o, "    k_sh%d[k_t] = k_a%d\n", r, r);
    buf_printf(o, "    kiln.syncthreads()\n    k_s = kiln.blockDim.x // 2\n    while k_s > 0:\n"
                  "        if k_t < k_s:\n");
    for (int r = 0; r < ir->nred; r++)
        buf_printf(o, "            k_sh%d[k_t] = %s\n", r,
                   fold(w, &ir->red[r], arena_printf(A, "k_sh%d[k_t]", r),
                        arena_printf(A, "k_sh%d[k_t + k_s]", r)));
    buf_printf(o, "        kiln.syncthreads()\n        k_s //= 2\n");
}

static void write_rows(W *w, Buf *o) {
    const FuseIR *ir = w->ir;
    int DR = ir->ndim_out - (ir->keepdims ? 1 : 0);
    for (int g = 0; g < ir->ngroups; g++) {
        int Dg = ir->group_ndim[g];
        set_index(w, g, Dg, true, DR - (Dg - 1));
    }
    set_post(w, DR);
    if (!w->gpu) {
        positions(w, o, DR, "k_o0.shape");
        inits(w, o, 8, false);
        for (int g = 0; g < ir->ngroups; g++) {
            buf_printf(o, "        for k_j in range(k_m%d):\n", g);
            accumulate(w, o, 12, g);
        }
        stores(w, o, 8, POST);
        return;
    }
    /* a block per position of the reduced shape, its threads striding the rows */
    buf_printf(o, "    k_t = kiln.threadIdx.x\n    k_r = kiln.blockIdx.x\n");
    for (int d = DR - 1; d >= 1; d--)
        buf_printf(o, "    k_i%d = k_r %% k_o0.shape[%d]\n    k_r = k_r // k_o0.shape[%d]\n", d, d, d);
    if (DR > 0) buf_printf(o, "    k_i0 = k_r\n");
    inits(w, o, 4, true);
    for (int g = 0; g < ir->ngroups; g++) {
        buf_printf(o, "    for k_j in range(k_t, k_m%d, kiln.blockDim.x):\n", g);
        accumulate(w, o, 8, g);
    }
    block_fold(w, o);
    buf_printf(o, "    if k_t == 0:\n");
    for (int r = 0; r < ir->nred; r++) buf_printf(o, "        k_a%d = k_sh%d[0]\n", r, r);
    stores(w, o, 8, POST);
}

/* The position indices of flat index k_f in the shape group g reduces (s<g>_<d>). */
static void split_flat(W *w, Buf *o, int indent, int g, bool columns) {
    int D = w->ir->group_ndim[g] > 0 ? w->ir->group_ndim[g] : 1;
    buf_printf(o, "%*sk_r = k_f // k_s%d_%d\n", indent, "", g, D - 1);
    if (columns)
        buf_printf(o, "%*sk_c0 = k_f - k_r * k_s%d_%d\n%*sk_c1 = min(k_s%d_%d, k_c0 + k_hi - k_f)\n",
                   indent, "", g, D - 1, indent, "", g, D - 1);
    else
        buf_printf(o, "%*sk_j = k_f - k_r * k_s%d_%d\n", indent, "", g, D - 1);
    for (int d = D - 2; d >= 1; d--)
        buf_printf(o, "%*sk_i%d = k_r %% k_s%d_%d\n%*sk_r = k_r // k_s%d_%d\n", indent, "", d, g, d,
                   indent, "", g, d);
    if (D > 1) buf_printf(o, "%*sk_i0 = k_r\n", indent, "");
}

static void write_all(W *w, Buf *o) {
    const FuseIR *ir = w->ir;
    Arena *A = &w->C->arena;
    for (int g = 0; g < ir->ngroups; g++) {
        int D = ir->group_ndim[g] > 0 ? ir->group_ndim[g] : 1;
        set_index(w, g, D, true, 0);
    }
    set_post(w, 0);
    if (!w->gpu) {
        /* phase 0: partial k_b of each loop is a contiguous range of its flat index,
         * walked row by row so the innermost loop runs along the last dimension */
        buf_printf(o, "    k_b = kiln.grid(1)\n    if k_phase == 0 and k_b < k_np:\n");
        inits(w, o, 8, false);
        for (int g = 0; g < ir->ngroups; g++) {
            buf_printf(o, "        k_lo = k_b * k_chunk%d\n        k_hi = min(k_lo + k_chunk%d, "
                          "k_total%d)\n        k_f = k_lo\n        while k_f < k_hi:\n",
                       g, g, g);
            split_flat(w, o, 12, g, true);
            buf_printf(o, "            for k_j in range(k_c0, k_c1):\n");
            accumulate(w, o, 16, g);
            buf_printf(o, "            k_f += k_c1 - k_c0\n");
        }
        for (int r = 0; r < ir->nred; r++) buf_printf(o, "        k_p%d[k_b] = k_a%d\n", r, r);
        buf_printf(o, "    if k_phase == 1 and k_b == 0:\n");
        inits(w, o, 8, false);
        buf_printf(o, "        for k_q in range(k_np):\n");
        for (int r = 0; r < ir->nred; r++)
            buf_printf(o, "            k_a%d = %s\n", r,
                       fold(w, &ir->red[r], arena_printf(A, "k_a%d", r),
                            arena_printf(A, "k_p%d[k_q]", r)));
        stores(w, o, 8, POST);
        return;
    }
    /* GPU: a grid-stride share per thread, folded per block into k_p (phase 0);
     * one block folds the partials and writes the outputs (phase 1) */
    buf_printf(o, "    k_t = kiln.threadIdx.x\n");
    inits(w, o, 4, true);
    buf_printf(o, "    if k_phase == 0:\n");
    for (int g = 0; g < ir->ngroups; g++) {
        buf_printf(o, "        for k_f in range(kiln.grid(1), k_total%d, kiln.gridsize(1)):\n", g);
        split_flat(w, o, 12, g, false);
        accumulate(w, o, 12, g);
    }
    buf_printf(o, "    else:\n        for k_q in range(k_t, k_np, %d):\n", FUSE_GPU_BLOCK);
    for (int r = 0; r < ir->nred; r++)
        buf_printf(o, "            k_a%d = %s\n", r,
                   fold(w, &ir->red[r], arena_printf(A, "k_a%d", r), arena_printf(A, "k_p%d[k_q]", r)));
    block_fold(w, o);
    buf_printf(o, "    if k_t == 0 and k_phase == 0:\n");
    for (int r = 0; r < ir->nred; r++) buf_printf(o, "        k_p%d[kiln.blockIdx.x] = k_sh%d[0]\n", r, r);
    buf_printf(o, "    if k_t == 0 and k_phase == 1:\n");
    for (int r = 0; r < ir->nred; r++) buf_printf(o, "        k_a%d = k_sh%d[0]\n", r, r);
    stores(w, o, 8, POST);
}

void fuse_write(Compiler *C, const FuseIR *ir, kiln_target target, Buf *out, Buf *params) {
    W w;
    memset(&w, 0, sizeof w);
    w.C = C;
    w.ir = ir;
    w.gpu = target == KILN_TARGET_CUDA;
    for (int r = 0; r < NREG; r++) {
        buf_init_arena(&w.reg[r], &C->arena);
        buf_puts(&w.reg[r], "");
    }
    Buf ps;
    buf_init_arena(&ps, &C->arena);
    for (int k = 0; k < ir->nout; k++) {
        buf_printf(&ps, "%sk_o%d", k ? ", " : "", k);
        buf_printf(params, "%so%d", k ? " " : "", k);
    }
    if (ir->kind == KILN_FUSE_ALL)
        for (int r = 0; r < ir->nred; r++) {
            buf_printf(&ps, ", k_p%d", r);
            buf_printf(params, " p%d", r);
        }
    for (int i = 0; i < ir->nargs; i++) {
        buf_printf(&ps, ", u_%s", ir->pnames[i]);
        buf_printf(params, " a%d", i);
    }
    for (int g = 0; g < ir->ngroups; g++) {
        if (ir->kind == KILN_FUSE_ROWS) {
            buf_printf(&ps, ", k_m%d", g);
            buf_printf(params, " m%d", g);
            continue;
        }
        int D = ir->group_ndim[g] > 0 ? ir->group_ndim[g] : 1;
        for (int d = 0; d < D; d++) {
            buf_printf(&ps, ", k_s%d_%d", g, d);
            buf_printf(params, " s%d_%d", g, d);
        }
        buf_printf(&ps, ", k_chunk%d, k_total%d", g, g);
        buf_printf(params, " chunk%d total%d", g, g);
    }
    int D = ir->kind == KILN_FUSE_MAP ? ir->ndim_out : ir->ndim_out - (ir->keepdims ? 1 : 0);
    if (ir->kind == KILN_FUSE_ALL) {
        buf_puts(&ps, ", k_np, k_phase");
        buf_puts(params, " np phase");
    } else if ((w.gpu && ir->kind == KILN_FUSE_MAP && D > 1) || (!w.gpu && D > 3)) {
        buf_puts(&ps, ", k_nz");
        buf_puts(params, " nz");
    }
    if (has_rows(ir)) { /* the row operands' length: a column is a position modulo it */
        buf_puts(&ps, ", k_cols");
        buf_puts(params, " cols");
    }
    buf_printf(out, "def __kiln_fuse_%s(%s):\n", ir->name, ps.p);
    switch (ir->kind) {
    case KILN_FUSE_MAP: write_map(&w, out); break;
    case KILN_FUSE_ROWS: write_rows(&w, out); break;
    case KILN_FUSE_ALL: write_all(&w, out); break;
    }
}
