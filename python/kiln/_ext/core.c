/* core.c: the bridge between Python and the kiln core.
 *
 * What _compile.py calls on a miss: translate (the core's lex -> parse -> sema
 * -> emit, which asks Python about each global name once through the
 * resolver bridge below), the CPU build through the artifact cache, and the
 * load of a built kernel into an Entry (table.h) for the dispatcher's table.
 * A Program is the translated kernel: its generated source and what sema
 * learned (types, written parameters, the files runtime errors name).
 * Diagnostics become kiln.CompileError (errors.c).
 */
#include "core.h"

#include <string.h>

#include "cache.h"
#include "driver.h"
#include "errors.h"
#include "obs.h"
#include "records.h"
#include "resolve.h"
#include "table.h"
#include "tier.h"

/* ---- Program ------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    kiln_program *p;
} ProgramObject;

static void program_dealloc(ProgramObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    kiln_program_free(self->p);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *program_source(ProgramObject *self, void *c) {
    size_t n;
    const char *s = kiln_program_source(self->p, &n);
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "replace");
}
static PyObject *program_tier0_source(ProgramObject *self, void *c) {
    size_t n;
    const char *s = kiln_program_tier0_source(self->p, &n);
    if (!s) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "replace");
}
static PyObject *program_types(ProgramObject *self, void *c) {
    return PyUnicode_FromString(kiln_program_types(self->p));
}
static PyObject *program_name(ProgramObject *self, void *c) {
    return PyUnicode_FromString(kiln_program_name(self->p));
}
static PyObject *program_written(ProgramObject *self, void *c) {
    int n = kiln_program_nparams(self->p);
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i, PyBool_FromLong(kiln_program_param_flags(self->p, i) & KILN_PARAM_WRITTEN));
    return t;
}
static PyObject *program_gpu_only(ProgramObject *self, void *c) {
    const char *w;
    if (!kiln_program_gpu_only(self->p, &w)) Py_RETURN_NONE;
    return PyUnicode_FromString(w);
}
static PyObject *program_files(ProgramObject *self, void *c) {
    PyObject *l = PyList_New(0);
    if (!l) return NULL;
    for (int i = 0;; i++) {
        const char *f = kiln_program_file(self->p, i);
        if (!f) break;
        PyObject *s = PyUnicode_FromString(f);
        if (!s || PyList_Append(l, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(l);
            return NULL;
        }
        Py_DECREF(s);
    }
    PyObject *t = PyList_AsTuple(l);
    Py_DECREF(l);
    return t;
}

static PyGetSetDef program_getset[] = {
    {"source", (getter)program_source, NULL, "generated C or CUDA C", NULL},
    {"tier0_source", (getter)program_tier0_source, NULL,
     "CPU: the source with tier 0's vector entry after it, or None", NULL},
    {"types", (getter)program_types, NULL, "each variable's type (inspect_types)", NULL},
    {"name", (getter)program_name, NULL, "the kernel's name", NULL},
    {"written", (getter)program_written, NULL, "per parameter: may the kernel write it", NULL},
    {"gpu_only", (getter)program_gpu_only, NULL, "the first GPU-only feature used, or None", NULL},
    {"files", (getter)program_files, NULL, "source files of runtime error locations", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot program_slots[] = {
    {Py_tp_dealloc, program_dealloc},
    {Py_tp_getset, program_getset},
    {Py_tp_doc, (void *)"A translated kernel: generated code and what sema learned."},
    {0, NULL}};

static PyType_Spec program_spec = {"kiln._kiln.Program", sizeof(ProgramObject), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                       Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                   program_slots};

/* ---- module functions ------------------------------------------------------------------------ */

/* What a call into the core with Python globals needs: a context whose
 * diagnostics go to a sink, and the resolver bridge. */
typedef struct {
    kiln_ctx *ctx;
    Sink sink;
    Resolve R;
} CoreCall;

/* NFKC of a non-ASCII identifier, as Python's parser makes it (PEP 3131):
 * the core's kiln_normalize_fn.  Translation runs with the GIL held. */
static int ext_normalize(void *userdata, const char *name, size_t len, char **out) {
    (void)userdata;
    *out = NULL;
    PyObject *s = PyUnicode_DecodeUTF8(name, (Py_ssize_t)len, "strict");
    if (!s) {
        PyErr_Clear();
        return 1;
    }
    int rc = 1;
    PyObject *mod = NULL, *nf = NULL;
    if (PyUnicode_IsIdentifier(s) <= 0) {
        PyErr_Clear();
        goto done;
    }
    rc = -1;
    mod = PyImport_ImportModule("unicodedata");
    nf = mod ? PyObject_CallMethod(mod, "normalize", "sO", "NFKC", s) : NULL;
    Py_ssize_t n;
    const char *u = nf ? PyUnicode_AsUTF8AndSize(nf, &n) : NULL;
    if (!u) {
        PyErr_Clear();
        goto done;
    }
    *out = malloc((size_t)n + 1);
    if (*out) {
        memcpy(*out, u, (size_t)n + 1);
        rc = 0;
    }
done:
    Py_XDECREF(nf);
    Py_XDECREF(mod);
    Py_DECREF(s);
    return rc;
}

static int core_open(CoreCall *c, PyObject *resolver) {
    c->sink.list = PyList_New(0);
    c->sink.nerrors = 0;
    c->R.resolver = resolver;
    c->R.keep = PyList_New(0);
    c->R.mem = PyList_New(0);
    c->ctx = kiln_ctx_new();
    if (!c->sink.list || !c->R.keep || !c->R.mem || !c->ctx) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    kiln_ctx_set_diag(c->ctx, ext_sink_diag, &c->sink);
    kiln_ctx_set_normalize(c->ctx, ext_normalize, NULL);
    return 0;
}

static void core_close(CoreCall *c) {
    kiln_ctx_free(c->ctx);
    Py_XDECREF(c->sink.list);
    Py_XDECREF(c->R.keep);
    Py_XDECREF(c->R.mem);
}

/* A type key is 4 bytes per argument, followed (in the dispatcher's table) by
 * 2 bytes: the target and the device. */
static int key_to_argtypes(PyObject *key, kiln_argtype *out, int max) {
    if (!PyBytes_Check(key) || PyBytes_GET_SIZE(key) % 4 > 2 || PyBytes_GET_SIZE(key) % 4 == 1 ||
        PyBytes_GET_SIZE(key) / 4 > max) {
        PyErr_SetString(PyExc_ValueError, "a type key is bytes of 4 per argument (and 2 more)");
        return -1;
    }
    int n = (int)(PyBytes_GET_SIZE(key) / 4);
    memcpy(out, PyBytes_AS_STRING(key), (size_t)n * 4);
    return n;
}

/* translate(text, filename, first_line, key, options, resolver, scope): _compile._translate */
static PyObject *mod_translate(PyObject *module, PyObject *args) {
    ModState *st = ext_state(module);
    const char *text, *filename;
    Py_ssize_t tlen;
    int first_line;
    PyObject *key, *opts, *resolver, *scope;
    if (!PyArg_ParseTuple(args, "s#siO!O!OO", &text, &tlen, &filename, &first_line,
                          &PyBytes_Type, &key, &PyTuple_Type, &opts, &resolver, &scope))
        return NULL;
    kiln_options o;
    memset(&o, 0, sizeof o);
    o.records = ext_records(&o.nrecords);
    int target = 0;
    PyObject *links = NULL; /* (str, ...): @jit(link=...)'s CUDA C sources */
    if (!PyArg_ParseTuple(opts, "iiiiii|iiiziO!p", &target, &o.fastmath, &o.debug, &o.lineinfo,
                          &o.max_registers, &o.cuda_arch, &o.launch_bounds[0],
                          &o.launch_bounds[1], &o.launch_bounds[2], &o.export_name, &o.export_ret,
                          &PyTuple_Type, &links, &o.tier0_vector))
        return NULL;
    Py_ssize_t nl = links ? PyTuple_GET_SIZE(links) : 0;
    if (nl > KILN_MAX_PARAMS) {
        PyErr_SetString(PyExc_ValueError, "too many link= sources");
        return NULL;
    }
    const char *ltext[KILN_MAX_PARAMS];
    size_t llen[KILN_MAX_PARAMS];
    for (Py_ssize_t i = 0; i < nl; i++) {
        Py_ssize_t len;
        ltext[i] = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(links, i), &len);
        if (!ltext[i]) return NULL;
        llen[i] = (size_t)len;
    }
    o.links = ltext;
    o.link_lens = llen;
    o.nlinks = (int)nl;
    for (int i = 0; i < 3; i++)
        if (o.launch_bounds[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "launch bounds are positive ints");
            return NULL;
        }
    o.target = target ? KILN_TARGET_CUDA : KILN_TARGET_CPU;
    kiln_argtype at[KILN_MAX_PARAMS];
    int n = key_to_argtypes(key, at, KILN_MAX_PARAMS);
    if (n < 0) return NULL;
    CoreCall c;
    PyObject *result = NULL;
    if (core_open(&c, resolver) < 0) goto done;
    kiln_source src = {text, (size_t)tlen, filename, first_line, scope};
    double t0 = ext_obs_us();
    kiln_program *p = kiln_translate(c.ctx, &src, at, n, &o, ext_resolve, &c.R);
    if (p) {
        double ms[3];
        kiln_program_stage_ms(p, ms);
        for (int s = 0; s < 3; s++) {
            ext_obs_stage(st, (ObsStage)(OBS_FRONT + s), t0, ms[s], NULL);
            t0 += ms[s] * 1e3;
        }
    }
    if (!p) {
        ext_raise_compile_error(st, &c.sink, "kiln: compilation failed");
        goto done;
    }
    ProgramObject *po = PyObject_New(ProgramObject, st->ProgramType);
    if (!po) {
        kiln_program_free(p);
        goto done;
    }
    po->p = p;
    result = (PyObject *)po;
done:
    core_close(&c);
    return result;
}

/* fuse(text, filename, first_line, args, target, resolver, scope) -> dict: kiln.fuse's
 * lowering (kiln_fuse).  args: per argument (kind, dtype, ndim, ones), kiln_fuse_arg's. */
static PyObject *mod_fuse(PyObject *module, PyObject *args) {
    ModState *st = ext_state(module);
    const char *text, *filename;
    Py_ssize_t tlen;
    int first_line, target;
    PyObject *fargs, *resolver, *scope;
    if (!PyArg_ParseTuple(args, "s#siO!iOO", &text, &tlen, &filename, &first_line,
                          &PyTuple_Type, &fargs, &target, &resolver, &scope))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(fargs);
    if (n > KILN_MAX_PARAMS) {
        PyErr_Format(PyExc_TypeError, "a fused function takes at most %d arguments",
                     KILN_MAX_PARAMS);
        return NULL;
    }
    kiln_fuse_arg fa[KILN_MAX_PARAMS + 1];
    for (Py_ssize_t i = 0; i < n; i++) {
        int kind, dtype, ndim;
        unsigned int ones;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fargs, i), "iiiI", &kind, &dtype, &ndim, &ones))
            return NULL;
        fa[i].kind = (kiln_fuse_argkind)kind;
        fa[i].dtype = (kiln_dtype)dtype;
        fa[i].ndim = ndim;
        fa[i].ones = ones;
    }
    CoreCall c;
    PyObject *result = NULL;
    kiln_fuse_plan plan;
    memset(&plan, 0, sizeof plan);
    if (core_open(&c, resolver) < 0) goto done;
    kiln_source src = {text, (size_t)tlen, filename, first_line, scope};
    if (kiln_fuse(c.ctx, &src, fa, (int)n, target ? KILN_TARGET_CUDA : KILN_TARGET_CPU,
                  ext_resolve, &c.R, &plan) != 0) {
        ext_raise_compile_error(st, &c.sink, "kiln: kiln.fuse failed");
        goto done;
    }
    PyObject *outs = PyTuple_New(plan.nout), *reds = PyTuple_New(plan.nred);
    for (int k = 0; outs && k < plan.nout; k++)
        PyTuple_SET_ITEM(outs, k, Py_BuildValue("iKI", (int)plan.out[k],
                                                (unsigned long long)plan.out_args[k],
                                                (unsigned int)plan.out_groups[k]));
    for (int r = 0; reds && r < plan.nred; r++)
        PyTuple_SET_ITEM(reds, r, Py_BuildValue("iiKi", (int)plan.red[r], plan.red_op[r],
                                                (unsigned long long)plan.red_args[r],
                                                plan.red_group[r]));
    if (outs && reds)
        result = Py_BuildValue("{s:i,s:i,s:i,s:i,s:O,s:O,s:K,s:s,s:s,s:s,s:I}", "kind",
                               (int)plan.kind, "keepdims", plan.keepdims,
                               "ndim_out", plan.ndim_out, "tuple", plan.tuple,
                               "outs", outs, "reds", reds, "outer",
                               (unsigned long long)plan.outer, "name", plan.name, "source",
                               plan.source, "params", plan.params, "scalars",
                               (unsigned int)plan.out_scalars);
    Py_XDECREF(outs);
    Py_XDECREF(reds);
done:
    kiln_fuse_plan_free(&plan);
    core_close(&c);
    return result;
}

/* infer_return(text, filename, first_line, key, resolver, scope) -> bytes (4, or empty for None) */
static PyObject *mod_infer_return(PyObject *module, PyObject *args) {
    ModState *st = ext_state(module);
    const char *text, *filename;
    Py_ssize_t tlen;
    int first_line;
    PyObject *key, *resolver, *scope;
    if (!PyArg_ParseTuple(args, "s#siO!OO", &text, &tlen, &filename, &first_line, &PyBytes_Type,
                          &key, &resolver, &scope))
        return NULL;
    kiln_argtype at[KILN_MAX_PARAMS], ret;
    int n = key_to_argtypes(key, at, KILN_MAX_PARAMS);
    if (n < 0) return NULL;
    kiln_options o;
    memset(&o, 0, sizeof o);
    o.records = ext_records(&o.nrecords);
    CoreCall c;
    PyObject *result = NULL;
    if (core_open(&c, resolver) < 0) goto done;
    kiln_source src = {text, (size_t)tlen, filename, first_line, scope};
    if (kiln_infer_return(c.ctx, &src, at, n, &o, ext_resolve, &c.R, &ret) < 0) {
        ext_raise_compile_error(st, &c.sink, "kiln: typing failed");
        goto done;
    }
    if (ret.dtype == KILN_NDTYPES) result = PyBytes_FromStringAndSize("", 0);
    else result = PyBytes_FromStringAndSize((const char *)&ret, 4);
done:
    core_close(&c);
    return result;
}

typedef struct {
    const char *src;
    size_t len;
} CpuBuild;

static int build_cpu(void *ud, kiln_ctx *ctx, void **blob, size_t *len, char kind[16]) {
    CpuBuild *b = ud;
    snprintf(kind, 16, "so");
    return kiln_cpu_build(ctx, b->src, b->len, blob, len);
}

/* cpu_build(source, name='', cache=True) -> (shared object bytes, cache key or '', hit) */
static PyObject *mod_cpu_build(PyObject *module, PyObject *args) {
    ModState *st = ext_state(module);
    const char *src, *name = "";
    Py_ssize_t len;
    int use_cache = 1;
    if (!PyArg_ParseTuple(args, "s#|sp", &src, &len, &name, &use_cache)) return NULL;
    /* the C compiler's identity, once per build: KILN_CC may change between builds */
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) return PyErr_NoMemory();
    char *target = NULL;
    if (use_cache) {
        Py_BEGIN_ALLOW_THREADS
        target = strdup(kiln_cpu_target(ctx));
        Py_END_ALLOW_THREADS
    }
    kiln_ctx_free(ctx);
    CpuBuild b = {src, (size_t)len};
    ExtArtifact art;
    int rc = ext_cached_build(st, src, (size_t)len, target, 0, kiln_cpu_target_name(), name,
                              build_cpu, &b, &art);
    free(target);
    if (rc < 0) return NULL;
    PyObject *r = Py_BuildValue("(y#si)", (const char *)art.blob, (Py_ssize_t)art.len, art.key,
                                art.hit);
    free(art.blob);
    return r;
}

/* A new Entry for a program and key, without its loaded code. */
static EntryObject *entry_new(ModState *st, PyObject *prog, PyObject *key, PyObject *sig) {
    kiln_argtype at[KILN_MAX_PARAMS];
    int n = key_to_argtypes(key, at, KILN_MAX_PARAMS);
    if (n < 0) return NULL;
    ProgramObject *po = (ProgramObject *)prog;
    if (n != kiln_program_nparams(po->p)) {
        PyErr_SetString(PyExc_ValueError, "the key does not match the program's parameters");
        return NULL;
    }
    EntryObject *e = PyObject_New(EntryObject, st->EntryType);
    if (!e) return NULL;
    e->target = 0;
    e->cpu = NULL;
    e->cu = NULL;
    e->cpu0 = NULL;
    e->job = NULL;
    e->device = 0;
    e->st = st;
    e->debug = false;
    e->cooperative = kiln_program_cooperative(((ProgramObject *)prog)->p) != 0;
    e->nparams = n;
    e->ptypes = PyMem_Malloc(sizeof(kiln_argtype) * (size_t)(n + 1));
    e->written = PyMem_Malloc((size_t)(n + 1));
    e->program = NULL;
    e->files = NULL;
    e->signature = NULL;
    memset(&e->obs, 0, sizeof e->obs);
    if (!e->ptypes || !e->written) {
        Py_DECREF(e);
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(e->ptypes, at, sizeof(kiln_argtype) * (size_t)n);
    e->nslots = 0;
    for (int i = 0; i < n; i++) {
        e->written[i] = (kiln_program_param_flags(po->p, i) & KILN_PARAM_WRITTEN) != 0;
        /* docs/abi.md: a complex128 scalar's 16 bytes take two slots */
        e->nslots += at[i].is_array                     ? 1 + 2 * at[i].ndim
                     : at[i].layout == KILN_LAYOUT_PTR   ? 1 /* an address */
                     : at[i].dtype == KILN_COMPLEX128 ? 2 : 1;
    }
    Py_INCREF(prog);
    e->program = prog;
    e->files = program_files(po, NULL);
    e->can_fail = kiln_program_file(po->p, 0) != NULL; /* error sites name their file */
    Py_INCREF(sig);
    e->signature = sig;
    if (!e->files) {
        Py_DECREF(e);
        return NULL;
    }
    return e;
}

/* Loads a built shared object as e's code; 0, or -1 with an exception set. */
static int load_cpu(ModState *st, EntryObject *e, const void *blob, size_t len) {
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) {
        PyErr_NoMemory();
        return -1;
    }
    TextSink t = {NULL, 0, 0, 0};
    kiln_ctx_set_diag(ctx, ext_text_diag, &t);
    double t0 = ext_obs_us();
    e->cpu = kiln_cpu_load(ctx, blob, len, kiln_program_entry(((ProgramObject *)e->program)->p));
    ext_obs_stage(st, OBS_LOAD, t0, (ext_obs_us() - t0) / 1e3, NULL);
    kiln_ctx_free(ctx);
    if (!e->cpu) ext_raise_text(st, &t, "kiln: cannot load the kernel");
    PyMem_RawFree(t.buf);
    return e->cpu ? 0 : -1;
}

/* cpu_entry(program, blob, key, signature) -> Entry: loads a built kernel */
static PyObject *mod_cpu_entry(PyObject *module, PyObject *args) {
    ModState *st = ext_state(module);
    PyObject *prog, *key, *sig;
    Py_buffer blob;
    if (!PyArg_ParseTuple(args, "O!y*O!U", st->ProgramType, &prog, &blob, &PyBytes_Type, &key,
                          &sig))
        return NULL;
    EntryObject *e = entry_new(st, prog, key, sig);
    int rc = e ? load_cpu(st, e, blob.buf, (size_t)blob.len) : -1;
    PyBuffer_Release(&blob);
    if (rc < 0) {
        Py_XDECREF(e);
        return NULL;
    }
    return (PyObject *)e;
}

/* cpu_tiered_entry(program, key, signature, name, cache, tier0_only) -> Entry or None.
 * The optimised build from a cache tier when one has it; else tier 0's code, with
 * the optimising build queued (tier.c); None when tier 0 cannot build the kernel
 * (the caller builds it with the C compiler).  tier0_only (KILN_TIERS=tcc, for
 * tests): tier 0 alone, neither cache nor optimising build, and a refusal raises. */
static PyObject *mod_cpu_tiered_entry(PyObject *module, PyObject *args) {
    ModState *st = ext_state(module);
    PyObject *prog, *key, *sig;
    const char *name;
    int use_cache, only0;
    if (!PyArg_ParseTuple(args, "O!O!Usip", st->ProgramType, &prog, &PyBytes_Type, &key, &sig,
                          &name, &use_cache, &only0))
        return NULL;
    if (!kiln_cpu_quick_available()) Py_RETURN_NONE; /* built without libtcc */
    kiln_program *p = ((ProgramObject *)prog)->p;
    size_t len;
    const char *src = kiln_program_source(p, &len);
    /* the C compiler's identity, read now: the optimising build uses this context */
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) return PyErr_NoMemory();
    char *target = NULL;
    if (!only0) {
        Py_BEGIN_ALLOW_THREADS
        target = strdup(use_cache ? kiln_cpu_target(ctx) : kiln_cpu_compiler(ctx));
        Py_END_ALLOW_THREADS
        if (!target) {
            kiln_ctx_free(ctx);
            return PyErr_NoMemory();
        }
    }
    EntryObject *e = entry_new(st, prog, key, sig);
    if (!e) goto fail;
    if (!only0 && use_cache) {
        ExtArtifact art;
        int hit = ext_cached_lookup(st, src, len, target, &art);
        if (hit < 0) goto fail;
        if (hit) { /* built before: no tier 0 */
            int rc = load_cpu(st, e, art.blob, art.len);
            free(art.blob);
            if (rc < 0) goto fail;
            kiln_ctx_free(ctx);
            free(target);
            return (PyObject *)e;
        }
    }
    /* the vector entry (emit_tier0.c) when the kernel has one; refused, the scalar one */
    size_t vlen;
    const char *vsrc = kiln_program_tier0_source(p, &vlen);
    const char *scalar = getenv("KILN_TIER0_SCALAR"); /* docs/environment.md */
    e->cpu = vsrc && !(scalar && strcmp(scalar, "1") == 0)
                 ? ext_tier0_load(st, vsrc, vlen, "kiln_ventry", TIER0_VECTOR)
                 : NULL;
    if (!e->cpu)
        e->cpu = ext_tier0_load(st, src, len, kiln_program_entry(p), only0 ? TIER0_RAISE : TIER0_QUIET);
    e->cpu0 = e->cpu;
    if (!e->cpu) goto fail; /* refused: None, or CompileError for tier0_only */
    if (!only0) {
        e->job = ext_tier_start(st, ctx, src, len, use_cache ? target : NULL, name,
                                kiln_program_entry(p), &e->cpu);
        ctx = NULL; /* the job's, or freed */
        if (!e->job) goto fail; /* no worker can run it: build it now instead */
        ext_tier_vector(e->job, kiln_cpu_quick_vector(e->cpu0));
    }
    kiln_ctx_free(ctx);
    free(target);
    return (PyObject *)e;
fail:
    kiln_ctx_free(ctx);
    free(target);
    Py_XDECREF(e);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

/* cuda_entry(program, image, key, signature, device, debug) -> Entry: loads a cubin or PTX */
static PyObject *mod_cuda_entry(PyObject *module, PyObject *args) {
    ModState *st = ext_state(module);
    PyObject *prog, *image, *key, *sig;
    int device, debug;
    if (!PyArg_ParseTuple(args, "O!O!O!Uip", st->ProgramType, &prog, &PyBytes_Type, &image,
                          &PyBytes_Type, &key, &sig, &device, &debug))
        return NULL;
    if (ext_use_device(st, device) < 0) return NULL;
    EntryObject *e = entry_new(st, prog, key, sig);
    if (!e) return NULL;
    e->target = 1;
    e->device = device;
    e->debug = debug != 0;
    double t0 = ext_obs_us();
    int rc = kiln_cuda_load(st->cuda, device, PyBytes_AS_STRING(image),
                            kiln_program_entry(((ProgramObject *)prog)->p), &e->cu);
    ext_obs_stage(st, OBS_LOAD, t0, (ext_obs_us() - t0) / 1e3, NULL);
    if (rc != 0) {
        Py_DECREF(e);
        return ext_cuda_error(st, rc, "loading the compiled kernel");
    }
    if (e->cooperative) kiln_cuda_module_set_cooperative(e->cu); /* once, not per launch */
    return (PyObject *)e;
}

/* obs_register(entry, kernel, spec, loc): the entry's names and this thread's compile
 * record, for kiln.metrics() and traces (obs.h) */
static PyObject *mod_obs_register(PyObject *module, PyObject *args) {
    ModState *st = ext_state(module);
    PyObject *entry, *kernel, *spec, *loc;
    if (!PyArg_ParseTuple(args, "O!UUU", st->EntryType, &entry, &kernel, &spec, &loc)) return NULL;
    EntryObject *e = (EntryObject *)entry;
    if (ext_obs_register(st, &e->obs, kernel, spec, loc, e->target, e->device) < 0) return NULL;
    Py_RETURN_NONE;
}

/* parse_signature(text) -> (ret: bytes (empty for void), args: bytes) */
static PyObject *mod_parse_signature(PyObject *module, PyObject *arg) {
    ModState *st = ext_state(module);
    const char *text = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!text) {
        /* a str that is not UTF-8 text (bytes held as surrogate escapes, from a command
         * line): an invalid signature like any other, never a UnicodeEncodeError */
        if (PyUnicode_Check(arg) && PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
            PyErr_Clear();
            PyObject *shown = PyUnicode_AsEncodedString(arg, "utf-8", "surrogateescape");
            PyObject *esc = shown ? PyUnicode_DecodeUTF8(PyBytes_AS_STRING(shown),
                                                          PyBytes_GET_SIZE(shown),
                                                          "backslashreplace")
                                  : NULL;
            Py_XDECREF(shown);
            if (esc)
                PyErr_Format(st->CompileError,
                             "error: invalid signature '%U': it is not UTF-8 text", esc);
            Py_XDECREF(esc);
        } else if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "a signature is a str, not %.100s",
                         Py_TYPE(arg)->tp_name);
        }
        return NULL;
    }
    kiln_ctx *ctx = kiln_ctx_new();
    Sink sink = {PyList_New(0), 0};
    kiln_ctx_set_diag(ctx, ext_sink_diag, &sink);
    kiln_argtype ret, at[KILN_MAX_PARAMS];
    int n = kiln_parse_signature(ctx, text, &ret, at, KILN_MAX_PARAMS);
    kiln_ctx_free(ctx);
    PyObject *result = NULL;
    if (n < 0) {
        ext_raise_compile_error(st, &sink, "invalid signature");
    } else {
        result = Py_BuildValue("(y#y#)", (const char *)&ret, ret.dtype == KILN_NDTYPES ? 0 : 4,
                               (const char *)at, (Py_ssize_t)(4 * n));
    }
    Py_XDECREF(sink.list);
    return result;
}

/* argtype_str(key) -> str: "float32[::1], int64" */
static PyObject *mod_argtype_str(PyObject *module, PyObject *key) {
    kiln_argtype at[KILN_MAX_PARAMS];
    int n = key_to_argtypes(key, at, KILN_MAX_PARAMS);
    if (n < 0) return NULL;
    PyObject *parts = PyList_New(0);
    if (!parts) return NULL;
    for (int i = 0; i < n; i++) {
        char buf[96];
        bool rec = at[i].dtype >= KILN_RECORD0 && at[i].is_array; /* ndim 0: one record */
        if ((at[i].dtype >= KILN_NDTYPES && !rec) ||
            (at[i].is_array && at[i].ndim > KILN_MAX_NDIM)) {
            snprintf(buf, sizeof buf, "?");
        } else {
            kiln_argtype_format(&at[i], buf, sizeof buf);
        }
        /* an IntEnum member's type reads as its int's (int64): signatures are parsed back
         * (inspect_*, specialize), and its class only tells `is` apart */
        PyObject *s = PyUnicode_FromString(buf);
        if (!s || PyList_Append(parts, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(parts);
            return NULL;
        }
        Py_DECREF(s);
    }
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *r = sep ? PyUnicode_Join(sep, parts) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(parts);
    return r;
}

static PyObject *mod_cpu_compiler(PyObject *module, PyObject *unused) {
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) return PyErr_NoMemory();
    PyObject *r = PyUnicode_FromString(kiln_cpu_compiler(ctx));
    kiln_ctx_free(ctx);
    return r;
}

/* entry_attribute(entry, attr) -> int: cuFuncGetAttribute of a GPU entry (attr a
 * CUfunction_attribute: 0 max threads per block, 1 static shared bytes, 2 constant bytes,
 * 3 local bytes per thread, 4 registers per thread); None for a CPU entry */
static PyObject *mod_entry_attribute(PyObject *module, PyObject *args) {
    ModState *st = ext_state(module);
    PyObject *entry;
    int attr;
    if (!PyArg_ParseTuple(args, "O!i", st->EntryType, &entry, &attr)) return NULL;
    EntryObject *e = (EntryObject *)entry;
    if (attr < 0 || attr > 64) {
        PyErr_Format(PyExc_ValueError, "unknown kernel attribute %d", attr);
        return NULL;
    }
    if (!e->cu) Py_RETURN_NONE;
    int v = 0, rc = kiln_cuda_use(st->cuda, e->device);
    if (rc == 0) rc = kiln_cuda_func_attribute(st->cuda, e->cu, attr, &v);
    if (rc != 0) return ext_cuda_error(st, rc, "reading the kernel's attributes");
    return PyLong_FromLong(v);
}

/* entry_set_attribute(entry, attr, value): cuFuncSetAttribute of a GPU entry (attr a
 * CUfunction_attribute: 9 the preferred shared memory carveout); nothing for a CPU entry */
static PyObject *mod_entry_set_attribute(PyObject *module, PyObject *args) {
    ModState *st = ext_state(module);
    PyObject *entry;
    int attr, value;
    if (!PyArg_ParseTuple(args, "O!ii", st->EntryType, &entry, &attr, &value)) return NULL;
    EntryObject *e = (EntryObject *)entry;
    if (attr < 0 || attr > 64) {
        PyErr_Format(PyExc_ValueError, "unknown kernel attribute %d", attr);
        return NULL;
    }
    if (!e->cu) Py_RETURN_NONE;
    int rc = kiln_cuda_use(st->cuda, e->device);
    if (rc == 0) rc = kiln_cuda_func_set_attribute(st->cuda, e->cu, attr, value);
    if (rc != 0) return ext_cuda_error(st, rc, "setting the kernel's attributes");
    Py_RETURN_NONE;
}

static PyMethodDef core_functions[] = {
    {"entry_set_attribute", mod_entry_set_attribute, METH_VARARGS,
     "entry_set_attribute(entry, attr, value): cuFuncSetAttribute of a GPU entry"},
    {"entry_attribute", mod_entry_attribute, METH_VARARGS,
     "entry_attribute(entry, attr) -> int: cuFuncGetAttribute of a GPU entry; None on the CPU"},
    {"translate", mod_translate, METH_VARARGS,
     "translate(text, filename, first_line, key, options, resolver, scope) -> Program"},
    {"fuse", mod_fuse, METH_VARARGS,
     "fuse(text, filename, first_line, args, target, resolver, scope) -> plan (kiln.fuse)"},
    {"infer_return", mod_infer_return, METH_VARARGS,
     "infer_return(text, filename, first_line, key, resolver, scope) -> bytes"},
    {"cpu_build", mod_cpu_build, METH_VARARGS,
     "cpu_build(source, name='', cache=True) -> (shared object, cache key, hit)"},
    {"cpu_entry", mod_cpu_entry, METH_VARARGS, "cpu_entry(program, blob, key, signature) -> Entry"},
    {"cpu_tiered_entry", mod_cpu_tiered_entry, METH_VARARGS,
     "cpu_tiered_entry(program, key, signature, name, cache, tier0_only) -> Entry or None"},
    {"cuda_entry", mod_cuda_entry, METH_VARARGS,
     "cuda_entry(program, image, key, signature, device, debug) -> Entry"},
    {"parse_signature", mod_parse_signature, METH_O, "parse_signature(text) -> (ret, args)"},
    {"argtype_str", mod_argtype_str, METH_O, "argtype_str(key) -> str"},
    {"cpu_compiler", mod_cpu_compiler, METH_NOARGS, "the C compiler command of the CPU target"},
    {"obs_register", mod_obs_register, METH_VARARGS,
     "obs_register(entry, kernel, spec, loc): names the entry for kiln.metrics()"},
    {NULL, NULL, 0, NULL}};

int ext_core_init(PyObject *module, ModState *st) {
    st->ProgramType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &program_spec, NULL);
    if (!st->ProgramType || PyModule_AddType(module, st->ProgramType) < 0) return -1;
    return PyModule_AddFunctions(module, core_functions);
}
