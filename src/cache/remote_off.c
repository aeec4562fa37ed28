/* remote_off.c: the Redis tier of a kiln built without hiredis (meson
 * -Dredis=disabled, or no hiredis found).  Asking for it warns once; the
 * local tiers work as always. */
#include "cache/remote.h"
#include "compiler.h"

Remote *remote_open(kiln_ctx *ctx, const char *url, const char *hmac_key, int timeout_ms,
                    const char *owner) {
    diag_plain(ctx, KILN_WARNING, "rebuild kiln with hiredis installed, or unset it",
               "KILN_REMOTE_CACHE=%s is set, but this kiln was built without Redis support; "
               "using the local cache only", url);
    return NULL;
}

void remote_close(Remote *r) {}
bool remote_ok(const Remote *r) { return false; }

const char *remote_url(const Remote *r) { return NULL; }
int remote_get(Remote *r, const kiln_cache_key *k, RemoteRecord *rec, bool *rejected) {
    *rejected = false;
    return -1;
}
int remote_put(Remote *r, const kiln_cache_key *k, const char *kind, const char *name,
               const char *target, const void *blob, size_t len) {
    return -1;
}
int remote_claim(Remote *r, const kiln_cache_key *k, int lease_ms, int stale_ms, bool *stale) {
    *stale = false;
    return 1;
}
bool remote_claimed_by_other(Remote *r, const kiln_cache_key *k, int stale_ms) { return false; }
void remote_release(Remote *r, const kiln_cache_key *k) {}
