/* emit_vec.c: the vector path of a CUDA kernel's wide entry (vecplan.h).
 *
 * Thread t of block b runs the KILN_CUDA_WIDE consecutive positions from
 * (b * blockDim + t) * KILN_CUDA_WIDE: the block covers the positions the
 * block-strided loop it replaces covered, so the launch (launch.c, cuda.c) is
 * unchanged.  Where those positions lie inside the launch and inside every
 * planned array's extent, each array read is loaded as one vector (a struct of
 * KILN_CUDA_WIDE elements aligned to VEC_BYTES, or to its size when smaller:
 * NVRTC issues ld.global.nc.v4.f32 for float32, two v2.f64 for float64), the
 * body runs once per position on its elements (kiln_body_v), and each array
 * written is stored as one vector when the body stored all its elements.  An
 * array whose data pointer is not aligned (a view a[1:]) is read or written
 * element by element on the same positions (a uniform branch: the pointer is
 * the launch's).  The last thread of the launch, whose positions reach past
 * an extent or the launch, runs kiln_body for each of its positions that the
 * launch has, as the block-strided loop did.
 */
#include "emit_int.h"

/* The vector type of element type t: n elements, aligned as far as VEC_BYTES allows. */
static const char *vec_type(Emit *E, const Type *t, int n, int *align) {
    const char *el = emit_elem_ctype(E, t);
    int64_t bytes = ty_elem_size(t) * n;
    *align = bytes < VEC_BYTES ? (int)bytes : VEC_BYTES;
    const char *name = arena_printf(&E->C->arena, "KV%d_%s", n, el);
    if (!emit_registered(E, name))
        buf_printf(&E->types, "typedef struct __align__(%d) { %s v[%d]; } %s;\n", *align, el, n,
                   name);
    return name;
}

void emit_vec_params(Emit *E, const FuncSpec *k, Buf *ps) {
    const VecPlan *v = E->vec;
    for (int p = 0; p < k->nparams && p < 64; p++) {
        const char *el = NULL;
        if (((v->loads | v->stores | v->rows) >> p) & 1) el = emit_elem_ctype(E, k->params[p]->elem);
        if (((v->loads | v->rows) >> p) & 1) buf_printf(ps, ", %s vl%d_", el, p);
        if ((v->stores >> p) & 1) buf_printf(ps, ", %s *vs%d_, kbool *vw%d_", el, p, p);
    }
}

/* The position of element e of the thread's vector j. */
static const char *pos(Emit *E, int j, int e) {
    const char *base = j == 0 ? "x0_" : j == 1 ? "x0_ + xs_" : arena_printf(&E->C->arena, "x0_ + xs_ * %d", j);
    return e ? arena_printf(&E->C->arena, "%s + %d", base, e) : base;
}

void emit_vec_entry(Emit *E, const FuncSpec *k, const char *args) {
    const VecPlan *v = E->vec;
    const int W = KILN_CUDA_WIDE;
    uint64_t all = v->loads | v->stores; /* arrays indexed by the position */
    /* V positions per vector: VEC_BYTES of the widest element, at most W; a thread's W
     * positions are C vectors, each vector's positions consecutive and the threads'
     * vectors side by side, so that each load instruction of a warp reads one span */
    int64_t widest = 1;
    for (int p = 0; p < 64; p++)
        if (((all | v->rows) >> p) & 1 && ty_elem_size(k->params[p]->elem) > widest)
            widest = ty_elem_size(k->params[p]->elem);
    const int V = VEC_BYTES / widest < W ? (int)(VEC_BYTES / widest) : W, C = W / V;
    P("    /* the vector path (vecplan.h): %d positions per thread, %d vector%s of %d */\n"
      "    const i64 x0_ = (i64)KILN_BID_X * KILN_BDIM_X * %d + (i64)KILN_TID_X * %d;\n",
      W, C, C > 1 ? "s" : "", V, W, V);
    if (C > 1) P("    const i64 xs_ = (i64)KILN_BDIM_X * %d;\n", V);
    PS("    i64 nv_ = n_;\n");
    for (int p = 0; p < 64; p++)
        if ((all >> p) & 1) P("    if (p%ds0 < nv_) nv_ = p%ds0;\n", p, p);
    if (C > 1) P("    if (%s + %d <= nv_) {\n", pos(E, C - 1, 0), V);
    else P("    if (x0_ + %d <= nv_) {\n", V);
    for (int p = 0; p < 64; p++) {
        if (!((all >> p) & 1)) continue;
        int align;
        const char *vt = vec_type(E, k->params[p]->elem, V, &align);
        if ((v->stores >> p) & 1) {
            P("        %s s%d_[%d];\n        kbool w%d_[%d] = {0", vt, p, C, p, W);
            for (int c = 1; c < W; c++) PS(", 0");
            PS("};\n");
            continue;
        }
        P("        %s l%d_[%d];\n        if (((u64)p%dd & %d) == 0) {\n", vt, p, C, p, align - 1);
        for (int j = 0; j < C; j++)
            P("            l%d_[%d] = *(const %s *)(p%dd + %s);\n", p, j, vt, p, pos(E, j, 0));
        PS("        } else {\n");
        for (int j = 0; j < C; j++)
            for (int e = 0; e < V; e++)
                P("            l%d_[%d].v[%d] = p%dd[%s];\n", p, j, e, p, pos(E, j, e));
        PS("        }\n");
    }
    if (v->rows) {
        /* the row vectors: each vector's positions start at a multiple of V, so with m a
         * multiple of V their columns are consecutive, from the first one's */
        P("        const i64 m_ = p%d;\n        const bool mv_ = m_ > 0 && m_ %% %d == 0;\n", v->cols, V);
        for (int j = 0; j < C; j++)
            P("        const i64 c%d_ = mv_ ? kiln_col_(%s, m_) : 0;\n", j, pos(E, j, 0));
    }
    for (int p = 0; p < 64; p++) {
        if (!((v->rows >> p) & 1)) continue;
        int align;
        const char *vt = vec_type(E, k->params[p]->elem, V, &align);
        P("        %s l%d_[%d];\n        if (mv_ && ((u64)p%dd & %d) == 0", vt, p, C, p, align - 1);
        for (int j = 0; j < C; j++) P(" && c%d_ + %d <= p%ds0", j, V, p);
        PS(") {\n");
        for (int j = 0; j < C; j++)
            P("            l%d_[%d] = *(const %s *)(p%dd + c%d_);\n", p, j, vt, p, j);
        PS("        } else {\n");
        for (int j = 0; j < C; j++)
            for (int e = 0; e < V; e++)
                P("            { const i64 q_ = kiln_wrap(kiln_mod_i64(%s, m_), p%ds0); "
                  "l%d_[%d].v[%d] = (u64)q_ < (u64)p%ds0 ? p%dd[q_] : (%s)0; }\n",
                  pos(E, j, e), p, p, j, e, p, p, emit_elem_ctype(E, k->params[p]->elem));
        PS("        }\n");
    }
    for (int j = 0; j < C; j++)
        for (int e = 0; e < V; e++) {
            P("        kiln_body_v(E_, %s%s", pos(E, j, e), args);
            for (int p = 0; p < 64; p++) {
                if (((v->loads | v->rows) >> p) & 1) P(", l%d_[%d].v[%d]", p, j, e);
                if ((v->stores >> p) & 1) P(", &s%d_[%d].v[%d], &w%d_[%d]", p, j, e, p, j * V + e);
            }
            PS(");\n");
        }
    for (int p = 0; p < 64; p++) {
        if (!((v->stores >> p) & 1)) continue;
        int align;
        const char *vt = vec_type(E, k->params[p]->elem, V, &align);
        for (int j = 0; j < C; j++) {
            P("        if (((u64)p%dd & %d) == 0", p, align - 1);
            for (int e = 0; e < V; e++) P(" && w%d_[%d]", p, j * V + e);
            P(") {\n            *(%s *)(p%dd + %s) = s%d_[%d];\n        } else {\n", vt, p,
              pos(E, j, 0), p, j);
            for (int e = 0; e < V; e++)
                P("            if (w%d_[%d]) p%dd[%s] = s%d_[%d].v[%d];\n", p, j * V + e, p,
                  pos(E, j, e), p, j, e);
            PS("        }\n");
        }
    }
    PS("        return;\n"
       "    }\n"
       "    /* the launch's last positions, one at a time */\n"
       "#pragma unroll 1\n");
    P("    for (int k_ = 0; k_ < %d; k_++) {\n", W);
    if (C > 1) P("        const i64 x_ = x0_ + xs_ * (k_ / %d) + k_ %% %d;\n", V, V);
    else PS("        const i64 x_ = x0_ + k_;\n");
    P("        if (x_ < n_) kiln_body(E_, x_%s);\n"
      "    }\n}\n\n",
      args);
}
