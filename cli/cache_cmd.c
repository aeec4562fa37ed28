/* cache_cmd.c: `kiln cache stats|ls|verify|clear|prune|export|import`, and
 * `kiln metrics`, the cache's figures over all processes per kernel.
 *
 * Each subcommand is a thin shell over the core's cache API (include/kiln.h):
 * it opens the cache the way the Python package does (KILN_CACHE_DIR,
 * KILN_REMOTE_CACHE, ...), does one thing, and prints it for a person or, with
 * --json, for a program.  The remote tier's address is printed with its
 * password masked: `kiln cache stats` output ends up in bug reports.
 *
 * The hit rate across processes is the disk tier's: hits / (hits + compiles),
 * both counted in kiln.db by every process (a process's memory-tier hits stay
 * in that process: kiln.metrics() has them).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

enum {
    MAX_EXPORT_TARGETS = 64, /* --target prefixes of one `kiln cache export` */
    TARGET_TEXT_MAX = 32     /* one prefix: "cuda:sm_90", "cpu:x86_64" */
};

static const cli_opt json_opts[] = {
    {"--json", 0, NULL, "print JSON instead of text (docs/cli.md has its shape)"},
    {0},
};
static const cli_opt ls_opts[] = {
    {"--json", 0, NULL, "print JSON instead of text (docs/cli.md has its shape)"},
    {"--sort", 0, "KEY", "order: used or last (most recently used first, the default), size, "
                         "name, created, hits (most first), compile (slowest build first)"},
    {0},
};
static const cli_opt export_opts[] = {
    {"--target", 0, "T", "only entries for target T: cpu, cpu:x86_64, cuda, cuda:sm_80,sm_90 "
                         "(repeatable; default: all)"},
    {0},
};
static const cli_opt import_opts[] = {
    {"--trust-unsigned", 0, NULL, "import a bundle whose signature is missing or does not "
                                  "match the bundle key (with a warning)"},
    {0},
};

enum { SUB_STATS, SUB_LS, SUB_VERIFY, SUB_CLEAR, SUB_PRUNE, SUB_EXPORT, SUB_IMPORT, NSUB };

const cli_cmd cli_cache_cmds[] = {
    [SUB_STATS] = {"cache stats", "", "Show the disk cache's size and counters, and the remote "
                   "tier.", "The counters are of all processes that used the cache.\n",
                   json_opts, 0, 0},
    [SUB_LS] = {"cache ls", "", "List the disk cache's entries.",
                "Each entry's key, kind (so, cubin, ptx), target, size, last use and kernel.\n",
                ls_opts, 0, 0},
    [SUB_VERIFY] = {"cache verify", "", "Check every entry; remove those that fail (exit 1).",
                    "Checks the database and every entry's checksum; entries that fail are\n"
                    "removed, and the exit status is 1 when there were any.\n", NULL, 0, 0},
    [SUB_CLEAR] = {"cache clear", "", "Remove every entry of the disk cache.", NULL, NULL, 0, 0},
    [SUB_PRUNE] = {"cache prune", "[SIZE]", "Evict least recently used entries down to SIZE.",
                   "SIZE is 512M, 2G or a number of bytes; without it, KILN_CACHE_SIZE (1G).\n",
                   NULL, 0, 1},
    [SUB_EXPORT] = {"cache export", "FILE", "Write entries to a bundle FILE (signed with a key).",
                    "The bundle is signed when KILN_BUNDLE_KEY or KILN_BUNDLE_KEY_FILE is set.\n"
                    "A bundle is code that will run where it is imported: sign it, and import\n"
                    "only bundles you trust.\n", export_opts, 1, 1},
    [SUB_IMPORT] = {"cache import", "FILE", "Check a bundle, verify its entries, store them.",
                    "With a bundle key set (KILN_BUNDLE_KEY, KILN_BUNDLE_KEY_FILE), a bundle\n"
                    "that is unsigned or whose signature does not match is refused.\n",
                    import_opts, 1, 1},
};

static const cli_cmd cache_group = {"cache", "SUBCOMMAND ...", "The kernel cache "
                                    "(KILN_CACHE_DIR, KILN_REMOTE_CACHE).", NULL, NULL, 1, 64};

static void group_help(FILE *f) {
    fprintf(f, "usage: kiln cache SUBCOMMAND [options] ...\n\n%s\n\nsubcommands:\n",
            cache_group.summary);
    for (int i = 0; i < NSUB; i++)
        fprintf(f, "  %-8s %s\n", cli_cache_cmds[i].name + 6, cli_cache_cmds[i].summary);
    fprintf(f, "\nkiln cache SUBCOMMAND --help says more.\n");
}


static int put_prefix(char out[][TARGET_TEXT_MAX], int *nt, const char *p) {
    size_t n = strlen(p);
    if (*nt >= MAX_EXPORT_TARGETS || n >= TARGET_TEXT_MAX) return -1;
    memcpy(out[(*nt)++], p, n + 1);
    return 0;
}

/* Adds the export prefixes of one --target value: cpu, cpu:NAME, cuda,
 * cuda:sm_80,sm_90 (or cuda:80,90).  0, or -1 when it is malformed. */
static int add_targets(const char *spec, char out[][TARGET_TEXT_MAX], int *nt) {
    char buf[256];
    if (!*spec || snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf) return -1;
    if (strcmp(buf, "cpu") == 0 || strcmp(buf, "cuda") == 0) return put_prefix(out, nt, buf);
    if (strncmp(buf, "cpu:", 4) == 0) {
        const char *p = buf + 4;
        if (!*p) return -1;
        for (; *p; p++)
            if (!(*p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                  (*p >= 'A' && *p <= 'Z')))
                return -1;
        return put_prefix(out, nt, buf);
    }
    if (strncmp(buf, "cuda:", 5) != 0) return -1;
    char *save = NULL, *list = buf + 5;
    if (!*list || *list == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,")) return -1;
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (strncmp(w, "cuda:", 5) == 0) w += 5;
        int arch = parse_arch(w);
        if (arch < 0 || *nt >= MAX_EXPORT_TARGETS) return -1;
        snprintf(out[(*nt)++], TARGET_TEXT_MAX, "cuda:sm_%d", arch);
    }
    return 0;
}

/* ---- stats ------------------------------------------------------------------------ */

/* hits / (hits + compiles) of the disk tier, all processes; -1 before any */
static double hit_rate(const kiln_cache_stats *st) {
    int64_t n = st->total_hits + st->total_compiles;
    return n ? (double)st->total_hits / (double)n : -1;
}

static int do_stats(kiln_cache *c, bool json) {
    kiln_cache_stats st;
    kiln_cache_get_stats(c, &st);
    const char *path = kiln_cache_path(c), *remote = kiln_cache_remote(c);
    const char *want = getenv("KILN_REMOTE_CACHE");
    char masked[1024], off[1200];
    bool connected = remote != NULL;
    if (!remote && want && *want) remote = want; /* configured, but it failed */
    if (remote) remote = mask_url(remote, masked, sizeof masked);
    if (json) {
        json_out j;
        json_begin(&j, stdout);
        json_obj(&j, NULL);
        if (path) {
            json_obj(&j, "disk");
            json_str(&j, "path", path);
            json_int(&j, "entries", st.entries);
            json_int(&j, "bytes", st.bytes);
            json_int(&j, "max_bytes", st.max_bytes);
            json_int(&j, "compiles", st.total_compiles);
            json_num(&j, "compile_ms", st.total_compile_ms);
            json_int(&j, "hits", st.total_hits);
            if (hit_rate(&st) >= 0) json_num(&j, "hit_rate", hit_rate(&st));
            else json_null(&j, "hit_rate");
            json_int(&j, "evictions", st.total_evictions);
            json_int(&j, "failed_checks", st.total_verify_failures);
            json_close(&j, '}');
        } else {
            json_null(&j, "disk");
        }
        if (remote) {
            json_obj(&j, "remote");
            json_str(&j, "address", remote);
            json_bool(&j, "connected", connected);
            json_close(&j, '}');
        } else {
            json_null(&j, "remote");
        }
        json_close(&j, '}');
        json_end(&j);
        return 0;
    }
    char b1[32], b2[32];
    human_bytes(b1, sizeof b1, (double)st.bytes);
    human_bytes(b2, sizeof b2, (double)st.max_bytes);
    printf("disk tier:      %s\n", path ? path : "off (memory only)");
    printf("entries:        %lld\n", (long long)st.entries);
    printf("size:           %s of %s\n", b1, b2);
    printf("compiles:       %lld, %.1f ms in all (all processes)\n",
           (long long)st.total_compiles, st.total_compile_ms);
    if (hit_rate(&st) >= 0)
        printf("hits:           %lld, hit rate %.1f%% (hits / (hits + compiles), all processes)\n",
               (long long)st.total_hits, 100 * hit_rate(&st));
    else
        printf("hits:           0 (no look-up has reached the disk yet)\n");
    printf("evictions:      %lld\n", (long long)st.total_evictions);
    printf("failed checks:  %lld\n", (long long)st.total_verify_failures);
    if (remote && !connected)
        snprintf(off, sizeof off, "off: %s could not be used (see the warning)", remote);
    printf("remote tier:    %s\n",
           !remote ? "off (set KILN_REMOTE_CACHE)" : connected ? remote : off);
    return 0;
}

/* ---- ls ----------------------------------------------------------------------------- */

typedef struct Entry {
    kiln_cache_entry e; /* kind, name and target point into the copies below */
    char *kind, *name, *target;
} Entry;

typedef struct Entries {
    Entry *v;
    size_t n, cap;
    bool failed; /* out of memory */
} Entries;

static void collect(void *ud, const kiln_cache_entry *e) {
    Entries *es = ud;
    if (es->failed) return;
    if (es->n == es->cap) {
        size_t cap = es->cap ? 2 * es->cap : 64;
        Entry *v = realloc(es->v, cap * sizeof *v);
        if (!v) {
            es->failed = true;
            return;
        }
        es->v = v;
        es->cap = cap;
    }
    Entry *x = &es->v[es->n];
    x->e = *e;
    x->kind = strdup(e->kind ? e->kind : "?");
    x->name = strdup(e->name ? e->name : "");
    x->target = strdup(e->target ? e->target : "?");
    if (!x->kind || !x->name || !x->target) {
        free(x->kind);
        free(x->name);
        free(x->target);
        es->failed = true;
        return;
    }
    es->n++;
}

static int by_size(const void *a, const void *b) {
    int64_t x = ((const Entry *)a)->e.size, y = ((const Entry *)b)->e.size;
    return x < y ? 1 : x > y ? -1 : 0;
}
static int by_name(const void *a, const void *b) {
    return strcmp(((const Entry *)a)->name, ((const Entry *)b)->name);
}
static int by_created(const void *a, const void *b) {
    int64_t x = ((const Entry *)a)->e.created_ms, y = ((const Entry *)b)->e.created_ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int by_hits(const void *a, const void *b) {
    int64_t x = ((const Entry *)a)->e.hits, y = ((const Entry *)b)->e.hits;
    return x < y ? 1 : x > y ? -1 : 0;
}
static int by_compile(const void *a, const void *b) {
    double x = ((const Entry *)a)->e.compile_ms, y = ((const Entry *)b)->e.compile_ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* max-autotune's kept launch choices (facts "autotune|kind|function|device|bucket"). */
typedef struct {
    json_out *j; /* NULL: text */
    int n;
} Choices;

static void print_choice(void *ud, const char *name, const char *value) {
    Choices *ch = ud;
    const char *what = name + strlen("autotune|");
    if (ch->j) {
        json_obj(ch->j, NULL);
        json_str(ch->j, "name", what);
        json_str(ch->j, "choice", value);
        json_close(ch->j, '}');
    } else {
        if (ch->n == 0)
            printf("\nmax-autotune choices (kind|function:code:types:kernel|device|size bits):\n");
        printf("  %-12s  %s\n", value, what);
    }
    ch->n++;
}

static int do_ls(kiln_cache *c, bool json, const char *sort) {
    Entries es = {0};
    kiln_cache_list(c, collect, &es); /* most recently used first */
    int rc = 0;
    if (es.failed) {
        fprintf(stderr, "kiln cache ls: out of memory\n");
        rc = 1;
        goto done;
    }
    if (strcmp(sort, "size") == 0) qsort(es.v, es.n, sizeof *es.v, by_size);
    else if (strcmp(sort, "name") == 0) qsort(es.v, es.n, sizeof *es.v, by_name);
    else if (strcmp(sort, "created") == 0) qsort(es.v, es.n, sizeof *es.v, by_created);
    else if (strcmp(sort, "hits") == 0) qsort(es.v, es.n, sizeof *es.v, by_hits);
    else if (strcmp(sort, "compile") == 0) qsort(es.v, es.n, sizeof *es.v, by_compile);
    if (json) {
        json_out j;
        json_begin(&j, stdout);
        json_obj(&j, NULL);
        json_str(&j, "path", kiln_cache_path(c));
        json_arr(&j, "entries");
        for (size_t i = 0; i < es.n; i++) {
            char hex[33];
            kiln_cache_key_hex(&es.v[i].e.key, hex);
            json_obj(&j, NULL);
            json_str(&j, "key", hex);
            json_str(&j, "kind", es.v[i].kind);
            json_str(&j, "target", es.v[i].target);
            json_int(&j, "size", es.v[i].e.size);
            json_int(&j, "created_ms", es.v[i].e.created_ms);
            json_int(&j, "last_used_ms", es.v[i].e.last_used_ms);
            json_int(&j, "hits", es.v[i].e.hits);
            json_num(&j, "compile_ms", es.v[i].e.compile_ms);
            json_str(&j, "name", es.v[i].name);
            json_close(&j, '}');
        }
        json_close(&j, ']');
        json_arr(&j, "autotune");
        Choices ch = {&j, 0};
        kiln_cache_facts(c, "autotune|", print_choice, &ch);
        json_close(&j, ']');
        json_close(&j, '}');
        json_end(&j);
        goto done;
    }
    printf("%-32s  %-5s  %-12s  %10s  %-16s  %6s  %10s  %s\n", "key", "kind", "target", "size",
           "last used", "hits", "compile ms", "kernel");
    for (size_t i = 0; i < es.n; i++) {
        const Entry *x = &es.v[i];
        char hex[33], size[32], when[32];
        kiln_cache_key_hex(&x->e.key, hex);
        human_bytes(size, sizeof size, (double)x->e.size);
        time_t t = (time_t)(x->e.last_used_ms / 1000);
        struct tm tm;
        localtime_r(&t, &tm);
        strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
        printf("%s  %-5s  %-12s  %10s  %s  %6lld  %10.1f  %s\n", hex, x->kind, x->target, size,
               when, (long long)x->e.hits, x->e.compile_ms, x->name);
    }
    Choices ch = {NULL, 0};
    kiln_cache_facts(c, "autotune|", print_choice, &ch);
done:
    for (size_t i = 0; i < es.n; i++) {
        free(es.v[i].kind);
        free(es.v[i].name);
        free(es.v[i].target);
    }
    free(es.v);
    return rc;
}

/* ---- the command ------------------------------------------------------------------- */

int cmd_cache(int argc, char **argv) {
    if (argc < 1) {
        fprintf(stderr, "kiln cache: missing subcommand\n");
        group_help(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        group_help(stdout);
        return 0;
    }
    int sub = -1;
    for (int i = 0; i < NSUB; i++)
        if (strcmp(argv[0], cli_cache_cmds[i].name + 6) == 0) sub = i;
    if (sub < 0) {
        fprintf(stderr, "kiln cache: unknown subcommand '%s'\n", argv[0]);
        group_help(stderr);
        return EXIT_USAGE;
    }
    const cli_cmd *cmd = &cli_cache_cmds[sub];
    cli_args a;
    int prc = cli_parse(cmd, argc - 1, argv + 1, &a);
    if (prc != 0) return CLI_PARSED_EXIT(prc);

    /* everything that can be refused without the cache is refused before opening it */
    const char *sort = "used";
    int64_t max = -1;
    char prefixes[MAX_EXPORT_TARGETS][TARGET_TEXT_MAX];
    const char *targets[MAX_EXPORT_TARGETS];
    int nt = 0;
    if (sub == SUB_LS && cli_value(cmd, &a, "--sort")) {
        sort = cli_value(cmd, &a, "--sort");
        static const char *const keys[] = {"used", "last", "size", "name", "created", "hits",
                                           "compile"};
        bool known = false;
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) known |= strcmp(sort, keys[i]) == 0;
        if (!known)
            return cli_usage_error(cmd, "cannot sort by '%s' (used, last, size, name, created, "
                                   "hits or compile)", sort);
    }
    if (sub == SUB_PRUNE && a.npos == 1 && (max = kiln_parse_size(a.pos[0])) < 0)
        return cli_usage_error(cmd, "'%s' is not a size (write 512M, 2G...)", a.pos[0]);
    if (sub == SUB_EXPORT)
        for (int i = 0; i < a.ngiven; i++)
            if (add_targets(a.given[i].value, prefixes, &nt) != 0)
                return cli_usage_error(cmd, "bad target '%s' (write cpu, cuda, or "
                                       "cuda:sm_80,sm_90; at most %d in all)",
                                       a.given[i].value, MAX_EXPORT_TARGETS);
    for (int i = 0; i < nt; i++) targets[i] = prefixes[i];

    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) {
        fprintf(stderr, "kiln: out of memory\n");
        return 1;
    }
    kiln_ctx_set_diag(ctx, cli_on_diag, NULL);
    kiln_cache *c = kiln_cache_open(ctx, NULL);
    int rc = 0;
    if (!c) {
        fprintf(stderr, "kiln: out of memory\n");
        kiln_ctx_free(ctx);
        return 1;
    }
    bool json = sub != SUB_EXPORT && sub != SUB_IMPORT && cli_flag(cmd, &a, "--json");
    if ((sub == SUB_VERIFY || sub == SUB_CLEAR || sub == SUB_PRUNE) && !kiln_cache_path(c)) {
        /* the disk tier could not be opened (locked, read-only, not ours: the warning
         * above says why): its entries were neither seen nor changed */
        fprintf(stderr, "error: kiln's disk cache is off in this process, so nothing was %s\n"
                        "hint: the warning above says why kiln cannot use it\n",
                sub == SUB_VERIFY ? "verified" : sub == SUB_CLEAR ? "removed" : "evicted");
        kiln_cache_close(c);
        kiln_ctx_free(ctx);
        return 1;
    }
    switch (sub) {
    case SUB_STATS:
        rc = do_stats(c, json);
        break;
    case SUB_LS:
        rc = do_ls(c, json, sort);
        break;
    case SUB_VERIFY: {
        int64_t bad;
        int64_t n = kiln_cache_verify(c, &bad);
        printf("checked %lld entries: %lld problems%s\n", (long long)n, (long long)bad,
               bad ? " (each is named above, with what was done)" : "");
        rc = bad ? 1 : 0;
        break;
    }
    case SUB_CLEAR:
        printf("removed %lld entries\n", (long long)kiln_cache_clear(c));
        break;
    case SUB_PRUNE:
        printf("evicted %lld entries\n", (long long)kiln_cache_prune(c, max));
        break;
    case SUB_EXPORT: {
        int is_signed = 0;
        int64_t n = kiln_cache_export_bundle(c, a.pos[0], targets, nt, &is_signed);
        if (n < 0) rc = 1;
        else printf("exported %lld entries to %s%s\n", (long long)n, a.pos[0],
                    is_signed ? " (signed)" : "");
        break;
    }
    case SUB_IMPORT: {
        int checked = 0;
        int flags = cli_flag(cmd, &a, "--trust-unsigned") ? KILN_IMPORT_TRUST_UNSIGNED : 0;
        if (!kiln_cache_path(c) && !kiln_cache_remote(c)) { /* this process keeps nothing */
            fprintf(stderr, "error: the disk cache is off in this process: nothing of %s "
                            "would be kept, so nothing was imported\nhint: give KILN_CACHE_DIR "
                            "a directory kiln can use (the warning above says why it cannot)\n",
                    a.pos[0]);
            rc = 1;
            break;
        }
        int64_t n = kiln_cache_import_bundle(c, a.pos[0], flags, &checked);
        if (n < 0) rc = 1;
        else printf("imported %lld entries from %s%s\n", (long long)n, a.pos[0],
                    checked ? " (signature checked)" : "");
        break;
    }
    }
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    return rc;
}

/* ---- kiln metrics ------------------------------------------------------------------ */

static const cli_opt metrics_opts[] = {
    {"--json", 0, NULL, "print JSON instead of text (docs/observability.md has its shape)"},
    {0},
};

const cli_cmd cli_metrics_cmd = {
    "metrics", "", "Show compile times and cache hits per kernel, over all processes.",
    "A process's own counters (launches, host cost, bytes, device time) live in it:\n"
    "kiln.metrics() returns them, and KILN_TRACE or kiln.profile() records them.\n"
    "This command reads what every process left in the disk cache (KILN_CACHE_DIR):\n"
    "for each kernel specialisation its build time, its hits and its last use, and\n"
    "the hit rate across processes, hits / (hits + compiles).\n",
    metrics_opts, 0, 0};

int cmd_metrics(int argc, char **argv) {
    const cli_cmd *cmd = &cli_metrics_cmd;
    cli_args a;
    int prc = cli_parse(cmd, argc, argv, &a);
    if (prc != 0) return CLI_PARSED_EXIT(prc);
    bool json = cli_flag(cmd, &a, "--json");
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_cache *c = ctx ? kiln_cache_open(ctx, NULL) : NULL;
    if (!c) {
        fprintf(stderr, "kiln: out of memory\n");
        kiln_ctx_free(ctx);
        return 1;
    }
    kiln_ctx_set_diag(ctx, cli_on_diag, NULL);
    kiln_cache_stats st;
    kiln_cache_get_stats(c, &st);
    Entries es = {0};
    kiln_cache_list(c, collect, &es);
    int rc = 0;
    if (es.failed) {
        fprintf(stderr, "kiln metrics: out of memory\n");
        rc = 1;
        goto done;
    }
    qsort(es.v, es.n, sizeof *es.v, by_hits);
    if (json) {
        json_out j;
        json_begin(&j, stdout);
        json_obj(&j, NULL);
        json_str(&j, "source", "disk cache");
        json_str(&j, "path", kiln_cache_path(c));
        json_int(&j, "compiles", st.total_compiles);
        json_num(&j, "compile_ms", st.total_compile_ms);
        json_int(&j, "hits", st.total_hits);
        if (hit_rate(&st) >= 0) json_num(&j, "hit_rate", hit_rate(&st));
        else json_null(&j, "hit_rate");
        json_arr(&j, "kernels");
        for (size_t i = 0; i < es.n; i++) {
            json_obj(&j, NULL);
            json_str(&j, "name", es.v[i].name);
            json_str(&j, "target", es.v[i].target);
            json_str(&j, "kind", es.v[i].kind);
            json_int(&j, "hits", es.v[i].e.hits);
            json_num(&j, "compile_ms", es.v[i].e.compile_ms);
            json_int(&j, "last_used_ms", es.v[i].e.last_used_ms);
            json_int(&j, "size", es.v[i].e.size);
            json_close(&j, '}');
        }
        json_close(&j, ']');
        json_close(&j, '}');
        json_end(&j);
        goto done;
    }
    printf("cache:     %s\n", kiln_cache_path(c) ? kiln_cache_path(c) : "off (memory only)");
    printf("compiles:  %lld, %.1f ms in all\n", (long long)st.total_compiles,
           st.total_compile_ms);
    if (hit_rate(&st) >= 0)
        printf("hits:      %lld, hit rate %.1f%% (all processes)\n\n", (long long)st.total_hits,
               100 * hit_rate(&st));
    else
        printf("hits:      0\n\n");
    printf("%6s  %10s  %-12s  %s\n", "hits", "compile ms", "target", "kernel");
    for (size_t i = 0; i < es.n; i++)
        printf("%6lld  %10.1f  %-12s  %s\n", (long long)es.v[i].e.hits, es.v[i].e.compile_ms,
               es.v[i].target, es.v[i].name);
done:
    for (size_t i = 0; i < es.n; i++) {
        free(es.v[i].kind);
        free(es.v[i].name);
        free(es.v[i].target);
    }
    free(es.v);
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    return rc;
}
