/* fuse.h: kiln.fuse's typed tree, between the lowering (sema/fuse_stmt.c and
 * fuse.c) and the writer of the kernel (emit/fuse_text.c).
 *
 * A fused function is straight-line code over arrays and scalars.  The lowering
 * types it as NumPy would for one specialisation (each array's dtype, number of
 * dimensions and which dimensions have extent 1; each scalar typed or weak) and
 * builds this tree: every node has a NumPy scalar type (weak for Python
 * scalars, NEP 50), the number of dimensions its value would have as an array,
 * and the array arguments it reads.  A node is scalar (no arrays), elementwise
 * (arrays, no reduction: it can be evaluated at any position of a domain, so
 * it is placed by its use: inside a reduction's loop or after it), or post (it
 * holds a reduction's result).  fuse_text.c writes the tree as one kernel in
 * kiln's own language, so the kernel goes through the same front end, cache
 * tiers and launch path as any kernel.
 */
#ifndef KILN_FUSE_H
#define KILN_FUSE_H

#include "sema/sema.h"

enum FLevel { FL_SCALAR, FL_ELEM, FL_POST };
enum FKind {
    FN_ARG,   /* a parameter: array (arg) or scalar */
    FN_CONST, /* text: a literal in kernel syntax */
    FN_VAR,   /* a user variable: a = value (a local of the kernel) */
    FN_UN,    /* op: UnOp */
    FN_BIN,   /* op: BinOp */
    FN_CMP,   /* op: CmpOp */
    FN_CALL,  /* text: the kernel's function (numpy.exp...); a, b: arguments */
    FN_WHERE, /* a ? b : c */
    FN_CAST,  /* a converted to t */
    FN_RED    /* reduction number arg of FuseIR.red */
};
enum FRed { FR_SUM, FR_PROD, FR_MAX, FR_MIN, FR_MEAN };

typedef struct FNode FNode;
struct FNode {
    uint8_t kind, op, level;
    Span sp;          /* the user's source */
    const Type *t;    /* the NumPy scalar type of an element (weak: a Python scalar) */
    const Type *opty; /* FN_BIN/FN_UN/FN_CALL: operands converted to this; NULL: as they are */
    int ndim;         /* as an array (0: a scalar or 0-d) */
    uint32_t ones;    /* bit r: dimension ndim-1-r has extent 1 (counted from the right) */
    uint64_t arrays;  /* bit i: array argument i is read (i < 64; more share bits) */
    uint64_t outer;   /* the arrays it reads outside reductions */
    uint32_t reds;    /* bit r: reduction r is part of it */
    FNode *a, *b, *c;
    int arg;          /* FN_ARG: parameter; FN_RED: reduction; FN_VAR: variable number */
    const char *text; /* FN_CONST, FN_CALL, FN_VAR: the user's name */
    int nargs;        /* FN_CALL */
    uint32_t emitted; /* FN_VAR: bit g: its local is written in region g (fuse_text.c) */
    bool py;          /* a Python value (Python scalars only): Python's rules, no casts */
    bool pred_const;  /* FN_CALL: isnan/isinf/isfinite (op) of an integer or bool: constant */
    bool npscalar;    /* 0-d, and a NumPy scalar rather than a 0-d array: NumPy's operators
                       * and ufuncs on 0-d operands return scalars, so x += y rebinds x
                       * (promoting) where a 0-d array would be updated in place */
};

typedef struct FRedInfo {
    FNode *arg;           /* elementwise value reduced */
    uint8_t op;           /* FRed */
    bool rows;            /* over the last axis (else the whole array) */
    bool keepdims;
    const Type *acc;      /* the result's type */
    const Type *sum;      /* the accumulator's: float64 for a sum or mean of float32 or
                           * float16 (NumPy sums pairwise; one running float32 total stops
                           * growing at 2**24 and loses small terms long before), else acc */
    int group;            /* reductions of the same arrays share one loop */
    bool used;            /* an output reads it */
    Span sp;
} FRedInfo;

/* Limits of one fused function (docs/limits.md). */
enum {
    /* values one fused function returns (a tuple) */
    KILN_FUSE_MAX_OUTPUTS = 16,
    /* reductions in one fused function: one accumulator each (and at most one loop) */
    KILN_FUSE_MAX_REDUCTIONS = 16,
};

typedef struct FuseIR {
    const char *name;            /* the user's function */
    const kiln_fuse_arg *args;
    int nargs;
    const char **pnames;         /* parameter names */
    FNode *outs[KILN_FUSE_MAX_OUTPUTS];
    int nout;
    bool tuple;
    FRedInfo red[KILN_FUSE_MAX_REDUCTIONS];
    int nred;
    kiln_fuse_kind kind;
    bool keepdims;
    int ngroups;                 /* loops: one per set of arrays reduced */
    uint64_t group_arrays[KILN_FUSE_MAX_REDUCTIONS];
    int group_ndim[KILN_FUSE_MAX_REDUCTIONS]; /* dimensions of the values a loop reduces */
    int ndim_out;                /* dimensions of every output */
    int nvars;
} FuseIR;

/* Types the function in f (sema/fuse_stmt.c) for the arguments; 0, or -1 after
 * reporting errors at the user's source. */
int fuse_lower(Compiler *C, const SrcFile *f, void *scope, const kiln_fuse_arg *args,
               int nargs, FuseIR *ir);

/* Writes the kernel of ir for target (emit/fuse_text.c) into out (kernel
 * language text, its def on line 1) and the kernel's parameters, space
 * separated, into params (docs: kiln_fuse_plan.params). */
void fuse_write(Compiler *C, const FuseIR *ir, kiln_target target, Buf *out, Buf *params);

#endif
