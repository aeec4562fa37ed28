/* emit.c: the typed IR as C (CPU) or CUDA C++ (GPU): the program, its functions and
 * the entry.
 *
 * The output is, in order: the target prelude and rt_common.h (embedded
 * text), the struct types of the arrays and tuples the program uses, helper
 * functions made for this program (array views, tuple accessors), the device
 * functions (callees before callers; a recursive one declared among the helpers), the kernel, and
 * the entry point.
 *
 * Conversions are where sema recorded them: each operation's operands are
 * converted to its `opty`, assigned values to the variable's type, call
 * arguments to the callee's parameter types.  All locals are declared at the
 * top of their function with their single inferred type.  Values that Python
 * evaluates once but C would evaluate twice (the middle of a chained
 * comparison, the left of a non-boolean `or`) use a GNU statement expression,
 * which both GCC and NVRTC accept.
 *
 * On the CPU a kernel that plan_lanes.c puts in lane mode (plan.h) is written twice:
 * as kiln_body and as kiln_lanes_, the same statements with varying names
 * indexed by the lane and each run of them inside a vectorised loop over the
 * lanes (lane_block), called through kiln_body_lanes.
 *
 * The emitter's files and their order of calls are listed atop emit_int.h.
 */
#include "emit_int.h"

/* ---- functions --------------------------------------------------------------------- */

static bool emittable(const Type *t) {
    return ty_is_scalar(t) || t->kind == TY_ARRAY || t->kind == TY_TUPLE ||
           t->kind == TY_RECORD || t->kind == TY_GROUP;
}

/* Block lanes: the text of each LANE_RECOMP local's value (LanePlan.recomp), in the order
 * of their assignments, which may read the ones before. */
static void recomp_texts(Emit *E, FuncSpec *f) {
    const LanePlan *L = &E->plan.lanes;
    E->recomp_text = NULL;
    if (!L->recomp) return;
    E->recomp_text = arena_alloc(&E->C->arena, sizeof(char *) * (size_t)(f->nsyms + 1));
    static const char ax[3] = {'X', 'Y', 'Z'};
    const NodeList *body = &f->def->def.body;
    E->in_lane = true;
    for (int i = 0; i < body->n; i++) {
        const Node *st = body->v[i];
        if (st->kind != S_ASSIGN || st->assign.targets.n != 1) continue;
        const Node *t = st->assign.targets.v[0];
        int m = t->kind == E_TUPLE ? t->tuple.n : 1;
        for (int d = 0; d < m; d++) {
            const Node *x = t->kind == E_TUPLE ? t->tuple.v[d] : t;
            if (x->kind != E_NAME || !x->sym || L->cls[x->sym->id] != LANE_RECOMP) continue;
            int part = L->recomp_part[x->sym->id];
            E->recomp_text[x->sym->id] =
                part >= 0 ? arena_printf(&E->C->arena, "((i64)(KILN_BID_%c * KILN_BDIM_%c + "
                                         "KILN_TID_%c))", ax[part], ax[part], ax[part])
                          : arena_printf(&E->C->arena, "(%s)",
                                         emit_expr_str(E, (Node *)L->recomp[x->sym->id], x->sym->ty));
        }
    }
    E->in_lane = false;
}

/* Writes f; lanes: the kernel's lane body (plan.h), kiln_body_lanes. */
static void function(Emit *E, FuncSpec *f, bool lanes) {
    E->f = f;
    E->lanes = lanes;
    E->in_lane = false;
    E->mask = NULL;
    E->tmp = 0;
    E->nloops = 0;
    E->line = -1;
    E->gvalues.n = 0;
    bool value = !f->is_kernel && f->ret->kind != TY_NONE;
    const char *rt = !value ? "void" : f->ret_none ? emit_opt_ctype(E, f->ret) : emit_ctype(E, f->ret);
    E->leave = value ? "return r0_;" : "return;";
    /* the body first: it tells which frozen tuples need a local (kgv) */
    Buf body;
    buf_init_arena(&body, &E->C->arena);
    E->o = E->body = &body;
    E->ind = 1;
    if (lanes) {
        E->declared = arena_alloc(&E->C->arena, sizeof(int) * (size_t)(f->nsyms + 1));
        E->run = 0;
        recomp_texts(E, f);
    }
    emit_block(E, &f->def->def.body);
    E->o = &E->funcs;
    /* the parameters after KILN_TP, and their names */
    Buf ps, pa;
    buf_init_arena(&ps, &E->C->arena);
    buf_init_arena(&pa, &E->C->arena);
    for (int i = 0; i < f->nparams; i++) {
        if (!emittable(f->params[i])) continue; /* a dtype or function: no value */
        buf_printf(&ps, ", %s p%d", emit_ctype(E, f->params[i]), i);
        buf_printf(&pa, ", p%d", i);
    }
    for (int i = 0; f->is_kernel && !E->acc_mem && i < f->nparams && i < 64; i++) {
        if ((E->plan.acc >> i) & 1) {
            for (int s = 0; s < E->plan.acc_n[i]; s++) {
                buf_printf(&ps, ", %s *ra%d_%d_", emit_scalar_ctype(f->params[i]->elem), i, s);
                buf_printf(&pa, ", ra%d_%d_", i, s);
            }
        } else if ((E->plan.priv >> i) & 1) {
            buf_printf(&ps, ", int pv%d_", i);
            buf_printf(&pa, ", pv%d_", i);
        }
    }
    if (lanes && E->plan.lanes.block) { /* a block's threads (plan_block_lanes) */
        P("KILN_BODY void kiln_blanes_(KILN_TP, int nl_");
    } else if (lanes) {
        P("#define KILN_LANES %d\n", E->plan.lanes.n);
        P("KILN_BODY void kiln_lanes_(KILN_TP, int nl_");
    } else if (f->is_kernel && E->vec) { /* the wide entry's vector path (emit_vec.c) */
        emit_vec_params(E, f, &ps);
        P("KILN_BODY void kiln_body_v(KILN_TP");
    } else if (f->is_kernel) {
        P(E->acc_mem ? "KILN_BODY void kiln_body_am(KILN_TP" : "KILN_BODY void kiln_body(KILN_TP");
    } else if (f->recursive) {
        /* called from itself: a real call with a stack frame, declared among the helpers
         * for the callers emitted before it (mutual recursion) */
        buf_printf(&E->helpers, "KILN_DEVFN_REC %s %s(KILN_TP KILN_RFP%s);\n", rt,
                   emit_func_name(E, f), ps.p ? ps.p : "");
        P("KILN_DEVFN_REC %s %s(KILN_TP KILN_RFP", rt, emit_func_name(E, f));
    } else {
        P("KILN_DEVFN %s %s(KILN_TP", rt, emit_func_name(E, f));
    }
    PS(ps.p ? ps.p : "");
    PS(") {\n");
    E->ind = 1;
    if (lanes && E->plan.lanes.block) /* the x lanes a lane loop runs (a lane for: fewer) */
        PS("    const i64 nx_ = BX_;\n    (void)nx_;\n");
    /* locals, with the parameters copied into their variables */
    for (int i = 0; i < f->nsyms; i++) {
        Sym *s = f->syms[i];
        if (!emittable(s->ty)) continue;
        int lc = lanes ? E->plan.lanes.cls[s->id] : LANE_UNIFORM;
        if (lc == LANE_PRIVATE) continue; /* declared in its run's lane loop */
        if (lc == LANE_RECOMP) continue;  /* written again where it is read */
        emit_indent(E);
        if (lc == LANE_VARYING && E->plan.lanes.block) { /* nl_ of them: on the stack */
            P("%s %s[nl_];\n", emit_ctype(E, s->ty), emit_sym_name(E, s));
            emit_indent(E);
            P("memset(%s, 0, sizeof %s);\n", emit_sym_name(E, s), emit_sym_name(E, s));
            continue;
        }
        if (lc == LANE_VARYING) {
            P("%s %s[KILN_LANES] = {0};\n", emit_ctype(E, s->ty), emit_sym_name(E, s));
            continue;
        }
        if (s->maybe_none) { /* an optional (emit_opt.c): None until assigned */
            const char *ot = emit_opt_ctype(E, s->ty);
            P("%s %s = ", ot, emit_sym_name(E, s));
            if (s->param >= 0) {
                P("kopt_%s(", ot);
                emit_convert(E, f->params[s->param], s->ty, arena_printf(&E->C->arena, "p%d", s->param));
                PS(");\n");
            } else {
                P("knone_%s();\n", ot);
            }
            emit_indent(E);
            P("(void)%s;\n", emit_sym_name(E, s));
            continue;
        }
        P("%s %s = ", emit_ctype(E, s->ty), emit_sym_name(E, s));
        if (s->param >= 0)
            emit_convert(E, f->params[s->param], s->ty, arena_printf(&E->C->arena, "p%d", s->param));
        else if (ty_is_real(s->ty))
            PS("0");
        else
            PS("{0}");
        PS(";\n");
        if (s->param >= 0 || !s->read) {
            emit_indent(E);
            P("(void)%s;\n", emit_sym_name(E, s));
        }
    }
    for (int i = 0; i < f->storage.n; i++) {
        Node *c = f->storage.v[i];
        int64_t dims[KILN_MAX_NDIM];
        int nd = storage_dims(c, dims, KILN_MAX_NDIM);
        int64_t total = 1;
        for (int d = 0; d < nd; d++) total *= dims[d];
        bool shared = c->intr->kind == IK_SHARED_ARRAY;
        bool rec = c->ty->elem->kind == TY_RECORD;
        int64_t esize = rec ? c->ty->elem->rec->itemsize
                            : (int64_t)kiln_dtype_size((kiln_dtype)c->ty->elem->dtype);
        if (shared && total == 0) continue; /* dynamic: kiln_dsmem */
        emit_indent(E);
        int64_t align = storage_alignment(c); /* alignment=, or 0 */
        if (shared && !E->cuda) {
            /* the block's buffer (rt_blocks.h): each array its own 16-byte aligned place;
             * a larger alignment= rounds the address up in the room sema added */
            const char *el = emit_elem_ctype(E, c->ty->elem);
            if (align > 16)
                P("%s *const sst%d = (%s *)(void *)(((unsigned long)(B_->sh + %lld) + %lld) & "
                  "~%lldul);\n", el, i, el, (long long)E->shared_off, (long long)(align - 1),
                  (long long)(align - 1));
            else
                P("%s *const sst%d = (%s *)(void *)(B_->sh + %lld);\n", el, i, el,
                  (long long)E->shared_off);
            E->shared_off += ((total * esize + 15) & ~15) + (align > 16 ? align : 0);
            continue;
        }
        /* records are structs of bytes: their storage is aligned as an array argument's
         * is, for fields read through typed pointers; alignment= asks for more */
        int64_t natural = rec ? 16 : c->ty->elem->kind == TY_COMPLEX ? esize / 2 : esize;
        if (align <= natural) align = rec ? 16 : 0; /* C refuses a weaker _Alignas */
        const char *at = !align ? "" : arena_printf(&E->C->arena, E->cuda ? "__align__(%lld) "
                                                    : "_Alignas(%lld) ", (long long)align);
        P("%s%s%s %s%d[%lld];\n", shared ? "__shared__ " : "", at, emit_elem_ctype(E, c->ty->elem),
          shared ? "sst" : "lst", i, (long long)total);
    }
    if (value) {
        emit_indent(E);
        P("%s r0_ = {0};\n", rt);
        emit_indent(E);
        PS("(void)r0_;\n");
    }
    if (f->recursive && !f->is_kernel) { /* its stack bound and the stop word (rt_cpu.h) */
        emit_indent(E);
        P("KILN_REC_ENTER(%d, %s)\n", emit_loc(E, f->def->sp), E->leave);
    }
    emit_gvalue_decls(E);
    buf_put(E->o, body.p ? body.p : "", body.len);
    E->body = NULL;
    if (value) PS("    return r0_;\n");
    PS("}\n\n");
    if (lanes && !E->plan.lanes.block) {
        /* The entry's loops call this one function, for full chunks and the short
         * one: the lane body is compiled twice (full chunks with their lane loops
         * of constant length, whose arrays live in registers), not at every call. */
        P("static __attribute__((noinline, unused)) void kiln_body_lanes(KILN_TP, int nl_%s) {\n"
          "    if (nl_ == KILN_LANES) kiln_lanes_(KILN_TA, KILN_LANES%s);\n"
          "    else kiln_lanes_(KILN_TA, nl_%s);\n}\n\n",
          ps.p ? ps.p : "", pa.p ? pa.p : "", pa.p ? pa.p : "");
    }
    buf_free(&ps);
    buf_free(&pa);
    E->lanes = false;
    emit_too_big(E, f->def->def.name_sp);
}

int emit_param_slots(const Type *t) {
    if (ty_is_ptr(t)) return 1; /* the address */
    if (t->kind == TY_ARRAY) return 1 + 2 * t->ndim;
    if (t->kind == TY_RECORD) return 1; /* its address (kiln.h) */
    return t->kind == TY_COMPLEX && t->dtype == KILN_COMPLEX128 ? 2 : 1; /* 16 bytes */
}

/* An array's arguments to kiln_overlap_ (rt_cpu.h): its data, rank, shape, strides and
 * element size. */
static const char *overlap_args(Emit *E, const Type *t, int i) {
    if (t->ndim == 0)
        return arena_printf(&E->C->arena, "p%d.data, 0, (const i64 *)0, (const i64 *)0, "
                                          "(i64)sizeof(*p%d.data)", i, i);
    return arena_printf(&E->C->arena, "p%d.data, %d, p%d.shape, p%d.strides, (i64)sizeof(*p%d.data)",
                        i, t->ndim, i, i, i);
}

/* " || <array i shares memory with argument j>" for every other array or record
 * argument j: kiln_overlap_ of their extents, 1 where an extent is unknown (a pointer,
 * a record). */
static void overlaps_any(Emit *E, const FuncSpec *k, int i) {
    for (int j = 0; j < k->nparams; j++) {
        const Type *t = k->params[j];
        if (j == i || (t->kind != TY_ARRAY && t->kind != TY_RECORD)) continue;
        if (ty_is_ptr(k->params[i]) || ty_is_ptr(t) || t->kind == TY_RECORD) PS(" || 1");
        else P(" || kiln_overlap_(%s, %s)", overlap_args(E, k->params[i], i),
               overlap_args(E, t, j));
    }
}

/* al<p>_: array parameter p, which the plan privatises (plan.h), shares memory with
 * another argument in this launch (the same buffer twice, or a view of it): its atomics
 * then go to memory, each seen at once by reads through the other (hunt33).  A pointer
 * or record argument, whose extent is unknown, counts as sharing. */
static void alias_flags(Emit *E, const FuncSpec *k) {
    for (int i = 0; i < k->nparams && i < 64; i++) {
        if (!((E->plan.priv >> i) & 1)) continue;
        P("    const int al%d_ = 0", i);
        overlaps_any(E, k, i);
        PS(";\n");
    }
}

/* A launch where an accumulated array (plan.acc: its atomics a reduction variable of the
 * vectorised loop) shares memory with another argument, or where a grid-stride loop run
 * flat could not be (fl_, stride_flag), runs kiln_body_am, the kernel as written, thread
 * after thread: each add reaches memory before the next read, through either name, and
 * one thread's iterations run in order, as on a GPU (hunt33, hunt34). */
static void acc_fallback(Emit *E, const FuncSpec *k) {
    PS(E->plan.stride_for ? "    if (!fl_" : "    if (0");
    for (int i = 0; i < k->nparams && i < 64; i++)
        if ((E->plan.acc >> i) & 1) P(" || al%d_", i);
    PS(") {\n"
       "        KILN_SERIAL /* (tier 0's other shares of the launch: nothing) */\n"
       "        for (i64 bz_ = 0; bz_ < GZ_; bz_++)\n"
       "        for (i64 by_ = 0; by_ < GY_; by_++)\n"
       "        for (i64 bx_ = 0; bx_ < GX_; bx_++) {\n"
       "            KILN_POLL(return;)\n"
       "            for (i64 tz_ = 0; tz_ < BZ_; tz_++)\n"
       "            for (i64 ty_ = 0; ty_ < BY_; ty_++)\n"
       "            for (i64 tx_ = 0; tx_ < BX_; tx_++)\n"
       "                kiln_body_am(tx_, ty_, tz_, bx_, by_, bz_, BX_, BY_, BZ_, GX_, GY_, GZ_, E_, "
       "S_, B_");
    for (int i = 0; i < k->nparams; i++)
        if (emittable(k->params[i])) P(", p%d", i);
    PS(");\n        }\n        return;\n    }\n");
}

/* fl_: a grid-stride loop runs flat (plan_stride.c) unless an array the kernel writes
 * shares memory with another argument: one thread's iterations then run in order, as
 * on a GPU (`out[i] = x[i - 1]` with x the same buffer as out, launched 1 x 1), by
 * acc_fallback. */
static void stride_flag(Emit *E, const FuncSpec *k) {
    PS("    const int fl_ = !(0");
    for (int i = 0; i < k->nparams; i++)
        if (spec_writes(k, i) && k->params[i]->kind == TY_ARRAY) overlaps_any(E, k, i);
    PS(");\n");
}

/* The start of an acc array's reduction variable (plan.h, acc_op): 0 for sums, the
 * dtype's lowest value for max (-inf for floats), its highest for min. */
static const char *acc_identity(const Type *el, int op) {
    if (op == PLAN_ACC_SUM) return "0";
    bool max = op == PLAN_ACC_MAX;
    switch (el->dtype) {
    case KILN_FLOAT32: return max ? "(-HUGE_VALF)" : "HUGE_VALF";
    case KILN_FLOAT64: return max ? "(-HUGE_VAL)" : "HUGE_VAL";
    case KILN_INT32: return max ? "(-2147483647 - 1)" : "2147483647";
    case KILN_UINT32: return max ? "0u" : "4294967295u";
    case KILN_UINT64: return max ? "0ull" : "18446744073709551615ull";
    default: return max ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL";
    }
}

/* The private copies of a thread's share (plan.h): made before its loops... */
static void priv_open(Emit *E, const FuncSpec *k, const char *in) {
    for (int i = 0; i < k->nparams && i < 64; i++) {
        if (!((E->plan.priv >> i) & 1)) continue;
        const Type *t = k->params[i];
        const char *el = emit_scalar_ctype(t->elem);
        if ((E->plan.acc >> i) & 1) {
            for (int s = 0; s < E->plan.acc_n[i]; s++)
                P("%s%s ac%d_%d_ = %s;\n", in, el, i, s, acc_identity(t->elem, E->plan.acc_op[i][s]));
            continue;
        }
        /* an N-D array's copy is C-contiguous: nq<p>_ elements */
        P("%s%s q%d_ = p%d;\n%sint pv%d_ = 0;\n%s%s *pb%d_ = 0;\n%si64 nq%d_ = 1;\n", in,
          emit_ctype(E, t), i, i, in, i, in, el, i, in, i);
        for (int d = 0; d < t->ndim; d++)
            P("%sif (p%d.shape[%d] > 0 && nq%d_ <= %d / (i64)sizeof(%s)) nq%d_ *= p%d.shape[%d]; "
              "else nq%d_ = 0;\n",
              in, i, d, i, PLAN_PRIVATE_MAX_BYTES, el, i, i, d, i);
        P("%sif (!al%d_ && nq%d_ > 0 && nq%d_ <= %d / (i64)sizeof(%s)) {\n", in, i, i, i,
          PLAN_PRIVATE_MAX_BYTES, el);
        P("%s    pb%d_ = (%s *)calloc((size_t)nq%d_, sizeof(%s));\n", in, i, el, i, el);
        P("%s    if (pb%d_) {\n%s        q%d_.data = pb%d_;\n%s        pv%d_ = 1;\n", in, i, in, i,
          i, in, i);
        /* in the order the kernel's code for this layout indexes (an F array's first
         * dimension fastest; C and strided ones the last) */
        bool f = t->layout == 'F';
        for (int j = 0; j < t->ndim; j++) {
            int d = f ? j : t->ndim - 1 - j, prev = f ? d - 1 : d + 1;
            P("%s        q%d_.strides[%d] = %s;\n", in, i, d,
              j == 0 ? "1"
                     : arena_printf(&E->C->arena, "q%d_.strides[%d] * p%d.shape[%d]", i, prev, i,
                                    prev));
        }
        P("%s    }\n%s}\n", in, in);
    }
}

/* ...and added into the arrays after them */
static void priv_close(Emit *E, const FuncSpec *k, const char *in) {
    for (int i = 0; i < k->nparams && i < 64; i++) {
        if (!((E->plan.priv >> i) & 1)) continue;
        const Type *t = k->params[i];
        if ((E->plan.acc >> i) & 1) {
            for (int s = 0; s < E->plan.acc_n[i]; s++) {
                long long c = (long long)E->plan.acc_index[i][s];
                int op = E->plan.acc_op[i][s];
                P("%sif (ac%d_%d_ != %s) kiln_atomic_%s_%s(&p%d.data[(%lldLL < 0 ? %lldLL + "
                  "p%d.shape[0] : %lldLL) * p%d.strides[0]], ac%d_%d_);\n",
                  in, i, s, acc_identity(t->elem, op),
                  op == PLAN_ACC_MAX ? "max" : op == PLAN_ACC_MIN ? "min" : "add",
                  emit_ctype(E, t->elem), i, c, c, i, c, i, i, s);
            }
            continue;
        }
        /* element k_ of the copy: its index in each dimension, in the copy's order */
        P("%sif (pb%d_) {\n%s    for (i64 k_ = 0; k_ < nq%d_; k_++) {\n", in, i, in, i);
        P("%s        if (pb%d_[k_] == 0) continue;\n%s        i64 r_ = k_, o_ = 0;\n", in, i, in);
        for (int j = 0; j < t->ndim; j++) {
            int d = t->layout == 'F' ? j : t->ndim - 1 - j;
            P("%s        o_ += (r_ %% p%d.shape[%d]) * p%d.strides[%d]; r_ /= p%d.shape[%d];\n", in,
              i, d, i, d, i, d);
        }
        P("%s        kiln_atomic_add_%s(&p%d.data[o_], pb%d_[k_]);\n%s    }\n", in,
          emit_ctype(E, t->elem), i, i, in);
        P("%s    free(pb%d_);\n%s}\n", in, i, in);
    }
}

static void cpu_entry(Emit *E, FuncSpec *k) {
    E->o = &E->funcs;
    E->line = -1;
    PS("#line 1 \"<kiln entry>\"\n");
    if (E->blocks && !E->plan.lanes.block) emit_block_prelude(E, k);
    if (E->plan.priv || E->R->cooperative) PS("void *calloc(size_t, size_t);\nvoid free(void *);\n");
    /* tier 0 may run this entry on several threads at once (rt_cpu.h): every entry but
     * the cooperative one, which runs the whole grid on one */
    if (!E->R->cooperative) PS("KILN_POOL_OK\n");
    PS("KILN_EXPORT void kiln_entry(const kiln_launch *L, const i64 *P) {\n");
    int slot = 0;
    for (int i = 0; i < k->nparams; i++) {
        const Type *t = k->params[i];
        const char *ct = emit_ctype(E, t);
        if (ty_is_ptr(t)) {
            P("    %s p%d;\n    p%d.data = (%s *)(uintptr_t)P[%d];\n", ct, i, i,
              emit_elem_ctype(E, t->elem), slot++);
        } else if (t->kind == TY_ARRAY) {
            P("    %s p%d;\n    p%d.data = (%s *)(uintptr_t)P[%d];\n", ct, i, i,
              emit_elem_ctype(E, t->elem), slot++);
            for (int d = 0; d < t->ndim; d++) P("    p%d.shape[%d] = P[%d];\n", i, d, slot++);
            for (int d = 0; d < t->ndim; d++) P("    p%d.strides[%d] = P[%d];\n", i, d, slot++);
        } else if (t->kind == TY_RECORD) { /* the record's address */
            P("    %s p%d = (%s)(uintptr_t)P[%d];\n", ct, i, ct, slot);
            slot += 1;
        } else {
            P("    %s p%d;\n    memcpy(&p%d, &P[%d], sizeof p%d);\n", ct, i, i, slot, i);
            slot += emit_param_slots(t);
        }
    }
    if (!E->blocks) alias_flags(E, k);
    if (!E->blocks && E->plan.stride_for) stride_flag(E, k);
    PS("    const i64 GX_ = L->grid[0], GY_ = L->grid[1], GZ_ = L->grid[2];\n"
       "    const i64 BX_ = L->block[0], BY_ = L->block[1], BZ_ = L->block[2];\n"
       "    struct kiln_err *E_ = L->err;\n"
       "    const int *S_ = L->stop ? L->stop : &kiln_never_;\n"
       "    kiln_blk *const B_ = 0;\n"
       "    (void)B_;\n"
       "    const i64 NB = GX_ * GY_ * GZ_;\n");
    if (!E->blocks && (E->plan.acc || E->plan.stride_for)) acc_fallback(E, k);
    if (E->blocks) {
        if (E->R->cooperative) emit_grid_entry(E, k);
        else if (E->plan.lanes.block) emit_blanes_entry(E, k);
        else emit_block_entry(E, k);
        return;
    }
    /* each grid position's weight against the parallel threshold (plan.h) */
    P("    const i64 W_ = %d;\n", E->plan.loops ? PLAN_LOOP_WEIGHT : 1);
    emit_guard_bounds(E);
    static const char cn[3] = {'x', 'y', 'z'};
    E->in_entry = true;
    if (E->plan.stride_for) /* a grid-stride loop run flat: the positions [0, stop) */
        P("    { const i64 e_ = (i64)(%s); if (e_ < xhi_) xhi_ = e_; }\n",
          emit_expr_str(E, E->plan.stride_stop, ty_scalar(KILN_INT64)));
    E->in_entry = false;
    Buf args, fp;
    buf_init_arena(&args, &E->C->arena);
    buf_init_arena(&fp, &E->C->arena);
    uint64_t arrays = E->plan.priv & ~E->plan.acc;
    for (int i = 0; i < k->nparams; i++)
        buf_printf(&args, (i < 64 && ((arrays >> i) & 1)) ? ", q%d_" : ", p%d", i);
    /* the vectorised loops' calls (sargs) add each position's contribution through a
     * local of the iteration (t<p>_), then into the reduction variable, written where
     * OpenMP's simd lowering sees it: the address of the variable itself, passed into
     * the body, kept the loop scalar (one dependent add after another, perf33) */
    Buf red, sargs, pre, post;
    buf_init_arena(&red, &E->C->arena);
    buf_init_arena(&sargs, &E->C->arena);
    buf_init_arena(&pre, &E->C->arena);
    buf_init_arena(&post, &E->C->arena);
    buf_puts(&sargs, args.p ? args.p : "");
    for (int i = 0; i < k->nparams && i < 64; i++) {
        if ((E->plan.acc >> i) & 1) {
            for (int s = 0; s < E->plan.acc_n[i]; s++) {
                int op = E->plan.acc_op[i][s];
                buf_printf(&args, ", &ac%d_%d_", i, s);
                buf_printf(&sargs, ", &t%d_%d_", i, s);
                buf_printf(&pre, "%s t%d_%d_ = %s; ", emit_scalar_ctype(k->params[i]->elem), i,
                           s, acc_identity(k->params[i]->elem, op));
                if (op == PLAN_ACC_SUM) buf_printf(&post, " ac%d_%d_ += t%d_%d_;", i, s, i, s);
                else
                    buf_printf(&post, " ac%d_%d_ = t%d_%d_ %s ac%d_%d_ ? t%d_%d_ : ac%d_%d_;", i, s,
                               i, s, op == PLAN_ACC_MAX ? ">" : "<", i, s, i, s, i, s);
                buf_printf(&red, " reduction(%s:ac%d_%d_)",
                           op == PLAN_ACC_MAX ? "max" : op == PLAN_ACC_MIN ? "min" : "+", i, s);
            }
        } else if ((E->plan.priv >> i) & 1) {
            buf_printf(&args, ", pv%d_", i);
            buf_printf(&sargs, ", pv%d_", i);
        }
    }
    const char *sa = sargs.p ? sargs.p : "";
    const char *pr = pre.p ? arena_printf(&E->C->arena, "{ %s", pre.p) : "";
    const char *po = post.p ? arena_printf(&E->C->arena, "%s }", post.p) : "";
    /* firstprivate: each thread's own copies, which the kernel's stores cannot alias */
    buf_puts(&fp, "firstprivate(GX_, GY_, GZ_, BX_, BY_, BZ_, E_, S_, xlo_, xhi_, ylo_, yhi_, "
                  "zlo_, zhi_");
    for (int i = 0; i < k->nparams; i++) buf_printf(&fp, ", p%d", i);
    buf_puts(&fp, ")");
    const char *a = args.p ? args.p : "";
    /* atomics keep the thread loop scalar, unless they all became reduction variables */
    const char *simd = E->inner_simd ? "" /* (a fold's loop has one: OpenMP nests none) */
                       : !E->R->uses_atomics ? "omp simd"
                       : E->plan.simd_ok ? arena_printf(&E->C->arena, "omp simd%s",
                                                        red.p ? red.p : "")
                                         : "";
    /* The stop word is polled between blocks (rows, pieces of KILN_POLL_SPAN
     * threads), never inside the vectorised thread loop.  A stopped thread leaves
     * its share at once, except in the collapsed loop over the rows of a 2-D or
     * 3-D grid-only kernel, where each remaining row skips at its poll. */
    if (!E->R->uses_sregs) {
        /* The kernel sees its position only through kiln.grid()/gridsize(): run the
         * whole grid as one block, in the loop order planned from its accesses
         * (plan.h), the innermost loop vectorised, the outer two parallel. */
        P("    const i64 NX_ = %s, NY_ = GY_ * BY_, NZ_ = GZ_ * BZ_;\n",
          E->plan.stride_for ? "xhi_" : "GX_ * BX_");
        for (int d = 0; d < 3; d++)
            P("    const i64 %c0_ = %clo_ > 0 ? %clo_ : 0, %c1_ = %chi_ < N%c_ ? %chi_ : N%c_;\n",
              cn[d], cn[d], cn[d], cn[d], cn[d], cn[d] - 32, cn[d], cn[d] - 32);
        /* (a grid-stride loop's few blocks cover many positions) */
        P("    if (x1_ <= x0_ || y1_ <= y0_ || z1_ <= z0_) return;\n"
          "    const int par_ = (x1_ - x0_) * (y1_ - y0_) * (z1_ - z0_) * W_ >= L->par_threshold "
          "&& %s;\n"
          "    if (NY_ * NZ_ == 1) {\n",
          E->plan.stride_for ? "1" : "NB > 1");
        /* threads whose bodies loop may each take long: Ctrl-C is looked for sooner */
        const char *span = E->R->uses_loops ? "KILN_POLL_SPAN_LOOPS" : "KILN_POLL_SPAN";
        /* lane mode (plan.h): along x here, so only when the plan's lanes are */
        const bool lanes = E->plan.lanes.n > 0, lanes_x = lanes && E->plan.lanes.dim == 0;
        /* one row: each OpenMP thread takes a contiguous share (as schedule(simd:static)
         * would, in multiples of 16), run in pieces with a poll before each */
        for (int par = 1; par >= 0; par--) {
            if (par)
                P("        if (par_) {\n"
                  "            _Pragma(\"omp parallel %s\")\n"
                  "            {\n"
                  "                const i64 nt_ = omp_get_num_threads(), me_ = omp_get_thread_num();\n"
                  "                const i64 per_ = ((x1_ - x0_) / nt_ + 16) & ~(i64)15;\n"
                  "                const i64 lo_ = x0_ + me_ * per_;\n"
                  "                const i64 hi_ = x1_ - lo_ > per_ ? lo_ + per_ : x1_;\n",
                  fp.p);
            else
                PS("        } else KILN_SERIAL {\n"
                   "            {\n"
                   "                const i64 lo_ = x0_, hi_ = x1_;\n");
            priv_open(E, k, "                ");
            P("                for (i64 c_ = lo_; c_ < hi_; c_ += %s) {\n"
              "                    KILN_POLL(break;)\n"
              "                    const i64 e_ = hi_ - c_ > %s ? c_ + %s : hi_;\n",
              span, span, span);
            if (lanes_x) /* full chunks of lanes, then one short chunk */
                P("                    const i64 le_ = c_ + (e_ - c_) / KILN_LANES * KILN_LANES;\n"
                  "                    for (i64 x = c_; x < le_; x += KILN_LANES)\n"
                  "                        kiln_body_lanes(x, 0, 0, 0, 0, 0, BX_, BY_, BZ_, GX_, GY_, GZ_, E_, S_, B_, KILN_LANES%s);\n"
                  "                    if (le_ < e_)\n"
                  "                        kiln_body_lanes(le_, 0, 0, 0, 0, 0, BX_, BY_, BZ_, GX_, GY_, GZ_, E_, S_, B_, (int)(e_ - le_)%s);\n"
                  "                }\n",
                  a, a);
            else
                P("                    _Pragma(\"%s\")\n"
                  "                    for (i64 x = c_; x < e_; x++)\n"
                  "                        %skiln_body(x, 0, 0, 0, 0, 0, BX_, BY_, BZ_, GX_, GY_, GZ_, E_, S_, B_%s);%s\n"
                  "                }\n",
                  simd, pr, sa, po);
            priv_close(E, k, "                ");
            PS("            }\n");
        }
        PS("        }\n    } else {\n");
        const int *o = E->plan.order;
        const char A = cn[o[0]], B = cn[o[1]], Cd = cn[o[2]];
        for (int par = 1; par >= 0; par--) {
            if (par)
                P("        if (par_) {\n            _Pragma(\"omp parallel %s\")\n            {\n",
                  fp.p);
            else PS("        } else KILN_SERIAL {\n            {\n");
            priv_open(E, k, "            ");
            if (par)
                P("            _Pragma(\"omp for collapse(%d) schedule(static) nowait\")\n",
                  E->plan.tile ? 3 : 2);
            /* tier 0 has no OpenMP: its threads take the rows in turn (rt_cpu.h) */
            const char *mine =
                !par ? ""
                : E->plan.tile
                    ? arena_printf(&E->C->arena,
                                   "KILN_MINE(((%c - %c0_) * ((%c1_ - %c0_ + %d) / %d) + (tb_ - %c0_) / %d)"
                                   " * ((%c1_ - %c0_ + %d) / %d) + (tc_ - %c0_) / %d)",
                                   A, A, B, B, PLAN_TILE - 1, PLAN_TILE, B, PLAN_TILE, Cd, Cd,
                                   PLAN_TILE - 1, PLAN_TILE, Cd, PLAN_TILE)
                    : arena_printf(&E->C->arena, "KILN_MINE((%c - %c0_) * (%c1_ - %c0_) + (%c - %c0_))",
                                   A, A, B, B, B, B);
            if (E->plan.tile) {
                P("            for (i64 %c = %c0_; %c < %c1_; %c++)\n"
                  "            for (i64 tb_ = %c0_; tb_ < %c1_; tb_ += %d)\n"
                  "            for (i64 tc_ = %c0_; tc_ < %c1_; tc_ += %d) {\n"
                  "                KILN_POLL(continue;)\n"
                  "                %s\n"
                  "                const i64 eb_ = %c1_ - tb_ > %d ? tb_ + %d : %c1_;\n"
                  "                const i64 ec_ = %c1_ - tc_ > %d ? tc_ + %d : %c1_;\n"
                  "                for (i64 %c = tb_; %c < eb_; %c++) {\n",
                  A, A, A, A, A, B, B, PLAN_TILE, Cd, Cd, PLAN_TILE, mine, B, PLAN_TILE, PLAN_TILE, B,
                  Cd, PLAN_TILE, PLAN_TILE, Cd, B, B, B);
                if (lanes)
                    P("                    for (i64 %c = tc_; %c < ec_; %c += KILN_LANES)\n"
                      "                        kiln_body_lanes(x, y, z, 0, 0, 0, BX_, BY_, BZ_, GX_, GY_, GZ_, E_, S_, B_, "
                      "ec_ - %c < KILN_LANES ? (int)(ec_ - %c) : KILN_LANES%s);\n",
                      Cd, Cd, Cd, Cd, Cd, a);
                else
                    P("                    _Pragma(\"%s\")\n"
                      "                    for (i64 %c = tc_; %c < ec_; %c++)\n"
                      "                        %skiln_body(x, y, z, 0, 0, 0, BX_, BY_, BZ_, GX_, GY_, GZ_, E_, S_, B_%s);%s\n",
                      simd, Cd, Cd, Cd, pr, sa, po);
                PS("                }\n"
                   "            }\n");
            } else {
                P("            for (i64 %c = %c0_; %c < %c1_; %c++)\n"
                  "            for (i64 %c = %c0_; %c < %c1_; %c++) {\n"
                  "                KILN_POLL(continue;)\n"
                  "                %s\n",
                  A, A, A, A, A, B, B, B, B, B, mine);
                if (lanes)
                    P("                const i64 le_ = %c0_ + (%c1_ - %c0_) / KILN_LANES * KILN_LANES;\n"
                      "                for (i64 %c = %c0_; %c < le_; %c += KILN_LANES)\n"
                      "                    kiln_body_lanes(x, y, z, 0, 0, 0, BX_, BY_, BZ_, GX_, GY_, GZ_, E_, S_, B_, KILN_LANES%s);\n"
                      "                if (le_ < %c1_) {\n"
                      "                    const i64 %c = le_;\n"
                      "                    kiln_body_lanes(x, y, z, 0, 0, 0, BX_, BY_, BZ_, GX_, GY_, GZ_, E_, S_, B_, (int)(%c1_ - le_)%s);\n"
                      "                }\n"
                      "            }\n",
                      Cd, Cd, Cd, Cd, Cd, Cd, Cd, a, Cd, Cd, Cd, a);
                else
                    P("                _Pragma(\"%s\")\n"
                      "                for (i64 %c = %c0_; %c < %c1_; %c++)\n"
                      "                    %skiln_body(x, y, z, 0, 0, 0, BX_, BY_, BZ_, GX_, GY_, GZ_, E_, S_, B_%s);%s\n"
                      "            }\n",
                      simd, Cd, Cd, Cd, Cd, Cd, pr, sa, po);
            }
            priv_close(E, k, "            ");
            PS("            }\n");
        }
        PS("        }\n    }\n}\n");
        buf_free(&args);
        buf_free(&fp);
        buf_free(&red);
        return;
    }
    for (int par = 1; par >= 0; par--) {
        emit_block_range(E, par, "BX_ * BY_ * BZ_ * W_", fp.p);
        priv_open(E, k, "        ");
        PS("        for (i64 b = b0_; b < b1_; b++) {\n"
           "            KILN_POLL(break;)\n"
           "            const i64 bx_ = b % GX_, by_ = (b / GX_) % GY_, bz_ = b / (GX_ * GY_);\n");
        /* the threads of this block inside the guard's bounds, in each dimension */
        static const char *blk[3][2] = {{"bx_", "BX_"}, {"by_", "BY_"}, {"bz_", "BZ_"}};
        for (int d = 0; d < 3; d++) {
            const char *bi = blk[d][0], *bd = blk[d][1];
            P("            const i64 %cb_ = %s * %s;\n"
              "            const i64 t%clo_ = %clo_ > %cb_ ? (%clo_ - %cb_ < %s ? %clo_ - %cb_ : %s) : 0;\n"
              "            const i64 t%chi_ = %chi_ - %cb_ < %s ? %chi_ - %cb_ : %s;\n",
              cn[d], bi, bd, cn[d], cn[d], cn[d], cn[d], cn[d], bd, cn[d], cn[d], bd, cn[d],
              cn[d], cn[d], bd, cn[d], cn[d], bd);
        }
        PS("            for (i64 tz_ = tzlo_; tz_ < tzhi_; tz_++)\n"
           "            for (i64 ty_ = tylo_; ty_ < tyhi_; ty_++) {\n");
        P("                _Pragma(\"%s\")\n", simd);
        P("                for (i64 tx_ = txlo_; tx_ < txhi_; tx_++)\n"
          "                    kiln_body(tx_, ty_, tz_, bx_, by_, bz_, BX_, BY_, BZ_, GX_, GY_, "
          "GZ_, E_, S_, B_%s);\n",
          a);
        PS("            }\n        }\n");
        priv_close(E, k, "        ");
        PS("        }\n");
    }
    PS("    }\n}\n");
    buf_free(&args);
    buf_free(&fp);
    buf_free(&red);
}

/* Whether the kernel may run several grid positions per thread: it sees its
 * position only through kiln.grid() (no thread or block indices, gridsize,
 * barriers, shared memory or warp operations), so each position is an
 * independent run of the body, whichever thread makes it.  CUDA only. */
static bool widens(Emit *E, const FuncSpec *k) {
    const SemaResult *R = E->R;
    if (R->gpu_only || R->uses_sregs || R->uses_gridsize) return false;
    for (int i = 0; i < k->nparams; i++)
        if ((k->params[i]->kind != TY_ARRAY && !ty_is_scalar(k->params[i])) ||
            ty_is_ptr(k->params[i]))
            return false; /* (the launcher cannot check that a pointer overlaps no array) */
    return true;
}

/* The CUDA entry points.  kiln_entry runs the body once per thread.  For a
 * kernel that widens, kiln_entry_wide runs it for KILN_CUDA_WIDE positions per
 * thread, block-strided so that each pass stays coalesced, up to n_ (the
 * launch's threads).  The launcher takes it for a 1-D launch large enough to
 * fill the GPU whose arrays do not overlap: its arrays arrive as separate
 * __restrict__ pointers (const for those the kernel never writes), so NVRTC
 * loads them through the read-only path and batches the loads of the passes. */
/* @kiln.jit(launch_bounds=...) as CUDA's __launch_bounds__ before each entry.  Blocks
 * per cluster exist from sm_90 on; older architectures get the first two bounds. */
static void launch_bounds(Emit *E) {
    const int *lb = E->C->opts.launch_bounds;
    if (lb[0] <= 0) return;
    int min_blocks = lb[1] > 0 ? lb[1] : 1;
    if (lb[2] > 0)
        P("\n#if __CUDA_ARCH__ >= 900\n__launch_bounds__(%d, %d, %d)\n#else\n"
          "__launch_bounds__(%d, %d)\n#endif\n",
          lb[0], min_blocks, lb[2], lb[0], min_blocks);
    else if (lb[1] > 0)
        P("__launch_bounds__(%d, %d) ", lb[0], min_blocks);
    else
        P("__launch_bounds__(%d) ", lb[0]);
}

static void cuda_entry(Emit *E, FuncSpec *k) {
    E->o = &E->funcs;
    E->line = -1;
    PS("#line 1 \"<kiln entry>\"\n");
    Buf args;
    buf_init_arena(&args, &E->C->arena);
    for (int i = 0; i < k->nparams; i++) buf_printf(&args, ", p%d", i);
    const char *a = args.p ? args.p : "";
    PS("extern \"C\" __global__ void ");
    launch_bounds(E);
    PS("kiln_entry(struct kiln_err *E_");
    for (int i = 0; i < k->nparams; i++) P(", %s p%d", emit_ctype(E, k->params[i]), i);
    if (E->R->cooperative) /* the block's live threads, for the grid barrier (rt_cuda.h) */
        P(") {\n    kiln_grid_enter_();\n    kiln_body(E_, KILN_BID_X * KILN_BDIM_X + KILN_TID_X%s);\n"
          "    kiln_grid_exit_();\n}\n\n", a);
    else
        P(") {\n    kiln_body(E_, KILN_BID_X * KILN_BDIM_X + KILN_TID_X%s);\n}\n\n", a);
    if (widens(E, k)) {
        PS("extern \"C\" __global__ void ");
        launch_bounds(E);
        PS("kiln_entry_wide(struct kiln_err *E_");
        for (int i = 0; i < k->nparams; i++) {
            const Type *t = k->params[i];
            if (emit_param_slots(t) == 2) { /* each slot is a parameter of its own */
                P(", f64 p%dre, f64 p%dim", i, i);
                continue;
            }
            if (t->kind != TY_ARRAY) {
                P(", %s p%d", emit_ctype(E, t), i);
                continue;
            }
            bool ro = !spec_writes(k, i);
            P(", %s%s *__restrict__ p%dd", ro ? "const " : "", emit_elem_ctype(E, t->elem), i);
            for (int d = 0; d < t->ndim; d++) P(", i64 p%ds%d", i, d);
            for (int d = 0; d < t->ndim; d++) P(", i64 p%dt%d", i, d);
        }
        PS(", i64 n_) {\n");
        for (int i = 0; i < k->nparams; i++) {
            const Type *t = k->params[i];
            if (emit_param_slots(t) == 2) P("    c128 p%d = kiln_c128(p%dre, p%dim);\n", i, i, i);
            if (t->kind != TY_ARRAY) continue;
            P("    %s p%d;\n    p%d.data = (%s *)p%dd;\n", emit_ctype(E, t), i, i,
              emit_elem_ctype(E, t->elem), i);
            for (int d = 0; d < t->ndim; d++) P("    p%d.shape[%d] = p%ds%d;\n", i, d, i, d);
            for (int d = 0; d < t->ndim; d++) P("    p%d.strides[%d] = p%dt%d;\n", i, d, i, d);
        }
        if (E->vec) {
            emit_vec_entry(E, k, a);
            buf_free(&args);
            return;
        }
        P("    const i64 x0_ = KILN_BID_X * KILN_BDIM_X * %d + KILN_TID_X;\n"
          "#pragma unroll\n"
          "    for (int k_ = 0; k_ < %d; k_++) {\n"
          "        const i64 x_ = x0_ + k_ * KILN_BDIM_X;\n"
          "        if (x_ < n_) kiln_body(E_, x_%s);\n"
          "    }\n}\n\n",
          KILN_CUDA_WIDE, KILN_CUDA_WIDE, a);
    }
    buf_free(&args);
}

/* The entry of a device function compiled alone (kiln.compile_ptx(device=True)): a C
 * symbol named as asked, which callers in other modules link against.  It has no launch
 * error record, so its checks (debug=True) report to a record of its own, which nothing
 * reads; kiln.grid(1) is the calling thread's position, as in a kernel. */
/* a float16 travels as its 16 bits, as CUDA's __half and Numba's float16 do */
static const char *export_ctype(Emit *E, const Type *t) {
    return emit_is_f16(t) ? emit_elem_ctype(E, t) : emit_ctype(E, t);
}

static void cuda_export(Emit *E, FuncSpec *f) {
    E->o = &E->funcs;
    E->line = -1;
    PS("#line 1 \"<kiln entry>\"\n");
    bool value = f->ret->kind != TY_NONE;
    int want = E->C->opts.export_ret;
    const Type *rt = value && want > 0 ? ty_scalar((kiln_dtype)(want - 1)) : f->ret;
    P("extern \"C\" __device__ %s %s(", value ? export_ctype(E, rt) : "void",
      E->C->opts.export_name);
    for (int i = 0; i < f->nparams; i++)
        P("%s%s p%d", i ? ", " : "", export_ctype(E, f->params[i]), i);
    PS(") {\n    struct kiln_err e_ = {0, 0, 0, 0, 0};\n    struct kiln_err *E_ = &e_;\n"
       "    i64 gx_ = KILN_BID_X * KILN_BDIM_X + KILN_TID_X;\n    ");
    Buf call;
    buf_init_arena(&call, &E->C->arena);
    buf_printf(&call, "%s(KILN_TA", emit_func_name(E, f));
    for (int i = 0; i < f->nparams; i++)
        buf_printf(&call, emit_is_f16(f->params[i]) ? ", kiln_h2f(p%d)" : ", p%d", i);
    buf_puts(&call, ")");
    if (value) {
        PS(emit_is_f16(rt) ? "return kiln_f2h(" : "return ");
        emit_convert(E, f->ret, rt, call.p);
        if (emit_is_f16(rt)) PS(")");
    } else {
        PS(call.p);
    }
    PS(";\n}\n\n");
    buf_free(&call);
}

int emit_program(Compiler *C, const SemaResult *r, Buf *out, PtrVec *files, Buf *vec) {
    Emit EM;
    memset(&EM, 0, sizeof EM);
    Emit *E = &EM;
    int errors = C->nerrors; /* the emitter's own (emit_too_big, print's constant memory) */
    E->C = C;
    E->R = r;
    E->cuda = C->opts.target == KILN_TARGET_CUDA;
    E->debug = C->opts.debug != 0;
    E->fastmath = C->opts.fastmath != 0;
    buf_init_arena(&E->types, &E->C->arena);
    buf_init_arena(&E->helpers, &E->C->arena);
    buf_init_arena(&E->funcs, &E->C->arena);
    if (!E->cuda) plan_cpu(r, E->debug, &C->arena, &E->plan);
    E->blocks = !E->cuda && r->block_mode;
    E->spin = E->blocks && r->spin;
    if (E->blocks) {
        /* fibers run each thread through kiln_body as written: no guard folded into
         * the entry's loops, no lanes, no private copies of atomics' arrays */
        memset(&E->plan.guard, 0, sizeof E->plan.guard);
        E->plan.lanes.n = 0;
        E->plan.priv = E->plan.acc = 0;
        E->plan.stride_for = NULL;
        /* ...unless its barriers are met by every thread: then lane loops over each
         * block's threads (plan_block_lanes), and no fiber body */
        if (!E->debug) plan_block_lanes(r, &C->arena, &E->plan);
    }
    for (int i = 0; i < r->order.n && !E->too_big; i++)
        if (!E->plan.lanes.block || r->order.v[i] != r->kernel) function(E, r->order.v[i], false);
    if (!E->cuda && !E->blocks && (E->plan.acc || E->plan.stride_for) && !E->too_big) {
        /* acc_fallback's body */
        E->acc_mem = true;
        function(E, r->kernel, false);
        E->acc_mem = false;
    }
    /* the lane body, unless the source is large already (it holds the kernel twice) */
    if (E->plan.lanes.n && !E->plan.lanes.block && emit_size(E) > KILN_MAX_SOURCE_BYTES / 4)
        E->plan.lanes.n = 0;
    if (E->plan.lanes.n && !E->too_big) function(E, r->kernel, true);
    /* the wide entry's vector path: the kernel once more, as kiln_body_v (vecplan.h) */
    VecPlan vp;
    if (E->cuda && !E->debug && !C->opts.export_name && !r->cooperative && !E->too_big &&
        widens(E, r->kernel) && emit_size(E) <= KILN_MAX_SOURCE_BYTES / 4 &&
        vec_plan(r->kernel, &C->arena, &vp)) {
        E->vec = &vp;
        function(E, r->kernel, false);
    }
    if (E->too_big || C->nerrors > errors) return -1;
    if (E->cuda && C->opts.export_name && r->cooperative) {
        /* the grid barrier counts each block's live threads from the kernel's entry
         * (rt_cuda.h), which a device function compiled alone does not have */
        diag_plain(C->ctx, KILN_ERROR, "call it from a kiln kernel, which kiln launches cooperatively",
                   "a device function that uses kiln.cg (this_grid(), g.sync()) cannot be compiled "
                   "alone: its grid barrier needs a cooperative kiln kernel around it");
        return -1;
    }
    if (E->cuda && !C->opts.export_name) {
        /* the entry's parameters: the error record, 8 bytes a slot, and the wide entry's n_ */
        int64_t bytes = 16;
        for (int i = 0; i < r->kernel->nparams; i++)
            bytes += 8 * emit_param_slots(r->kernel->params[i]);
        if (bytes > KILN_MAX_CUDA_PARAM_BYTES) {
            diag_plain(C->ctx, KILN_ERROR, "pass fewer arrays (fewer dimensions each), or "
                       "gather the values into one array",
                       "the arguments of kernel '%s' take %lld bytes of CUDA parameter space "
                       "(8 a pointer, 16 an array dimension), over the %d bytes CUDA allows "
                       "(KILN_MAX_CUDA_PARAM_BYTES)",
                       r->kernel->fi->name, (long long)bytes, KILN_MAX_CUDA_PARAM_BYTES);
            return -1;
        }
    }
    if (!E->cuda && emit_extern_check_cpu(E) < 0) return -1;
    if (E->cuda && C->opts.export_name) cuda_export(E, r->kernel);
    else if (E->cuda) cuda_entry(E, r->kernel);
    else cpu_entry(E, r->kernel);
    if (vec && !E->cuda && !emit_tier0_entry(E, r->kernel, vec)) vec->len = 0;

    Buf ext; /* before the types are written: a declaration may add one */
    buf_init_arena(&ext, &E->C->arena);
    emit_extern_decls(E, &ext);
    emit_libdevice_decls(E, &ext);
    /* without fastmath, no contraction of a * b + c into an FMA: the CPU's results are
     * NumPy's and Numba's, rounded after each operation (tier 0 never contracts) */
    buf_printf(out, "%s %s\n", KILN_CFLAGS_MARKER,
               E->cuda ? "" : E->fastmath ? "-ffast-math" : "-ffp-contract=off");
    buf_printf(out, "/* generated by kiln %s from %s (%s) */\n", KILN_VERSION,
               r->kernel->fi->name, E->cuda ? "cuda" : "cpu");
    if (E->cuda) emit_extern_sources(E, out);
    if (E->cuda && r->cooperative) buf_puts(out, "#define KILN_COOPERATIVE 1\n");
    buf_puts(out, E->cuda ? kiln_rt_cuda_h : kiln_rt_cpu_h);
    buf_puts(out, kiln_rt_common_h);
    if (E->cuda) buf_puts(out, kiln_rt_mathf_h);
    if (E->half) buf_puts(out, kiln_rt_half_h);
    if (E->uses_complex) buf_puts(out, kiln_rt_complex_h);
    if (E->blocks) buf_puts(out, kiln_rt_blocks_h);
    if (!E->cuda && emit_uses_libdevice(E)) buf_puts(out, kiln_rt_libdevice_cpu_h);
    if (E->print && !E->cuda) buf_puts(out, "int printf(const char *, ...);\nint fflush(void *);\n");
    if (!E->cuda) emit_extern_sources(E, out);
    buf_puts(out, "\n/* ---- types ---- */\n");
    buf_put(out, E->types.p ? E->types.p : "", E->types.len);
    buf_puts(out, "\n/* ---- helpers ---- */\n");
    buf_put(out, E->helpers.p ? E->helpers.p : "", E->helpers.len);
    if (ext.len) {
        buf_puts(out, "\n/* ---- external device functions ---- */\n");
        buf_put(out, ext.p, ext.len);
    }
    buf_puts(out, "\n/* ---- functions ---- */\n");
    buf_put(out, E->funcs.p ? E->funcs.p : "", E->funcs.len);
    *files = E->files;
    bool oom = E->types.oom || E->helpers.oom || E->funcs.oom || ext.oom || out->oom;
    buf_free(&E->types);
    buf_free(&E->helpers);
    buf_free(&E->funcs);
    if (oom) {
        diag_plain(C->ctx, KILN_ERROR, NULL, "out of memory while generating code");
        return -1;
    }
    return 0;
}

