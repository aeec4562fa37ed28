/* chars.c: string constants stored into NumPy fixed-width string elements (chars.h). */
#include "chars.h"

#include <string.h>

const kiln_field *chars_field(const Type *t) {
    if (t->kind == TY_ARRAY && t->chars) return t->chars;
    if (t->kind == TY_RECORD && t->rec->nfields == 1 && t->rec->fields[0].chars &&
        t->rec->fields[0].name[0] == '\0')
        return &t->rec->fields[0];
    return NULL;
}

int64_t chars_width(const kiln_field *f) {
    return f->shape[0] * (int64_t)kiln_dtype_size((kiln_dtype)f->dtype);
}

/* One UTF-8 sequence at s (n bytes left): its code point and length, or length 0. */
static int utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
    int len = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3
              : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!len || (size_t)len > n) return 0;
    uint32_t c = len == 1 ? s[0] : (uint32_t)(s[0] & (0x7F >> len));
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = c << 6 | (s[i] & 0x3F);
    }
    *cp = c;
    return len;
}

static const char *encode(const char *s, size_t len, bool bytes, const kiln_field *f,
                          unsigned char *out);

const char *chars_encode(const Node *n, const Type *t, const kiln_field *f, unsigned char *out) {
    if (n->kind != E_STR) { /* a string constant held by a name (strings.c): its text */
        if (!t || t->kind != TY_STR || !t->lit) return "a string field or element takes a string constant";
        return encode(t->str, (size_t)t->litv, false, f, out);
    }
    const char *s = n->sp.file->text + n->sp.off;
    size_t len = n->sp.len;
    bool bytes = false;
    while (len && strchr("bBuUrR", *s)) { /* the prefix */
        if (*s == 'b' || *s == 'B') bytes = true;
        s++, len--;
    }
    if (len < 2 || (s[0] != '"' && s[0] != '\'') || s[len - 1] != s[0])
        return "write one string literal (no implicit concatenation, no triple quotes)";
    if (len >= 6 && s[1] == s[0] && s[2] == s[0])
        return "write one string literal (no implicit concatenation, no triple quotes)";
    s++, len -= 2;
    if (memchr(s, s[-1], len)) /* a second literal concatenated to this one */
        return "write one string literal (no implicit concatenation, no triple quotes)";
    if (memchr(s, '\\', len)) return "string constants with escapes are not supported";
    return encode(s, len, bytes, f, out);
}

/* The text s (len bytes of UTF-8; a bytes literal's when bytes) into field f. */
static const char *encode(const char *s, size_t len, bool bytes, const kiln_field *f,
                          unsigned char *out) {
    if (f->chars == 'S' && !bytes) return "a bytes field takes a bytes constant (b\"...\")";
    if (f->chars == 'U' && bytes) return "a str field takes a str constant, not bytes";
    int64_t units = f->shape[0], k = 0;
    int usize = f->chars == 'S' ? 1 : 4;
    if (out) memset(out, 0, (size_t)chars_width(f));
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int m = utf8_next((const unsigned char *)s + i, len - i, &cp);
        if (!m) return "the string is not valid UTF-8";
        if (usize == 1 && cp > 0x7F) return "a bytes constant holds ASCII characters only";
        if (k < units && out) /* cut at the width, as NumPy does */
            for (int b = 0; b < usize; b++) out[k * usize + b] = (unsigned char)(cp >> (8 * b));
        k++;
        i += (size_t)m;
    }
    return NULL;
}
