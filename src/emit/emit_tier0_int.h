/* emit_tier0_int.h: tier 0's vector entry, private to its three files.
 *
 * emit_tier0.c (the entry, statements, inlined calls) -> emit_tier0_expr.c (values:
 * arrays of a block's lanes, masks, temporaries, the lane-by-lane fallback) ->
 * emit_tier0_scan.c (which values vary, which exits are varying, which functions are
 * pure).  The one call back, expressions inlining a device function, goes through
 * T0.inline_call.
 */
#ifndef KILN_EMIT_TIER0_INT_H
#define KILN_EMIT_TIER0_INT_H

#include "emit/emit_int.h"
#include "target/vecops.h"

/* Pointer keys to int values: syms, nodes and functions the scan marks. */
typedef struct PMap {
    const void **k;
    int *v;
    int cap, n;
} PMap;

typedef struct Val {
    bool vec;      /* s names an array of KV_LANES; else s is a scalar expression */
    const char *s;
    int dt;        /* the C type it is held in */
} Val;

typedef struct T0 T0;
struct T0 {
    Emit *E;
    Arena *A;
    bool bad;
    const char *bad_file;
    int bad_line;
    bool changed;   /* the scan marked something new: scan again */
    PMap sym;       /* Sym * -> 1 varying (+ 2 * its array's number) */
    PMap exits;     /* S_RETURN/S_BREAK/S_CONTINUE -> 1 under a varying condition */
    PMap loops;     /* loop -> 1 a varying break, 2 a varying continue, 4 varying loop */
    PMap fns;       /* FuncSpec -> 1 inlined (ok), 2 bad, 4 has a varying return, 8 impure */
    int nvars;      /* varying symbols' arrays (kv<i>) */
    int ntmp[KILN_NDTYPES], maxtmp[KILN_NDTYPES]; /* kt<dt>_<i> in use / declared */
    int nmask, maxmask;                            /* km<i> */
    int nscalar;                                   /* ku<i> scalar temps */
    int nlabel;
    int nexits;     /* exit_lanes calls written */
    int depth;      /* statements the scan is inside */
    bool pure_loads; /* fn_pure's walk met an array read */
    /* results of inlined calls of functions of their arguments alone (fn_of_args), kept
     * in arrays of their own (kc<i>) for later calls with the same arguments in the same
     * block or one inside it, while no argument variable has been assigned since */
    struct Memo {
        const FuncSpec *f;
        int nargs;
        const Node *arg[8];
        int epoch[8];
        const char *res;
        int depth;
        int serial; /* the loop body it was made in (loop_serial) */
    } memo[32];
    int nmemo, nkc, bdepth;
    int loop_serial, nserial;
    int64_t frame;  /* bytes of the entry's arrays (T0_MAX_FRAME_BYTES) */ /* the loop body being written, 0 outside loops; bodies so far */
    int kc_dt[64];
    PMap epochs;    /* Sym -> stores written to it (store_sym) */
    /* parameters of the inlined calls being written that read their argument's array */
    const Sym *alias_sym[64];
    const char *alias_arr[64];
    int nalias;
    /* x = v, on every lane: v's last operation writes x's array itself */
    const Node *dst_node;
    const char *dst;
    int dst_dt;
    const Node *guard; /* the kernel's guard whose bounds clamp the blocks (plan.h), or NULL */
    bool guard_early;  /* ... an `if <out of range>: return`, which then writes nothing */
    int round;      /* the scan's pass */
    PMap scanned;   /* FuncSpec -> the last pass that scanned it */
    bool txbx;      /* a lane-by-lane loop reads the thread's x coordinates */
    bool live;      /* the kernel has a varying return: masks start from live_ */
    /* nodes computed into arrays, read as name[kk_] by the lane loop being written */
    const Node *lnode[64];
    const char *ltext[64];
    int nl;
    /* the masks from the innermost function scope out (for exits) */
    const char *chain[256];
    int kind[256];  /* 0 an if, 1 a function, 2 a loop (break), 3 an iteration (continue) */
    int nchain;
    const char *fn_label; /* the current function's end label (uniform return) */
    const char *ret_arr;  /* the current inlined function's result array, or NULL */
    const Type *ret_ty;
    int ret_dt;
    /* emit_tier0.c's inlining of a device function call (the values' file calls back) */
    Val (*inline_call)(T0 *t, Node *n, const char *m);
};

/* A construct the vector entry does not cover: the kernel gets none (bad_line says
 * where it was found, for KILN_DEBUG_TIER0's message). */
#define BAD(t)                                                                         \
    ((t)->bad = true, (t)->bad_file = (t)->bad_file ? (t)->bad_file : __FILE__,        \
     (t)->bad_line = (t)->bad_line ? (t)->bad_line : __LINE__)

/* The most bytes of arrays the vector entry keeps on the launching thread's stack (a
 * Python thread's may be small: threading.stack_size); past it, the scalar entry. */
enum { T0_MAX_FRAME_BYTES = 128 * 1024 };

/* Each dtype's C name in the generated code ("" for those tier 0's vector entry does
 * not hold). */
extern const char *const t0_dtc[KILN_NDTYPES];

/* ---- emit_tier0_scan.c ---- */
int *t0_pm_slot(T0 *t, PMap *m, const void *key, bool add);
int t0_pm_get(T0 *t, PMap *m, const void *key);
/* The dtype a scalar of type ty is held in, or -1 for none the vector entry holds. */
int t0_vdt(const Type *ty);
bool t0_dt_float(int dt);
bool t0_varies(T0 *t, const Sym *s);
bool t0_is_call(const Node *n, int kind);
int t0_grid_dims(const Node *n);
/* Whether n's value may differ between the threads of a row (marking what it calls). */
bool t0_vary(T0 *t, Node *n);
/* One pass of the scan over f and what it inlines (t->changed: pass again). */
void t0_scan_fn(T0 *t, FuncSpec *f);
/* Whether f is pure and reads no array: its result depends on its arguments alone. */
bool t0_fn_of_args(T0 *t, FuncSpec *f);

/* ---- emit_tier0_expr.c ---- */
const char *t0_printf(T0 *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *t0_tmp(T0 *t, int dt);
const char *t0_mask_new(T0 *t);
const char *t0_addr(T0 *t, Val v);
const char *t0_operand(T0 *t, Val v, int *scalar);
const char *t0_var(T0 *t, const Sym *s);
const char *t0_convert_text(T0 *t, const Type *from, const Type *to, const char *x);
void t0_lane_open(T0 *t, const char *m);
void t0_lane_close(T0 *t);
void t0_scope_open(T0 *t);
void t0_scope_close(T0 *t);
Val t0_conv(T0 *t, Val v, const Type *from, const Type *to);
Val t0_truthy(T0 *t, Val v, const Type *ty);
const char *t0_mask_and(T0 *t, const char *m, Val c);
const char *t0_mask_andnot(T0 *t, const char *m, Val c);
bool t0_offset(T0 *t, Node *n, const char *m, Val *off, const char **base);
/* n's value under mask m (NULL: every lane of the block). */
Val t0_ev(T0 *t, Node *n, const char *m);

#endif
