/* emit_blocks.c: the CPU entries of block mode (rt_blocks.h), for kernels with shared
 * memory or barriers: each block's threads as fibers, one block at a time per OpenMP
 * thread (emit_block_entry), or, for a cooperative kernel (kiln.cg), every block of the
 * grid at once, meeting at the grid barrier (emit_grid_entry); without fibers, each
 * block one call of the kernel's lane body over its threads (block lanes, plan.h:
 * emit_blanes_entry); the record of a fiber's
 * arguments both read (emit_block_prelude); and the split of the grid's blocks over
 * OpenMP threads that emit.c's other entries share (emit_block_range).  Called by
 * emit.c only (emit_int.h). */
#include "emit_int.h"

/* The entry's split of the grid's blocks: on the parallel path (par) each OpenMP thread
 * takes a contiguous range [b0_, b1_) (as schedule(static)), so a stopped thread leaves its
 * loop at once; below the threshold (weight: a block's threads, weighed) or on the serial
 * path, all of them.  Opens the braces the caller's loop closes. */
void emit_block_range(Emit *E, int par, const char *weight, const char *clauses) {
    if (par)
        P("    if (NB > 1 && NB * %s >= L->par_threshold) {\n"
          "        _Pragma(\"omp parallel %s\")\n"
          "        {\n"
          "        const i64 nt_ = omp_get_num_threads(), me_ = omp_get_thread_num();\n"
          "        const i64 per_ = NB / nt_ + (NB %% nt_ != 0);\n"
          "        const i64 b0_ = me_ * per_, b1_ = NB - b0_ > per_ ? b0_ + per_ : NB;\n",
          weight, clauses);
    else
        PS("    } else KILN_SERIAL {\n"
           "        {\n"
           "        const i64 b0_ = 0, b1_ = NB;\n");
}

/* ---- block mode (rt_blocks.h) ------------------------------------------------------
 * A kernel with shared memory or barriers runs each block as fibers: a fiber
 * runs one thread through kiln_bthread_, which finds the launch and the kernel's
 * arguments in a kiln_bargs_ that the entry fills once per OpenMP thread. */

/* The record of the arguments and the thread function, before the entry. */
void emit_block_prelude(Emit *E, FuncSpec *k) {
    PS("typedef struct kiln_bargs_ {\n"
       "    i64 bx_, by_, bz_, BX_, BY_, BZ_, GX_, GY_, GZ_;\n"
       "    struct kiln_err *E_;\n"
       "    const int *S_;\n");
    for (int i = 0; i < k->nparams; i++) P("    %s p%d;\n", emit_ctype(E, k->params[i]), i);
    PS("} kiln_bargs_;\n\n"
       "static void kiln_bthread_(kiln_blk *B_, void *a_, long long t_) {\n"
       "    kiln_bargs_ *A_ = (kiln_bargs_ *)a_;\n"
       "    const i64 tx_ = t_ % A_->BX_, ty_ = (t_ / A_->BX_) % A_->BY_, "
       "tz_ = t_ / (A_->BX_ * A_->BY_);\n"
       "    kiln_body(tx_, ty_, tz_, A_->bx_, A_->by_, A_->bz_, A_->BX_, A_->BY_, A_->BZ_, "
       "A_->GX_, A_->GY_, A_->GZ_, A_->E_, A_->S_, B_");
    for (int i = 0; i < k->nparams; i++) P(", A_->p%d", i);
    PS(");\n}\n\n");
}

/* Block lanes' entry (plan_block_lanes): the same ranges of blocks, each block one call
 * of kiln_blanes_, whose lane loops run its threads; each OpenMP thread with its own
 * shared memory (kiln_blk_lanes_open_), and no fibers. */
void emit_blanes_entry(Emit *E, FuncSpec *k) {
    P("    const i64 NT_ = BX_ * BY_ * BZ_;\n"
      "    const long long SH_ = %lldLL;\n",
      (long long)E->shared_off);
    for (int par = 1; par >= 0; par--) {
        emit_block_range(E, par, "NT_", "");
        PS("        kiln_blk blk_;\n"
           "        if (b0_ < b1_ && kiln_blk_lanes_open_(&blk_, NT_, SH_, L->dyn_shared) != 0) {\n"
           "            kiln_fail(E_, KILN_ERR_NOMEM_, 0, (long long)blk_.mem_bytes, 0, 0);\n"
           "        } else if (b0_ < b1_) {\n"
           "            for (i64 b = b0_; b < b1_; b++) {\n"
           "                KILN_POLL(break;)\n"
           "                kiln_blanes_(0, 0, 0, b % GX_, (b / GX_) % GY_, b / (GX_ * GY_), "
           "BX_, BY_, BZ_, GX_, GY_, GZ_, E_, S_, &blk_, (int)NT_");
        for (int i = 0; i < k->nparams; i++) P(", p%d", i);
        PS(");\n"
           "            }\n"
           "            kiln_blk_close_(&blk_);\n"
           "        }\n"
           "        }\n");
    }
    PS("    }\n}\n");
}

/* The entry's loop over blocks: contiguous ranges of blocks per OpenMP thread (as
 * the other entries), each thread with its own fibers, stacks and shared memory. */
void emit_block_entry(Emit *E, FuncSpec *k) {
    P("    const i64 NT_ = BX_ * BY_ * BZ_;\n"
      "    const long long SH_ = %lldLL, LB_ = %lldLL;\n",
      (long long)E->shared_off, (long long)k->local_bytes);
    for (int par = 1; par >= 0; par--) {
        emit_block_range(E, par, "NT_", "");
        PS("        kiln_bargs_ A_;\n"
           "        A_.BX_ = BX_; A_.BY_ = BY_; A_.BZ_ = BZ_;\n"
           "        A_.GX_ = GX_; A_.GY_ = GY_; A_.GZ_ = GZ_;\n"
           "        A_.E_ = E_; A_.S_ = S_;\n");
        for (int i = 0; i < k->nparams; i++) P("        A_.p%d = p%d;\n", i, i);
        PS("        kiln_blk blk_;\n"
           "        if (b0_ < b1_ && kiln_blk_open_(&blk_, NT_, SH_, L->dyn_shared, LB_, "
           "kiln_bthread_, &A_) != 0) {\n"
           "            kiln_fail(E_, KILN_ERR_NOMEM_, 0, (long long)blk_.mem_bytes, 0, 0);\n"
           "        } else if (b0_ < b1_) {\n"
           "            for (i64 b = b0_; b < b1_; b++) {\n"
           "                KILN_POLL(break;)\n"
           "                A_.bx_ = b % GX_; A_.by_ = (b / GX_) % GY_; A_.bz_ = b / (GX_ * GY_);\n"
           "                kiln_blk_run_(&blk_);\n"
           "            }\n"
           "            kiln_blk_close_(&blk_);\n"
           "        }\n"
           "        }\n");
    }
    PS("    }\n}\n");
}

/* A cooperative kernel's entry (kiln.cg, rt_blocks.h): every block of the grid open at
 * once, on the calling thread, each block's fibers run until they end or park at the
 * grid barrier, which opens when no block has a fiber left to run.  A grid past
 * KILN_CG_MAX_THREADS is an error before any thread runs. */
void emit_grid_entry(Emit *E, FuncSpec *k) {
    P("    const i64 NT_ = BX_ * BY_ * BZ_;\n"
      "    const long long SH_ = %lldLL, LB_ = %lldLL;\n"
      "    if (NB * NT_ > %d) {\n"
      "        kiln_fail(E_, %d, 0, NB, %d / NT_, NT_);\n"
      "        return;\n"
      "    }\n",
      (long long)E->shared_off, (long long)k->local_bytes, KILN_CG_MAX_THREADS, KILN_ERR_COOP,
      KILN_CG_MAX_THREADS);
    PS("    kiln_bargs_ *A_ = (kiln_bargs_ *)calloc((size_t)NB, sizeof *A_);\n"
       "    kiln_blk *G_ = (kiln_blk *)calloc((size_t)NB, sizeof *G_);\n"
       "    i64 open_ = 0;\n"
       "    for (i64 b = 0; A_ && G_ && b < NB; b++, open_++) {\n"
       "        A_[b].BX_ = BX_; A_[b].BY_ = BY_; A_[b].BZ_ = BZ_;\n"
       "        A_[b].GX_ = GX_; A_[b].GY_ = GY_; A_[b].GZ_ = GZ_;\n"
       "        A_[b].E_ = E_; A_[b].S_ = S_;\n"
       "        A_[b].bx_ = b % GX_; A_[b].by_ = (b / GX_) % GY_; A_[b].bz_ = b / (GX_ * GY_);\n");
    for (int i = 0; i < k->nparams; i++) P("        A_[b].p%d = p%d;\n", i, i);
    PS("        if (kiln_blk_open_(&G_[b], NT_, SH_, L->dyn_shared, LB_, kiln_bthread_, &A_[b]) != 0)\n"
       "            break;\n"
       "        kiln_blk_start_(&G_[b]);\n"
       "    }\n"
       "    if (open_ < NB) {\n"
       "        kiln_fail(E_, KILN_ERR_NOMEM_, 0, open_ ? (long long)(G_[0].mem_bytes * NB) : 0, 0, 0);\n"
       "    } else {\n"
       "        for (;;) {\n"
       "            KILN_POLL(break;)\n"
       "            long long live_ = 0;\n"
       "            for (i64 b = 0; b < NB; b++) live_ += kiln_blk_rounds_(&G_[b]);\n"
       "            if (!live_) break;\n"
       "            for (i64 b = 0; b < NB; b++) kiln_blk_release_(&G_[b]);\n"
       "        }\n"
       "    }\n"
       "    for (i64 b = 0; b < open_; b++) kiln_blk_close_(&G_[b]);\n"
       "    free(A_);\n"
       "    free(G_);\n"
       "}\n");
}
