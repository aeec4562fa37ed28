/* plan_int.h: the plan's private header (src/emit/).
 *
 * plan.c (guard folding, loop order, private copies; plan_cpu) calls
 * plan_lanes.c (lane mode); plan_blanes.c (block lanes, called by the emitter) calls
 * plan_lanes.c; all call plan_walk.c (the tree walks).
 */
#ifndef KILN_PLAN_INT_H
#define KILN_PLAN_INT_H

#include "plan.h"

/* ---- plan_walk.c ---- */

/* Calls fn on every expression node under n (n included), parents first. */
void plan_each_expr(const Node *n, void (*fn)(void *, const Node *), void *arg);
/* ...of statement st and the statements in it, in the order they run (a for
 * loop's range before its counter). */
void plan_each_stmt(const Node *st, void (*fn)(void *, const Node *), void *arg);
void plan_each_block(const NodeList *l, void (*fn)(void *, const Node *), void *arg);

/* A visitor of symbols, for plan_each_*: plan_visit_sym calls fn(arg, sym) on
 * every name node that has a symbol. */
typedef struct PlanSymVisit {
    void (*fn)(void *, const Sym *);
    void *arg;
} PlanSymVisit;
void plan_visit_sym(void *visit, const Node *n);

/* Launch invariants.  plan_invariant: whether n has one value for the whole launch
 * (parameters, their shapes and sizes, integer constants, sums and products of those,
 * and the locals g holds values of; g may be NULL).  plan_def_of: such a local's value
 * in g, or NULL.  plan_resolved: n with g's locals replaced by their values, what the
 * entry computes.  plan_note_defs: adds the locals a statement before the guard
 * assigns once from invariants (`n = x.shape[0]`, `H, W = img.shape`) to g.
 * plan_simple_prefix: whether st may come before the guard (a pure assignment to
 * names, pass, a docstring). */
bool plan_invariant(const GuardPlan *g, const Node *n);
Node *plan_def_of(const GuardPlan *g, const Node *n);
Node *plan_resolved(const GuardPlan *g, Arena *a, Node *n);
void plan_note_defs(GuardPlan *g, Arena *a, const Node *st);
bool plan_simple_prefix(const Node *st);
/* Whether l holds a for or while loop, at any depth of its ifs. */
bool plan_has_loop(const NodeList *l);

/* ---- plan_stride.c ---- */

/* Plans a grid-stride loop run flat (CpuPlan.stride_for, stride_stop; out->loops then
 * says whether its body has loops), when r's kernel is one. */
void plan_stride(const SemaResult *r, Arena *a, CpuPlan *out);

/* ---- plan_lanes.c ---- */

/* Plans lane mode for r's kernel along coord, the innermost loop's coordinate
 * (coord_cost: the loop order's cost of that dimension, 0 when every access is
 * unit stride along it), into out->lanes; out->guard and the loop order are
 * planned already. */
void plan_lanes(const SemaResult *r, const Sym *coord, int64_t coord_cost, Arena *a,
                CpuPlan *out);

/* What block lanes (plan_blanes.c) use of lane mode's analysis: the scan's state, ... */
typedef struct LaneScan {
    const CpuPlan *P;
    LanePlan *L;
    bool ok;      /* nothing seen (this pass) that lane mode cannot write */
    bool changed; /* a local turned varying this pass */
    int ngrid;    /* kiln.grid() calls */
    int in_for;   /* lane for loops around the statement being scanned */
    Arena *arena;
    int *total;   /* occurrences of each symbol in the kernel */
    int *inside[PLAN_LANE_FOR_DEPTH]; /* ...in each lane for loop around the statement
                                       * (a table per depth, reused) */
    int in_loop;  /* block lanes: per-lane loops around the statement (per_lane_loop) */
    const Node **txdef; /* block lanes: per symbol id, the value of a local assigned once
                         * at the kernel's top level (tx_affine follows it), or NULL */
    const Node **topdef; /* block lanes: the value of a local's first top-level assignment */
} LaneScan;
/* ...a scan of kernel k into out->lanes, each symbol's occurrences counted; the rest of a
 * plan once its roots are set (false: no lane body, out->lanes cleared; bytes, widest: one
 * lane's varying values and the widest of them); whether st is syncthreads() or
 * syncwarp() as a statement; whether every atomic is a statement of a kind lanes can
 * run in any order; whether n can be written again where a local assigned n is read
 * (integer arithmetic of constants, indices and locals that never change); an int64
 * (or Python int) type. */
void plan_scan_init(LaneScan *S, const FuncSpec *k, Arena *a, CpuPlan *out);
bool plan_settle(LaneScan *S, const SemaResult *r, Arena *a, CpuPlan *out, int *bytes,
                 int *widest);
bool plan_barrier_stmt(const Node *st);
bool plan_atomics_fit(const SemaResult *r);
bool plan_recomputable(const LanePlan *L, const Node *n);
bool plan_int64_type(const Type *t);

#endif
