/* hmac.c: HMAC-SHA256 for the remote tier's records and for bundle signatures,
 * from OpenSSL's libcrypto loaded with dlopen when a key is set (see remote.h).
 *
 * Remote records are signed in one call (libcrypto's HMAC).  A bundle can be
 * far larger than memory allows to hold at once, so its signature is computed
 * as a stream: HMAC(K, m) = H((K' ^ opad) || H((K' ^ ipad) || m)) (RFC 2104),
 * over libcrypto's incremental SHA-256 (EVP_Digest*). */
#include <dlfcn.h>
#include <string.h>

#include "cache/remote.h"

enum { SHA256_BLOCK = 64 };

bool hmac_load(Hmac *h) {
    static const char *const names[] = {"libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"};
    memset(h, 0, sizeof *h);
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    /* never closed: libcrypto registers exit handlers and must stay mapped */
    *(void **)&h->sha256 = dlsym(lib, "EVP_sha256");
    *(void **)&h->hmac = dlsym(lib, "HMAC");
    *(void **)&h->md_new = dlsym(lib, "EVP_MD_CTX_new");
    *(void **)&h->md_free = dlsym(lib, "EVP_MD_CTX_free");
    *(void **)&h->init = dlsym(lib, "EVP_DigestInit_ex");
    *(void **)&h->update = dlsym(lib, "EVP_DigestUpdate");
    *(void **)&h->final = dlsym(lib, "EVP_DigestFinal_ex");
    return h->sha256 && h->hmac && h->md_new && h->md_free && h->init && h->update && h->final;
}

int hmac_sha256(const Hmac *h, const void *key, size_t keylen, const void *msg, size_t len,
                uint8_t out[32]) {
    unsigned int n = 0;
    if (!h->hmac || keylen > 0x7fffffff) return -1;
    return h->hmac(h->sha256(), key, (int)keylen, msg, len, out, &n) && n == 32 ? 0 : -1;
}

/* SHA-256 of one buffer, for keys longer than a block */
static bool sha256(const Hmac *h, const void *p, size_t n, uint8_t out[32]) {
    void *md = h->md_new();
    unsigned int len = 0;
    bool ok = md && h->init(md, h->sha256(), NULL) && h->update(md, p, n) &&
              h->final(md, out, &len) && len == 32;
    if (md) h->md_free(md);
    return ok;
}

int hmac_begin(HmacStream *s, const Hmac *h, const void *key, size_t keylen) {
    memset(s, 0, sizeof *s);
    s->h = h;
    uint8_t k[SHA256_BLOCK] = {0}, ipad[SHA256_BLOCK];
    if (keylen > SHA256_BLOCK) {
        if (!sha256(h, key, keylen, k)) return -1;
    } else if (keylen) {
        memcpy(k, key, keylen);
    }
    for (int i = 0; i < SHA256_BLOCK; i++) {
        ipad[i] = k[i] ^ 0x36;
        s->opad[i] = k[i] ^ 0x5c;
    }
    s->md = h->md_new();
    s->ok = s->md && h->init(s->md, h->sha256(), NULL) && h->update(s->md, ipad, sizeof ipad);
    return s->ok ? 0 : -1;
}

void hmac_update(HmacStream *s, const void *p, size_t n) {
    if (s->ok && n) s->ok = s->h->update(s->md, p, n) != 0;
}

int hmac_end(HmacStream *s, uint8_t out[32]) {
    uint8_t inner[32];
    unsigned int len = 0;
    bool ok = s->ok && s->h->final(s->md, inner, &len) && len == 32;
    if (s->md) s->h->md_free(s->md);
    s->md = NULL;
    ok = ok && (s->md = s->h->md_new()) && s->h->init(s->md, s->h->sha256(), NULL) &&
         s->h->update(s->md, s->opad, sizeof s->opad) && s->h->update(s->md, inner, 32) &&
         s->h->final(s->md, out, &len) && len == 32;
    if (s->md) s->h->md_free(s->md);
    s->md = NULL;
    s->ok = false;
    return ok ? 0 : -1;
}
