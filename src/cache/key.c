/* key.c: the cache's keys and checksums, both XXH3-128.
 *
 * A key names an artifact by what decides its code: the generated source and
 * a target text (the compiler, its flags, the machine).  The file names of
 * #line markers are left out of the source's hash unless asked for, since no
 * instruction depends on them.  A checksum is the same hash over an
 * artifact's key, kind and bytes; every tier and bundle stores it beside the
 * blob and every read checks it.  xxHash is used header-only, in this file alone.
 */
#include <string.h>
#define XXH_INLINE_ALL /* header-only: no library to link */
#include <xxhash.h>

#include "cache/cache_int.h"

/* Hashes source, leaving out the file names of #line markers unless asked to
 * keep them: they change no instruction (kernels carry file indexes and line
 * numbers, not names), and without them a kernel file built in CI under one
 * path is the same key in production under another. */
void kiln_cache_key_of(const char *source, size_t len, const char *target, int flags,
                       kiln_cache_key *out) {
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    const char *p = source, *end = source + len, *chunk = source;
    static const char marker[] = "#line ";
    const size_t mlen = sizeof marker - 1;
    while (!(flags & KILN_KEY_FILE_NAMES) && p < end) {
        if ((p == source || p[-1] == '\n') && (size_t)(end - p) > mlen &&
            memcmp(p, marker, mlen) == 0) {
            const char *q = p + mlen;
            while (q < end && *q >= '0' && *q <= '9') q++;
            if (q < end && *q == ' ' && q + 1 < end && q[1] == '"') {
                const char *close = memchr(q + 2, '"', (size_t)(end - q - 2));
                const char *nl = memchr(q, '\n', (size_t)(end - q));
                if (close && (!nl || close < nl)) {
                    XXH3_128bits_update(&st, chunk, (size_t)(q - chunk));
                    chunk = close + 1;
                    p = close + 1;
                    continue;
                }
            }
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    XXH3_128bits_update(&st, chunk, (size_t)(end - chunk));
    XXH3_128bits_update(&st, "\0", 1);
    if (target) XXH3_128bits_update(&st, target, strlen(target));
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&st));
    memcpy(out->b, c.digest, 16);
}

void kiln_cache_key_hex(const kiln_cache_key *k, char out[33]) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = digits[k->b[i] >> 4];
        out[2 * i + 1] = digits[k->b[i] & 15];
    }
    out[32] = 0;
}

int key_hexval(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

int kiln_cache_key_parse(const char *hex, kiln_cache_key *out) {
    if (!hex || strlen(hex) != 32) return -1;
    for (int i = 0; i < 16; i++) {
        int hi = key_hexval(hex[2 * i]), lo = key_hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        out->b[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

void key_checksum(const kiln_cache_key *k, const char *kind, const void *blob, size_t len,
                  uint8_t out[16]) {
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    XXH3_128bits_update(&st, k->b, 16);
    XXH3_128bits_update(&st, kind, strlen(kind) + 1);
    XXH3_128bits_update(&st, blob, len);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&st));
    memcpy(out, c.digest, 16);
}

void key_checksum_blob_only(const void *blob, size_t len, uint8_t out[16]) {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(blob, len));
    memcpy(out, c.digest, 16);
}
