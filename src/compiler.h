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

/* Heads each external CUDA C source pasted into a kernel's program (emit.c), so the CUDA
 * target knows to give NVRTC the toolkit's include directories and to blame the user's
 * source rather than kiln when NVRTC rejects the program (cuda.c). */
#define KILN_EXTERN_SRC_MARKER "/* ---- external source "
/* An external source that is compiled device code linked by nvJitLink (_extern.py writes
 * it): a comment naming the code, which the CPU target cannot run */
#define KILN_LINKED_MARKER "/* kiln-linked "


struct kiln_ctx {
    kiln_diag_fn diag;  /* where diagnostics go; NULL drops them */
    void *diag_ud;
    char *cc;           /* the C compiler command, from $KILN_CC or "cc"; owned */
    char *cc_id;        /* cached first line of `cc --version`; owned */
    kiln_interrupt_fn interrupt; /* polled by blocking waits; NULL never stops them */
    void *interrupt_ud;
    kiln_normalize_fn normalize; /* NFKC of non-ASCII identifiers; NULL: refuse them */
    void *normalize_ud;
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

/* ---- limits ------------------------------------------------------------------
 * Every input the compiler accepts compiles in time and memory linear in its
 * size, or is refused with an error that names one of these (docs/limits.md
 * lists them with the messages).  The recursive passes (parser, sema, emit)
 * recurse once per level of nesting, so bounding nesting bounds their stack. */
enum {
    /* Brackets, calls, subscripts, unary operators, `not`, conditional
     * expressions and blocks nested in one another: CPython's own limit for
     * brackets.  The parser recurses about 15 frames per bracket. */
    KILN_MAX_NESTING = 200,
    /* Indented blocks one inside another (the lexer's stack of widths), as
     * in CPython. */
    KILN_MAX_INDENT = 100,
    /* Depth of one expression's tree: a chain `a + b + c ...` nests one level
     * per operator (as in Python's AST), and sema and the emitter recurse once
     * per level, several frames each.  About what CPython compiles. */
    KILN_MAX_EXPR_DEPTH = 1000,
    /* Device functions calling device functions: sema types a callee while
     * its caller's frames are on the stack. */
    KILN_MAX_CALL_DEPTH = 64,
    /* Values one print() writes (tuples counted by their elements): CUDA's
     * printf takes at most 32 arguments after the format. */
    KILN_MAX_PRINT_VALUES = 32,
    /* Generated C or CUDA source of one kernel; beyond it the C compiler's
     * time, not kiln's, becomes the problem. */
    KILN_MAX_SOURCE_BYTES = 16 << 20,
    /* Local arrays of one thread: the kernel's and, per call, its device
     * functions' (calls are inlined).  The CPU runs threads on OpenMP workers
     * whose stacks are OMP_STACKSIZE or the system's default (2 MiB when the
     * stack rlimit is unlimited, else the rlimit, usually 8 MiB), and the
     * calling thread holds the arrays twice (its serial and parallel paths);
     * 256 KiB leaves room under 2 MiB.  CUDA allows 512 KiB per thread. */
    KILN_MAX_LOCAL_BYTES = 256 << 10,
    /* Static shared memory of one block, every kiln.shared.array of the kernel
     * and its device functions together: what CUDA gives without opting in. */
    KILN_MAX_SHARED_BYTES = 48 << 10,
    /* The largest alignment= of a local or shared array: a page, past any vector
     * load or cache line (src/sema/storage_align.c). */
    KILN_MAX_ARRAY_ALIGN = 4096,
    /* A global NumPy array a kernel reads is frozen into the generated program
     * (about 3 bytes of source per byte); larger tables belong in arguments.
     * python/kiln/_compile.py's MAX_CONST_ARRAY_BYTES is the same figure. */
    KILN_MAX_CONST_ARRAY_BYTES = 1 << 20,
    /* The arrays a kernel takes with kiln.const.array_like, together: they go to the
     * GPU's constant memory, 64 KiB per module. */
    KILN_MAX_CONST_MEMORY_BYTES = 64 << 10,
    /* The bytes of a CUDA kernel's parameters (CUDA 12.1 on, Volta on): 8 a pointer or
     * scalar, 8 + 16 per dimension an array (src/emit/emit.c, emit_program). */
    KILN_MAX_CUDA_PARAM_BYTES = 32764,
};
/* Memory of one compilation (its arena): tokens, trees, types, generated text. */
#define KILN_MAX_ARENA_BYTES ((size_t)1 << 30)

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
    uint8_t enum_tags[KILN_MAX_PARAMS]; /* per kernel parameter: its IntEnum class, or 0 */
} Compiler;

void compiler_init(Compiler *C, kiln_ctx *ctx);
void compiler_free(Compiler *C);

/* Runs fn(C, arg), the body of one translation, so that running out of memory
 * in the arena (malloc failing, or KILN_MAX_ARENA_BYTES) ends it cleanly: the
 * arena is freed as a whole and "FILE:LINE: out of memory compiling this
 * function" is reported.  Returns fn's result, or -1 after that report.  fn
 * keeps whatever must outlive the arena (malloc'd results) in arg, where the
 * caller frees it on -1; between arena allocations it holds no other memory. */
int compiler_run(Compiler *C, int (*fn)(Compiler *C, void *arg), void *arg, const char *file,
                 int line);

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
extern const char kiln_rt_mathf_h[]; /* kiln's precise float32 math (CUDA only) */
extern const char kiln_rt_libdevice_cpu_h[]; /* libdevice's functions for the CPU target */
extern const char kiln_rt_cpu_h[];
extern const char kiln_rt_cuda_h[];
extern const char kiln_rt_half_h[];
extern const char kiln_rt_complex_h[];
extern const char kiln_rt_blocks_h[];

#endif
