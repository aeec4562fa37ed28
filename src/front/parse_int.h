/* parse_int.h: the parser's state and its token helpers, shared by parse.c
 * (statements, functions, signatures and the nesting limits) and parse_expr.c
 * (expressions).  Private to src/front/. */
#ifndef KILN_PARSE_INT_H
#define KILN_PARSE_INT_H

#include "ast.h"

typedef struct Parser {
    Compiler *C;
    Lexer *L;
    Token tok;      /* current token */
    Token ahead;    /* the one after, when have_ahead */
    bool have_ahead;
    bool lex_failed;
    int depth;      /* recursive descents now open (parse_nest_enter), <= KILN_MAX_NESTING */
    bool too_deep;  /* a nesting limit was reported: one error per function */
} Parser;

#define TRY(x)                 \
    do {                       \
        if (!(x)) return NULL; \
    } while (0)

static inline void advance(Parser *p) {
    if (p->have_ahead) {
        p->tok = p->ahead;
        p->have_ahead = false;
    } else {
        p->tok = lex_next(p->L);
    }
    if (p->tok.kind == TK_ERROR) p->lex_failed = true;
}

static inline const Token *peek(Parser *p) {
    if (!p->have_ahead) {
        p->ahead = lex_next(p->L);
        p->have_ahead = true;
    }
    return &p->ahead;
}

static inline bool is_op(const Parser *p, Op op) {
    return p->tok.kind == TK_OP && p->tok.op == op;
}
static inline bool is_kw(const Parser *p, Keyword k) {
    return p->tok.kind == TK_KEYWORD && p->tok.op == k;
}
static inline bool accept_op(Parser *p, Op op) {
    if (!is_op(p, op)) return false;
    advance(p);
    return true;
}

static inline Span tok_span(const Token *t) {
    Span s = t->sp;
    if (s.len == 0) s.len = 1;
    return s;
}

/* ---- parse.c ---- */
const char *parse_tok_text(Parser *p, const Token *t);
/* Reports an unexpected token (unless the lexer already reported); NULL. */
void *parse_unexpected(Parser *p, const char *expected);
bool parse_expect_op(Parser *p, Op op);
/* Reports msg (with hint) at sp; NULL. */
void *parse_reject(Parser *p, Span sp, const char *hint, const char *msg);
/* Opens one level of recursive descent; false (reported) past KILN_MAX_NESTING.  Every
 * true is paired with parse_nest_leave. */
bool parse_nest_enter(Parser *p);
void parse_nest_leave(Parser *p);
/* Sets the depth of a new expression node from its operands; NULL (reported) past
 * KILN_MAX_EXPR_DEPTH. */
Node *parse_deep(Parser *p, Node *n);

/* ---- parse_expr.c ---- */
bool parse_starts_expr(const Parser *p);
Node *parse_expr(Parser *p);      /* an operator expression, below comparisons */
Node *parse_or_test(Parser *p);   /* `or` and below */
Node *parse_test(Parser *p);      /* a conditional expression and below */
Node *parse_testlist(Parser *p);  /* a test, or a tuple of them without parentheses */

#endif
