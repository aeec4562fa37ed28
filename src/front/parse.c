/* parse.c: a recursive-descent parser for the kernel subset of Python.
 *
 * The grammar is Python's own (the reference's "Full Grammar specification"),
 * trimmed to what LANGUAGE.md admits.  What it does not admit is still
 * recognised, so that the user gets "try statements are not supported in
 * kernels" with a hint at the right column rather than "invalid syntax":
 * try/with/class/lambda/yield/global/import/del/raise, list, dict
 * and set displays, comprehensions, starred and keyword-splat arguments,
 * walrus, `is`, `in`, the matrix operator and complex literals.
 *
 * Errors inside a statement abandon that statement (parse functions return
 * NULL, and the statement loop skips to the next line), so one run reports
 * every bad statement of a kernel, as Wren and c2mir do.
 *
 * Precedence, lowest first: if-else, or, and, not, comparisons, |, ^, &,
 * shifts, + -, * / // %, unary + - ~, **, then calls, subscripts, attributes.
 *
 * This file parses statements, functions and signatures, and keeps the nesting
 * limits; expressions are parse_expr.c's, the parser's state parse_int.h's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_int.h"

static Node *parse_lambda_def(Parser *p, Node *name);


Node *node_new(Compiler *C, NodeKind k, Span sp) {
    Node *n = arena_alloc(&C->arena, sizeof *n);
    n->kind = (uint8_t)k;
    n->sp = sp;
    n->depth = 1;
    return n;
}

void nodelist_push(Compiler *C, NodeList *l, Node *n, int *cap) {
    l->v = arena_grow(&C->arena, l->v, cap, l->n + 1, sizeof(Node *));
    l->v[l->n++] = n;
}




const char *parse_tok_text(Parser *p, const Token *t) {
    if (t->text) return t->text; /* a normalised non-ASCII name */
    return arena_strndup(&p->C->arena, t->sp.file->text + t->sp.off, t->sp.len);
}


/* Reports an unexpected token (unless the lexer already reported). */
void *parse_unexpected(Parser *p, const char *expected) {
    if (p->tok.kind == TK_ERROR) return NULL;
    if (p->tok.kind == TK_INDENT)
        error_at(p->C, tok_span(&p->tok), NULL, "unexpected indent");
    else if (expected)
        error_at(p->C, tok_span(&p->tok), NULL, "invalid syntax: expected %s, found %s", expected,
                 tok_describe(p->C, &p->tok));
    else
        error_at(p->C, tok_span(&p->tok), NULL, "invalid syntax: unexpected %s",
                 tok_describe(p->C, &p->tok));
    return NULL;
}

bool parse_expect_op(Parser *p, Op op) {
    if (accept_op(p, op)) return true;
    char what[16];
    snprintf(what, sizeof what, "'%s'", op_names[op]);
    parse_unexpected(p, what);
    return false;
}

void *parse_reject(Parser *p, Span sp, const char *hint, const char *msg) {
    error_at(p->C, sp, hint, "%s", msg);
    return NULL;
}


/* ---- nesting limits ------------------------------------------------------------
 * The parser recurses for every bracket, call, subscript, unary operator, `not`,
 * `**` and conditional expression, about 15 C frames per bracket; blocks are
 * bounded by the lexer (KILN_MAX_INDENT).  Sema and the emitter recurse once per
 * level of the tree the parser builds.  Two limits (compiler.h) keep all of them
 * off the end of the stack: the descents open at once (KILN_MAX_NESTING), and
 * the depth of each expression tree, where a chain `a + b + c ...` is one level
 * per operator (KILN_MAX_EXPR_DEPTH). */

/* Reports a nesting limit once per function: the descent unwinds through
 * every open level, and one message says it all. */
static bool first_too_deep(Parser *p) {
    bool first = !p->too_deep;
    p->too_deep = true;
    return first;
}

/* Opens one level of recursive descent; false (reported) past the limit.
 * Every true is paired with nest_leave.  A statement's expression is the
 * first level, so 200 parentheses fit in it, as in CPython. */
bool parse_nest_enter(Parser *p) {
    if (p->depth > KILN_MAX_NESTING) {
        if (first_too_deep(p))
            error_at(p->C, tok_span(&p->tok), "split it with intermediate variables",
                     "too many nested parentheses, brackets, calls or operators: "
                     "kernels nest at most %d levels (KILN_MAX_NESTING)",
                     KILN_MAX_NESTING);
        return false;
    }
    p->depth++;
    return true;
}

void parse_nest_leave(Parser *p) { p->depth--; }

static int max_depth(int d, const Node *c) { return c && c->depth > d ? c->depth : d; }
static int list_depth(int d, const NodeList *l) {
    for (int i = 0; i < l->n; i++) d = max_depth(d, l->v[i]);
    return d;
}

/* Sets the depth of a new expression node from its operands; NULL (reported)
 * past KILN_MAX_EXPR_DEPTH. */
Node *parse_deep(Parser *p, Node *n) {
    int d = 0;
    switch ((NodeKind)n->kind) {
    case E_BINOP:
    case E_BOOLOP: d = max_depth(max_depth(0, n->bin.l), n->bin.r); break;
    case E_UNARY: d = max_depth(0, n->un.x); break;
    case E_COMPARE: d = list_depth(0, &n->cmp.operands); break;
    case E_IFEXP:
        d = max_depth(max_depth(max_depth(0, n->ifexp.cond), n->ifexp.then), n->ifexp.orelse);
        break;
    case E_CALL: d = list_depth(list_depth(max_depth(0, n->call.fn), &n->call.args), &n->call.kwvals); break;
    case E_SUBSCRIPT: d = list_depth(max_depth(0, n->sub.base), &n->sub.idx); break;
    case E_ATTR: d = max_depth(0, n->attr.base); break;
    case E_TUPLE: d = list_depth(0, &n->tuple); break;
    case E_SLICE:
        d = max_depth(max_depth(max_depth(0, n->slice.lo), n->slice.hi), n->slice.step);
        break;
    default: break;
    }
    if (d >= KILN_MAX_EXPR_DEPTH) {
        if (first_too_deep(p))
            error_at(p->C, n->sp,
                     "split it with intermediate variables; a chain like a + b + c nests one "
                     "level per operator",
                     "expression nested too deeply: more than %d levels (KILN_MAX_EXPR_DEPTH)",
                     KILN_MAX_EXPR_DEPTH);
        return NULL;
    }
    n->depth = (uint16_t)(d + 1);
    return n;
}

static bool parse_block(Parser *p, NodeList *out);

/* ---- statements ------------------------------------------------------------- */

/* Skips the rest of a statement: to the end of its line and, if a block
 * follows, over the block. */
static void skip_statement(Parser *p) {
    while (p->tok.kind != TK_NEWLINE && p->tok.kind != TK_EOF && p->tok.kind != TK_ERROR &&
           p->tok.kind != TK_DEDENT)
        advance(p);
    if (p->tok.kind == TK_NEWLINE) advance(p);
    if (p->tok.kind == TK_INDENT) {
        int depth = 0;
        do {
            if (p->tok.kind == TK_INDENT) depth++;
            if (p->tok.kind == TK_DEDENT) depth--;
            if (p->tok.kind == TK_EOF || p->tok.kind == TK_ERROR) return;
            advance(p);
        } while (depth > 0);
    }
}

static bool end_simple(Parser *p) {
    if (accept_op(p, OP_SEMI)) return true;
    if (p->tok.kind == TK_NEWLINE || p->tok.kind == TK_EOF) return true;
    parse_unexpected(p, "end of line");
    return false;
}

static bool is_target(Node *e) {
    switch (e->kind) {
    case E_NAME:
    case E_SUBSCRIPT: return true;
    case E_ATTR: return true; /* sema says why it cannot be assigned */
    case E_TUPLE:
        for (int i = 0; i < e->tuple.n; i++)
            if (!is_target(e->tuple.v[i])) return false;
        return e->tuple.n > 0;
    default: return false;
    }
}

static Node *parse_small_stmt(Parser *p) {
    Token t = p->tok;
    Span sp = tok_span(&t);
    if (t.kind == TK_KEYWORD) {
        switch (t.op) {
        case KW_PASS: advance(p); return node_new(p->C, S_PASS, sp);
        case KW_BREAK: advance(p); return node_new(p->C, S_BREAK, sp);
        case KW_CONTINUE: advance(p); return node_new(p->C, S_CONTINUE, sp);
        case KW_RETURN: {
            advance(p);
            Node *r = node_new(p->C, S_RETURN, sp);
            if (parse_starts_expr(p)) {
                r->ret.value = parse_testlist(p);
                TRY(r->ret.value);
                r->sp = span_join(sp, r->ret.value->sp);
            }
            return r;
        }
        case KW_ASSERT: {
            advance(p);
            Node *a = node_new(p->C, S_ASSERT, sp);
            a->assrt.test = parse_test(p);
            TRY(a->assrt.test);
            if (accept_op(p, OP_COMMA)) {
                a->assrt.msg = parse_test(p);
                TRY(a->assrt.msg);
            }
            return a;
        }
        case KW_GLOBAL:
        case KW_NONLOCAL:
            return parse_reject(p, sp, "kernels read globals but cannot assign them; pass an array",
                                "global and nonlocal are not supported in kernels");
        case KW_IMPORT:
        case KW_FROM:
            return parse_reject(p, sp, "import at module level; kernels see the module's globals",
                                "import is not supported in kernels");
        case KW_DEL:
            return parse_reject(p, sp, NULL, "del is not supported in kernels");
        case KW_RAISE: {
            /* `raise E` / `raise E(constants)`: an assert that always fails, with the
             * exception to raise on the host (sema_raise.c) */
            advance(p);
            if (!parse_starts_expr(p))
                return parse_reject(p, sp,
                                    "raise an exception class, or a call of one with constants",
                                    "a bare raise (re-raising) is not supported in kernels");
            Node *a = node_new(p->C, S_ASSERT, sp);
            a->assrt.exc = parse_test(p);
            TRY(a->assrt.exc);
            if (is_kw(p, KW_FROM))
                return parse_reject(p, tok_span(&p->tok), NULL,
                                    "raise ... from ... is not supported in kernels");
            a->assrt.test = node_new(p->C, E_BOOL, sp);
            a->assrt.test->blit = false;
            a->sp = span_join(sp, a->assrt.exc->sp);
            return a;
        }
        case KW_YIELD:
            return parse_reject(p, sp, NULL, "yield is not supported in kernels");
        default: break;
        }
    }
    if (is_op(p, OP_ELLIPSIS)) {
        advance(p);
        return node_new(p->C, S_PASS, sp);
    }
    Node *e = parse_testlist(p);
    TRY(e);
    if (is_op(p, OP_ASSIGN)) {
        Node *a = node_new(p->C, S_ASSIGN, e->sp);
        int cap = 0;
        Node *last = e;
        while (accept_op(p, OP_ASSIGN)) {
            if (!is_target(last))
                return parse_reject(p, last->sp, NULL, "cannot assign to this expression");
            nodelist_push(p->C, &a->assign.targets, last, &cap);
            if (is_kw(p, KW_YIELD))
                return parse_reject(p, tok_span(&p->tok), NULL,
                                    "yield is not supported in kernels");
            /* `f = lambda x: ...`: the def of a nested function f (sema/nested.c) */
            if (is_kw(p, KW_LAMBDA) && a->assign.targets.n == 1 && e->kind == E_NAME)
                return parse_lambda_def(p, e);
            last = parse_testlist(p);
            TRY(last);
        }
        a->assign.value = last;
        a->sp = span_join(e->sp, last->sp);
        return a;
    }
    if (p->tok.kind == TK_OP && p->tok.op >= OP_PLUSEQ && p->tok.op <= OP_ATEQ) {
        if (p->tok.op == OP_ATEQ)
            return parse_reject(p, tok_span(&p->tok), "write the product as loops",
                                "the matrix operator @ is not supported in kernels");
        BinOp op = (BinOp)(p->tok.op - OP_PLUSEQ);
        if (e->kind != E_NAME && e->kind != E_SUBSCRIPT && e->kind != E_ATTR)
            return parse_reject(p, e->sp, NULL,
                                "augmented assignment needs a variable or an array element");
        advance(p);
        Node *v = parse_testlist(p);
        TRY(v);
        if (op == B_ADD && e->kind == E_NAME && v->kind == E_TUPLE) {
            /* `t += (4,)` makes a new, longer tuple: `t = t + (4,)`, whose new t is a
             * variable of its own (syms.c), as in Numba's SSA */
            Node *a = node_new(p->C, S_ASSIGN, span_join(e->sp, v->sp));
            Node *b = node_new(p->C, E_BINOP, a->sp);
            b->op = (uint8_t)B_ADD;
            b->bin.l = ast_copy_pure(p->C, e);
            b->bin.r = v;
            int cap = 0;
            nodelist_push(p->C, &a->assign.targets, e, &cap);
            a->assign.value = parse_deep(p, b);
            return a;
        }
        Node *a = node_new(p->C, S_AUGASSIGN, span_join(e->sp, v->sp));
        a->op = (uint8_t)op;
        a->aug.target = e;
        a->aug.value = v;
        return a;
    }
    if (is_op(p, OP_COLON)) {
        /* annotated assignment: x: float32 = 0.0 -- the annotation is ignored */
        advance(p);
        Node *ann = parse_test(p);
        TRY(ann);
        if (!accept_op(p, OP_ASSIGN)) return node_new(p->C, S_PASS, sp);
        Node *v = parse_testlist(p);
        TRY(v);
        if (e->kind != E_NAME && e->kind != E_SUBSCRIPT)
            return parse_reject(p, e->sp, NULL, "cannot assign to this expression");
        Node *a = node_new(p->C, S_ASSIGN, span_join(e->sp, v->sp));
        int cap = 0;
        nodelist_push(p->C, &a->assign.targets, e, &cap);
        a->assign.value = v;
        return a;
    }
    Node *s = node_new(p->C, S_EXPR, e->sp);
    s->expr = e;
    return s;
}

/* Parses one line of simple statements into out. */
static bool parse_simple_stmts(Parser *p, NodeList *out, int *cap) {
    for (;;) {
        Node *s = parse_small_stmt(p);
        if (!s) {
            skip_statement(p);
            return true; /* reported; keep going with the next statement */
        }
        nodelist_push(p->C, out, s, cap);
        if (!end_simple(p)) {
            skip_statement(p);
            return true;
        }
        if (p->tok.kind == TK_NEWLINE) {
            advance(p);
            return true;
        }
        if (p->tok.kind == TK_EOF) return true;
    }
}

static bool parse_stmt(Parser *p, NodeList *out, int *cap);

/* if/elif/else: an elif is an if statement alone in the else branch, as in
 * Python's AST; the chain is built with a loop (elif_of walks it), so its
 * length costs no stack here or in the later passes. */
static Node *parse_if(Parser *p, Span sp) {
    Node *first = NULL, *last = NULL;
    for (;;) {
        /* at 'if' or 'elif' */
        advance(p);
        Node *n = node_new(p->C, S_IF, sp);
        n->ifs.cond = parse_test(p);
        TRY(n->ifs.cond);
        TRY(parse_expect_op(p, OP_COLON));
        if (!parse_block(p, &n->ifs.body)) return NULL;
        if (last) {
            int cap = 0;
            nodelist_push(p->C, &last->ifs.orelse, n, &cap);
        } else {
            first = n;
        }
        last = n;
        if (is_kw(p, KW_ELIF)) {
            sp = tok_span(&p->tok);
            continue;
        }
        if (is_kw(p, KW_ELSE)) {
            advance(p);
            TRY(parse_expect_op(p, OP_COLON));
            if (!parse_block(p, &n->ifs.orelse)) return NULL;
        }
        return first;
    }
}

static Node *parse_def_rest(Parser *p, Span defsp);

/* A parameter's name, at it: appended to fn's (a duplicate is an error), NULL after one. */
static Param *parse_param(Parser *p, Node *fn, int *pcap) {
    Compiler *C = p->C;
    if (p->tok.kind != TK_NAME) return parse_unexpected(p, "a parameter name");
    fn->def.params = arena_grow(&C->arena, fn->def.params, pcap, fn->def.nparams + 1,
                                sizeof(Param));
    Param *pa = &fn->def.params[fn->def.nparams++];
    memset(pa, 0, sizeof *pa);
    pa->name = parse_tok_text(p, &p->tok);
    pa->sp = tok_span(&p->tok);
    for (int i = 0; i < fn->def.nparams - 1; i++)
        if (strcmp(fn->def.params[i].name, pa->name) == 0) {
            error_at(C, pa->sp, NULL, "duplicate parameter '%s'", pa->name);
            return NULL;
        }
    advance(p);
    return pa;
}

/* `name = lambda params: expr` as `def name(params): return expr`; at the lambda. */
static Node *parse_lambda_def(Parser *p, Node *name) {
    Compiler *C = p->C;
    Span lsp = tok_span(&p->tok);
    advance(p);
    Node *fn = node_new(C, S_DEF, lsp);
    fn->def.name = name->name.id;
    fn->def.name_sp = name->sp;
    int pcap = 0;
    while (!is_op(p, OP_COLON)) {
        Param *pa = parse_param(p, fn, &pcap);
        if (!pa) return NULL;
        if (accept_op(p, OP_ASSIGN)) {
            pa->deflt = parse_test(p);
            if (!pa->deflt) return NULL;
        }
        if (!accept_op(p, OP_COMMA)) break;
    }
    if (!parse_expect_op(p, OP_COLON)) return NULL;
    Node *body = parse_test(p);
    if (!body) return NULL;
    Node *r = node_new(C, S_RETURN, body->sp);
    r->ret.value = body;
    int cap = 0;
    nodelist_push(C, &fn->def.body, r, &cap);
    fn->sp = span_join(lsp, body->sp); /* starts at the lambda: nested.c keys on it */
    return fn;
}

static bool reject_compound(Parser *p, Span sp, const char *hint, const char *msg) {
    error_at(p->C, sp, hint, "%s", msg);
    skip_statement(p);
    /* the clauses that belong to it */
    while (is_kw(p, KW_EXCEPT) || is_kw(p, KW_FINALLY) || is_kw(p, KW_ELSE) || is_kw(p, KW_ELIF))
        skip_statement(p);
    return true;
}

static bool parse_stmt(Parser *p, NodeList *out, int *cap) {
    Span sp = tok_span(&p->tok);
    if (p->tok.kind == TK_KEYWORD) {
        switch (p->tok.op) {
        case KW_IF: {
            Node *n = parse_if(p, sp);
            if (!n) {
                skip_statement(p);
                return true;
            }
            nodelist_push(p->C, out, n, cap);
            return true;
        }
        case KW_WHILE:
        case KW_FOR: {
            bool is_for = p->tok.op == KW_FOR;
            advance(p);
            Node *n = node_new(p->C, is_for ? S_FOR : S_WHILE, sp);
            if (is_for) {
                Node *target = parse_expr(p);
                if (target && is_op(p, OP_COMMA)) {
                    Node *t = node_new(p->C, E_TUPLE, target->sp);
                    int tcap = 0;
                    nodelist_push(p->C, &t->tuple, target, &tcap);
                    while (accept_op(p, OP_COMMA)) {
                        Node *x = parse_expr(p);
                        if (!x) break;
                        nodelist_push(p->C, &t->tuple, x, &tcap);
                    }
                    target = t;
                }
                if (!target || !is_kw(p, KW_IN)) {
                    if (target) parse_unexpected(p, "'in'");
                    skip_statement(p);
                    return true;
                }
                advance(p);
                n->fors.target = target;
                n->fors.iter = parse_testlist(p);
                if (!n->fors.iter || !parse_expect_op(p, OP_COLON)) {
                    skip_statement(p);
                    return true;
                }
                if (!parse_block(p, &n->fors.body)) return false;
                if (is_kw(p, KW_ELSE)) {
                    advance(p);
                    if (!parse_expect_op(p, OP_COLON)) return false;
                    if (!parse_block(p, &n->fors.orelse)) return false;
                }
            } else {
                n->ifs.cond = parse_test(p);
                if (!n->ifs.cond || !parse_expect_op(p, OP_COLON)) {
                    skip_statement(p);
                    return true;
                }
                if (!parse_block(p, &n->ifs.body)) return false;
                if (is_kw(p, KW_ELSE)) {
                    advance(p);
                    if (!parse_expect_op(p, OP_COLON)) return false;
                    if (!parse_block(p, &n->ifs.orelse)) return false;
                }
            }
            nodelist_push(p->C, out, n, cap);
            return true;
        }
        case KW_DEF: { /* a nested function: sema/nested.c makes it a device function */
            advance(p);
            Node *fn = parse_def_rest(p, sp);
            if (!fn) return false;
            nodelist_push(p->C, out, fn, cap);
            return true;
        }
        case KW_CLASS:
            return reject_compound(p, sp, "pass arrays and scalars instead",
                                   "classes are not supported in kernels");
        case KW_TRY:
            return reject_compound(p, sp,
                                   "kernels cannot catch exceptions; check values with if",
                                   "try statements are not supported in kernels");
        case KW_WITH:
            return reject_compound(p, sp, NULL, "with statements are not supported in kernels");
        case KW_ASYNC:
            return reject_compound(p, sp, NULL, "async is not supported in kernels");
        case KW_ELSE:
        case KW_ELIF:
        case KW_EXCEPT:
        case KW_FINALLY:
            parse_unexpected(p, NULL);
            skip_statement(p);
            return true;
        default: break;
        }
    }
    if (is_op(p, OP_AT))
        return reject_compound(p, sp, "decorate functions at module level",
                               "decorators inside kernels are not supported");
    /* `match` is a soft keyword: a name, then a subject that no expression statement
     * can put there (`match x:`, `match [a, b]:`) */
    if (p->tok.kind == TK_NAME && strcmp(parse_tok_text(p, &p->tok), "match") == 0) {
        const Token *t = peek(p);
        if (t->kind == TK_NAME || t->kind == TK_INT || t->kind == TK_FLOAT ||
            t->kind == TK_STRING || (t->kind == TK_OP && t->op == OP_LSQB))
            return reject_compound(p, sp, "test the cases with if and elif",
                                   "match statements are not supported in kernels");
    }
    if (p->tok.kind == TK_INDENT) {
        parse_unexpected(p, NULL);
        skip_statement(p);
        return true;
    }
    return parse_simple_stmts(p, out, cap);
}

/* block: NEWLINE INDENT stmt+ DEDENT | simple_stmts on the same line.  Blocks
 * nest at most KILN_MAX_INDENT deep: the lexer counts the indentation. */
static bool parse_block(Parser *p, NodeList *out) {
    int cap = 0;
    if (p->tok.kind != TK_NEWLINE) {
        parse_simple_stmts(p, out, &cap);
        return !p->lex_failed;
    }
    advance(p);
    if (p->tok.kind != TK_INDENT) {
        if (p->tok.kind != TK_ERROR)
            error_at(p->C, tok_span(&p->tok), NULL, "expected an indented block");
        return false;
    }
    advance(p);
    while (p->tok.kind != TK_DEDENT && p->tok.kind != TK_EOF) {
        if (p->lex_failed) return false;
        if (!parse_stmt(p, out, &cap)) return false;
    }
    if (p->tok.kind == TK_DEDENT) advance(p);
    return !p->lex_failed;
}

static void mark_docstring(NodeList *body) {
    if (body->n > 0 && body->v[0]->kind == S_EXPR && body->v[0]->expr->kind == E_STR)
        body->v[0]->flags |= NF_DOCSTRING;
}

Node *parse_function(Compiler *C, const SrcFile *f) {
    Parser P;
    memset(&P, 0, sizeof P);
    Parser *p = &P;
    p->C = C;
    p->L = lex_open(C, f);
    advance(p);
    int errors_before = C->nerrors;

    /* Decorators: their arguments are the host's business. */
    while (is_op(p, OP_AT)) {
        while (p->tok.kind != TK_NEWLINE && p->tok.kind != TK_EOF && p->tok.kind != TK_ERROR)
            advance(p);
        if (p->tok.kind != TK_NEWLINE) break;
        advance(p);
    }
    if (p->lex_failed) return NULL;
    if (is_kw(p, KW_ASYNC)) {
        error_at(C, tok_span(&p->tok), NULL, "async functions cannot be kernels");
        return NULL;
    }
    if (!is_kw(p, KW_DEF)) {
        if (is_kw(p, KW_LAMBDA))
            error_at(C, tok_span(&p->tok), "write the kernel with def",
                     "lambda functions cannot be compiled by kiln");
        else if (p->tok.kind != TK_ERROR)
            error_at(C, tok_span(&p->tok), NULL,
                     "expected a function definition here, found %s", tok_describe(C, &p->tok));
        return NULL;
    }
    Span defsp = tok_span(&p->tok);
    advance(p);
    Node *fn = parse_def_rest(p, defsp);
    if (C->nerrors > errors_before || p->lex_failed) return NULL;
    return fn;
}

/* A def after its keyword (defsp): name, parameters, body; NULL after an error. */
static Node *parse_def_rest(Parser *p, Span defsp) {
    Compiler *C = p->C;
    if (p->tok.kind != TK_NAME) return parse_unexpected(p, "the function name");
    Node *fn = node_new(C, S_DEF, defsp);
    fn->def.name = parse_tok_text(p, &p->tok);
    fn->def.name_sp = tok_span(&p->tok);
    advance(p);
    if (!parse_expect_op(p, OP_LPAR)) return NULL;
    int pcap = 0;
    while (!is_op(p, OP_RPAR)) {
        if (is_op(p, OP_STAR) || is_op(p, OP_DSTAR)) {
            Span st = tok_span(&p->tok);
            bool bare = is_op(p, OP_STAR);
            advance(p);
            if (bare && (is_op(p, OP_COMMA) || is_op(p, OP_RPAR)))
                error_at(C, st, "drop the '*': the parameters after it are passed by position too",
                         "keyword-only parameters (after a bare '*') are not supported in kernels");
            else
                error_at(C, st, "list the parameters one by one",
                         "*args and **kwargs parameters are not supported in kernels");
            return NULL;
        }
        if (is_op(p, OP_SLASH)) { /* positional-only marker: harmless */
            advance(p);
            if (!accept_op(p, OP_COMMA)) break;
            continue;
        }
        Param *pa = parse_param(p, fn, &pcap);
        if (!pa) return NULL;
        if (accept_op(p, OP_COLON)) { /* annotation: ignored */
            if (!parse_test(p)) return NULL;
        }
        if (accept_op(p, OP_ASSIGN)) {
            pa->deflt = parse_test(p);
            if (!pa->deflt) return NULL;
        }
        if (!accept_op(p, OP_COMMA)) break;
    }
    if (!parse_expect_op(p, OP_RPAR)) return NULL;
    if (accept_op(p, OP_ARROW)) {
        if (!parse_test(p)) return NULL;
    }
    if (!parse_expect_op(p, OP_COLON)) return NULL;
    if (!parse_block(p, &fn->def.body)) return NULL;
    mark_docstring(&fn->def.body);
    fn->sp = span_join(defsp, fn->def.name_sp);
    return fn;
}

/* ---- signatures ------------------------------------------------------------- */

typedef struct DtypeAlias {
    const char *name;
    kiln_dtype t;
} DtypeAlias;

static const DtypeAlias dtype_aliases[] = {
    {"bool", KILN_BOOL},       {"bool_", KILN_BOOL},       {"boolean", KILN_BOOL},
    {"b1", KILN_BOOL},         {"int8", KILN_INT8},        {"i1", KILN_INT8},
    {"int16", KILN_INT16},     {"i2", KILN_INT16},         {"int32", KILN_INT32},
    {"i4", KILN_INT32},        {"int64", KILN_INT64},      {"i8", KILN_INT64},
    {"int", KILN_INT64},       {"intp", KILN_INT64},       {"intc", KILN_INT32},
    {"uint8", KILN_UINT8},     {"u1", KILN_UINT8},         {"byte", KILN_INT8},
    {"uint16", KILN_UINT16},   {"u2", KILN_UINT16},        {"uint32", KILN_UINT32},
    {"u4", KILN_UINT32},       {"uint64", KILN_UINT64},    {"u8", KILN_UINT64},
    {"uintp", KILN_UINT64},    {"uintc", KILN_UINT32},     {"float16", KILN_FLOAT16},
    {"f2", KILN_FLOAT16},      {"half", KILN_FLOAT16},     {"float32", KILN_FLOAT32},
    {"f4", KILN_FLOAT32},      {"single", KILN_FLOAT32},   {"float64", KILN_FLOAT64},
    {"f8", KILN_FLOAT64},      {"double", KILN_FLOAT64},   {"float", KILN_FLOAT64},
    {"float_", KILN_FLOAT64},    {"complex64", KILN_COMPLEX64}, {"c8", KILN_COMPLEX64},
    {"csingle", KILN_COMPLEX64}, {"complex128", KILN_COMPLEX128}, {"c16", KILN_COMPLEX128},
    {"cdouble", KILN_COMPLEX128}, {"complex", KILN_COMPLEX128}, {"complex_", KILN_COMPLEX128},
    {"bfloat16", KILN_BFLOAT16},
};

static int lookup_dtype(const char *name) {
    for (size_t i = 0; i < COUNTOF(dtype_aliases); i++)
        if (strcmp(dtype_aliases[i].name, name) == 0) return (int)dtype_aliases[i].t;
    return -1;
}

/* type: name ['*' | '[' dim (',' dim)* ']' | '[()]'] where dim is ':' or '::1' */
static bool parse_sig_type(Parser *p, kiln_argtype *t, bool allow_void, bool *is_void) {
    if (p->tok.kind != TK_NAME) {
        parse_unexpected(p, "a type name");
        return false;
    }
    const char *name = parse_tok_text(p, &p->tok);
    Span sp = tok_span(&p->tok);
    advance(p);
    memset(t, 0, sizeof *t);
    if (is_void) *is_void = false;
    if (strcmp(name, "void") == 0 || strcmp(name, "none") == 0) {
        if (!allow_void) {
            error_at(p->C, sp, NULL, "void is only valid as a return type");
            return false;
        }
        *is_void = true;
        t->dtype = KILN_NDTYPES;
        return true;
    }
    int d = lookup_dtype(name);
    /* recordN: the record dtype the process registered as N (kiln.from_dtype's text), a
     * record passed by reference unless indexed as an array below */
    if (d < 0 && strncmp(name, "record", 6) == 0 && name[6] >= '0' && name[6] <= '9') {
        char *end;
        long k = strtol(name + 6, &end, 10);
        if (!*end && k < KILN_MAX_RECORDS) {
            d = KILN_RECORD0 + (int)k;
            t->is_array = 1;
        }
    }
    if (d < 0) {
        error_at(p->C, sp, "write a dtype like float32, int64, uint8 or bool",
                 "unknown type '%s' in signature", name);
        return false;
    }
    t->dtype = (uint8_t)d;
    if (accept_op(p, OP_STAR)) { /* "uint8*": a raw pointer (Numba's CPointer(uint8)) */
        t->layout = KILN_LAYOUT_PTR;
        return true;
    }
    if (!accept_op(p, OP_LSQB)) return true;
    t->is_array = 1;
    if (accept_op(p, OP_LPAR)) { /* "float64[()]": a 0-d array (Numba: array(float64, 0d, C)) */
        if (!parse_expect_op(p, OP_RPAR) || !parse_expect_op(p, OP_RSQB)) return false;
        t->layout = KILN_LAYOUT_C;
        return true;
    }
    int contig_at = -1;
    for (;;) {
        Span dsp = tok_span(&p->tok);
        if (!parse_expect_op(p, OP_COLON)) return false;
        if (accept_op(p, OP_COLON)) {
            if (p->tok.kind != TK_INT || p->tok.ival != 1) {
                parse_unexpected(p, "1 (as in ::1)");
                return false;
            }
            advance(p);
            if (contig_at >= 0) {
                error_at(p->C, dsp, NULL, "only one dimension can be marked contiguous (::1)");
                return false;
            }
            contig_at = t->ndim;
        }
        t->ndim++;
        if (t->ndim > KILN_MAX_NDIM) {
            error_at(p->C, dsp, NULL, "arrays have at most %d dimensions", KILN_MAX_NDIM);
            return false;
        }
        if (!accept_op(p, OP_COMMA)) break;
    }
    if (!parse_expect_op(p, OP_RSQB)) return false;
    if (contig_at < 0)
        t->layout = KILN_LAYOUT_A;
    else if (contig_at == t->ndim - 1)
        t->layout = KILN_LAYOUT_C;
    else if (contig_at == 0)
        t->layout = KILN_LAYOUT_F;
    else {
        error_at(p->C, sp, "mark the first (F) or the last (C) dimension with ::1",
                 "::1 must be on the first or the last dimension");
        return false;
    }
    return true;
}

int parse_signature(Compiler *C, const SrcFile *f, kiln_argtype *ret, kiln_argtype *args,
                    int max_args, bool *wrote_void) {
    Parser P;
    memset(&P, 0, sizeof P);
    Parser *p = &P;
    p->C = C;
    p->L = lex_open(C, f);
    advance(p);
    bool is_void = true;
    memset(ret, 0, sizeof *ret);
    ret->dtype = KILN_NDTYPES;
    if (wrote_void) *wrote_void = false;
    if (!is_op(p, OP_LPAR)) {
        Span rsp = tok_span(&p->tok);
        if (!parse_sig_type(p, ret, true, &is_void)) return -1;
        if (ret->is_array || ret->layout == KILN_LAYOUT_PTR) {
            error_at(C, rsp, "return scalars; write arrays through arguments",
                     "functions cannot return %s", ret->is_array ? "arrays" : "pointers");
            return -1;
        }
        if (wrote_void) *wrote_void = is_void;
    }
    if (!parse_expect_op(p, OP_LPAR)) return -1;
    int n = 0;
    while (!is_op(p, OP_RPAR)) {
        kiln_argtype t;
        if (!parse_sig_type(p, &t, false, NULL)) return -1;
        if (n >= max_args) {
            error_at(C, tok_span(&p->tok), NULL,
                     "too many arguments in signature: kernels take at most %d", max_args);
            return -1;
        }
        args[n++] = t;
        if (!accept_op(p, OP_COMMA)) break;
    }
    if (!parse_expect_op(p, OP_RPAR)) return -1;
    if (p->tok.kind == TK_NEWLINE) advance(p);
    if (p->tok.kind != TK_EOF) {
        parse_unexpected(p, "the end of the signature");
        return -1;
    }
    return n;
}
