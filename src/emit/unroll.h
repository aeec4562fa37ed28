/* unroll.h: which `for` loops of a CUDA kernel run several iterations per pass
 * with their loads issued first, decided from the typed IR.
 *
 * A GPU thread that waits for one iteration's loads before it starts the next
 * keeps one load in flight per array: a grid-stride loop (`for i in
 * range(kiln.grid(1), n, kiln.gridsize(1))`) or a loop over a row inside a
 * thread then runs at the latency of memory, not its bandwidth.  The loop is
 * written as a main loop that runs UNROLL_FACTOR iterations per pass, each a
 * copy of the body in the original order (so locals carried from one
 * iteration to the next, a running sum, stay right), followed by the original
 * loop for the iterations left.  Before the copies, each pass loads what every
 * copy will load at its top level: UNROLL_FACTOR times as many loads in flight.
 *
 * A load moves above the copies before it, so it must read what it would have
 * read there, and reading it early must be harmless:
 * - the array is a kernel parameter that the kernel never assigns and never
 *   writes (sema's `written` bits, which follow views and device functions),
 *   and, when the body may write memory (a store, an atomic, a device function),
 *   at run time its bytes overlap no array the kernel may write: the main
 *   loop runs only when they are apart (kiln_apart_, rt_cuda.h), else the
 *   original loop runs every iteration.  A body that writes none (a row's sum in
 *   registers) needs no such check;
 * - its index is made only of the loop variable, constants, and names the
 *   body never assigns, through + - * and unary operators, attributes
 *   (a.shape[k]) and pure intrinsics, with no division that can fail;
 * - it is evaluated whenever the statement is: at the top level of a
 *   statement of the body, not under an if, a conditional expression, the
 *   right of `and`/`or` or the later links of a chained comparison.  An
 *   iteration that returns or fails before reaching it would have loaded an
 *   address the loop's range gives anyway.
 *
 * The loop qualifies when it is a `for` over range() with an int64 counter and
 * no else, its step a positive constant or checked positive at run time,
 * its kernel takes only arrays and scalars (and writes none of its parameters past
 * the 64th, which have no bit of their own), its body holds no other loop (the innermost loop is unrolled), no break or
 * continue of its own (a copy cannot leave the pass), no barrier or warp
 * operation (the main and the remainder loop would split a warp's lanes), at
 * most UNROLL_MAX_NODES nodes and at least one such load (at most
 * UNROLL_MAX_LOADS are hoisted).  Not under debug=True, which checks every
 * index in order.  A pure analysis of the tree; emit.c writes the code.
 */
#ifndef KILN_UNROLL_H
#define KILN_UNROLL_H

#include "sema/sema.h"

enum {
    UNROLL_FACTOR = 4,       /* iterations per pass of the main loop: four loads per array
                              * in flight per thread reach the H200's bandwidth (bench/RESULTS.md,
                              * the wide entry's study) */
    UNROLL_MAX_NODES = 600,  /* a larger body is not unrolled: its copies cost more compile
                              * time and registers than the loads in flight gain
                              * (docs/limits.md) */
    UNROLL_MAX_LOADS = 16    /* loads hoisted per iteration; later ones stay in place: each
                              * is UNROLL_FACTOR registers held across the pass */
};

typedef struct UnrollPlan {
    const Node **loads; /* the hoisted loads (E_SUBSCRIPT), in the order of the body */
    int nloads;
    uint64_t reads;     /* bit p: array parameter p is read by a hoisted load */
    uint64_t writes;    /* bit p: array parameter p may be written by the kernel, when the
                         * body may write memory: the main loop runs only when each is
                         * apart from each read one */
    bool const_step;    /* the step is a constant (positive); else checked at run time */
} UnrollPlan;

/* Whether the for statement n of kernel k (CUDA, not debug) is unrolled; fills
 * *out (its table in arena a) when it is. */
bool unroll_plan(const FuncSpec *k, const Node *n, Arena *a, UnrollPlan *out);

#endif
