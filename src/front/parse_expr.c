/* parse_expr.c: expressions of the kernel subset of Python (parse.c's header
 * says what is admitted, and the precedence).  Each level is one function, lowest
 * first: parse_test (if-else), parse_or_test, and, not, comparisons, then
 * parse_binary's table of | ^ & shifts + - * / // %, unary + - ~, **, and the
 * trailers: calls, subscripts, attributes.  Constructs kiln rejects (lambda,
 * comprehensions, displays, walrus...) are recognised and reported with a hint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_int.h"

bool parse_starts_expr(const Parser *p) {
    switch ((TokKind)p->tok.kind) {
    case TK_NAME: case TK_INT: case TK_FLOAT: case TK_IMAG: case TK_STRING: return true;
    case TK_KEYWORD:
        return p->tok.op == KW_TRUE || p->tok.op == KW_FALSE || p->tok.op == KW_NONE ||
               p->tok.op == KW_NOT || p->tok.op == KW_LAMBDA || p->tok.op == KW_AWAIT ||
               p->tok.op == KW_YIELD;
    case TK_OP:
        return p->tok.op == OP_LPAR || p->tok.op == OP_LSQB || p->tok.op == OP_LBRACE ||
               p->tok.op == OP_MINUS || p->tok.op == OP_PLUS || p->tok.op == OP_TILDE ||
               p->tok.op == OP_ELLIPSIS || p->tok.op == OP_STAR;
    default: return false;
    }
}

/* Skips a bracketed construct we reject, so parsing can go on after it. */
static void skip_brackets(Parser *p) {
    int depth = 0;
    for (;;) {
        if (p->tok.kind == TK_EOF || p->tok.kind == TK_ERROR) return;
        if (p->tok.kind == TK_NEWLINE && depth == 0) return;
        if (p->tok.kind == TK_OP) {
            if (p->tok.op == OP_LPAR || p->tok.op == OP_LSQB || p->tok.op == OP_LBRACE) depth++;
            if (p->tok.op == OP_RPAR || p->tok.op == OP_RSQB || p->tok.op == OP_RBRACE) {
                depth--;
                if (depth <= 0) {
                    advance(p);
                    return;
                }
            }
        }
        advance(p);
    }
}

/* testlist_comp inside ( ... ): a parenthesised expression or a tuple. */
static Node *parse_paren(Parser *p) {
    Span open = tok_span(&p->tok);
    advance(p); /* ( */
    if (is_op(p, OP_RPAR)) {
        Node *t = node_new(p->C, E_TUPLE, span_join(open, tok_span(&p->tok)));
        advance(p);
        return t;
    }
    if (is_kw(p, KW_YIELD))
        return parse_reject(p, tok_span(&p->tok), NULL,
                            "yield is not supported in kernels");
    Node *first = parse_test(p);
    TRY(first);
    if (is_kw(p, KW_FOR))
        return parse_reject(p, tok_span(&p->tok),
                            "write the loop out with `for i in range(...)`",
                            "generator expressions are not supported in kernels");
    if (is_op(p, OP_WALRUS))
        return parse_reject(p, tok_span(&p->tok), "assign on a line of its own",
                            "assignment expressions (:=) are not supported in kernels");
    if (!is_op(p, OP_COMMA)) {
        Span close = tok_span(&p->tok);
        TRY(parse_expect_op(p, OP_RPAR));
        first->flags |= NF_PAREN;
        (void)close;
        return first;
    }
    Node *t = node_new(p->C, E_TUPLE, open);
    int cap = 0;
    nodelist_push(p->C, &t->tuple, first, &cap);
    while (accept_op(p, OP_COMMA)) {
        if (is_op(p, OP_RPAR)) break;
        Node *e = parse_test(p);
        TRY(e);
        nodelist_push(p->C, &t->tuple, e, &cap);
    }
    t->sp = span_join(open, tok_span(&p->tok));
    TRY(parse_expect_op(p, OP_RPAR));
    return parse_deep(p, t);
}

static Node *parse_atom(Parser *p) {
    Token t = p->tok;
    Span sp = tok_span(&t);
    switch ((TokKind)t.kind) {
    case TK_NAME: {
        Node *n = node_new(p->C, E_NAME, sp);
        n->name.id = parse_tok_text(p, &t);
        advance(p);
        return n;
    }
    case TK_INT: {
        Node *n = node_new(p->C, E_INT, sp);
        n->ilit.v = t.ival;
        n->ilit.big = t.big;
        advance(p);
        return n;
    }
    case TK_FLOAT: {
        Node *n = node_new(p->C, E_FLOAT, sp);
        n->flit = t.fval;
        advance(p);
        return n;
    }
    case TK_IMAG: {
        Node *n = node_new(p->C, E_IMAG, sp);
        n->flit = t.fval;
        advance(p);
        return n;
    }
    case TK_STRING: {
        Node *n = node_new(p->C, E_STR, sp);
        advance(p);
        while (p->tok.kind == TK_STRING) { /* implicit concatenation */
            n->sp = span_join(n->sp, tok_span(&p->tok));
            advance(p);
        }
        return n;
    }
    case TK_KEYWORD:
        switch (t.op) {
        case KW_TRUE:
        case KW_FALSE: {
            Node *n = node_new(p->C, E_BOOL, sp);
            n->blit = t.op == KW_TRUE;
            advance(p);
            return n;
        }
        case KW_NONE: {
            Node *n = node_new(p->C, E_NONE, sp);
            advance(p);
            return n;
        }
        case KW_LAMBDA:
            return parse_reject(p, sp,
                                "define a device function with @kiln.jit(device=True) and call it",
                                "lambda is not supported in kernels");
        case KW_AWAIT:
            return parse_reject(p, sp, NULL, "await is not supported in kernels");
        case KW_YIELD:
            return parse_reject(p, sp, NULL, "yield is not supported in kernels");
        default:
            return parse_unexpected(p, "an expression");
        }
    case TK_OP:
        switch (t.op) {
        case OP_LPAR: return parse_paren(p);
        case OP_LSQB:
            skip_brackets(p);
            return parse_reject(p, sp,
                                "preallocate an array: kiln.local.array(n, kiln.float32)",
                                "lists are not supported in kernels");
        case OP_LBRACE:
            skip_brackets(p);
            return parse_reject(p, sp, "use arrays or scalar variables",
                                "dicts and sets are not supported in kernels");
        case OP_ELLIPSIS:
            advance(p);
            return parse_reject(p, sp, NULL, "'...' is not supported in kernel expressions");
        case OP_STAR:
            return parse_reject(p, sp, "pass the arguments one by one",
                                "starred expressions are not supported in kernels");
        default: return parse_unexpected(p, "an expression");
        }
    default: return parse_unexpected(p, "an expression");
    }
}

/* One element of a subscript: an expression or a slice lo:hi:step. */
static Node *parse_subscript_elem(Parser *p) {
    Span start = tok_span(&p->tok);
    Node *lo = NULL;
    if (!is_op(p, OP_COLON)) {
        lo = parse_test(p);
        TRY(lo);
        if (!is_op(p, OP_COLON)) return lo;
    }
    Node *s = node_new(p->C, E_SLICE, start);
    s->slice.lo = lo;
    advance(p); /* : */
    if (!is_op(p, OP_COLON) && !is_op(p, OP_COMMA) && !is_op(p, OP_RSQB)) {
        s->slice.hi = parse_test(p);
        TRY(s->slice.hi);
    }
    if (accept_op(p, OP_COLON)) {
        if (!is_op(p, OP_COMMA) && !is_op(p, OP_RSQB)) {
            s->slice.step = parse_test(p);
            TRY(s->slice.step);
        }
    }
    s->sp = span_join(start, tok_span(&p->tok));
    if (s->sp.len > 1 && (is_op(p, OP_COMMA) || is_op(p, OP_RSQB))) s->sp.len--;
    return parse_deep(p, s);
}

static Node *parse_trailers(Parser *p, Node *e) {
    for (;;) {
        if (is_op(p, OP_LPAR)) {
            Node *c = node_new(p->C, E_CALL, e->sp);
            c->call.fn = e;
            advance(p);
            int acap = 0, kcap = 0, ncap = 0;
            while (!is_op(p, OP_RPAR)) {
                if (is_op(p, OP_DSTAR))
                    return parse_reject(p, tok_span(&p->tok), "pass the arguments one by one",
                                        "**kwargs are not supported in kernels");
                if (is_op(p, OP_STAR)) { /* f(*t): sema unpacks the tuple t (sema_expr.c) */
                    Span st = tok_span(&p->tok);
                    if (c->call.kwvals.n > 0)
                        return parse_reject(
                            p, st, "write *t before the keyword arguments",
                            "*t after keyword arguments is not supported in kernels");
                    advance(p);
                    Node *a = parse_test(p);
                    TRY(a);
                    a->flags |= NF_STAR;
                    a->sp = span_join(st, a->sp);
                    nodelist_push(p->C, &c->call.args, a, &acap);
                    if (!accept_op(p, OP_COMMA)) break;
                    continue;
                }
                if (p->tok.kind == TK_NAME && peek(p)->kind == TK_OP &&
                    peek(p)->op == OP_ASSIGN) {
                    const char *kw = parse_tok_text(p, &p->tok);
                    Span ksp = tok_span(&p->tok);
                    advance(p);
                    advance(p);
                    Node *v = parse_test(p);
                    TRY(v);
                    for (int i = 0; i < c->call.kwvals.n; i++)
                        if (strcmp(c->call.kwnames[i], kw) == 0)
                            return parse_reject(p, ksp, NULL, "keyword argument repeated");
                    nodelist_push(p->C, &c->call.kwvals, v, &kcap);
                    c->call.kwnames =
                        arena_grow(&p->C->arena, c->call.kwnames, &ncap, c->call.kwvals.n,
                                   sizeof(char *));
                    c->call.kwnames[c->call.kwvals.n - 1] = kw;
                } else {
                    if (c->call.kwvals.n > 0)
                        return parse_reject(p, tok_span(&p->tok), NULL,
                                            "positional argument follows keyword argument");
                    Node *a = parse_test(p);
                    TRY(a);
                    if (is_kw(p, KW_FOR))
                        return parse_reject(p, tok_span(&p->tok),
                                            "write the loop out with `for i in range(...)`",
                                            "generator expressions are not supported in kernels");
                    nodelist_push(p->C, &c->call.args, a, &acap);
                }
                if (!accept_op(p, OP_COMMA)) break;
            }
            c->sp = span_join(e->sp, tok_span(&p->tok));
            TRY(parse_expect_op(p, OP_RPAR));
            e = parse_deep(p, c);
            TRY(e);
        } else if (is_op(p, OP_LSQB)) {
            Node *s = node_new(p->C, E_SUBSCRIPT, e->sp);
            s->sub.base = e;
            advance(p);
            int cap = 0;
            if (is_op(p, OP_RSQB)) return parse_unexpected(p, "an index");
            for (;;) {
                Node *x = parse_subscript_elem(p);
                TRY(x);
                nodelist_push(p->C, &s->sub.idx, x, &cap);
                if (!accept_op(p, OP_COMMA)) break;
                if (is_op(p, OP_RSQB)) break;
            }
            /* a[(i, j)] indexes like a[i, j] */
            if (s->sub.idx.n == 1 && s->sub.idx.v[0]->kind == E_TUPLE &&
                s->sub.idx.v[0]->tuple.n > 0)
                s->sub.idx = s->sub.idx.v[0]->tuple;
            s->sp = span_join(e->sp, tok_span(&p->tok));
            TRY(parse_expect_op(p, OP_RSQB));
            e = parse_deep(p, s);
            TRY(e);
        } else if (is_op(p, OP_DOT)) {
            advance(p);
            if (p->tok.kind != TK_NAME) return parse_unexpected(p, "an attribute name");
            Node *a = node_new(p->C, E_ATTR, span_join(e->sp, tok_span(&p->tok)));
            a->attr.base = e;
            a->attr.attr = parse_tok_text(p, &p->tok);
            a->attr.attr_sp = tok_span(&p->tok);
            advance(p);
            e = parse_deep(p, a);
            TRY(e);
        } else {
            return e;
        }
    }
}

/* ---- Python's constant folding of integer literals ----------------------------------
 * CPython folds 2**64 - 1 and 1 << 63 into one constant before any code sees them; kiln
 * does the same here, exactly (in 128 bits), so that an intermediate past 64 bits (2**64)
 * does not matter when the result fits.  What is left unfolded (a result past 64 bits,
 * a negative power, a division by zero) sema folds again and reports. */
typedef ast_i128 plit_;

int ast_int_binop(int op, ast_i128 a, ast_i128 b, ast_i128 *out) {
    ast_i128 r = 0;
    switch ((BinOp)op) {
    case B_ADD: if (__builtin_add_overflow(a, b, &r)) return AST_INT_BIG; break;
    case B_SUB: if (__builtin_sub_overflow(a, b, &r)) return AST_INT_BIG; break;
    case B_MUL: if (__builtin_mul_overflow(a, b, &r)) return AST_INT_BIG; break;
    case B_FLOORDIV:
    case B_MOD:
        if (b == 0) return AST_INT_ZERODIV;
        if (b == -1 && a == -((ast_i128)1 << 126) - ((ast_i128)1 << 126))
            return AST_INT_BIG; /* the one quotient past 128 bits (and a trap in C) */
        r = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) r--;
        if (op == B_MOD) r = a - r * b;
        break;
    case B_POW:
        if (b < 0) return AST_INT_NEGPOW;
        if (a == 0 || a == 1) {
            r = b == 0 ? 1 : a;
        } else if (a == -1) {
            r = b % 2 ? -1 : 1;
        } else { /* |a| >= 2: past 128 bits within 128 factors */
            r = 1;
            for (ast_i128 i = 0; i < b; i++)
                if (__builtin_mul_overflow(r, a, &r)) return AST_INT_BIG;
        }
        break;
    case B_LSHIFT:
        if (b < 0) return AST_INT_NEGSHIFT;
        if (a != 0 && b >= 127) return AST_INT_BIG;
        if (a != 0 && __builtin_mul_overflow(a, (ast_i128)1 << b, &r)) return AST_INT_BIG;
        break;
    case B_RSHIFT:
        if (b < 0) return AST_INT_NEGSHIFT;
        r = b > 126 ? (a < 0 ? -1 : 0) : a >> b;
        break;
    case B_AND: r = a & b; break;
    case B_OR: r = a | b; break;
    case B_XOR: r = a ^ b; break;
    default: return AST_INT_NOT_FOLDED;
    }
    *out = r;
    return AST_INT_OK;
}

static bool lit_value(const Node *n, plit_ *v) {
    switch ((NodeKind)n->kind) {
    case E_INT: *v = (plit_)n->ilit.v; return true;
    case E_UNARY: {
        plit_ x;
        if (n->op == U_NOT || !lit_value(n->un.x, &x)) return false;
        *v = n->op == U_NEG ? -x : n->op == U_INVERT ? -x - 1 : x;
        return true;
    }
    case E_BINOP: {
        plit_ a, b;
        return lit_value(n->bin.l, &a) && lit_value(n->bin.r, &b) &&
               ast_int_binop(n->op, a, b, v) == AST_INT_OK;
    }
    default: return false;
    }
}

/* n itself, or the literal (negated, for a value below 0) it folds to. */
static Node *fold_literal(Parser *p, Node *n) {
    plit_ v;
    if (!n || !lit_value(n, &v)) return n;
    if (v < -((plit_)1 << 63) || v > (plit_)UINT64_MAX) return n; /* sema says so */
    if (n->kind == E_UNARY && n->op == U_NEG && n->un.x->kind == E_INT) return n; /* -5 */
    Node *lit = node_new(p->C, E_INT, n->sp);
    lit->ilit.v = (uint64_t)(v < 0 ? -v : v);
    lit->ilit.big = lit->ilit.v > (uint64_t)INT64_MAX;
    lit->flags = n->flags & NF_PAREN;
    if (v >= 0) return parse_deep(p, lit);
    Node *neg = node_new(p->C, E_UNARY, n->sp);
    neg->op = U_NEG;
    neg->un.x = lit;
    neg->flags = lit->flags;
    return parse_deep(p, neg);
}

static Node *parse_unary(Parser *p);

static Node *parse_power(Parser *p) {
    Node *e = parse_atom(p);
    TRY(e);
    e = parse_trailers(p, e);
    TRY(e);
    if (is_op(p, OP_DSTAR)) {
        Span opsp = tok_span(&p->tok);
        if (!parse_nest_enter(p)) return NULL;
        advance(p);
        Node *r = parse_unary(p); /* right-associative, binds tighter than unary on the left */
        parse_nest_leave(p);
        TRY(r);
        Node *b = node_new(p->C, E_BINOP, span_join(e->sp, r->sp));
        b->op = B_POW;
        b->bin.l = e;
        b->bin.r = r;
        (void)opsp;
        return fold_literal(p, parse_deep(p, b));
    }
    return e;
}

static Node *parse_unary(Parser *p) {
    if (is_op(p, OP_MINUS) || is_op(p, OP_PLUS) || is_op(p, OP_TILDE)) {
        Span sp = tok_span(&p->tok);
        UnOp op = is_op(p, OP_MINUS) ? U_NEG : is_op(p, OP_PLUS) ? U_POS : U_INVERT;
        if (!parse_nest_enter(p)) return NULL;
        advance(p);
        Node *x = parse_unary(p);
        parse_nest_leave(p);
        TRY(x);
        Node *u = node_new(p->C, E_UNARY, span_join(sp, x->sp));
        u->op = (uint8_t)op;
        u->un.x = x;
        return fold_literal(p, parse_deep(p, u));
    }
    return parse_power(p);
}

static Node *binop(Parser *p, BinOp op, Node *l, Node *r) {
    Node *b = node_new(p->C, E_BINOP, span_join(l->sp, r->sp));
    b->op = (uint8_t)op;
    b->bin.l = l;
    b->bin.r = r;
    return fold_literal(p, parse_deep(p, b));
}

/* The binary operators from | (level 0) to * / // % (level 5), parsed by
 * precedence climbing: one loop builds a left-associative chain of operators
 * of at least `level`, recursing only for the right operand of an operator
 * (which takes operators binding tighter), so an operand costs one frame here
 * rather than one per level: the stack a bracket costs is KILN_MAX_NESTING's. */
static const struct {
    Op tok;
    BinOp op;
    int level;
} binops[] = {
    {OP_PIPE, B_OR, 0},       {OP_CARET, B_XOR, 1},     {OP_AMP, B_AND, 2},
    {OP_LSHIFT, B_LSHIFT, 3}, {OP_RSHIFT, B_RSHIFT, 3}, {OP_PLUS, B_ADD, 4},
    {OP_MINUS, B_SUB, 4},     {OP_STAR, B_MUL, 5},      {OP_SLASH, B_DIV, 5},
    {OP_DSLASH, B_FLOORDIV, 5}, {OP_PERCENT, B_MOD, 5},
};

static Node *parse_binary(Parser *p, int level) {
    Node *e = parse_unary(p);
    TRY(e);
    for (;;) {
        if (is_op(p, OP_AT))
            return parse_reject(p, tok_span(&p->tok), "write the product as loops",
                                "the matrix operator @ is not supported in kernels");
        int found = -1;
        for (size_t i = 0; i < COUNTOF(binops); i++)
            if (is_op(p, binops[i].tok)) found = (int)i;
        if (found < 0 || binops[found].level < level) return e;
        advance(p);
        Node *r = parse_binary(p, binops[found].level + 1);
        TRY(r);
        e = binop(p, binops[found].op, e, r);
        TRY(e);
    }
}

Node *parse_expr(Parser *p) { return parse_binary(p, 0); }

static int comp_op(Parser *p) {
    if (p->tok.kind == TK_OP) {
        switch (p->tok.op) {
        case OP_LT: return C_LT;
        case OP_LE: return C_LE;
        case OP_GT: return C_GT;
        case OP_GE: return C_GE;
        case OP_EQ: return C_EQ;
        case OP_NE: return C_NE;
        default: return -1;
        }
    }
    if (is_kw(p, KW_IS)) return C_IS; /* `is not`: parse_comparison reads the `not` */
    if (is_kw(p, KW_IN)) return -2;
    if (is_kw(p, KW_NOT) && peek(p)->kind == TK_KEYWORD && peek(p)->op == KW_IN) return -2;
    return -1;
}

/* Whether reading n twice is reading one value: names, literals, attributes,
 * subscripts and arithmetic of them, nothing that calls (`in`'s left side; sema's
 * rewrites of divmod and tuple comparisons).  ast_copy_pure copies such a tree. */
bool ast_is_pure(const Node *n, int depth) {
    if (!n || depth > KILN_MAX_EXPR_DEPTH) return false;
    switch ((NodeKind)n->kind) {
    case E_NAME: case E_INT: case E_FLOAT: case E_BOOL: case E_STR: return true;
    case E_UNARY: return ast_is_pure(n->un.x, depth + 1);
    case E_BINOP: return ast_is_pure(n->bin.l, depth + 1) && ast_is_pure(n->bin.r, depth + 1);
    case E_ATTR: return ast_is_pure(n->attr.base, depth + 1);
    case E_SUBSCRIPT:
        for (int i = 0; i < n->sub.idx.n; i++)
            if (!ast_is_pure(n->sub.idx.v[i], depth + 1)) return false;
        return ast_is_pure(n->sub.base, depth + 1);
    default: return false;
    }
}

/* A fresh copy of a tree ast_is_pure accepts, with the parser's fields and a name's
 * variable (its web, syms.c) only: a copy made after sema typed the original carries
 * none of its type annotations. */
Node *ast_copy_pure(Compiler *C, const Node *n) {
    Node *c = node_new(C, (NodeKind)n->kind, n->sp);
    c->op = n->op;
    c->depth = n->depth;
    switch ((NodeKind)n->kind) {
    case E_NAME: /* and its web (syms.c): a copy reads the same variable */
        c->name = n->name;
        c->sym = n->sym;
        break;
    case E_INT: c->ilit = n->ilit; break;
    case E_FLOAT: c->flit = n->flit; break;
    case E_BOOL: c->blit = n->blit; break;
    case E_STR: break; /* its text is its span's */
    case E_UNARY: c->un.x = ast_copy_pure(C, n->un.x); break;
    case E_BINOP:
        c->bin.l = ast_copy_pure(C, n->bin.l);
        c->bin.r = ast_copy_pure(C, n->bin.r);
        break;
    case E_ATTR:
        c->attr = n->attr;
        c->attr.base = ast_copy_pure(C, n->attr.base);
        break;
    case E_SUBSCRIPT: {
        c->sub.base = ast_copy_pure(C, n->sub.base);
        int cap = 0;
        for (int i = 0; i < n->sub.idx.n; i++)
            nodelist_push(C, &c->sub.idx, ast_copy_pure(C, n->sub.idx.v[i]), &cap);
        break;
    }
    default: UNREACHABLE();
    }
    return c;
}

/* `x in (a, b, c)` as (x == a) or (x == b) or (x == c), `not in` as the != of each
 * joined by and, as Python compares (a balanced tree: any length stays shallow). */
static Node *membership(Parser *p, Node *x, NodeList *items, int lo, int hi, bool neg, Span sp) {
    if (hi - lo == 1) {
        Node *c = node_new(p->C, E_COMPARE, sp);
        int cap = 0;
        nodelist_push(p->C, &c->cmp.operands, lo == 0 ? x : ast_copy_pure(p->C, x), &cap);
        nodelist_push(p->C, &c->cmp.operands, items->v[lo], &cap);
        c->cmp.ops = arena_alloc(&p->C->arena, 1);
        c->cmp.ops[0] = (uint8_t)(neg ? C_NE : C_EQ);
        return parse_deep(p, c);
    }
    int mid = lo + (hi - lo) / 2;
    Node *l = membership(p, x, items, lo, mid, neg, sp);
    TRY(l);
    Node *r = membership(p, x, items, mid, hi, neg, sp);
    TRY(r);
    Node *b = node_new(p->C, E_BOOLOP, sp);
    b->op = neg ? BO_AND : BO_OR;
    b->bin.l = l;
    b->bin.r = r;
    return parse_deep(p, b);
}

static Node *parse_in(Parser *p, Node *x) {
    Span at = tok_span(&p->tok);
    bool neg = is_kw(p, KW_NOT);
    advance(p);
    if (neg) advance(p);
    Node *r = parse_expr(p);
    TRY(r);
    Span sp = span_join(x->sp, r->sp);
    if (r->kind != E_TUPLE)
        return parse_reject(p, at, "write the values out: x in (1, 3, 5); or compare with == "
                            "in a loop over range()",
                            "'in' works with a tuple written out in kernels");
    if (!ast_is_pure(x, 0))
        return parse_reject(p, x->sp, "assign it to a variable first: v = f(...); v in (...)",
                            "the left side of 'in' is read once per value: it must not call "
                            "anything");
    if (comp_op(p) != -1)
        return parse_reject(p, tok_span(&p->tok), "split the chain with and",
                            "'in' in a chained comparison is not supported in kernels");
    if (r->tuple.n == 0) {
        Node *b = node_new(p->C, E_BOOL, sp);
        b->blit = neg;
        return b;
    }
    return membership(p, x, &r->tuple, 0, r->tuple.n, neg, sp);
}

static Node *parse_comparison(Parser *p) {
    Node *e = parse_expr(p);
    TRY(e);
    int op = comp_op(p);
    if (op == -1) return e;
    if (op == -2) return parse_in(p, e);
    Node *c = node_new(p->C, E_COMPARE, e->sp);
    int cap = 0, ocap = 0;
    nodelist_push(p->C, &c->cmp.operands, e, &cap);
    while ((op = comp_op(p)) != -1) {
        if (op == -2)
            return parse_reject(p, tok_span(&p->tok), "split the chain with and",
                                "'in' in a chained comparison is not supported in kernels");
        advance(p);
        if (op == C_IS && is_kw(p, KW_NOT)) {
            advance(p);
            op = C_ISNOT;
        }
        Node *r = parse_expr(p);
        TRY(r);
        c->cmp.ops = arena_grow(&p->C->arena, c->cmp.ops, &ocap, c->cmp.operands.n, 1);
        c->cmp.ops[c->cmp.operands.n - 1] = (uint8_t)op;
        nodelist_push(p->C, &c->cmp.operands, r, &cap);
        c->sp = span_join(c->sp, r->sp);
    }
    return parse_deep(p, c);
}

static Node *parse_not(Parser *p) {
    if (is_kw(p, KW_NOT)) {
        Span sp = tok_span(&p->tok);
        if (!parse_nest_enter(p)) return NULL;
        advance(p);
        Node *x = parse_not(p);
        parse_nest_leave(p);
        TRY(x);
        Node *u = node_new(p->C, E_UNARY, span_join(sp, x->sp));
        u->op = U_NOT;
        u->un.x = x;
        return parse_deep(p, u);
    }
    return parse_comparison(p);
}

static Node *parse_and(Parser *p) {
    Node *e = parse_not(p);
    TRY(e);
    while (is_kw(p, KW_AND)) {
        advance(p);
        Node *r = parse_not(p);
        TRY(r);
        Node *b = node_new(p->C, E_BOOLOP, span_join(e->sp, r->sp));
        b->op = BO_AND;
        b->bin.l = e;
        b->bin.r = r;
        e = parse_deep(p, b);
        TRY(e);
    }
    return e;
}

Node *parse_or_test(Parser *p) {
    Node *e = parse_and(p);
    TRY(e);
    while (is_kw(p, KW_OR)) {
        advance(p);
        Node *r = parse_and(p);
        TRY(r);
        Node *b = node_new(p->C, E_BOOLOP, span_join(e->sp, r->sp));
        b->op = BO_OR;
        b->bin.l = e;
        b->bin.r = r;
        e = parse_deep(p, b);
        TRY(e);
    }
    return e;
}

static Node *parse_test_inner(Parser *p);

Node *parse_test(Parser *p) {
    if (!parse_nest_enter(p)) return NULL;
    Node *e = parse_test_inner(p);
    parse_nest_leave(p);
    return e;
}

static Node *parse_test_inner(Parser *p) {
    if (is_kw(p, KW_LAMBDA)) return parse_atom(p);
    Node *e = parse_or_test(p);
    TRY(e);
    if (is_kw(p, KW_IF)) {
        advance(p);
        Node *cond = parse_or_test(p);
        TRY(cond);
        if (!is_kw(p, KW_ELSE)) return parse_unexpected(p, "'else'");
        advance(p);
        Node *orelse = parse_test(p);
        TRY(orelse);
        Node *n = node_new(p->C, E_IFEXP, span_join(e->sp, orelse->sp));
        n->ifexp.cond = cond;
        n->ifexp.then = e;
        n->ifexp.orelse = orelse;
        return parse_deep(p, n);
    }
    if (is_op(p, OP_WALRUS))
        return parse_reject(p, tok_span(&p->tok), "assign on a line of its own",
                            "assignment expressions (:=) are not supported in kernels");
    return e;
}

/* testlist: test (',' test)* [','] -- a bare tuple when there is a comma. */
Node *parse_testlist(Parser *p) {
    Node *first = parse_test(p);
    TRY(first);
    if (!is_op(p, OP_COMMA)) return first;
    Node *t = node_new(p->C, E_TUPLE, first->sp);
    int cap = 0;
    nodelist_push(p->C, &t->tuple, first, &cap);
    while (accept_op(p, OP_COMMA)) {
        if (!parse_starts_expr(p)) break;
        Node *e = parse_test(p);
        TRY(e);
        nodelist_push(p->C, &t->tuple, e, &cap);
        t->sp = span_join(t->sp, e->sp);
    }
    return parse_deep(p, t);
}
