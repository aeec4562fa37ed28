/* diag.c: diagnostics as the user sees them.
 *
 * Every diagnostic carries file:line:col, the source line and a caret under
 * the column (chibicc's verror_at), and a hint when we know what to write
 * instead.  The text is formatted here once, so the CLI and the Python
 * exception show the same thing, and handed to the context's callback; the
 * core never prints and never exits.
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "compiler.h"

void compiler_init(Compiler *C, kiln_ctx *ctx) {
    memset(C, 0, sizeof *C);
    C->ctx = ctx;
    C->max_errors = 20;
    arena_init(&C->arena);
    C->arena.limit = KILN_MAX_ARENA_BYTES;
}

void compiler_free(Compiler *C) { arena_free(&C->arena); }

static void emit_diag(kiln_ctx *ctx, kiln_diag *d);

int compiler_run(Compiler *C, int (*fn)(Compiler *C, void *arg), void *arg, const char *file,
                 int line) {
    jmp_buf jb;
    C->arena.on_oom = &jb;
    if (setjmp(jb) != 0) {
        /* Everything of the translation was in the arena: drop it first, so that
         * reporting has memory to work with. */
        bool over = C->arena.over_limit;
        size_t held = C->arena.held;
        arena_free(&C->arena);
        C->arena.on_oom = NULL;
        C->sema = NULL;
        C->nerrors++;
        char msg[512];
        if (over)
            snprintf(msg, sizeof msg,
                     "out of memory compiling this function: it needs more than %zu MiB "
                     "(KILN_MAX_ARENA_BYTES)",
                     (size_t)KILN_MAX_ARENA_BYTES >> 20);
        else
            snprintf(msg, sizeof msg,
                     "out of memory compiling this function (%zu MiB were in use)", held >> 20);
        kiln_diag d = {0};
        d.severity = KILN_ERROR;
        d.message = msg;
        d.hint = "split the function, or make its constants (tuples) smaller";
        d.filename = file;
        d.line = line;
        d.col = 1;
        d.span = 1;
        emit_diag(C->ctx, &d);
        return -1;
    }
    int rc = fn(C, arg);
    C->arena.on_oom = NULL;
    return rc;
}

Span span_join(Span a, Span b) {
    if (a.file != b.file || b.off + b.len <= a.off) return a;
    Span s = a;
    s.len = b.off + b.len - a.off;
    return s;
}

static void line_bounds(const SrcFile *f, uint32_t off, size_t *lo, size_t *hi) {
    size_t s = off > f->len ? f->len : off;
    size_t e = s;
    while (s > 0 && f->text[s - 1] != '\n') s--;
    while (e < f->len && f->text[e] != '\n' && f->text[e] != '\r') e++;
    *lo = s;
    *hi = e;
}

const char *span_line_text(Compiler *C, Span sp) {
    if (!sp.file || !sp.file->text) return NULL;
    size_t lo, hi;
    line_bounds(sp.file, sp.off, &lo, &hi);
    return arena_strndup(&C->arena, sp.file->text + lo, hi - lo);
}

/* Counts UTF-8 characters in s[0..n). */
static int utf8_chars(const char *s, size_t n) {
    int c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
    return c;
}

static void emit_diag(kiln_ctx *ctx, kiln_diag *d) {
    static const char *const sevname[] = {"error", "warning", "note"};
    Buf b;
    buf_init(&b);
    if (d->filename && d->line > 0)
        buf_printf(&b, "%s:%d:%d: ", d->filename, d->line, d->col);
    else if (d->filename)
        buf_printf(&b, "%s: ", d->filename);
    buf_printf(&b, "%s: %s", sevname[d->severity], d->message);
    if (d->source_line) {
        buf_printf(&b, "\n    %s\n    ", d->source_line);
        /* The caret goes under the column, keeping tabs so it lines up. */
        int col = 1;
        for (const char *s = d->source_line; *s && col < d->col; s++) {
            if (((unsigned char)*s & 0xC0) == 0x80) continue;
            buf_putc(&b, *s == '\t' ? '\t' : ' ');
            col++;
        }
        buf_putc(&b, '^');
        for (int i = 1; i < d->span && i < 200; i++) buf_putc(&b, '~');
    }
    if (d->hint) buf_printf(&b, "\nhint: %s", d->hint);
    d->formatted = b.p ? b.p : "";
    if (ctx->diag) ctx->diag(ctx->diag_ud, d);
    buf_free(&b);
}

/* A diagnostic with no place yet: severity, message and hint. */
static kiln_diag diag_new(kiln_severity sev, const char *msg, const char *hint) {
    kiln_diag d = {0};
    d.severity = sev;
    d.message = msg;
    d.hint = hint;
    d.span = 1;
    return d;
}

void diag_at(Compiler *C, kiln_severity sev, Span sp, const char *hint, const char *fmt, ...) {
    if (C->muted) return;
    if (sev == KILN_ERROR) {
        C->nerrors++;
        if (C->nerrors > C->max_errors) return;
    } else if (C->nerrors > C->max_errors) {
        return;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    kiln_diag d = diag_new(sev, msg, hint);
    if (sp.file) {
        size_t lo, hi;
        line_bounds(sp.file, sp.off, &lo, &hi);
        d.filename = sp.file->name;
        d.line = sp.line;
        d.col = sp.col;
        d.source_line = arena_strndup(&C->arena, sp.file->text + lo, hi - lo);
        size_t end = sp.off + sp.len;
        if (end > hi) end = hi;
        int n = end > sp.off ? utf8_chars(sp.file->text + sp.off, end - sp.off) : 1;
        d.span = n < 1 ? 1 : n;
    }
    emit_diag(C->ctx, &d);
}

void diag_plain(kiln_ctx *ctx, kiln_severity sev, const char *hint, const char *fmt, ...) {
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kiln_diag d = diag_new(sev, msg, hint);
    emit_diag(ctx, &d);
}
