/* fuse_int.h: what the two halves of kiln.fuse's lowering share: the lowering's
 * state, and the expressions' side (fuse.c) as the statements' side
 * (fuse_stmt.c) calls it.  Calls run one way: fuse_stmt.c -> fuse.c.
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

#endif
