/* emit_intrinsic.c: calls of kiln's intrinsics as C or CUDA C++ text.
 *
 * Atomics (on arrays and on shared or local storage), math functions by type
 * (the float32 names on the CPU, CUDA's intrinsics and libdevice on the GPU),
 * float16's own functions (cuda.fp16), and every other intrinsic sema typed:
 * thread and block indices, warp operations, casts, min/max/abs/round, array
 * attributes.  Each maps onto the preludes' KILN_* macros and functions; the
 * operands are written by emit_expr.c.
 */
#include "emit_int.h"

static int storage_index(Emit *E, const Node *n) {
    for (int i = 0; i < E->f->storage.n; i++)
        if (E->f->storage.v[i] == n) return i;
    return -1;
}

static void emit_atomic(Emit *E, Node *n) {
    NodeList *a = &n->call.bound;
    Node *arr = a->v[0];
    const Type *el = arr->ty->elem;
    const char *ct = emit_ctype(E, el);
    static const char *const ops[] = {"add", "sub", "max", "min", "exch", "cas", "and",
                                      "or",  "xor", "inc", "dec", "nanmax", "nanmin"};
    int sub = n->intr->sub;
    const char *b = emit_expr_str(E, arr, NULL);
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
        emit_index_strings(E, &one, ix, nn);
        Buf off;
        buf_init_arena(&off, &E->C->arena);
        emit_index_of(E, b, arr->ty, ix, nn, emit_loc(E, n->sp), &off);
        addr = arena_printf(&E->C->arena, "&%s.data[%s]", b, off.p ? off.p : "0");
        buf_free(&off);
        first_val = 2;
    }
    if (E->f->is_kernel && !E->acc_mem && arr->kind == E_NAME && arr->sym && arr->sym->param >= 0 &&
        arr->sym->param < 64 && ((E->plan.priv >> arr->sym->param) & 1)) {
        /* a private copy when the entry made one (plan.h) */
        const char *v = emit_expr_str(E, a->v[2], el);
        int p = arr->sym->param;
        if ((E->plan.acc >> p) & 1) { /* a reduction variable, or none */
            int64_t c = 0;
            int s = 0;
            sema_const_int(a->v[1], &c); /* (plan.c: a constant of one of the slots) */
            while (s + 1 < E->plan.acc_n[p] && E->plan.acc_index[p][s] != c) s++;
            if (sub == IA_MAX || sub == IA_MIN)
                P("kiln_acc%s_%s(ra%d_%d_, %s)", sub == IA_MAX ? "max" : "min", ct, p, s, v);
            else
                P("(void)(*ra%d_%d_ %s= (%s))", p, s, sub == IA_SUB ? "-" : "+", v);
            return;
        }
        P("(pv%d_ ? (void)(*(%s) %s= (%s)) : (void)kiln_atomic_%s_%s(%s, %s))", arr->sym->param,
          addr, sub == IA_SUB ? "-" : "+", v, ops[sub], ct, addr, v);
        return;
    }
    if (E->spin) PS("KILN_SPIN_("); /* the other fibers run after it (rt_blocks.h) */
    P("kiln_atomic_%s_%s(%s", ops[sub], ct, addr);
    for (int i = first_val; i < a->n; i++) {
        PS(", ");
        emit_expr_as(E, a->v[i], el);
    }
    PS(E->spin ? "))" : ")");
}

void emit_math_call(Emit *E, const char *name, const Type *t, Node **args, int nargs) {
    bool f = emit_is_f32(t);
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
    /* both targets: kiln's own sequence (rt_common.h), a third of libdevice's */
    if (E->fastmath && f && strcmp(name, "erfc") == 0) fast = "kiln_erfcf_fast";
    /* the GPU's precise path: kiln's own where it is cheaper within libdevice's bound
     * (rt_mathf.h) */
    else if (!E->fastmath && E->cuda && f && strcmp(name, "erfc") == 0) fast = "kiln_erfcf";
    /* pow(x, 0.5): gcc's vectoriser makes a constant 0.5 exponent a vector sqrt, whose
     * -0.0 and -inf differ from pow's 0.0 and inf: kiln's own, the same on every path */
    if (!fast && nargs == 2 && strcmp(name, "pow") == 0 && (args[1]->flags & NF_CONST) &&
        args[1]->ty->kind == TY_FLOAT && args[1]->cval.f == 0.5) {
        P("kiln_pow_half_%s(", f ? "f32" : "f64");
        emit_expr_as(E, args[0], ty_strong(t));
        PS(")");
        return;
    }
    if (fast) P("%s(", fast);
    else P("%s%s(", name, f ? "f" : "");
    for (int i = 0; i < nargs; i++) {
        if (i) PS(", ");
        emit_expr_as(E, args[i], ty_strong(t));
    }
    PS(")");
}

/* kiln.fp16's functions (Numba's cuda.fp16): float16 operands in f32; + - * fma,
 * neg, abs and the comparisons as rt_half.h's functions (native half precision on
 * the GPU), the others computed in float32 and rounded to float16, as CUDA's half
 * functions do. */
static void fp16_call(Emit *E, Node *n) {
    static const char *const fn1[] = {"sinf", "cosf", "logf", "log2f", "log10f", "expf",
                                      "exp2f", "kiln_exp10h", "sqrtf", "kiln_rsqrth",
                                      "ceilf", "floorf", "", "truncf", "rintf"};
    const Type *h = ty_scalar(KILN_FLOAT16);
    Node **a = n->call.bound.v;
    int sub = n->intr->sub;
    E->half = true;
    if (sub == IH_FMA || sub <= IH_MUL || (sub >= IH_EQ && sub <= IH_LE)) {
        /* rt_half.h's kiln_hadd, kiln_hfma, kiln_hgt...: native on the GPU */
        static const char *const hf[] = {"kiln_hadd(", "kiln_hsub(", "kiln_hmul(", "", "", "",
                                         "kiln_heq(",  "kiln_hne(",  "kiln_hgt(",  "kiln_hge(",
                                         "kiln_hlt(",  "kiln_hle(",  "kiln_hfma("};
        PS(hf[sub]);
        for (int i = 0; i < (sub == IH_FMA ? 3 : 2); i++) {
            if (i) PS(", ");
            emit_expr_as(E, a[i], h);
        }
        PS(")");
        return;
    }
    if (sub <= IH_MIN) { /* hdiv, hmax, hmin */
        PS(sub == IH_DIV ? "kiln_hr(" : sub == IH_MAX ? "kiln_hmax0(" : "kiln_hmin0(");
        emit_expr_as(E, a[0], h);
        PS(sub == IH_DIV ? " / " : ", ");
        emit_expr_as(E, a[1], h);
        PS(")");
        return;
    }
    if (sub == IH_NEG || sub == IH_ABS) {
        PS(sub == IH_NEG ? "kiln_hneg(" : "kiln_habs(");
        emit_expr_as(E, a[0], h);
        PS(")");
        return;
    }
    if (sub == IH_RCP) PS("kiln_hr(1.0f / ");
    else P("kiln_hr(%s(", fn1[sub - IH_SIN]);
    emit_expr_as(E, a[0], h);
    PS(sub == IH_RCP ? ")" : "))");
}

static void intrinsic_text(Emit *E, Node *n);

/* complex() and cmath's functions, and abs() and isnan() & co. of a complex
 * number: their arguments converted to the operation's type, then the call
 * (emit_complex.c). */
static bool complex_intrinsic(Emit *E, Node *n) {
    const Intrinsic *in = n->intr;
    const Type *ot = n->opty;
    bool cx = ot && ot->kind == TY_COMPLEX;
    if (!(in->kind == IK_CMATH || in->kind == IK_COMPLEX ||
          (cx && (in->kind == IK_ABS || in->kind == IK_PRED))))
        return false;
    const char *args[2] = {NULL, NULL};
    for (int i = 0; i < n->call.bound.n && i < 2; i++)
        if (n->call.bound.v[i]) args[i] = emit_expr_str(E, n->call.bound.v[i], ot);
    emit_complex_call(E, n, args);
    return true;
}

void emit_call_intrinsic(Emit *E, Node *n) {
    /* float16 results of float32 functions are rounded (rt_half.h); fma in float64,
     * where the product is exact, so that it rounds once */
    const Type *ot = n->opty;
    switch ((IntrKind)n->intr->kind) {
    case IK_PRINT:
        emit_print(E, n);
        return;
    case IK_NPCMP: /* numpy.less(a, b): the comparison sema made (ufunc_stmt.c), or
                    * NumPy's order of complex numbers (emit_npufunc.c) */
        if (!emit_npufunc(E, n)) emit_expr(E, n->call.bound.v[0]);
        return;
    case IK_BF16:
    case IK_BF16CVT: { /* the operands as text of the parameter type (sema_bf16.c) */
        const char *args[3] = {NULL, NULL, NULL};
        for (int i = 0; i < n->call.bound.n && i < 3; i++)
            if (n->call.bound.v[i])
                args[i] = arena_printf(&E->C->arena, "(%s)",
                                       emit_expr_str(E, n->call.bound.v[i], ot));
        emit_bf16_call(E, n, args);
        return;
    }
    case IK_FMA:
        if (emit_narrow(ot)) {
            E->half = true;
            Node **a = n->call.bound.v;
            if (emit_narrow(ot) == 'h') { /* rt_half.h's kiln_hfma: fma.rn.f16 on the GPU */
                PS("kiln_hfma(");
                emit_expr_as(E, a[0], ot);
                PS(", ");
                emit_expr_as(E, a[1], ot);
                PS(", ");
                emit_expr_as(E, a[2], ot);
            } else { /* bfloat16: in float64, where the product is exact, rounded once */
                P("kiln_%crd((f64)", emit_narrow(ot));
                emit_expr_as(E, a[0], ot);
                PS(" * (f64)");
                emit_expr_as(E, a[1], ot);
                PS(" + (f64)");
                emit_expr_as(E, a[2], ot);
            }
            PS(")");
            return;
        }
        break;
    case IK_MATH1:
    case IK_MATH2:
    case IK_LOG:
    case IK_LDEXP:
    case IK_ROUND: {
        bool h = emit_half_open(E, n->ty);
        intrinsic_text(E, n);
        emit_half_close(E, h);
        return;
    }
    default: break;
    }
    intrinsic_text(E, n);
}

/* The integer of a float that rounding already made whole (fn: "floor", "trunc", "rint",
 * or NULL for int()'s truncation), into type ct.  On the CPU through kiln_f2i64, whose
 * value for NaN and floats past int64 is x86's (INT64_MIN) on both tiers: gcc otherwise
 * folds (double)(long)x into trunc(x), keeping NaN or -0.0 in what is typed an integer,
 * where tier 0 gives INT64_MIN and 0.  On the GPU kiln_f2i64 (rt_cuda.h) too, for the
 * same values where PTX's conversion saturates (inf: INT64_MAX). */
static void float_to_int(Emit *E, const char *fn, const Type *ft, Node *x, const char *ct,
                         bool index) {
    if (E->cuda) /* (the float32 test in float32: no double work on the GPU) */
        P("((%s)kiln_f2i64%s(", ct, emit_is_f32(ft) ? "f" : "");
    else if (index && !fn) /* an index's int(): no trunc, float32 kept (rt_cpu.h) */
        P("((%s)kiln_f2i64ix%s(", ct, emit_is_f32(ft) ? "f" : "");
    else
        P("((%s)kiln_f2i64((f64)", ct);
    if (fn) emit_math_call(E, fn, ft, &x, 1);
    else emit_expr_as(E, x, ft);
    PS("))");
}

static void intrinsic_text(Emit *E, Node *n) {
    const Intrinsic *in = n->intr;
    Node **a = n->call.bound.v;
    int na = n->call.bound.n;
    const Type *ot = n->opty;
    if (complex_intrinsic(E, n) || emit_npufunc(E, n) || emit_reduce(E, n)) return;
    switch ((IntrKind)in->kind) {
    case IK_GRID:
    case IK_GRIDSIZE: {
        int64_t nd = 1;
        sema_const_int(a[0], &nd);
        const char *ax[3] = {"X", "Y", "Z"};
        if (nd > 1) P("%s(", emit_tuple_make(E, n->ty));
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
        if (!E->cuda) { /* block mode's fibers (rt_blocks.h) */
            if (in->sub >= IY_AND) {
                /* kiln_sync_pred_'s kinds: 0 count, 1 and, 2 or */
                P("((i32)kiln_sync_pred_(B_, %d, (int)",
                  in->sub == IY_COUNT ? 0 : in->sub == IY_AND ? 1 : 2);
                emit_truthy(E, a[0]);
                PS("))");
            } else { /* syncwarp waits for its warp, syncthreads for the block */
                PS(in->sub ? "kiln_wsync_(B_)" : "kiln_sync_(B_)");
            }
            return;
        }
        if (in->sub >= IY_AND) {
            static const char *const f[] = {"__syncthreads_and", "__syncthreads_or",
                                            "__syncthreads_count"};
            P("((i32)%s((int)", f[in->sub - IY_AND]);
            emit_truthy(E, a[0]);
            PS("))");
            return;
        }
        if (in->sub) {
            PS("__syncwarp(");
            if (a[0]) emit_expr_as(E, a[0], ty_scalar(KILN_UINT32));
            else PS("0xffffffffu");
            PS(")");
        } else {
            PS("__syncthreads()");
        }
        return;
    case IK_CG: /* the group has no value: this_grid() is 0, and sync() waits for the grid
                 * (the CPU's fibers, rt_blocks.h; the GPU's barrier, rt_cuda.h) */
        if (in->sub == IG_THIS_GRID) PS("((i64)0)");
        else PS(E->cuda ? "kiln_grid_sync_()" : "kiln_grid_sync_(B_)");
        return;
    case IK_THREADFENCE:
        if (!E->cuda) PS(E->spin ? "(KILN_FENCE(), kiln_yield_(B_))" : "KILN_FENCE()");
        else PS(in->sub == 0 ? "__threadfence()" : in->sub == 1 ? "__threadfence_block()" : "__threadfence_system()");
        return;
    case IK_SHARED_ARRAY:
    case IK_LOCAL_ARRAY: {
        int64_t dims[KILN_MAX_NDIM];
        int nd = sema_shape(a[0], dims, KILN_MAX_NDIM);
        const char *tn = emit_ctype(E, n->ty);
        int k = storage_index(E, n);
        bool dyn = in->kind == IK_SHARED_ARRAY && nd == 1 && dims[0] == 0;
        if (dyn) {
            P("%s_local((%s *)kiln_dsmem, (i64)(KILN_DSMEM_BYTES / sizeof(%s)))", tn,
              emit_elem_ctype(E, n->ty->elem), emit_elem_ctype(E, n->ty->elem));
            return;
        }
        P("%s_local(%s%d", tn, in->kind == IK_SHARED_ARRAY ? "sst" : "lst", k);
        for (int i = 0; i < nd; i++) P(", %lldLL", (long long)dims[i]);
        PS(")");
        return;
    }
    case IK_ATOMIC: emit_atomic(E, n); return;
    case IK_CACHE: emit_cache_hint(E, n); return;
    case IK_SHFL: {
        static const char *const f[] = {"__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync",
                                        "__shfl_sync"};
        if (!E->cuda) { /* block mode's fibers: kiln_shfl_T(B_, kind, value, lane or delta) */
            P("kiln_shfl_%s(B_, %d, ", emit_ctype(E, ot), in->sub);
            emit_expr_as(E, a[1], ot);
            PS(", (long long)");
            emit_expr_as(E, a[2], ty_scalar(KILN_INT32));
            PS(")");
            return;
        }
        P("%s(", f[in->sub]);
        emit_expr_as(E, a[0], ty_scalar(KILN_UINT32));
        PS(", ");
        emit_expr_as(E, a[1], ot);
        PS(", ");
        emit_expr_as(E, a[2], ty_scalar(KILN_INT32));
        PS(")");
        return;
    }
    case IK_VOTE: {
        static const char *const f[] = {"__ballot_sync", "__all_sync", "__any_sync", "__uni_sync"};
        if (!E->cuda) { /* block mode: kiln_vote_(B_, kind, mask, predicate) */
            if (in->sub == 3) PS("((kbool)kiln_vote_eq_(B_, (unsigned)(");
            else P("((%s)kiln_vote_(B_, %d, (unsigned)(", in->sub ? "kbool" : "u32", in->sub);
            emit_expr_as(E, a[0], ty_scalar(KILN_UINT32));
            PS("), ");
            emit_truthy(E, a[1]);
            PS("))");
            return;
        }
        P("(%s(", f[in->sub]);
        emit_expr_as(E, a[0], ty_scalar(KILN_UINT32));
        PS(", ");
        emit_truthy(E, a[1]);
        PS(in->sub ? ") != 0)" : "))");
        return;
    }
    case IK_ACTIVEMASK:
        if (in->sub == 1) PS(E->cuda ? "kiln_lanemask_lt()" : "((u32)((1ull << KILN_LANEID) - 1ull))");
        else if (E->cuda) PS("__activemask()");
        else P("kiln_activemask_(B_, %uu)", (unsigned)n->sp.off); /* the site: its place */
        return;
    case IK_CONST_ARRAY: emit_expr(E, a[0]); return; /* the frozen array (constmem) */
    case IK_VIEW: emit_view(E, n); return;
    case IK_NAMEDTUPLE: /* Point(x, y): made as the tuple (x, y) is */
        P("%s(", emit_tuple_make(E, n->ty));
        for (int i = 0; i < na; i++) {
            if (i) PS(", ");
            emit_expr(E, a[i]);
        }
        PS(")");
        return;
    case IK_ARRAY_COPY: /* the elements copied into the call's local storage */
        P("%s(", emit_array_copy_fn(E, a[0]->ty));
        emit_expr(E, a[0]);
        P(", lst%d)", storage_index(E, n));
        return;
    case IK_RESHAPE: { /* a C-order view: data of a, extents from kiln_reshape_dim */
        const char *bs = emit_expr_str(E, a[0], NULL), *d[KILN_MAX_NDIM];
        int nd = 0;
        for (int i = 1; i < na; i++) {
            Node *x = a[i];
            if (x->ty->kind != TY_TUPLE) {
                d[nd++] = emit_expr_str(E, x, ty_scalar(KILN_INT64));
            } else if (x->kind == E_TUPLE) {
                for (int k = 0; k < x->tuple.n; k++)
                    d[nd++] = emit_expr_str(E, x->tuple.v[k], ty_scalar(KILN_INT64));
            } else {
                const char *ts = emit_expr_str(E, x, NULL);
                for (int k = 0; k < x->ty->n; k++)
                    d[nd++] = arena_printf(&E->C->arena, "((i64)(%s).f%d)", ts, k);
            }
        }
        Buf total;
        buf_init_arena(&total, &E->C->arena);
        for (int k = 0; k < a[0]->ty->ndim; k++)
            buf_printf(&total, "%s(%s).shape[%d]", k ? " * " : "", bs, k);
        int line = emit_loc(E, n->sp);
        P("%s_local((%s).data", emit_ctype(E, n->ty), bs);
        for (int k = 0; k < nd; k++) {
            P(", kiln_reshape_dim(E_, %d, %s, %d, %d", line, total.p, k, nd);
            for (int j = 0; j < KILN_MAX_NDIM; j++) P(", %s", j < nd ? d[j] : "1");
            PS(")");
        }
        PS(")");
        return;
    }
    case IK_MATCH: {
        /* match_all_sync's (mask, predicate) pair is made in a statement expression (cc and
         * tcc) or an immediately called lambda (NVRTC, which has no statement expressions) */
        const char *mk = in->sub ? emit_tuple_make(E, n->ty) : NULL;
        if (E->cuda) {
            if (mk) PS("[&]() { int kp_; unsigned km_ = __match_all_sync((unsigned)(");
            else PS("__match_any_sync((unsigned)(");
        } else {
            if (mk) PS("({ unsigned long long km_ = kiln_match_(B_, 1, (unsigned)(");
            else PS("((u32)kiln_match_(B_, 0, (unsigned)(");
        }
        emit_expr_as(E, a[0], ty_scalar(KILN_UINT32));
        PS("), ");
        if (!E->cuda && ot->kind == TY_FLOAT) P("kiln_fbits%d_(", ty_bits(ot));
        else if (!E->cuda) PS("(unsigned long long)(i64)(");
        else P("(%s)(", emit_ctype(E, ot));
        emit_expr_as(E, a[1], ot);
        PS(")");
        if (E->cuda && mk) P(", &kp_); return %s(km_, (kbool)(kp_ != 0)); }()", mk);
        else if (mk) P("); %s((u32)km_, (kbool)(km_ >> 32)); })", mk);
        else PS(E->cuda ? ")" : "))");
        return;
    }
    case IK_MATH1: emit_math_call(E, math1_names[in->sub], ot, a, 1); return;
    case IK_MATH2:
        if (ty_is_int(ot)) { /* numpy.fmod of integers (sema_call.c) */
            const Type *w = ty_scalar(ty_is_signed(ot) ? KILN_INT64 : KILN_UINT64);
            P("((%s)kiln_fmod_%s(", emit_ctype(E, ot), ty_is_signed(ot) ? "i64" : "u64");
            emit_expr_as(E, a[0], w);
            PS(", ");
            emit_expr_as(E, a[1], w);
            PS("))");
            return;
        }
        emit_math_call(E, math2_names[in->sub], ot, a, 2);
        return;
    case IK_FMA: emit_math_call(E, "fma", ot, a, 3); return;
    case IK_BITS: {
        /* counted in the argument type's width W, through the 64-bit helper */
        static const char *const fn[] = {"kiln_popc64", "kiln_brev64", "kiln_clz64", "kiln_ffs64",
                                         "kiln_popc64"};
        int w = ty_bits(ot);
        if (in->sub == IB_BITCOUNT && ty_is_signed(ot)) {
            /* Python counts the bits of |x|; |INT_MIN| is its own bit pattern, unsigned */
            P("((%s)kiln_popc64(kiln_abs_bits64((i64)(", emit_ctype(E, ot));
            emit_expr_as(E, a[0], ot);
            PS("))))");
            return;
        }
        P("((%s)(%s((u64)(u%d)(", emit_ctype(E, ot), fn[in->sub], w);
        emit_expr_as(E, a[0], ot);
        PS("))");
        if (in->sub == IB_BREV && w < 64) P(" >> %d", 64 - w);
        if (in->sub == IB_CLZ && w < 64) P(" - %d", 64 - w);
        PS("))");
        return;
    }
    case IK_LDEXP: {
        /* a uint64 exponent past 2**63 is clamped before it becomes an int64 (negative) */
        bool u64 = a[1]->ty->kind == TY_INT && a[1]->ty->dtype == KILN_UINT64 && !a[1]->ty->weak;
        P("kiln_ldexp%s(", emit_is_f32(ot) ? "f" : "");
        emit_expr_as(E, a[0], ot);
        PS(u64 ? ", kiln_ldexp_u(" : ", (i64)(");
        emit_expr(E, a[1]);
        PS("))");
        return;
    }
    case IK_VECTOR: { /* the lanes' sources: scalars as the lane type, vectors as they are */
        const char **args = arena_alloc(&E->C->arena, sizeof(char *) * (size_t)(na + 1));
        const Type **tys = arena_alloc(&E->C->arena, sizeof(Type *) * (size_t)(na + 1));
        for (int i = 0; i < na; i++) {
            const Type *at = n->call.bound.v[i]->ty;
            tys[i] = ty_is_vector(at) ? at : ot;
            args[i] = emit_expr_str(E, n->call.bound.v[i], tys[i]);
        }
        emit_vector_make(E, n->ty, na, tys, args);
        return;
    }
    case IK_SPLIT:
        /* one helper per result type returns both parts: the argument is evaluated once */
        P("%s(", emit_split_fn(E, n->ty, in->sub));
        emit_expr_as(E, a[0], ot);
        PS(")");
        return;
    case IK_SELP: {
        /* a function of three values, as Numba's cuda.selp (PTX selp): the operands
         * evaluated in order, then one chosen; C's ?: alone would evaluate only the
         * chosen one, and the GPU would branch around a load instead of selecting */
        if ((a[1]->flags & NF_CONST) && (a[2]->flags & NF_CONST)) {
            PS("(");
            emit_truthy(E, a[0]);
            PS(" ? ");
            emit_expr_as(E, a[1], ot);
            PS(" : ");
            emit_expr_as(E, a[2], ot);
            PS(")");
            return;
        }
        const char *ct = emit_ctype(E, ot);
        int t = E->tmp;
        E->tmp += 3;
        emit_sx_open(E, ot);
        P("kbool t%d = ", t);
        emit_truthy(E, a[0]);
        P("; %s t%d = ", ct, t + 1);
        emit_expr_as(E, a[1], ot);
        P("; %s t%d = ", ct, t + 2);
        emit_expr_as(E, a[2], ot);
        PS("; ");
        emit_sx_close(E, arena_printf(&E->C->arena, "t%d ? t%d : t%d", t, t + 1, t + 2));
        return;
    }
    case IK_LOG:
        if (!a[1]) {
            emit_math_call(E, "log", ot, a, 1);
        } else {
            PS("(");
            emit_math_call(E, "log", ot, a, 1);
            PS(" / ");
            emit_math_call(E, "log", ot, a + 1, 1);
            PS(")");
        }
        return;
    case IK_ROUNDING: {
        static const char *const f[] = {"floor", "ceil", "trunc"};
        if (ot->kind != TY_FLOAT) {
            if (in->flags & IF_NUMPY) {
                P("%s((f64)", f[in->sub]);
                emit_expr(E, a[0]);
                PS(")");
            } else {
                emit_expr_as(E, a[0], ot);
            }
            return;
        }
        if (in->flags & IF_NUMPY) {
            emit_math_call(E, f[in->sub], ot, a, 1);
            return;
        }
        if (emit_is_f16(ot)) {
            P("((%s)", emit_ctype(E, n->ty));
            emit_math_call(E, f[in->sub], ot, a, 1);
            PS(")");
            return;
        }
        float_to_int(E, f[in->sub], ot, a[0], emit_ctype(E, n->ty), false);
        return;
    }
    case IK_PRED: {
        static const char *const f[] = {"isnan", "isinf", "isfinite"};
        if (ot->kind != TY_FLOAT) {
            PS(in->sub == 2 ? "((kbool)1)" : "((kbool)0)");
            return;
        }
        P("((kbool)%s(", f[in->sub]);
        emit_expr(E, a[0]);
        PS("))");
        return;
    }
    case IK_ABS:
        if (emit_is_f16(ot)) { /* abs.f16 on the GPU (rt_half.h) */
            E->half = true;
            PS("kiln_habs(");
            emit_expr_as(E, a[0], ot);
            PS(")");
        } else if (ot->kind == TY_FLOAT) {
            emit_math_call(E, "fabs", ot, a, 1);
        } else if (!ty_is_signed(ot)) {
            emit_expr_as(E, a[0], ot);
        } else {
            P("((%s)kiln_abs_i64(", emit_ctype(E, ot));
            emit_expr_as(E, a[0], ty_scalar(KILN_INT64));
            PS("))");
        }
        return;
    case IK_SIGN:
        if (ot->kind == TY_FLOAT) {
            P("kiln_sign_%s(", emit_ctype(E, ot));
            emit_expr_as(E, a[0], ot);
            PS(")");
        } else if (ot->kind == TY_INT && !ty_is_signed(ot)) {
            /* unsigned: 0 or 1 (uint64 past 2^63 is not negative) */
            P("((%s)((", emit_ctype(E, ot));
            emit_expr(E, a[0]);
            PS(") != 0))");
        } else {
            P("((%s)kiln_sign_i64((i64)", emit_ctype(E, ot));
            emit_expr(E, a[0]);
            PS("))");
        }
        return;
    case IK_MINMAX:
    case IK_NPMINMAX: {
        const char *ct = emit_ctype(E, ot);
        bool npf = in->kind == IK_NPMINMAX && ot->kind == TY_FLOAT;
        const char *fn = npf ? (in->sub ? "kiln_npmax" : "kiln_npmin") : (in->sub ? "kiln_max" : "kiln_min");
        for (int i = na - 1; i >= 1; i--) P("%s_%s(", fn, ct);
        emit_expr_as(E, a[0], ot);
        for (int i = 1; i < na; i++) {
            PS(", ");
            emit_expr_as(E, a[i], ot);
            PS(")");
        }
        return;
    }
    case IK_POWER:
    case IK_BINOP: break; /* handled as a binary operator below */
    case IK_INT:
    case IK_FLOAT:
        if (!a[0]) {
            emit_const(E, n->ty, n->cval);
            return;
        }
        if (in->kind == IK_INT && a[0]->ty->kind == TY_FLOAT && !emit_is_f16(a[0]->ty) &&
            ty_is_int(n->ty)) { /* int(-0.25) is 0: as math.trunc above */
            float_to_int(E, NULL, a[0]->ty, a[0], emit_ctype(E, n->ty), E->index_root == n);
            return;
        }
        P("((%s)", emit_ctype(E, n->ty));
        emit_expr(E, a[0]);
        PS(")");
        return;
    case IK_BOOL:
        if (!a[0]) PS("((kbool)0)");
        else emit_truthy(E, a[0]);
        return;
    case IK_ROUND:
        if (ot->kind == TY_FLOAT) {
            if (!a[1] && !emit_is_f16(ot) && ty_is_int(n->ty)) {
                float_to_int(E, "rint", ot, a[0], emit_ctype(E, n->ty), false);
            } else if (!a[1]) {
                P("((%s)rint%s(", emit_ctype(E, n->ty), emit_fsuffix(ot));
                emit_expr_as(E, a[0], ot);
                PS("))");
            } else {
                P("kiln_round_%s(", emit_ctype(E, ot));
                emit_expr_as(E, a[0], ot);
                PS(", ");
                emit_expr_as(E, a[1], ty_scalar(KILN_INT64));
                PS(")");
            }
        } else if (a[1]) {
            bool u64 = a[0]->ty->kind == TY_INT && a[0]->ty->dtype == KILN_UINT64 && !a[0]->ty->weak;
            P(u64 ? "((%s)kiln_round_u64((u64)" : "((%s)kiln_round_i64((i64)", emit_ctype(E, ot));
            emit_expr(E, a[0]);
            PS(", ");
            emit_expr_as(E, a[1], ty_scalar(KILN_INT64));
            PS("))");
        } else {
            emit_expr_as(E, a[0], ot);
        }
        return;
    case IK_FROM_BUFFER: {
        const char *b = emit_expr_str(E, a[0], NULL);
        if (ty_is_ptr(a[0]->ty)) P("%s", b);
        else if (E->cuda) P("%s{(%s).data}", emit_ctype(E, n->ty), b); /* C++: no compound literal */
        else P("((%s){(%s).data})", emit_ctype(E, n->ty), b);
        return;
    }
    case IK_LEN: {
        const char *b = emit_expr_str(E, a[0], NULL);
        P("(%s).shape[0]", b);
        return;
    }
    case IK_FP16: fp16_call(E, n); return;
    case IK_LIBDEVICE: {
        /* emit_libdevice.c's wrapper of __nv_NAME, the arguments in its parameter types */
        const LibdeviceFn *f = libdevice_fn(n->intr);
        P("kiln_ld_%s(", f->name);
        for (int k = 0, i = 0; f->params[k]; k++) {
            if (f->outs >> k & 1) continue;
            if (i) PS(", ");
            emit_expr_as(E, a[i++], libdevice_type(f->params[k]));
        }
        PS(")");
        return;
    }
    default: break;
    }
    UNREACHABLE();
}
