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

/* The vector type of element type t: KILN_CUDA_WIDE elements, aligned as far as
 * VEC_BYTES allows. */
static const char *vec_type(Emit *E, const Type *t, int *align) {
    const char *el = emit_elem_ctype(E, t);
    int64_t bytes = ty_elem_size(t) * KILN_CUDA_WIDE;
    *align = bytes < VEC_BYTES ? (int)bytes : VEC_BYTES;
    const char *name = arena_printf(&E->C->arena, "KV_%s", el);
    if (!emit_registered(E, name))
        buf_printf(&E->types, "typedef struct __align__(%d) { %s v[%d]; } %s;\n", *align, el,
                   KILN_CUDA_WIDE, name);
    return name;
}

void emit_vec_params(Emit *E, const FuncSpec *k, Buf *ps) {
    const VecPlan *v = E->vec;
    for (int p = 0; p < k->nparams && p < 64; p++) {
        const char *el = NULL;
        if (((v->loads | v->stores) >> p) & 1) el = emit_elem_ctype(E, k->params[p]->elem);
        if ((v->loads >> p) & 1) buf_printf(ps, ", %s vl%d_", el, p);
        if ((v->stores >> p) & 1) buf_printf(ps, ", %s *vs%d_, kbool *vw%d_", el, p, p);
    }
}

void emit_vec_entry(Emit *E, const FuncSpec *k, const char *args) {
    const VecPlan *v = E->vec;
    const int W = KILN_CUDA_WIDE;
    uint64_t all = v->loads | v->stores;
    P("    /* the vector path (vecplan.h): %d consecutive positions per thread */\n"
      "    const i64 x0_ = ((i64)KILN_BID_X * KILN_BDIM_X + KILN_TID_X) * %d;\n"
      "    i64 nv_ = n_;\n",
      W, W);
    for (int p = 0; p < 64; p++)
        if ((all >> p) & 1) P("    if (p%ds0 < nv_) nv_ = p%ds0;\n", p, p);
    P("    if (x0_ + %d <= nv_) {\n", W);
    for (int p = 0; p < 64; p++) {
        if (!((all >> p) & 1)) continue;
        int align;
        const char *vt = vec_type(E, k->params[p]->elem, &align);
        if ((v->stores >> p) & 1) {
            P("        %s s%d_;\n        kbool w%d_[%d] = {0", vt, p, p, W);
            for (int c = 1; c < W; c++) PS(", 0");
            PS("};\n");
            continue;
        }
        P("        %s l%d_;\n"
          "        if (((u64)p%dd & %d) == 0) {\n"
          "            l%d_ = *(const %s *)(p%dd + x0_);\n"
          "        } else {\n",
          vt, p, p, align - 1, p, vt, p);
        for (int c = 0; c < W; c++) P("            l%d_.v[%d] = p%dd[x0_ + %d];\n", p, c, p, c);
        PS("        }\n");
    }
    for (int c = 0; c < W; c++) {
        P("        kiln_body_v(E_, x0_ + %d%s", c, args);
        for (int p = 0; p < 64; p++) {
            if ((v->loads >> p) & 1) P(", l%d_.v[%d]", p, c);
            if ((v->stores >> p) & 1) P(", &s%d_.v[%d], &w%d_[%d]", p, c, p, c);
        }
        PS(");\n");
    }
    for (int p = 0; p < 64; p++) {
        if (!((v->stores >> p) & 1)) continue;
        int align;
        const char *vt = vec_type(E, k->params[p]->elem, &align);
        P("        if (((u64)p%dd & %d) == 0", p, align - 1);
        for (int c = 0; c < W; c++) P(" && w%d_[%d]", p, c);
        P(") {\n            *(%s *)(p%dd + x0_) = s%d_;\n        } else {\n", vt, p, p);
        for (int c = 0; c < W; c++)
            P("            if (w%d_[%d]) p%dd[x0_ + %d] = s%d_.v[%d];\n", p, c, p, c, p, c);
        PS("        }\n");
    }
    P("        return;\n"
      "    }\n"
      "    /* the launch's last positions, one at a time */\n"
      "#pragma unroll 1\n"
      "    for (int k_ = 0; k_ < %d; k_++) {\n"
      "        const i64 x_ = x0_ + k_;\n"
      "        if (x_ < n_) kiln_body(E_, x_%s);\n"
      "    }\n}\n\n",
      W, args);
}
