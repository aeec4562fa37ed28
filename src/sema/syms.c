/* syms.c: a function's variables, and the webs that split one name into several.
 *
 * Python lets a name hold values of different types at different points:
 * `arr = arr.reshape(6)` after `arr` was 2-D, a loop variable rebound to an array.
 * Numba types each definition separately (SSA); kiln types a variable, so a name whose
 * definitions never meet becomes several variables.  A use joins every definition that
 * may reach it (reaching definitions over the structured body, loops to a fixed point,
 * break/continue/return followed); the definitions a use joins form one web, and each
 * web of a name is its own Sym (the same name in messages, its own C variable).  The
 * analysis over-approximates what reaches a use, so a split never separates definitions
 * a use can see: where a function has something it does not follow (a nested def, a
 * NumPy ufunc statement), the names involved stay whole.
 */
#include <stdlib.h>
#include <string.h>

#include "sema_int.h"

Sym *sema_sym_new(Sema *S, FuncSpec *f, const char *name) {
    Sym *s = arena_alloc(&S->C->arena, sizeof *s);
    s->name = name;
    s->ty = &ty_unknown;
    s->param = -1;
    s->id = f->nsyms;
    f->syms = arena_grow(&S->C->arena, f->syms, &f->capsyms, f->nsyms + 1, sizeof(Sym *));
    f->syms[f->nsyms++] = s;
    return s;
}

/* Above this many words of reaching-definition state, names are left whole (a function
 * of thousands of assignments to hundreds of names): the analysis is an optimisation of
 * what compiles, never needed for correctness. */
enum { WEBS_MAX_STATE_WORDS = 1 << 16 };
/* Statements walked, loops' repeated rounds included, before names are left whole: nested
 * loops walk their bodies once per round of each enclosing loop, which a hostile nesting
 * could make exponential. */
enum { WEBS_MAX_STEPS = 1 << 18 };

typedef struct Def {
    Node *node; /* the E_NAME target; NULL for a parameter's value at entry */
    int var;
    bool unset; /* a local's no-value at entry: in no web; a use it reaches may find the
                 * variable unassigned (NF_UNBOUND, unbound.c) */
} Def;

typedef struct Use {
    Node *node;
    int var;
    int rep; /* a definition that reaches it, or -1 */
    bool unset; /* the local may be unassigned here */
} Use;

typedef struct Webs {
    Compiler *C;
    FuncSpec *f;
    int nv, nd, nu, capd, capu, W;
    Def *defs;
    Use *uses;
    int *parent;   /* union-find over definitions */
    bool *nosplit; /* per variable */
    bool give_up;
    bool whole; /* a nested def reads names of this function: none splits (the
                 * reads that may find no value are still marked; its calls pass
                 * the captured variables, nested.c, where this walk sees them) */
    long steps;
    /* the loops being walked: their break and continue states */
    uint64_t *brk[64], *cont[64];
    int depth;
} Webs;

static int var_of(Webs *w, const char *name) {
    for (int i = 0; i < w->nv; i++) {
        const Sym *s = w->f->syms[i];
        if ((s->is_local || s->param >= 0) && strcmp(s->name, name) == 0) return i;
    }
    return -1;
}

static int find(Webs *w, int d) {
    while (w->parent[d] != d) d = w->parent[d] = w->parent[w->parent[d]];
    return d;
}

static void join(Webs *w, int a, int b) {
    a = find(w, a);
    b = find(w, b);
    if (a != b) w->parent[a < b ? b : a] = a < b ? a : b;
}

/* ---- the state: per variable, a bitset of the definitions that may reach; an empty
 * state (all zero, dead) after return/break/continue joins as nothing ---- */

/* States live on the heap, freed as the walk leaves them (at most a few per loop level);
 * NULL (out of memory) gives up, and every user of a state checks give_up first. */
static uint64_t *st_new(Webs *w) {
    uint64_t *s = w->give_up ? NULL : calloc((size_t)(w->nv * w->W + 1), sizeof(uint64_t));
    if (!s) w->give_up = true;
    return s;
}

static uint64_t *st_copy(Webs *w, const uint64_t *s) {
    uint64_t *c = st_new(w);
    if (c) memcpy(c, s, sizeof(uint64_t) * (size_t)(w->nv * w->W + 1));
    return c;
}

/* the last word: 1 when the point is reachable */
#define LIVE(w, s) ((s)[(w)->nv * (w)->W])

static bool st_join(Webs *w, uint64_t *into, const uint64_t *s) {
    if (!LIVE(w, s)) return false;
    bool changed = !LIVE(w, into);
    for (int i = 0; i < w->nv * w->W + 1; i++) {
        uint64_t v = into[i] | s[i];
        changed |= v != into[i];
        into[i] = v;
    }
    return changed;
}

static void st_kill(Webs *w, uint64_t *s) { memset(s, 0, sizeof(uint64_t) * (size_t)(w->nv * w->W + 1)); }

/* ---- definitions and uses ---- */

static int def_add(Webs *w, Node *node, int var) {
    w->defs = arena_grow(&w->C->arena, w->defs, &w->capd, w->nd + 1, sizeof(Def));
    w->defs[w->nd].node = node;
    w->defs[w->nd].var = var;
    w->defs[w->nd].unset = false;
    return w->nd++;
}

/* pass 1: every definition gets its number (the bitsets' size) */
static void mark_nosplit(Webs *w, Node *n);

static void number_target(Webs *w, Node *t) {
    if (!t) return;
    if (t->kind == E_NAME) {
        int v = var_of(w, t->name.id);
        if (v >= 0) t->id = def_add(w, t, v);
    } else if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++) number_target(w, t->tuple.v[i]);
    }
}

static void number(Webs *w, NodeList *body) {
    for (int i = 0; i < body->n && !w->give_up; i++) {
        Node *n = body->v[i];
        switch (n->kind) {
        case S_ASSIGN:
            for (int j = 0; j < n->assign.targets.n; j++) number_target(w, n->assign.targets.v[j]);
            break;
        case S_AUGASSIGN: number_target(w, n->aug.target); break;
        case S_FOR:
            number_target(w, n->fors.target);
            number(w, &n->fors.body);
            number(w, &n->fors.orelse);
            break;
        case S_IF: /* an elif chain with a loop: a chain of any length costs no stack */
            for (Node *c = n; c; c = elif_of(c)) {
                number(w, &c->ifs.body);
                if (!elif_of(c)) number(w, &c->ifs.orelse);
            }
            break;
        case S_WHILE:
            number(w, &n->ifs.body);
            number(w, &n->ifs.orelse);
            break;
        case S_DEF: w->whole = true; break; /* its captured names: nested.c */
        default: break;
        }
    }
}

static void use_expr(Webs *w, Node *n, uint64_t *s) {
    if (!n) return;
    switch (n->kind) {
    case E_NAME: {
        int v = var_of(w, n->name.id);
        if (v < 0) return;
        int rep = -1;
        bool unset = false;
        const uint64_t *bits = s + (size_t)v * (size_t)w->W;
        for (int k = 0; k < w->W; k++)
            for (uint64_t b = bits[k]; b; b &= b - 1) {
                int d = k * 64 + __builtin_ctzll(b);
                if (w->defs[d].unset) unset = true;
                else if (rep < 0) rep = d;
                else join(w, rep, d);
            }
        w->uses = arena_grow(&w->C->arena, w->uses, &w->capu, w->nu + 1, sizeof(Use));
        w->uses[w->nu++] = (Use){n, v, rep, unset};
        return;
    }
    case E_BINOP:
    case E_BOOLOP:
        use_expr(w, n->bin.l, s);
        use_expr(w, n->bin.r, s);
        return;
    case E_UNARY: use_expr(w, n->un.x, s); return;
    case E_COMPARE:
        for (int i = 0; i < n->cmp.operands.n; i++) use_expr(w, n->cmp.operands.v[i], s);
        return;
    case E_IFEXP:
        use_expr(w, n->ifexp.cond, s);
        use_expr(w, n->ifexp.then, s);
        use_expr(w, n->ifexp.orelse, s);
        return;
    case E_CALL:
        use_expr(w, n->call.fn, s);
        for (int i = 0; i < n->call.args.n; i++) use_expr(w, n->call.args.v[i], s);
        for (int i = 0; i < n->call.kwvals.n; i++) use_expr(w, n->call.kwvals.v[i], s);
        return;
    case E_SUBSCRIPT:
        use_expr(w, n->sub.base, s);
        for (int i = 0; i < n->sub.idx.n; i++) use_expr(w, n->sub.idx.v[i], s);
        return;
    case E_ATTR: use_expr(w, n->attr.base, s); return;
    case E_TUPLE:
        for (int i = 0; i < n->tuple.n; i++) use_expr(w, n->tuple.v[i], s);
        return;
    case E_SLICE:
        use_expr(w, n->slice.lo, s);
        use_expr(w, n->slice.hi, s);
        use_expr(w, n->slice.step, s);
        return;
    case E_INT:
    case E_FLOAT:
    case E_BOOL:
    case E_NONE:
    case E_STR:
    case E_IMAG: return;
    default: w->give_up = true; return; /* a statement where an expression belongs */
    }
}

/* an assignment's target: subscripts and attributes use their base, names define */
static void def_target(Webs *w, Node *t, uint64_t *s) {
    if (t->kind == E_NAME) {
        int v = var_of(w, t->name.id);
        if (v < 0) return;
        uint64_t *bits = s + (size_t)v * (size_t)w->W;
        memset(bits, 0, sizeof(uint64_t) * (size_t)w->W);
        bits[t->id / 64] |= (uint64_t)1 << (t->id % 64);
    } else if (t->kind == E_TUPLE) {
        for (int i = 0; i < t->tuple.n; i++) def_target(w, t->tuple.v[i], s);
    } else {
        use_expr(w, t, s);
    }
}

static void walk(Webs *w, NodeList *body, uint64_t *s);

/* a loop: the head's state to a fixed point; `first` runs at the head (a while's
 * condition, a for's target), the exit leaves from the head */
static void loop(Webs *w, Node *n, uint64_t *s) {
    if (w->depth == (int)COUNTOF(w->brk)) {
        w->give_up = true;
        return;
    }
    bool is_for = n->kind == S_FOR;
    NodeList *body = is_for ? &n->fors.body : &n->ifs.body;
    NodeList *orelse = is_for ? &n->fors.orelse : &n->ifs.orelse;
    if (is_for) use_expr(w, n->fors.iter, s); /* evaluated once, before the loop */
    uint64_t *head = st_copy(w, s), *brk = st_new(w);
    while (!w->give_up) { /* bitsets only grow: a fixed point within nv * nd rounds */
        uint64_t *cur = st_copy(w, head), *cont = st_new(w);
        if (!w->give_up) {
            if (!is_for) use_expr(w, n->ifs.cond, cur);
            else def_target(w, n->fors.target, cur);
            w->brk[w->depth] = brk;
            w->cont[w->depth] = cont;
            w->depth++;
            walk(w, body, cur);
            w->depth--;
        }
        bool grew = false; /* both joins run: no short circuit */
        if (!w->give_up) {
            grew = st_join(w, head, cur);
            grew = st_join(w, head, cont) || grew;
        }
        free(cur);
        free(cont);
        if (!grew) break;
    }
    if (!w->give_up) {
        /* leaving at the head (the condition false, the iterator done), then the else */
        memcpy(s, head, sizeof(uint64_t) * (size_t)(w->nv * w->W + 1));
        if (!is_for) use_expr(w, n->ifs.cond, s);
        walk(w, orelse, s);
        st_join(w, s, brk);
    }
    free(head);
    free(brk);
}

static void walk(Webs *w, NodeList *body, uint64_t *s) {
    for (int i = 0; i < body->n && !w->give_up; i++) {
        Node *n = body->v[i];
        if (++w->steps > WEBS_MAX_STEPS) {
            w->give_up = true;
            return;
        }
        switch (n->kind) {
        case S_EXPR:
            if (n->uf) mark_nosplit(w, n);
            use_expr(w, n->expr, s);
            break;
        case S_ASSIGN:
            use_expr(w, n->assign.value, s);
            for (int j = 0; j < n->assign.targets.n; j++) def_target(w, n->assign.targets.v[j], s);
            break;
        case S_AUGASSIGN:
            use_expr(w, n->aug.value, s);
            use_expr(w, n->aug.target, s);
            /* `v += x` updates v where it is: the new value is in the old one's web.  Where
             * no assignment reaches it (v unassigned on every path here: unbound.c raises
             * before it), it joins the variable's first web, whose type it reads, as
             * Numba's SSA types an undefined value as the variable's other definitions */
            if (n->aug.target->kind == E_NAME && w->nu && w->uses[w->nu - 1].node == n->aug.target) {
                Use *us = &w->uses[w->nu - 1];
                for (int d = 0; us->rep < 0 && d < w->nd; d++)
                    if (w->defs[d].var == us->var && !w->defs[d].unset && d != n->aug.target->id)
                        us->rep = d;
                if (us->rep >= 0) join(w, us->rep, n->aug.target->id);
            }
            def_target(w, n->aug.target, s);
            break;
        case S_IF: { /* the branches' ends joined in `ends`; elif chains with a loop */
            uint64_t *ends = st_new(w);
            for (Node *c = n; c && !w->give_up; c = elif_of(c)) {
                use_expr(w, c->ifs.cond, s);
                uint64_t *e = st_copy(w, s); /* where the condition is false */
                if (!e) break;
                walk(w, &c->ifs.body, s);
                st_join(w, ends, s);
                if (!elif_of(c)) walk(w, &c->ifs.orelse, e);
                memcpy(s, e, sizeof(uint64_t) * (size_t)(w->nv * w->W + 1));
                free(e);
            }
            if (ends) {
                st_join(w, ends, s); /* the last else's end */
                memcpy(s, ends, sizeof(uint64_t) * (size_t)(w->nv * w->W + 1));
            }
            free(ends);
            break;
        }
        case S_FOR:
            /* a rewritten loop (for_iter.c) shares its iterable's nodes between the
             * range() above and the `target = ELEM` below, which this walk sees both;
             * the body cannot rebind their names (for_iter.c refuses it), so the same
             * definitions reach both and the names split like any other (an unrolled
             * body's `for v in a` over each copy's own a: literal_unroll.c) */
            loop(w, n, s);
            break;
        case S_WHILE: loop(w, n, s); break;
        case S_BREAK:
        case S_CONTINUE:
            if (w->depth == 0) {
                w->give_up = true; /* sema reports it */
                return;
            }
            st_join(w, n->kind == S_BREAK ? w->brk[w->depth - 1] : w->cont[w->depth - 1], s);
            st_kill(w, s);
            break;
        case S_RETURN:
            use_expr(w, n->ret.value, s);
            st_kill(w, s);
            break;
        case S_ASSERT: /* also `raise E(...)` (test False): what follows it may run on
                        * in a device function, so the state goes on as it is */
            use_expr(w, n->assrt.test, s);
            use_expr(w, n->assrt.msg, s);
            use_expr(w, n->assrt.exc, s);
            break;
        case S_PASS: break;
        case S_DEF: break; /* a device function of its own; its calls read what it captures */
        default: w->give_up = true; return;
        }
    }
}

/* Every name under n (a statement kiln rewrote, whose hidden parts pass 2 does not see)
 * stays one variable. */
static void mark_list(Webs *w, NodeList *l) {
    for (int i = 0; i < l->n; i++) mark_nosplit(w, l->v[i]);
}

static void mark_nosplit(Webs *w, Node *n) {
    if (!n) return;
    switch (n->kind) {
    case E_NAME: {
        int v = var_of(w, n->name.id);
        if (v >= 0) w->nosplit[v] = true;
        return;
    }
    case E_BINOP:
    case E_BOOLOP: mark_nosplit(w, n->bin.l); mark_nosplit(w, n->bin.r); return;
    case E_UNARY: mark_nosplit(w, n->un.x); return;
    case E_COMPARE: mark_list(w, &n->cmp.operands); return;
    case E_IFEXP:
        mark_nosplit(w, n->ifexp.cond);
        mark_nosplit(w, n->ifexp.then);
        mark_nosplit(w, n->ifexp.orelse);
        return;
    case E_CALL:
        mark_nosplit(w, n->call.fn);
        mark_list(w, &n->call.args);
        mark_list(w, &n->call.kwvals);
        return;
    case E_SUBSCRIPT: mark_nosplit(w, n->sub.base); mark_list(w, &n->sub.idx); return;
    case E_ATTR: mark_nosplit(w, n->attr.base); return;
    case E_TUPLE: mark_list(w, &n->tuple); return;
    case E_SLICE:
        mark_nosplit(w, n->slice.lo);
        mark_nosplit(w, n->slice.hi);
        mark_nosplit(w, n->slice.step);
        return;
    case S_EXPR:
        mark_nosplit(w, n->expr);
        if (n->uf) {
            for (int k = 0; k <= n->uf->nin; k++) {
                mark_nosplit(w, n->uf->assigns[k]);
                mark_nosplit(w, n->uf->tmp[k]);
                if (k < n->uf->nin) mark_nosplit(w, n->uf->elem[k]);
            }
            mark_nosplit(w, n->uf->tmpl);
        }
        return;
    case S_ASSIGN:
        mark_list(w, &n->assign.targets);
        mark_nosplit(w, n->assign.value);
        return;
    case S_FOR:
        mark_nosplit(w, n->fors.target);
        mark_nosplit(w, n->fors.iter);
        mark_nosplit(w, n->fors.orig);
        return;
    default: return;
    }
}

/* ---- pass 3: a Sym per web ---- */

static void split(Sema *S, Webs *wp);

void sema_split_webs(Sema *S, FuncSpec *f) {
    Webs w = {.C = S->C, .f = f, .nv = f->nsyms};
    if (w.nv == 0) return;
    for (int i = 0; i < f->nparams; i++) def_add(&w, NULL, i); /* params are syms 0.. */
    for (int i = f->nparams; i < w.nv; i++) /* then each local's no-value at entry */
        if (f->syms[i]->is_local) {
            int d = def_add(&w, NULL, i);
            w.defs[d].unset = true;
        }
    number(&w, &f->def->def.body); /* a definition's number in its node's id, for now */
    w.W = (w.nd + 63) / 64;
    if (!w.give_up && (int64_t)w.nv * w.W <= WEBS_MAX_STATE_WORDS) split(S, &w);
    else w.give_up = true;
    f->unbound_all = w.give_up; /* no read is known to find a value: unbound.c */
    for (int d = 0; d < w.nd; d++)
        if (w.defs[d].node) w.defs[d].node->id = 0;
}

static void split(Sema *S, Webs *wp) {
    Compiler *C = S->C;
    Webs w = *wp;
    FuncSpec *f = w.f;
    w.parent = arena_alloc(&C->arena, sizeof(int) * (size_t)w.nd);
    for (int d = 0; d < w.nd; d++) w.parent[d] = d;
    w.nosplit = arena_alloc(&C->arena, sizeof(bool) * (size_t)w.nv);
    uint64_t *s = st_new(&w);
    if (!s) {
        wp->give_up = true;
        return;
    }
    LIVE(&w, s) = 1;
    for (int d = 0; d < w.nd && !w.defs[d].node; d++) /* the parameters, the locals' no-value */
        s[(size_t)w.defs[d].var * (size_t)w.W + (size_t)d / 64] |= (uint64_t)1 << (d % 64);
    walk(&w, &f->def->def.body, s);
    free(s);
    if (w.give_up) {
        wp->give_up = true;
        return;
    }
    for (int u = 0; u < w.nu; u++)
        if (w.uses[u].unset) w.uses[u].node->flags |= NF_UNBOUND;
    if (w.whole) return;
    /* the webs of each variable: web 0 holds the parameter, else the first definition */
    int *web = arena_alloc(&C->arena, sizeof(int) * (size_t)w.nd);
    Sym **websym = arena_alloc(&C->arena, sizeof(Sym *) * (size_t)w.nd);
    for (int v = 0; v < w.nv; v++) {
        if (w.nosplit[v]) continue;
        int nweb = 0;
        for (int d = 0; d < w.nd; d++) {
            if (w.defs[d].var != v || w.defs[d].unset) continue;
            int r = find(&w, d);
            if (r == d) web[d] = nweb++;
        }
        if (nweb < 2) continue;
        Sym *orig = f->syms[v];
        for (int d = 0; d < w.nd; d++) {
            if (w.defs[d].var != v || w.defs[d].unset || find(&w, d) != d) continue;
            if (web[d] == 0) {
                websym[d] = orig;
                orig->nassign = 0;
                orig->first_assign = UINT32_MAX;
                orig->is_local = false;
            } else {
                Sym *n = sema_sym_new(S, f, orig->name);
                n->first_assign = UINT32_MAX;
                n->web = web[d];
                websym[d] = n;
            }
        }
        for (int d = 0; d < w.nd; d++) {
            if (w.defs[d].var != v || !w.defs[d].node) continue;
            Sym *ws = websym[find(&w, d)];
            ws->is_local = true;
            ws->nassign++;
            if (ws->param < 0 && w.defs[d].node->sp.off < ws->first_assign)
                ws->first_assign = w.defs[d].node->sp.off;
            w.defs[d].node->sym = ws;
        }
        for (int u = 0; u < w.nu; u++)
            if (w.uses[u].var == v)
                w.uses[u].node->sym = w.uses[u].rep < 0 ? orig : websym[find(&w, w.uses[u].rep)];
    }
}
