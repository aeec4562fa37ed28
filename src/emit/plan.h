/* plan.h: how the CPU entry runs a kernel's grid, decided from the typed IR.
 *
 * Two decisions, both for kernels that see their position only through
 * kiln.grid() (no thread or block indices, so every grid position is an
 * independent run of the body, in any order):
 *
 * - The guard: the kernel's last statement `if <conjuncts>:` whose conjuncts
 *   bound a grid coordinate by launch invariants (`i < a.shape[0]`,
 *   `j >= 1`) becomes the bounds of the loops, so the body runs only where the
 *   guard holds and carries no branch.  Conjuncts that are not such bounds stay
 *   in the body.
 * - The loop order: which grid dimension is the innermost loop (unit stride,
 *   vectorised), which the outermost (parallel).  Each full subscript of an
 *   array whose index is a grid coordinate, plus or minus something that is
 *   not, votes: the coordinate at the array's unit-stride position (the last
 *   index of a C or strided array, the first of an F array) costs nothing,
 *   one further from it costs its distance.  Stores count twice (a store to a
 *   strided line costs a read and a write of it).  The dimensions are ordered
 *   by cost, the cheapest innermost; equal costs keep the natural order (x
 *   innermost, z outermost), which is also the order when nothing votes.
 *   Arrays of layout 'A' (strided) vote as C arrays: they are slices of C
 *   arrays far more often than of F arrays.  When even the innermost
 *   dimension costs something (a transpose: one side is strided whichever
 *   order), the inner two loops are tiled so that the lines a tile touches
 *   stay in cache while it is walked.
 * - Private copies: an array parameter that the kernel only ever updates with
 *   `kiln.atomic.add`/`sub` whose result it ignores (a sum, a histogram) is
 *   updated by plain adds into a zeroed copy per OpenMP thread, and each copy
 *   is added into the array with atomics when the thread's share is done: one
 *   atomic per element per thread instead of one per update.  When every such
 *   update uses one constant index (a sum into out[0]), the copy is a scalar
 *   that the vectorised loop reduces.  The order of floating-point additions
 *   changes, which atomics never promised.  Not under debug=True, whose
 *   atomics check their index.
 *
 * Both are pure analyses of the tree; emit.c writes the code.
 */
#ifndef KILN_PLAN_H
#define KILN_PLAN_H

#include "sema/sema.h"

enum {
    PLAN_MAX_BOUNDS = 8, /* folded guard bounds per kernel; more stay in the body */
    PLAN_MAX_KEEP = 16,  /* guard conjuncts kept in the body; more: no plan */
    PLAN_TILE = 64,      /* tile edge of a tiled nest (64 x 64 f64: 32 KiB, in L2) */
    /* the most bytes of private copies an OpenMP thread allocates for the arrays of
     * a launch that it updates only with atomic add/sub (docs/limits.md); a larger
     * array keeps its atomics */
    PLAN_PRIVATE_MAX_BYTES = 4 << 20,
    /* a grid position of a kernel with a loop counts as this many positions against
     * the launch's parallel threshold (par_threshold, 16384 by default): n-body's 4096
     * positions of 4096 iterations each are worth two threads */
    PLAN_LOOP_WEIGHT = KILN_PAR_WEIGHT_MAX
};

/* One conjunct `coord OP e` of the guard: coord (grid dimension dim) >= e + adj
 * (lower) or < e + adj (upper); e is invariant over the launch. */
typedef struct Bound {
    Node *e;
    bool lower;
    int adj;
    int dim;
} Bound;

typedef struct GuardPlan {
    Node *stmt;                    /* the guarding S_IF, or NULL when there is no plan */
    Bound b[PLAN_MAX_BOUNDS];
    int nb;
    Node *keep[PLAN_MAX_KEEP];     /* conjuncts that stay in the body: whole nodes... */
    Node *keep_l[PLAN_MAX_KEEP];   /* ...or one pair of a chained comparison */
    Node *keep_r[PLAN_MAX_KEEP];
    int keep_op[PLAN_MAX_KEEP];
    const Type *keep_ty[PLAN_MAX_KEEP];
    int nkeep;
} GuardPlan;

typedef struct CpuPlan {
    GuardPlan guard;
    int order[3]; /* grid dimensions (0 x, 1 y, 2 z), outermost first */
    bool tile;    /* some access strides along the innermost dimension (a transpose):
                   * the inner two loops run in PLAN_TILE x PLAN_TILE tiles */
    uint64_t priv; /* bit p: array parameter p (1-D) is used only as the array of
                    * statement-level atomic add/sub: each OpenMP thread adds into a
                    * private copy, merged into the array with atomics at its end */
    uint64_t acc;  /* bit p (of priv): every such atomic uses one constant index,
                    * acc_index[p]: the copy is a scalar, a reduction variable of the
                    * vectorised loop */
    int64_t acc_index[64];
    bool loops;    /* the kernel has a for or while loop (PLAN_LOOP_WEIGHT) */
    bool simd_ok;  /* every atomic the kernel makes is on an acc array (and it calls no
                    * device function): the thread loop vectorises with reduction() */
} CpuPlan;

/* Whether evaluating n has no effect (no call of a device function, no atomic). */
bool plan_pure(const Node *n);

/* Plans the CPU entry of kernel k (guard folding is left out under debug,
 * where the body checks everything). */
void plan_cpu(const FuncSpec *k, bool debug, CpuPlan *out);

#endif
