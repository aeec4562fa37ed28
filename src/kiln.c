/* kiln.c: the public API: contexts, translation and signatures.
 *
 * kiln_translate runs one compilation: a Compiler with its arena is made,
 * the front end parses the function, sema types it for the argument types,
 * the emitter writes the target source; what outlives the arena (the source,
 * the inspect_types text, parameter names and flags) is copied into the
 * kiln_program, and the arena is freed as a whole.  The body runs under
 * compiler_run, so running out of memory anywhere in it is a reported error
 * that frees the arena, not an abort.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler.h"
#include "emit/emit.h"
#include "sema/fuse.h"
#include "sema/sema.h"

struct kiln_program {
    char *source;      /* generated code */
    size_t source_len;
    char *tier0;       /* CPU: the source and tier 0's vector entry after it, or NULL */
    size_t tier0_len;
    char *types;       /* inspect_types text */
    char *name;        /* the kernel's Python name */
    int nparams;
    char **pnames;
    int *pflags;
    char *gpu_only;    /* first GPU-only feature, or NULL */
    bool cooperative;  /* uses kiln.cg: a cooperative launch */
    int nfiles;
    char **files;      /* source files that runtime error locations index */
    double stage_ms[3]; /* front (the kernel's parse), sema (callees' parses too), emit */
};

const char *kiln_version(void) { return KILN_VERSION; }

kiln_ctx *kiln_ctx_new(void) { return calloc(1, sizeof(kiln_ctx)); }

void kiln_ctx_free(kiln_ctx *ctx) {
    if (!ctx) return;
    free(ctx->cc);
    free(ctx->cc_id);
    free(ctx);
}

void kiln_ctx_set_diag(kiln_ctx *ctx, kiln_diag_fn fn, void *userdata) {
    ctx->diag = fn;
    ctx->diag_ud = userdata;
}

void kiln_ctx_set_interrupt(kiln_ctx *ctx, kiln_interrupt_fn fn, void *userdata) {
    ctx->interrupt = fn;
    ctx->interrupt_ud = userdata;
}

void kiln_ctx_set_normalize(kiln_ctx *ctx, kiln_normalize_fn fn, void *userdata) {
    ctx->normalize = fn;
    ctx->normalize_ud = userdata;
}

int kiln_ctx_interrupted(kiln_ctx *ctx) {
    return ctx && ctx->interrupt && ctx->interrupt(ctx->interrupt_ud) != 0;
}

static bool argtype_valid(const kiln_argtype *a, const kiln_options *o) {
    if (a->dtype >= KILN_RECORD0) { /* a record (ndim 0) or an array of records */
        if (a->dtype - KILN_RECORD0 >= o->nrecords || !a->is_array) return false;
        if (a->ndim == 0) return true;
    } else if (a->dtype >= KILN_NDTYPES) {
        return false;
    }
    if (!a->is_array)
        return (a->layout == 0 || a->layout == KILN_LAYOUT_PTR) &&
               (a->ndim == 0 || (a->layout == 0 && a->dtype >= KILN_INT8 && a->dtype <= KILN_UINT64));
    if (a->ndim > KILN_MAX_NDIM) return false;
    if (a->ndim == 0) return a->layout == KILN_LAYOUT_C; /* a 0-d array */
    return a->layout == KILN_LAYOUT_C || a->layout == KILN_LAYOUT_F || a->layout == KILN_LAYOUT_A;
}

/* Reports the first argument type that is not one kiln compiles for. */
static bool args_valid(kiln_ctx *ctx, const kiln_argtype *args, int nargs,
                       const kiln_options *o) {
    for (int i = 0; i < nargs; i++)
        if (!argtype_valid(&args[i], o)) {
            if (args[i].dtype >= KILN_RECORD0 && args[i].dtype - KILN_RECORD0 >= o->nrecords)
                diag_plain(ctx, KILN_ERROR, "spell record types with kiln.from_dtype(dtype), "
                           "whose text names them",
                           "argument %d is record%d, a record type this process never made",
                           i + 1, args[i].dtype - KILN_RECORD0);
            else
                diag_plain(ctx, KILN_ERROR, NULL, "argument %d has an invalid type", i + 1);
            return false;
        }
    return true;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

void kiln_program_free(kiln_program *p) {
    if (!p) return;
    free(p->source);
    free(p->tier0);
    free(p->types);
    free(p->name);
    for (int i = 0; i < p->nparams; i++) free(p->pnames[i]);
    free(p->pnames);
    free(p->pflags);
    free(p->gpu_only);
    for (int i = 0; i < p->nfiles; i++) free(p->files[i]);
    free(p->files);
    free(p);
}

/* One translation's state that outlives a jump out of compiler_run: the
 * inputs, and the malloc'd results the caller frees. */
typedef struct Translation {
    const kiln_source *src;
    const kiln_argtype *args;
    int nargs;
    bool want_program;   /* kiln_translate; else kiln_infer_return */
    Buf out, types;      /* malloc'd: generated source, inspect_types text */
    Buf vec;             /* malloc'd: tier 0's vector entry (emit_tier0.c) */
    kiln_program *p;     /* the result, or NULL */
    kiln_argtype *ret;   /* kiln_infer_return's answer */
} Translation;

static double mono_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int translate_body(Compiler *C, void *arg) {
    Translation *T = arg;
    double t0 = mono_ms();
    const kiln_source *src = T->src;
    int nargs = T->nargs;
    FuncInfo *fi = sema_funcinfo(C, src->scope, src->text, src->len, src->filename,
                                 src->first_line);
    if (fi->parse_failed) return -1;
    double t1 = mono_ms();
    const Type **tys = arena_alloc(&C->arena, sizeof(Type *) * (size_t)(nargs + 1));
    for (int i = 0; i < nargs; i++) tys[i] = ty_from_argtype(C, &T->args[i]);
    for (int i = 0; i < nargs && i < KILN_MAX_PARAMS; i++) /* IntEnum classes (sema_expr.c) */
        C->enum_tags[i] = T->args[i].is_array ? 0 : T->args[i].ndim;
    SemaResult R;
    if (!T->want_program) {
        fi->is_device = true;
        if (sema_run(C, fi, tys, nargs, false, &R) != 0) return -1;
        const Type *t = R.kernel->ret;
        if (t->kind == TY_NONE) {
            T->ret->dtype = KILN_NDTYPES;
            return 0;
        }
        if (ty_is_scalar(t)) {
            T->ret->dtype = ty_strong(t)->dtype;
            return 0;
        }
        error_at(C, R.kernel->def->def.name_sp, "return one scalar",
                 "'%s' returns %s where a scalar is needed", fi->name, ty_name(C, t));
        return -1;
    }
    PtrVec files = {0};
    bool exported = C->opts.export_name != NULL;
    if (exported) fi->is_device = true; /* typed as a device function: it returns a value */
    if (sema_run(C, fi, tys, nargs, !exported, &R) < 0) return -1;
    if (exported && R.kernel->ret->kind != TY_NONE && !ty_is_scalar(R.kernel->ret)) {
        error_at(C, R.kernel->def->def.name_sp, "return one scalar",
                 "'%s' returns %s, but an exported device function returns a scalar or nothing",
                 fi->name, ty_name(C, R.kernel->ret));
        return -1;
    }
    if (exported && C->opts.export_ret && R.kernel->ret->kind == TY_NONE) {
        error_at(C, R.kernel->def->def.name_sp, "give the signature no return type, or return a value",
                 "'%s' returns nothing, but its signature returns %s", fi->name,
                 kiln_dtype_name((kiln_dtype)(C->opts.export_ret - 1)));
        return -1;
    }
    double t2 = mono_ms();
    bool cpu = C->opts.target != KILN_TARGET_CUDA && !exported && C->opts.tier0_vector;
    if (emit_program(C, &R, &T->out, &files, cpu ? &T->vec : NULL) < 0) return -1;
    sema_dump_types(C, &R, &T->types);
    double t3 = mono_ms();

    kiln_program *p = calloc(1, sizeof *p);
    if (!p) goto oom;
    T->p = p;
    if (T->vec.len) {
        p->tier0_len = T->out.len + T->vec.len;
        p->tier0 = malloc(p->tier0_len + 1);
        if (!p->tier0) goto oom;
        memcpy(p->tier0, T->out.p, T->out.len);
        memcpy(p->tier0 + T->out.len, T->vec.p, T->vec.len);
        p->tier0[p->tier0_len] = 0;
    }
    p->source = buf_take(&T->out, &p->source_len);
    p->types = buf_take(&T->types, NULL);
    p->name = strdup(fi->name);
    p->stage_ms[0] = t1 - t0;
    p->stage_ms[1] = t2 - t1;
    p->stage_ms[2] = t3 - t2;
    p->gpu_only = dup_or_null(R.gpu_only);
    p->cooperative = R.cooperative;
    p->nparams = nargs;
    p->pnames = calloc((size_t)nargs + 1, sizeof(char *));
    p->pflags = calloc((size_t)nargs + 1, sizeof(int));
    if (!p->source || !p->types || !p->name || !p->pnames || !p->pflags) goto oom;
    p->files = calloc((size_t)files.n + 1, sizeof(char *));
    if (p->files)
        for (int i = 0; i < files.n; i++) p->files[p->nfiles++] = strdup(files.v[i]);
    for (int i = 0; i < nargs; i++) {
        p->pnames[i] = strdup(R.kernel->psyms[i]->name);
        if (spec_writes(R.kernel, i)) p->pflags[i] |= KILN_PARAM_WRITTEN;
    }
    return 0;
oom:
    kiln_program_free(T->p);
    T->p = NULL;
    diag_plain(C->ctx, KILN_ERROR, NULL, "out of memory");
    return -1;
}

/* Runs one translation in its own Compiler (and arena). */
static int translate(kiln_ctx *ctx, Translation *T, const kiln_options *opts,
                     kiln_resolve_fn resolve, void *resolve_userdata) {
    Compiler C;
    compiler_init(&C, ctx);
    C.opts = *opts;
    C.resolve = resolve;
    C.resolve_ud = resolve_userdata;
    buf_init(&T->out);
    buf_init(&T->types);
    buf_init(&T->vec);
    int rc = compiler_run(&C, translate_body, T, T->src->filename, T->src->first_line);
    if (rc != 0 && T->p) {
        kiln_program_free(T->p);
        T->p = NULL;
    }
    buf_free(&T->out);
    buf_free(&T->types);
    buf_free(&T->vec);
    compiler_free(&C);
    return rc;
}

kiln_program *kiln_translate(kiln_ctx *ctx, const kiln_source *src, const kiln_argtype *args,
                             int nargs, const kiln_options *opts, kiln_resolve_fn resolve,
                             void *resolve_userdata) {
    if (nargs < 0 || nargs > KILN_MAX_PARAMS) {
        diag_plain(ctx, KILN_ERROR, NULL, "kernels take at most %d arguments", KILN_MAX_PARAMS);
        return NULL;
    }
    if (!args_valid(ctx, args, nargs, opts)) return NULL;
    if (opts->export_ret < 0 || opts->export_ret > KILN_NDTYPES) {
        diag_plain(ctx, KILN_ERROR, NULL, "no return dtype %d", opts->export_ret - 1);
        return NULL;
    }
    if (opts->export_name && opts->target != KILN_TARGET_CUDA) {
        diag_plain(ctx, KILN_ERROR, NULL, "only the CUDA target exports device functions");
        return NULL;
    }
    Translation T;
    memset(&T, 0, sizeof T);
    T.src = src;
    T.args = args;
    T.nargs = nargs;
    T.want_program = true;
    translate(ctx, &T, opts, resolve, resolve_userdata);
    return T.p;
}

int kiln_infer_return(kiln_ctx *ctx, const kiln_source *src, const kiln_argtype *args,
                      int nargs, const kiln_options *opts, kiln_resolve_fn resolve,
                      void *resolve_userdata, kiln_argtype *ret) {
    memset(ret, 0, sizeof *ret);
    if (nargs < 0 || nargs > KILN_MAX_PARAMS) return -1;
    if (!args_valid(ctx, args, nargs, opts)) return -1;
    Translation T;
    memset(&T, 0, sizeof T);
    T.src = src;
    T.args = args;
    T.nargs = nargs;
    T.ret = ret;
    return translate(ctx, &T, opts, resolve, resolve_userdata);
}

const char *kiln_program_source(const kiln_program *p, size_t *len) {
    if (len) *len = p->source_len;
    return p->source;
}
const char *kiln_program_tier0_source(const kiln_program *p, size_t *len) {
    if (len) *len = p->tier0 ? p->tier0_len : 0;
    return p->tier0;
}
const char *kiln_program_entry(const kiln_program *p) {
    (void)p;
    return "kiln_entry";
}
const char *kiln_program_name(const kiln_program *p) { return p->name; }
const char *kiln_program_types(const kiln_program *p) { return p->types; }
int kiln_program_nparams(const kiln_program *p) { return p->nparams; }
const char *kiln_program_param_name(const kiln_program *p, int i) {
    return i >= 0 && i < p->nparams ? p->pnames[i] : NULL;
}
int kiln_program_param_flags(const kiln_program *p, int i) {
    return i >= 0 && i < p->nparams ? p->pflags[i] : 0;
}
const char *kiln_program_file(const kiln_program *p, int i) {
    return i >= 0 && i < p->nfiles ? p->files[i] : NULL;
}
void kiln_program_stage_ms(const kiln_program *p, double ms[3]) {
    memcpy(ms, p->stage_ms, sizeof p->stage_ms);
}
int kiln_program_cooperative(const kiln_program *p) { return p->cooperative; }

int kiln_program_gpu_only(const kiln_program *p, const char **what) {
    if (what) *what = p->gpu_only;
    return p->gpu_only != NULL;
}

typedef struct SigParse {
    const char *text;
    kiln_argtype *ret, *args;
    int max_args;
    int n;
} SigParse;

static int signature_body(Compiler *C, void *arg) {
    SigParse *S = arg;
    SrcFile *f = arena_alloc(&C->arena, sizeof *f);
    f->name = "<signature>";
    f->text = arena_strdup(&C->arena, S->text ? S->text : "");
    f->len = strlen(f->text);
    f->first_line = 1;
    if (memchr(f->text, '\n', f->len)) {
        diag_plain(C->ctx, KILN_ERROR, NULL, "a signature is one line of text");
        return -1;
    }
    S->n = parse_signature(C, f, S->ret, S->args, S->max_args, NULL);
    return S->n < 0 ? -1 : 0;
}

int kiln_parse_signature(kiln_ctx *ctx, const char *text, kiln_argtype *ret, kiln_argtype *args,
                         int max_args) {
    Compiler C;
    compiler_init(&C, ctx);
    SigParse S = {text, ret, args, max_args, -1};
    int rc = compiler_run(&C, signature_body, &S, "<signature>", 1);
    compiler_free(&C);
    return rc < 0 ? -1 : S.n;
}

/* ---- kiln.fuse ------------------------------------------------------------------ */

typedef struct FuseRun {
    const kiln_source *src;
    const kiln_fuse_arg *args;
    int nargs;
    kiln_target target;
    kiln_fuse_plan *plan;
    Buf text, params;    /* malloc'd: outlive the arena */
} FuseRun;

static int fuse_body(Compiler *C, void *arg) {
    FuseRun *R = arg;
    SrcFile *f = arena_alloc(&C->arena, sizeof *f);
    f->name = arena_strdup(&C->arena, R->src->filename ? R->src->filename : "<unknown>");
    f->text = arena_strndup(&C->arena, R->src->text, R->src->len);
    f->len = R->src->len;
    f->first_line = R->src->first_line > 0 ? R->src->first_line : 1;
    FuseIR *ir = arena_alloc(&C->arena, sizeof *ir);
    if (fuse_lower(C, f, R->src->scope, R->args, R->nargs, ir) != 0 || C->nerrors) return -1;
    for (int i = 0; i < R->nargs; i++)
        if (R->args[i].kind == KILN_FUSE_ROW && (ir->kind != KILN_FUSE_MAP || ir->ndim_out != 1)) {
            /* a row operand is read at a flat position's column: elementwise, 1-D only */
            diag_plain(C->ctx, KILN_ERROR, NULL,
                       "argument %d is a row operand, which only a 1-D elementwise call takes", i + 1);
            return -1;
        }
    kiln_fuse_plan *p = R->plan;
    p->kind = ir->kind;
    p->keepdims = ir->keepdims;
    p->ndim_out = ir->ndim_out;
    p->tuple = ir->tuple;
    p->nout = ir->nout;
    for (int k = 0; k < ir->nout; k++) {
        p->out[k] = (kiln_dtype)ir->outs[k]->t->dtype;
        p->out_args[k] = ir->nred ? ir->outs[k]->outer : ir->outs[k]->arrays;
        if (ir->outs[k]->npscalar || ir->outs[k]->level == FL_SCALAR) p->out_scalars |= 1u << k;
        p->outer |= p->out_args[k];
        for (int r = 0; r < ir->nred; r++)
            if (ir->outs[k]->reds >> r & 1) p->out_groups[k] |= 1u << ir->red[r].group;
    }
    p->nred = ir->nred;
    for (int r = 0; r < ir->nred; r++) {
        p->red[r] = (kiln_dtype)ir->red[r].sum->dtype; /* the partials' */
        p->red_op[r] = ir->red[r].op;
        p->red_args[r] = ir->red[r].arg->arrays;
        p->red_group[r] = ir->red[r].group;
    }
    fuse_write(C, ir, R->target, &R->text, &R->params);
    p->name = strdup(ir->name);
    return 0;
}

int kiln_fuse(kiln_ctx *ctx, const kiln_source *src, const kiln_fuse_arg *args, int nargs,
              kiln_target target, kiln_resolve_fn resolve, void *resolve_userdata,
              kiln_fuse_plan *plan) {
    memset(plan, 0, sizeof *plan);
    if (nargs < 0 || nargs > KILN_MAX_PARAMS) {
        diag_plain(ctx, KILN_ERROR, NULL, "a fused function takes at most %d arguments",
                   KILN_MAX_PARAMS);
        return -1;
    }
    for (int i = 0; i < nargs; i++) {
        if ((unsigned)args[i].kind > KILN_FUSE_ROW || (unsigned)args[i].dtype >= KILN_NDTYPES ||
            args[i].dtype == KILN_FLOAT16 ||
            (args[i].kind == KILN_FUSE_ARRAY && (args[i].ndim < 0 || args[i].ndim > KILN_MAX_NDIM)) ||
            (args[i].kind == KILN_FUSE_ROW && (args[i].ndim != 1 || args[i].ones != 0))) {
            diag_plain(ctx, KILN_ERROR, NULL, "argument %d has an invalid type", i + 1);
            return -1;
        }
        /* complex arguments: fuse_lower refuses them at their parameter */
    }
    Compiler C;
    compiler_init(&C, ctx);
    C.opts.target = target;
    C.resolve = resolve;
    C.resolve_ud = resolve_userdata;
    FuseRun R = {src, args, nargs, target, plan, {0}, {0}};
    buf_init(&R.text);
    buf_init(&R.params);
    int rc = compiler_run(&C, fuse_body, &R, src->filename, src->first_line);
    if (rc == 0 && (R.text.oom || R.params.oom || !plan->name)) {
        diag_plain(ctx, KILN_ERROR, NULL, "out of memory");
        rc = -1;
    }
    if (rc == 0) {
        plan->source = buf_take(&R.text, NULL);
        plan->params = buf_take(&R.params, NULL);
    }
    buf_free(&R.text);
    buf_free(&R.params);
    compiler_free(&C);
    if (rc != 0) kiln_fuse_plan_free(plan);
    return rc;
}

void kiln_fuse_plan_free(kiln_fuse_plan *plan) {
    if (!plan) return;
    free(plan->name);
    free(plan->source);
    free(plan->params);
    memset(plan, 0, sizeof *plan);
}
