/* emit_expr.c: expressions as C or CUDA C++ text.
 *
 * Conversions are where sema recorded them: each operation's operands are
 * converted to its `opty`.  Values that Python evaluates once but C would
 * evaluate twice (the middle of a chained comparison, the left of a
 * non-boolean `or`) use a statement expression (emit_sx_open).  Subscripts are
 * checked (debug=True) or wrapped for negative indices unless sema proved them
 * non-negative; intrinsics map to the preludes' KILN_* macros and functions.
 */
#include "emit_int.h"

/* ---- expressions ------------------------------------------------------------------ */

/* Renders an expression to a string (for text used more than once). */
/* A thread's lane in its warp: in block lanes (no fiber is running) its index in the
 * block mod 32, from tx_, ty_, tz_, which a lane loop and the device functions it calls
 * have as the lane's. */
static const char *laneid(const Emit *E) {
    return !E->cuda && E->plan.lanes.block ? "((long long)((tx_ + BX_ * (ty_ + BY_ * tz_)) & 31))"
                                           : "KILN_LANEID";
}

const char *emit_expr_str(Emit *E, Node *n, const Type *as) {
    Buf tmp, *saved = E->o;
    buf_init_arena(&tmp, &E->C->arena);
    E->o = &tmp;
    if (as) emit_expr_as(E, n, as);
    else emit_expr(E, n);
    E->o = saved;
    return tmp.p ? tmp.p : "";
}

void emit_expr_as(Emit *E, Node *n, const Type *to) {
    if (!to || !n->ty || ty_equal(n->ty, to) || emit_same_ctype(E, n->ty, to)) {
        emit_expr(E, n);
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
    emit_convert(E, n->ty, to, emit_expr_str(E, n, NULL));
}

void emit_truthy(Emit *E, Node *n) {
    if (n->ty->kind == TY_BOOL) {
        emit_expr(E, n);
        return;
    }
    if (n->ty->kind == TY_COMPLEX) {
        P("kiln_nz_%s(", emit_cname(E, n->ty));
        emit_expr(E, n);
        PS(")");
        return;
    }
    PS("(");
    emit_expr(E, n);
    PS(" != 0)");
}

/* One index as an i64 string. */
static const char *index_str(Emit *E, Node *x) {
    const Node *outer = E->index_root;
    E->index_root = x;
    const char *s = emit_expr_str(E, x, ty_scalar(KILN_INT64));
    E->index_root = outer;
    return s;
}

/* The indices of a full subscript as i64 strings, from index nodes or a tuple. */
int emit_index_strings(Emit *E, NodeList *idx, const char **ix, bool *nn) {
    if (idx->n == 1 && idx->v[0]->ty->kind == TY_TUPLE) {
        Node *t = idx->v[0];
        if (t->kind == E_TUPLE) {
            for (int k = 0; k < t->tuple.n; k++) {
                ix[k] = index_str(E, t->tuple.v[k]);
                nn[k] = (t->tuple.v[k]->flags & NF_NONNEG) != 0;
            }
            return t->tuple.n;
        }
        const char *ts = emit_expr_str(E, t, NULL);
        for (int k = 0; k < t->ty->n; k++) {
            ix[k] = arena_printf(&E->C->arena, "((i64)(%s).f%d)", ts, k);
            nn[k] = !ty_is_signed(t->ty->elems[k]) || sema_elem_nonneg(t, k);
        }
        return t->ty->n;
    }
    for (int k = 0; k < idx->n; k++) {
        ix[k] = index_str(E, idx->v[k]);
        /* a grid-stride loop's counter where it runs flat is the position (plan_stride.c) */
        nn[k] = (idx->v[k]->flags & NF_NONNEG) != 0 ||
                (E->flat_counter && idx->v[k]->kind == E_NAME && idx->v[k]->sym == E->flat_counter);
    }
    return idx->n;
}

/* The alignment a field's type needs: its size, a complex number's part's size. */
static int64_t field_align(const kiln_field *f) {
    int64_t a = kiln_dtype_size((kiln_dtype)f->dtype);
    return f->dtype == KILN_COMPLEX64 || f->dtype == KILN_COMPLEX128 ? a / 2 : a;
}

/* r.f of a record r as an lvalue: the field's bytes at its offset from the record's
 * address, read as its type.  A field whose offset or record size is not a multiple of
 * its alignment (a packed dtype) is read through a type of alignment 1 on the CPU; sema
 * refuses it on the GPU, as Numba does. */
const char *emit_field(Emit *E, Node *n) {
    Node *base = n->attr.base;
    const kiln_field *f = ty_field(base->ty, n->attr.attr);
    const char *r = emit_expr_str(E, base, NULL);
    const Type *ft = ty_scalar((kiln_dtype)f->dtype);
    const char *ct = emit_elem_ctype(E, ft);
    int64_t a = field_align(f);
    if (f->offset % a != 0 || base->ty->rec->itemsize % a != 0) {
        const char *u = arena_printf(&E->C->arena, "KU_%s", ct);
        if (!emit_registered(E, u))
            buf_printf(&E->types, "typedef %s %s __attribute__((aligned(1)));\n", ct, u);
        ct = u;
    }
    return arena_printf(&E->C->arena, "(*(%s *)((unsigned char *)(%s) + %lld))", ct, r,
                        (long long)f->offset);
}

/* "base.data[offset]" for a full subscript, as an lvalue (r.f for a record's field). */
const char *emit_element(Emit *E, Node *n) {
    if (n->kind == E_ATTR) return emit_field(E, n);
    if (E->vec) { /* kiln_body_v: the element read, or the one stored with its flag set */
        int p = vec_param_of(E->vec, n);
        if (p >= 0)
            return (E->vec->stores >> p) & 1 ? arena_printf(&E->C->arena, "(*(*vw%d_ = 1, vs%d_))", p, p)
                                             : arena_printf(&E->C->arena, "vl%d_", p);
    }
    Node *base = n->sub.base;
    const char *b = emit_expr_str(E, base, NULL);
    if (base->kind != E_NAME) b = arena_printf(&E->C->arena, "(%s)", b);
    const char *ix[KILN_MAX_NDIM];
    bool nn[KILN_MAX_NDIM];
    emit_index_strings(E, &n->sub.idx, ix, nn);
    Buf off;
    buf_init_arena(&off, &E->C->arena);
    emit_index_of(E, b, base->ty, ix, nn, emit_loc(E, n->sp), &off);
    /* a 0-d array's a[()] has no index: its one element */
    const char *r = arena_printf(&E->C->arena, "%s.data[%s]", b, off.p && off.len ? off.p : "0");
    buf_free(&off);
    return r;
}

/* A view: a helper function per site computes the new array struct. */
static void view(Emit *E, Node *n) {
    Node *base = n->sub.base;
    const Type *bt = base->ty, *rt = n->ty;
    const char *bn = emit_ctype(E, bt), *rn = emit_ctype(E, rt);
    int id = E->nhelp++;
    Buf *h = &E->helpers;
    NodeList *idx = &n->sub.idx;
    bool from_tuple = idx->n == 1 && idx->v[0]->ty->kind == TY_TUPLE;
    buf_printf(h, "KILN_FN %s kview%d(struct kiln_err *E_, %s a", rn, id, bn);
    Buf args;
    buf_init_arena(&args, &E->C->arena);
    int nargs = 0;
    if (from_tuple) {
        buf_printf(h, ", %s t", emit_ctype(E, idx->v[0]->ty));
        buf_printf(&args, ", %s", emit_expr_str(E, idx->v[0], NULL));
    } else {
        for (int k = 0; k < idx->n; k++) {
            Node *x = idx->v[k];
            if (x->kind == E_SLICE) {
                Node *parts[3] = {x->slice.lo, x->slice.hi, x->slice.step};
                for (int j = 0; j < 3; j++)
                    if (parts[j] && parts[j]->ty->kind != TY_NONE) {
                        buf_printf(h, ", i64 x%d", nargs++);
                        buf_printf(&args, ", %s", emit_expr_str(E, parts[j], ty_scalar(KILN_INT64)));
                    }
            } else {
                buf_printf(h, ", i64 x%d", nargs++);
                buf_printf(&args, ", %s", emit_expr_str(E, x, ty_scalar(KILN_INT64)));
            }
        }
    }
    buf_printf(h, ") {\n    %s r;\n    i64 off = 0, st, len;\n    (void)st; (void)len; (void)E_;\n", rn);
    int j = 0, a = 0;
    int line = emit_loc(E, n->sp);
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
    P("kview%d(E_, %s%s)", id, emit_expr_str(E, base, NULL), args.p ? args.p : "");
    buf_free(&args);
}

/* a.real or a.imag of a complex array: a float view of every other float,
 * from the first (real) or the second (imaginary) */
static void part_view(Emit *E, Node *n) {
    const Type *bt = n->attr.base->ty, *rt = n->ty;
    const char *bn = emit_ctype(E, bt), *rn = emit_ctype(E, rt);
    int id = E->nhelp++;
    Buf *h = &E->helpers;
    buf_printf(h, "KILN_FN %s kview%d(%s a) {\n    %s r;\n", rn, id, bn, rn);
    for (int k = 0; k < bt->ndim; k++)
        buf_printf(h, "    r.shape[%d] = a.shape[%d];\n    r.strides[%d] = 2 * a.strides[%d];\n", k,
                   k, k, k);
    buf_printf(h, "    r.data = (%s *)a.data + %d;\n    return r;\n}\n", emit_scalar_ctype(rt->elem),
               strcmp(n->attr.attr, "imag") == 0);
    P("kview%d(%s)", id, emit_expr_str(E, n->attr.base, NULL));
}

/* a.f of an array of records: field f of each element (sema_expr.c field_view checked
 * that the record's size is a whole number of the field's) */
static void field_view(Emit *E, Node *n) {
    const Type *bt = n->attr.base->ty, *rt = n->ty;
    const kiln_field *f = ty_field(bt->elem, n->attr.attr);
    const char *bn = emit_ctype(E, bt), *rn = emit_ctype(E, rt);
    int64_t per = bt->elem->rec->itemsize / kiln_dtype_size((kiln_dtype)f->dtype);
    int id = E->nhelp++;
    Buf *h = &E->helpers;
    buf_printf(h, "KILN_FN %s kview%d(%s a) {\n    %s r;\n", rn, id, bn, rn);
    for (int k = 0; k < bt->ndim; k++)
        buf_printf(h, "    r.shape[%d] = a.shape[%d];\n    r.strides[%d] = a.strides[%d] * %lld;\n",
                   k, k, k, k, (long long)per);
    buf_printf(h, "    r.data = (%s *)(void *)((unsigned char *)a.data + %lld);\n    return r;\n}\n",
               emit_elem_ctype(E, rt->elem), (long long)f->offset);
    P("kview%d(%s)", id, emit_expr_str(E, n->attr.base, NULL));
}

/* a.T: the same data, its extents and strides in reverse order (a C array's view is F) */
static void transposed_view(Emit *E, Node *n) {
    const Type *bt = n->attr.base->ty, *rt = n->ty;
    const char *bn = emit_ctype(E, bt), *rn = emit_ctype(E, rt);
    int id = E->nhelp++, nd = bt->ndim;
    Buf *h = &E->helpers;
    buf_printf(h, "KILN_FN %s kview%d(%s a) {\n    %s r;\n", rn, id, bn, rn);
    for (int k = 0; k < nd; k++)
        buf_printf(h, "    r.shape[%d] = a.shape[%d];\n    r.strides[%d] = a.strides[%d];\n", k,
                   nd - 1 - k, k, nd - 1 - k);
    buf_printf(h, "    r.data = a.data;\n    return r;\n}\n");
    P("kview%d(%s)", id, emit_expr_str(E, n->attr.base, NULL));
}

static void binop_text(Emit *E, Node *at, BinOp op, const Type *t, Node *l, Node *r);

void emit_binop_text(Emit *E, Node *at, BinOp op, const Type *t, Node *l, Node *r) {
    if (t->kind == TY_COMPLEX) {
        emit_complex_binop(E, op, t, emit_expr_str(E, l, t), emit_expr_str(E, r, t));
        return;
    }
    /* float16 + - *: rt_half.h's kiln_hadd..., native half precision on the GPU */
    if (op <= B_MUL && emit_is_f16(t)) {
        static const char *const hf[] = {"kiln_hadd(", "kiln_hsub(", "kiln_hmul("};
        E->half = true;
        PS(hf[op]);
        emit_expr_as(E, l, t);
        PS(", ");
        emit_expr_as(E, r, t);
        PS(")");
        return;
    }
    /* the rest of float16: the operands converted to float16, the operation in
     * float32, its result rounded to float16 (rt_half.h) */
    bool h = op <= B_POW && emit_half_open(E, t);
    binop_text(E, at, op, t, l, r);
    emit_half_close(E, h);
}

/* debug=True: a float divisor of zero is a ZeroDivisionError, as in Python (kind: 1 /,
 * 2 //, 3 %); opens the check around the divisor the caller writes next, and says so */
static bool zchk_float(Emit *E, Node *at, const Type *t, int kind) {
    if (!E->debug || t->kind != TY_FLOAT || !(emit_is_f32(t) || ty_bits(t) == 64)) return false;
    P("kiln_zchk_%s(E_, %d, %d, ", emit_is_f32(t) ? "f32" : "f64", emit_loc(E, at->sp), kind);
    return true;
}

static void binop_text(Emit *E, Node *at, BinOp op, const Type *t, Node *l, Node *r) {
    const char *ct = emit_ctype(E, t);
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
        emit_expr_as(E, l, t);
        PS(s[op]);
        emit_expr_as(E, r, t);
        PS(narrow ? "))" : ")");
        return;
    }
    case B_DIV:
        if (E->fastmath && E->cuda && emit_is_f32(t)) {
            PS("__fdividef(");
            emit_expr_as(E, l, t);
            PS(", ");
            emit_expr_as(E, r, t);
            PS(")");
            return;
        }
        PS("(");
        emit_expr_as(E, l, t);
        PS(" / ");
        if (zchk_float(E, at, t, 1)) {
            emit_expr_as(E, r, t);
            PS("))");
            return;
        }
        emit_expr_as(E, r, t);
        PS(")");
        return;
    case B_FLOORDIV:
    case B_MOD: {
        const char *what = op == B_FLOORDIV ? "fdiv" : "mod";
        if (t->kind == TY_FLOAT) {
            P("kiln_%s_%s(", what, ct);
            emit_expr_as(E, l, t);
            PS(", ");
            bool z = zchk_float(E, at, t, op == B_FLOORDIV ? 2 : 3);
            emit_expr_as(E, r, t);
            PS(z ? "))" : ")");
            return;
        }
        bool nn = (l->flags & NF_NONNEG) && (r->flags & NF_NONNEG) && sgn;
        const char *wt = sgn ? "i64" : "u64";
        const char *fn = nn ? arena_printf(&E->C->arena, "kiln_%s_nn", what)
                            : arena_printf(&E->C->arena, "kiln_%s_%s", what, wt);
        /* each operand in the operation's type first (a Python int of a value kiln
         * cannot know becomes that type, as NEP 50 says), then widened for the helper */
        P("((%s)%s((%s)", ct, fn, wt);
        emit_expr_as(E, l, t);
        PS(", ");
        if (E->debug) P("kiln_zchk_%s(E_, %d, ", wt, emit_loc(E, at->sp));
        P("(%s)", wt);
        emit_expr_as(E, r, t);
        PS(E->debug ? ")))" : "))");
        return;
    }
    case B_POW: {
        if (isint) {
            if (sgn) {
                /* a negative exponent is an error (LANGUAGE.md), with or without
                 * debug=True: Python would give a float, NumPy raises */
                if (!(r->flags & NF_NONNEG))
                    P("((%s)kiln_ipow_i64_chk(E_, %d, ", ct, emit_loc(E, at->sp));
                else P("((%s)kiln_ipow_i64(", ct);
                emit_expr_as(E, l, ty_scalar(KILN_INT64));
                PS(", ");
                emit_expr_as(E, r, ty_scalar(KILN_INT64));
            } else {
                P("((%s)kiln_ipow_u64(", ct);
                emit_expr_as(E, l, ty_scalar(KILN_UINT64));
                PS(", ");
                emit_expr_as(E, r, ty_scalar(KILN_UINT64));
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
        const char *sfx = emit_is_f32(t) ? "f32" : "f64";
        if (kconst && kf == 2.0) {
            P("kiln_sq_%s(", sfx);
            emit_expr_as(E, l, t);
            PS(")");
            return;
        }
        if (kconst && kf == 3.0) {
            P("kiln_cube_%s(", sfx);
            emit_expr_as(E, l, t);
            PS(")");
            return;
        }
        if (kconst && kf == 1.0) {
            emit_expr_as(E, l, t);
            return;
        }
        /* a float32 or float64 to an integer power: Numba's squarings (rt_common.h) */
        if ((ty_is_int(r->ty) || r->ty->kind == TY_BOOL) && t->kind == TY_FLOAT &&
            !emit_narrow(t)) {
            bool u = ty_is_int(r->ty) && !ty_is_signed(r->ty) && !r->ty->weak;
            P("kiln_pow%c_%s(", u ? 'u' : 'i', sfx);
            emit_expr_as(E, l, t);
            PS(", ");
            emit_expr_as(E, r, ty_scalar(u ? KILN_UINT64 : KILN_INT64));
            PS(")");
            return;
        }
        Node *args[2] = {l, r};
        emit_math_call(E, "pow", t, args, 2);
        return;
    }
    case B_LSHIFT:
    case B_RSHIFT: {
        int64_t k;
        if (t->kind == TY_BOOL) t = ty_scalar(KILN_INT64);
        /* a left shift in the unsigned type of its width (no signed overflow; a u32
         * vector shift, not a u64 one) */
        const char *ut = bits <= 32 ? "u32" : "u64";
        if (sema_const_int(r, &k) && k >= 0 && k < bits) {
            if (op == B_LSHIFT) {
                P("((%s)((%s)", ct, ut);
                emit_expr_as(E, l, t);
                P(" << %lld))", (long long)k);
            } else {
                P("((%s)(", ct);
                emit_expr_as(E, l, t);
                P(" >> %lld))", (long long)k);
            }
            return;
        }
        /* a count sema knows in [0, bits) (`s & 31`, bounds.c): C's own shift, which the C
         * compiler can combine (a rotate) where the helper's range check kept it apart */
        if (r->ty && ty_is_int(r->ty) && (r->flags & NF_BOUNDED) && r->nnhi < (uint64_t)bits &&
            ((r->flags & NF_NONNEG) || !ty_is_signed(r->ty))) {
            if (op == B_LSHIFT) P("((%s)((%s)", ct, ut);
            else P("((%s)(", ct);
            emit_expr_as(E, l, t);
            PS(op == B_LSHIFT ? " << (" : " >> (");
            emit_expr_as(E, r, t);
            PS(")))");
            return;
        }
        /* the operands in the operation's type first, then widened (as // and % above) */
        P("((%s)kiln_%s_%s((%s)", ct, op == B_LSHIFT ? "shl" : "shr", sgn ? "i64" : "u64",
          sgn ? "i64" : "u64");
        emit_expr_as(E, l, t);
        P(", (%s)", sgn ? "i64" : "u64");
        emit_expr_as(E, r, t);
        P(", %d))", bits);
        return;
    }
    case B_AND:
    case B_OR:
    case B_XOR: {
        static const char *const s[] = {" & ", " | ", " ^ "};
        P("((%s)(", ct);
        emit_expr_as(E, l, t);
        PS(s[op - B_AND]);
        emit_expr_as(E, r, t);
        PS("))");
        return;
    }
    }
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
            emit_compare_pair(E, emit_expr_str(E, ops->v[i], NULL), ops->v[i]->ty,
                         emit_expr_str(E, ops->v[i + 1], NULL), ops->v[i + 1]->ty, n->cmp.optys[i],
                         (CmpOp)n->cmp.ops[i]);
        }
        if (np > 1) PS(")");
        return;
    }
    /* evaluate each operand once, left to right, stopping early */
    emit_sx_open(E, ty_scalar(KILN_BOOL));
    PS("kbool r_ = 1; ");
    int base = E->tmp;
    E->tmp += ops->n;
    P("%s t%d = ", emit_ctype(E, ops->v[0]->ty), base);
    emit_expr(E, ops->v[0]);
    PS("; ");
    for (int i = 0; i < np; i++) {
        P("%s t%d = ", emit_ctype(E, ops->v[i + 1]->ty), base + i + 1);
        emit_expr(E, ops->v[i + 1]);
        PS("; r_ = ");
        emit_compare_pair(E, arena_printf(&E->C->arena, "t%d", base + i), ops->v[i]->ty,
                     arena_printf(&E->C->arena, "t%d", base + i + 1), ops->v[i + 1]->ty,
                     n->cmp.optys[i], (CmpOp)n->cmp.ops[i]);
        PS("; if (!r_) { ");
        for (int j = i + 2; j <= np; j++) P("(void)0; ");
        PS("} ");
        if (i + 1 < np) PS("if (r_) { ");
    }
    for (int i = 0; i + 1 < np; i++) PS("} ");
    emit_sx_close(E, "r_");
}

/* Writes item (run-time index of node n, checked) of the frozen tuple g. */
static void global_item(Emit *E, const GVal *g, Node *n) {
    const char *arr = emit_global_array(E, g);
    const Type *et = g->tuple[0].ty;
    bool bits = E->cuda && et->kind == TY_FLOAT;
    bool f32 = bits && !et->weak && et->dtype == KILN_FLOAT32;
    if (bits) P(f32 ? "__int_as_float((int)" : "__longlong_as_double((long long)");
    P("%s[kiln_chk(E_, ", arr);
    emit_expr_as(E, n->sub.idx.v[0], ty_scalar(KILN_INT64));
    P(", %d, -1, %d)]", g->ntuple, emit_loc(E, n->sp)); /* -1: a tuple's index (errors.c) */
    if (bits) PS(")");
}

void emit_expr(Emit *E, Node *n) {
    if (E->t0_text) { /* tier 0's vector entry: a value held in an array (emit_tier0.c) */
        const char *s = E->t0_text(E, n);
        if (s) {
            PS(s);
            return;
        }
    }
    if (n == E->subst) {
        PS(E->subst_text);
        return;
    }
    if (E->hoist && n->kind == E_SUBSCRIPT) {
        for (int j = 0; j < E->hoist->nloads; j++)
            if (E->hoist->loads[j] == n) {
                P("hl%d_%d_%d", E->hoist_id, j, E->hoist_copy);
                return;
            }
    }
    if ((n->flags & NF_CONST) && ty_is_scalar(n->ty)) {
        emit_const(E, n->ty, n->cval);
        return;
    }
    switch ((NodeKind)n->kind) {
    case E_NAME:
        if (n->sym && n->sym->maybe_none) { /* its value (emit_opt.c) */
            PS(emit_opt_value(E, n->sym->ty, emit_sym_name(E, n->sym), n->sp));
            return;
        }
        if (n->sym) {
            PS(emit_sym_name(E, n->sym));
            return;
        }
        if (n->intr && n->intr->kind == IK_SREG) {
            P("((i64)%s)", emit_sreg(n->intr->sub));
            return;
        }
        if (n->intr && n->intr->kind == IK_LANEID) {
            PS(laneid(E));
            return;
        }
        if (n->gv) goto tuple_const;
        UNREACHABLE();
    case E_ATTR: {
        if (n->intr) {
            if (n->intr->kind == IK_SREG) {
                P("((i64)%s)", emit_sreg(n->intr->sub));
                return;
            }
            if (n->intr->kind == IK_LANEID) {
                PS(laneid(E));
                return;
            }
        }
        if (n->gv) goto tuple_const;
        Node *b = n->attr.base;
        const Type *bt = b->ty;
        if (bt->kind == TY_TUPLE && bt->fields) { /* a vector's lane, a namedtuple's field */
            P("(%s).f%d", emit_expr_str(E, b, NULL), ty_tuple_field(bt, n->attr.attr));
            return;
        }
        if (ty_is_scalar(bt)) { /* x.real, x.imag (sema_complex.c) */
            bool imag = strcmp(n->attr.attr, "imag") == 0;
            if (bt->kind == TY_COMPLEX) {
                P("(%s).%s", emit_expr_str(E, b, NULL), imag ? "im" : "re");
            } else if (!imag) {
                emit_expr(E, b);
            } else {
                ConstVal z;
                z.u = 0;
                emit_const(E, n->ty, z);
            }
            return;
        }
        if (bt->kind == TY_RECORD) {
            const kiln_field *f = ty_field(bt, n->attr.attr);
            if (f->ndim) { /* a subarray field: a C-contiguous view of the record's bytes */
                P("%s_local((%s *)((unsigned char *)(%s) + %lld)", emit_ctype(E, n->ty),
                  emit_elem_ctype(E, n->ty->elem), emit_expr_str(E, b, NULL),
                  (long long)f->offset);
                for (int d = 0; d < f->ndim; d++) P(", %lldLL", (long long)f->shape[d]);
                PS(")");
                return;
            }
            PS(emit_load(E, n->ty, emit_field(E, n)));
            return;
        }
        if (bt->kind == TY_ARRAY && n->ty->kind == TY_ARRAY && strcmp(n->attr.attr, "T") == 0) {
            if (bt->ndim < 2) emit_expr(E, b);
            else transposed_view(E, n);
            return;
        }
        if (bt->kind == TY_ARRAY && n->ty->kind == TY_ARRAY && bt->elem->kind == TY_RECORD) {
            field_view(E, n);
            return;
        }
        if (bt->kind == TY_ARRAY && n->ty->kind == TY_ARRAY) { /* a.real, a.imag */
            if (bt->elem->kind == TY_COMPLEX) part_view(E, n);
            else emit_expr(E, b);
            return;
        }
        if (bt->kind == TY_ARRAY) {
            const char *bs = emit_expr_str(E, b, NULL);
            const char *a = n->attr.attr;
            if (strcmp(a, "size") == 0) {
                if (bt->ndim == 0) { /* a 0-d array holds one element */
                    PS("((i64)1)");
                    return;
                }
                PS("(");
                for (int i = 0; i < bt->ndim; i++) P("%s(%s).shape[%d]", i ? " * " : "", bs, i);
                PS(")");
                return;
            }
            bool strides = strcmp(a, "strides") == 0;
            P("%s(", emit_tuple_make(E, n->ty));
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
        if (n->gv->kind == KILN_VAL_ARRAY) { /* a global array: a view of its data */
            emit_global_view(E, n->gv);
            return;
        }
        if (n->gv->ty->kind == TY_COMPLEX) { /* a frozen complex scalar */
            emit_complex_const(E, n->gv->ty, n->gv->cv.f, n->gv->im);
            return;
        }
        PS(emit_global_value(E, n->gv));
        return;
    case E_BINOP: emit_binop_text(E, n, (BinOp)n->op, n->opty, n->bin.l, n->bin.r); return;
    case E_UNARY: {
        Node *x = n->un.x;
        const Type *t = n->opty;
        switch ((UnOp)n->op) {
        case U_NOT:
            PS("(!");
            emit_truthy(E, x);
            PS(")");
            return;
        case U_NEG:
            if (t->kind == TY_COMPLEX) {
                emit_complex_neg(E, t, emit_expr_str(E, x, t));
            } else if (emit_is_f16(t)) { /* neg.f16 on the GPU (rt_half.h) */
                E->half = true;
                PS("kiln_hneg(");
                emit_expr_as(E, x, t);
                PS(")");
            } else if (t->kind == TY_FLOAT && !E->cuda) { /* a NaN's sign too, on tier 0 */
                P("KILN_FNEG%s(", emit_is_f32(t) ? "32" : "64");
                emit_expr_as(E, x, t);
                PS(")");
            } else if (t->kind == TY_FLOAT) {
                PS("(-");
                emit_expr_as(E, x, t);
                PS(")");
            } else {
                P("((%s)(0 - ", emit_ctype(E, t));
                emit_expr_as(E, x, t);
                PS("))");
            }
            return;
        case U_POS: emit_expr_as(E, x, t); return;
        case U_INVERT:
            if (t->kind == TY_BOOL) {
                PS("(!");
                emit_expr(E, x);
                PS(")");
            } else {
                P("((%s)(~", emit_ctype(E, t));
                emit_expr_as(E, x, t);
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
            emit_truthy(E, l);
            PS(n->op == BO_AND ? " && " : " || ");
            emit_truthy(E, r);
            PS(")");
            return;
        }
        const char *ct = emit_ctype(E, t);
        /* The left value is used twice (tested, then the result): written twice
         * only when it is a name or a constant.  Anything else, even pure, goes
         * through a temporary, or `a or b or c ...` would double in size with
         * each operand. */
        /* the truth of the converted value, which is the operand's (a complex one's:
         * either part nonzero) */
        const char *nz = t->kind == TY_COMPLEX ? arena_printf(&E->C->arena, "kiln_nz_%s", emit_cname(E, t)) : "";
        if ((l->kind == E_NAME && l->sym) || ((l->flags & NF_CONST) && ty_is_scalar(l->ty))) {
            const char *ls = emit_expr_str(E, l, t);
            if (*nz) P("(%s(%s) ? ", nz, ls);
            else P("((%s != 0) ? ", ls);
            if (n->op == BO_OR) {
                PS(ls);
                PS(" : ");
                emit_expr_as(E, r, t);
            } else {
                emit_expr_as(E, r, t);
                PS(" : ");
                PS(ls);
            }
            PS(")");
            return;
        }
        int k = E->tmp++;
        emit_sx_open(E, t);
        P("%s t%d = ", ct, k);
        emit_expr_as(E, l, t);
        PS("; ");
        const char *rs = emit_expr_str(E, r, t);
        const char *test = *nz ? arena_printf(&E->C->arena, "%s(t%d)", nz, k)
                               : arena_printf(&E->C->arena, "(t%d != 0)", k);
        emit_sx_close(E, n->op == BO_OR ? arena_printf(&E->C->arena, "%s ? t%d : %s", test, k, rs)
                                   : arena_printf(&E->C->arena, "%s ? %s : t%d", test, rs, k));
        return;
    }
    case E_COMPARE:
        if (n->cmp.ops[0] == C_IS || n->cmp.ops[0] == C_ISNOT) { /* of a maybe-None value */
            emit_opt_test(E, n);
            return;
        }
        compare(E, n);
        return;
    case E_IFEXP:
        /* "!= 0" on the condition: libtcc 0.9.27 jumps past the rest of the statement
         * for (c ? 0 : 0) ? a : b, a condition that is itself a conditional whose arms
         * fold to 0 (hunt31) */
        PS("((");
        emit_truthy(E, n->ifexp.cond);
        PS(") != 0 ? ");
        emit_expr_as(E, n->ifexp.then, n->opty);
        PS(" : ");
        emit_expr_as(E, n->ifexp.orelse, n->opty);
        PS(")");
        return;
    case E_CALL:
        if (n->ext) { /* an external device function: its wrapper (emit.c) */
            P("kiln_ext_%s(", n->ext->name);
            for (int i = 0; i < n->call.bound.n; i++) {
                Node *a = n->call.bound.v[i];
                if (i) PS(", ");
                if (ty_is_ptr(n->ext->params[i])) P("(%s).data", emit_expr_str(E, a, NULL));
                else emit_expr_as(E, a, n->ext->params[i]);
            }
            PS(")");
            return;
        }
        if (n->callee) {
            FuncSpec *f = n->callee;
            /* its optional struct as it is, or its value (emit_opt.c) */
            bool raw = E->opt_raw && f->ret_none;
            E->opt_raw = false;
            /* an explicit signature's return type wins over the inferred one */
            bool cast = !raw && f->ret->kind != TY_NONE && !emit_same_ctype(E, f->ret, n->ty);
            Buf call, *saved = E->o;
            buf_init_arena(&call, &E->C->arena);
            E->o = &call;
            P("%s(KILN_TA", emit_func_name(E, f));
            if (f->recursive) /* the stack bound: its caller's, or a new one (rt_cpu.h) */
                PS(E->f->recursive && !E->f->is_kernel ? " KILN_RFA" : " KILN_RFA0");
            for (int i = 0; i < n->call.bound.n; i++) {
                const Type *pt = f->params[i];
                if (ty_compile_time(pt)) continue; /* part of the callee's types */
                PS(", ");
                emit_expr_as(E, n->call.bound.v[i], pt);
            }
            PS(")");
            E->o = saved;
            const char *text = f->ret_none && !raw ? emit_opt_value(E, f->ret, call.p, n->sp) : call.p;
            if (cast) emit_convert(E, f->ret, n->ty, text);
            else PS(text);
            return;
        }
        if (n->intr) {
            if (n->intr->kind == IK_POWER || n->intr->kind == IK_BINOP) {
                BinOp op = n->intr->kind == IK_POWER ? B_POW : (BinOp)n->intr->sub;
                emit_binop_text(E, n, op, n->opty, n->call.bound.v[0], n->call.bound.v[1]);
                return;
            }
            emit_call_intrinsic(E, n);
            return;
        }
        /* dtype cast */
        if (n->call.bound.n == 0) {
            ConstVal z;
            z.u = 0;
            emit_const(E, n->ty, z);
            return;
        }
        emit_convert(E, n->call.bound.v[0]->ty, n->ty, emit_expr_str(E, n->call.bound.v[0], NULL));
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
                P("(%s).shape[%lld]", emit_expr_str(E, base->attr.base, NULL), (long long)k);
                return;
            }
            if (base->gv) {
                /* a frozen tuple: a constant item is the constant itself, a
                 * run-time one comes from the tuple's static array */
                const GVal *g = base->gv;
                if (sema_const_int(n->sub.idx.v[0], &k)) {
                    if (k < 0) k += g->ntuple;
                    const GVal *item = &g->tuple[k];
                    if (item->ty->kind == TY_TUPLE) PS(emit_global_value(E, item));
                    else if (item->ty->kind == TY_ARRAY) emit_global_view(E, item);
                    else emit_const(E, item->ty, item->cv);
                    return;
                }
                if (ty_is_scalar(g->tuple[0].ty)) {
                    global_item(E, g, n);
                    return;
                }
                /* arrays or tuples at a run-time index: from the tuple as a value */
            }
            const char *b = base->gv ? emit_global_value(E, base->gv)
                                     : emit_expr_str(E, n->sub.base, NULL);
            if (sema_const_int(n->sub.idx.v[0], &k)) {
                if (k < 0) k += bt->n;
                P("(%s).f%lld", b, (long long)k);
            } else {
                P("%s(E_, %s, ", emit_tuple_get(E, bt), b);
                emit_expr_as(E, n->sub.idx.v[0], ty_scalar(KILN_INT64));
                P(", %d)", emit_loc(E, n->sp));
            }
            return;
        }
        if (n->ty->kind == TY_ARRAY) {
            view(E, n);
            return;
        }
        if (n->ty->kind == TY_RECORD) { /* a record: a reference to the element */
            P("(&%s)", emit_element(E, n));
            return;
        }
        PS(emit_load(E, n->ty, emit_element(E, n)));
        return;
    }
    case E_TUPLE: {
        P("%s(", emit_tuple_make(E, n->ty));
        for (int i = 0; i < n->tuple.n; i++) {
            if (i) PS(", ");
            emit_expr(E, n->tuple.v[i]);
        }
        PS(")");
        return;
    }
    case E_INT:
    case E_FLOAT:
    case E_BOOL: emit_const(E, n->ty, n->cval); return;
    case E_IMAG: emit_complex_const(E, n->ty, 0, n->flit); return; /* weak: complex128 */
    default: break;
    }
    UNREACHABLE();
}

