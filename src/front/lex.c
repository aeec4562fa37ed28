/* lex.c: Python tokens from a kernel's source text.
 *
 * The lexer is pulled one token at a time by the parser, starting at the first
 * line of a function (its decorators).  That line's indentation is the base
 * level: the function is everything up to the first line indented less than
 * the body, so the rest of the file is never read, and whatever the file holds
 * after the kernel (syntax kiln does not know) cannot disturb it.
 *
 * It follows the Python reference's lexical analysis: INDENT/DEDENT from a
 * stack of indentation widths (tabs to the next multiple of 8), implicit line
 * joining inside brackets, explicit joining with a backslash, comments, every
 * integer and float literal form with underscores, imaginary literals (which
 * the parser rejects), and strings with any prefix and quoting so that
 * docstrings can be skipped.  String contents are not decoded: kernels use
 * strings only as docstrings and assert messages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

const char *const kw_names[KW_COUNT] = {
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
    "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
    "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
    "return", "try", "while", "with", "yield"};

const char *const op_names[OP_COUNT] = {
    "(", ")", "[", "]", "{", "}", ":", ",", ";", ".", "...", "->", ":=", "=", "@",
    "+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^",
    "+=", "-=", "*=", "/=", "//=", "%=", "**=", "<<=", ">>=", "&=", "|=", "^=", "@=",
    "~", "<", ">", "<=", ">=", "==", "!="};

struct Lexer {
    Compiler *C;
    const SrcFile *f;
    const char *s;        /* the text */
    size_t len, pos;      /* text length, read position */
    int line;             /* line number at pos */
    size_t line_start;    /* offset of the current line's first byte */
    int indents[KILN_MAX_INDENT];
    int nindent;          /* indents[0] is the base level */
    int pending_dedents;  /* DEDENT tokens still to hand out */
    int paren;            /* bracket depth: newlines inside are ignored */
    bool at_bol;          /* at the beginning of a logical line */
    bool line_has_tokens; /* the current logical line produced a token */
    bool ended;           /* the function's block is over: only EOF follows */
    bool failed;          /* an error was reported */
};

static int char_col(Lexer *L, size_t off) {
    int c = 1;
    for (size_t i = L->line_start; i < off && i < L->len; i++)
        if (((unsigned char)L->s[i] & 0xC0) != 0x80) c++;
    return c;
}

static Span span_at(Lexer *L, size_t off, size_t len) {
    Span sp;
    sp.file = L->f;
    sp.off = (uint32_t)off;
    sp.len = (uint32_t)len;
    sp.line = L->line;
    sp.col = char_col(L, off);
    return sp;
}

static Token make(Lexer *L, TokKind k, size_t start) {
    Token t;
    memset(&t, 0, sizeof t);
    t.kind = (uint8_t)k;
    t.sp = span_at(L, start, L->pos - start);
    return t;
}

static Token lex_error(Lexer *L, size_t off, size_t len, const char *hint, const char *msg) {
    error_at(L->C, span_at(L, off, len ? len : 1), hint, "%s", msg);
    L->failed = true;
    Token t = make(L, TK_ERROR, off);
    return t;
}

/* Measures the indentation at pos (at the start of a line) and moves past it. */
static int measure_indent(Lexer *L) {
    int col = 0;
    while (L->pos < L->len) {
        char c = L->s[L->pos];
        if (c == ' ')
            col++;
        else if (c == '\t')
            col = (col / 8 + 1) * 8;
        else if (c == '\f')
            col = 0;
        else
            break;
        L->pos++;
    }
    return col;
}

static void newline(Lexer *L) {
    /* pos is just past a '\n' (or a lone '\r') */
    L->line++;
    L->line_start = L->pos;
}

Lexer *lex_open(Compiler *C, const SrcFile *f) {
    Lexer *L = arena_alloc(&C->arena, sizeof *L);
    L->C = C;
    L->f = f;
    L->s = f->text;
    L->len = f->len;
    L->line = f->first_line;
    L->at_bol = true;
    /* Skip blank and comment lines before the first real line. */
    for (;;) {
        size_t save = L->pos;
        measure_indent(L);
        if (L->pos < L->len && (L->s[L->pos] == '#' || L->s[L->pos] == '\n' ||
                                L->s[L->pos] == '\r')) {
            while (L->pos < L->len && L->s[L->pos] != '\n') L->pos++;
            if (L->pos < L->len) {
                L->pos++;
                newline(L);
            }
            continue;
        }
        L->pos = save;
        break;
    }
    L->indents[0] = measure_indent(L);
    L->pos = L->line_start;
    L->nindent = 1;
    return L;
}

static bool is_id_start(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
static bool is_id_char(unsigned char c) { return is_id_start(c) || (c >= '0' && c <= '9'); }

static int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 99;
}

/* Reads digits of the given base with single underscores between them.
 * Appends them (without underscores) to out.  Returns false on a misplaced
 * underscore. */
static bool read_digits(Lexer *L, int base, char *out, size_t *n, size_t cap) {
    bool last_us = true; /* an underscore may not come first */
    bool any = false;
    while (L->pos < L->len) {
        char c = L->s[L->pos];
        if (c == '_') {
            if (last_us) return false;
            last_us = true;
            L->pos++;
            continue;
        }
        if (digit_value(c) >= base) break;
        if (*n + 1 < cap) out[(*n)++] = c;
        last_us = false;
        any = true;
        L->pos++;
    }
    return !(any && last_us);
}

static Token lex_number(Lexer *L) {
    size_t start = L->pos;
    char buf[512];
    size_t n = 0;
    const char *s = L->s;
    int base = 10;
    if (s[L->pos] == '0' && L->pos + 1 < L->len) {
        char p = s[L->pos + 1];
        if (p == 'x' || p == 'X') base = 16;
        if (p == 'o' || p == 'O') base = 8;
        if (p == 'b' || p == 'B') base = 2;
    }
    if (base != 10) {
        L->pos += 2;
        if (L->pos < L->len && s[L->pos] == '_') L->pos++;
        if (!read_digits(L, base, buf, &n, sizeof buf) || n == 0)
            return lex_error(L, start, L->pos - start, NULL, "invalid integer literal");
        if (L->pos < L->len && is_id_char((unsigned char)s[L->pos]))
            return lex_error(L, start, L->pos + 1 - start, NULL, "invalid digit in literal");
        buf[n] = 0;
        errno = 0;
        unsigned long long v = strtoull(buf, NULL, base);
        if (errno == ERANGE)
            return lex_error(L, start, L->pos - start, "kernels work with 64-bit integers",
                             "integer literal is too large for 64 bits");
        Token t = make(L, TK_INT, start);
        t.ival = v;
        t.big = v > (unsigned long long)INT64_MAX;
        return t;
    }
    bool is_float = false;
    if (!read_digits(L, 10, buf, &n, sizeof buf))
        return lex_error(L, start, L->pos - start, NULL, "invalid decimal literal");
    if (L->pos < L->len && s[L->pos] == '.' &&
        !(L->pos + 1 < L->len && s[L->pos + 1] == '.')) {
        is_float = true;
        buf[n < sizeof buf - 1 ? n++ : n] = '.';
        L->pos++;
        if (L->pos < L->len && s[L->pos] >= '0' && s[L->pos] <= '9')
            if (!read_digits(L, 10, buf, &n, sizeof buf))
                return lex_error(L, start, L->pos - start, NULL, "invalid decimal literal");
    }
    if (L->pos < L->len && (s[L->pos] == 'e' || s[L->pos] == 'E')) {
        size_t save = L->pos;
        size_t nsave = n;
        buf[n < sizeof buf - 1 ? n++ : n] = 'e';
        L->pos++;
        if (L->pos < L->len && (s[L->pos] == '+' || s[L->pos] == '-'))
            buf[n < sizeof buf - 1 ? n++ : n] = s[L->pos++];
        if (L->pos < L->len && s[L->pos] >= '0' && s[L->pos] <= '9') {
            if (!read_digits(L, 10, buf, &n, sizeof buf))
                return lex_error(L, start, L->pos - start, NULL, "invalid decimal literal");
            is_float = true;
        } else {
            L->pos = save;
            n = nsave;
        }
    }
    if (L->pos < L->len && (s[L->pos] == 'j' || s[L->pos] == 'J')) {
        L->pos++;
        buf[n] = 0;
        Token t = make(L, TK_IMAG, start);
        t.fval = strtod(buf, NULL); /* the imaginary part, as Python reads it */
        return t;
    }
    if (L->pos < L->len && is_id_char((unsigned char)s[L->pos]))
        return lex_error(L, start, L->pos + 1 - start, NULL, "invalid decimal literal");
    buf[n] = 0;
    if (is_float) {
        Token t = make(L, TK_FLOAT, start);
        t.fval = strtod(buf, NULL);
        return t;
    }
    /* Leading zeros are only allowed for zero itself. */
    if (n > 1 && buf[0] == '0') {
        for (size_t i = 0; i < n; i++)
            if (buf[i] != '0')
                return lex_error(L, start, L->pos - start,
                                 "use an 0o prefix for octal integers",
                                 "leading zeros in decimal integer literals are not permitted");
    }
    errno = 0;
    unsigned long long v = strtoull(buf, NULL, 10);
    if (errno == ERANGE)
        return lex_error(L, start, L->pos - start, "kernels work with 64-bit integers",
                         "integer literal is too large for 64 bits");
    Token t = make(L, TK_INT, start);
    t.ival = v;
    t.big = v > (unsigned long long)INT64_MAX;
    return t;
}

/* At a quote (after any prefix).  raw: backslashes do not escape. */
static Token lex_string(Lexer *L, size_t start, bool raw) {
    char q = L->s[L->pos];
    bool triple = L->pos + 2 < L->len && L->s[L->pos + 1] == q && L->s[L->pos + 2] == q;
    int start_line = L->line;
    size_t start_line_start = L->line_start;
    L->pos += triple ? 3 : 1;
    for (;;) {
        if (L->pos >= L->len) {
            L->line = start_line;
            L->line_start = start_line_start;
            return lex_error(L, start, 1, NULL, "unterminated string literal");
        }
        char c = L->s[L->pos];
        if (c == '\\') {
            L->pos++;
            if (L->pos < L->len) {
                if (L->s[L->pos] == '\n') {
                    L->pos++;
                    newline(L);
                } else if (!raw || L->s[L->pos] == q || L->s[L->pos] == '\\') {
                    L->pos++;
                }
            }
            continue;
        }
        if (c == '\n') {
            if (!triple) {
                L->line = start_line;
                L->line_start = start_line_start;
                return lex_error(L, start, 1, NULL, "unterminated string literal");
            }
            L->pos++;
            newline(L);
            continue;
        }
        if (c == q) {
            if (!triple) {
                L->pos++;
                break;
            }
            if (L->pos + 2 < L->len && L->s[L->pos + 1] == q && L->s[L->pos + 2] == q) {
                L->pos += 3;
                break;
            }
        }
        L->pos++;
    }
    /* The token's span is on its first line, so diagnostics show that line. */
    Token t;
    memset(&t, 0, sizeof t);
    t.kind = TK_STRING;
    int save_line = L->line;
    size_t save_ls = L->line_start;
    L->line = start_line;
    L->line_start = start_line_start;
    t.sp = span_at(L, start, L->pos - start);
    L->line = save_line;
    L->line_start = save_ls;
    return t;
}

static Token lex_op(Lexer *L) {
    size_t start = L->pos;
    /* longest match first */
    static const Op order[] = {
        OP_DSTAREQ, OP_DSLASHEQ, OP_LSHIFTEQ, OP_RSHIFTEQ, OP_ELLIPSIS,
        OP_PLUSEQ, OP_MINUSEQ, OP_STAREQ, OP_SLASHEQ, OP_PERCENTEQ, OP_AMPEQ, OP_PIPEEQ,
        OP_CARETEQ, OP_ATEQ, OP_DSTAR, OP_DSLASH, OP_LSHIFT, OP_RSHIFT, OP_LE, OP_GE,
        OP_EQ, OP_NE, OP_ARROW, OP_WALRUS,
        OP_LPAR, OP_RPAR, OP_LSQB, OP_RSQB, OP_LBRACE, OP_RBRACE, OP_COLON, OP_COMMA,
        OP_SEMI, OP_DOT, OP_ASSIGN, OP_AT, OP_PLUS, OP_MINUS, OP_STAR, OP_SLASH, OP_PERCENT,
        OP_AMP, OP_PIPE, OP_CARET, OP_TILDE, OP_LT, OP_GT};
    for (size_t i = 0; i < COUNTOF(order); i++) {
        const char *name = op_names[order[i]];
        size_t n = strlen(name);
        if (L->pos + n <= L->len && memcmp(L->s + L->pos, name, n) == 0) {
            L->pos += n;
            Token t = make(L, TK_OP, start);
            t.op = (uint8_t)order[i];
            if (order[i] == OP_LPAR || order[i] == OP_LSQB || order[i] == OP_LBRACE) L->paren++;
            if ((order[i] == OP_RPAR || order[i] == OP_RSQB || order[i] == OP_RBRACE) &&
                L->paren > 0)
                L->paren--;
            return t;
        }
    }
    if (L->s[L->pos] == '!')
        return lex_error(L, start, 1, "use 'not' for logical negation", "invalid syntax '!'");
    if (L->s[L->pos] == '$' || L->s[L->pos] == '?' || L->s[L->pos] == '`')
        return lex_error(L, start, 1, NULL, "invalid character in kernel source");
    return lex_error(L, start, 1, NULL, "invalid character in kernel source");
}

/* A name with characters beyond ASCII is what Python makes of it: its NFKC
 * form (PEP 3131), through the context's normalizer (kiln.h); without one
 * (the CLI) it is refused rather than compiled as a name Python would not see. */
static Token normalise_name(Lexer *L, Token t) {
    Compiler *C = L->C;
    const char *name = L->s + t.sp.off;
    kiln_ctx *ctx = C->ctx;
    if (!ctx->normalize)
        return lex_error(L, t.sp.off, t.sp.len,
                         "use an ASCII name, or compile through the Python package (kiln.jit)",
                         arena_printf(&C->arena,
                                      "non-ASCII identifier '%.*s': kiln reads such names as "
                                      "Python does (NFKC) only inside Python",
                                      (int)t.sp.len, name));
    char *out = NULL;
    int rc = ctx->normalize(ctx->normalize_ud, name, t.sp.len, &out);
    if (rc == 0 && out) {
        t.text = arena_strdup(&C->arena, out);
        free(out);
        return t;
    }
    free(out);
    return lex_error(L, t.sp.off, t.sp.len, NULL,
                     arena_printf(&C->arena,
                                  rc > 0 ? "invalid character in identifier '%.*s'"
                                         : "cannot normalise the identifier '%.*s'",
                                  (int)t.sp.len, name));
}

static Token end_token(Lexer *L, TokKind k) {
    Token t;
    memset(&t, 0, sizeof t);
    t.kind = (uint8_t)k;
    t.sp = span_at(L, L->pos, 0);
    return t;
}

Token lex_next(Lexer *L) {
    if (L->failed) return end_token(L, TK_ERROR);
    if (L->pending_dedents > 0) {
        L->pending_dedents--;
        return end_token(L, TK_DEDENT);
    }
    if (L->ended) return end_token(L, TK_EOF);

    for (;;) {
        if (L->at_bol && L->paren == 0) {
            /* A new logical line: blank and comment-only lines do not count. */
            size_t ls = L->pos;
            int ind = measure_indent(L);
            if (L->pos >= L->len) {
                L->pos = ls;
                goto at_eof;
            }
            char c = L->s[L->pos];
            if (c == '#' || c == '\n' || c == '\r') {
                while (L->pos < L->len && L->s[L->pos] != '\n') L->pos++;
                if (L->pos < L->len) {
                    L->pos++;
                    newline(L);
                }
                continue;
            }
            L->at_bol = false;
            int top = L->indents[L->nindent - 1];
            if (ind > top) {
                if (L->nindent >= KILN_MAX_INDENT)
                    return lex_error(L, L->pos, 1, "move the inner blocks into a device function",
                                     arena_printf(&L->C->arena,
                                                  "too many levels of indentation: kernels nest "
                                                  "at most %d blocks (KILN_MAX_INDENT)",
                                                  KILN_MAX_INDENT));
                L->indents[L->nindent++] = ind;
                return end_token(L, TK_INDENT);
            }
            if (ind < top) {
                int n = 0;
                while (L->nindent > 1 && L->indents[L->nindent - 1] > ind) {
                    L->nindent--;
                    n++;
                }
                if (ind < L->indents[0]) {
                    /* Indented less than the function itself: its text is over. */
                    L->ended = true;
                    L->pending_dedents = n - 1;
                    return end_token(L, n > 0 ? TK_DEDENT : TK_EOF);
                }
                if (L->indents[L->nindent - 1] != ind)
                    return lex_error(L, ls, L->pos - ls, NULL,
                                     "unindent does not match any outer indentation level");
                L->pending_dedents = n - 1;
                return end_token(L, TK_DEDENT);
            }
        }
        if (L->pos >= L->len) goto at_eof;
        char c = L->s[L->pos];
        if (c == ' ' || c == '\t' || c == '\f') {
            L->pos++;
            continue;
        }
        if (c == '#') {
            while (L->pos < L->len && L->s[L->pos] != '\n') L->pos++;
            continue;
        }
        if (c == '\\') {
            size_t p = L->pos + 1;
            if (p < L->len && L->s[p] == '\r') p++;
            if (p < L->len && L->s[p] == '\n') {
                L->pos = p + 1;
                newline(L);
                continue;
            }
            return lex_error(L, L->pos, 1, NULL,
                             "unexpected character after line continuation character");
        }
        if (c == '\r' || c == '\n') {
            size_t start = L->pos;
            if (c == '\r' && L->pos + 1 < L->len && L->s[L->pos + 1] == '\n') L->pos++;
            L->pos++;
            if (L->paren > 0) {
                newline(L);
                continue;
            }
            Token t;
            memset(&t, 0, sizeof t);
            t.kind = TK_NEWLINE;
            t.sp = span_at(L, start, 0);
            newline(L);
            L->at_bol = true;
            return t;
        }
        L->line_has_tokens = true;
        unsigned char uc = (unsigned char)c;
        if ((c >= '0' && c <= '9') ||
            (c == '.' && L->pos + 1 < L->len && L->s[L->pos + 1] >= '0' &&
             L->s[L->pos + 1] <= '9'))
            return lex_number(L);
        if (is_id_start(uc)) {
            size_t start = L->pos;
            while (L->pos < L->len && is_id_char((unsigned char)L->s[L->pos])) L->pos++;
            size_t n = L->pos - start;
            /* string prefixes */
            if (n <= 2 && L->pos < L->len && (L->s[L->pos] == '\'' || L->s[L->pos] == '"')) {
                bool ok = true, raw = false;
                for (size_t i = start; i < L->pos; i++) {
                    char p = L->s[i];
                    if (p == 'r' || p == 'R')
                        raw = true;
                    else if (!strchr("bBuUfF", p))
                        ok = false;
                }
                if (ok) return lex_string(L, start, raw);
            }
            for (int k = 0; k < KW_COUNT; k++) {
                if (strlen(kw_names[k]) == n && memcmp(kw_names[k], L->s + start, n) == 0) {
                    Token t = make(L, TK_KEYWORD, start);
                    t.op = (uint8_t)k;
                    return t;
                }
            }
            Token t = make(L, TK_NAME, start);
            for (size_t i = start; i < L->pos; i++)
                if ((unsigned char)L->s[i] >= 0x80) return normalise_name(L, t);
            return t;
        }
        if (c == '\'' || c == '"') return lex_string(L, L->pos, false);
        return lex_op(L);
    }

at_eof:
    /* End of text: close the logical line, then all open blocks. */
    if (!L->at_bol) {
        L->at_bol = true;
        return end_token(L, TK_NEWLINE);
    }
    L->ended = true;
    L->pending_dedents = L->nindent - 1;
    L->nindent = 1;
    if (L->pending_dedents > 0) {
        L->pending_dedents--;
        return end_token(L, TK_DEDENT);
    }
    return end_token(L, TK_EOF);
}

const char *tok_describe(Compiler *C, const Token *t) {
    switch ((TokKind)t->kind) {
    case TK_EOF: return "end of input";
    case TK_NEWLINE: return "end of line";
    case TK_INDENT: return "indent";
    case TK_DEDENT: return "dedent";
    case TK_NAME:
        return arena_printf(&C->arena, "name '%.*s'", (int)t->sp.len,
                            t->sp.file->text + t->sp.off);
    case TK_KEYWORD: return arena_printf(&C->arena, "keyword '%s'", kw_names[t->op]);
    case TK_INT:
    case TK_FLOAT:
    case TK_IMAG:
        return arena_printf(&C->arena, "number '%.*s'", (int)t->sp.len,
                            t->sp.file->text + t->sp.off);
    case TK_STRING: return "string";
    case TK_OP: return arena_printf(&C->arena, "'%s'", op_names[t->op]);
    case TK_ERROR: return "error";
    }
    return "token";
}
