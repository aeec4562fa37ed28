/* vecplan.h: which array accesses of a CUDA kernel's wide entry become 16-byte
 * vector loads and stores, decided from the typed IR.
 *
 * A wide entry (emit.c, widens) runs KILN_CUDA_WIDE grid positions per thread,
 * block-strided: each load is a 4-byte (float32) instruction, so a thread issues
 * one instruction per element and array.  When the kernel reads and writes its
 * 1-D contiguous arrays only at its own position, the wide entry's vector path
 * gives each thread KILN_CUDA_WIDE consecutive positions instead (the block
 * still covers the same KILN_CUDA_WIDE x blockDim positions), loads each such
 * array's KILN_CUDA_WIDE elements with one vector load, runs the body once per
 * position on the loaded values (kiln_body_v, the body with those loads and
 * stores replaced by names), and stores each written array's elements with one
 * vector store.
 *
 * The position is a local assigned once, at the top level of the kernel's body
 * and before anything mentions it, from kiln.grid(1) (or kiln.grid(1) itself).
 * An array parameter takes part when it is 1-D and contiguous (layout C or F:
 * its element i is data[i]), of a real scalar dtype (bool, integers, floats;
 * not complex, not records), among the first 64 parameters, and never assigned:
 * - read: the kernel never writes it (sema's `written` bits, which follow views
 *   and device functions); every full subscript of it at the position is a
 *   load of the vector's element (other subscripts stay loads from memory).
 *   Reading the whole vector early is harmless: the path runs only where the
 *   vector lies inside the array's extent, and the wide entry runs only on
 *   arrays that no written array overlaps (launch.c, arrays_disjoint), so the
 *   element holds what the body would have read;
 * - written: every mention of it in the kernel is either the whole target of
 *   an assignment `a[pos] = v` or an attribute that is not an array (a.shape,
 *   a.size).  The body's stores go to the vector's element and set that
 *   element's flag; after the positions, the vector is stored whole when every
 *   flag is set, else element by element where set.  Nothing in the kernel
 *   reads it, and a thread's positions are its own, so the order of stores
 *   that the vector path changes cannot be seen.
 * - row: a read array whose every subscript taken is `a[c]` at the column c, a
 *   local assigned once, at the top level after the position and before anything
 *   mentions it, from `pos % m`, m an int64 parameter never assigned (kiln.fuse's
 *   row path writes `k_c = k_i0 % k_cols`).  A thread's positions of one vector
 *   lie in one row of m when m is a multiple of the vector's length (positions
 *   start at multiples of it), so their columns are consecutive: the entry
 *   computes one column per vector (a 32-bit remainder when both fit) and loads
 *   a[col .. col+V) as one vector where it lies inside a's extent and a is
 *   aligned; otherwise each element is read at its own column, as the body
 *   would, and an index outside the extent (which the body cannot have read
 *   without faulting) loads 0 rather than touching memory.  The body no longer
 *   needs c, whose remainder NVRTC then drops.  An array read both at the
 *   position and at the column stays a load from memory at the column.
 * No nested def (it could capture an array) and not under debug=True, which
 * checks every index in order.  The vector's alignment (16 bytes, or
 * KILN_CUDA_WIDE elements when smaller) is a run-time fact: each array is
 * checked in the kernel, a uniform branch, and one that is not aligned (a
 * view a[1:]) is read or written element by element, still one thread's
 * consecutive positions.  A pure analysis of the tree; emit_vec.c writes the code.
 */
#ifndef KILN_VECPLAN_H
#define KILN_VECPLAN_H

#include "sema/sema.h"

enum {
    VEC_BYTES = 16 /* the widest load or store a thread issues (ld.global.v4.f32,
                    * double2): what Triton and CUDA's own kernels use to reach the
                    * copy ceiling (docs/limits.md) */
};

typedef struct VecPlan {
    const Node **nodes; /* the subscripts written as a vector's element */
    int *param;         /* each node's array parameter */
    int nnodes;
    uint64_t loads;     /* bit p: array parameter p is read as vectors */
    uint64_t stores;    /* bit p: array parameter p is written as vectors */
    uint64_t rows;      /* bit p: array parameter p is read as vectors at the column */
    int cols;           /* rows: the int64 parameter m of the column `pos % m` */
} VecPlan;

/* Whether kernel k (CUDA, not debug, one that widens) gets the vector path; fills
 * *out (its tables in arena a) when it does. */
bool vec_plan(const FuncSpec *k, Arena *a, VecPlan *out);

/* The parameter whose vector element node n is, or -1. */
int vec_param_of(const VecPlan *v, const Node *n);

#endif
