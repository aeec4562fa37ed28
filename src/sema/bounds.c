/* bounds.c: upper bounds of the integers sema knows to be non-negative.
 *
 * NF_NONNEG lets the emitters drop Python's sign corrections from `x % n`,
 * `x // n` and `a[x]`.  Integer arithmetic wraps (LANGUAGE.md), so a sum,
 * product or left shift of non-negative values is non-negative only while it
 * cannot pass its type's maximum: every non-negative expression carries an
 * upper bound (Node.nnhi with NF_BOUNDED, or a constant's value; else its
 * type's maximum), and an operation whose bound passes the maximum of its
 * result type is not known non-negative (unsigned results always are).
 *
 * The bounds come from constants, the launch limits (include/kiln.h: thread
 * and block indices and dimensions, hence kiln.grid() and kiln.gridsize()),
 * range() loops, `x & m`, `x % n` and `x // n`, `>>`, min/max, and narrower
 * unsigned types.  Array shapes and sizes are bounded by int64's maximum only:
 * nothing kiln accepts (NumPy, device arrays, interop objects) promises less,
 * so `i * a.shape[1] + j` is not known non-negative, and `a[i * n + j]` keeps
 * its negative-index wrap.  A variable keeps one bound for all of its
 * assignments (sema is not flow-sensitive); a bound that keeps growing from
 * pass to pass (an accumulator, `i += 1`) becomes its type's maximum after
 * BOUND_WIDEN_AFTER growths, so the passes reach a fixed point.
 */
#include <string.h>

#include "sema_int.h"

/* Growths of a variable's bound before it is taken as its type's maximum: a
 * loop-carried `s += 1` would otherwise grow by one per pass. */
enum { BOUND_WIDEN_AFTER = 2 };

/* The largest value of kiln.grid()'s coordinate along an axis, and of
 * kiln.gridsize(): griddim times blockdim at the launch limits. */
static const uint64_t grid_extent[3] = {
    (uint64_t)KILN_MAX_GRID_X * KILN_MAX_BLOCK_THREADS,
    (uint64_t)KILN_MAX_GRID_YZ * KILN_MAX_BLOCK_THREADS,
    (uint64_t)KILN_MAX_GRID_YZ * KILN_MAX_BLOCK_Z,
};

uint64_t bound_tymax(const Type *t) {
    if (t->kind == TY_BOOL) return 1;
    if (t->kind != TY_INT || t->weak) return INT64_MAX;
    switch ((kiln_dtype)t->dtype) {
    case KILN_INT8: return INT8_MAX;
    case KILN_INT16: return INT16_MAX;
    case KILN_INT32: return INT32_MAX;
    case KILN_UINT8: return UINT8_MAX;
    case KILN_UINT16: return UINT16_MAX;
    case KILN_UINT32: return UINT32_MAX;
    case KILN_UINT64: return UINT64_MAX;
    default: return INT64_MAX;
    }
}

static bool is_unsigned(const Type *t) { return t->kind == TY_INT && !ty_is_signed(t) && !t->weak; }

bool bound_nonneg(const Node *n, const Type *t) {
    return (n->flags & NF_NONNEG) || is_unsigned(t) || t->kind == TY_BOOL;
}

uint64_t bound_of(const Node *n, const Type *t) {
    uint64_t m = bound_tymax(t);
    if ((n->flags & NF_CONST) && (t->kind == TY_INT || t->kind == TY_BOOL)) {
        uint64_t v = is_unsigned(t) ? n->cval.u : n->cval.i < 0 ? m : (uint64_t)n->cval.i;
        return v < m ? v : m;
    }
    if (n->flags & NF_BOUNDED) return n->nnhi < m ? n->nnhi : m;
    return m;
}

void bound_set(Node *n, uint64_t hi) {
    n->flags |= NF_NONNEG | NF_BOUNDED;
    n->nnhi = hi;
}

/* The largest b**e over bases <= b and exponents <= e, or false past m. */
static bool pow_bound(uint64_t b, uint64_t e, uint64_t m, uint64_t *out) {
    if (b <= 1) {
        *out = 1; /* 0**0 */
        return 1 <= m;
    }
    uint64_t r = 1;
    for (uint64_t i = 0; i < e; i++) /* b >= 2: past 64 steps it has overflowed */
        if (__builtin_mul_overflow(r, b, &r) || r > m) return false;
    *out = r;
    return true;
}

bool bound_binop(BinOp op, const Node *l, const Node *r, const Type *lt, const Type *rt,
                 const Type *t, const int64_t *llo, uint64_t *hi) {
    if (t->kind == TY_BOOL) {
        *hi = 1;
        return true;
    }
    if (t->kind != TY_INT) return false;
    bool lnn = bound_nonneg(l, lt), rnn = bound_nonneg(r, rt);
    uint64_t hl = lnn ? bound_of(l, lt) : bound_tymax(lt);
    uint64_t hr = rnn ? bound_of(r, rt) : bound_tymax(rt);
    uint64_t m = bound_tymax(t), h = 0;
    bool ok = false;
    switch (op) {
    case B_ADD: ok = lnn && rnn && !__builtin_add_overflow(hl, hr, &h); break;
    case B_MUL: ok = lnn && rnn && !__builtin_mul_overflow(hl, hr, &h); break;
    case B_SUB: {
        /* l >= lo (a fact) and r <= lo: l - r >= 0, and at most hl - (r's least) */
        int64_t c;
        if (!llo) break;
        if (sema_const_int(r, &c) && c <= *llo) {
            __int128 d = (__int128)hl - c;
            ok = d >= 0 && d <= (__int128)UINT64_MAX;
            h = ok ? (uint64_t)d : 0;
        } else if (rnn && *llo >= 0 && hr <= (uint64_t)*llo) {
            ok = true;
            h = hl;
        }
        break;
    }
    case B_FLOORDIV:
        ok = lnn && rnn;
        h = hl;
        break;
    case B_MOD: /* Python's x % n is in [0, n) for n > 0 whatever x's sign; 0 for n == 0 */
        ok = rnn;
        h = hr ? hr - 1 : 0;
        if (lnn && hl < h) h = hl;
        break;
    case B_POW: ok = lnn && rnn && pow_bound(hl, hr, m, &h); break;
    case B_LSHIFT: /* shifts past the width, or negative ones, give 0 */
        if (!lnn) break;
        if (hl == 0) {
            ok = true;
        } else if (rnn && hr < 63 && hl <= (m >> hr)) {
            ok = true;
            h = hl << hr;
        }
        break;
    case B_RSHIFT:
        ok = lnn;
        h = hl;
        break;
    case B_AND: /* the result's bits are some of each non-negative operand's */
        ok = lnn || rnn;
        h = lnn && rnn ? MIN(hl, hr) : lnn ? hl : hr;
        break;
    case B_OR:
    case B_XOR:
        ok = lnn && rnn;
        h = MAX(hl, hr);
        h = h ? UINT64_MAX >> __builtin_clzll(h) : 0;
        break;
    default: break;
    }
    if (ok && h <= m) {
        *hi = h;
        return true;
    }
    if (is_unsigned(t)) { /* wrapped, but unsigned */
        *hi = m;
        return true;
    }
    return false;
}

bool bound_cast(const Node *x, const Type *xt, const Type *to, uint64_t *hi) {
    if (to->kind != TY_INT && to->kind != TY_BOOL) return false;
    uint64_t m = bound_tymax(to);
    if (bound_nonneg(x, xt)) {
        uint64_t h = bound_of(x, xt);
        if (h <= m) {
            *hi = h;
            return true;
        }
    }
    if (is_unsigned(to) || to->kind == TY_BOOL) {
        *hi = m;
        return true;
    }
    return false;
}

uint64_t bound_sreg(int sub) {
    /* kiln.threadIdx.x..z, blockIdx, blockDim, gridDim (intrinsics.c's order) */
    static const uint64_t b[12] = {
        KILN_MAX_BLOCK_THREADS - 1, KILN_MAX_BLOCK_THREADS - 1, KILN_MAX_BLOCK_Z - 1,
        KILN_MAX_GRID_X - 1,        KILN_MAX_GRID_YZ - 1,       KILN_MAX_GRID_YZ - 1,
        KILN_MAX_BLOCK_THREADS,     KILN_MAX_BLOCK_THREADS,     KILN_MAX_BLOCK_Z,
        KILN_MAX_GRID_X,            KILN_MAX_GRID_YZ,           KILN_MAX_GRID_YZ,
    };
    return sub >= 0 && sub < 12 ? b[sub] : INT64_MAX;
}

uint64_t bound_grid(bool size, int axis) {
    if (axis < 0 || axis > 2) axis = 0; /* x's is the largest */
    return size ? grid_extent[axis] : grid_extent[axis] - 1;
}

bool bound_elem(const Node *v, int i, uint64_t *hi) {
    if (!v) return false;
    if (v->kind == E_CALL && v->intr &&
        (v->intr->kind == IK_GRID || v->intr->kind == IK_GRIDSIZE)) {
        if (hi) *hi = bound_grid(v->intr->kind == IK_GRIDSIZE, i);
        return true;
    }
    /* a.shape; not a.strides, which a reversed view has negative */
    if (v->kind == E_ATTR && v->ty && v->ty->kind == TY_TUPLE && v->attr.base->ty &&
        v->attr.base->ty->kind == TY_ARRAY && strcmp(v->attr.attr, "shape") == 0) {
        if (hi) *hi = INT64_MAX;
        return true;
    }
    return false;
}

bool sema_elem_nonneg(const Node *v, int i) { return bound_elem(v, i, NULL); }

/* An upper bound of any integer n: its bound when non-negative; x - c of a
 * non-negative x and a constant c >= 0 (`a.shape[0] - 1`, which may be -1)
 * cannot wrap and is at most x's bound - c. */
static uint64_t upper(const Node *n) {
    int64_t c;
    if (bound_nonneg(n, n->ty)) return bound_of(n, n->ty);
    if (n->kind == E_BINOP && n->op == B_SUB && ty_is_signed(n->ty) &&
        bound_nonneg(n->bin.l, n->bin.l->ty) && sema_const_int(n->bin.r, &c) && c >= 0) {
        uint64_t h = bound_of(n->bin.l, n->bin.l->ty);
        return h > (uint64_t)c ? h - (uint64_t)c : 0;
    }
    return bound_tymax(n->ty);
}

/* Whether n is known to be at least 1: a positive constant, a launch dimension
 * (kiln.blockDim, kiln.gridDim: a launch has at least one of each), kiln.gridsize(1),
 * or a product of such that cannot wrap (`blockDim.x * gridDim.x`). */
static bool positive(const Node *n) {
    int64_t c;
    if (sema_const_int(n, &c)) return c > 0;
    if (n->kind == E_BINOP && n->op == B_MUL)
        return bound_nonneg(n, n->ty) && positive(n->bin.l) && positive(n->bin.r);
    if ((n->kind != E_ATTR && n->kind != E_CALL && n->kind != E_NAME) || !n->intr) return false;
    return (n->intr->kind == IK_SREG && n->intr->sub >= 6) || n->intr->kind == IK_GRIDSIZE;
}

bool bound_range(const Node *iter, uint64_t *hi) {
    const NodeList *a = &iter->call.args;
    const Type *lt = iter->opty;
    uint64_t m = bound_tymax(lt);
    /* the loop variable is only ever assigned values in [start, stop) (or
     * (stop, start] going down): emit_stmt.c's for_stmt */
    const Node *stop = a->n == 1 ? a->v[0] : a->v[1];
    uint64_t bstop = upper(stop);
    if (bstop > m) bstop = m;
    if (a->n == 1) {
        *hi = bstop ? bstop - 1 : 0;
        return true;
    }
    const Node *start = a->v[0];
    bool start_nn = bound_nonneg(start, start->ty);
    uint64_t bstart = start_nn ? bound_of(start, start->ty) : bound_tymax(start->ty);
    if (bstart > m) bstart = m;
    int64_t step, c;
    if (a->n == 2 || positive(a->v[2])) {
        *hi = bstop ? bstop - 1 : 0;
        return start_nn;
    }
    bool stop_nn = bound_nonneg(stop, stop->ty);
    if (sema_const_int(a->v[2], &step)) { /* going down from start, above stop >= -1 */
        *hi = bstart;
        return stop_nn || (sema_const_int(stop, &c) && c >= -1);
    }
    *hi = MAX(bstart, bstop);
    return start_nn && stop_nn;
}

uint64_t bound_sym(const Sym *s) {
    uint64_t m = bound_tymax(s->ty);
    return s->hi_set && s->hi < m ? s->hi : m;
}

void bound_assign(Sema *S, Sym *s, uint64_t h) {
    if (!s->hi_set) {
        s->hi_set = true;
        s->hi = h;
        S->changed = true;
        return;
    }
    if (h <= s->hi) return;
    s->hi = ++s->hi_grown > BOUND_WIDEN_AFTER ? UINT64_MAX : h;
    S->changed = true;
}
