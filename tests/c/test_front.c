/* test_front.c: lexer, parser and signature tests. */
#include <stdlib.h>

#include "front/ast.h"
#include "test.h"
#include "util.h"

static Compiler *new_compiler(kiln_ctx **ctx) {
    *ctx = kiln_ctx_new();
    Compiler *C = calloc(1, sizeof *C);
    compiler_init(C, *ctx);
    return C;
}

static void free_compiler(Compiler *C, kiln_ctx *ctx) {
    compiler_free(C);
    free(C);
    kiln_ctx_free(ctx);
}

static SrcFile *src(Compiler *C, const char *text) {
    SrcFile *f = arena_alloc(&C->arena, sizeof *f);
    f->name = "t.py";
    f->text = arena_strdup(&C->arena, text);
    f->len = strlen(text);
    f->first_line = 1;
    return f;
}

static char diag_text[8192];
static void collect(void *ud, const kiln_diag *d) {
    (void)ud;
    strncat(diag_text, d->formatted, sizeof diag_text - strlen(diag_text) - 2);
    strcat(diag_text, "\n");
}

TEST(lex_numbers) {
    kiln_ctx *ctx;
    Compiler *C = new_compiler(&ctx);
    Lexer *L = lex_open(C, src(C, "0x1F 0o17 0b101 1_000 2.5e3 .5 7. 1e-2 3j 18446744073709551615\n"));
    Token t = lex_next(L);
    CHECK(t.kind == TK_INT && t.ival == 31);
    t = lex_next(L);
    CHECK(t.kind == TK_INT && t.ival == 15);
    t = lex_next(L);
    CHECK(t.kind == TK_INT && t.ival == 5);
    t = lex_next(L);
    CHECK(t.kind == TK_INT && t.ival == 1000);
    t = lex_next(L);
    CHECK(t.kind == TK_FLOAT && t.fval == 2500.0);
    t = lex_next(L);
    CHECK(t.kind == TK_FLOAT && t.fval == 0.5);
    t = lex_next(L);
    CHECK(t.kind == TK_FLOAT && t.fval == 7.0);
    t = lex_next(L);
    CHECK(t.kind == TK_FLOAT && t.fval == 0.01);
    t = lex_next(L);
    CHECK(t.kind == TK_IMAG);
    t = lex_next(L);
    CHECK(t.kind == TK_INT && t.big && t.ival == UINT64_MAX);
    t = lex_next(L);
    CHECK(t.kind == TK_NEWLINE);
    free_compiler(C, ctx);
}

TEST(lex_indent_and_joining) {
    kiln_ctx *ctx;
    Compiler *C = new_compiler(&ctx);
    const char *text = "def f(a,\n      b):\n    x = (1 +\n  2)  # c\n\n    y = \\\n 3\n";
    Lexer *L = lex_open(C, src(C, text));
    int kinds[64], n = 0;
    for (;;) {
        Token t = lex_next(L);
        kinds[n++] = t.kind;
        if (t.kind == TK_EOF || n == 63) break;
    }
    /* def f ( a , b ) : NL INDENT x = ( 1 + 2 ) NL y = 3 NL DEDENT EOF */
    int want[] = {TK_KEYWORD, TK_NAME, TK_OP, TK_NAME, TK_OP, TK_NAME, TK_OP, TK_OP, TK_NEWLINE,
                  TK_INDENT, TK_NAME, TK_OP, TK_OP, TK_INT, TK_OP, TK_INT, TK_OP, TK_NEWLINE,
                  TK_NAME, TK_OP, TK_INT, TK_NEWLINE, TK_DEDENT, TK_EOF};
    CHECK(n == (int)(sizeof want / sizeof *want));
    for (int i = 0; i < n && i < (int)(sizeof want / sizeof *want); i++) CHECK(kinds[i] == want[i]);
    free_compiler(C, ctx);
}

TEST(lex_strings_and_errors) {
    kiln_ctx *ctx;
    Compiler *C = new_compiler(&ctx);
    kiln_ctx_set_diag(ctx, collect, NULL);
    diag_text[0] = 0;
    Lexer *L = lex_open(C, src(C, "'''doc\nstring''' r'\\d' b\"x\" f'{a}'\n"));
    for (int i = 0; i < 4; i++) CHECK(lex_next(L).kind == TK_STRING);
    CHECK(lex_next(L).kind == TK_NEWLINE);
    L = lex_open(C, src(C, "x = 'abc\n"));
    lex_next(L);
    lex_next(L);
    CHECK(lex_next(L).kind == TK_ERROR);
    CHECK_CONTAINS(diag_text, "t.py:1:5: error: unterminated string literal");
    diag_text[0] = 0;
    L = lex_open(C, src(C, "x = 007\n"));
    lex_next(L);
    lex_next(L);
    CHECK(lex_next(L).kind == TK_ERROR);
    CHECK_CONTAINS(diag_text, "leading zeros");
    free_compiler(C, ctx);
}

TEST(lex_stops_at_dedent_below_base) {
    kiln_ctx *ctx;
    Compiler *C = new_compiler(&ctx);
    /* a nested def: the function ends where the enclosing block resumes */
    const char *text = "    def k(a):\n        a[0] = 1\n    x = $$$ not python\n";
    SrcFile *f = src(C, text);
    Node *fn = parse_function(C, f);
    CHECK(fn != NULL);
    CHECK(fn && fn->def.body.n == 1);
    const char *text2 = "    def k(a):\n        a[0] = 1\nx = $$$\n";
    fn = parse_function(C, src(C, text2));
    CHECK(fn != NULL);
    free_compiler(C, ctx);
}

static Node *parse1(Compiler *C, const char *text) { return parse_function(C, src(C, text)); }

TEST(parse_precedence) {
    kiln_ctx *ctx;
    Compiler *C = new_compiler(&ctx);
    Node *fn = parse1(C, "def f(a, b):\n    return -a ** 2 + b * 3 << 1 | b & a\n");
    CHECK(fn != NULL);
    Node *r = fn->def.body.v[0]->ret.value;
    /* | is lowest: (((-(a**2)) + (b*3)) << 1) | (b & a) */
    CHECK(r->kind == E_BINOP && r->op == B_OR);
    CHECK(r->bin.r->kind == E_BINOP && r->bin.r->op == B_AND);
    Node *sh = r->bin.l;
    CHECK(sh->kind == E_BINOP && sh->op == B_LSHIFT);
    Node *add = sh->bin.l;
    CHECK(add->kind == E_BINOP && add->op == B_ADD);
    CHECK(add->bin.l->kind == E_UNARY && add->bin.l->op == U_NEG);
    CHECK(add->bin.l->un.x->kind == E_BINOP && add->bin.l->un.x->op == B_POW);
    /* integer literals fold as CPython folds them, exactly: 2**64 - 1 passes 64 bits on
     * the way; 2**64 alone is left for sema to report; -(2**63) a negated literal */
    fn = parse1(C, "def f(a):\n    return 2**64 - 1\n");
    r = fn ? fn->def.body.v[0]->ret.value : NULL;
    CHECK(r && r->kind == E_INT && r->ilit.v == UINT64_MAX && r->ilit.big);
    fn = parse1(C, "def f(a):\n    return 2**64\n");
    r = fn ? fn->def.body.v[0]->ret.value : NULL;
    CHECK(r && r->kind == E_BINOP && r->op == B_POW);
    fn = parse1(C, "def f(a):\n    return -(2**63) + (7 // -2) * 0\n");
    r = fn ? fn->def.body.v[0]->ret.value : NULL;
    CHECK(r && r->kind == E_UNARY && r->op == U_NEG && r->un.x->kind == E_INT &&
          r->un.x->ilit.v == (uint64_t)1 << 63);
    fn = parse1(C, "def f(a, b, c):\n    return a < b <= c and not a or b if c else a\n");
    r = fn->def.body.v[0]->ret.value;
    CHECK(r->kind == E_IFEXP);
    CHECK(r->ifexp.then->kind == E_BOOLOP && r->ifexp.then->op == BO_OR);
    Node *andn = r->ifexp.then->bin.l;
    CHECK(andn->kind == E_BOOLOP && andn->op == BO_AND);
    CHECK(andn->bin.l->kind == E_COMPARE && andn->bin.l->cmp.operands.n == 3);
    free_compiler(C, ctx);
}

TEST(parse_statements) {
    kiln_ctx *ctx;
    Compiler *C = new_compiler(&ctx);
    const char *text =
        "@kiln.jit('void(float32[:])',\n"
        "          fastmath=True)\n"
        "def k(a):\n"
        "    \"\"\"doc\"\"\"\n"
        "    i, j = kiln.grid(2)\n"
        "    x: float = 1.0\n"
        "    a[i, j] += x; a[i][j] = 2\n"
        "    for t in range(0, 10, 2):\n"
        "        if t > 4: break\n"
        "        elif t: continue\n"
        "        else:\n"
        "            pass\n"
        "    else:\n"
        "        x = 3\n"
        "    while x < 10: x *= 2\n"
        "    assert x, 'msg'\n"
        "    s = a[1:, ::2]\n"
        "    return\n";
    Node *fn = parse1(C, text);
    CHECK(fn != NULL);
    if (!fn) {
        free_compiler(C, ctx);
        return;
    }
    CHECK_STR(fn->def.name, "k");
    NodeList *b = &fn->def.body;
    CHECK(b->n == 10);
    CHECK(b->v[0]->flags & NF_DOCSTRING);
    CHECK(b->v[1]->kind == S_ASSIGN && b->v[1]->assign.targets.v[0]->kind == E_TUPLE);
    CHECK(b->v[2]->kind == S_ASSIGN);
    CHECK(b->v[3]->kind == S_AUGASSIGN && b->v[3]->aug.target->sub.idx.n == 2);
    CHECK(b->v[5]->kind == S_FOR && b->v[5]->fors.orelse.n == 1);
    CHECK(b->v[8]->kind == S_ASSIGN && b->v[8]->assign.value->sub.idx.v[1]->kind == E_SLICE);
    CHECK(b->v[5]->sp.line == 8);
    free_compiler(C, ctx);
}

TEST(parse_rejects_with_hints) {
    static const struct {
        const char *body;
        const char *msg;
    } cases[] = {
        {"    x = [1, 2]\n", "t.py:2:9: error: lists are not supported in kernels"},
        {"    x = {1: 2}\n", "dicts and sets are not supported"},
        {"    try:\n        pass\n    except E:\n        pass\n", "try statements are not supported"},
        {"    with a:\n        pass\n", "with statements are not supported"},
        {"    g(lambda x: x)\n", "lambda is not supported"}, /* `f = lambda` is a def */
        {"    f, h = lambda x: x, 1\n", "lambda is not supported"},
        {"    global n\n", "global and nonlocal are not supported"},
        {"    import math\n", "import is not supported"},
        {"    raise\n", "a bare raise (re-raising) is not supported"},
        {"    raise ValueError from e\n", "raise ... from ... is not supported"},
        {"    if a in b:\n        pass\n", "'in' works with a tuple written out"},
        {"    x = [i for i in range(3)]\n", "lists are not supported"},
        {"    yield 1\n", "yield is not supported"},
        {"    del a\n", "del is not supported"},
        {"    if (n := 3):\n        pass\n", "assignment expressions"},
        {"    a @ a\n", "the matrix operator"},
        {"    class C:\n        pass\n", "classes are not supported"},
        {"    f(**a)\n", "**kwargs are not supported"},
        {"    f(x=1, *a)\n", "*t after keyword arguments"},
    };
    kiln_ctx *ctx;
    Compiler *C = new_compiler(&ctx);
    kiln_ctx_set_diag(ctx, collect, NULL);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        diag_text[0] = 0;
        char text[512];
        snprintf(text, sizeof text, "def k(a):\n%s", cases[i].body);
        Node *fn = parse1(C, text);
        CHECK(fn == NULL);
        CHECK_CONTAINS(diag_text, cases[i].msg);
        CHECK_CONTAINS(diag_text, "^");
    }
    diag_text[0] = 0;
    parse1(C, "def k(a):\n    x = [1, 2]\n");
    CHECK_CONTAINS(diag_text, "hint: preallocate an array: kiln.local.array(n, kiln.float32)");
    CHECK_CONTAINS(diag_text, "    x = [1, 2]\n            ^");
    free_compiler(C, ctx);
}

TEST(parse_reports_several_errors) {
    kiln_ctx *ctx;
    Compiler *C = new_compiler(&ctx);
    kiln_ctx_set_diag(ctx, collect, NULL);
    diag_text[0] = 0;
    Node *fn = parse1(C, "def k(a):\n    x = [1]\n    y = {}\n    z = 1 +\n    return\n");
    CHECK(fn == NULL);
    CHECK_CONTAINS(diag_text, "t.py:2:");
    CHECK_CONTAINS(diag_text, "t.py:3:");
    CHECK_CONTAINS(diag_text, "t.py:4:");
    free_compiler(C, ctx);
}

TEST(signature_parse) {
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_argtype ret, a[8];
    int n = kiln_parse_signature(ctx, "void(float32[::1], f8[:, :], int64, uint8[::1, :], float32[:, ::1])",
                                 &ret, a, 8);
    CHECK(n == 5);
    CHECK(ret.dtype == KILN_NDTYPES);
    CHECK(a[0].is_array && a[0].dtype == KILN_FLOAT32 && a[0].ndim == 1 && a[0].layout == 'C');
    CHECK(a[1].is_array && a[1].dtype == KILN_FLOAT64 && a[1].ndim == 2 && a[1].layout == 'A');
    CHECK(!a[2].is_array && a[2].dtype == KILN_INT64);
    CHECK(a[3].layout == 'F' && a[4].layout == 'C');
    n = kiln_parse_signature(ctx, "float32(float32, float32)", &ret, a, 8);
    CHECK(n == 2 && ret.dtype == KILN_FLOAT32 && !ret.is_array);
    n = kiln_parse_signature(ctx, "(int32[:],)", &ret, a, 8);
    CHECK(n == 1);
    diag_text[0] = 0;
    kiln_ctx_set_diag(ctx, collect, NULL);
    CHECK(kiln_parse_signature(ctx, "void(floot32[:])", &ret, a, 8) < 0);
    CHECK_CONTAINS(diag_text, "<signature>:1:6: error: unknown type 'floot32'");
    CHECK(kiln_parse_signature(ctx, "void(float32[:, ::1, :])", &ret, a, 8) < 0);
    char buf[64];
    kiln_argtype t = {1, KILN_INT16, 2, 'F'};
    kiln_argtype_format(&t, buf, sizeof buf);
    CHECK_STR(buf, "int16[::1, :]");
    kiln_ctx_free(ctx);
}

/* ---- limits: every input compiles in linear time and memory, or is refused
 * with an error naming the limit (docs/limits.md) ------------------------------ */

/* A kernel "def k(a, x):\n    a[0] = PRE * n + mid + POST * n\n". */
static char *nested(const char *pre, const char *mid, const char *post, int n) {
    size_t lp = strlen(pre), lm = strlen(mid), lq = strlen(post);
    char *s = malloc(64 + (lp + lq) * (size_t)n + lm);
    char *p = s + sprintf(s, "def k(a, x):\n    a[0] = ");
    for (int i = 0; i < n; i++, p += lp) memcpy(p, pre, lp);
    memcpy(p, mid, lm);
    p += lm;
    for (int i = 0; i < n; i++, p += lq) memcpy(p, post, lq);
    strcpy(p, "\n");
    return s;
}

/* Each of these overflowed the C stack at 10,000 levels (the extension and
 * `kiln compile` crashed); now each is refused at the level the limit names,
 * with file:line:col and a caret. */
TEST(translate_refuses_deep_nesting) {
    static const struct {
        const char *pre, *mid, *post, *limit;
    } cases[] = {
        {"(", "x", ")", "KILN_MAX_NESTING"},
        {"a[", "0", "]", "KILN_MAX_NESTING"},
        {"-", "x", "", "KILN_MAX_NESTING"},
        {"not ", "x", "", "KILN_MAX_NESTING"},
        {"~", "1", "", "KILN_MAX_NESTING"},
        {"abs(", "x", ")", "KILN_MAX_NESTING"},
        {"x ** ", "x", "", "KILN_MAX_NESTING"},
        {"x if x else ", "x", "", "KILN_MAX_NESTING"},
        {"x + ", "x", "", "KILN_MAX_EXPR_DEPTH"},
        {"x or ", "x", "", "KILN_MAX_EXPR_DEPTH"},
        {"", "x", " < x", NULL}, /* a comparison chain is flat: it compiles */
    };
    for (size_t i = 0; i < COUNTOF(cases); i++) {
        char *src = nested(cases[i].pre, cases[i].mid, cases[i].post, 10000);
        TResult *r = tr(src, "void(float64[:], float64)", KILN_TARGET_CPU);
        /* the message comes first; the source line after it is 10,000 long */
        char head[200];
        memcpy(head, r->diags, sizeof head - 1);
        head[sizeof head - 1] = 0;
        if (!cases[i].limit) {
            CHECK(r->prog != NULL);
        } else {
            CHECK(r->prog == NULL && r->nerrors == 1);
            CHECK(strncmp(head, "k.py:2:", 7) == 0 && strstr(head, cases[i].limit));
            if (!strstr(head, cases[i].limit)) fprintf(stderr, "    case %zu: %s\n", i, head);
        }
        tr_free(r);
        free(src);
    }
    /* at the limits: 200 parentheses (as CPython), a 999-term sum */
    char *src = nested("(", "x", ")", 200);
    TResult *r = tr(src, "void(float64[:], float64)", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    tr_free(r);
    free(src);
    src = nested("", "x", " + x", 998);
    r = tr(src, "void(float64[:], float64)", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    tr_free(r);
    free(src);
    /* blocks nest at most KILN_MAX_INDENT deep */
    char *deep = malloc(200 * 210);
    char *p = deep + sprintf(deep, "def k(a, x):\n");
    for (int i = 1; i <= 150; i++) p += sprintf(p, "%*sif x > %d:\n", i, "", i);
    sprintf(p, "%*sa[0] = x\n", 151, "");
    r = tr(deep, "void(float64[:], float64)", KILN_TARGET_CPU);
    CHECK(r->prog == NULL);
    CHECK_CONTAINS(r->diags, "too many levels of indentation");
    CHECK_CONTAINS(r->diags, "KILN_MAX_INDENT");
    tr_free(r);
    free(deep);
}

/* An elif chain nests in the tree (as in Python's AST) but costs no stack:
 * 100,000 branches compile (the recursive passes needed some 50 MiB). */
TEST(translate_long_elif_chain) {
    enum { N = 100000 };
    char *s = malloc((size_t)N * 64 + 128);
    char *p = s + sprintf(s, "def k(a, x):\n    if x == 0:\n        a[0] = 0\n");
    for (int i = 1; i < N; i++) p += sprintf(p, "    elif x == %d:\n        a[0] = %d\n", i, i);
    sprintf(p, "    else:\n        a[0] = -1\n");
    TResult *r = tr(s, "void(int64[:], int64)", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    if (r->prog) {
        size_t len;
        const char *code = kiln_program_source(r->prog, &len);
        CHECK_CONTAINS(code, "} else\n");
        CHECK(len < (size_t)N * 200);
    }
    tr_free(r);
    free(s);
}

/* The arena's limit (or malloc) failing anywhere in a translation unwinds to
 * compiler_run: the arena is freed whole and the error names the function's
 * place; before, the arena called abort(). */
static int parse_body(Compiler *C, void *arg) {
    return parse_function(C, src(C, arg)) ? 0 : -1;
}

TEST(translate_out_of_memory_unwinds) {
    enum { N = 20000 };
    char *text = malloc((size_t)N * 24 + 64);
    char *p = text + sprintf(text, "def k(a, x):\n");
    for (int i = 0; i < N; i++) p += sprintf(p, "    x = x + %d\n", i);
    kiln_ctx *ctx;
    Compiler *C = new_compiler(&ctx);
    kiln_ctx_set_diag(ctx, collect, NULL);
    diag_text[0] = 0;
    C->arena.limit = 1 << 20;
    CHECK(compiler_run(C, parse_body, text, "big.py", 7) == -1);
    CHECK(C->arena.held == 0 && C->arena.head == NULL);
    CHECK_CONTAINS(diag_text, "big.py:7:1: error: out of memory compiling this function");
    CHECK_CONTAINS(diag_text, "KILN_MAX_ARENA_BYTES");
    /* the same Compiler works again with room */
    C->arena.limit = 0;
    diag_text[0] = 0;
    CHECK(compiler_run(C, parse_body, text, "big.py", 7) == 0);
    CHECK_STR(diag_text, "");
    free_compiler(C, ctx);
    free(text);
}

/* Non-ASCII names are what Python makes of them (NFKC), through the
 * context's normalizer; without one (the CLI) they are refused, not
 * compiled as a second variable that Python would not have. */
static int fake_nfkc(void *ud, const char *name, size_t len, char **out) {
    (void)ud;
    if (len == 3 && memcmp(name, "\xef\xac\x81", 3) == 0) { /* U+FB01, the fi ligature */
        *out = strdup("fi");
        return 0;
    }
    return 1;
}

TEST(lex_non_ascii_names_are_normalised) {
    kiln_ctx *ctx;
    Compiler *C = new_compiler(&ctx);
    kiln_ctx_set_diag(ctx, collect, NULL);
    const char *text = "def k(a):\n    fi = 1\n    \xef\xac\x81 = 2\n    a[0] = fi\n";
    diag_text[0] = 0;
    CHECK(parse1(C, text) == NULL);
    CHECK_CONTAINS(diag_text, "t.py:3:5: error: non-ASCII identifier '\xef\xac\x81'");
    kiln_ctx_set_normalize(ctx, fake_nfkc, NULL);
    diag_text[0] = 0;
    Node *fn = parse1(C, text);
    CHECK(fn != NULL);
    if (fn) CHECK_STR(fn->def.body.v[1]->assign.targets.v[0]->name.id, "fi");
    diag_text[0] = 0;
    CHECK(parse1(C, "def k(a):\n    x\xe2\x86\x92y = 2\n") == NULL);
    CHECK_CONTAINS(diag_text, "t.py:2:5: error: invalid character in identifier 'x\xe2\x86\x92y'");
    free_compiler(C, ctx);
}
