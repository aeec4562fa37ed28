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
 *   in the body.  An early return, `if <disjuncts>: return` (`i >= n or
 *   j >= m`, pure), is a guard too, of the statements after it: each disjunct
 *   that negated is such a bound folds, the others stay as `if (...) return;`.
 *   Only simple assignments (pure values) may come before either.
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
 * - Lane mode ("SIMT to SIMD", as ISPC does): a grid-only kernel with a loop
 *   in its body gets a second body, kiln_body_lanes, that runs up to
 *   LanePlan.n consecutive positions of the innermost dimension at once, so
 *   that the vectoriser sees a loop over positions (the lanes) inside the
 *   kernel's own loops (GCC does not vectorise the position loop around a
 *   body with a loop: "control flow in loop").  A value is uniform when it is
 *   the same for every position along the innermost dimension (parameters,
 *   constants, the other grid coordinates, the counters of uniform loops,
 *   locals assigned only uniform values and never under a varying condition,
 *   loads at uniform indices from arrays the kernel never writes), varying
 *   otherwise (the innermost coordinate and what depends on it): a fixed point
 *   over the kernel, in which locals only ever turn varying.  A varying local
 *   is an array of lanes, or, when it occurs in one run of statements only and
 *   is assigned at that run's top level before anything reads it, a scalar
 *   declared inside the run's lane loop; the innermost coordinate is the
 *   chunk's base plus the lane (so accesses through it stay unit stride).
 *   Loops with a uniform range or condition, ifs with uniform conditions,
 *   break, continue, return and assignments of uniform values to uniform
 *   locals stay scalar code; every maximal run of the other statements becomes
 *   one vectorised loop over the lanes, in which an if with a varying
 *   condition is an if per lane.  A while loop with a varying condition keeps
 *   a mask of the lanes still in it (an integer as wide as the widest varying
 *   value), tests the condition of those each pass, stops when none is left
 *   and runs its body's lane loops under the mask.  The entry runs full chunks
 *   and then one short chunk of each row through kiln_body_lanes, which
 *   compiles the body twice: with the lane count a constant (the lane arrays
 *   live in registers) and for the short chunk.  A grid-stride loop, `for j in
 *   range(i + u, hi, step)` with i the innermost coordinate, u, hi and step
 *   uniform and step positive (a lane for loop), runs a pass per base value
 *   of j over the lanes still in the loop, always a prefix of the chunk, and
 *   j is written as the pass's base plus the lane, so its loads stay unit
 *   stride.  A statement with an atomic runs in a lane loop that is not
 *   vectorised (two lanes may update one element).  Lanes: the most, a power of
 *   two up to PLAN_LANES_MAX, whose varying locals fit PLAN_LANE_BUDGET
 *   bytes, but at least PLAN_LANE_MIN_BYTES of the widest; that least when
 *   some access strides along the lanes (the loop order's cost of the
 *   innermost dimension is not 0), whose loads are then gathers.  Eligible
 *   (anything else keeps the one body): no thread or block indices, not
 *   debug, a `for` or `while` loop, atomics only as statements of the kernel
 *   that return nothing (add, sub, max, min, and, or, xor: in any order of the
 *   lanes they give what some order of GPU threads gives; an exch or cas could
 *   be a lock one lane waits on while another holds it), no local or shared arrays in
 *   the kernel, one kiln.grid() call in it and its device functions (the
 *   statement grid_syms finds, whose innermost variable is an int64: a
 *   device function, called per lane, gets the chunk's base), every `for`
 *   with a uniform range and counter or a lane for loop (whose counter is an
 *   int64 nothing else assigns or reads after it, with no else and no return
 *   in it), no loop, break, continue or return
 *   under a varying
 *   condition (an if's or a while's), no else on a varying while, the guard's
 *   kept conjuncts uniform, every varying local a scalar that is not a
 *   parameter, and the analysis done in PLAN_LANE_PASSES passes.  The lanes
 *   of a chunk run statement by statement rather than one position after
 *   another: the freedom the vectorised position loop already takes, which
 *   grid-only kernels give since their positions do not communicate.
 *
 * - Block lanes: a kernel in block mode (shared memory, barriers) whose threads meet
 *   every barrier together runs each block as lane loops over its threads instead of a
 *   fiber per thread (rt_blocks.h).  The lanes are the block's threads, x innermost
 *   (a loop over y and z around a vectorised loop over x, each lane with its own tx_,
 *   ty_, tz_); the analysis is lane mode's with the thread indices (and grid(), which
 *   reads them) as the varying roots, and a barrier statement is scalar code between two
 *   lane loops: every thread has run the statements before it when the next loop starts,
 *   which is what syncthreads() promises.  A local assigned once at the kernel's top level
 *   from thread and block indices, constants and locals that never change (`tx =
 *   threadIdx.x`, `x, y = grid(2)`) is no array: its value is written again where it is
 *   read (LANE_RECOMP), so shared tiles indexed by it stay unit stride.  A grid-stride
 *   loop whose start is a thread's x position plus a uniform value (tx_affine) is a lane
 *   for loop over each row of x lanes: the x lanes still in it are a prefix (nx_).  A
 *   loop under a varying condition (thread 0's serial part) or over another varying
 *   range runs inside a lane loop that is not vectorised, each lane its own loop (its
 *   counter varying; break and continue in it are the lane's).  Eligible: not
 *   cooperative, no spin point, no warp operation (shuffles, votes, match, activemask),
 *   no barrier with a value (syncthreads_count/and/or), no local arrays, barriers only as
 *   statements of the kernel itself (syncwarp counts as one), none under a varying
 *   condition or in a thread's own loop, no return from a thread's own loop, the rest as
 *   lane mode (atomics as statements); and the varying locals' arrays, one element per
 *   thread of the largest block, at most PLAN_BLOCK_LANE_BYTES of stack.  The shared tiled
 *   matmul of Numba-CUDA's documentation: 0.47x Numba with fibers, 2.05x with lanes.
 *
 * All are pure analyses of the tree (plan.c, plan_lanes.c); the emitter writes the code.
 */
#ifndef KILN_PLAN_H
#define KILN_PLAN_H

#include "sema/sema.h"

enum {
    PLAN_MAX_BOUNDS = 8, /* folded guard bounds per kernel; more stay in the body */
    PLAN_MAX_KEEP = 16,  /* guard conjuncts kept in the body; more: no plan */
    PLAN_ACC_SUM = 1, PLAN_ACC_MAX = 2, PLAN_ACC_MIN = 3, /* CpuPlan.acc_op */
    PLAN_ACC_SLOTS = 4,  /* constant elements of one array whose atomics become reduction
                          * variables (CpuPlan.acc); an array with more keeps its atomics */
    PLAN_SHORT_LOOP = 16, /* a range of at most this many constant steps is short: its
                           * accesses do not decide lane mode (plan.c, rows) */
    PLAN_MAX_DEFS = 8,   /* locals of the statements before the guard that hold a launch
                          * invariant (`n = x.shape[0]`, `H, W = img.shape`) */
    PLAN_TILE = 64,      /* tile edge of a tiled nest (64 x 64 f64: 32 KiB, in L2) */
    /* the most bytes of private copies an OpenMP thread allocates for the arrays of
     * a launch that it updates only with atomic add/sub (docs/limits.md); a larger
     * array keeps its atomics */
    PLAN_PRIVATE_MAX_BYTES = 4 << 20,
    /* a grid position of a kernel with a loop counts as this many positions against
     * the launch's parallel threshold (par_threshold, 16384 by default): n-body's 4096
     * positions of 4096 iterations each are worth two threads */
    PLAN_LOOP_WEIGHT = KILN_PAR_WEIGHT_MAX,
    /* lane mode: the lanes of a chunk are the most, a power of two, whose varying
     * locals fit in PLAN_LANE_BUDGET bytes (half the AVX-512 register file, all of
     * AVX2's): more lanes are more independent chains of vector operations in
     * the kernel's loops (matmul's sum: 64 lanes of f64 take half the time of 8,
     * a Horner loop a fifth), more bytes than registers are spills; but at least
     * two 64-byte vectors of the widest varying type (one chain of operations
     * per lane loop leaves the vector units idle: Mandelbrot's escape loop runs
     * 8 lanes of f64 at half the speed of 16) and at most PLAN_LANES_MAX */
    PLAN_LANE_BUDGET = 512,
    PLAN_LANE_MIN_BYTES = 128,
    PLAN_LANES_MAX = 64,
    /* lane mode: the passes of the uniformity analysis (each pass walks the
     * kernel once; a chain of assignments that takes more gets no lane body,
     * docs/limits.md) */
    PLAN_LANE_PASSES = 16,
    /* lane mode: lane for loops nested in each other (a table of occurrences per
     * level); one nested deeper keeps the one body (docs/limits.md) */
    PLAN_LANE_FOR_DEPTH = 8,
    /* block lanes: the most stack bytes of the varying locals' arrays, one element per
     * thread of a block of KILN_MAX_BLOCK_THREADS (more: the block runs as fibers) */
    PLAN_BLOCK_LANE_BYTES = 128 << 10
};

/* How a local of a kernel with a lane body is written there (plan.h atop). */
enum LaneClass {
    LANE_UNIFORM, /* one scalar for all lanes */
    LANE_VARYING, /* an array of one value per lane */
    LANE_PRIVATE, /* varying, but used in one run only, written first there: a
                   * scalar declared inside that run's lane loop */
    LANE_COORD,   /* the innermost grid coordinate, or the counter of a lane for
                   * loop: its base (a scalar), plus the lane */
    LANE_RECOMP   /* block lanes: a thread's index or position, assigned once at the
                   * kernel's top level from thread and block indices, constants and
                   * locals that never change (`tx = threadIdx.x`, `x, y = grid(2)`):
                   * no variable, its value written again where it is read
                   * (LanePlan.recomp), so accesses through it stay unit stride */
};

typedef struct LanePlan {
    int n;                 /* lanes of a full chunk (KILN_LANES); 0: no lane body */
    int dim;               /* the grid dimension they run along (order[2]) */
    const FuncSpec *k;
    const Sym *coord;      /* the innermost grid coordinate's variable */
    const Node *grid_stmt; /* `i, j = kiln.grid(2)`: scalar code, sets the base */
    bool block;            /* block lanes: the lanes are a block's threads, nl_ of them
                            * (plan_block_lanes) */
    int widest;            /* bytes of the widest varying local: a varying while's
                            * mask is an integer of that width (a bool's 1 byte
                            * against 8-byte data stops GCC vectorising) */
    uint8_t *cls;          /* enum LaneClass per symbol id of k */
    /* block lanes: per symbol id of a LANE_RECOMP local, the value it was assigned, and
     * which element of it (-1: all of it; d: grid()'s dimension d) */
    const Node **recomp;
    int8_t *recomp_part;
    /* block lanes: per symbol id of the counter of a grid-stride while loop run as a lane
     * for loop (plan_lane_while_var), its start, assigned at the kernel's top level */
    const Node **wdef;
} LanePlan;

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
    bool early;                    /* stmt is `if <disjuncts>: return`, the guard of the
                                    * statements after it; keep[] are whole disjuncts */
    /* locals assigned once before the guard from launch invariants, and their values:
     * a bound on such a local folds as one on its value, which the entry computes */
    const Sym *def_sym[PLAN_MAX_DEFS];
    Node *def_val[PLAN_MAX_DEFS];
    int ndefs;
} GuardPlan;

typedef struct CpuPlan {
    GuardPlan guard;
    int order[3]; /* grid dimensions (0 x, 1 y, 2 z), outermost first */
    bool tile;    /* some access strides along the innermost dimension (a transpose):
                   * the inner two loops run in PLAN_TILE x PLAN_TILE tiles */
    uint64_t priv; /* bit p: array parameter p is used only as the array of
                    * statement-level atomic add/sub: each OpenMP thread adds into a
                    * private copy, merged into the array with atomics at its end */
    uint64_t acc;  /* bit p (of priv): every such atomic uses a constant index, one of
                    * acc_n[p] (at most PLAN_ACC_SLOTS) acc_index[p][s], each with one
                    * kind of update: each element a scalar, a reduction variable of the
                    * vectorised loop (a max and a min of one array at 0 and 1) */
    uint8_t acc_n[64];
    int64_t acc_index[64][PLAN_ACC_SLOTS];
    uint8_t acc_op[64][PLAN_ACC_SLOTS]; /* PLAN_ACC_SUM (add/sub), _MAX or _MIN */
    bool loops;    /* the kernel has a for or while loop (PLAN_LOOP_WEIGHT) */
    bool simd_ok;  /* every atomic the kernel makes is on an acc array (and it calls no
                    * device function): the thread loop vectorises with reduction() */
    LanePlan lanes;
    /* a grid-stride loop run flat (plan_stride.c): the kernel's last statement, `for i
     * in range(grid(1), stop, gridsize(1))`, whose iterations share nothing; the entry
     * runs the positions [0, stop) (stride_stop, a launch invariant) and the statement
     * runs its body once, with i the position */
    const Node *stride_for;
    Node *stride_stop;
} CpuPlan;

/* Whether evaluating n has no effect (no call of a device function, no atomic). */
bool plan_pure(const Node *n);

/* Plans the CPU entry of r's kernel (guard folding and lane mode are left
 * out under debug, where the body checks everything); the lane plan's table
 * lives in arena a. */
void plan_cpu(const SemaResult *r, bool debug, Arena *a, CpuPlan *out);

/* Block lanes (plan.h atop): a kernel in block mode whose barriers are statements that
 * every thread of the block meets (none under a varying condition) runs each block as
 * lane loops over its threads, a barrier between two of them, instead of fibers.  Plans
 * out->lanes with lanes.block set, or leaves lanes.n 0. */
void plan_block_lanes(const SemaResult *r, Arena *a, CpuPlan *out);

/* Lane mode: how statement st (outside any lane loop) is written. */
enum LaneStmt {
    LANE_SCALAR, /* as scalar code: uniform loops and ifs, uniform assignments and
                  * exits, the grid statement, the guard, statements that do nothing */
    LANE_RUN,    /* inside a lane loop, with the statements around it of this kind */
    LANE_LOOP,   /* a while loop with a varying condition: its lanes iterate until
                  * none is left, each under a mask of the lanes still in it */
    LANE_FOR,    /* a lane for loop: a pass per base value of its counter, over the
                  * prefix of the lanes still in it */
    LANE_ATOMIC  /* a statement with an atomic: inside a lane loop of its own (with
                  * its neighbours of this kind) that is not `omp simd`, since two
                  * lanes may update one element */
};
int plan_lane_stmt(const CpuPlan *p, const Node *st);
/* Block lanes: the counter of while loop st when it runs as a lane for loop (`i = start;
 * while i < hi: ...; i += step`), or NULL. */
const Sym *plan_lane_while_var(const LanePlan *L, const Node *st);

/* Lane mode: calls fn for every occurrence of a symbol in statements
 * l->v[from..to) (a run of lane statements), in order. */
void plan_lane_syms(const NodeList *l, int from, int to, void (*fn)(void *, const Sym *),
                    void *arg);

#endif
