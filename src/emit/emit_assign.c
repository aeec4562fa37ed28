/* emit_assign.c: assignments and augmented assignments.
 *
 * A store goes through one of three writers: a name (wrapped for an optional, a
 * name that may hold None), an element or field (float16 narrowed from the rounded
 * value, and under debug a failed index check leaves before the store), and a record
 * or subarray field, copied as bytes or element by element (compound_store).  A string
 * constant is stored as its bytes (chars.h).  `a[i] op= v` computes the element's
 * address once.  Only emit_stmt.c calls in here.
 */
#include "sema/chars.h"
#include "emit_int.h"

/* Opens a store into an element of type t: float16 is stored as its bits, narrowed
 * from the rounded value (rt_half.h); close_store ends it. */
static bool open_store(Emit *E, const Type *t) {
    char k = emit_narrow(t);
    if (!k) return false;
    E->half = true;
    P("kiln_f2%c(", k);
    return true;
}

static void close_store(Emit *E, bool open) {
    if (open) PS(")");
}

/* A store of text val (of type vt) into a record or a subarray field: a record's bytes
 * (`a[i] = r`), or a field's elements from an array (`r.h = x`) read bounds-checked
 * along the field's shape. */
static bool compound_store(Emit *E, Node *t, const char *val, const Type *vt) {
    const Type *tt = t->ty;
    if (tt->kind == TY_RECORD) {
        /* bytes, not a struct assignment: the fields were written through pointers of
         * their own types, which a struct access may be reordered around (C's aliasing
         * rules: gcc -O2 moved a float64 store past the copy) */
        emit_indent(E);
        P("memcpy(&(%s), (%s), sizeof(%s));\n", emit_element(E, t), val, emit_record_ctype(E, tt));
        return true;
    }
    if (t->kind != E_ATTR || tt->kind != TY_ARRAY) return false;
    const kiln_field *f = ty_field(t->attr.base->ty, t->attr.attr);
    int k = E->tmp++, line = emit_loc(E, t->sp);
    emit_indent(E);
    P("{ %s d%d = %s; %s s%d = %s;\n", emit_ctype(E, tt), k, emit_expr_str(E, t, NULL),
      emit_ctype(E, vt), k, val);
    E->ind++;
    for (int d = 0; d < f->ndim; d++) {
        emit_indent(E);
        P("for (i64 k%d_%d = 0; k%d_%d < %lldLL; k%d_%d++)\n", k, d, k, d,
          (long long)f->shape[d], k, d);
    }
    emit_indent(E);
    P("    d%d.data[0", k);
    for (int d = 0; d < f->ndim; d++) P(" + k%d_%d * d%d.strides[%d]", k, d, k, d);
    PS("] = ");
    bool h = open_store(E, tt->elem);
    Buf src;
    buf_init_arena(&src, &E->C->arena);
    buf_printf(&src, "s%d.data[0", k);
    for (int d = 0; d < f->ndim; d++)
        buf_printf(&src, " + kiln_chk(E_, k%d_%d, s%d.shape[%d], %d, %d) * s%d.strides[%d]", k,
                   d, k, d, d, line, k, d);
    buf_puts(&src, "]");
    emit_convert(E, vt->elem, tt->elem, emit_load(E, vt->elem, src.p));
    close_store(E, h);
    PS(";\n");
    E->ind--;
    emit_indent(E);
    PS("}\n");
    return true;
}

static void store_target(Emit *E, Node *t, const char *val, const Type *vt) {
    if ((t->kind == E_SUBSCRIPT || t->kind == E_ATTR) && compound_store(E, t, val, vt)) return;
    if (t->kind == E_NAME) {
        emit_indent(E);
        P("%s = ", emit_sym_name(E, t->sym));
        if (t->sym->maybe_none) P("kopt_%s(", emit_opt_ctype(E, t->sym->ty));
        emit_convert(E, vt, t->sym->ty, val);
        PS(t->sym->maybe_none ? ");\n" : ";\n");
    } else if (t->kind == E_SUBSCRIPT || t->kind == E_ATTR) {
        emit_indent(E);
        int k = -1;
        if (E->debug) { /* a failed index check leaves before the store (debug_stop) */
            k = E->tmp++;
            P("{ %s *pt%d = &%s; if (E_->code) %s *pt%d = ", emit_elem_ctype(E, t->ty), k,
              emit_element(E, t), E->leave, k);
        } else {
            P("%s = ", emit_element(E, t));
        }
        bool h = open_store(E, t->ty);
        emit_convert(E, vt, t->ty, val);
        close_store(E, h);
        PS(k >= 0 ? "; }\n" : ";\n");
    } else if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++)
            store_target(E, t->tuple.v[i], arena_printf(&E->C->arena, "(%s).f%d", val, i),
                         vt->elems[i]);
    }
}

/* A string constant into a string field or element (chars.h): its bytes, the field's
 * whole width, copied from a literal of octal escapes. */
static void chars_store(Emit *E, Node *t, Node *v) {
    const kiln_field *f = chars_field(t->ty);
    int64_t w = chars_width(f);
    unsigned char *bytes = arena_alloc(&E->C->arena, (size_t)(w ? w : 1));
    chars_encode(v, v->ty, f, bytes); /* sema checked it */
    emit_indent(E);
    if (t->ty->kind == TY_RECORD) /* a[i]: the element itself */
        P("memcpy((unsigned char *)&(%s) + %lld, \"", emit_element(E, t), (long long)f->offset);
    else /* r.y: the field of the record r points to */
        P("memcpy((unsigned char *)(%s) + %lld, \"", emit_expr_str(E, t->attr.base, NULL),
          (long long)f->offset);
    for (int64_t i = 0; i < w; i++) P("\\%03o", bytes[i]);
    P("\", %lld);\n", (long long)w);
}

/* Whether every target of assignment n is a LANE_RECOMP local (block lanes), which has
 * no variable to store into, or the start of a grid-stride while run as a lane for loop,
 * which that loop writes (emit_stmt.c). */
static bool recomputed(Emit *E, Node *n) {
    const LanePlan *L = &E->plan.lanes;
    if (!E->lanes || !L->block || n->assign.targets.n != 1) return false;
    Node *t = n->assign.targets.v[0];
    int m = t->kind == E_TUPLE ? t->tuple.n : 1;
    for (int i = 0; i < m; i++) {
        Node *x = t->kind == E_TUPLE ? t->tuple.v[i] : t;
        if (x->kind != E_NAME || !x->sym) return false;
        int c = L->cls[x->sym->id];
        if (c != LANE_RECOMP && !(c == LANE_COORD && L->wdef && L->wdef[x->sym->id] == n->assign.value))
            return false;
    }
    return true;
}

void emit_assign_stmt(Emit *E, Node *n) {
    Node *v = n->assign.value;
    NodeList *ts = &n->assign.targets;
    if (recomputed(E, n)) return;
    if (v->ty && v->ty->kind == TY_STR) {
        /* a string constant: its variables have no code (strings.c); sema allowed it
         * otherwise only into string fields and elements, as a literal */
        for (int i = 0; i < ts->n; i++)
            if (ts->v[i]->kind != E_NAME) chars_store(E, ts->v[i], v);
        return;
    }
    /* the common case: one simple target */
    if (ts->n == 1 && ts->v[0]->kind != E_TUPLE) {
        Node *t = ts->v[0];
        if (t->kind != E_NAME && (t->ty->kind == TY_RECORD || t->ty->kind == TY_ARRAY)) {
            /* a record or a subarray field: the value first, as Python evaluates it */
            int k = E->tmp++;
            emit_indent(E);
            P("{ %s t%d = ", emit_ctype(E, v->ty), k);
            emit_expr(E, v);
            PS(";\n");
            E->ind++;
            compound_store(E, t, arena_printf(&E->C->arena, "t%d", k), v->ty);
            E->ind--;
            emit_indent(E);
            PS("}\n");
            return;
        }
        emit_indent(E);
        if (t->kind == E_NAME && t->sym->maybe_none) {
            P("%s = ", emit_sym_name(E, t->sym));
            emit_opt_of(E, v, t->sym->ty);
        } else if (t->kind == E_NAME) {
            P("%s = ", emit_sym_name(E, t->sym));
            emit_expr_as(E, v, t->sym->ty);
        } else {
            if (!plan_pure(v) || E->debug) {
                /* Python evaluates the value before the target's index; with debug=True a
                 * runtime error in the value leaves before the store, as Numba's does */
                int k = E->tmp++;
                P("{ %s t%d = ", emit_ctype(E, v->ty), k);
                emit_expr(E, v);
                if (E->debug) /* checked: the value, then the index, then the store */
                    P("; if (E_->code) %s %s *pt%d = &%s; if (E_->code) %s *pt%d = ", E->leave,
                      emit_elem_ctype(E, t->ty), k, emit_element(E, t), E->leave, k);
                else P("; %s = ", emit_element(E, t));
                bool h = open_store(E, t->ty);
                emit_convert(E, v->ty, t->ty, arena_printf(&E->C->arena, "t%d", k));
                close_store(E, h);
                PS("; }\n");
                return;
            }
            P("%s = ", emit_element(E, t));
            bool h = open_store(E, t->ty);
            emit_expr_as(E, v, t->ty);
            close_store(E, h);
        }
        PS(";\n");
        return;
    }
    /* a, b = b, a: every value first, then the targets left to right */
    emit_indent(E);
    PS("{\n");
    E->ind++;
    if (v->kind == E_TUPLE && ts->n == 1) {
        Node *t = ts->v[0];
        int base = E->tmp;
        E->tmp += v->tuple.n;
        for (int i = 0; i < v->tuple.n; i++) {
            emit_indent(E);
            Node *ti = t->tuple.v[i];
            if (ti->kind == E_NAME && ti->sym->maybe_none) { /* kept whole (emit_opt.c) */
                P("%s t%d = ", emit_opt_ctype(E, ti->sym->ty), base + i);
                emit_opt_of(E, v->tuple.v[i], ti->sym->ty);
                PS(";\n");
                continue;
            }
            P("%s t%d = ", emit_ctype(E, v->tuple.v[i]->ty), base + i);
            emit_expr(E, v->tuple.v[i]);
            PS(";\n");
        }
        for (int i = 0; i < t->tuple.n; i++) {
            Node *ti = t->tuple.v[i];
            if (ti->kind == E_NAME && ti->sym->maybe_none) {
                emit_indent(E);
                P("%s = t%d;\n", emit_sym_name(E, ti->sym), base + i);
                continue;
            }
            store_target(E, ti, arena_printf(&E->C->arena, "t%d", base + i), v->tuple.v[i]->ty);
        }
    } else {
        int k = E->tmp++;
        emit_indent(E);
        P("%s t%d = ", emit_ctype(E, v->ty), k);
        emit_expr(E, v);
        PS(";\n");
        for (int i = 0; i < ts->n; i++)
            store_target(E, ts->v[i], arena_printf(&E->C->arena, "t%d", k), v->ty);
    }
    E->ind--;
    emit_indent(E);
    PS("}\n");
}

void emit_aug_stmt(Emit *E, Node *n) {
    Node *t = n->aug.target;
    Node *v = n->aug.value;
    emit_indent(E);
    if (t->kind == E_NAME) {
        P("%s = ", emit_sym_name(E, t->sym));
        if (t->sym->maybe_none) P("kopt_%s(", emit_opt_ctype(E, t->sym->ty));
        Buf tmp, *saved = E->o;
        buf_init_arena(&tmp, &E->C->arena);
        E->o = &tmp;
        emit_binop_text(E, n, (BinOp)n->op, n->opty, t, v);
        E->o = saved;
        emit_convert(E, n->ty, t->sym->ty, tmp.p ? tmp.p : "0");
        buf_free(&tmp);
        PS(t->sym->maybe_none ? ");\n" : ";\n");
        return;
    }
    /* a[i] op= v: the element's address is computed once */
    int k = E->tmp++;
    P("{ %s *p%d = &%s; ", emit_elem_ctype(E, t->ty), k, emit_element(E, t));
    Buf tmp, *saved = E->o;
    buf_init_arena(&tmp, &E->C->arena);
    E->o = &tmp;
    E->subst = t;
    E->subst_text = emit_load(E, t->ty, arena_printf(&E->C->arena, "(*p%d)", k));
    emit_binop_text(E, n, (BinOp)n->op, n->opty, t, v);
    E->subst = NULL;
    E->o = saved;
    const char *val = tmp.p ? tmp.p : "0";
    if (E->debug) { /* a failed index or value check leaves before the store (debug_stop) */
        P("if (E_->code) %s %s v%d = %s; if (E_->code) %s ", E->leave, emit_ctype(E, n->ty), k,
          val, E->leave);
        val = arena_printf(&E->C->arena, "v%d", k);
    }
    P("*p%d = ", k);
    bool h = open_store(E, t->ty);
    emit_convert(E, n->ty, t->ty, val);
    close_store(E, h);
    buf_free(&tmp);
    PS("; }\n");
}
