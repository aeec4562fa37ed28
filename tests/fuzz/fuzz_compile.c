/* fuzz_compile.c: libFuzzer target over the compiler path (lexer, parser,
 * sema, emit) through the public API, kiln_translate and kiln_infer_return.
 *
 * An input is
 *
 *     byte 0   options: bit 0 CUDA (else CPU), 1 debug, 2 fastmath, 3 lineinfo,
 *              4 also type the function as a device function (kiln_infer_return),
 *              5 translate for the other target too
 *     byte 1   argument types: below 0x80, one of the fixed lists below, cut or
 *              repeated to the parameter count of the text's first `def`; from
 *              0x80 on, a signature line ("void(float32[::1], int64)\n") follows
 *              and goes through kiln_parse_signature
 *     rest     the kernel's text, from its decorators on; the rest of the file
 *              after it, where the resolver finds the kernel's device functions
 *
 * The resolver plays the host: it knows math, numpy, kiln, the builtins, a
 * fixed set of upper-case globals of every kind a host can answer (ints,
 * floats, typed scalars, tuples, dtypes, modules, arrays, objects and one
 * failing lookup), `NAME = literal` lines at the top of the text, and every
 * `def NAME(` in the text as a kiln device function.
 *
 * With KILN_FUZZ_EMIT_DIR set, every C program a CPU translation generates is
 * written there (NAME.c, with the input as NAME.in), for `run.sh BUILD
 * emit-check`, which compiles them: C that the C compiler refuses is a bug of
 * the emitter that the sanitizers cannot see.
 *
 * Besides what the sanitizers find, the target checks the API's contract:
 * a translation that fails has reported an error, one that succeeds has not,
 * and every diagnostic carries its formatted text.  Inputs are copied to a
 * buffer of exactly their length (no terminating NUL), so a read past the
 * text's end is caught.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- argument types ----------------------------------------------------------------- */

#define A(dt, nd, lay) {1, KILN_##dt, nd, KILN_LAYOUT_##lay}
#define S(dt) {0, KILN_##dt, 0, 0}

typedef struct TypeList {
    int n;
    kiln_argtype t[4];
} TypeList;

/* used cyclically: parameter i gets t[i % n] */
static const TypeList lists[] = {
    {1, {A(FLOAT64, 1, C)}},
    {3, {A(FLOAT32, 1, C), A(FLOAT32, 1, C), S(INT64)}},
    {3, {A(INT64, 1, C), S(INT32), S(FLOAT64)}},
    {3, {A(FLOAT64, 2, C), A(FLOAT64, 2, A), S(INT64)}},
    {3, {A(FLOAT32, 2, F), A(UINT8, 1, A), S(BOOL)}},
    {4, {A(INT32, 1, C), S(UINT64), S(FLOAT32), A(INT8, 3, C)}},
    {2, {S(FLOAT64), S(INT64)}},
    {3, {A(BOOL, 1, C), A(UINT16, 1, A), S(INT16)}},
};
enum { NLISTS = sizeof lists / sizeof *lists };

/* The parameter count of the first `def name(...)` in text: commas at depth 1,
 * a crude count that is right for the kernels the corpus holds. */
static int count_params(const char *s, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i++)
        if (memcmp(s + i, "def ", 4) == 0 && (i == 0 || s[i - 1] == '\n' || s[i - 1] == ' ')) break;
    while (i < n && s[i] != '(') i++;
    if (i >= n) return 0;
    int depth = 0, commas = 0;
    bool any = false, trailing = false;
    for (i++; i < n; i++) {
        char ch = s[i];
        if (ch == '(' || ch == '[' || ch == '{') depth++;
        else if ((ch == ')' || ch == ']' || ch == '}') && depth-- == 0) break;
        else if (ch == ',' && depth == 0) {
            commas++;
            trailing = true;
            continue;
        }
        if (!isspace((unsigned char)ch)) {
            any = true;
            trailing = false;
        }
    }
    if (!any) return 0;
    return commas + 1 - (trailing ? 1 : 0);
}

/* ---- the host's globals -------------------------------------------------------------- */

typedef struct Input {
    const char *text; /* the whole source part of the input */
    size_t len;
    char name[256];   /* scratch for answers that must outlive the call */
    char sig[256];
} Input;

static const char *const builtins[] = {"abs", "min",   "max", "int", "float", "bool", "round",
                                       "range", "len", "pow", "divmod", "sum", "complex"};

/* The line number (1-based) of offset off. */
static int line_of(const char *s, size_t off) {
    int line = 1;
    for (size_t i = 0; i < off; i++) line += s[i] == '\n';
    return line;
}

/* `def name(` at the start of a line: fills out as a device function whose
 * text starts at the decorators above it.  1 when found. */
static int find_def(Input *in, const char *name, kiln_value *out) {
    size_t nl = strlen(name);
    const char *s = in->text;
    for (size_t i = 0; i + 4 + nl < in->len; i++) {
        if ((i > 0 && s[i - 1] != '\n') || memcmp(s + i, "def ", 4) != 0) continue;
        size_t j = i + 4;
        while (j < in->len && s[j] == ' ') j++;
        if (j + nl >= in->len || memcmp(s + j, name, nl) != 0 || s[j + nl] != '(') continue;
        /* back over decorator lines */
        size_t start = i;
        while (start > 0) {
            size_t p = start - 1; /* the previous line's newline */
            size_t b = p;
            while (b > 0 && s[b - 1] != '\n') b--;
            if (s[b] != '@') break;
            start = b;
        }
        out->kind = KILN_VAL_FUNCTION;
        out->scope = in;
        out->text = s + start;
        out->text_len = in->len - start;
        out->filename = "fuzz.py";
        out->first_line = line_of(s, start);
        out->is_device = 1;
        out->signature = NULL;
        /* an explicit signature: the first string in the decorators */
        const char *q = memchr(s + start, '"', i - start);
        if (q) {
            const char *e = memchr(q + 1, '"', (size_t)(s + i - q - 1));
            if (e && (size_t)(e - q - 1) < sizeof in->sig) {
                memcpy(in->sig, q + 1, (size_t)(e - q - 1));
                in->sig[e - q - 1] = 0;
                out->signature = in->sig;
            }
        }
        return 1;
    }
    return 0;
}

/* `NAME = literal` at the start of a line: an int, a float or a bool.  1 when found. */
static int find_assignment(Input *in, const char *name, kiln_value *out) {
    size_t nl = strlen(name);
    const char *s = in->text;
    for (size_t i = 0; i + nl + 3 < in->len; i++) {
        if ((i > 0 && s[i - 1] != '\n') || memcmp(s + i, name, nl) != 0) continue;
        size_t j = i + nl;
        while (j < in->len && s[j] == ' ') j++;
        if (j >= in->len || s[j] != '=' || (j + 1 < in->len && s[j + 1] == '=')) continue;
        j++;
        while (j < in->len && s[j] == ' ') j++;
        char lit[64];
        size_t k = 0;
        while (j < in->len && s[j] != '\n' && s[j] != '#' && k + 1 < sizeof lit) lit[k++] = s[j++];
        while (k && lit[k - 1] == ' ') k--;
        lit[k] = 0;
        if (strcmp(lit, "True") == 0 || strcmp(lit, "False") == 0) {
            out->kind = KILN_VAL_BOOL;
            out->v.i = lit[0] == 'T';
            return 1;
        }
        char *end;
        long long v = strtoll(lit, &end, 0);
        if (k && !*end) {
            out->kind = KILN_VAL_INT;
            out->v.i = v;
            return 1;
        }
        double f = strtod(lit, &end);
        if (k && !*end) {
            out->kind = KILN_VAL_FLOAT;
            out->v.f = f;
            return 1;
        }
        out->kind = KILN_VAL_OTHER;
        out->name = "str";
        return 1;
    }
    return 0;
}

static const kiln_value inner[] = {
    {.kind = KILN_VAL_INT, .v.i = 3},
    {.kind = KILN_VAL_INT, .v.i = -4},
};
static const kiln_value tuple_t[] = {
    {.kind = KILN_VAL_INT, .v.i = 1},
    {.kind = KILN_VAL_FLOAT, .v.f = 2.5},
    {.kind = KILN_VAL_TUPLE, .tuple = inner, .ntuple = 2},
    {.kind = KILN_VAL_SCALAR, .dtype = KILN_UINT8, .v.u = 255},
};
static const kiln_value tuple_bad[] = {
    {.kind = KILN_VAL_BOOL, .v.i = 1},
    {.kind = KILN_VAL_OTHER, .name = "str"},
};
static const int64_t arr_shape[] = {2, 3};
static const double arr_data[] = {1, 2, 3, 4, 5, 6};

static int resolve(void *ud, void *scope, const char *dotted, kiln_value *out) {
    Input *in = ud;
    (void)scope;
    memset(out, 0, sizeof *out);
    out->kind = KILN_VAL_MISSING;
    if (!strcmp(dotted, "math")) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "math";
    } else if (!strcmp(dotted, "np") || !strcmp(dotted, "numpy")) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "numpy";
    } else if (!strcmp(dotted, "kiln") || !strcmp(dotted, "cuda") ||
               !strcmp(dotted, "numba.cuda")) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "kiln";
    } else if (!strcmp(dotted, "numba") || !strcmp(dotted, "MOD") ||
               !strcmp(dotted, "MOD.SUB")) {
        out->kind = KILN_VAL_MODULE;
    } else if (!strcmp(dotted, "MOD.N") || !strcmp(dotted, "MOD.SUB.N") || !strcmp(dotted, "N")) {
        out->kind = KILN_VAL_INT;
        out->v.i = 16;
    } else if (!strcmp(dotted, "M")) {
        out->kind = KILN_VAL_INT;
        out->v.i = -3;
    } else if (!strcmp(dotted, "BIG")) {
        out->kind = KILN_VAL_INT;
        out->v.i = INT64_MAX;
    } else if (!strcmp(dotted, "SCALE")) {
        out->kind = KILN_VAL_FLOAT;
        out->v.f = 0.5;
    } else if (!strcmp(dotted, "HUGE")) {
        out->kind = KILN_VAL_FLOAT;
        out->v.f = 1e308 * 10;
    } else if (!strcmp(dotted, "FLAG")) {
        out->kind = KILN_VAL_BOOL;
        out->v.i = 1;
    } else if (!strcmp(dotted, "F32")) {
        out->kind = KILN_VAL_SCALAR;
        out->dtype = KILN_FLOAT32;
        out->v.f = 1.5;
    } else if (!strcmp(dotted, "U8")) {
        out->kind = KILN_VAL_SCALAR;
        out->dtype = KILN_UINT8;
        out->v.u = 200;
    } else if (!strcmp(dotted, "I64")) {
        out->kind = KILN_VAL_SCALAR;
        out->dtype = KILN_INT64;
        out->v.i = INT64_MIN;
    } else if (!strcmp(dotted, "H")) {
        out->kind = KILN_VAL_SCALAR;
        out->dtype = KILN_FLOAT16;
    } else if (!strcmp(dotted, "T")) {
        out->kind = KILN_VAL_TUPLE;
        out->tuple = tuple_t;
        out->ntuple = 4;
    } else if (!strcmp(dotted, "TE")) {
        out->kind = KILN_VAL_TUPLE;
        out->ntuple = 0;
    } else if (!strcmp(dotted, "TB")) {
        out->kind = KILN_VAL_TUPLE;
        out->tuple = tuple_bad;
        out->ntuple = 2;
    } else if (!strcmp(dotted, "DT")) {
        out->kind = KILN_VAL_DTYPE;
        out->dtype = KILN_FLOAT32;
    } else if (!strcmp(dotted, "DH")) {
        out->kind = KILN_VAL_DTYPE;
        out->dtype = KILN_FLOAT16;
    } else if (!strcmp(dotted, "ARR")) {
        out->kind = KILN_VAL_ARRAY;
        out->dtype = KILN_FLOAT64;
        out->ndim = 2;
        out->shape = arr_shape;
        out->data = arr_data;
    } else if (!strcmp(dotted, "OBJ")) {
        out->kind = KILN_VAL_OTHER;
        out->name = "dict";
    } else if (!strcmp(dotted, "FAIL")) {
        return -1; /* an exception in the host */
    } else if (find_def(in, dotted, out) || find_assignment(in, dotted, out)) {
        /* filled */
    } else {
        for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
            if (!strcmp(dotted, builtins[i])) {
                snprintf(in->name, sizeof in->name, "builtins.%s", dotted);
                out->kind = KILN_VAL_NAMESPACE;
                out->name = in->name;
            }
    }
    return 0;
}

/* ---- diagnostics ---------------------------------------------------------------------- */

typedef struct Diags {
    int errors, total;
} Diags;

static void on_diag(void *ud, const kiln_diag *d) {
    Diags *D = ud;
    D->total++;
    if (d->severity == KILN_ERROR) D->errors++;
    /* the contract of kiln_diag: every field a user sees is there */
    if (!d->formatted || !d->message || d->span < 1) {
        fprintf(stderr, "fuzz_compile: a diagnostic without its text or place\n");
        abort();
    }
    (void)strlen(d->formatted); /* its text is readable to its end */
    if (d->filename) (void)strlen(d->filename);
    if (d->source_line) (void)strlen(d->source_line);
    if (d->hint) (void)strlen(d->hint);
}

/* ---- one input ------------------------------------------------------------------------- */

static void check_program(const kiln_program *p, int nargs) {
    size_t len = 0;
    const char *src = kiln_program_source(p, &len);
    if (!src || len == 0 || strlen(src) != len || !strstr(src, kiln_program_entry(p))) {
        fprintf(stderr, "fuzz_compile: a program without its generated source\n");
        abort();
    }
    (void)strlen(kiln_program_name(p));
    (void)strlen(kiln_program_types(p));
    if (kiln_program_nparams(p) != nargs) {
        fprintf(stderr, "fuzz_compile: %d parameters for %d arguments\n", kiln_program_nparams(p),
                nargs);
        abort();
    }
    for (int i = 0; i < nargs; i++) {
        (void)strlen(kiln_program_param_name(p, i));
        (void)kiln_program_param_flags(p, i);
    }
    for (int i = 0; kiln_program_file(p, i); i++) (void)strlen(kiln_program_file(p, i));
    const char *what = NULL;
    if (kiln_program_gpu_only(p, &what) && what) (void)strlen(what);
}

/* The input of this run, for the emit dump. */
static const uint8_t *cur_data;
static size_t cur_size;

static void dump_emitted(const kiln_program *p) {
    const char *dir = getenv("KILN_FUZZ_EMIT_DIR");
    if (!dir || !*dir) return;
    uint64_t h = 14695981039346656037ull; /* FNV-1a of the input */
    for (size_t i = 0; i < cur_size; i++) h = (h ^ cur_data[i]) * 1099511628211ull;
    char path[4200];
    size_t len;
    const char *src = kiln_program_source(p, &len);
    const char *ext[2] = {"c", "in"};
    const void *what[2] = {src, cur_data};
    size_t n[2] = {len, cur_size};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%016llx.%s", dir, (unsigned long long)h, ext[i]);
        FILE *f = fopen(path, "wb");
        if (!f) return;
        fwrite(what[i], 1, n[i], f);
        fclose(f);
    }
}

static void translate(kiln_ctx *ctx, Diags *D, Input *in, const kiln_source *src,
                      const kiln_argtype *args, int nargs, const kiln_options *o) {
    *D = (Diags){0, 0};
    kiln_program *p = kiln_translate(ctx, src, args, nargs, o, resolve, in);
    if (p && o->target == KILN_TARGET_CPU) dump_emitted(p);
    if (!p && D->errors == 0) {
        fprintf(stderr, "fuzz_compile: kiln_translate failed without reporting an error\n");
        abort();
    }
    if (p && D->errors) {
        fprintf(stderr, "fuzz_compile: kiln_translate reported an error and succeeded\n");
        abort();
    }
    if (p) check_program(p, nargs);
    kiln_program_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    cur_data = data;
    cur_size = size;
    uint8_t flags = data[0], types = data[1];
    data += 2;
    size -= 2;
    kiln_ctx *ctx = kiln_ctx_new();
    Diags D = {0, 0};
    kiln_ctx_set_diag(ctx, on_diag, &D);
    kiln_argtype args[KILN_MAX_PARAMS];
    int nargs = 0;
    char *sig = NULL;
    if (types >= 0x80) {
        const uint8_t *nl = memchr(data, '\n', size);
        size_t n = nl ? (size_t)(nl - data) : size;
        sig = malloc(n + 1);
        memcpy(sig, data, n);
        sig[n] = 0;
        data += nl ? n + 1 : n;
        size -= nl ? n + 1 : n;
        kiln_argtype ret;
        nargs = kiln_parse_signature(ctx, sig, &ret, args, KILN_MAX_PARAMS);
        if (nargs < 0 && D.errors == 0) {
            fprintf(stderr, "fuzz_compile: kiln_parse_signature failed without an error\n");
            abort();
        }
        free(sig);
        if (nargs < 0) goto done;
    }
    /* exactly the text's bytes: a read past its end is an ASan report */
    char *text = malloc(size ? size : 1);
    memcpy(text, data, size);
    if (types < 0x80) {
        const TypeList *L = &lists[types % NLISTS];
        nargs = count_params(text, size);
        if (nargs > KILN_MAX_PARAMS) nargs = KILN_MAX_PARAMS;
        for (int i = 0; i < nargs; i++) args[i] = L->t[i % L->n];
    }
    Input in = {.text = text, .len = size};
    kiln_source src = {text, size, "fuzz.py", 1, &in};
    kiln_options o;
    memset(&o, 0, sizeof o);
    o.target = (flags & 1) ? KILN_TARGET_CUDA : KILN_TARGET_CPU;
    o.debug = (flags >> 1) & 1;
    o.fastmath = (flags >> 2) & 1;
    o.lineinfo = (flags >> 3) & 1;
    o.cuda_arch = 90;
    o.tier0_vector = 1; /* the CPU programs with tier 0's vector entry (emit_tier0.c) too */
    translate(ctx, &D, &in, &src, args, nargs, &o);
    if (flags & 0x20) {
        o.target = o.target == KILN_TARGET_CPU ? KILN_TARGET_CUDA : KILN_TARGET_CPU;
        translate(ctx, &D, &in, &src, args, nargs, &o);
    }
    if (flags & 0x10) {
        kiln_argtype ret;
        D = (Diags){0, 0};
        int rc = kiln_infer_return(ctx, &src, args, nargs, &o, resolve, &in, &ret);
        if (rc != 0 && D.errors == 0) {
            /* kiln_infer_return checks nargs silently; anything else must say why */
            if (nargs <= KILN_MAX_PARAMS) {
                fprintf(stderr, "fuzz_compile: kiln_infer_return failed without an error\n");
                abort();
            }
        }
    }
    free(text);
done:
    kiln_ctx_free(ctx);
    return 0;
}
