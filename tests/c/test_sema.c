/* test_sema.c: typing, promotion, diagnostics and code generation. */
#include <math.h>
#include <stdlib.h>

#include "sema/types.h"
#include "test.h"
#include "util.h"

static void collect(void *ud, const kiln_diag *d) {
    TResult *r = ud;
    strncat(r->diags, d->formatted, sizeof r->diags - strlen(r->diags) - 2);
    strcat(r->diags, "\n");
    if (d->severity == KILN_ERROR) r->nerrors++;
}

static int resolve(void *ud, void *scope, const char *name, kiln_value *out) {
    (void)ud;
    (void)scope;
    static const char *const builtins[] = {"abs", "min", "max", "int", "float", "bool",
                                           "round", "range", "len"};
    static char buf[64];
    memset(out, 0, sizeof *out);
    out->kind = KILN_VAL_MISSING;
    if (strcmp(name, "math") == 0) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "math";
    } else if (strcmp(name, "np") == 0) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "numpy";
    } else if (strcmp(name, "kiln") == 0 || strcmp(name, "cuda") == 0) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "kiln";
    } else if (strcmp(name, "N") == 0) {
        out->kind = KILN_VAL_INT;
        out->v.i = 16;
    } else if (strcmp(name, "SCALE") == 0) {
        out->kind = KILN_VAL_FLOAT;
        out->v.f = 0.5;
    } else if (strcmp(name, "obj") == 0) {
        out->kind = KILN_VAL_OTHER;
        out->name = "dict";
    } else {
        for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
            if (strcmp(name, builtins[i]) == 0) {
                snprintf(buf, sizeof buf, "builtins.%s", name);
                out->kind = KILN_VAL_NAMESPACE;
                out->name = buf;
            }
    }
    return 0;
}

TResult *tr(const char *src, const char *sig, kiln_target target) {
    TResult *r = calloc(1, sizeof *r);
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, collect, r);
    kiln_argtype ret, args[32];
    int n = kiln_parse_signature(ctx, sig, &ret, args, 32);
    if (n >= 0) {
        kiln_options o;
        memset(&o, 0, sizeof o);
        o.target = target;
        o.cuda_arch = 90;
        kiln_source s = {src, strlen(src), "k.py", 1, NULL};
        r->prog = kiln_translate(ctx, &s, args, n, &o, resolve, NULL);
    }
    kiln_ctx_free(ctx);
    return r;
}

void tr_free(TResult *r) {
    if (r->prog) kiln_program_free(r->prog);
    free(r);
}

TEST(types_promotion_nep50) {
    const Type *f32 = ty_scalar(KILN_FLOAT32), *f64 = ty_scalar(KILN_FLOAT64);
    const Type *i8 = ty_scalar(KILN_INT8), *u8 = ty_scalar(KILN_UINT8);
    const Type *i16 = ty_scalar(KILN_INT16), *i32 = ty_scalar(KILN_INT32);
    const Type *i64 = ty_scalar(KILN_INT64), *u64 = ty_scalar(KILN_UINT64);
    const Type *u32 = ty_scalar(KILN_UINT32), *b = ty_scalar(KILN_BOOL);
    CHECK(ty_promote(f32, &ty_weak_float) == f32);
    CHECK(ty_promote(&ty_weak_int, f32) == f32);
    CHECK(ty_promote(i8, &ty_weak_int) == i8);
    CHECK(ty_promote(i32, &ty_weak_float) == f64);
    CHECK(ty_promote(b, &ty_weak_int) == i64);
    CHECK(ty_promote(&ty_weak_int, &ty_weak_float) == &ty_weak_float);
    CHECK(ty_promote(i8, u8) == i16);
    CHECK(ty_promote(u32, i32) == i64);
    CHECK(ty_promote(u64, i64) == f64);
    CHECK(ty_promote(i16, f32) == f32);
    CHECK(ty_promote(i32, f32) == f64);
    CHECK(ty_promote(i64, f32) == f64);
    CHECK(ty_promote(b, f32) == f32);
    CHECK(ty_promote(u8, i64) == i64);
    CHECK(ty_int_fits(u8, 255, false) && !ty_int_fits(u8, 256, false) && !ty_int_fits(u8, -1, false));
    CHECK(ty_int_fits(i8, -128, false) && !ty_int_fits(i8, 128, false));
}

TEST(sema_infers_types) {
    TResult *r = tr("def k(x, y, n):\n"
                    "    i = kiln.grid(1)\n"
                    "    if i < n:\n"
                    "        t = x[i] * 2\n"
                    "        q = i // 2\n"
                    "        d = i / 2\n"
                    "        c = x[i] > 0 and y[i] < 0\n"
                    "        y[i] = t + math.sqrt(d)\n",
                    "void(float32[::1], float64[::1], int64)", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    if (r->prog) {
        const char *t = kiln_program_types(r->prog);
        CHECK_CONTAINS(t, "kernel k(x: array(float32, 1d, C), y: array(float64, 1d, C), n: int64)");
        CHECK_CONTAINS(t, "    i: int64\n");
        CHECK_CONTAINS(t, "    t: float32\n");
        CHECK_CONTAINS(t, "    q: int64\n");
        CHECK_CONTAINS(t, "    d: float64\n");
        CHECK_CONTAINS(t, "    c: bool\n");
    } else {
        fprintf(stderr, "%s", r->diags);
    }
    tr_free(r);
}

TEST(sema_weak_literals_keep_float32) {
    TResult *r = tr("def k(x):\n"
                    "    acc = 0\n"
                    "    s = 1.5\n"
                    "    for j in range(len(x)):\n"
                    "        acc += x[j] * 2.0 + SCALE\n"
                    "    x[0] = acc * s\n",
                    "void(float32[:])", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    if (r->prog) {
        const char *t = kiln_program_types(r->prog);
        CHECK_CONTAINS(t, "    acc: float32\n");
        CHECK_CONTAINS(t, "    s: Python float\n");
        CHECK_CONTAINS(t, "    j: int64\n");
    } else {
        fprintf(stderr, "%s", r->diags);
    }
    tr_free(r);
}

TEST(sema_unifies_variables) {
    TResult *r = tr("def k(a, n):\n"
                    "    v = 0\n"
                    "    if n > 2:\n"
                    "        v = n\n"
                    "    w = v\n"
                    "    a[0] = w\n",
                    "void(int32[:], int16)", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    /* a Python int first, then a narrower integer: int64, as in Numba (LANGUAGE.md) */
    if (r->prog) CHECK_CONTAINS(kiln_program_types(r->prog), "    v: int64\n");
    tr_free(r);
    /* a name rebound where no use sees both values is two variables (syms.c's webs) */
    r = tr("def k(a):\n    v = 1\n    a[1] = v\n    v = (1, 2)\n    a[0] = v[1]\n", "void(int32[:])",
           KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    tr_free(r);
    /* where one use may see either, one variable of one type */
    r = tr("def k(a):\n    v = 1\n    if a[0] > 0:\n        v = (1, 2)\n    w = v\n    a[0] = 1\n",
           "void(int32[:])", KILN_TARGET_CPU);
    CHECK(r->prog == NULL);
    CHECK_CONTAINS(r->diags, "k.py:4:9: error: variable 'v' is Python int (assigned at line 2) and cannot also hold tuple(Python int, Python int)");
    tr_free(r);
}

TEST(sema_errors_carry_place_and_hint) {
    static const struct {
        const char *src;
        const char *sig;
        const char *msg;
    } cases[] = {
        {"def k(a):\n    a[0] = a + 1\n", "void(float32[:])", "k.py:2:12: error: arithmetic on whole arrays"},
        {"def k(a):\n    a[0.5] = 1\n", "void(float32[:])", "array indices must be integers, not Python float"},
        {"def k(a):\n    a[0, 1] = 1\n", "void(float32[:])", "too many indices for array"},
        {"def k(a):\n    a[0] = undefined_name\n", "void(float32[:])", "name 'undefined_name' is not defined"},
        {"def k(a):\n    print(a[0])\n", "void(float32[:])", "print() is not supported"},
        {"def k(a):\n    a[0] = obj\n", "void(float32[:])", "global 'obj' is a 'dict', which kernels cannot use"},
        {"def k(a):\n    return 1\n", "void(float32[:])", "kernels cannot return a value"},
        {"def k(a):\n    a[0] = a[1] << 1.5\n", "void(int32[:])", "unsupported operand types for <<"},
        {"def k(a):\n    a[0] = a[1] + 300\n", "void(uint8[:])", "Python integer 300 out of bounds for uint8"},
        {"def k(a):\n    a[0] = 2 ** -1\n", "void(int32[:])", "integers to negative integer powers"},
        {"def k(a, n):\n    for x in n:\n        pass\n", "void(int32[:], int64)", "a for loop cannot iterate over int64"},
        {"def k(a):\n    for x in a:\n        a = a\n", "void(int32[:])", "the loop assigns to 'a', which its iterable reads"},
        {"def k(a, n):\n    for i, j in enumerate(range(0, 9, n)):\n        pass\n", "void(int32[:], int64)", "needs a constant step"},
        {"def k(a):\n    if a:\n        pass\n", "void(int32[:])", "truth value of an array is ambiguous"},
        {"def k(a):\n    x = math.foo(1.0)\n", "void(int32[:])", "math.foo is not supported in kernels"},
        {"def k(a):\n    x = kiln.nonexistent\n", "void(int32[:])", "kiln.nonexistent is not available in kernels"},
        {"def k(a):\n    x = min(a[0])\n", "void(int32[:])", "takes a tuple in kernels, not int32"},
        {"def k(a):\n    break\n", "void(int32[:])", "'break' outside loop"},
        {"def k(a):\n    x = y\n    y = 1\n", "void(int32[:])", "local variable 'y' is used before it is assigned"},
        {"def k(a, n):\n    x = kiln.local.array(n, kiln.float32)\n", "void(int32[:], int64)", "must be a constant integer"},
        {"def k(a):\n    n = 3\n    if a[0] > 0:\n        n = 4\n    x = kiln.local.array(n, kiln.float32)\n", "void(int32[:])", "must be a constant integer"},
        {"def k(a):\n    a[0] = 'abc'\n", "void(int32[:])", "cannot store str in int32"},
        {"def k(a):\n    x = None\n", "void(int32[:])", "cannot store None in variable 'x'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        TResult *r = tr(cases[i].src, cases[i].sig, KILN_TARGET_CPU);
        CHECK(r->prog == NULL);
        CHECK_CONTAINS(r->diags, cases[i].msg);
        if (!strstr(r->diags, cases[i].msg)) fprintf(stderr, "  case %zu\n", i);
        CHECK_CONTAINS(r->diags, "k.py:");
        tr_free(r);
    }
}

TEST(sema_block_features_on_cpu) {
    /* shared memory, barriers and warp operations run on the CPU block by block (block
     * mode): as lane loops over a block's threads when every thread meets every barrier
     * (block lanes, plan.h), else as fibers */
    TResult *r;
    const char *blocks = "def k(a):\n    s = kiln.shared.array(32, kiln.float32)\n"
                         "    s[kiln.threadIdx.x] = a[0]\n    kiln.syncthreads()\n";
    r = tr(blocks, "void(float32[:])", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    if (r->prog) {
        size_t len;
        const char *text = kiln_program_source(r->prog, &len);
        CHECK_CONTAINS(text, "kiln_blanes_(0, 0, 0,");
        CHECK_CONTAINS(text, "/* syncthreads() */");
        CHECK(strstr(text, "kiln_blk_run_(&blk_)") == NULL);
    }
    tr_free(r);
    /* a barrier under a condition that depends on the thread: fibers */
    const char *fibers = "def k(a):\n    s = kiln.shared.array(32, kiln.float32)\n"
                         "    s[kiln.threadIdx.x] = a[0]\n    if kiln.threadIdx.x < 64:\n"
                         "        kiln.syncthreads()\n";
    r = tr(fibers, "void(float32[:])", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    if (r->prog) {
        size_t len;
        const char *text = kiln_program_source(r->prog, &len);
        CHECK_CONTAINS(text, "kiln_sync_(B_)");
        CHECK_CONTAINS(text, "kiln_blk_run_(&blk_)");
        CHECK(strstr(text, "kiln_blanes_") == NULL);
    }
    tr_free(r);
    r = tr("def k(a):\n    a[0] = kiln.shfl_down_sync(0xffffffff, a[0], 1) + kiln.laneid\n",
           "void(float32[:])", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    if (r->prog) {
        size_t len;
        CHECK_CONTAINS(kiln_program_source(r->prog, &len), "kiln_shfl_f32(B_, 0,");
    }
    tr_free(r);
}

TEST(sema_written_params) {
    TResult *r = tr("def k(a, b, c):\n    v = b\n    v[0] = a[0]\n    kiln.atomic.add(c, 0, 1)\n",
                    "void(float32[:], float32[:], int32[:])", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    if (r->prog) {
        CHECK(!(kiln_program_param_flags(r->prog, 0) & KILN_PARAM_WRITTEN));
        CHECK(kiln_program_param_flags(r->prog, 1) & KILN_PARAM_WRITTEN);
        CHECK(kiln_program_param_flags(r->prog, 2) & KILN_PARAM_WRITTEN);
    }
    tr_free(r);
}

TEST(emit_cpu_compiles) {
    TResult *r = tr("def k(x, y, a, n):\n"
                    "    i = kiln.grid(1)\n"
                    "    if i < n:\n"
                    "        y[i] = a * x[i] + y[i]\n",
                    "void(float32[::1], float32[::1], float32, int64)", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    if (r->prog) {
        size_t len;
        const char *s = kiln_program_source(r->prog, &len);
        kiln_ctx *ctx = kiln_ctx_new();
        void *blob = NULL;
        size_t blen = 0;
        CHECK(kiln_cpu_build(ctx, s, len, &blob, &blen) == 0);
        CHECK(blen > 1000);
        if (blob) {
            kiln_cpu_module *m = kiln_cpu_load(ctx, blob, blen, "kiln_entry");
            CHECK(m != NULL);
            if (m) {
                float x[100], y[100];
                for (int i = 0; i < 100; i++) {
                    x[i] = (float)i;
                    y[i] = 1.0f;
                }
                float a = 2.0f;
                int64_t P[7];
                P[0] = (int64_t)(uintptr_t)x;
                P[1] = 100;
                P[2] = 1;
                P[3] = (int64_t)(uintptr_t)y;
                P[4] = 100;
                P[5] = 1;
                memset(&P[6], 0, 8);
                memcpy(&P[6], &a, sizeof a);
                int64_t n = 100;
                int64_t P2[8];
                memcpy(P2, P, sizeof P);
                P2[7] = n;
                kiln_kernel_error err = {0};
                kiln_cpu_launch L = {{4, 1, 1}, {32, 1, 1}, 1 << 30, &err, NULL, 0, 0, 0};
                kiln_cpu_launch_kernel(m, &L, P2);
                int ok = 1;
                for (int i = 0; i < 100; i++) ok &= y[i] == 2.0f * (float)i + 1.0f;
                CHECK(ok);
                CHECK(err.code == 0);
                kiln_cpu_unload(m);
            }
            /* a truncated object (a damaged cache entry or bundle) is refused, never
             * mapped past its end (SIGBUS); so is one with a segment moved past it */
            CHECK(kiln_cpu_blob_ok(blob, blen));
            int refused = 1;
            for (size_t cut = 0; cut < blen; cut += cut < 256 ? 1 : 97)
                refused &= !kiln_cpu_blob_ok(blob, cut);
            CHECK(refused);
            CHECK(kiln_cpu_load(ctx, blob, blen / 2, "kiln_entry") == NULL);
            free(blob);
        }
        kiln_ctx_free(ctx);
    } else {
        fprintf(stderr, "%s", r->diags);
    }
    tr_free(r);
}

TEST(emit_has_line_markers) {
    TResult *r = tr("def k(a):\n    a[0] = 1\n\n    a[1] = 2\n", "void(int32[:])", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    if (r->prog) {
        const char *s = kiln_program_source(r->prog, NULL);
        CHECK_CONTAINS(s, "#line 2 \"k.py\"");
        CHECK_CONTAINS(s, "#line 4 \"k.py\"");
    }
    tr_free(r);
}

/* Every CUDA kernel is compiled by NVRTC for sm_80 and sm_90 (no GPU needed). */
static int nvrtc_compiles(const char *src, const char *sig, int arch, char *log, size_t logsz) {
    TResult *r = tr(src, sig, KILN_TARGET_CUDA);
    int ok = 0;
    if (r->prog) {
        kiln_ctx *ctx = kiln_ctx_new();
        kiln_nvrtc *n = kiln_nvrtc_open(ctx);
        if (n) {
            size_t len;
            const char *s = kiln_program_source(r->prog, &len);
            kiln_options o;
            memset(&o, 0, sizeof o);
            o.target = KILN_TARGET_CUDA;
            void *blob = NULL;
            size_t blen = 0;
            int is_ptx = 0;
            ok = kiln_nvrtc_compile(ctx, n, s, len, &o, arch, &blob, &blen, &is_ptx) == 0 &&
                 blen > 100;
            free(blob);
            kiln_nvrtc_close(n);
        }
        kiln_ctx_free(ctx);
    } else {
        size_t n = strlen(r->diags);
        if (n >= logsz) n = logsz - 1;
        memcpy(log, r->diags, n);
        log[n] = 0;
    }
    tr_free(r);
    return ok;
}

TEST(nvrtc_compiles_cuda_kernels) {
    static const struct {
        const char *src, *sig;
    } cases[] = {
        {"def k(x, y, a, n):\n    i = kiln.grid(1)\n    if i < n:\n        y[i] = a * x[i] + y[i]\n",
         "void(float32[::1], float32[::1], float32, int64)"},
        {"def k(a, out):\n    s = kiln.shared.array(256, kiln.float32)\n    t = kiln.threadIdx.x\n"
         "    s[t] = a[kiln.grid(1)]\n    kiln.syncthreads()\n    if t == 0:\n"
         "        acc = 0.0\n        for j in range(256):\n            acc += s[j]\n"
         "        kiln.atomic.add(out, 0, acc)\n",
         "void(float32[::1], float32[::1])"},
        {"def k(a):\n    v = a[kiln.grid(1)]\n    v += kiln.shfl_down_sync(0xffffffff, v, 16)\n"
         "    m = kiln.ballot_sync(kiln.activemask(), v > 0)\n    a[kiln.grid(1)] = v + m + kiln.laneid\n"
         "    d = kiln.shared.array(0, kiln.float64)\n    d[0] = v\n",
         "void(float64[:])"},
        {"def k(a, b):\n    i, j = kiln.grid(2)\n    if i < a.shape[0] and j < a.shape[1]:\n"
         "        a[i, j] = math.exp(b[j, i]) // 2 % 3 ** 2 + max(i, j) - (1 if i < j else 0)\n"
         "        kiln.atomic.max(a, (i, j), 1.0)\n        r = a[i]\n        r[j] += r[0:2][1]\n",
         "void(float64[:, :], float32[::1, :])"},
        {"def k(a, c):\n    i = kiln.grid(1)\n"
         "    x = 0 < kiln.atomic.add(c, 0, 1) < 3 < kiln.atomic.add(c, 1, 1)\n"
         "    y = kiln.atomic.add(c, 2, 1) or 7\n    a[i] = x + y\n",
         "void(int64[:], int64[:])"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int arch = 80; arch <= 90; arch += 10) {
            char log[4096] = "";
            int ok = nvrtc_compiles(cases[i].src, cases[i].sig, arch, log, sizeof log);
            CHECK(ok);
            if (!ok) fprintf(stderr, "  case %zu sm_%d: %s\n", i, arch, log);
        }
}

/* ---- limits: generated code linear in the input ----------------------------------- */

/* A resolver that also knows T, a tuple of n float64 items (some not finite). */
typedef struct TupleGlobal {
    int n;
    kiln_value *items;
} TupleGlobal;

static int resolve_tuple(void *ud, void *scope, const char *name, kiln_value *out) {
    TupleGlobal *t = ud;
    if (strcmp(name, "T") != 0) return resolve(NULL, scope, name, out);
    memset(out, 0, sizeof *out);
    out->kind = KILN_VAL_TUPLE;
    out->tuple = t->items;
    out->ntuple = t->n;
    return 0;
}

/* The generated source of `src` (NULL after an error, diagnostics in *diags). */
static kiln_program *translate_with_tuple(const char *src, const char *sig, kiln_target target,
                                          int ntuple, TResult *diags) {
    TupleGlobal t = {ntuple, calloc((size_t)ntuple + 1, sizeof(kiln_value))};
    for (int i = 0; i < ntuple; i++) {
        t.items[i].kind = KILN_VAL_FLOAT;
        t.items[i].v.f = i % 7 == 3 ? NAN : i % 7 == 5 ? -INFINITY : 0.5 * i;
    }
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, collect, diags);
    kiln_argtype ret, args[8];
    int n = kiln_parse_signature(ctx, sig, &ret, args, 8);
    kiln_options o;
    memset(&o, 0, sizeof o);
    o.target = target;
    o.cuda_arch = 90;
    kiln_source s = {src, strlen(src), "k.py", 1, NULL};
    kiln_program *p = n < 0 ? NULL : kiln_translate(ctx, &s, args, n, &o, resolve_tuple, &t);
    kiln_ctx_free(ctx);
    free(t.items);
    return p;
}

static size_t source_len(const char *src, const char *sig, int ntuple) {
    TResult d;
    memset(&d, 0, sizeof d);
    kiln_program *p = translate_with_tuple(src, sig, KILN_TARGET_CPU, ntuple, &d);
    size_t len = 0;
    if (p) kiln_program_source(p, &len);
    else fprintf(stderr, "    %.300s\n", d.diags);
    kiln_program_free(p);
    return len;
}

/* n copies of `item` joined by `sep`, between `head` and `tail`. */
static char *repeat(const char *head, const char *item, const char *sep, int n, const char *tail) {
    size_t cap = strlen(head) + strlen(tail) + (size_t)n * (strlen(item) + strlen(sep) + 16) + 1;
    char *s = malloc(cap), *p = s;
    p += sprintf(p, "%s", head);
    for (int i = 0; i < n; i++) p += sprintf(p, i ? "%s" : "%.0s", sep), p += sprintf(p, item, i);
    sprintf(p, "%s", tail);
    return s;
}

/* Sizes for n, 2n and 4n: linear when the second difference is about twice
 * the first (a doubling per operand, or n x n, is far above). */
static int grows_linearly(size_t s1, size_t s2, size_t s4) {
    return s1 && s2 > s1 && s4 > s2 && (s4 - s2) <= (s2 - s1) * 9 / 4;
}

/* `a or b or c ...` doubled its text with each operand (24 operands: out of
 * memory); nested chained comparisons too; a global tuple was written out
 * whole at every use.  Now each is linear, which is checked on the sizes of
 * the generated source, not on time. */
TEST(emit_source_grows_linearly) {
    static const struct {
        const char *head, *item, *sep, *tail, *sig;
        int n, ntuple; /* n terms; the tuple's size, 0: n * ntuple */
    } cases[] = {
        {"def k(a, x, y):\n    a[0] = ", "(x + %d)", " or ", "\n", "void(float64[:], float64, float64)", 8, -1},
        {"def k(a, x, y):\n    a[0] = ", "(x * %d)", " and ", "\n", "void(float64[:], float64, float64)", 8, -1},
        {"def k(a, x, y):\n    a[0] = 0 < ", "(x + %d < y) < ", "", "1\n", "void(float64[:], float64, float64)", 8, -1},
        /* the tuple and its uses grow together */
        {"def k(a, i):\n", "    a[%d] = T[i] + T[3] + len(T)\n", "", "    u, v = T[0], T[1]\n", "void(float64[:], int64)", 16, 100},
        {"def k(a, i):\n", "    t%d = T\n", "", "    a[0] = t0[i]\n", "void(float64[:], int64)", 16, 100},
    };
    for (size_t c = 0; c < COUNTOF(cases); c++) {
        size_t len[3];
        for (int k = 0; k < 3; k++) {
            int n = cases[c].n << k;
            char *src = repeat(cases[c].head, cases[c].item, cases[c].sep, n, cases[c].tail);
            len[k] = source_len(src, cases[c].sig, cases[c].ntuple < 0 ? 0 : n * cases[c].ntuple);
            free(src);
        }
        CHECK(grows_linearly(len[0], len[1], len[2]));
        if (!grows_linearly(len[0], len[1], len[2]))
            fprintf(stderr, "    case %zu: %zu %zu %zu bytes\n", c, len[0], len[1], len[2]);
    }
}

/* A run-time index into a global tuple reads a static array (the bits of its
 * floats on the GPU, where NaN cannot initialise a __device__ array), checked
 * always; NVRTC takes it, NaN and infinity included. */
TEST(emit_global_tuple_is_one_array) {
    const char *src = "def k(a, i):\n    a[0] = T[i] + T[i + 1]\n    a[1] = T[3]\n";
    for (int cuda = 0; cuda <= 1; cuda++) {
        TResult d;
        memset(&d, 0, sizeof d);
        kiln_program *p = translate_with_tuple(src, "void(float64[:], int64)",
                                               cuda ? KILN_TARGET_CUDA : KILN_TARGET_CPU, 30000, &d);
        CHECK(p != NULL);
        if (!p) continue;
        size_t len;
        const char *code = kiln_program_source(p, &len);
        CHECK_CONTAINS(code, cuda ? "static __device__ const u64 kga0[30000] = {"
                                  : "static const f64 kga0[30000] = {");
        CHECK_CONTAINS(code, "kga0[kiln_chk(E_, ");
        CHECK(strstr(code, "kga1") == NULL && strstr(code, "_make(") == NULL);
        CHECK(len < 2000000);
        if (cuda) {
            kiln_ctx *ctx = kiln_ctx_new();
            kiln_nvrtc *n = kiln_nvrtc_open(ctx);
            if (n) {
                kiln_options o;
                memset(&o, 0, sizeof o);
                o.target = KILN_TARGET_CUDA;
                void *blob = NULL;
                size_t blen = 0;
                int is_ptx = 0;
                CHECK(kiln_nvrtc_compile(ctx, n, code, len, &o, 90, &blob, &blen, &is_ptx) == 0);
                free(blob);
                kiln_nvrtc_close(n);
            }
            kiln_ctx_free(ctx);
        }
        kiln_program_free(p);
    }
}

/* Local arrays are per thread, summed over the kernel and, per call, its
 * device functions: 40 arrays of 256 KiB overflowed the thread stack. */
TEST(sema_local_memory_per_thread) {
    TResult *r = tr("def k(a):\n    x = kiln.local.array(32768, kiln.float64)\n"
                    "    y = kiln.local.array(16, kiln.float32)\n    a[0] = x[0] + y[0]\n",
                    "void(float64[:])", KILN_TARGET_CPU);
    CHECK(r->prog == NULL);
    CHECK_CONTAINS(r->diags, "k.py:3:9: error: local arrays are limited to 256 KiB per thread in "
                             "all (KILN_MAX_LOCAL_BYTES); with this one, 'k' needs 262208 bytes");
    tr_free(r);
    r = tr("def k(a):\n    x = kiln.local.array(32768, kiln.float64)\n    a[0] = x[0]\n",
           "void(float64[:])", KILN_TARGET_CPU);
    CHECK(r->prog != NULL);
    tr_free(r);
}

/* kiln_options.export_name: the function typed as a device function and written with an
 * extern "C" entry of that name (kiln.compile_ptx(device=True)), its return converted to
 * export_ret; only for CUDA. */
static kiln_program *export_tr(const char *src, const char *sig, const char *name, int ret,
                               kiln_target target, TResult *r) {
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_ctx_set_diag(ctx, collect, r);
    kiln_argtype rt, args[8];
    int n = kiln_parse_signature(ctx, sig, &rt, args, 8);
    kiln_options o;
    memset(&o, 0, sizeof o);
    o.target = target;
    o.cuda_arch = 90;
    o.export_name = name;
    o.export_ret = ret;
    kiln_source s = {src, strlen(src), "k.py", 1, NULL};
    kiln_program *p = n < 0 ? NULL : kiln_translate(ctx, &s, args, n, &o, resolve, NULL);
    kiln_ctx_free(ctx);
    return p;
}

TEST(emit_exported_device_function) {
    TResult r;
    memset(&r, 0, sizeof r);
    const char *src = "def add(x, y):\n    return x + y\n";
    kiln_program *p = export_tr(src, "(float32, float32)", "addf", 0, KILN_TARGET_CUDA, &r);
    CHECK(p != NULL);
    if (p) {
        const char *text = kiln_program_source(p, NULL);
        CHECK_CONTAINS(text, "extern \"C\" __device__ f32 addf(f32 p0, f32 p1) {");
        CHECK(strstr(text, "__global__") == NULL); /* no kernel entry */
        kiln_program_free(p);
    }
    p = export_tr(src, "(int32, int32)", "add16", KILN_INT16 + 1, KILN_TARGET_CUDA, &r);
    CHECK(p != NULL);
    if (p) {
        CHECK_CONTAINS(kiln_program_source(p, NULL), "extern \"C\" __device__ i16 add16(i32 p0, i32 p1)");
        kiln_program_free(p);
    }
    CHECK(export_tr(src, "(float32, float32)", "addf", 0, KILN_TARGET_CPU, &r) == NULL);
    CHECK_CONTAINS(r.diags, "only the CUDA target exports device functions");
    CHECK(export_tr("def f(x):\n    x = x\n", "(int32)", "f", KILN_INT32 + 1, KILN_TARGET_CUDA, &r) == NULL);
    CHECK_CONTAINS(r.diags, "'f' returns nothing, but its signature returns int32");
}
