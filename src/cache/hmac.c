/* hmac.c: HMAC-SHA256 for the remote tier's records, from OpenSSL's libcrypto
 * loaded with dlopen when KILN_REMOTE_KEY is set (see remote.h). */
#include <dlfcn.h>
#include <string.h>

#include "cache/remote.h"

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
    return h->sha256 && h->hmac;
}

int hmac_sha256(const Hmac *h, const void *key, size_t keylen, const void *msg, size_t len,
                uint8_t out[32]) {
    unsigned int n = 0;
    if (!h->hmac || keylen > 0x7fffffff) return -1;
    return h->hmac(h->sha256(), key, (int)keylen, msg, len, out, &n) && n == 32 ? 0 : -1;
}

