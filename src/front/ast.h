/* ast.h: tokens and the syntax tree of the kernel language.
 *
 * The tree mirrors Python's own (ast.Name, ast.BinOp, ...) for the subset
 * LANGUAGE.md admits, with a source span on every node.  The front end builds
 * it; sema annotates it in place (the fields under "sema"), which makes the
 * annotated tree kiln's typed IR: every expression has a type, every operation
 * the type its operands are converted to, every name its symbol.  The emitters
 * only read it.
 */
#ifndef KILN_AST_H
#define KILN_AST_H

#include "compiler.h"

/* ---- tokens ---------------------------------------------------------------- */

typedef enum TokKind {
    TK_EOF,
    TK_NEWLINE,
    TK_INDENT,
    TK_DEDENT,
    TK_NAME,
    TK_KEYWORD,
    TK_INT,
    TK_FLOAT,
    TK_IMAG,
    TK_STRING,
    TK_OP,
    TK_ERROR /* the lexer reported an error; the parser stops */
} TokKind;

typedef enum Keyword {
    KW_FALSE, KW_NONE, KW_TRUE, KW_AND, KW_AS, KW_ASSERT, KW_ASYNC, KW_AWAIT, KW_BREAK,
    KW_CLASS, KW_CONTINUE, KW_DEF, KW_DEL, KW_ELIF, KW_ELSE, KW_EXCEPT, KW_FINALLY, KW_FOR,
    KW_FROM, KW_GLOBAL, KW_IF, KW_IMPORT, KW_IN, KW_IS, KW_LAMBDA, KW_NONLOCAL, KW_NOT,
    KW_OR, KW_PASS, KW_RAISE, KW_RETURN, KW_TRY, KW_WHILE, KW_WITH, KW_YIELD, KW_COUNT
} Keyword;

typedef enum Op {
    OP_LPAR, OP_RPAR, OP_LSQB, OP_RSQB, OP_LBRACE, OP_RBRACE, OP_COLON, OP_COMMA, OP_SEMI,
    OP_DOT, OP_ELLIPSIS, OP_ARROW, OP_WALRUS, OP_ASSIGN, OP_AT,
    /* binary operators, in the order of BinOp below */
    OP_PLUS, OP_MINUS, OP_STAR, OP_SLASH, OP_DSLASH, OP_PERCENT, OP_DSTAR, OP_LSHIFT,
    OP_RSHIFT, OP_AMP, OP_PIPE, OP_CARET,
    /* augmented assignment, same order */
    OP_PLUSEQ, OP_MINUSEQ, OP_STAREQ, OP_SLASHEQ, OP_DSLASHEQ, OP_PERCENTEQ, OP_DSTAREQ,
    OP_LSHIFTEQ, OP_RSHIFTEQ, OP_AMPEQ, OP_PIPEEQ, OP_CARETEQ, OP_ATEQ,
    OP_TILDE, OP_LT, OP_GT, OP_LE, OP_GE, OP_EQ, OP_NE, OP_COUNT
} Op;

typedef struct Token {
    uint8_t kind; /* TokKind */
    uint8_t op;   /* Op for TK_OP, Keyword for TK_KEYWORD */
    bool big;     /* TK_INT: the value does not fit in int64 (it fits uint64) */
    Span sp;
    const char *text; /* TK_NAME beyond ASCII: its NFKC form (arena); NULL: the span's text */
    union {
        uint64_t ival; /* TK_INT */
        double fval;   /* TK_FLOAT, TK_IMAG (the imaginary part) */
    };
} Token;

typedef struct Lexer Lexer;

/* Starts lexing f at its beginning; the indentation of the first line is the
 * base level, and a line indented less ends the input. */
Lexer *lex_open(Compiler *C, const SrcFile *f);
Token lex_next(Lexer *L);
const char *tok_describe(Compiler *C, const Token *t); /* "name 'x'", "'+'" ... */
extern const char *const kw_names[KW_COUNT];
extern const char *const op_names[OP_COUNT];

/* ---- the tree ------------------------------------------------------------- */

typedef enum NodeKind {
    /* expressions */
    E_NAME, E_INT, E_FLOAT, E_BOOL, E_NONE, E_STR, E_BINOP, E_UNARY, E_BOOLOP, E_COMPARE,
    E_IFEXP, E_CALL, E_SUBSCRIPT, E_ATTR, E_TUPLE, E_SLICE, E_IMAG,
    /* statements */
    S_EXPR, S_ASSIGN, S_AUGASSIGN, S_IF, S_WHILE, S_FOR, S_BREAK, S_CONTINUE, S_RETURN, S_PASS,
    S_ASSERT, S_DEF
} NodeKind;

typedef enum BinOp {
    B_ADD, B_SUB, B_MUL, B_DIV, B_FLOORDIV, B_MOD, B_POW, B_LSHIFT, B_RSHIFT, B_AND, B_OR,
    B_XOR
} BinOp;
typedef enum UnOp { U_NEG, U_POS, U_INVERT, U_NOT } UnOp;
typedef enum BoolOp { BO_AND, BO_OR } BoolOp;
/* C_IS and C_ISNOT leave sema only inside constant nodes (NF_CONST) or turned into
 * C_EQ/C_NE (bools): later passes never see them. */
typedef enum CmpOp { C_LT, C_LE, C_GT, C_GE, C_EQ, C_NE, C_IS, C_ISNOT } CmpOp;

typedef struct Node Node;
typedef struct Type Type;
typedef struct Sym Sym;
typedef struct Intrinsic Intrinsic;
typedef struct FuncSpec FuncSpec;
struct GVal;

typedef struct NodeList {
    Node **v;
    int n;
} NodeList;

typedef struct Param {
    const char *name;
    Span sp;
    Node *deflt; /* default value expression, or NULL */
} Param;

/* A compile-time value (folded literal, frozen global). */
typedef union ConstVal {
    int64_t i;
    uint64_t u;
    double f;
} ConstVal;

enum NodeFlags {
    NF_CONST = 1,     /* sema: cval holds the value */
    NF_NONNEG = 2,    /* sema: an integer value known to be >= 0 */
    NF_PAREN = 4,     /* parser: written in parentheses */
    NF_DOCSTRING = 8, /* parser: a string statement that is a docstring */
    NF_BOUNDED = 16,  /* sema: with NF_NONNEG, the value is at most nnhi */
    NF_STAR = 32,     /* parser: a call's argument written *t, which sema unpacks */
    NF_PROVISIONAL = 64, /* sema: with NF_CONST, a value a later pass may still change
                          * (`x is None` of a local not yet known to hold a result that
                          * may be None): no branch is dead for it before the last pass */
    NF_PYINT = 128,      /* sema: with NF_CONST, a Python int (a literal, or operations on
                          * them folded exactly): uint64-typed when in [2**63, 2**64) */
    NF_NESTED_CALL = 256, /* sema: the callee name of a call to a function defined inside the
                           * calling function (nested.c), its captured variables appended */
    NF_BUILTIN = 512,     /* a name for_iter.c wrote (len, min, range, int): Python's builtin
                           * whatever the function's scope binds to it */
    NF_UNBOUND = 1024     /* sema (syms.c): a local's use that a path from the entry without
                           * an assignment may reach; unbound.c checks it at run time */
};

struct Node {
    uint8_t kind;   /* NodeKind */
    uint8_t op;     /* BinOp, UnOp, BoolOp; for S_AUGASSIGN the BinOp */
    uint16_t flags; /* NodeFlags */
    uint16_t depth; /* parser: levels of the expression tree below and at this
                     * node (a leaf is 1), at most KILN_MAX_EXPR_DEPTH */
    Span sp;
    union {
        struct { const char *id; } name;                           /* E_NAME */
        struct { uint64_t v; bool big; } ilit;                     /* E_INT */
        double flit;                                               /* E_FLOAT, E_IMAG */
        bool blit;                                                 /* E_BOOL */
        struct { Node *l, *r; } bin;                               /* E_BINOP, E_BOOLOP */
        struct { Node *x; } un;                                    /* E_UNARY */
        struct {
            NodeList operands;
            uint8_t *ops;
            const Type **optys; /* sema: per comparison; NULL entry: exact mixed-sign */
        } cmp;                                                     /* E_COMPARE: n-1 ops */
        struct { Node *cond, *then, *orelse; } ifexp;             /* E_IFEXP */
        struct {
            Node *fn;
            NodeList args;
            NodeList kwvals;
            const char **kwnames;
            NodeList bound; /* sema: arguments in parameter order, defaults filled in */
        } call;                                                    /* E_CALL */
        struct { Node *base; NodeList idx; } sub;                  /* E_SUBSCRIPT */
        struct { Node *base; const char *attr; Span attr_sp; } attr; /* E_ATTR */
        NodeList tuple;                                            /* E_TUPLE */
        struct { Node *lo, *hi, *step; } slice;                    /* E_SLICE */
        struct {
            Node *expr;
            struct UfuncStmt *uf; /* sema: a ufunc call with an output array (ufunc_stmt.c) */
        };                                                         /* S_EXPR */
        struct { NodeList targets; Node *value; } assign;          /* S_ASSIGN: t1 = t2 = v */
        struct { Node *target; Node *value; } aug;                 /* S_AUGASSIGN */
        struct { Node *cond; NodeList body, orelse; } ifs;        /* S_IF, S_WHILE */
        struct {
            Node *target, *iter;
            NodeList body, orelse;
            Node *orig; /* sema: the iterable for_iter.c rewrote, or NULL */
            Node *dead; /* sema: a refused iterable's loop target, whose names stay quiet */
        } fors;                                                    /* S_FOR */
        struct { Node *value; } ret;                               /* S_RETURN */
        struct {
            Node *test, *msg;
            Node *exc;        /* `raise exc` (test is False): the class or its call */
            const char *site; /* sema: the raise site's fields (sema_raise.c) */
        } assrt;                                                   /* S_ASSERT, raise */
        struct {
            const char *name;
            Param *params;
            int nparams;
            NodeList body;
            Span name_sp;
        } def;                                                     /* S_DEF */
    };
    /* ---- sema ---- */
    const Type *ty;         /* the expression's type */
    const Type *opty;       /* operands are converted to this for the operation */
    Sym *sym;               /* E_NAME, S_FOR target: the local variable */
    const Intrinsic *intr;  /* E_CALL/E_ATTR/E_NAME: the builtin or intrinsic */
    FuncSpec *callee;       /* E_CALL: the device function specialisation */
    const struct ExternFn *ext; /* E_CALL: an external CUDA device function (sema.h) */
    ConstVal cval;          /* with NF_CONST */
    uint64_t nnhi;          /* with NF_BOUNDED: an upper bound (src/sema/bounds.c) */
    const struct GVal *gv;  /* E_NAME/E_ATTR of a frozen tuple global */
    int id;                 /* sema: a number unique in the function (temporaries) */
};

Node *node_new(Compiler *C, NodeKind k, Span sp);

/* The `elif` of an if statement: its else branch when that is one if
 * statement, else NULL.  Passes walk elif chains with a loop, so a chain of
 * any length costs no stack. */
static inline Node *elif_of(const Node *n) {
    if (n->kind != S_IF || n->ifs.orelse.n != 1 || n->ifs.orelse.v[0]->kind != S_IF) return NULL;
    return n->ifs.orelse.v[0];
}
void nodelist_push(Compiler *C, NodeList *l, Node *n, int *cap);

/* Parses the function that starts at the first line of f (decorators, then
 * `def`).  Returns the S_DEF node, or NULL after reporting errors. */
Node *parse_function(Compiler *C, const SrcFile *f);

/* Parses a signature "ret(arg, ...)" into types; see kiln_parse_signature. */
/* parse_expr.c: a op b (a BinOp) of Python ints, exactly, in 128 bits, as CPython folds
 * constants (the parser's literals, sema's constants): AST_INT_OK with *out, or why not. */
typedef __int128 ast_i128;
enum { AST_INT_OK, AST_INT_BIG, AST_INT_ZERODIV, AST_INT_NEGSHIFT, AST_INT_NEGPOW,
       AST_INT_NOT_FOLDED };
int ast_int_binop(int op, ast_i128 a, ast_i128 b, ast_i128 *out);

/* parse_expr.c: whether reading an expression twice reads one value (no call in it),
 * and a fresh copy of such an expression, for rewrites that read an operand more than
 * once (`in`, divmod, tuple comparisons, slices and joins) */
bool ast_is_pure(const Node *n, int depth);
Node *ast_copy_pure(Compiler *C, const Node *n);

/* parse.c: a signature's text; *wrote_void (may be NULL): its return type was written
 * `void` (not left out) */
int parse_signature(Compiler *C, const SrcFile *f, kiln_argtype *ret, kiln_argtype *args,
                    int max_args, bool *wrote_void);

#endif
