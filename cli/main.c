/* main.c: the `kiln` command.
 *
 *   kiln info                          version, C compiler, targets, the cache
 *   kiln compile FILE.py FUNC SIG      type a kernel and print its code
 *        [--target cpu|cuda] [--arch 90] [--types] [--build] [--fastmath] [--debug]
 *   kiln cache stats|ls|verify|clear   the kernel cache (KILN_CACHE_DIR, KILN_REMOTE_CACHE)
 *   kiln cache prune [SIZE]            evict least recently used entries down to SIZE
 *   kiln cache export FILE [--target T]...   write entries to a bundle (signed when
 *                                      KILN_BUNDLE_KEY or KILN_BUNDLE_KEY_FILE is set)
 *   kiln cache import [--trust-unsigned] FILE   check a bundle's signature (when a key is
 *                                      set), verify and store its entries
 *   kiln precompile MODULE.py --target cuda:sm_80,sm_90 --target cpu
 *                                      build every kernel with explicit signatures (runs
 *                                      Python: globals need the module imported)
 *
 * The CLI has no Python interpreter, so `compile` resolves globals the way a
 * kernel file that imports its modules conventionally would: math, numpy/np,
 * kiln/cuda and the builtins; other globals are reported as undefined.  It
 * exists to check kernels and read generated code from a shell; the Python
 * package is the full front door.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kiln.h"

enum {
    /* CUDA architectures the CLI takes (sm_XY, XY = compute capability x 10): a
     * sanity bound, so "-5" or "100000" is an error here; NVRTC says which of
     * these it can compile for.  python/kiln/__main__.py has the same bounds. */
    ARCH_MIN = 10,
    ARCH_MAX = 199,
    MAX_EXPORT_TARGETS = 64 /* --target prefixes of one `kiln cache export` */
};

/* "90" or "sm_90" -> 90; -1 when it is neither, or out of bounds. */
static int parse_arch(const char *s) {
    if (strncmp(s, "sm_", 3) == 0) s += 3;
    if (!*s || strlen(s) > 3) return -1;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return -1;
    int v = atoi(s);
    return v >= ARCH_MIN && v <= ARCH_MAX ? v : -1;
}

static void bad_arch(const char *s) {
    fprintf(stderr, "kiln: '%s' is not a CUDA architecture (write 90 or sm_90, from sm_%d to "
                    "sm_%d)\n", s, ARCH_MIN, ARCH_MAX);
}

static int nerrors;

static void on_diag(void *ud, const kiln_diag *d) {
    (void)ud;
    fprintf(stderr, "%s\n", d->formatted);
    if (d->severity == KILN_ERROR) nerrors++;
}

static int resolve(void *ud, void *scope, const char *name, kiln_value *out) {
    (void)ud;
    (void)scope;
    static const char *const builtins[] = {"abs", "min", "max", "int", "float", "bool",
                                           "round", "range", "len"};
    memset(out, 0, sizeof *out);
    out->kind = KILN_VAL_MISSING;
    if (strcmp(name, "math") == 0) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "math";
    } else if (strcmp(name, "np") == 0 || strcmp(name, "numpy") == 0) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "numpy";
    } else if (strcmp(name, "kiln") == 0 || strcmp(name, "cuda") == 0) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "kiln";
    } else {
        for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
            if (strcmp(name, builtins[i]) == 0) {
                static char buf[64];
                snprintf(buf, sizeof buf, "builtins.%s", name);
                out->kind = KILN_VAL_NAMESPACE;
                out->name = buf;
            }
    }
    return 0;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n < 0) {
        fclose(f);
        return NULL;
    }
    char *p = malloc((size_t)n + 1);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        fclose(f);
        return NULL;
    }
    p[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return p;
}

/* Finds the line of `def func(` and moves up over its decorators. */
static const char *find_def(const char *text, const char *func, int *line) {
    char pat[256];
    snprintf(pat, sizeof pat, "def %s(", func);
    const char *s = text;
    int ln = 1;
    const char *hit = NULL;
    int hit_line = 0;
    for (const char *p = text; *p; p++) {
        if (p == s || p[-1] == '\n') {
            const char *q = p;
            while (*q == ' ' || *q == '\t') q++;
            if (strncmp(q, pat, strlen(pat)) == 0) {
                hit = p;
                hit_line = ln;
                break;
            }
        }
        if (*p == '\n') ln++;
    }
    if (!hit) return NULL;
    /* walk back over decorator lines */
    const char *start = hit;
    int sl = hit_line;
    while (start > text) {
        const char *prev = start - 1;
        while (prev > text && prev[-1] != '\n') prev--;
        const char *q = prev;
        while (*q == ' ' || *q == '\t') q++;
        if (*q != '@') break;
        start = prev;
        sl--;
    }
    *line = sl;
    return start;
}

static int cmd_info(void) {
    kiln_ctx *ctx = kiln_ctx_new();
    printf("kiln %s\n", kiln_version());
    printf("cpu compiler: %s\n", kiln_cpu_compiler(ctx));
    printf("targets: cpu, cuda (code generation; running needs the Python package)\n");
    kiln_ctx_free(ctx);
    return 0;
}

static int cmd_compile(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: kiln compile FILE.py FUNC SIGNATURE [--target cpu|cuda] [--types] "
                        "[--build] [--fastmath] [--debug]\n");
        return 2;
    }
    const char *path = argv[0], *func = argv[1], *sig = argv[2];
    kiln_options o;
    memset(&o, 0, sizeof o);
    o.target = KILN_TARGET_CPU;
    o.cuda_arch = 90;
    int show_types = 0, build = 0;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
            const char *t = argv[++i];
            if (strcmp(t, "cuda") == 0) o.target = KILN_TARGET_CUDA;
            else if (strcmp(t, "cpu") != 0) {
                fprintf(stderr, "kiln: unknown target '%s' (cpu or cuda)\n", t);
                return 2;
            }
        } else if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc) {
            o.cuda_arch = parse_arch(argv[++i]);
            if (o.cuda_arch < 0) {
                bad_arch(argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--types") == 0) {
            show_types = 1;
        } else if (strcmp(argv[i], "--build") == 0) {
            build = 1;
        } else if (strcmp(argv[i], "--fastmath") == 0) {
            o.fastmath = 1;
        } else if (strcmp(argv[i], "--debug") == 0) {
            o.debug = 1;
        } else {
            fprintf(stderr, "kiln: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    size_t len;
    char *text = slurp(path, &len);
    if (!text) {
        fprintf(stderr, "kiln: cannot read %s\n", path);
        return 1;
    }
    int line;
    const char *start = find_def(text, func, &line);
    if (!start) {
        fprintf(stderr, "kiln: no function '%s' in %s\n", func, path);
        free(text);
        return 1;
    }
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, on_diag, NULL);
    kiln_argtype ret, args[KILN_MAX_PARAMS];
    int n = kiln_parse_signature(ctx, sig, &ret, args, KILN_MAX_PARAMS);
    int rc = 1;
    if (n >= 0) {
        kiln_source src = {start, len - (size_t)(start - text), path, line, NULL};
        kiln_program *p = kiln_translate(ctx, &src, args, n, &o, resolve, NULL);
        if (p) {
            size_t slen;
            const char *code = kiln_program_source(p, &slen);
            if (show_types) fputs(kiln_program_types(p), stdout);
            else fwrite(code, 1, slen, stdout);
            rc = 0;
            if (build && o.target == KILN_TARGET_CPU) {
                void *blob;
                size_t blen;
                rc = kiln_cpu_build(ctx, code, slen, &blob, &blen) == 0 ? 0 : 1;
                if (rc == 0) {
                    fprintf(stderr, "kiln: built %zu bytes of machine code\n", blen);
                    free(blob);
                }
            }
            kiln_program_free(p);
        }
    }
    kiln_ctx_free(ctx);
    free(text);
    return rc;
}

/* ---- kiln cache ---------------------------------------------------------------------- */

static int64_t parse_bytes(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0)) return -1;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    case 0: break;
    default: return -1;
    }
    if (*end == 'i') end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end || v * mul > 9e18) return -1;
    return (int64_t)(v * mul);
}

static void human(char *buf, size_t size, double bytes) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

static void print_entry(void *ud, const kiln_cache_entry *e) {
    (void)ud;
    char hex[33], size[32], when[32];
    kiln_cache_key_hex(&e->key, hex);
    human(size, sizeof size, (double)e->size);
    time_t t = (time_t)(e->last_used_ms / 1000);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
    printf("%s  %-5s  %-12s  %10s  %s  %s\n", hex, e->kind ? e->kind : "?",
           e->target ? e->target : "?", size, when, e->name ? e->name : "");
}

static int put_prefix(char out[][32], int *nt, const char *p) {
    size_t n = strlen(p);
    if (*nt >= MAX_EXPORT_TARGETS || n >= 32) return -1;
    memcpy(out[(*nt)++], p, n + 1);
    return 0;
}

/* Adds the export prefixes of one --target value: cpu, cpu:NAME, cuda,
 * cuda:sm_80,sm_90 (or cuda:80,90).  0, or -1 when it is malformed. */
static int add_targets(const char *spec, char out[][32], int *nt) {
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
        snprintf(out[(*nt)++], 32, "cuda:sm_%d", arch);
    }
    return 0;
}

static int cmd_cache(int argc, char **argv) {
    static const char usage[] =
        "usage: kiln cache stats | ls | verify | clear | prune [SIZE] | "
        "export FILE [--target T]... | import [--trust-unsigned] FILE\n";
    if (argc < 1) {
        fputs(usage, stderr);
        return 2;
    }
    const char *sub = argv[0];
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, on_diag, NULL);
    kiln_cache *c = kiln_cache_open(ctx, NULL);
    int rc = 0;
    if (!c) {
        fprintf(stderr, "kiln: out of memory\n");
        rc = 1;
    } else if (strcmp(sub, "stats") == 0 && argc == 1) {
        kiln_cache_stats st;
        kiln_cache_get_stats(c, &st);
        const char *path = kiln_cache_path(c), *remote = kiln_cache_remote(c);
        char b1[32], b2[32];
        human(b1, sizeof b1, (double)st.bytes);
        human(b2, sizeof b2, (double)st.max_bytes);
        printf("disk tier:      %s\n", path ? path : "off (memory only)");
        printf("entries:        %lld\n", (long long)st.entries);
        printf("size:           %s of %s\n", b1, b2);
        printf("compiles:       %lld, %.1f ms in all (all processes)\n",
               (long long)st.total_compiles, st.total_compile_ms);
        printf("evictions:      %lld\n", (long long)st.total_evictions);
        printf("failed checks:  %lld\n", (long long)st.total_verify_failures);
        printf("remote tier:    %s\n", remote ? remote : "off (set KILN_REMOTE_CACHE)");
    } else if (strcmp(sub, "ls") == 0 && argc == 1) {
        printf("%-32s  %-5s  %-12s  %10s  %-16s  %s\n", "key", "kind", "target", "size",
               "last used", "kernel");
        kiln_cache_list(c, print_entry, NULL);
    } else if (strcmp(sub, "verify") == 0 && argc == 1) {
        int64_t bad;
        int64_t n = kiln_cache_verify(c, &bad);
        printf("checked %lld entries: %lld problems%s\n", (long long)n, (long long)bad,
               bad ? " (bad entries were removed)" : "");
        rc = bad ? 1 : 0;
    } else if (strcmp(sub, "clear") == 0 && argc == 1) {
        printf("removed %lld entries\n", (long long)kiln_cache_clear(c));
    } else if (strcmp(sub, "prune") == 0 && argc <= 2) {
        int64_t max = -1;
        if (argc == 2 && (max = parse_bytes(argv[1])) < 0) {
            fprintf(stderr, "kiln: '%s' is not a size (write 512M, 2G...)\n", argv[1]);
            rc = 2;
        } else {
            printf("evicted %lld entries\n", (long long)kiln_cache_prune(c, max));
        }
    } else if (strcmp(sub, "export") == 0 && argc >= 2) {
        char prefixes[MAX_EXPORT_TARGETS][32];
        const char *targets[MAX_EXPORT_TARGETS];
        int nt = 0;
        for (int i = 2; i < argc && rc == 0; i++) {
            if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
                /* "cuda:sm_80,sm_90" is two prefixes */
                if (add_targets(argv[++i], prefixes, &nt) != 0) {
                    fprintf(stderr, "kiln: bad target '%s' (write cpu, cuda, or cuda:sm_80,sm_90; "
                                    "at most %d in all)\n", argv[i], MAX_EXPORT_TARGETS);
                    rc = 2;
                }
            } else {
                fprintf(stderr, "kiln: unknown option '%s'\n%s", argv[i], usage);
                rc = 2;
            }
        }
        for (int i = 0; i < nt; i++) targets[i] = prefixes[i];
        if (rc == 0) {
            int is_signed = 0;
            int64_t n = kiln_cache_export_bundle(c, argv[1], targets, nt, &is_signed);
            if (n < 0) rc = 1;
            else printf("exported %lld entries to %s%s\n", (long long)n, argv[1],
                        is_signed ? " (signed)" : "");
        }
    } else if (strcmp(sub, "import") == 0 && argc >= 2) {
        int flags = 0;
        const char *file = NULL;
        for (int i = 1; i < argc && rc == 0; i++) {
            if (strcmp(argv[i], "--trust-unsigned") == 0) {
                flags |= KILN_IMPORT_TRUST_UNSIGNED;
            } else if (!file && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0)) {
                file = argv[i];
            } else {
                fprintf(stderr, "kiln: unknown option '%s'\n%s", argv[i], usage);
                rc = 2;
            }
        }
        if (rc == 0 && !file) {
            fputs(usage, stderr);
            rc = 2;
        }
        if (rc == 0) {
            int checked = 0;
            int64_t n = kiln_cache_import_bundle(c, file, flags, &checked);
            if (n < 0) rc = 1;
            else printf("imported %lld entries from %s%s\n", (long long)n, file,
                        checked ? " (signature checked)" : "");
        }
    } else {
        fputs(usage, stderr);
        rc = 2;
    }
    kiln_cache_close(c);
    kiln_ctx_free(ctx);
    return rc;
}

/* ---- kiln precompile ------------------------------------------------------------------ */

/* Runs `python -m kiln precompile ...`: the Python kiln was installed with
 * this program, so the interpreter beside it comes first; then $KILN_PYTHON,
 * then python3 on the PATH.  The interpreter is a child, not exec'd in our
 * place, so that its failure can be told apart from the precompile's: kiln's
 * Python side writes a line to the pipe named by KILN_PRECOMPILE_FD when it
 * starts, and an interpreter that ends without writing it (not Python, no
 * kiln installed, killed) is reported here with what it did. */
static int cmd_precompile(int argc, char **argv) {
    char self[PATH_MAX], beside[PATH_MAX + 16];
    const char *py = getenv("KILN_PYTHON");
    bool from_env = py && *py;
    if (!from_env) {
        py = "python3";
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n > 0) {
            self[n] = 0;
            char *slash = strrchr(self, '/');
            if (slash) {
                *slash = 0;
                snprintf(beside, sizeof beside, "%s/python3", self);
                if (access(beside, X_OK) == 0) py = beside;
            }
        }
    }
    const char *named = from_env ? " (KILN_PYTHON)" : "";
    char **args = calloc((size_t)argc + 5, sizeof *args);
    int pfd[2];
    if (!args || pipe2(pfd, O_CLOEXEC) != 0) {
        fprintf(stderr, "kiln: cannot start %s: %s\n", py, strerror(errno));
        free(args);
        return 1;
    }
    int n = 0;
    args[n++] = (char *)py;
    args[n++] = (char *)"-m";
    args[n++] = (char *)"kiln";
    args[n++] = (char *)"precompile";
    for (int i = 0; i < argc; i++) args[n++] = argv[i];
    args[n] = NULL;
    /* Ctrl-C reaches the interpreter too; this process waits for its end */
    struct sigaction ign = {0}, old_int, old_quit;
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    pid_t pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        char fd[16];
        snprintf(fd, sizeof fd, "%d", pfd[1]);
        fcntl(pfd[1], F_SETFD, 0); /* the write end crosses exec */
        setenv("KILN_PRECOMPILE_FD", fd, 1);
        execvp(py, args);
        dprintf(pfd[1], "exec %d\n", errno);
        _exit(127);
    }
    close(pfd[1]);
    char said[64] = {0};
    size_t got = 0;
    while (pid > 0 && got < sizeof said - 1) {
        ssize_t r = read(pfd[0], said + got, sizeof said - 1 - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(pfd[0]);
    int status = 0, rc = 1;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    free(args);
    static const char hint[] = "hint: set KILN_PYTHON to a Python that has kiln installed\n";
    bool ran = strncmp(said, "kiln precompile\n", 16) == 0;
    if (pid < 0) {
        fprintf(stderr, "kiln: cannot start %s%s: %s\n", py, named, strerror(errno));
    } else if (strncmp(said, "exec ", 5) == 0) {
        fprintf(stderr, "kiln: cannot run %s%s for precompile: %s\n%s", py, named,
                strerror(atoi(said + 5)), hint);
    } else if (WIFSIGNALED(status)) {
        fprintf(stderr, "kiln: the Python interpreter %s%s was killed by signal %d (%s)\n", py,
                named, WTERMSIG(status), strsignal(WTERMSIG(status)));
        rc = 128 + WTERMSIG(status);
    } else if (!ran) {
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        fprintf(stderr, "kiln: the Python interpreter %s%s exited with status %d before running "
                        "kiln's precompile\n%s", py, named, code, hint);
        rc = code ? code : 1;
    } else {
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1; /* it said what went wrong */
    }
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        printf("usage: kiln info | compile FILE.py FUNC SIGNATURE [options] | cache ... | "
               "precompile MODULE.py --target ...\n");
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "info") == 0) return cmd_info();
    if (strcmp(argv[1], "compile") == 0) return cmd_compile(argc - 2, argv + 2);
    if (strcmp(argv[1], "cache") == 0) return cmd_cache(argc - 2, argv + 2);
    if (strcmp(argv[1], "precompile") == 0) return cmd_precompile(argc - 2, argv + 2);
    fprintf(stderr, "kiln: unknown command '%s'\n", argv[1]);
    return 2;
}
