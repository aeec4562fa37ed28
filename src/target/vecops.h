/* vecops.h: tier 0's vector operations (vecops.c).
 *
 * Tier 0's vector entry (src/emit/emit_tier0.c) runs a kernel over blocks of
 * up to KV_LANES consecutive threads: each operation of the kernel that varies
 * from thread to thread is one call here, over the whole block, in code the
 * system compiler built with kiln and vectorised (libmvec's functions for
 * exp, log, sin...); libtcc compiles only the sequence of calls, the masks
 * and the loops.  What is not here runs one thread after another in tcc's
 * code, as tier 0 did before.
 *
 * Values are arrays of KV_LANES elements of their C type (kbool as one
 * byte); a mask is an array of bytes, 0 or 1.  An operand flagged scalar
 * (as, bs) points at one value that every lane takes.  Types are kiln_dtype
 * values.  The operations are C's on each element, exactly as the generated
 * C writes them for the same node, so a value is the same on tier 0 and in
 * the optimised build (up to libmvec's last bit, as between the optimised
 * build's vector loop and its scalar tail: docs/language.md).
 */
#ifndef KILN_TARGET_VECOPS_H
#define KILN_TARGET_VECOPS_H

#include <stdint.h>

/* Threads per block of tier 0's vector entry: a power of two, so that a block's
 * arrays (a few dozen of at most 8 bytes a lane) stay in the first-level caches. */
#define KV_LANES 256

/* kv_bin's operations: + - * / on numbers, & | ^ on integers, min and max of
 * numpy.minimum and maximum are not here (their NaN rules are the C text's). */
enum { KV_ADD, KV_SUB, KV_MUL, KV_DIV, KV_AND, KV_OR, KV_XOR };
/* kv_cmp's: a op b as C compares two values of one type */
enum { KV_LT, KV_LE, KV_GT, KV_GE, KV_EQ, KV_NE };
/* kv_un's: -a, then C's math functions of one float argument (f suffix for
 * float32), in src/sema/intrinsics.c's math1_names order from KV_MATH0 */
enum { KV_NEG, KV_FABS, KV_MATH0 };
/* How many of math1_names kv_un takes: sqrt ... cbrt, exp2, rint (the C ones). */
#define KV_NMATH 28

/* d = a op b, of type ty (an integer or float dtype of 32 or 64 bits). */
void kv_bin(int op, int ty, void *d, const void *a, int as, const void *b, int bs, long n);
/* d = (a op1 b) op2 c on float32 and float64 (op1 and op2 of KV_ADD..KV_DIV; op2 also
 * KV_RSUB, c - (a op1 b), and KV_RDIV, c / (a op1 b)), the inner value rounded to the
 * type as kv_bin would: one pass for two operations (tier 0 fuses a binary operation
 * into the one that takes it). */
enum { KV_RSUB = 16, KV_RDIV };
void kv_bin2(int op1, int op2, int ty, void *d, const void *a, int as, const void *b, int bs,
             const void *c, int cs, long n);
/* d (bytes) = a op b, both of type ty. */
void kv_cmp(int op, int ty, unsigned char *d, const void *a, int as, const void *b, int bs,
            long n);
/* d = op(a), of the float type ty (KV_NEG: any signed or float type). */
void kv_un(int op, int ty, void *d, const void *a, long n);
/* d = (to)a: C's conversion, from any number type to any but from a float to an
 * integer (the C text's own helpers decide those). */
void kv_cvt(int to, int from, void *d, const void *a, long n);
/* d = m ? a : b (m NULL: a). */
void kv_sel(int ty, void *d, const unsigned char *m, const void *a, int as, const void *b,
            int bs, long n);
/* d[k] = a where m[k] (m NULL: every lane). */
void kv_mov(int ty, void *d, const unsigned char *m, const void *a, int as, long n);
/* d[k] = base[off[k]] where m[k] (os: one offset for all); other lanes keep theirs. */
void kv_load(int ty, void *d, const void *base, const int64_t *off, int os,
             const unsigned char *m, long n);
/* base[off[k]] = v[k] where m[k], lane by lane in order (os: one offset for all). */
void kv_store(int ty, void *base, const int64_t *off, int os, const unsigned char *m,
              const void *v, int vs, long n);
/* d[k] = a[k] * s + b[k] in int64, wrapping (a and b may be scalar): index arithmetic;
 * wrap_n >= 0 first adds wrap_n to a negative a (kiln_wrap). */
void kv_axpy(int64_t *d, const int64_t *a, int as, int64_t s, const int64_t *b, int bs,
             int64_t wrap_n, long n);
/* d[k] = start + k */
void kv_iota(int64_t *d, int64_t start, long n);
/* q[k] = a[k] / s, r[k] = a[k] % s, for a[k] >= 0 and s > 0 (thread and block of a
 * global position) */
void kv_divmod(int64_t *q, int64_t *r, const int64_t *a, int64_t s, long n);
/* Masks: d = a & b; d = a & !b; d = !a; whether any lane of a is set. */
void kv_mand(unsigned char *d, const unsigned char *a, const unsigned char *b, long n);
void kv_mandn(unsigned char *d, const unsigned char *a, const unsigned char *b, long n);
void kv_mnot(unsigned char *d, const unsigned char *a, long n);
int kv_any(const unsigned char *a, long n);

/* Each operation's name and address, for libtcc's symbol table (tcc.c). */
typedef struct kv_symbol {
    const char *name;
    void (*fn)(void);
} kv_symbol;
extern const kv_symbol kv_symbols[];
extern const int kv_nsymbols;

#endif
