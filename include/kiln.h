/* kiln.h: the public C API of kiln.
 *
 * kiln turns the source text of a Python kernel function into target code
 * (C with OpenMP for the CPU, CUDA C for NVIDIA GPUs), compiles it and loads
 * it.  The API has three steps, so that a cache can sit between them:
 *
 *   kiln_translate()  source + argument types -> kiln_program (generated code)
 *   kiln_cpu_build()  generated code -> binary blob (a shared object)
 *   kiln_cpu_load()   blob -> kiln_cpu_module, whose entry is launched
 *
 * Everything hangs off a kiln_ctx; there is no global state.  Diagnostics go
 * to the context's callback, never to stderr.  Functions that can fail return
 * NULL or -1 and report why through the callback.
 *
 * The header is C99 and C++ compatible; it exposes no internals.
 */
#ifndef KILN_H
#define KILN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version comes from the build (meson.build reads the VERSION file, its one place) */
#ifndef KILN_VERSION
#error "KILN_VERSION is defined by the build: meson.build passes the VERSION file's text"
#endif
#define KILN_MAX_NDIM 8
#define KILN_MAX_PARAMS 256

typedef struct kiln_ctx kiln_ctx;

/* ---- types ---------------------------------------------------------------- */

typedef enum kiln_dtype {
    KILN_BOOL,
    KILN_INT8,
    KILN_INT16,
    KILN_INT32,
    KILN_INT64,
    KILN_UINT8,
    KILN_UINT16,
    KILN_UINT32,
    KILN_UINT64,
    KILN_FLOAT16,
    KILN_FLOAT32,
    KILN_FLOAT64,
    KILN_COMPLEX64,  /* two float32: real, imaginary (NumPy's layout) */
    KILN_COMPLEX128, /* two float64 */
    KILN_BFLOAT16,   /* bfloat16: float32's upper 16 bits (8-bit exponent, 7-bit fraction) */
    KILN_NDTYPES
} kiln_dtype;

/* Array layouts; the values are the characters used in type keys and names. */
typedef enum kiln_layout {
    KILN_LAYOUT_C = 'C', /* C-contiguous: the last index varies fastest */
    KILN_LAYOUT_F = 'F', /* Fortran-contiguous */
    KILN_LAYOUT_A = 'A', /* any strides, negative and zero included */
    /* not an array: a scalar argtype with this layout is a raw pointer to `dtype`
     * (Numba's CPointer(dtype), signature text "uint8*"): passed as an address, one
     * 8-byte slot, indexed x[i] with no extent and no bounds (docs/language.md) */
    KILN_LAYOUT_PTR = 'P'
} kiln_layout;

/* The type of one kernel argument.  Four bytes, so that a call's type key is
 * the concatenation of its arguments' argtypes. */
typedef struct kiln_argtype {
    uint8_t is_array; /* 0: scalar of `dtype` (or a pointer: layout KILN_LAYOUT_PTR); 1: array */
    uint8_t dtype;    /* kiln_dtype */
    uint8_t ndim;     /* arrays: 0..KILN_MAX_NDIM (0: a 0-d device array, layout C: its data);
                       * an integer scalar: its enum class's tag, 1..KILN_MAX_ENUM_TAGS (an
                       * IntEnum member, whose class `is` compares), else 0 */
    uint8_t layout;   /* arrays: kiln_layout */
} kiln_argtype;

/* Records (NumPy structured dtypes).  An argtype whose dtype is KILN_RECORD0 + k names
 * kiln_options.records[k]: an array of such records (is_array 1), or one record passed by
 * reference (is_array 1 and ndim 0: packed as one slot, its address; a GPU launch stages
 * it like a host array, so its writes come back, as Numba passes a record).  The layout is NumPy's:
 * offsets and itemsize as the dtype says, never recomputed. */
/* IntEnum classes one process tells apart in kernels (kiln_argtype.ndim of a scalar) */
#define KILN_MAX_ENUM_TAGS 255

#define KILN_RECORD0 32
#define KILN_MAX_RECORDS 224 /* record layouts one process names (type key: one byte) */
#define KILN_MAX_FIELDS 64   /* fields of one record */

typedef struct kiln_field {
    const char *name;
    uint8_t dtype;   /* kiln_dtype of the field, or of each element of a subarray field */
    uint8_t ndim;    /* 0: a scalar; 1..KILN_MAX_NDIM: a C-contiguous subarray */
    uint8_t chars;   /* 'S' or 'U': a NumPy fixed-width string, a 1-d subarray of its code
                      * units (uint8, uint32) that kernels store string constants into */
    int64_t shape[KILN_MAX_NDIM];
    int64_t offset;  /* bytes from the record's start */
} kiln_field;

typedef struct kiln_record {
    int64_t itemsize;
    int nfields;
    const kiln_field *fields;
} kiln_record;

const char *kiln_dtype_name(kiln_dtype t);  /* "float32" */
int kiln_dtype_size(kiln_dtype t);          /* bytes per element */
/* float16 (IEEE binary16) bits of x, rounded to nearest even as np.float16(x); and back. */
uint16_t kiln_f16_from_f64(double x);
double kiln_f16_to_f64(uint16_t h);
/* bfloat16 bits of x, rounded to nearest even once (as ml_dtypes.bfloat16(x)); and back. */
uint16_t kiln_bf16_from_f64(double x);
double kiln_bf16_to_f64(uint16_t h);
/* Writes the type as signature text ("float32[:, ::1]") into buf. */
void kiln_argtype_format(const kiln_argtype *t, char *buf, size_t size);

/* ---- diagnostics ---------------------------------------------------------- */

typedef enum kiln_severity { KILN_ERROR, KILN_WARNING, KILN_NOTE } kiln_severity;

typedef struct kiln_diag {
    kiln_severity severity;
    const char *filename;    /* the user's .py file, or "<signature>" */
    int line, col;           /* 1-based; col counts characters */
    int span;                /* characters to underline, >= 1 */
    const char *message;     /* one line, no trailing period */
    const char *hint;        /* what to write instead, or NULL */
    const char *source_line; /* the line's text without its newline, or NULL */
    const char *formatted;   /* all of the above as the user sees it */
} kiln_diag;

typedef void (*kiln_diag_fn)(void *userdata, const kiln_diag *d);

/* ---- context -------------------------------------------------------------- */

kiln_ctx *kiln_ctx_new(void);
void kiln_ctx_free(kiln_ctx *ctx);
/* Diagnostics of every later call go to fn(userdata, d).  The strings in d are
 * valid only during the call. */
void kiln_ctx_set_diag(kiln_ctx *ctx, kiln_diag_fn fn, void *userdata);

/* Every blocking wait of a call on ctx (the C compiler, a cache claim held by
 * another process, the remote tier) polls fn(userdata) at least every
 * KILN_POLL_MS milliseconds; a nonzero return abandons the wait, the call fails
 * and reports "interrupted" through the diagnostics, leaving nothing
 * half-written.  The Python extension checks for Ctrl-C there.  NULL: never. */
enum { KILN_POLL_MS = 50 };
typedef int (*kiln_interrupt_fn)(void *userdata);
void kiln_ctx_set_interrupt(kiln_ctx *ctx, kiln_interrupt_fn fn, void *userdata);
/* 1 when the context's interrupt function asks to stop (0 without one). */
int kiln_ctx_interrupted(kiln_ctx *ctx);

/* Identifiers with characters beyond ASCII mean what Python makes of them: the
 * NFKC normal form (PEP 3131), so `ﬁ` and `fi` are one name.  The core has no
 * Unicode tables; the context's normalizer does it (the Python extension's
 * calls unicodedata.normalize, with the GIL held as during translation).  It
 * gets the identifier's UTF-8 text (len bytes, no terminator) and returns 0
 * with *out its normal form, NUL-terminated, from malloc (the core frees it);
 * 1 if the text is not a valid Python identifier; -1 if it failed (no memory).
 * Without one, a non-ASCII identifier is a compile error (the CLI). */
typedef int (*kiln_normalize_fn)(void *userdata, const char *name, size_t len, char **out);
void kiln_ctx_set_normalize(kiln_ctx *ctx, kiln_normalize_fn fn, void *userdata);

/* ---- globals: how a kernel sees names it does not define ------------------ */

typedef enum kiln_value_kind {
    KILN_VAL_MISSING,   /* no such name */
    KILN_VAL_INT,       /* Python int: a weak int64 constant (v.i) */
    KILN_VAL_FLOAT,     /* Python float: a weak float64 constant (v.f) */
    KILN_VAL_BOOL,      /* Python bool (v.i is 0 or 1) */
    KILN_VAL_SCALAR,    /* typed scalar (NumPy scalar): dtype + v */
    KILN_VAL_TUPLE,     /* tuple of values (tuple, ntuple) */
    KILN_VAL_NAMESPACE, /* a module or intrinsic kiln knows by name ("math", "kiln.atomic.add") */
    KILN_VAL_MODULE,    /* another module: attributes are resolved through the resolver
                         * (name "enum": an enum class, also subscripted by member name;
                         * "namedtuple:NAME:f1,f2": a namedtuple class, called to make one) */
    KILN_VAL_DTYPE,     /* a scalar type object (np.float32, kiln.int64): dtype */
    KILN_VAL_FUNCTION,  /* a kiln function: the fields under "function" */
    KILN_VAL_ARRAY,     /* a constant array (frozen NumPy array): dtype, ndim, shape, data */
    KILN_VAL_OTHER,     /* anything else; name is its Python type, for the error */
    KILN_VAL_COMPLEX,   /* Python complex: a weak complex128 constant (v.f, im) */
    KILN_VAL_EXTERN,    /* an external CUDA device function (kiln.declare_device): name is
                         * its C symbol, signature its signature text, abi, links */
    KILN_VAL_STR        /* Python str: a string constant, name its UTF-8 text of v.i bytes */
} kiln_value_kind;

/* kiln_value.abi of KILN_VAL_EXTERN: how the external function is called. */
typedef enum kiln_abi {
    KILN_ABI_NUMBA, /* Numba's: int name(ret *out, args...), a status returned, the result
                     * through out (a void function's out is an unused int) */
    KILN_ABI_C      /* ret name(args...) */
} kiln_abi;

typedef struct kiln_value {
    kiln_value_kind kind;
    kiln_dtype dtype;
    union {
        int64_t i;
        uint64_t u;
        double f;
    } v;
    const struct kiln_value *tuple; /* TUPLE: ntuple elements */
    int ntuple;
    const char *name; /* NAMESPACE: canonical dotted name; OTHER: type name, or a phrase
                       * starting "a " or "an " that says what the value is; STR: text */
    /* FUNCTION */
    void *scope;          /* resolver scope for the function's own globals */
    const char *text;     /* source text starting at the function's first line */
    size_t text_len;
    const char *filename;
    int first_line;
    int is_device;        /* 1 for @jit(device=True) */
    const char *signature; /* explicit signature text of a device function, or NULL */
    /* OTHER: an exception class's key, for `raise` (kiln._compile's registry), or NULL */
    const char *exception;
    /* ARRAY */
    int ndim;
    const int64_t *shape;
    const void *data;     /* C-contiguous elements, frozen; NULL for an array taken by
                           * address (a global device array): */
    uint64_t address;     /* its first element's address... */
    int device;           /* ...on this GPU (-1: host memory, KILN_TARGET=cpu) */
    /* COMPLEX, and SCALAR of a complex dtype: the imaginary part (v.f is the real one) */
    double im;
    /* EXTERN: a kiln_abi, and the CUDA C sources that define it (and what it calls): each
     * pasted once into the CUDA translation unit of a kernel that calls it */
    int abi;
    const char *const *links;
    const size_t *link_lens;
    int nlinks;
    int cooperative; /* EXTERN: use_cooperative: a kernel calling it launches cooperatively */
    /* DTYPE and ARRAY whose dtype is KILN_RECORD0 + k: the record's layout (a global
     * structured dtype may be registered while the kernel compiles, after
     * kiln_options.records was taken) */
    const struct kiln_record *record;
} kiln_value;

/* Resolves a dotted global name ("N", "cfg.N", "np") seen in the function
 * whose resolver scope is `scope`.  Fills *out and returns 0, or returns -1 if
 * resolution itself failed (an exception in the host language).  Pointers in
 * *out stay valid until the next call or the end of the translation. */
typedef int (*kiln_resolve_fn)(void *userdata, void *scope, const char *dotted,
                               kiln_value *out);

/* ---- translation ---------------------------------------------------------- */

typedef enum kiln_target { KILN_TARGET_CPU, KILN_TARGET_CUDA } kiln_target;

typedef struct kiln_options {
    kiln_target target;
    int fastmath;      /* approximate transcendentals and division, flush denormals */
    int debug;         /* bounds checks, assert, checked integer division */
    int lineinfo;      /* source line info for profilers (CUDA) */
    int max_registers; /* CUDA register limit, 0 for none */
    int cuda_arch;     /* compute capability * 10, e.g. 90 for sm_90 */
    /* CUDA __launch_bounds__ of the entry: max threads per block, min blocks per
     * multiprocessor, max blocks per cluster; 0 where not given */
    int launch_bounds[3];
    /* CUDA: translate the function as a device function and export it as the C symbol
     * `extern "C" __device__ export_name`, with no kernel entry (kiln.compile_ptx with
     * device=True); NULL for a kernel */
    const char *export_name;
    /* with export_name: the dtype + 1 the exported function returns, converted from the
     * type its body returns (an explicit signature's return type); 0 for that type */
    int export_ret;
    /* What NVRTC makes (kiln_nvrtc_output): a whole program, or relocatable code */
    int nvrtc_output;
    /* The record layouts argtypes name (KILN_RECORD0 + k); nrecords of them */
    const kiln_record *records;
    int nrecords;
    /* CUDA: CUDA C sources pasted into the program ahead of kiln's code (@jit(link=...)),
     * with those of the external device functions it calls, each text once */
    const char *const *links;
    const size_t *link_lens;
    int nlinks;
    /* CPU: also write tier 0's vector entry (kiln_program_tier0_source); the caller
     * asks for it only when tier 0 may run the kernel */
    int tier0_vector;
} kiln_options;

/* kiln_options.nvrtc_output.  Whole-program compilation drops device functions no kernel
 * calls, so an exported device function needs relocatable code (-rdc); LTO-IR is the
 * relocatable code as NVRTC's -dlto writes it, for nvJitLink. */
typedef enum kiln_nvrtc_output {
    KILN_NVRTC_WHOLE,       /* a cubin (or PTX) of kernels */
    KILN_NVRTC_RELOCATABLE, /* PTX with -rdc=true */
    KILN_NVRTC_LTOIR        /* LTO-IR with -rdc=true -dlto */
} kiln_nvrtc_output;

typedef struct kiln_source {
    const char *text;     /* from the first line of the function (its decorators) on */
    size_t len;
    const char *filename; /* for diagnostics and #line markers */
    int first_line;       /* line number of text[0] in filename */
    void *scope;          /* passed back to the resolver */
} kiln_source;

typedef struct kiln_program kiln_program;

/* What a kernel does with a parameter, for the launch path. */
enum {
    KILN_PARAM_WRITTEN = 1, /* an array parameter the kernel (or a callee) may write */
};

/* Kinds of kernel a translation produces. */
typedef enum kiln_kind {
    KILN_KERNEL,  /* a SIMT kernel launched over a grid */
    KILN_DEVICE   /* a device function: translated only to check it */
} kiln_kind;

/* Translates one function for the given argument types.  Returns NULL after
 * reporting errors.  The caller frees the program with kiln_program_free. */
kiln_program *kiln_translate(kiln_ctx *ctx, const kiln_source *src, const kiln_argtype *args,
                             int nargs, const kiln_options *opts, kiln_resolve_fn resolve,
                             void *resolve_userdata);
void kiln_program_free(kiln_program *p);

const char *kiln_program_source(const kiln_program *p, size_t *len); /* generated code */
const char *kiln_program_entry(const kiln_program *p);               /* entry symbol */
/* CPU: the source with tier 0's vector entry after it (entry "kiln_ventry": blocks of
 * threads through kiln's vector operations, src/emit/emit_tier0.c), for
 * kiln_cpu_quick_load; NULL (*len 0) for a kernel it does not cover. */
const char *kiln_program_tier0_source(const kiln_program *p, size_t *len);
const char *kiln_program_name(const kiln_program *p);                /* Python name */
const char *kiln_program_types(const kiln_program *p);   /* inspect_types text */
int kiln_program_nparams(const kiln_program *p);
const char *kiln_program_param_name(const kiln_program *p, int i);
int kiln_program_param_flags(const kiln_program *p, int i); /* KILN_PARAM_* bits */
/* The name of source file i, for kernel error locations (see kiln_kernel_error). */
const char *kiln_program_file(const kiln_program *p, int i);
/* The milliseconds its translation spent in the front end (the kernel's own
 * parse), sema (with callees' parses) and the emitter, for kiln.metrics(). */
void kiln_program_stage_ms(const kiln_program *p, double ms[3]);
/* 1 if the kernel uses a GPU-only feature; *what names it. */
/* 1 when the kernel uses kiln.cg (Numba's cuda.cg.this_grid()): it is launched
 * cooperatively on the GPU (kiln_cuda_module_set_cooperative) and runs its whole grid at
 * once on the CPU, within KILN_CG_MAX_THREADS. */
int kiln_program_cooperative(const kiln_program *p);
int kiln_program_gpu_only(const kiln_program *p, const char **what);

/* Types the function in src as a device function for the given argument
 * types and stores its return type in *ret: a scalar, or dtype KILN_NDTYPES
 * for None.  A function returning anything else is reported.  Returns 0 or -1
 * after reporting errors. */
int kiln_infer_return(kiln_ctx *ctx, const kiln_source *src, const kiln_argtype *args,
                      int nargs, const kiln_options *opts, kiln_resolve_fn resolve,
                      void *resolve_userdata, kiln_argtype *ret);

/* ---- kiln.fuse: array expressions as one kernel ---------------------------- */

/* One argument of a fused function's call. */
typedef enum kiln_fuse_argkind {
    KILN_FUSE_ARRAY,   /* an array: dtype, ndim (0 for 0-d), ones */
    KILN_FUSE_SCALAR,  /* a typed scalar (a NumPy scalar): dtype */
    KILN_FUSE_PYINT,   /* a Python int: weak (NEP 50) */
    KILN_FUSE_PYFLOAT, /* a Python float: weak */
    KILN_FUSE_PYBOOL,  /* a Python bool: Python's rules among Python scalars */
    KILN_FUSE_ROW      /* a 1-D array (ndim 1, ones 0) read at the column of a flat
                        * position: the position modulo the kernel's k_cols argument.
                        * The row operand of an elementwise call whose other arrays are
                        * C-contiguous and passed flat (kiln.fuse's row path, docs/modes.md);
                        * the call's output is then 1-D */
} kiln_fuse_argkind;

typedef struct kiln_fuse_arg {
    kiln_fuse_argkind kind;
    kiln_dtype dtype;  /* ARRAY, ROW, SCALAR (a Python bool is a bool SCALAR) */
    int ndim;          /* ARRAY: 0..KILN_MAX_NDIM; ROW: 1 */
    uint32_t ones;     /* ARRAY: bit d set when dimension d has extent 1; ROW: 0 */
} kiln_fuse_arg;

typedef enum kiln_fuse_kind {
    KILN_FUSE_MAP,  /* elementwise: one output element per position */
    KILN_FUSE_ROWS, /* reductions over the last axis: one row per position */
    KILN_FUSE_ALL   /* whole-array reductions: partials, then one combining position */
} kiln_fuse_kind;

/* What kiln_fuse made: the kernel (kiln's kernel language, to be compiled like
 * any kernel) and how to call it. */
typedef struct kiln_fuse_plan {
    kiln_fuse_kind kind;
    int keepdims;
    int ndim_out;      /* dimensions of each output */
    int tuple;         /* the function returns a tuple */
    int nout;
    kiln_dtype out[16];
    int nred;
    kiln_dtype red[16];     /* accumulator dtypes (ALL: partials' dtype) */
    int red_op[16];         /* 0 sum, 1 prod, 2 max, 3 min, 4 mean */
    uint64_t red_args[16];  /* bit i: array argument i is reduced by reduction r */
    int red_group[16];      /* its loop: reductions of the same arrays share one */
    uint64_t outer;         /* bit i: array argument i is read outside reductions */
    uint64_t out_args[16];  /* per output: the arrays it reads outside reductions */
    uint32_t out_groups[16]; /* per output: bit g: it reads a reduction of loop g */
    uint32_t out_scalars;    /* bit k: output k, when of shape (), is a NumPy scalar (a
                              * ufunc's or reduction's result), else a 0-d array */
    char *name;             /* the kernel's name */
    char *source;           /* the kernel's text (malloc'd) */
    /* the kernel's parameters in order, space separated: oK output K, pR partials
     * of reduction R, aI argument I, m the reduced extent (ROWS), sD extent D of
     * the reduced shape, chunk, total, np (partials), phase (ALL), nz (positions
     * of the leading dimensions past three) */
    char *params;
} kiln_fuse_plan;

/* Lowers the fused function in src for one call's argument types into one
 * kernel for target.  Returns 0, or -1 after reporting errors at the user's
 * source (what cannot be fused).  Free the plan with kiln_fuse_plan_free. */
int kiln_fuse(kiln_ctx *ctx, const kiln_source *src, const kiln_fuse_arg *args, int nargs,
              kiln_target target, kiln_resolve_fn resolve, void *resolve_userdata,
              kiln_fuse_plan *plan);
void kiln_fuse_plan_free(kiln_fuse_plan *plan);

/* ---- signatures ----------------------------------------------------------- */

/* Parses "void(float32[::1], int64)" (Numba syntax).  *ret gets the return
 * type (is_array 0 and dtype KILN_NDTYPES for void, or a scalar); args get up
 * to max_args argument types.  Returns the argument count, or -1 after
 * reporting an error. */
int kiln_parse_signature(kiln_ctx *ctx, const char *text, kiln_argtype *ret,
                         kiln_argtype *args, int max_args);

/* ---- CPU target ----------------------------------------------------------- */

/* Compiles generated C to a shared object with $KILN_CC (default "cc").
 * Blocks for the compiler's run; call it without holding locks that other
 * threads need.  On success *blob (malloc'd, the caller frees) holds the
 * shared object's bytes. */
int kiln_cpu_build(kiln_ctx *ctx, const char *src, size_t len, void **blob, size_t *blob_len);
/* The compiler command line kiln_cpu_build uses, for `kiln info`. */
const char *kiln_cpu_compiler(kiln_ctx *ctx);
/* Everything besides the source that decides what kiln_cpu_build makes: the
 * compiler's identity (resolved path, size, time, inode of each program of
 * the command), the processor -march=native sees, the fixed flags and kiln's
 * version.  Part of the cache key; computed once per context. */
const char *kiln_cpu_target(kiln_ctx *ctx);
/* "cpu:x86_64": what bundles and `kiln cache ls` call this target. */
const char *kiln_cpu_target_name(void);

typedef struct kiln_cpu_module kiln_cpu_module;

/* Whether blob is a whole shared object of this machine's class (its segments inside
 * its bytes): a cached or imported one that is not is a miss, never dlopen'ed. */
int kiln_cpu_blob_ok(const void *blob, size_t len);
/* Loads a shared object from memory without leaving a file behind (refusing one
 * kiln_cpu_blob_ok refuses). */
kiln_cpu_module *kiln_cpu_load(kiln_ctx *ctx, const void *blob, size_t len, const char *entry);
void kiln_cpu_unload(kiln_cpu_module *m);

/* Tier 0 (src/target/tcc.c): compiles the same generated C in this process
 * with libtcc, in about a millisecond for a typical kernel, into a module
 * launched like kiln_cpu_load's (kiln_cpu_unload frees it).  The code is
 * unvectorised, on the calling thread or, for a launch whose pool_nt asks for
 * more, on up to that many threads kiln starts for the launch (tcc has no
 * OpenMP): it is for the launches before the optimised build is ready.  NULL, after reporting why, when kiln was built without
 * libtcc, tcc's runtime directory (libtcc1.a; $KILN_TCC_DIR overrides the
 * built-in one) is missing, or tcc refuses the source (any tcc warning
 * counts); the caller then builds with kiln_cpu_build.  libtcc keeps its
 * state in globals: calls must not overlap, in any thread, and no fork may
 * happen during one; the caller holds one lock for the process around them. */
kiln_cpu_module *kiln_cpu_quick_load(kiln_ctx *ctx, const char *src, size_t len,
                                     const char *entry);
/* 1 when m is tier 0's vector entry (src/emit/emit_tier0.c), else 0. */
int kiln_cpu_quick_vector(const kiln_cpu_module *m);
/* 1 when kiln was built with libtcc (tier 0 may work), else 0. */
int kiln_cpu_quick_available(void);
/* How many threads a launch of m may run on when m is tier 0's (its entry can
 * be shared: all but a cooperative kernel's): the processors this thread may
 * use, at most $OMP_NUM_THREADS (its first number) and KILN_TIER0_MAX_THREADS;
 * 1 for any other module. */
int kiln_cpu_quick_threads(const kiln_cpu_module *m);
enum { KILN_TIER0_MAX_THREADS = 64 };
/* The shares a pooled tier-0 launch is cut into, per thread: the threads claim them
 * in turn, so one that starts late or runs slow holds the launch up by one share. */
enum { KILN_TIER0_SHARES_PER_THREAD = 8 };
/* tcc's runtime directory tier 0 uses ($KILN_TCC_DIR or the built-in one), or NULL
 * when kiln was built without libtcc. */
const char *kiln_cpu_quick_dir(void);

/* A runtime error raised inside a kernel (bounds, assert, division).  The
 * first error of a launch wins; the others are dropped. */
typedef enum kiln_errcode {
    KILN_ERR_NONE,
    KILN_ERR_INDEX,    /* a = index, b = axis (-1: a tuple's item), c = size */
    KILN_ERR_ASSERT,   /* assertion failed */
    KILN_ERR_ZERODIV,  /* integer division or modulo by zero */
    KILN_ERR_RANGE,    /* range() step is zero */
    KILN_ERR_POW,      /* integer to a negative power */
    KILN_ERR_STOPPED,  /* the launch's stop word was set (Ctrl-C): the kernel left early */
    KILN_ERR_NOMEM,    /* the CPU could not map a block's fibers and shared memory: a = bytes */
    KILN_ERR_RESHAPE,  /* a.reshape(shape): a = the array's size, b = the product of the
                        * shape's known extents, c = its -1 entries (NumPy's ValueError) */
    KILN_ERR_COOP,     /* a cooperative grid past KILN_CG_MAX_THREADS on the CPU: a = blocks,
                        * b = the most blocks, c = threads per block */
    KILN_ERR_BROADCAST, /* a ufunc's operand does not broadcast to its output: a = the operand's
                         * extent, b = the output's axis, c = the output's extent there */
    KILN_ERR_EMPTY_REDUCE, /* np.min/np.max (a = 0/1) of an empty array: no identity */
    KILN_ERR_VIEW,         /* a.view(dtype) of another itemsize: a = 0 the last axis is not
                            * contiguous, 1 its bytes do not divide, 2 an axis's stride does not */
    KILN_ERR_RAISE,    /* `raise E(...)` in a kernel: the line's file is the raise site (emit:
                        * "\x01raise" fields), b = the thread (x | y << 21 | z << 42), c = the
                        * block (x | y << 31 | z << 47) */
    KILN_ERR_NONE_VALUE, /* debug=True: a result that may be None (Numba's Optional) read as a
                          * number while None */
    KILN_ERR_RECURSION   /* CPU: a recursive device function's stack went past
                          * KILN_REC_STACK (rt_cpu.h) */
} kiln_errcode;

typedef struct kiln_kernel_error {
    int32_t code; /* kiln_errcode; written last, with an atomic compare-and-swap */
    int32_t line; /* (file index << 20) | line; the index is kiln_program_file's */
    int64_t a, b, c;
    /* CPU: set by kiln_cpu_launch_kernel, read by the generated code (the one pointer
     * every function of a kernel has): the lowest address a recursion may reach on the
     * calling thread's stack (kiln_cpu_stack_floor).  Never set or read on the GPU. */
    char *(*stack_floor)(void);
} kiln_kernel_error;

/* The largest launch: CUDA's own limits, which the dispatcher checks on every
 * configuration (python/kiln/_ext/dispatcher.c) for both targets.  Generated
 * code relies on them: sema bounds kiln.grid(), the thread and block indices
 * and dimensions by them when it proves index arithmetic cannot wrap
 * (src/sema/bounds.c), so a caller of kiln_cpu_launch_kernel or
 * kiln_cuda_launch must stay within them too. */
enum {
    KILN_MAX_BLOCK_THREADS = 1024, /* threads per block, and blockdim x and y */
    KILN_MAX_BLOCK_Z = 64,         /* blockdim z */
    KILN_MAX_GRID_X = 2147483647,  /* griddim x: 2**31-1 */
    KILN_MAX_GRID_YZ = 65535       /* griddim y and z */
};

/* The most threads of a cooperative kernel's grid (kiln.cg) on the CPU target, which runs
 * them all at once, each a fiber with a stack of its own (src/emit/rt_blocks.h): a few
 * pages of memory each, and two memory mappings (stack and guard page) of the process's
 * vm.max_map_count (65530 by default).  max_cooperative_grid_blocks(blockdim) on the CPU
 * is KILN_CG_MAX_THREADS / (threads per block). */
enum { KILN_CG_MAX_THREADS = 16384 };

/* The launch record the generated entry reads; see src/emit/rt_cpu.h. */
typedef struct kiln_cpu_launch {
    int64_t grid[3];
    int64_t block[3];
    int64_t par_threshold; /* below this many threads in all, run on one thread;
                            * KILN_PAR_NEVER: never enter an OpenMP parallel region */
    kiln_kernel_error *err;
    /* The stop word, or NULL for none.  The kernel polls it (a relaxed atomic
     * load) at the top of every `while` loop iteration and before each block
     * (each row, or each KILN_CPU_POLL_SPAN threads of a grid-only kernel, or
     * KILN_CPU_POLL_SPAN_LOOPS when its threads run loops);
     * when it reads nonzero it records KILN_ERR_STOPPED and returns, so the
     * launch ends soon after another thread or a signal handler sets it.
     * `for` loops do not poll: their trip count is known when they start. */
    const int *stop;
    /* Dynamic shared memory per block in bytes (the launch's 4th value), for
     * kernels with shared memory or barriers (src/emit/rt_blocks.h). */
    int64_t dyn_shared;
    /* Tier 0 only (src/target/tcc.c): given to kiln_cpu_launch_kernel, pool_nt is
     * how many threads of kiln's own may run the launch at once (0 or 1: the calling
     * thread alone); each call of the entry gets its own copy with pool_nt the
     * number of shares and pool_me its share, from 0. */
    int64_t pool_me, pool_nt;
} kiln_cpu_launch;
/* par_threshold for a launch that must stay on the calling thread (after fork,
 * GCC's OpenMP runtime cannot start its threads again). */
#define KILN_PAR_NEVER INT64_MAX
/* The generated entry may count one thread as up to this many against
 * par_threshold (a kernel with a loop: src/emit/plan.h, PLAN_LOOP_WEIGHT), so a
 * launch of par_threshold / KILN_PAR_WEIGHT_MAX threads or more may use OpenMP. */
#define KILN_PAR_WEIGHT_MAX 256
/* Threads of a 1-D grid-only kernel run between two polls of the stop word:
 * the vectorised thread loop runs in pieces this long. */
enum { KILN_CPU_POLL_SPAN = 1 << 16, KILN_CPU_POLL_SPAN_LOOPS = 256 };

/* Runs the kernel over the grid.  params: the packed 8-byte slots of the
 * arguments (see docs/abi.md).  Blocks until all blocks have run. */
/* The lowest stack address a recursive device function may reach on the calling
 * thread: KILN_REC_MARGIN bytes above the low end of the thread's stack (its size from
 * pthread_getattr_np: a Python thread made with threading.stack_size(), the main
 * thread's RLIMIT_STACK), or NULL when the stack cannot be known.  Cached per thread:
 * the stack of a thread does not move.  The generated code bounds a recursion by the
 * higher of this and its first frame less KILN_REC_STACK (rt_cpu.h). */
char *kiln_cpu_stack_floor(void);
void kiln_cpu_launch_kernel(kiln_cpu_module *m, const kiln_cpu_launch *launch,
                            const int64_t *params);

/* ---- CUDA target -----------------------------------------------------------
 * The driver (libcuda.so.1) and NVRTC are loaded with dlopen on first use, so
 * kiln builds, imports and runs on machines without them.  NVRTC alone is
 * enough to compile: it cross-compiles for any sm_XY without a GPU. */

typedef struct kiln_nvrtc kiln_nvrtc;
typedef struct kiln_cuda kiln_cuda;
typedef struct kiln_cuda_module kiln_cuda_module;

/* Loads NVRTC ($KILN_NVRTC, else the usual library names).  NULL after
 * reporting why. */
kiln_nvrtc *kiln_nvrtc_open(kiln_ctx *ctx);
void kiln_nvrtc_close(kiln_nvrtc *n);
/* NVRTC's version as major * 1000 + minor * 10. */
int kiln_nvrtc_version(kiln_nvrtc *n);
/* Compiles generated CUDA C for compute capability `arch` (90 for sm_90): a
 * cubin when NVRTC knows the architecture, else PTX for the newest one it
 * knows (*is_ptx = 1).  Set *is_ptx to 1 before the call to ask for PTX.
 * *blob is malloc'd; the caller frees it.  Thread-safe;
 * call it without holding locks that other threads need. */
int kiln_nvrtc_compile(kiln_ctx *ctx, kiln_nvrtc *n, const char *src, size_t len,
                       const kiln_options *opts, int arch, void **blob, size_t *blob_len,
                       int *is_ptx);

/* The cache key's target text for a compile of the same arguments: the
 * architecture, cubin or PTX, NVRTC's version, its options, kiln's version.
 * The driver's version is not in it: no stored artifact depends on it (PTX is
 * compiled by the driver at load, and a cubin it cannot load is an error
 * then).  0, or -1 after reporting that NVRTC cannot compile for arch. */
int kiln_nvrtc_target(kiln_ctx *ctx, kiln_nvrtc *n, const kiln_options *opts, int arch,
                      int want_ptx, char *buf, size_t size);

/* The directory of the NVRTC library loaded (where the toolkit keeps nvJitLink too). */
int kiln_nvrtc_dir(kiln_nvrtc *n, char *buf, size_t size);

/* The facts kiln_nvrtc_target needs (version, architectures), with the
 * identity of the library file they came from, as text to keep in the cache
 * under kiln_nvrtc_facts_name's name.  kiln_nvrtc_target_from computes the
 * target text from them without loading NVRTC, or returns -1 when they are
 * malformed or (check_file) the library file changed: then load NVRTC.  Facts
 * that came with a bundle are used unchecked on a machine without NVRTC: the
 * keys are then those of the machine that built the bundle. */
int kiln_nvrtc_describe(kiln_nvrtc *n, char *buf, size_t size);
int kiln_nvrtc_target_from(const char *facts, int check_file, const kiln_options *opts, int arch,
                           int want_ptx, char *buf, size_t size);
/* The fact name under which a bundle's NVRTC facts are imported. */
#define KILN_NVRTC_IMPORTED_FACTS "nvrtc|imported"
/* The name facts are kept under: what decides which NVRTC dlopen finds
 * ($KILN_NVRTC, $LD_LIBRARY_PATH, /etc/ld.so.cache's size and time). */
void kiln_nvrtc_facts_name(char *buf, size_t size);

/* ---- the device linker: nvJitLink (dlopen), for compiled external device code ---- */

typedef struct kiln_nvjitlink kiln_nvjitlink;

/* What a linked input is; the numbers are nvJitLink's input types. */
typedef enum kiln_link_kind {
    KILN_LINK_CUBIN = 1,
    KILN_LINK_PTX = 2,
    KILN_LINK_LTOIR = 3,
    KILN_LINK_FATBIN = 4,
    KILN_LINK_OBJECT = 5,
    KILN_LINK_LIBRARY = 6
} kiln_link_kind;

typedef struct kiln_link_input {
    int kind;         /* kiln_link_kind */
    const void *data;
    size_t len;
    const char *name; /* for messages: the file's path or the object's name */
} kiln_link_input;

/* Loads nvJitLink ($KILN_NVJITLINK, else the usual library names, then beside
 * near_dir: NVRTC's directory, as pip's nvidia packages keep both).  NULL after
 * reporting why. */
kiln_nvjitlink *kiln_nvjitlink_open(kiln_ctx *ctx, const char *near_dir);
void kiln_nvjitlink_close(kiln_nvjitlink *j);
/* nvJitLink's version as major * 1000 + minor * 10 (12000 where it cannot say). */
int kiln_nvjitlink_version(kiln_nvjitlink *j);
/* "PTX", "cubin", ... for a kiln_link_kind. */
const char *kiln_link_kind_name(int kind);
/* Links the inputs (the kernel's own code first, made by NVRTC nvrtc_version) into a
 * cubin for sm_arch, with link-time optimisation when lto (every LTO-IR input then
 * inlines across files); opts gives fastmath, lineinfo and max_registers.  *cubin is
 * malloc'd; the caller frees it.  0, or -1 after reporting nvJitLink's log (or that
 * nvJitLink is of an older CUDA than NVRTC, whose LTO-IR it cannot read). */
int kiln_nvjitlink_link(kiln_ctx *ctx, kiln_nvjitlink *j, int nvrtc_version, int arch, int lto,
                        const kiln_options *opts, const kiln_link_input *in, int nin,
                        void **cubin, size_t *cubin_len);

/* Whether the driver has its linker (cuLinkCreate...), kiln_cuda_link's. */
int kiln_cuda_can_link(kiln_cuda *c);
/* Links the inputs (the kernel's own relocatable PTX first) into a cubin with the driver's
 * linker on device dev (made current on this thread), with o's max_registers and lineinfo:
 * what kiln uses where nvJitLink cannot be loaded.  No link-time optimisation and no LTO-IR.  *cubin is malloc'd.  0, or
 * -1 after reporting the driver's log. */
int kiln_cuda_link(kiln_ctx *ctx, kiln_cuda *c, int dev, const kiln_options *o,
                   const kiln_link_input *in, int n, void **cubin, size_t *cubin_len);

/* Loads the driver and initialises it.  NULL, with *why set to a static
 * explanation, when no CUDA GPU can be used. */
kiln_cuda *kiln_cuda_open(const char **why);
void kiln_cuda_close(kiln_cuda *c);
int kiln_cuda_device_count(kiln_cuda *c);
/* Compute capability * 10 of device dev, or -1. */
int kiln_cuda_arch(kiln_cuda *c, int dev);
/* Name and driver version for `kiln info`; the name is written into buf. */
int kiln_cuda_device_name(kiln_cuda *c, int dev, char *buf, int size);
int kiln_cuda_driver_version(kiln_cuda *c);
/* Makes device dev's primary context current on the calling thread.  The
 * functions below act on the current context.  Returns a CUresult. */
int kiln_cuda_use(kiln_cuda *c, int dev);
/* The driver's name and text for a CUresult. */
const char *kiln_cuda_error_name(kiln_cuda *c, int rc);
const char *kiln_cuda_error_text(kiln_cuda *c, int rc);

/* Grid positions each thread runs in a kernel's wide entry (see emit.c). */
#define KILN_CUDA_WIDE 4

/* Loads a cubin or PTX on device dev (whose context is current) and finds
 * `entry`, and `entry`_wide when the kernel has one. */
int kiln_cuda_load(kiln_cuda *c, int dev, const void *image, const char *entry,
                   kiln_cuda_module **out);
void kiln_cuda_unload(kiln_cuda *c, kiln_cuda_module *m);
/* cuFuncGetAttribute of the module's entry (attr: a CUfunction_attribute, e.g. 4 for
 * its registers per thread); the module's context must be current.  A CUresult. */
int kiln_cuda_func_attribute(kiln_cuda *c, const kiln_cuda_module *m, int attr, int *value);
/* cuFuncSetAttribute of the module's entry and of its wide entry when it has one (attr: a
 * CUfunction_attribute, e.g. 9 for the preferred shared memory carveout); the module's
 * context must be current.  A CUresult. */
int kiln_cuda_func_set_attribute(kiln_cuda *c, kiln_cuda_module *m, int attr, int value);
/* Whether a launch of this shape takes the module's wide entry: it has one,
 * the launch is 1-D, and it has enough threads to fill the device
 * KILN_CUDA_WIDE times over. */
int kiln_cuda_widens(const kiln_cuda_module *m, const int64_t grid[3], const int64_t block[3]);
/* Launches the module's entry; params[0] points at the device pointer of the
 * error record, params[1 + i] at parameter i's slots.  With wide_params it
 * launches the wide entry instead, on a grid KILN_CUDA_WIDE times narrower:
 * they are the error record, then each slot of each parameter, then the
 * launch's thread count as an int64.  The caller passes them only when
 * kiln_cuda_widens and no array that the kernel writes overlaps another array
 * of the launch.  Returns a CUresult. */
int kiln_cuda_launch(kiln_cuda *c, kiln_cuda_module *m, const int64_t grid[3],
                     const int64_t block[3], unsigned shmem, void *stream, void **params,
                     void **wide_params);

/* Marks the module's kernel cooperative (kiln_program_cooperative): kiln_cuda_launch
 * then launches it with cuLaunchCooperativeKernel, which keeps the whole grid resident
 * (its grid barrier needs that) and fails with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
 * (720) for a grid that cannot be; 801 (CUDA_ERROR_NOT_SUPPORTED) where the driver lacks
 * it.  A cooperative kernel never takes the wide entry (it has none). */
void kiln_cuda_module_set_cooperative(kiln_cuda_module *m);
int kiln_cuda_module_cooperative(const kiln_cuda_module *m);
/* The most blocks of block_threads threads (and dyn_smem bytes of dynamic shared memory)
 * that can be resident at once for the module's kernel on its device: the occupancy
 * API's blocks per multiprocessor times the multiprocessors (Numba's
 * max_cooperative_grid_blocks).  The device's context must be current.  A CUresult. */
int kiln_cuda_max_coop_blocks(kiln_cuda *c, const kiln_cuda_module *m, int block_threads,
                              size_t dyn_smem, int64_t *out);
#define KILN_CUDA_COOP_TOO_LARGE 720 /* CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE */

/* CUDA graphs, for kiln.compile's reduce-overhead mode: a chain of kernel
 * nodes, each after the one before, instantiated once.  A node's parameters
 * (its kernel's arguments) can be changed in the instantiated graph without
 * building it again.  kiln_cuda_graphs says whether the driver has the graph
 * functions (CUDA 11.4 and newer).  The others return a CUresult; add and set
 * take kiln_cuda_launch's arguments (the driver copies the parameters). */
typedef struct kiln_cuda_graph kiln_cuda_graph;
int kiln_cuda_graphs(kiln_cuda *c);
/* Whether graphs can hold cooperative kernels (cuGraphKernelNodeSetAttribute with
 * CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, CUDA 11.7 and newer): kiln_cuda_graph_add marks a
 * cooperative module's node so; without it, a step with one replays launch by launch. */
int kiln_cuda_graph_coop(kiln_cuda *c);
int kiln_cuda_graph_new(kiln_cuda *c, kiln_cuda_graph **g);
int kiln_cuda_graph_add(kiln_cuda *c, kiln_cuda_graph *g, kiln_cuda_module *m,
                        const int64_t grid[3], const int64_t block[3], unsigned shmem,
                        void **params, void **wide_params);
/* A graph has up to KILN_CUDA_GRAPH_EXECS executable copies, each instantiated from the
 * nodes as added (their first parameters) and then set on its own: a step replayed with
 * buffers that take turns keeps one copy per set, whose nodes need no update.
 * kiln_cuda_graph_instantiate makes copy kiln_cuda_graph_execs(g) (before the call);
 * none is added after KILN_CUDA_GRAPH_EXECS. */
enum { KILN_CUDA_GRAPH_EXECS = 4 };
int kiln_cuda_graph_instantiate(kiln_cuda *c, kiln_cuda_graph *g);
int kiln_cuda_graph_execs(const kiln_cuda_graph *g);
/* Node i (in the order added) of executable copy x. */
int kiln_cuda_graph_set(kiln_cuda *c, kiln_cuda_graph *g, int x, int i, kiln_cuda_module *m,
                        const int64_t grid[3], const int64_t block[3], unsigned shmem,
                        void **params, void **wide_params);
int kiln_cuda_graph_launch(kiln_cuda *c, kiln_cuda_graph *g, int x, void *stream);
void kiln_cuda_graph_free(kiln_cuda *c, kiln_cuda_graph *g);

/* Memory and streams; every function returns a CUresult. */
int kiln_cuda_alloc(kiln_cuda *c, uint64_t *ptr, size_t size, void *stream);
int kiln_cuda_free(kiln_cuda *c, uint64_t ptr, void *stream);
int kiln_cuda_copy_htod(kiln_cuda *c, uint64_t dst, const void *src, size_t n, void *stream);
int kiln_cuda_copy_dtoh(kiln_cuda *c, void *dst, uint64_t src, size_t n, void *stream);
int kiln_cuda_copy_dtod(kiln_cuda *c, uint64_t dst, uint64_t src, size_t n, void *stream);
int kiln_cuda_memset(kiln_cuda *c, uint64_t dst, unsigned char v, size_t n, void *stream);
int kiln_cuda_stream_new(kiln_cuda *c, void **stream);
int kiln_cuda_stream_free(kiln_cuda *c, void *stream);
int kiln_cuda_stream_sync(kiln_cuda *c, void *stream);
/* Events (timing=0 makes a cheaper event that cannot be timed); query returns
 * 0 when the work before it is done, 600 (CUDA_ERROR_NOT_READY) when not. */
int kiln_cuda_event_new(kiln_cuda *c, void **event, int timing);
int kiln_cuda_event_free(kiln_cuda *c, void *event);
int kiln_cuda_event_record(kiln_cuda *c, void *event, void *stream);
int kiln_cuda_event_sync(kiln_cuda *c, void *event);
int kiln_cuda_event_query(kiln_cuda *c, void *event);
int kiln_cuda_event_elapsed(kiln_cuda *c, float *ms, void *start, void *end);
int kiln_cuda_stream_wait_event(kiln_cuda *c, void *stream, void *event);
/* Page-locked host memory (cuMemHostAlloc); the context must be current.  kind:
 * KILN_HOST_PINNED, KILN_HOST_MAPPED (also mapped into the device's address space; with
 * unified addressing its device address is its host address) or KILN_HOST_MANAGED (unified
 * memory, cuMemAllocManaged: freed with kiln_cuda_host_free of the same kind; 801,
 * CUDA_ERROR_NOT_SUPPORTED, where the driver lacks it). */
enum { KILN_HOST_PINNED, KILN_HOST_MAPPED, KILN_HOST_MANAGED };
int kiln_cuda_host_alloc(kiln_cuda *c, void **ptr, size_t size, int kind);
int kiln_cuda_host_free(kiln_cuda *c, void *ptr, int kind);
/* Page-locks existing host memory (cuMemHostRegister; 712 when it already is) and back. */
int kiln_cuda_host_register(kiln_cuda *c, void *ptr, size_t size);
int kiln_cuda_host_unregister(kiln_cuda *c, void *ptr);
/* cuDeviceGetAttribute for device ordinal dev (attr: a CUdevice_attribute). */
int kiln_cuda_device_attribute(kiln_cuda *c, int dev, int attr, int *value);
int kiln_cuda_sync(kiln_cuda *c);
/* The device of a device pointer, or -1. */
int kiln_cuda_pointer_device(kiln_cuda *c, uint64_t ptr);

/* GPU memory shared between processes (cuda_ipc.c; Numba's IPC handles).  kiln
 * allocates from a pool of its own per device, created exportable (a POSIX file
 * descriptor shares it), so any of its arrays can be shared: the exporting process
 * describes the allocation that holds ptr (kiln_cuda_ipc_export), hands the pool's
 * descriptor over a Unix socket (util/fdserve.h), and the importing process imports
 * the pool once and the allocation from it.  Memory that another library allocated
 * with cuMemAlloc is shared through the driver's legacy IPC handle instead.  Memory
 * from a pool that is not exportable (the device's default pool, where kiln's own
 * could not be made) cannot be shared: 801 (CUDA_ERROR_NOT_SUPPORTED). */
enum { KILN_IPC_POOL = 1, KILN_IPC_LEGACY = 2 };
typedef struct kiln_ipc_desc {
    int kind;            /* KILN_IPC_POOL or KILN_IPC_LEGACY */
    int dev;             /* the device the memory is on */
    uint64_t base, size; /* the allocation holding ptr: its first byte and its bytes */
    uint64_t offset;     /* ptr - base */
    unsigned char data[64]; /* the pool's export data, or the legacy IPC handle */
} kiln_ipc_desc;
/* Describes the allocation holding ptr; for KILN_IPC_POOL, *pool_fd is the pool's
 * descriptor (exported once per device; kiln keeps it open).  A CUresult. */
int kiln_cuda_ipc_export(kiln_cuda *c, uint64_t ptr, kiln_ipc_desc *out, int *pool_fd);
/* Imports an exported pool from its descriptor (which the caller then closes). */
int kiln_cuda_ipc_import_pool(kiln_cuda *c, int fd, void **pool);
/* Maps the described allocation into this process (d->dev's context current): *ptr is
 * its first byte here.  pool: the imported pool, for KILN_IPC_POOL. */
int kiln_cuda_ipc_open(kiln_cuda *c, const kiln_ipc_desc *d, void *pool, uint64_t *ptr);
/* Unmaps what kiln_cuda_ipc_open mapped. */
int kiln_cuda_ipc_close(kiln_cuda *c, int kind, uint64_t ptr);
/* Free and total bytes of the current device (cuMemGetInfo). */
int kiln_cuda_mem_info(kiln_cuda *c, size_t *free_bytes, size_t *total_bytes);

/* ---- the artifact cache ------------------------------------------------------
 * Content-addressed: the key is XXH3-128 of the generated source and a text
 * describing the target (compiler identity, architecture, options that are not
 * in the source, kiln's version), so callees, frozen globals and kiln's own
 * runtime text are in it by construction.  Tiers: memory (per process,
 * bounded), one SQLite database in WAL mode, and Redis when configured; a hit
 * in a lower tier fills the upper ones.  Every problem with a tier (an
 * unwritable or unsafe directory, a corrupt database, a server that fails)
 * turns that tier off with one warning through the context's diagnostics;
 * nothing is fatal, and an entry that fails its checks is a miss. */

typedef struct kiln_cache kiln_cache;

typedef struct kiln_cache_key {
    uint8_t b[16];
} kiln_cache_key;

/* The key of an artifact built from source for target.  The file names of
 * #line markers are left out unless flags has KILN_KEY_FILE_NAMES (give it
 * when they reach the artifact: CUDA line info). */
enum { KILN_KEY_FILE_NAMES = 1 };
void kiln_cache_key_of(const char *source, size_t len, const char *target, int flags,
                       kiln_cache_key *out);
/* 32 hex digits and a NUL */
void kiln_cache_key_hex(const kiln_cache_key *k, char out[33]);
/* Parses 32 hex digits; 0 or -1. */
int kiln_cache_key_parse(const char *hex, kiln_cache_key *out);

typedef struct kiln_cache_config {
    const char *dir;        /* NULL: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else
                               ~/.cache/kiln; "" turns the disk tier off */
    int64_t max_bytes;      /* disk tier size; 0: $KILN_CACHE_SIZE, else 1 GiB */
    int64_t memory_bytes;   /* memory tier size; 0: 256 MiB */
    const char *remote;     /* NULL: $KILN_REMOTE_CACHE; "" off; redis://host:port/db */
    const char *remote_key; /* NULL: $KILN_REMOTE_KEY; HMAC-SHA256 key of remote records */
    int remote_timeout_ms;  /* 0: $KILN_REMOTE_TIMEOUT_MS, else 500; a deadline per command */
    const char *bundle_key; /* NULL: $KILN_BUNDLE_KEY, else the contents of
                               $KILN_BUNDLE_KEY_FILE; "" none.  HMAC-SHA256 key of bundles */
} kiln_cache_config;

/* Never NULL unless out of memory: a cache whose tiers failed still caches in
 * memory. */
kiln_cache *kiln_cache_open(kiln_ctx *ctx, const kiln_cache_config *cfg);
void kiln_cache_close(kiln_cache *c);
/* Writes the disk hits this process counted (kept in memory until its next
 * store or its close; kiln_cache_close flushes them too). */
void kiln_cache_flush(kiln_cache *c);
/* The disk tier's database path, or NULL when it is off. */
const char *kiln_cache_path(kiln_cache *c);
/* The remote tier's address, or NULL when it is off. */
const char *kiln_cache_remote(kiln_cache *c);

/* Looks the key up, tier by tier; on a hit *blob (malloc'd, the caller frees)
 * holds the artifact and *kind (when not NULL) its kind.  1 hit, 0 miss. */
int kiln_cache_get(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len,
                   char kind[16]);
/* kiln_cache_get, saying which tier had the entry: KILN_CACHE_MEMORY, _DISK
 * or _REMOTE (a lower tier's hit fills the upper ones), or 0 for a miss;
 * *looked (when not NULL) gets the tiers that were on, as bits 1 << tier. */
enum { KILN_CACHE_MEMORY = 1, KILN_CACHE_DISK = 2, KILN_CACHE_REMOTE = 3 };
int kiln_cache_get_tier(kiln_cache *c, const kiln_cache_key *k, void **blob, size_t *len,
                        char kind[16], int *looked);
/* Stores a freshly built artifact in every tier and ends this process's claim
 * on it.  kind: "so", "cubin", "ptx"; name: the kernel, shown by `kiln cache
 * ls`; target: a short text such as "cpu:x86_64" or "cuda:sm_90" that export
 * filters on.  compile_ms goes into the stats.  0, or -1 when no persistent
 * tier took it. */
int kiln_cache_put(kiln_cache *c, const kiln_cache_key *k, const char *kind, const char *name,
                   const char *target, const void *blob, size_t len, double compile_ms);

/* Single flight across processes and machines, after a miss.  Returns 1 when
 * the caller should build the key now (it holds the claim until
 * kiln_cache_put or kiln_cache_release, or lease_ms passes); 2 when another
 * process stored it meanwhile (*blob filled as by kiln_cache_get); 0 when
 * another process is building it: then call kiln_cache_wait, and claim again
 * if that returns 0.  A lease is at most KILN_CACHE_LEASE_MS; a claim found
 * to expire further away than that (plus KILN_CACHE_CLOCK_SKEW_MS), or never,
 * is stale: it is taken over, with one warning per process. */
enum {
    KILN_CACHE_LEASE_MS = 60000,    /* the longest claim, and the longest wait for one */
    KILN_CACHE_CLOCK_SKEW_MS = 5000 /* clocks of hosts sharing a cache may differ this much */
};
int kiln_cache_claim(kiln_cache *c, const kiln_cache_key *k, int lease_ms, void **blob,
                     size_t *len, char kind[16]);
void kiln_cache_release(kiln_cache *c, const kiln_cache_key *k);
/* Waits for another process's build: 1 with *blob filled when it arrives; 0
 * when that process ended, released its claim or let it expire without a
 * result, or max_ms passed (<= 0: KILN_CACHE_LEASE_MS): build it yourself;
 * -1 when ctx's interrupt function (polled every few ms; ctx may be NULL)
 * asked to stop, reported as an error through ctx. */
int kiln_cache_wait(kiln_cache *c, const kiln_cache_key *k, kiln_ctx *ctx, int max_ms,
                    void **blob, size_t *len, char kind[16]);

/* fork: a program whose threads may be inside the cache when one of them forks
 * calls kiln_cache_fork_prepare(c) just before fork() (a pthread_atfork
 * prepare handler), which waits until no thread is inside c (nor, through c,
 * inside SQLite) and keeps them out, and kiln_cache_fork_parent(c) after it in
 * the parent.  The child must not use c at all (its database connection is
 * the parent's): it leaves c unclosed and opens a new cache. */
void kiln_cache_fork_prepare(kiln_cache *c);
void kiln_cache_fork_parent(kiln_cache *c);

typedef struct kiln_cache_stats {
    /* this process */
    int64_t mem_hits, mem_misses, disk_hits, disk_misses, remote_hits, remote_misses;
    int64_t remote_rejected;   /* records that failed authentication or checks */
    int64_t compiles, waits, verify_failures;
    double compile_ms;
    int64_t mem_entries, mem_bytes;
    /* the disk tier, all processes together (zero when it is off) */
    int64_t entries, bytes, max_bytes;
    int64_t total_compiles, total_evictions, total_verify_failures;
    int64_t total_hits;        /* disk-tier hits, each counted on its entry too */
    double total_compile_ms;
} kiln_cache_stats;

void kiln_cache_get_stats(kiln_cache *c, kiln_cache_stats *s);

typedef struct kiln_cache_entry {
    kiln_cache_key key;
    const char *kind, *name, *target;
    int64_t size, created_ms, last_used_ms;
    int64_t hits;       /* disk-tier hits on it, all processes (0 in a kiln.db from before) */
    double compile_ms;  /* the build that stored it (0: imported, or a kiln.db from before) */
} kiln_cache_entry;

/* Calls fn for every entry of the disk tier, most recently used first;
 * returns how many. */
int kiln_cache_list(kiln_cache *c, void (*fn)(void *ud, const kiln_cache_entry *e), void *ud);
/* Removes every entry from the memory and disk tiers; returns how many disk
 * entries went. */
int64_t kiln_cache_clear(kiln_cache *c);
/* Evicts least recently used entries until the disk tier holds at most
 * max_bytes (negative: its configured size); returns how many went. */
int64_t kiln_cache_prune(kiln_cache *c, int64_t max_bytes);
/* A size as $KILN_CACHE_SIZE and `kiln cache prune` take it: decimal digits (a fraction
 * only where it makes whole bytes), then an optional unit (K, M, G, T, with or without
 * "iB" or "B"); -1 for anything else (hex, exponents, inf, a sign). */
int64_t kiln_parse_size(const char *text);

/* Small facts about the machine that are slow to learn (NVRTC's version...),
 * kept in the disk tier.  kiln_cache_fact returns 1 and fills buf when the
 * name is known. */
int kiln_cache_fact(kiln_cache *c, const char *name, char *buf, size_t size);
void kiln_cache_set_fact(kiln_cache *c, const char *name, const char *value);
/* Calls fn for each fact whose name starts with prefix, in name order (the
 * launch configurations max-autotune kept: "autotune|..."); returns how many. */
int kiln_cache_facts(kiln_cache *c, const char *prefix,
                     void (*fn)(void *ud, const char *name, const char *value), void *ud);

/* Checks the database and every entry's checksum; entries that fail are
 * removed.  Returns how many entries were checked; *bad counts the problems. */
int64_t kiln_cache_verify(kiln_cache *c, int64_t *bad);

/* A bundle is an SQLite file holding entries, to move them between machines:
 * code that will run in the importing process.  Export writes the disk tier's
 * entries whose target starts with one of the prefixes (all when there are
 * none) to path, replacing it, and signs it (HMAC-SHA256 over its contents)
 * when a bundle key is set.  Import takes only a regular file; when a key is
 * set it refuses a bundle that is unsigned or whose signature does not match;
 * it verifies every entry and stores the good ones.  Both return how many
 * entries they moved, or -1 after reporting an error through the context. */
int64_t kiln_cache_export(kiln_cache *c, const char *path, const char *const *targets,
                          int ntargets);
int64_t kiln_cache_import(kiln_cache *c, const char *path);
/* The same, saying more: *is_signed (when not NULL) is 1 when export signed
 * the bundle; flags KILN_IMPORT_TRUST_UNSIGNED imports a bundle without a
 * matching signature even when a key is set, with a warning; *checked (when
 * not NULL) is 1 when import found the signature and it matched. */
enum { KILN_IMPORT_TRUST_UNSIGNED = 1 };
int64_t kiln_cache_export_bundle(kiln_cache *c, const char *path, const char *const *targets,
                                 int ntargets, int *is_signed);
int64_t kiln_cache_import_bundle(kiln_cache *c, const char *path, int flags, int *checked);

/* ---- the library ---------------------------------------------------------- */

const char *kiln_version(void);

#ifdef __cplusplus
}
#endif
#endif
