/* sema_int.h: what sema.c (functions, statements, names) and sema_expr.c
 * (expressions, operators, intrinsics) share.  Not for other layers. */
#ifndef KILN_SEMA_INT_H
#define KILN_SEMA_INT_H

#include "sema.h"

/* Inside `if c:` a conjunct of c like `0 < j` is a fact `j >= 1`, for a
 * variable assigned once (so the fact holds through the body). */
typedef struct Fact {
    const Sym *sym;
    int64_t lo; /* sym >= lo */
} Fact;

typedef struct RCacheEntry {
    void *scope;
    const char *name;
    GVal *v;
} RCacheEntry;

struct Sema {
    Compiler *C;
    FuncInfo *funcs;      /* every function met in this translation */
    int nspecs;
    FuncSpec *cur;        /* the function being typed */
    bool changed;         /* this pass widened a symbol */
    bool final;           /* the pass whose annotations stay */
    int loop_depth;
    int in_loop;          /* loops open around what is typed now, a while's condition too */
    const Node *loop;     /* the innermost of them (S_WHILE or S_FOR), or NULL */
    const Node *discarded; /* the call of the expression statement typed now (its result
                            * is dropped) */
    SemaResult *res;
    PtrVec stack;         /* specs being analysed (recursion check) */
    int rec_calls;        /* recursive calls typed so far (a return that made one: sema.c) */
    int rec_low;          /* the lowest stack index a recursive call found untyped (spec.c) */
    Fact facts[32];       /* facts of the enclosing if conditions */
    int nfacts;
    RCacheEntry *rc;      /* resolved globals */
    int nrc, caprc;
    int depth;            /* expressions and blocks open, across device function calls */
    bool too_deep;        /* that depth's limit was reported */
    PtrVec unroll_why;    /* literal_unroll.c: pairs of a call it could not unroll and why */
    bool mixed_sign;      /* a signed integer met a uint64 and made a float64 (NumPy's rule):
                           * a float index's error says so */
};

/* literal_unroll.c: `for x in literal_unroll(t)` loops of f become one copy of the body
 * per item of t (before its locals are collected); a call of literal_unroll typed
 * anywhere is an error, which says why its loop could not be unrolled */
void literal_unroll_expand(Sema *S, FuncSpec *f);
/* A deep copy of a tree sema has not annotated (literal_unroll.c). */
Node *sema_clone_tree(Compiler *C, const Node *n);
/* nested.c: f's nested defs made device functions, and calls to them given their captured
 * variables; before f's locals are collected. */
void nested_prepare(Sema *S, FuncSpec *f);
/* The TY_FUNC of a nested function the current function calls by name n, an error when n
 * names one elsewhere than a call, or NULL when n names none. */
const Type *nested_value(Sema *S, Node *n);
/* Whether d, a def statement of f's body, is one of its nested functions. */
bool nested_is_def(const FuncSpec *f, const Node *d);
const Type *literal_unroll_misuse(Sema *S, Node *n);

/* for_iter.c: loops over arrays, tuples, enumerate() and zip() become loops over range() */
bool for_iter_needed(const Node *n);
/* Rewrites the loop n; returns it, or, when parts of its iterable are assigned to locals
 * first, the loop inside n, which became `if True:` around those assignments and it. */
Node *for_iter_rewrite(Compiler *C, Node *n);
bool for_iter_check(Sema *S, Node *n);

/* ufunc_stmt.c: np.f(a, b, out) statements, elementwise loops in the calling thread */
/* Makes n's UfuncStmt when n looks like one (by its syntax); the caller collects the
 * temporaries (uf->assigns' targets, uf->elem) as locals. */
void ufunc_stmt_prepare(Compiler *C, Node *n);
/* Types n as that loop when its callee is NumPy's ufunc (true); false: n is typed as
 * the call it is. */
bool sema_ufunc_stmt(Sema *S, Node *n);
/* A ufunc intrinsic (NumPy's, elementwise): its inputs, else 0. */
int ufunc_nin(const Intrinsic *in);
/* syms.c: a new variable of f; the webs of f's names (after its locals are collected),
 * each name whose definitions never meet split into one Sym per web */
Sym *sema_sym_new(Sema *S, FuncSpec *f, const char *name);
void sema_split_webs(Sema *S, FuncSpec *f);
/* unbound.c: before f's last pass, a check before each read that syms.c marked may find
 * its local unassigned (NF_UNBOUND): UnboundLocalError at run time */
void sema_unbound_checks(Sema *S, FuncSpec *f);
/* strings.c: a string literal's type (a constant: TY_STR with its text), or an error */
const Type *sema_str_literal(Sema *S, Node *n);
/* strings.c: when a or b (compare n's operands' types) is a string: n typed into *out
 * (== and != folded to a constant, anything else an error) and true */
bool sema_str_compare(Sema *S, Node *n, const Type *a, const Type *b, const Type **out);
/* libdevice.c: a call of kiln.libdevice.NAME */
const Type *sema_libdevice_call(Sema *S, Node *n, const Intrinsic *in);
/* A ufunc call as a value (n): on arrays it would allocate, with an output array it is
 * a statement.  True after reporting. */
bool sema_ufunc_misuse(Sema *S, Node *n, const Intrinsic *in);
/* numpy.less(a, b) ... of numbers: the comparison a < b, made the call's one bound
 * argument (the emitter writes it in the call's place). */
const Type *sema_ufunc_compare(Sema *S, Node *n, const Intrinsic *in);
/* sema_npufunc.c: numpy.invert, logical_*, fmax/fmin of numbers (n a call of in). */
const Type *sema_npufunc(Sema *S, Node *n, const Intrinsic *in);
/* sema_reduce.c: np.sum(a) ... of a whole array.  sema_reduce_method: for a.sum() ...
 * of an array, puts a first among n's arguments and gives the reduction's intrinsic;
 * NULL when n is no such call. */
const Intrinsic *sema_reduce_method(Sema *S, Node *n);
const Type *sema_reduce(Sema *S, Node *n, const Intrinsic *in);
/* array_view.c: a.view(dtype), n's arguments (a, dtype) as sema_reduce_method put them */
const Type *sema_view(Sema *S, Node *n);

/* sema.c */
Sym *sema_local(Sema *S, const char *name);
void sema_stmt(Sema *S, Node *n);
void sema_block(Sema *S, NodeList *l);
/* Collects f's locals (names assigned in body) before its first pass. */
void sema_collect_locals(Sema *S, FuncSpec *f, NodeList *body);
/* Whether a value of type t can be held in a variable (a scalar, array, record or tuple
 * of those). */
bool sema_storable(const Type *t);
/* Whether a statement list ends in a return on every path (loops that never end count). */
bool sema_always_returns(const NodeList *l);
/* Whether a function may return t on some paths and None on others (Numba's Optional). */
bool sema_optional_of(const Type *t);
/* Types the local t (an E_NAME) as assigned a value of type vt. */
void sema_assign_local(Sema *S, Node *t, const Type *vt);

/* globals.c */
GVal *sema_resolve(Sema *S, void *scope, const char *dotted, Span sp);
const Type *sema_global(Sema *S, Node *n, const GVal *g, const char *what);
const NsRef *sema_ns(Sema *S, const char *name, const Intrinsic *in, void *scope);

/* spec.c */
FuncSpec *sema_call_function(Sema *S, Node *call, FuncInfo *fi, const Type **ret);

/* sema_extern.c: external CUDA device functions (kiln.declare_device) */
FuncInfo *sema_extern_info(Sema *S, const kiln_value *kv);
const Type *sema_call_extern(Sema *S, Node *call, FuncInfo *fi);
/* Adds a CUDA C source to the program's, unless its text is there (copy: into the arena). */
void sema_extern_source(Sema *S, const char *text, size_t len, bool copy);

/* sema_expr.c */
const Type *sema_expr(Sema *S, Node *n);
const Type *sema_binop(Sema *S, Node *at, BinOp op, Node *l, Node *r, const Type *lt,
                       const Type *rt, const Type **opty);
void sema_cond(Sema *S, Node *n);            /* a condition: truthiness of a scalar */
const Type *sema_subscript(Sema *S, Node *n, bool store);
/* A feature that needs a block's threads to run together (shared memory, barriers):
 * on the GPU as any other; on the CPU it puts the kernel in block mode (rt_blocks.h). */
void sema_block_feature(Sema *S, Span sp, const char *what);
/* An atomic whose result is read (n, the call), or a fence (n NULL): in a loop (a while's
 * condition too),
 * a thread may be waiting there for another thread's write (a spin-wait), which the CPU's
 * fibers must let run: SemaResult.spin. */
void sema_spin_point(Sema *S, const Node *n);
void sema_mark_written(Sema *S, Node *array);
uint64_t sema_origins(Sema *S, Node *n);
/* Checks that a value of type vt (node v, may be NULL) can be stored in a
 * place of type dst; reports at sp. */
bool sema_fact_lo(Sema *S, const Node *n, int64_t *lo); /* n is a fact variable >= *lo */
bool sema_check_store(Sema *S, const Type *dst, const Type *vt, Node *v, Span sp);
/* Binds a call's arguments to up to max parameters (names from the intrinsic's
 * `params`); missing optional ones stay NULL. */
bool sema_bind(Sema *S, Node *n, const Intrinsic *in, int min, int max, Node **out);
/* Types the arguments; false if one is an error or not a scalar. */
bool sema_scalar_args(Sema *S, Node **a, int n, const Type **t, bool *unknown);

/* sema_expr.c's helpers that sema_call.c uses */
bool sema_is_weak_int_const(const Node *n, const Type *t); /* a Python int literal */
/* Whether n, of type t, is a Python int whose values kiln knows, *lo to *hi: a constant,
 * or a variable only ever assigned constants (Sym.wk_set). */
bool sema_weak_int_range(const Node *n, const Type *t, int64_t *lo, int64_t *hi);
/* NumPy 2's OverflowError, at compile time: false (said) when n, a Python int of known
 * values, has one that the typed integer type `other` does not hold. */
bool sema_check_weak_fits(Sema *S, Node *n, const Type *nt, const Type *other);
/* Whether n, of type t, is a Python int that may not fit the typed integer type other:
 * its values are unknown (a parameter given one, a counter), or one does not fit. */
bool sema_weak_may_not_fit(const Node *n, const Type *t, const Type *other);
/* The type of a result that holds a Python int and a typed integer, t their promotion:
 * int64 where t is a typed integer narrower than 64 bits that the Python int (n, of type
 * nt) may not fit, as Numba types it; else t. */
const Type *sema_hold_weak_int(const Node *n, const Type *nt, const Type *t);
void sema_set_const_int(Node *n, int64_t v);               /* n is the constant v */
double sema_const_as_double(const Node *n);                /* an NF_CONST scalar's value */
bool sema_check_scalar_operand(Sema *S, Node *n, const Type *t, const char *what);
/* The hint for indexing n, a scalar parameter: what to pass to write through it; else
 * NULL. */
const char *sema_scalar_param_hint(const Node *n, const Type *t);
bool sema_index_type_ok(Sema *S, Node *ix, const Type *t); /* an integer index */

/* sema_call.c: calls of intrinsics */
const Type *sema_call_intrinsic(Sema *S, Node *n, const Intrinsic *in);
const Type *sema_dtype_cast(Sema *S, Node *n, kiln_dtype d); /* float32(x) */
/* kiln.float32x4(...): lanes from scalars and smaller vectors (vector.c) */
const Type *sema_vector_call(Sema *S, Node *n, const Intrinsic *in);
/* alignment= of kiln.local.array/kiln.shared.array: 0 (none), the power of two, or -1
 * after reporting an error (storage_align.c) */
int64_t sema_storage_align(Sema *S, const Intrinsic *in, Node *a);
/* a.copy(): the method rewritten to take a as its argument, then typed (array_copy.c) */
bool sema_copy_method(Sema *S, Node *n);
/* namedtuple classes (namedtuple.c): ns filled from the resolver's "namedtuple:NAME:f1,f2",
 * and a call of one typed */
void sema_namedtuple_class(Compiler *C, NsRef *ns, const char *desc);
const Type *sema_namedtuple_make(Sema *S, Node *n, const NsRef *ns);
const Type *sema_array_copy(Sema *S, Node *n);
/* Methods that are intrinsics: true when the call n is x.bit_count(), a.reshape(...) or
 * g.sync() on a grid group; the call then holds the receiver as its first argument. */
bool sema_int_method(Sema *S, Node *n);
bool sema_array_method(Sema *S, Node *n);
bool sema_group_method(Sema *S, Node *n);
/* f(*t): the call's starred arguments replaced by the tuples' items (star_args.c): 1, or
 * 0 after an error, -1 while a type is not known yet (the call is left as it is). */
int sema_unpack_star(Sema *S, Node *n);
/* t[k]: a new subscript node reading item k of the tuple expression t (star_args.c; the
 * expression is read again, so t must be free of effects) */
Node *sema_tuple_item(Compiler *C, Node *t, int k);
/* kiln.ldcs(a, i), kiln.stcs(a, i, v) ...: loads and stores with a cache hint
 * (cache_hints.c) */
const Type *sema_cache_hint(Sema *S, Node *n, const Intrinsic *in);
/* The text of a string literal (dtype names), or NULL. */
const char *sema_string_text(Sema *S, const Node *n);

/* sema_raise.c: `raise E(...)`, an assert with assrt.exc: checks it, sets assrt.site */
void sema_raise(Sema *S, Node *n);
/* The raise site of `assert test, "text"` (AssertionError("text")), in n->assrt.site. */
void sema_assert_site(Sema *S, Node *n);
/* sema_numba.c: Numba's name of a typed argument ("Tuple(Literal[int](1), int32)"), for
 * a diagnostic's line in Numba's words */
const char *sema_numba_name(Sema *S, const Node *n);

/* sema_print.c: print(...) in kernels */
const Type *sema_print(Sema *S, Node *n);

/* sema_complex.c: complex numbers */
const Type *sema_complex_binop(Sema *S, Node *at, BinOp op, const Type *lt, const Type *rt);
const Type *sema_complex_part(Sema *S, Node *n, const Type *bt); /* x.real, x.imag */
bool sema_complex_method(Sema *S, Node *n); /* n is z.conjugate(): its base becomes its argument */
const Type *sema_complex_call(Sema *S, Node *n, const Intrinsic *in); /* IK_CMATH, IK_COMPLEX */
const Type *sema_bf16_call(Sema *S, Node *n, const Intrinsic *in); /* IK_BF16, IK_BF16CVT */
/* Another intrinsic typed as r that was given a complex argument: r, or an error. */
const Type *sema_complex_args(Sema *S, Node *n, const Intrinsic *in, const Type *r);
const char *sema_dotted(Sema *S, Node *n); /* "a.b.c" for a name/attribute chain */

/* bounds.c: upper bounds of non-negative integers (see its header) */
uint64_t bound_tymax(const Type *t);                 /* an integer or bool type's maximum */
bool bound_nonneg(const Node *n, const Type *t);     /* NF_NONNEG, unsigned or bool */
uint64_t bound_of(const Node *n, const Type *t);     /* the bound of a non-negative n */
void bound_set(Node *n, uint64_t hi);                /* NF_NONNEG with bound hi */
/* Whether l op r (operand types lt, rt, result type t) is non-negative, and
 * its bound; llo: l's least value from a fact, or NULL. */
bool bound_binop(BinOp op, const Node *l, const Node *r, const Type *lt, const Type *rt,
                 const Type *t, const int64_t *llo, uint64_t *hi);
bool bound_cast(const Node *x, const Type *xt, const Type *to, uint64_t *hi); /* x as `to` */
uint64_t bound_sreg(int sub);                        /* kiln.threadIdx.x ... gridDim.z */
uint64_t bound_grid(bool size, int axis);            /* kiln.grid()/gridsize() along axis */
bool bound_elem(const Node *v, int i, uint64_t *hi); /* element i (-1: any) of a tuple */
bool bound_range(const Node *iter, uint64_t *hi);    /* the variable of `for _ in iter` */
uint64_t bound_sym(const Sym *s);                    /* a non-negative variable's bound */
void bound_assign(Sema *S, Sym *s, uint64_t hi);     /* s takes a non-negative value <= hi */

#define IS_ERR(t) ((t)->kind == TY_ERROR)
#define IS_UNKNOWN(t) ((t)->kind == TY_UNKNOWN)

/* cas_retry.c: whether compare-and-swap call cas in loop retries a lock-free update
 * (not a spin point). */
bool sema_cas_retry(const Node *loop, const Node *cas);

#endif
