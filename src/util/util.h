/* util.h: the small pieces every layer of kiln uses.
 *
 * An arena for everything that lives as long as one compilation (tokens, AST,
 * types, generated text), a growable byte buffer for text that is handed out,
 * and the assertion macros.  Nothing here knows about the language.
 *
 * Assertions follow SQLite: ASSERT is a programming error and aborts with the
 * place it failed; ALWAYS/NEVER wrap defensive branches that "cannot" be taken
 * but are handled anyway in release builds.
 */
#ifndef KILN_UTIL_H
#define KILN_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define KILN_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define KILN_MUST_USE __attribute__((warn_unused_result))
#define KILN_NORETURN __attribute__((noreturn))
#else
#define KILN_PRINTF(a, b)
#define KILN_MUST_USE
#define KILN_NORETURN
#endif

KILN_NORETURN void kiln_assert_fail(const char *expr, const char *file, int line,
                                    const char *func);

#define ASSERT(x) ((x) ? (void)0 : kiln_assert_fail(#x, __FILE__, __LINE__, __func__))
#define UNREACHABLE() kiln_assert_fail("unreachable", __FILE__, __LINE__, __func__)
#ifdef KILN_DEBUG
#define ALWAYS(x) ((x) ? 1 : (kiln_assert_fail(#x, __FILE__, __LINE__, __func__), 0))
#define NEVER(x) ((x) ? (kiln_assert_fail(#x, __FILE__, __LINE__, __func__), 1) : 0)
#else
#define ALWAYS(x) (x)
#define NEVER(x) (x)
#endif

#define COUNTOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* ---- arena ----------------------------------------------------------------
 * Bump allocation in chunks; freed only as a whole.  Allocation never fails
 * from the caller's point of view: a compiler that half-built an AST has
 * nothing sensible to return, so when malloc fails, or the arena would grow
 * past its limit, the arena jumps to `on_oom` (set by the translation entry,
 * see compiler_run), which frees the arena as a whole and reports the error.
 * Nothing the compiler holds outside the arena may be live across an
 * allocation for that reason: its buffers are arena buffers (buf_init_arena).
 * Without `on_oom` (the C tests, a caller that sets none) it aborts. */
typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
    ArenaChunk *head;  /* newest chunk; older ones are linked behind it */
    size_t used_total; /* bytes handed out, for statistics */
    size_t held;       /* bytes of the chunks it holds */
    size_t limit;      /* most bytes of chunks it may hold; 0: no limit but malloc's */
    bool failed;       /* an allocation failed (on_oom was taken) */
    bool over_limit;   /* ...because of `limit`, not malloc */
    jmp_buf *on_oom;   /* where a failed allocation goes; NULL: abort */
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size);           /* zeroed, 16-byte aligned */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) KILN_PRINTF(2, 3);
/* Grows an arena array of elem-size items from *cap to at least need.  The old
 * storage stays in the arena (it is small and dies with it). */
void *arena_grow(Arena *a, void *p, int *cap, int need, size_t elem);

/* A pointer vector in the arena. */
typedef struct PtrVec {
    void **v;
    int n, cap;
} PtrVec;
void vec_push(Arena *a, PtrVec *vec, void *p);

/* ---- growable buffer ------------------------------------------------------
 * For text.  A malloc-backed buffer (buf_init) holds text that outlives the
 * arena: on allocation failure it sets `oom` and drops further writes, and the
 * owner checks once at the end.  An arena-backed one (buf_init_arena) holds
 * text of one compilation: it grows in the arena (old storage stays there
 * until the arena is freed), so running out of memory unwinds with the arena
 * and nothing leaks; buf_free forgets it and buf_take is not for it. */
typedef struct Buf {
    char *p;      /* NUL-terminated contents, owned by the Buf (or its arena) */
    size_t len;   /* bytes before the terminator */
    size_t cap;   /* allocated bytes */
    bool oom;     /* an allocation failed; contents are truncated */
    Arena *arena; /* where it grows, or NULL for malloc */
} Buf;

void buf_init_arena(Buf *b, Arena *a);
void buf_init(Buf *b);
void buf_free(Buf *b);
void buf_put(Buf *b, const char *s, size_t n);
void buf_puts(Buf *b, const char *s);
void buf_putc(Buf *b, char c);
void buf_printf(Buf *b, const char *fmt, ...) KILN_PRINTF(2, 3);
void buf_vprintf(Buf *b, const char *fmt, va_list ap);
/* Hands the contents to the caller (who frees them with free()); resets b. */
char *buf_take(Buf *b, size_t *len);

/* ---- hashing --------------------------------------------------------------
 * FNV-1a, for in-memory tables only (never for cache keys). */
uint64_t hash_bytes(const void *p, size_t n);

#endif
