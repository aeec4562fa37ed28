/* emit_stmt.c: statements, the two ways the CPU entry rewrites them, and the
 * CUDA loops unroll.h unrolls.
 *
 * Each statement is preceded by a #line marker.  A CUDA for loop that
 * unroll_plan accepts is written as passes of UNROLL_FACTOR copies of its body
 * with the pass's loads issued first (unrolled_for), behind a run-time check
 * that the arrays read are apart from those written, then as written for the
 * rest.  A kernel in lane mode
 * (plan.h) has its straight runs of statements written inside vectorised loops
 * over the lanes (lane_block), with varying names indexed by the lane; the
 * guard that plan.c folded into the entry's loops is written here as the
 * statement it replaces (guard_stmt).  Between statements the generated size is
 * checked against KILN_MAX_SOURCE_BYTES.  Assignments are emit_assign.c's.
 */
#include "emit_int.h"

/* ---- statements ------------------------------------------------------------------ */

static void guard_stmt(Emit *E, Node *n);

/* A loop's body and its closing brace, then its else block, which runs when no
 * break left the loop (brk<k>); close_else ends that block. */
static void loop_rest(Emit *E, NodeList *body, NodeList *orelse, int k, bool has_else,
                      const char *close_else) {
    E->loops[E->nloops++].flag = has_else ? k : -1;
    emit_block(E, body);
    E->nloops--;
    E->ind--;
    emit_indent(E);
    PS("}\n");
    if (!has_else) return;
    emit_indent(E);
    P("if (!brk%d) {\n", k);
    E->ind++;
    emit_block(E, orelse);
    E->ind--;
    emit_indent(E);
    PS(close_else);
}

/* A for loop that unroll.h unrolls (CUDA): passes of UNROLL_FACTOR copies of the
 * body, each pass's hoisted loads first, while the arrays they read are apart
 * from those the kernel writes and a whole pass is left; then the loop as
 * usual for the rest.  The counter is an int64 (unroll_plan). */
static void unrolled_for(Emit *E, Node *n, const UnrollPlan *u) {
    NodeList *a = &n->fors.iter->call.args;
    const Type *lt = n->fors.iter->opty;
    int k = E->tmp++;
    const char *var = emit_sym_name(E, n->sym);
    emit_indent(E);
    PS("{\n");
    E->ind++;
    emit_indent(E);
    P("i64 st%d = ", k);
    if (a->n == 1) PS("0");
    else emit_expr_as(E, a->v[0], lt);
    P(", sp%d = ", k);
    emit_expr_as(E, a->n == 1 ? a->v[0] : a->v[1], lt);
    P(", sd%d = ", k);
    if (a->n == 3) emit_expr_as(E, a->v[2], lt);
    else PS("1");
    PS(";\n");
    if (!u->const_step) {
        emit_indent(E);
        P("if (sd%d == 0) { kiln_fail(E_, 4, %d, 0, 0, 0); %s }\n", k, emit_loc(E, n->sp), E->leave);
    }
    emit_indent(E);
    P("i64 it%d = st%d;\n", k, k);
    /* the main loop: a positive step small enough that a pass's offsets stay exact,
     * and the arrays its loads read apart from those the kernel writes */
    uint64_t both = u->reads | u->writes;
    for (int p = 0; p < 64; p++)
        if (u->writes && ((both >> p) & 1)) {
            emit_indent(E);
            P("u64 lo%d_%d, hi%d_%d;\n", k, p, k, p);
            emit_indent(E);
            P("KILN_SPAN(p%d, lo%d_%d, hi%d_%d);\n", p, k, p, k, p);
        }
    emit_indent(E);
    /* The main loop counts in 32 bits (the counter and every value it takes below
     * 2^32, the step at most 2^29 so that a pass's offsets stay exact): the loop
     * variable is a zero-extended u32, so each address is one IMAD.WIDE.U32 instead of
     * 64-bit arithmetic.  Other ranges run the loop as written. */
    P("if (st%d >= 0 && sp%d > st%d && sd%d > 0 && sd%d <= ((i64)1 << 29) && "
      "sp%d <= (i64)0xFFFFFFFF - sd%d",
      k, k, k, k, k, k, k);
    for (int r = 0; r < 64; r++)
        for (int w = 0; w < 64 && ((u->reads >> r) & 1); w++)
            if ((u->writes >> w) & 1)
                P(" && kiln_apart_(lo%d_%d, hi%d_%d, lo%d_%d, hi%d_%d)", k, r, k, r, k, w, k, w);
    PS(") {\n");
    E->ind++;
    emit_indent(E);
    P("u32 iu%d = (u32)it%d;\n", k, k);
    emit_indent(E);
    P("const u32 spu%d = (u32)sp%d, sdu%d = (u32)sd%d;\n", k, k, k, k);
    emit_indent(E);
    P("for (; iu%d < spu%d && spu%d - iu%d > sdu%d * %du; iu%d += sdu%d * %du) {\n", k, k, k, k, k,
      UNROLL_FACTOR - 1, k, k, UNROLL_FACTOR);
    E->ind++;
    /* a load written the same way as one before it (t[i] used twice) is that one */
    const char **text = arena_alloc(&E->C->arena, sizeof(char *) * (size_t)u->nloads);
    for (int c = 0; c < UNROLL_FACTOR; c++) {
        emit_indent(E);
        P("%s = ", var);
        emit_convert(E, lt, n->sym->ty,
                arena_printf(&E->C->arena, "(i64)(u32)(iu%d + sdu%d * %du)", k, k, c));
        PS(";\n");
        for (int j = 0; j < u->nloads; j++) {
            Node *ld = (Node *)u->loads[j];
            if (c == 0) text[j] = emit_expr_str(E, ld, NULL);
            int same = 0;
            while (same < j && strcmp(text[same], text[j]) != 0) same++;
            emit_indent(E);
            if (same < j) P("const %s hl%d_%d_%d = hl%d_%d_%d;\n", emit_ctype(E, ld->ty), k, j, c, k, same, c);
            else P("const %s hl%d_%d_%d = %s;\n", emit_ctype(E, ld->ty), k, j, c, text[j]);
        }
    }
    E->hoist = u;
    E->hoist_id = k;
    for (int c = 0; c < UNROLL_FACTOR; c++) {
        E->hoist_copy = c;
        emit_indent(E);
        PS("{\n");
        E->ind++;
        emit_indent(E);
        P("%s = ", var);
        emit_convert(E, lt, n->sym->ty,
                arena_printf(&E->C->arena, "(i64)(u32)(iu%d + sdu%d * %du)", k, k, c));
        PS(";\n");
        E->loops[E->nloops++].flag = -1;
        emit_block(E, &n->fors.body);
        E->nloops--;
        E->ind--;
        emit_indent(E);
        PS("}\n");
    }
    E->hoist = NULL;
    E->ind--;
    emit_indent(E);
    PS("}\n");
    emit_indent(E);
    P("it%d = (i64)iu%d;\n", k, k);
    E->ind--;
    emit_indent(E);
    PS("}\n");
    /* the iterations left, and every one when the main loop could not run */
    emit_indent(E);
    P("for (; sd%d > 0 ? it%d < sp%d : it%d > sp%d; it%d = KILN_RANGE_NEXT(i64, it%d, sp%d, "
      "sd%d)) {\n", k, k, k, k, k, k, k, k, k);
    E->ind++;
    emit_indent(E);
    P("%s = ", var);
    emit_convert(E, lt, n->sym->ty, arena_printf(&E->C->arena, "it%d", k));
    PS(";\n");
    loop_rest(E, &n->fors.body, NULL, k, false, NULL);
    E->ind--;
    emit_indent(E);
    PS("}\n");
}

/* A grid-stride loop run flat (plan_stride.c): the entry runs each position once, and
 * the loop's body runs once with the counter at the position, the range's start. */
static void stride_body(Emit *E, Node *n) {
    const Type *lt = n->fors.iter->opty;
    int k = E->tmp++;
    emit_indent(E);
    PS("{\n");
    E->ind++;
    emit_indent(E);
    P("%s st%d = ", emit_ctype(E, lt), k);
    emit_expr_as(E, n->fors.iter->call.args.v[0], lt);
    PS(";\n");
    emit_indent(E);
    P("%s = ", emit_sym_name(E, n->sym));
    emit_convert(E, lt, n->sym->ty, arena_printf(&E->C->arena, "st%d", k));
    PS(";\n");
    emit_block(E, &n->fors.body);
    E->ind--;
    emit_indent(E);
    PS("}\n");
}

/* A range loop's head, as for_stmt writes it: its bounds (st<k>, sp<k>, sd<k>, a zero
 * step reported and left by E->leave) and `for (T it<k> = ...; ...; ...) {`; the loop
 * variable is it<k>, of the range's type (the iterable's opty). */
void emit_range_head(Emit *E, Node *n, int k) {
    Node *iter = n->fors.iter;
    NodeList *a = &iter->call.args;
    const Type *lt = iter->opty;
    const char *ct = emit_ctype(E, lt);
    emit_indent(E);
    P("%s st%d = ", ct, k);
    if (a->n == 1) PS("0");
    else emit_expr_as(E, a->v[0], lt);
    P(", sp%d = ", k);
    emit_expr_as(E, a->n == 1 ? a->v[0] : a->v[1], lt);
    PS(";\n");
    int64_t step = 1;
    bool const_step = true;
    if (a->n == 3) {
        const_step = sema_const_int(a->v[2], &step);
        emit_indent(E);
        P("%s sd%d = ", ty_is_signed(lt) ? "i64" : "u64", k);
        emit_expr_as(E, a->v[2], ty_is_signed(lt) ? ty_scalar(KILN_INT64) : lt);
        PS(";\n");
        if (!const_step) {
            emit_indent(E);
            P("if (sd%d == 0) { kiln_fail(E_, 4, %d, 0, 0, 0); %s }\n", k, emit_loc(E, n->sp), E->leave);
        }
    }
    if (E->loop_pragma) {
        emit_indent(E);
        PS(E->loop_pragma);
        E->loop_pragma = NULL;
    }
    emit_indent(E);
    /* a step of 1 or -1 cannot pass the type's limit; others step with KILN_RANGE_* */
    const char *inc = arena_printf(&E->C->arena, "it%d++", k);
    if (a->n == 3 && const_step && (step == 1 || step == -1))
        inc = arena_printf(&E->C->arena, "it%d %s= 1", k, step > 0 ? "+" : "-");
    else if (a->n == 3)
        inc = arena_printf(&E->C->arena, "it%d = KILN_RANGE_%s(%s, it%d, sp%d, sd%d)", k,
                           !const_step ? "NEXT" : step > 0 ? "UP" : "DOWN", ct, k, k, k);
    if (const_step)
        P("for (%s it%d = st%d; it%d %s sp%d; %s) {\n", ct, k, k, k, step > 0 ? "<" : ">", k, inc);
    else
        P("for (%s it%d = st%d; sd%d > 0 ? it%d < sp%d : it%d > sp%d; %s) {\n", ct, k, k, k, k, k,
          k, k, inc);
}

typedef struct Mentions {
    const Sym *s;
    int count;
} Mentions;

static void mentions(void *arg, const Sym *s) {
    Mentions *m = arg;
    m->count += s == m->s;
}

/* A range loop (CPU, outside lane mode) whose body only folds a max or a min into a
 * local, `m = max(m, e)` (min alike; e pure and free of m; f32, f64 or a 32- or 64-bit
 * integer), with a step of 1: its `omp simd reduction` of kiln's own max (rt_common.h,
 * kmax_T_), which keeps the NaN and signed-zero rules and, being associative, can fold
 * in any order, so GCC vectorises the loop (a column's max per thread of an F-order
 * float32 array: 0.29x Numba as a chain of scalar maxima, perfhunt s29).  The name
 * for the pragma's clause, or NULL. */
static const char *fold_pragma(Emit *E, Node *n) {
    if (E->cuda || E->lanes || E->in_lane || E->debug || n->fors.orelse.n || !n->sym ||
        n->fors.body.n != 1 || n->fors.body.v[0]->kind != S_ASSIGN)
        return NULL;
    NodeList *a = &n->fors.iter->call.args;
    int64_t step = 1;
    if (a->n == 3 && !(sema_const_int(a->v[2], &step) && step == 1)) return NULL;
    const Node *st = n->fors.body.v[0], *v = st->assign.value;
    const Node *t = st->assign.targets.n == 1 ? st->assign.targets.v[0] : NULL;
    if (!t || t->kind != E_NAME || !t->sym || t->sym->param >= 0 || t->sym == n->sym ||
        v->kind != E_CALL || !v->intr || v->intr->kind != IK_MINMAX || v->callee ||
        v->call.args.n != 2 || !v->ty || !t->sym->ty || !ty_equal(v->ty, t->sym->ty))
        return NULL;
    const Type *ty = t->sym->ty;
    const char *tn = ty->kind == TY_FLOAT && !ty->weak && (ty->dtype == KILN_FLOAT32 ||
                                                            ty->dtype == KILN_FLOAT64)
                         ? emit_ctype(E, ty)
                     : ty->kind == TY_INT && !ty->weak && ty_bits(ty) >= 32 ? emit_ctype(E, ty)
                                                                          : NULL;
    if (!tn) return NULL;
    const Node *other = NULL;
    for (int j = 0; j < 2; j++) {
        const Node *x = v->call.args.v[j];
        if (x->kind == E_NAME && x->sym == t->sym) other = v->call.args.v[1 - j];
    }
    if (!other || !plan_pure(other)) return NULL;
    /* m in the statement: the target and the argument, nowhere in e */
    Mentions mm = {t->sym, 0};
    plan_lane_syms(&n->fors.body, 0, 1, mentions, &mm);
    if (mm.count != 2) return NULL;
    E->inner_simd = true;
    return arena_printf(&E->C->arena,
                        "_Pragma(\"omp simd reduction(k%s_%s_:%s) lastprivate(%s)\")\n",
                        v->intr->sub ? "max" : "min", tn, emit_sym_name(E, t->sym),
                        emit_sym_name(E, n->sym));
}

static void for_stmt(Emit *E, Node *n) {
    if (!E->cuda && E->f->is_kernel && !E->acc_mem && n == E->plan.stride_for) {
        stride_body(E, n);
        return;
    }
    UnrollPlan u;
    if (E->cuda && !E->debug && !E->hoist && unroll_plan(E->f, n, &E->C->arena, &u)) {
        unrolled_for(E, n, &u);
        return;
    }
    bool has_else = n->fors.orelse.n > 0;
    int k = E->tmp++;
    emit_indent(E);
    PS("{\n");
    E->ind++;
    if (has_else) {
        emit_indent(E);
        P("kbool brk%d = 0;\n", k);
    }
    E->loop_pragma = fold_pragma(E, n);
    emit_range_head(E, n, k);
    const Type *lt = n->fors.iter->opty;
    const char *sym = emit_sym_name(E, n->sym);
    E->ind++;
    emit_indent(E);
    P("%s = ", sym);
    emit_convert(E, lt, n->sym->ty, arena_printf(&E->C->arena, "it%d", k));
    PS(";\n");
    loop_rest(E, &n->fors.body, &n->fors.orelse, k, has_else, "}\n");
    E->ind--;
    emit_indent(E);
    PS("}\n");
}

/* debug=True: a runtime error (an index out of bounds, a division by zero) stops the
 * thread after its statement, as Numba's exceptions do; the launch then raises it. */
static void debug_stop(Emit *E) {
    if (!E->debug) return;
    emit_indent(E);
    P("if (E_->code) %s\n", E->leave);
}

static void stmt(Emit *E, Node *n) {
    emit_line_marker(E, n->sp);
    switch ((NodeKind)n->kind) {
    case S_EXPR:
        if (n->expr->kind == E_STR) return;
        if (E->lanes && E->plan.lanes.block && !E->in_lane && n->expr->kind == E_CALL &&
            n->expr->intr && n->expr->intr->kind == IK_SYNCTHREADS) {
            /* block lanes: the lane loops before it have run every thread of the block */
            emit_indent(E);
            PS("/* syncthreads() */\n");
            return;
        }
        if (n->uf && n->uf->active) { /* np.f(a, b, out): temporaries, then the loop */
            for (int k = 0; k <= n->uf->nin; k++) stmt(E, n->uf->assigns[k]);
            emit_ufunc_loop(E, n);
            return;
        }
        emit_indent(E);
        PS("(void)(");
        emit_expr(E, n->expr);
        PS(");\n");
        debug_stop(E);
        return;
    case S_PASS: return;
    case S_DEF: return; /* a nested function: a device function of its own (sema/nested.c) */
    case S_ASSIGN:
        emit_assign_stmt(E, n);
        debug_stop(E);
        return;
    case S_AUGASSIGN:
        emit_aug_stmt(E, n);
        debug_stop(E);
        return;
    case S_IF:
        if (n == E->plan.guard.stmt && E->f->is_kernel && !E->acc_mem) {
            guard_stmt(E, n);
            return;
        }
        emit_indent(E);
        for (;;) {
            PS("if (");
            emit_truthy(E, n->ifs.cond);
            PS(") {\n");
            E->ind++;
            emit_block(E, &n->ifs.body);
            E->ind--;
            if (!elif_of(n)) break;
            /* elif: `else if` at the same level, however long the chain */
            n = elif_of(n);
            emit_indent(E);
            PS("} else\n");
            E->line = -1;
            emit_line_marker(E, n->sp);
            emit_indent(E);
        }
        if (n->ifs.orelse.n) {
            emit_indent(E);
            PS("} else {\n");
            E->ind++;
            emit_block(E, &n->ifs.orelse);
            E->ind--;
        }
        emit_indent(E);
        PS("}\n");
        return;
    case S_WHILE: {
        if (!E->cuda && E->f->is_kernel && !E->acc_mem && n == E->plan.stride_for) {
            /* a grid-stride while run flat (plan_stride.c): i is the position; the body
             * but its last statement, i += stride */
            NodeList once = {n->ifs.body.v, n->ifs.body.n - 1};
            emit_indent(E);
            PS("{\n");
            E->ind++;
            E->flat_counter = n->ifs.body.v[n->ifs.body.n - 1]->aug.target->sym;
            emit_block(E, &once);
            E->flat_counter = NULL;
            E->ind--;
            emit_indent(E);
            PS("}\n");
            return;
        }
        bool has_else = n->ifs.orelse.n > 0;
        int k = E->tmp++;
        if (has_else) {
            emit_indent(E);
            P("{ kbool brk%d = 0;\n", k);
        }
        emit_indent(E);
        PS("while (");
        emit_truthy(E, n->ifs.cond);
        PS(") {\n");
        E->ind++;
        if (!E->cuda) {
            /* the back-edge's poll of the stop word (rt_cpu.h), at the top so that
             * `continue` passes it too: only `while` can run without end */
            emit_indent(E);
            P("KILN_POLL(%s)\n", E->leave);
        }
        loop_rest(E, &n->ifs.body, &n->ifs.orelse, k, has_else, "} }\n");
        return;
    }
    case S_FOR: for_stmt(E, n); return;
    case S_BREAK: {
        int flag = E->nloops ? E->loops[E->nloops - 1].flag : -1;
        emit_indent(E);
        if (flag >= 0) P("{ brk%d = 1; break; }\n", flag);
        else PS("break;\n");
        return;
    }
    case S_CONTINUE:
        emit_indent(E);
        PS("continue;\n");
        return;
    case S_RETURN:
        emit_indent(E);
        if (E->f->is_kernel || E->f->ret->kind == TY_NONE) {
            if (n->ret.value && n->ret.value->kind != E_NONE) {
                PS("(void)(");
                emit_expr(E, n->ret.value);
                PS(");\n");
                emit_indent(E);
            }
            PS("return;\n");
            return;
        }
        PS("return ");
        if (E->f->ret_none) emit_opt_of(E, n->ret.value, E->f->ret);
        else emit_expr_as(E, n->ret.value, E->f->ret);
        PS(";\n");
        return;
    case S_ASSERT:
        if (n->assrt.site && !n->assrt.exc) { /* assert test, "text" (sema_assert_site) */
            if (!E->debug) return;
            emit_indent(E);
            PS("if (!");
            emit_truthy(E, n->assrt.test);
            P(") { kiln_fail(E_, %d, %d, 0, KILN_RAISE_TID, KILN_RAISE_BID); %s }\n",
              (int)KILN_ERR_RAISE, emit_site(E, n->assrt.site, n->sp.line), E->leave);
            return;
        }
        if (n->assrt.site) {
            /* raise: always, with the site as the error's file and the thread and block
             * packed (kiln.h's KILN_ERR_RAISE) */
            emit_indent(E);
            P("{ kiln_fail(E_, %d, %d, 0, KILN_RAISE_TID, KILN_RAISE_BID); %s }\n",
              (int)KILN_ERR_RAISE, emit_site(E, n->assrt.site, n->sp.line), E->leave);
            return;
        }
        if (!E->debug) return;
        emit_indent(E);
        PS("if (!");
        emit_truthy(E, n->assrt.test);
        P(") { kiln_fail(E_, 2, %d, 0, 0, 0); %s }\n", emit_loc(E, n->sp), E->leave);
        return;
    default: UNREACHABLE();
    }
}

/* Bytes of generated text so far (without the preludes). */
size_t emit_size(const Emit *E) {
    return E->types.len + E->helpers.len + E->funcs.len + (E->body ? E->body->len : 0);
}

/* Whether the program has grown past KILN_MAX_SOURCE_BYTES; reported once, at
 * the statement sp whose code crossed it.  Each statement's code is linear in
 * its size, so checking between statements bounds the memory too. */
bool emit_too_big(Emit *E, Span sp) {
    if (E->too_big) return true;
    if (emit_size(E) <= KILN_MAX_SOURCE_BYTES) return false;
    E->too_big = true;
    error_at(E->C, sp, "split the kernel into smaller ones, or make its global tuples smaller",
             "the generated source is larger than %d MiB (KILN_MAX_SOURCE_BYTES)",
             KILN_MAX_SOURCE_BYTES >> 20);
    return true;
}

static void lane_block(Emit *E, NodeList *l);

void emit_block(Emit *E, NodeList *l) {
    if (E->lanes && !E->in_lane) {
        lane_block(E, l);
        return;
    }
    for (int i = 0; i < l->n && !E->too_big; i++) {
        stmt(E, l->v[i]);
        emit_too_big(E, l->v[i]->sp);
    }
}

/* ---- lane mode (CPU, plan.h) ------------------------------------------------------- */

/* A private local of the run being written, declared at the top of its lane loop. */
static void declare_private(void *arg, const Sym *s) {
    Emit *E = arg;
    if (E->plan.lanes.cls[s->id] != LANE_PRIVATE || E->declared[s->id] == E->run) return;
    E->declared[s->id] = E->run;
    emit_indent(E);
    /* a struct (complex, tuple) starts as {0}, as the function's own locals (emit.c) */
    P("%s %s = %s;\n", emit_ctype(E, s->ty), emit_sym_name(E, s), ty_is_real(s->ty) ? "0" : "{0}");
}

/* Opens a loop over the lanes, l_ from 0 to nl_: a chunk's (grid lanes), or a block's
 * threads (block lanes, plan.h), x innermost, each lane with its thread's tx_, ty_, tz_
 * (which hide the function's).  pragma: the innermost loop's, or NULL.  lanes_close ends
 * it. */
static void lanes_open(Emit *E, const char *pragma) {
    if (E->plan.lanes.block) {
        emit_indent(E);
        PS("for (i64 lyz_ = 0; lyz_ < BY_ * BZ_; lyz_++) {\n");
        E->ind++;
        emit_indent(E);
        PS("const i64 ty_ = lyz_ % BY_, tz_ = lyz_ / BY_;\n");
        emit_indent(E);
        PS("(void)ty_;\n");
        emit_indent(E);
        PS("(void)tz_;\n");
    }
    if (pragma) {
        emit_indent(E);
        P("_Pragma(\"%s\")\n", pragma);
    }
    emit_indent(E);
    if (E->plan.lanes.block) {
        PS("for (i64 tx_ = 0; tx_ < nx_; tx_++) {\n");
        E->ind++;
        emit_indent(E);
        PS("const int l_ = (int)(lyz_ * BX_ + tx_);\n");
        return;
    }
    PS("for (int l_ = 0; l_ < nl_; l_++) {\n");
    E->ind++;
}

static void lanes_close(Emit *E) {
    for (int i = E->plan.lanes.block ? 2 : 1; i > 0; i--) {
        E->ind--;
        emit_indent(E);
        PS("}\n");
    }
}

/* Statements l->v[from..to) as one loop over the lanes of the chunk, which
 * the vectoriser turns into vector code: each statement runs for every lane
 * before the next one starts. */
static void lane_run(Emit *E, NodeList *l, int from, int to, bool simd) {
    E->run++;
    lanes_open(E, simd ? "omp simd" : NULL);
    E->in_lane = true;
    plan_lane_syms(l, from, to, declare_private, E);
    if (E->mask) {
        emit_indent(E);
        P("if (%s[l_]) {\n", E->mask);
        E->ind++;
    }
    for (int i = from; i < to && !E->too_big; i++) {
        stmt(E, l->v[i]);
        emit_too_big(E, l->v[i]->sp);
    }
    if (E->mask) {
        E->ind--;
        emit_indent(E);
        PS("}\n");
    }
    E->in_lane = false;
    E->line = -1;
    lanes_close(E);
}

/* The scalar tail of a lane while loop whose body is one lane run: each lane
 * still in the loop (mask m) runs its remaining passes alone, the body written
 * for lane l_ as in a lane loop, then leaves.  The lanes are independent (no
 * barrier, no exit, no atomic in the run), so their order is free. */
static void lane_while_tail(Emit *E, Node *n, const char *m) {
    NodeList *body = &n->ifs.body;
    E->run++;
    lanes_open(E, NULL);
    emit_indent(E);
    P("if (!%s[l_]) continue;\n", m);
    emit_indent(E);
    PS("for (;;) {\n");
    E->ind++;
    E->in_lane = true;
    plan_lane_syms(body, 0, body->n, declare_private, E);
    for (int i = 0; i < body->n && !E->too_big; i++) {
        stmt(E, body->v[i]);
        emit_too_big(E, body->v[i]->sp);
    }
    emit_indent(E);
    P("KILN_POLL(%s)\n", E->leave);
    emit_indent(E);
    PS("if (!(");
    emit_truthy(E, n->ifs.cond);
    PS(")) break;\n");
    E->in_lane = false;
    E->ind--;
    emit_indent(E);
    PS("}\n");
    E->line = -1;
    lanes_close(E);
}

/* A while loop with a varying condition: each pass tests the condition of the
 * lanes still in the loop (a lane that leaves never comes back), ends when none
 * is, and runs the body under their mask.  Where lanes' trip counts differ
 * (Collatz steps, escape loops), the vector passes run mostly masked-off lanes at
 * the end: when the body is one lane run and at most one lane in
 * KILN_LANE_TAIL_DIV is left, those finish one at a time (lane_while_tail). */
static void lane_while(Emit *E, Node *n) {
    int k = E->tmp++;
    const char *m = arena_printf(&E->C->arena, "wm%d", k);
    emit_line_marker(E, n->sp);
    emit_indent(E);
    P("{\n");
    E->ind++;
    emit_indent(E);
    /* the mask as wide as the widest value, for the vector loops (complex128's 16 bytes
     * have no integer type: i64) */
    P("i%d %s[%s];\n", (E->plan.lanes.widest > 8 ? 8 : E->plan.lanes.widest) * 8, m,
      E->plan.lanes.block ? "nl_" : "KILN_LANES");
    emit_indent(E);
    PS("_Pragma(\"omp simd\")\n");
    emit_indent(E);
    P("for (int l_ = 0; l_ < nl_; l_++) %s[l_] = 1;\n", m);
    emit_indent(E);
    PS("for (;;) {\n");
    E->ind++;
    emit_indent(E);
    P("KILN_POLL(%s)\n", E->leave);
    /* the lanes still in, counted in the pass that updates the mask (a loop of its own
     * cost Mandelbrot's escape loop 15%) */
    emit_indent(E);
    P("int any%d = 0;\n", k);
    lanes_open(E, arena_printf(&E->C->arena, "omp simd reduction(+:any%d)", k));
    E->in_lane = true;
    emit_indent(E);
    P("%s[l_] = %s[l_] && ", m, m);
    emit_truthy(E, n->ifs.cond);
    PS(";\n");
    E->in_lane = false;
    emit_indent(E);
    P("any%d += %s[l_] != 0;\n", k, m);
    lanes_close(E);
    emit_indent(E);
    P("if (!any%d) break;\n", k);
    bool run = n->ifs.body.n > 0;
    for (int i = 0; i < n->ifs.body.n && run; i++)
        run = plan_lane_stmt(&E->plan, n->ifs.body.v[i]) == LANE_RUN;
    if (run) {
        emit_indent(E);
        P("if (any%d * KILN_LANE_TAIL_DIV <= nl_) {\n", k);
        E->ind++;
        lane_while_tail(E, n, m);
        emit_indent(E);
        PS("break;\n");
        E->ind--;
        emit_indent(E);
        PS("}\n");
    }
    E->mask = m;
    emit_block(E, &n->ifs.body);
    E->mask = NULL;
    E->ind--;
    emit_indent(E);
    PS("}\n");
    E->ind--;
    emit_indent(E);
    PS("}\n");
}

/* A lane for loop (plan.h): a pass per value of the counter's base, from the
 * start's value at lane 0 by the step, over the lanes still in the loop, a
 * prefix of the chunk: inside the pass, nl_ is the length of that prefix (a
 * local that hides the function's), so the lane loops and varying whiles of the
 * body run over those lanes only.  In block lanes the prefix is of each row of x
 * lanes (nx_).  A grid-stride while (plan_lane_while_var) is the same loop: its
 * start the counter's top-level assignment, its step the body's last statement. */
static void lane_passes(Emit *E, Node *n, const Sym *sym, Node *lo, Node *hi, Node *sd,
                        const Type *lt, NodeList *body) {
    int k = E->tmp++;
    emit_line_marker(E, n->sp);
    emit_indent(E);
    PS("{\n");
    E->ind++;
    emit_indent(E);
    P("i64 st%d = ", k);
    /* block lanes: the start at threadIdx.x 0 (tx_ is the function's 0 here), through the
     * thread positions' own text (LANE_RECOMP) */
    E->in_lane = E->plan.lanes.block;
    emit_expr_as(E, lo, lt);
    E->in_lane = false;
    P(", sp%d = ", k);
    emit_expr_as(E, hi, lt);
    P(", sd%d = ", k);
    if (sd) emit_expr_as(E, sd, lt);
    else PS("1");
    PS(";\n");
    int64_t step;
    if (sd && !sema_const_int(sd, &step)) {
        emit_indent(E);
        P("if (sd%d == 0) { kiln_fail(E_, 4, %d, 0, 0, 0); %s }\n", k, emit_loc(E, n->sp), E->leave);
    }
    /* the lanes still in the loop: a prefix of the chunk (nl_), or of each row of a
     * block's x lanes (nx_) */
    const char *nl = E->plan.lanes.block ? "nx_" : "nl_", *ty = E->plan.lanes.block ? "i64" : "int";
    emit_indent(E);
    P("const %s nlo%d = %s;\n", ty, k, nl);
    emit_indent(E);
    P("for (i64 it%d = st%d; it%d < sp%d; it%d = KILN_RANGE_UP(i64, it%d, sp%d, sd%d)) {\n", k,
      k, k, k, k, k, k, k);
    E->ind++;
    emit_indent(E);
    P("const %s %s = sp%d - it%d < nlo%d ? (%s)(sp%d - it%d) : nlo%d;\n", ty, nl, k, k, k, ty, k,
      k, k);
    emit_indent(E);
    P("(void)%s;\n", nl);
    emit_indent(E);
    P("%s = ", emit_sym_name(E, sym));
    emit_convert(E, lt, sym->ty, arena_printf(&E->C->arena, "it%d", k));
    PS(";\n");
    loop_rest(E, body, NULL, k, false, NULL);
    E->ind--;
    emit_indent(E);
    PS("}\n");
}

static void lane_for(Emit *E, Node *n) {
    const Sym *w = n->kind == S_WHILE ? plan_lane_while_var(&E->plan.lanes, n) : NULL;
    if (w) {
        NodeList *b = &n->ifs.body;
        NodeList body = {b->v, b->n - 1};
        lane_passes(E, n, w, (Node *)E->plan.lanes.wdef[w->id], n->ifs.cond->cmp.operands.v[1],
                    b->v[b->n - 1]->aug.value, ty_scalar(KILN_INT64), &body);
        return;
    }
    NodeList *a = &n->fors.iter->call.args;
    lane_passes(E, n, n->sym, a->v[0], a->v[1], a->n == 3 ? a->v[2] : NULL, n->fors.iter->opty,
                &n->fors.body);
}

/* A block outside any lane loop: its scalar statements (uniform loops and ifs,
 * whose blocks come back here, and uniform assignments) as themselves, varying
 * while loops as lane_while, lane for loops as lane_for, each maximal run of
 * the others as one lane loop (vectorised, or not for statements with
 * atomics). */
static void lane_block(Emit *E, NodeList *l) {
    for (int i = 0; i < l->n && !E->too_big;) {
        int kind = plan_lane_stmt(&E->plan, l->v[i]);
        if (kind != LANE_RUN && kind != LANE_ATOMIC) {
            if (kind == LANE_LOOP) lane_while(E, l->v[i]);
            else if (kind == LANE_FOR) lane_for(E, l->v[i]);
            else stmt(E, l->v[i]);
            emit_too_big(E, l->v[i]->sp);
            i++;
            continue;
        }
        int j = i;
        while (j < l->n && plan_lane_stmt(&E->plan, l->v[j]) == kind) j++;
        lane_run(E, l, i, j, kind == LANE_RUN);
        i = j;
    }
}

/* ---- the guard plan (CPU) ----------------------------------------------------------- */

/* The guard statement with the planned conjuncts left out. */
void emit_guard_bounds(Emit *E) {
    /* the guard's bounds on the grid coordinates (x = bx * BX + tx, and y, z
     * alike), the same for the whole launch */
    static const char cn[3] = {'x', 'y', 'z'};
    GuardPlan *g = &E->plan.guard;
    for (int d = 0; d < 3; d++)
        P("    i64 %clo_ = -9223372036854775807LL - 1, %chi_ = 9223372036854775807LL;\n", cn[d],
          cn[d]);
    bool was = E->in_entry;
    E->in_entry = true;
    for (int i = 0; i < (g->stmt ? g->nb : 0); i++) {
        const Bound *b = &g->b[i];
        P("    { const i64 e_ = (i64)(%s)", emit_expr_str(E, b->e, ty_scalar(KILN_INT64)));
        if (b->adj) P(" + %d", b->adj);
        P("; if (e_ %s %c%s) %c%s = e_; }\n", b->lower ? ">" : "<", cn[b->dim],
          b->lower ? "lo_" : "hi_", cn[b->dim], b->lower ? "lo_" : "hi_");
    }
    E->in_entry = was;
}

static void guard_stmt(Emit *E, Node *n) {
    GuardPlan *g = &E->plan.guard;
    if (g->early) { /* an early return: what stays of its condition */
        if (!g->nkeep) return;
        emit_indent(E);
        PS("if (");
        for (int i = 0; i < g->nkeep; i++) {
            if (i) PS(" || ");
            emit_truthy(E, g->keep[i]);
        }
        P(") { %s }\n", E->leave);
        return;
    }
    if (g->nkeep) {
        emit_indent(E);
        PS("if (");
        for (int i = 0; i < g->nkeep; i++) {
            if (i) PS(" && ");
            if (g->keep[i]) {
                emit_truthy(E, g->keep[i]);
            } else {
                emit_compare_pair(E, emit_expr_str(E, g->keep_l[i], NULL), g->keep_l[i]->ty,
                             emit_expr_str(E, g->keep_r[i], NULL), g->keep_r[i]->ty, g->keep_ty[i],
                             (CmpOp)g->keep_op[i]);
            }
        }
        PS(") {\n");
        E->ind++;
    }
    emit_block(E, &n->ifs.body);
    if (g->nkeep) {
        E->ind--;
        emit_indent(E);
        PS("}\n");
    }
}

