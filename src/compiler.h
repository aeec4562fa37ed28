/* compiler.h: what the layers share inside one translation.
 *
 * A kiln_ctx lives as long as its owner (the Python module, the CLI).  A
 * Compiler lives for one kiln_translate call: it owns the arena in which the
 * tokens, the AST, the types and the generated text are allocated, counts the
 * errors, and carries the resolver through which the kernel's globals are
 * looked up.  Layers get the Compiler and nothing global.
 */
#ifndef KILN_COMPILER_H
#define KILN_COMPILER_H

#include "kiln.h"
#include "util/util.h"

struct kiln_ctx {
    kiln_diag_fn diag;  /* where diagnostics go; NULL drops them */
    void *diag_ud;
    char *cc;           /* the C compiler command, from $KILN_CC or "cc"; owned */
    char *cc_id;        /* cached first line of `cc --version`; owned */
    kiln_interrupt_fn interrupt; /* polled by blocking waits; NULL never stops them */
    void *interrupt_ud;
};

/* A source text the compiler reads: a kernel, a callee, a signature. */
typedef struct SrcFile {
    const char *name;  /* file name for diagnostics */
    const char *text;  /* the text, NUL-terminated, owned by the arena */
    size_t len;
    int first_line;    /* line number of text[0] */
} SrcFile;

/* A place in a source: byte offset and length, with the line and the
 * character column of its start for diagnostics. */
typedef struct Span {
    const SrcFile *file;
    uint32_t off, len;
    int line, col;
} Span;

typedef struct Sema Sema;

typedef struct Compiler {
    kiln_ctx *ctx;
    Arena arena;          /* everything of this translation */
    int nerrors;          /* errors reported (muted ones are not counted) */
    int muted;            /* > 0 while a speculative pass runs: drop diagnostics */
    int max_errors;       /* stop reporting after this many */
    kiln_options opts;
    kiln_resolve_fn resolve;
    void *resolve_ud;
    Sema *sema;           /* the semantic analyser's state, owned by sema.c */
} Compiler;

void compiler_init(Compiler *C, kiln_ctx *ctx);
void compiler_free(Compiler *C);

/* Reports a diagnostic at sp.  hint may be NULL.  Errors increase nerrors. */
void diag_at(Compiler *C, kiln_severity sev, Span sp, const char *hint, const char *fmt, ...)
    KILN_PRINTF(5, 6);
#define error_at(C, sp, hint, ...) diag_at((C), KILN_ERROR, (sp), (hint), __VA_ARGS__)
#define note_at(C, sp, ...) diag_at((C), KILN_NOTE, (sp), NULL, __VA_ARGS__)
/* A diagnostic with no source place (a compiler that failed to start...). */
void diag_plain(kiln_ctx *ctx, kiln_severity sev, const char *hint, const char *fmt, ...)
    KILN_PRINTF(4, 5);

/* The text of the line holding byte offset off, without its newline. */
const char *span_line_text(Compiler *C, Span sp);

/* Span covering a through b (same file). */
Span span_join(Span a, Span b);

/* The embedded runtime headers (generated at build time from src/emit/rt_*.h). */
extern const char kiln_rt_common_h[];
extern const char kiln_rt_cpu_h[];
extern const char kiln_rt_cuda_h[];

#endif
