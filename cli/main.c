/* main.c: the `kiln` command.
 *
 *   kiln info                          version, C compiler, targets
 *   kiln compile FILE.py FUNC SIG      type a kernel and print its code
 *        [--target cpu|cuda] [--arch 90] [--types] [--build] [--fastmath] [--debug]
 *
 * The CLI has no Python interpreter, so `compile` resolves globals the way a
 * kernel file that imports its modules conventionally would: math, numpy/np,
 * kiln/cuda and the builtins; other globals are reported as undefined.  It
 * exists to check kernels and read generated code from a shell; the Python
 * package is the full front door.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln.h"

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
            o.cuda_arch = atoi(argv[++i]);
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

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        printf("usage: kiln info | kiln compile FILE.py FUNC SIGNATURE [options]\n");
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "info") == 0) return cmd_info();
    if (strcmp(argv[1], "compile") == 0) return cmd_compile(argc - 2, argv + 2);
    fprintf(stderr, "kiln: unknown command '%s'\n", argv[1]);
    return 2;
}
