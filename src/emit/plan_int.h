/* plan_int.h: the plan's private header (src/emit/).
 *
 * plan.c (guard folding, loop order, private copies; plan_cpu) calls
 * plan_lanes.c (lane mode), and both call plan_walk.c (the tree walks).
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

#endif
