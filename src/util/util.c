/* util.c: arena, buffer and hashing.  See util.h for the contracts. */
#include "util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kiln_assert_fail(const char *expr, const char *file, int line, const char *func) {
    fprintf(stderr, "kiln: internal error: assertion '%s' failed at %s:%d in %s()\n", expr,
            file, line, func);
    abort();
}

/* ---- arena ---------------------------------------------------------------- */

struct ArenaChunk {
    ArenaChunk *next; /* older chunk */
    size_t size;      /* usable bytes in data */
    size_t used;      /* bytes handed out from data */
    _Alignas(16) unsigned char data[];
};

enum { ARENA_CHUNK = 64 * 1024 };

void arena_init(Arena *a) { memset(a, 0, sizeof *a); }

void arena_free(Arena *a) {
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used_total = 0;
    a->held = 0;
}

/* The allocation cannot be made: unwind to the translation entry, which frees
 * the arena and reports; a caller without one gets the old behaviour. */
static KILN_NORETURN void arena_out_of_memory(Arena *a, size_t want, bool over_limit) {
    a->failed = true;
    a->over_limit = over_limit;
    if (a->on_oom) longjmp(*a->on_oom, 1);
    fprintf(stderr, "kiln: out of memory (arena of %zu bytes)\n", want);
    abort();
}

/* Hands out size bytes (a multiple of 16), not zeroed. */
static void *arena_take(Arena *a, size_t size) {
    ArenaChunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t want = size > ARENA_CHUNK / 4 ? size : ARENA_CHUNK;
        if (a->limit && (want > a->limit || a->held > a->limit - want))
            arena_out_of_memory(a, want, true);
        c = want > SIZE_MAX - sizeof(ArenaChunk) ? NULL : malloc(sizeof(ArenaChunk) + want);
        if (!c) arena_out_of_memory(a, want, false);
        c->size = want;
        c->used = 0;
        a->held += want;
        /* A large one-off block goes behind the head so the head keeps its space. */
        if (a->head && want != ARENA_CHUNK) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = c->data + c->used;
    c->used += size;
    a->used_total += size;
    return p;
}

void *arena_alloc(Arena *a, size_t size) {
    if (size > SIZE_MAX - 15) arena_out_of_memory(a, size, false);
    size = (size + 15) & ~(size_t)15;
    void *p = arena_take(a, size);
    memset(p, 0, size);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = arena_alloc(a, (size_t)(n < 0 ? 0 : n) + 1);
    if (n > 0) vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void *arena_grow(Arena *a, void *p, int *cap, int need, size_t elem) {
    if (need <= *cap) return p;
    if (need < 0 || need > INT_MAX / 2) arena_out_of_memory(a, (size_t)need * elem, false);
    int ncap = *cap ? *cap * 2 : 8;
    while (ncap < need) ncap *= 2;
    void *np = arena_alloc(a, (size_t)ncap * elem);
    if (p && *cap) memcpy(np, p, (size_t)*cap * elem);
    *cap = ncap;
    return np;
}

void vec_push(Arena *a, PtrVec *vec, void *p) {
    vec->v = arena_grow(a, vec->v, &vec->cap, vec->n + 1, sizeof(void *));
    vec->v[vec->n++] = p;
}

/* ---- buffer ---------------------------------------------------------------- */

void buf_init(Buf *b) {
    b->p = NULL;
    b->len = b->cap = 0;
    b->oom = false;
    b->arena = NULL;
}

void buf_init_arena(Buf *b, Arena *a) {
    buf_init(b);
    b->arena = a;
}

void buf_free(Buf *b) {
    Arena *a = b->arena;
    if (!a) free(b->p);
    buf_init(b);
    b->arena = a;
}

static bool buf_reserve(Buf *b, size_t extra) {
    if (b->oom) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    if (extra > SIZE_MAX / 4 - b->len) {
        if (b->arena) arena_out_of_memory(b->arena, extra, false);
        b->oom = true;
        return false;
    }
    size_t ncap = b->cap ? b->cap * 2 : 256;
    while (ncap < b->len + extra + 1) ncap *= 2;
    if (b->arena) {
        /* the old storage stays in the arena; a failure unwinds with it */
        char *np = arena_take(b->arena, (ncap + 15) & ~(size_t)15);
        if (b->len) memcpy(np, b->p, b->len);
        np[b->len] = 0;
        b->p = np;
        b->cap = ncap;
        return true;
    }
    char *np = realloc(b->p, ncap);
    if (!np) {
        b->oom = true;
        return false;
    }
    b->p = np;
    b->cap = ncap;
    return true;
}

void buf_put(Buf *b, const char *s, size_t n) {
    if (!buf_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void buf_puts(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }

void buf_putc(Buf *b, char c) { buf_put(b, &c, 1); }

void buf_vprintf(Buf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n < sizeof small) {
        buf_put(b, small, (size_t)n);
    } else if (buf_reserve(b, (size_t)n)) {
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

void buf_printf(Buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *buf_take(Buf *b, size_t *len) {
    ASSERT(!b->arena);
    if (!b->p) buf_reserve(b, 0);
    char *p = b->p;
    if (len) *len = b->len;
    buf_init(b);
    return p;
}

/* ---- hashing --------------------------------------------------------------- */

uint64_t hash_bytes(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}
