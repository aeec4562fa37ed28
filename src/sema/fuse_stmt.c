/* fuse_stmt.c: kiln.fuse's lowering, the statements: the function as a whole.
 *
 * The body is straight-line code: assignments bind names to typed trees (a user
 * variable becomes a kernel local where it is used; scalars are inlined), an
 * augmented assignment to an array is NumPy's in-place ufunc (the target's
 * dtype and shape), and one return gives the outputs.  Then the kernel's shape
 * is decided (elementwise, rows or whole-array reductions) and what one kernel
 * cannot write is refused: outputs of different dimensions, unreduced values
 * beside reductions, unused reductions.  Expressions are fuse.c's.
 */
#include <string.h>

#include "sema/fuse_int.h"

static FNode *variable(Fuse *F, const char *name, Span sp, FNode *v) {
    if (v->level == FL_SCALAR && v->kind != FN_VAR) {
        /* scalars are inlined (they are cheap and keep weak types weak) */
        return v;
    }
    FNode *r = arena_alloc(&F->C->arena, sizeof *r);
    *r = *v;
    r->sp = sp;
    r->kind = FN_VAR;
    r->a = v;
    r->b = r->c = NULL;
    r->text = name;
    r->arg = F->ir->nvars++;
    r->emitted = 0;
    return r;
}

static bool output(Fuse *F, const Node *n) {
    FuseIR *ir = F->ir;
    const NodeList *vals = NULL;
    NodeList one = {(Node **)&n, 1};
    if (n->kind == E_TUPLE) {
        vals = &n->tuple;
        ir->tuple = true;
    } else {
        vals = &one;
    }
    if (vals->n > KILN_FUSE_MAX_OUTPUTS) {
        error_at(F->C, n->sp, NULL, "kiln.fuse returns at most %d values",
                 KILN_FUSE_MAX_OUTPUTS);
        return false;
    }
    for (int i = 0; i < vals->n; i++) {
        FNode *v = fuse_expr(F, vals->v[i]);
        if (!v) return false;
        if (v->level == FL_SCALAR) {
            error_at(F->C, vals->v[i]->sp, "compute it outside the fused function",
                     "kiln.fuse returns arrays; this value depends on no array argument");
            return false;
        }
        ir->outs[ir->nout++] = v;
    }
    return true;
}

/* NumPy's kinds in the order same_kind casting allows: bool, unsigned, signed, float. */
static int kind_rank(const Type *t) {
    return t->kind == TY_BOOL ? 0 : t->kind == TY_FLOAT ? 3 : ty_is_signed(t) ? 2 : 1;
}

/* a op= b on an array is NumPy's in-place ufunc: the result keeps a's dtype (a
 * same_kind cast) and a's shape (b may not enlarge it). */
static FNode *in_place(Fuse *F, const Node *s, FNode *a, FNode *v) {
    if (v->ndim > a->ndim || (a->ones & ~v->ones)) {
        error_at(F->C, s->sp, "write x = x + y", "non-broadcastable output operand: the "
                 "in-place result would be larger than the target");
        return NULL;
    }
    if (v->t->weak || ty_equal(v->t, a->t)) return v;
    if (kind_rank(v->t) > kind_rank(a->t)) {
        error_at(F->C, s->sp, "write x = x + y, or cast with .astype",
                 "Cannot cast ufunc output from dtype('%s') to dtype('%s') with casting rule "
                 "'same_kind'", fuse_type_name(v->t), fuse_type_name(a->t));
        return NULL;
    }
    return fuse_cast(F, s->sp, v, a->t);
}

static void mark_used(FuseIR *ir, const FNode *n) {
    for (int r = 0; r < ir->nred; r++)
        if (n->reds >> r & 1) ir->red[r].used = true;
}

static int lower_body(Fuse *F, const Node *def) {
    FuseIR *ir = F->ir;
    const NodeList *body = &def->def.body;
    bool returned = false;
    for (int i = 0; i < body->n; i++) {
        const Node *s = body->v[i];
        if (returned) {
            error_at(F->C, s->sp, NULL, "code after return");
            return -1;
        }
        switch (s->kind) {
        case S_EXPR:
            if (s->flags & NF_DOCSTRING || s->expr->kind == E_STR) continue;
            error_at(F->C, s->sp, "assign it to a name, or return it",
                     "kiln.fuse takes assignments and one return; this expression is unused");
            return -1;
        case S_PASS: continue;
        case S_ASSIGN: {
            if (s->assign.targets.n != 1 || s->assign.targets.v[0]->kind != E_NAME) {
                error_at(F->C, s->sp, "assign one name at a time",
                         "kiln.fuse takes assignments to one name (no unpacking, subscripts "
                         "or chains)");
                return -1;
            }
            FNode *v = fuse_expr(F, s->assign.value);
            if (!v) return -1;
            const char *nm = s->assign.targets.v[0]->name.id;
            /* `t = x`: another name of x's array (NumPy binds, it does not copy) */
            const Node *src = s->assign.value;
            int obj = src->kind == E_NAME && v->level != FL_SCALAR && !v->npscalar
                          ? fuse_obj_of(F, src->name.id)
                          : 0;
            fuse_bind(F, nm, variable(F, nm, s->assign.targets.v[0]->sp, v), obj);
            continue;
        }
        case S_AUGASSIGN: {
            if (s->aug.target->kind != E_NAME) {
                error_at(F->C, s->sp, NULL, "kiln.fuse cannot fuse a store into an array");
                return -1;
            }
            FNode *a = fuse_expr(F, s->aug.target);
            FNode *b = a ? fuse_expr(F, s->aug.value) : NULL;
            FNode *v = b ? fuse_bin(F, s, s->op, a, b) : NULL;
            if (!v) return -1;
            const char *nm = s->aug.target->name.id;
            /* in place on an array (0-d too); a NumPy scalar is rebound, as in NumPy */
            if (a->level == FL_SCALAR || a->npscalar) {
                fuse_bind(F, nm, variable(F, nm, s->aug.target->sp, v), 0);
                continue;
            }
            if (!(v = in_place(F, s, a, v))) return -1;
            v->npscalar = false; /* the array itself, updated (0-d too) */
            /* every name of the array sees the new values (`t = x; t += y` changes x) */
            int obj = fuse_obj_of(F, nm);
            int n0 = F->nenv;
            for (int k = n0 - 1; k >= -F->npnames; k--) {
                const char *other = k >= 0 ? F->env[k].name : F->pnames[-k - 1];
                if (strcmp(other, nm) == 0 || fuse_obj_of(F, other) != obj) continue;
                bool seen = false; /* rebound already in this loop */
                for (int j = n0; j < F->nenv; j++) seen |= strcmp(F->env[j].name, other) == 0;
                if (!seen) fuse_bind(F, other, variable(F, other, s->aug.target->sp, v), obj);
            }
            fuse_bind(F, nm, variable(F, nm, s->aug.target->sp, v), obj);
            continue;
        }
        case S_RETURN:
            if (!s->ret.value) {
                error_at(F->C, s->sp, NULL, "a fused function returns its result");
                return -1;
            }
            if (!output(F, s->ret.value)) return -1;
            returned = true;
            continue;
        case S_FOR:
        case S_WHILE:
            error_at(F->C, s->sp, "write the loop as a @kiln.jit kernel",
                     "kiln.fuse cannot fuse a Python loop: a fused function is straight-line "
                     "array code");
            return -1;
        case S_IF:
            error_at(F->C, s->sp, "use np.where(condition, x, y)",
                     "kiln.fuse cannot fuse an if statement");
            return -1;
        default:
            error_at(F->C, s->sp, NULL, "kiln.fuse cannot fuse this statement");
            return -1;
        }
    }
    if (!returned) {
        error_at(F->C, def->def.name_sp, "end it with return", "a fused function returns its result");
        return -1;
    }
    /* the shape of the call: elementwise, rows, or whole arrays */
    ir->kind = KILN_FUSE_MAP;
    if (ir->nred) {
        FRedInfo *r = &ir->red[0];
        ir->kind = KILN_FUSE_ALL;
        for (int i = 0; i < ir->nred; i++)
            if (ir->red[i].rows && ir->red[i].arg->ndim > 1) ir->kind = KILN_FUSE_ROWS;
        ir->keepdims = r->keepdims;
    }
    for (int i = 0; i < ir->nout; i++) {
        FNode *o = ir->outs[i];
        if (ir->nred && o->level != FL_POST) {
            error_at(F->C, o->sp, "return the reduced values only, or write two functions",
                     "kiln.fuse returns values of one shape; this one is not reduced like "
                     "the function's reductions");
            return -1;
        }
        if (i && o->ndim != ir->ndim_out) {
            error_at(F->C, o->sp, "write two functions", "kiln.fuse returns values of one "
                     "shape; this one has %d dimensions, the first %d", o->ndim, ir->ndim_out);
            return -1;
        }
        ir->ndim_out = o->ndim;
        mark_used(ir, o);
        if (!o->t || o->t->weak) {
            error_at(F->C, o->sp, NULL, "kiln.fuse cannot type this output");
            return -1;
        }
    }
    for (int r = 0; r < ir->nred; r++)
        if (!ir->red[r].used) {
            error_at(F->C, ir->red[r].sp, "return it, or remove it",
                     "kiln.fuse: no output uses this reduction");
            return -1;
        }
    return 0;
}

int fuse_lower(Compiler *C, const SrcFile *f, void *scope, const kiln_fuse_arg *args,
               int nargs, FuseIR *ir) {
    Node *def = parse_function(C, f);
    if (!def) return -1;
    Fuse F = {.C = C, .f = f, .scope = scope, .ir = ir};
    ir->name = def->def.name;
    ir->args = args;
    ir->nargs = nargs;
    if (def->def.nparams != nargs) {
        error_at(C, def->def.name_sp, NULL, "'%s' takes %d arguments but %d were given",
                 def->def.name, def->def.nparams, nargs);
        return -1;
    }
    ir->pnames = arena_alloc(&C->arena, sizeof(char *) * (size_t)(nargs + 1));
    for (int i = 0; i < nargs; i++) {
        ir->pnames[i] = def->def.params[i].name;
        if (def->def.params[i].deflt) {
            error_at(C, def->def.params[i].sp, NULL, "kiln.fuse takes no default values");
            return -1;
        }
        if (args[i].dtype == KILN_COMPLEX64 || args[i].dtype == KILN_COMPLEX128) {
            error_at(C, def->def.params[i].sp,
                     "write the loop as a @kiln.jit kernel, which takes complex arrays",
                     "'%s' is %s: kiln.fuse does not fuse complex values yet",
                     def->def.params[i].name, kiln_dtype_name((kiln_dtype)args[i].dtype));
            return -1;
        }
    }
    return lower_body(&F, def);
}
