/* fuse_int.h: what the two halves of kiln.fuse's lowering share: the lowering's
 * state, and the expressions' side (fuse.c) as the statements' side
 * (fuse_stmt.c) calls it.  Calls run one way: fuse_stmt.c -> fuse.c -> fuse_types.c.
 */
#ifndef KILN_FUSE_INT_H
#define KILN_FUSE_INT_H

#include "sema/fuse.h"

typedef struct Binding {
    const char *name;
    FNode *v;
    int obj; /* the array object the name refers to: `t = x` makes t another name of x's
              * object, and `t += y` (in place) changes the value of every name of it */
} Binding;

/* One lowering: the function's names bound so far (assignments rebind). */
typedef struct Fuse {
    Compiler *C;
    const SrcFile *f;
    void *scope;
    FuseIR *ir;
    Binding *env;
    int nenv, capenv;
    int nobj;             /* objects numbered so far */
    const char **pnames;  /* names not bound here (parameters) that were given an object, */
    int npnames, cappnames; /* ... which is their index + 1 */
} Fuse;

/* The typed tree of an expression of the fused function, or NULL after an error. */
FNode *fuse_expr(Fuse *F, const Node *n);
/* a op b with NumPy's types and broadcasting. */
FNode *fuse_bin(Fuse *F, const Node *n, int op, FNode *a, FNode *b);
/* x converted to t (NumPy's astype). */
FNode *fuse_cast(Fuse *F, Span sp, FNode *x, const Type *t);
/* Binds a name to a value for the statements that follow: a new object, or obj (not 0). */
void fuse_bind(Fuse *F, const char *name, FNode *v, int obj);
/* The object a name refers to (a parameter's: its own, numbered on first use). */
int fuse_obj_of(Fuse *F, const char *name);
/* "float32", "Python int": a type as NumPy's messages name it. */
const char *fuse_type_name(const Type *t);

/* ---- fuse_types.c: nodes, shapes, NumPy's typing rules, constants ---- */
static inline bool fuse_is_bool(const Type *t) { return t->kind == TY_BOOL; }
/* A new node of the lowering's arena. */
FNode *fuse_new(Fuse *F, int kind, Span sp);
/* The broadcast of a's and b's shapes into n (ndim, ones, arrays, level); false after an
 * error (shapes that do not broadcast). */
bool fuse_combine(Fuse *F, FNode *n, FNode *a, FNode *b);
/* NumPy's loop dtype for a float function (what) of x; float16 is refused. */
const Type *fuse_float_of(Fuse *F, const Type *x, Span sp, const char *what);
/* The value of a Python int constant (big: past int64), or of a Python number. */
bool fuse_py_int(const FNode *n, int64_t *v, bool *big);
bool fuse_py_num(const FNode *n, double *v);
/* NEP 50's result type of a op b, Python scalars weak; NULL after an error. */
const Type *fuse_promote(Fuse *F, FNode *a, FNode *b);
/* A comparison r of a Python int with an integer array, made exact as NumPy 2 makes it
 * (fuse_types.c says how); false: r is left to the usual promotion. */
bool fuse_weak_int_compare(Fuse *F, FNode *r);
/* Python's errors of Python numbers at n (a division by zero, 0 ** a negative power):
 * reported, false. */
bool fuse_python_divides(Fuse *F, const Node *n, int op, FNode *a, FNode *b);
/* A constant of type t written as text. */
FNode *fuse_constant(Fuse *F, Span sp, const Type *t, const char *text);
/* r = a op b (b NULL: unary) by Python's rules on Python scalars. */
FNode *fuse_python_op(FNode *r, int op, FNode *a, FNode *b, bool cmp);
/* A float's C text (math.nan, math.inf spelled as the kernel language does). */
const char *fuse_float_text(Fuse *F, double v);

#endif
