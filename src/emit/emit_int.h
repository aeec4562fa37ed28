/* emit_int.h: the emitter's private header (src/emit/).
 *
 * The emitter is files that call one way: emit.c (the program, each
 * function, the CPU and CUDA entries) -> emit_tier0.c, emit_tier0_expr.c,
 * emit_tier0_scan.c (tier 0's vector entry, emit_tier0_int.h) -> emit_vec.c (the wide CUDA entry's
 * vector path, vecplan.h) -> emit_blocks.c (block mode's CPU
 * entries, rt_blocks.h) -> emit_extern.c (external CUDA device functions'
 * sources, declarations and wrappers) -> emit_libdevice.c (libdevice's) -> emit_stmt.c (statements, lane mode,
 * the folded guard) -> emit_assign.c (assignments and their stores) -> emit_ufunc.c (the loop of a ufunc statement on arrays) ->
 * emit_expr.c (expressions: operators, subscripts,
 * intrinsics, comparisons) -> emit_complex.c (complex operations and cmath, on
 * operands emit_expr.c has written) -> emit_bf16.c (kiln.bf16's functions, the
 * same way) -> emit_text.c (the text every level
 * writes: line markers, names, C types, constants, conversions, index
 * arithmetic, frozen tuples).  Expressions recurse into each other and stay in one file; a file
 * calls only the files after it.  Every function here writes into E->o.
 */
#ifndef KILN_EMIT_INT_H
#define KILN_EMIT_INT_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "plan.h"
#include "unroll.h"
#include "vecplan.h"

typedef struct LoopCtx {
    int flag; /* temp number of the "left by break" flag, or -1 */
} LoopCtx;

typedef struct Emit {
    Compiler *C;
    const SemaResult *R;
    bool cuda;
    bool debug;
    bool fastmath;
    bool half;          /* float16 appears: rt_half.h goes into the program */
    bool print;         /* print() appears: the CPU program declares printf */
    bool blocks;        /* CPU block mode (SemaResult.block_mode): rt_blocks.h, fibers */
    bool spin;           /* CPU block mode with spin points (SemaResult.spin): atomics and
                          * fences let the block's other fibers run (kiln_yield_) */
    int64_t shared_off; /* CPU block mode: bytes of static shared memory handed out */
    Buf types;          /* struct typedefs and their constructors */
    Buf helpers;        /* per-program helper functions (views...) */
    Buf funcs;          /* functions */
    Buf *o;             /* where text goes now */
    int ind;            /* indentation of statements */
    const char **names; /* registered keys: an open-addressing set (see registered) */
    const char **named; /* the value stored with each key (a struct's C name) */
    int nnames, capnames;
    int ngarrays;       /* frozen tuples and arrays written as static arrays, kga<i>, kgc<i> */
    PtrVec gvalues;     /* frozen tuples used as values in this function (GVal *), kgv<i> */
    FuncSpec *f;        /* the function being written */
    int tmp;            /* temporaries in this function */
    int line;           /* last #line written */
    int nhelp;          /* helpers made */
    int nfmt;           /* CUDA: print formats written as __constant__ arrays, kfmt<i>_ */
    int64_t fmt_bytes;  /* CUDA: their bytes, counted with the const arrays' against
                         * KILN_MAX_CONST_MEMORY_BYTES */
    LoopCtx loops[128];
    int nloops;
    const char *leave;  /* statement that leaves the function after a runtime error */
    PtrVec files;       /* source file names; runtime errors carry an index */
    CpuPlan plan;       /* CPU: the guard folded into the loops, and their order */
    bool in_entry;      /* writing the entry: parameters are p0, p1... */
    const Node *subst;  /* this node is written as subst_text (a[i] op= v) */
    const char *subst_text;
    Buf *body;          /* the function body being written (function()) */
    bool too_big;       /* KILN_MAX_SOURCE_BYTES was reported: write no more */
    bool lanes;         /* writing kiln_body_lanes (plan.h, lane mode) */
    const Node *index_root; /* the index expression being written as a subscript's or an
                             * atomic's: an int() of a float there converts without
                             * kiln_f2i64's trunc (no float ever sees that integer) */
    bool acc_mem;       /* writing kiln_body_am: the kernel as written, every atomic to
                         * memory, no folded guard (the launch where an accumulated array
                         * shares memory with another argument, emit.c) */
    bool in_lane;       /* ...inside one of its lane loops: varying names take [l_] */
    int *declared;      /* per symbol id: the run whose lane loop declared it */
    const char **recomp_text; /* block lanes: per symbol id of a LANE_RECOMP local, its
                               * value as a lane loop writes it */
    int run;            /* lane loops written so far */
    const char *mask;   /* the lanes still in the varying while loop being written */
    const char *loop_pragma;  /* CPU: written before the next range loop's `for` (a fold's
                               * omp simd reduction, emit_stmt.c), then cleared */
    bool inner_simd;          /* CPU: a loop of the program has one: the entry's position
                               * loops take no `omp simd` (OpenMP nests none) */
    const Sym *flat_counter;  /* CPU: the counter of the grid-stride loop being written run
                               * flat, in [0, stop) there: its index needs no wrap */
    const UnrollPlan *hoist; /* CUDA: the unrolled loop whose copy is being written: its
                              * hoisted loads are written as hl<hoist_id>_<load>_<copy>
                              * (emit_stmt.c, unrolled_for) */
    int hoist_id, hoist_copy;
    const VecPlan *vec; /* CUDA: writing kiln_body_v, the wide entry's vector path's body
                         * (vecplan.h): the plan's subscripts are the vectors' elements */
    bool uses_complex;  /* a complex type was written: the program takes rt_complex.h */
    bool opt_raw;       /* the next call of a function that may return None is written
                         * as its optional struct, not its value (emit_opt.c) */
    /* tier 0's vector entry being written (emit_tier0.c): the text of a node that
     * it holds in an array, read by the lane loop being written, or NULL */
    const char *(*t0_text)(struct Emit *E, const Node *n);
    struct T0 *t0;
} Emit;

/* Tuples of one scalar type with more items than this are read at a run-time
 * index as an array (below it, a switch keeps them in registers), and a frozen
 * one is copied from its static array: a C compiler takes time far beyond
 * linear on a constructor call with thousands of arguments. */
enum { TUPLE_AS_ARRAY = 16 };

#define P(...) buf_printf(E->o, __VA_ARGS__)
#define PS(s) buf_puts(E->o, s)

/* ---- emit_tier0.c: tier 0's vector entry (CPU) ---- */
/* Appends kiln_ventry, the kernel over blocks of threads through src/target/vecops.c,
 * to out; false (out untouched) when the kernel is one it does not cover. */
bool emit_tier0_entry(Emit *E, FuncSpec *k, Buf *out);

/* ---- emit_blocks.c: block mode's CPU entries (rt_blocks.h) ---- */
/* The entry's split of the grid's blocks over OpenMP threads (par) or all on one. */
void emit_block_range(Emit *E, int par, const char *weight, const char *clauses);
/* The record of a fiber's arguments and its thread function, before the entry. */
void emit_block_prelude(Emit *E, FuncSpec *k);
/* The entry's loop over blocks, each block's threads as fibers. */
void emit_block_entry(Emit *E, FuncSpec *k);
/* block lanes' entry (E->plan.lanes.block): each block one call of kiln_blanes_ */
void emit_blanes_entry(Emit *E, FuncSpec *k);
/* A cooperative kernel's entry: the whole grid's fibers, meeting at the grid barrier. */
void emit_grid_entry(Emit *E, FuncSpec *k);

/* ---- emit_vec.c: the wide entry's vector path (vecplan.h), CUDA only ---- */
/* kiln_body_v's parameters after the kernel's: the elements read, where to store. */
void emit_vec_params(Emit *E, const FuncSpec *k, Buf *ps);
/* The vector path, in the wide entry after its arrays are made: returns at its end. */
void emit_vec_entry(Emit *E, const FuncSpec *k, const char *args);

/* ---- emit_text.c: text every level writes ---- */
void emit_indent(Emit *E);
void emit_line_marker(Emit *E, Span sp);
int emit_loc(Emit *E, Span sp);
int emit_site(Emit *E, const char *site, int line); /* a raise site's (emit_stmt.c) */
const char *emit_sym_name(Emit *E, const Sym *s);
const char *emit_func_name(Emit *E, const FuncSpec *f);
const char *emit_scalar_ctype(const Type *t);
/* An array element's C type: a float16 is stored as its 16 bits (kh16, rt_half.h). */
const char *emit_elem_ctype(Emit *E, const Type *t);
/* Whether t is float16 (held in a f32 between operations, rt_half.h). */
bool emit_is_f16(const Type *t);
/* 'h' for float16, 'b' for bfloat16 (both held in a f32, stored as 16 bits: kh16),
 * 0 for the rest: the letter of their rt_half.h functions (kiln_hr, kiln_br...). */
char emit_narrow(const Type *t);
/* Writes "kiln_hr(" when t is float16: the result of the f32 arithmetic that follows,
 * closed by emit_half_close, is rounded to float16. Returns whether it did. */
bool emit_half_open(Emit *E, const Type *t);
void emit_half_close(Emit *E, bool open);
/* An element read of type t from lvalue text: float16 bits widened. */
const char *emit_load(Emit *E, const Type *t, const char *lv);
const char *emit_tuple_make(Emit *E, const Type *t);
/* NAME(src, dst): copies array src's elements into dst, C order, and returns the
 * C-contiguous array there (a.copy(), emit_text.c). */
const char *emit_array_copy_fn(Emit *E, const Type *t);
/* A vector type t built from na sources (emit_text.c): each a scalar of t's lane type or a
 * vector of that lane type (tys), already written as text (args). */
void emit_vector_make(Emit *E, const Type *t, int na, const Type **tys, const char **args);
const char *emit_split_fn(Emit *E, const Type *t, int modf);
bool emit_tuple_homogeneous(Emit *E, const Type *t);
void emit_tuple_is_array(Emit *E, const Type *t);
const char *emit_tuple_get(Emit *E, const Type *t);
const char *emit_ctype(Emit *E, const Type *t);
bool emit_same_ctype(Emit *E, const Type *a, const Type *b);
void emit_const(Emit *E, const Type *t, ConstVal v);
void emit_convert(Emit *E, const Type *from, const Type *to, const char *text);

/* ---- emit_opt.c: values that may be None (Numba's Optional of a number) ---- */
/* The struct of an optional t, KO_<ctype>, with kopt_/knone_ constructors. */
const char *emit_opt_ctype(Emit *E, const Type *t);
/* The number an optional t holds, from its text raw: `.v`, checked under debug=True. */
const char *emit_opt_value(Emit *E, const Type *t, const char *raw, Span sp);
/* A maybe-None expression (sema_maybe_none) as its optional struct. */
void emit_opt_raw(Emit *E, Node *n);
/* Expression v (None, a maybe-None expression or a number) as an optional t. */
void emit_opt_of(Emit *E, Node *v, const Type *t);
/* `x is None`, `x is not None` of a maybe-None x: its flag. */
void emit_opt_test(Emit *E, Node *n);
const char *emit_fsuffix(const Type *t);
bool emit_is_f32(const Type *t);
void emit_index_of(Emit *E, const char *b, const Type *at, const char **ix, const bool *nn,
                   int line, Buf *out);
const char *emit_sreg(int s);
void emit_sx_open(Emit *E, const Type *t);
void emit_sx_close(Emit *E, const char *value);
void emit_compare_pair(Emit *E, const char *a, const Type *at, const char *b, const Type *bt,
                       const Type *o, CmpOp op);
void emit_global_make(Emit *E, const GVal *g);
/* The locals kgv<i> of the frozen tuples the function just written used as values
 * (E->gvalues, emit_global_value), at its top. */
void emit_gvalue_decls(Emit *E);
const char *emit_global_value(Emit *E, const GVal *g);
const char *emit_global_array(Emit *E, const GVal *g);
/* The static array of a frozen global NumPy array (kgc<i>). */
const char *emit_frozen_array(Emit *E, const GVal *g);
/* Writes a view of global array g (frozen, or a device array by address), as an
 * expression of its array type. */
void emit_global_view(Emit *E, const GVal *g);

/* ---- emit_extern.c: external CUDA device functions (on the CPU: their sources as C) ---- */
/* Their sources, each once, at the top of the program (CUDA) or after the prelude (CPU). */
void emit_extern_sources(Emit *E, Buf *out);
/* On the CPU: -1, reported, when a called external function has no source to compile. */
int emit_extern_check_cpu(Emit *E);
/* Declarations and the wrappers kiln's calls go through (into o). */
void emit_extern_decls(Emit *E, Buf *o);

/* ---- emit_hint.c: loads and stores with a cache hint (kiln.ldcs, kiln.stcs ...) ---- */
void emit_cache_hint(Emit *E, Node *n);

/* ---- emit_libdevice.c: kiln.libdevice's declarations and wrappers ---- */
void emit_libdevice_decls(Emit *E, Buf *o);
/* Whether the program calls a libdevice function (the CPU pastes rt_libdevice_cpu.h). */
bool emit_uses_libdevice(const Emit *E);

/* ---- emit_print.c: print(...) as one printf ---- */
void emit_print(Emit *E, Node *n);

/* ---- emit_complex.c: complex operations on written operands ---- */
/* "c64" or "c128": the runtime's name of complex type t (sets uses_complex). */
const char *emit_cname(Emit *E, const Type *t);
/* emit_npufunc.c: writes n, a call of NumPy's invert, logical ufuncs, fmax or fmin, or of a ufunc that
 * orders complex numbers; false when n is none of these. */
bool emit_npufunc(Emit *E, Node *n);
/* emit_reduce.c: writes n, a call of NumPy's reductions (np.sum(a) ...); false when n is
 * another call. */
bool emit_reduce(Emit *E, Node *n);
/* emit_view.c: writes n, a call a.view(dtype). */
void emit_view(Emit *E, Node *n);
void emit_complex_binop(Emit *E, BinOp op, const Type *t, const char *l, const char *r);
void emit_complex_neg(Emit *E, const Type *t, const char *x);
void emit_complex_const(Emit *E, const Type *t, double re, double im);
/* a call of intrinsic n (IK_CMATH, IK_COMPLEX, abs, isnan...) whose arguments,
 * converted to their operand type, are args */
void emit_complex_call(Emit *E, Node *n, const char **args);
/* ---- emit_bf16.c: kiln.bf16's functions (IK_BF16, IK_BF16CVT) ---- */
void emit_bf16_call(Emit *E, Node *n, const char **args);

/* ---- emit_ufunc.c: a ufunc statement's loop, after its temporaries (emit_stmt.c) ---- */
void emit_ufunc_loop(Emit *E, Node *n);

/* ---- emit_expr.c: expressions ---- */
const char *emit_expr_str(Emit *E, Node *n, const Type *as);
void emit_expr_as(Emit *E, Node *n, const Type *to);
void emit_truthy(Emit *E, Node *n);
const char *emit_element(Emit *E, Node *n);
/* A record's C struct (emit_text.c), and a field of a record as an lvalue: n is r.f. */
const char *emit_record_ctype(Emit *E, const Type *t);
/* Whether key (a type or helper's name) was written before; registers it if not. */
bool emit_registered(Emit *E, const char *key);
const char *emit_field(Emit *E, Node *n);
void emit_binop_text(Emit *E, Node *at, BinOp op, const Type *t, Node *l, Node *r);
void emit_expr(Emit *E, Node *n);
/* The indices of a full subscript as int64 strings (ix), from index nodes or one tuple;
 * nn[i]: index i is known non-negative.  Returns how many. */
int emit_index_strings(Emit *E, NodeList *idx, const char **ix, bool *nn);

/* ---- emit_intrinsic.c: calls of intrinsics (n->intr), atomics, math functions ---- */
void emit_call_intrinsic(Emit *E, Node *n);
/* name(args...) of the math library for type t: the float32 or half name where t is one */
void emit_math_call(Emit *E, const char *name, const Type *t, Node **args, int nargs);

/* ---- emit_stmt.c: statements ---- */
size_t emit_size(const Emit *E);
bool emit_too_big(Emit *E, Span sp);
void emit_block(Emit *E, NodeList *l);
/* A range loop's head (for_stmt's): bounds st<k>/sp<k>/sd<k>, a zero step reported and left
 * by E->leave, then `for (T it<k> = ...; ...; ...) {` with it<k> of the iterable's opty. */
void emit_range_head(Emit *E, Node *n, int k);
/* The entry's xlo_/xhi_, ylo_/yhi_, zlo_/zhi_: the bounds E->plan.guard folds into the grid
 * (all of it when there is no guard), from the entry's parameters p<i>. */
void emit_guard_bounds(Emit *E);

/* ---- emit_assign.c: assignments (S_ASSIGN) and augmented ones (S_AUGASSIGN) ---- */
void emit_assign_stmt(Emit *E, Node *n);
void emit_aug_stmt(Emit *E, Node *n);

#endif
