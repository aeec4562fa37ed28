/* half.c: IEEE binary16 (NumPy's float16) to and from double, in the host's code.
 *
 * The extension converts float16 arguments with these (a scalar is rounded once,
 * from its double value, as NumPy's np.float16(x) does) and the emitter rounds
 * float16 constants with them, so a constant folds to the value the kernel's own
 * conversion (rt_half.h) would give.  Rounding is to nearest, ties to even; values
 * from 65520 up become infinity; NaN stays NaN with its sign.
 */
#include <math.h>
#include <string.h>

#include "kiln.h"

uint16_t kiln_f16_from_f64(double x) {
    uint64_t b;
    memcpy(&b, &x, 8);
    uint16_t s = (uint16_t)((b >> 48) & 0x8000);
    uint64_t a = b & 0x7fffffffffffffffULL;
    if (a >= 0x7ff0000000000000ULL) /* inf, or NaN (kept quiet) */
        return (uint16_t)(s | 0x7c00 | (a > 0x7ff0000000000000ULL ? 0x200 : 0));
    if (a >= 0x40effe0000000000ULL) return (uint16_t)(s | 0x7c00); /* >= 65520: inf */
    if (a < 0x3f10000000000000ULL) {
        /* below 2^-14: a subnormal half, m * 2^-24 */
        int e = (int)(a >> 52);
        int shift = 1051 - e;
        if (e == 0 || shift >= 54) return s; /* under half the smallest subnormal */
        uint64_t mant = (a & 0xfffffffffffffULL) | 0x10000000000000ULL;
        uint64_t m = mant >> shift, rem = mant & ((1ULL << shift) - 1), half = 1ULL << (shift - 1);
        if (rem > half || (rem == half && (m & 1))) m++;
        return (uint16_t)(s | m);
    }
    uint64_t r = a - (1008ULL << 52); /* exponent bias 1023 -> 15 */
    uint64_t h = r >> 42, rem = r & ((1ULL << 42) - 1);
    if (rem > (1ULL << 41) || (rem == (1ULL << 41) && (h & 1))) h++;
    return (uint16_t)(s | h);
}

double kiln_f16_to_f64(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0x1f) v = m ? (double)NAN : (double)INFINITY;
    else if (e) v = ldexp((double)(m | 0x400), e - 25);
    else v = ldexp((double)m, -24);
    return (h & 0x8000) ? -v : v;
}

/* bfloat16 (float32's upper half) from a double, to nearest even, rounded once; the
 * emitter rounds bfloat16 constants with it, as rt_half.h's kiln_d2b_m does in
 * kernels (subnormals down to 2^-133, overflow to inf, NaN stays NaN) */
uint16_t kiln_bf16_from_f64(double x) {
    uint64_t b;
    memcpy(&b, &x, 8);
    uint16_t s = (uint16_t)((b >> 48) & 0x8000);
    uint64_t a = b & 0x7fffffffffffffffULL;
    if (a >= 0x7ff0000000000000ULL) return (uint16_t)(s | 0x7f80 | (a > 0x7ff0000000000000ULL ? 0x40 : 0));
    if (a == 0) return s;
    int ex = (int)(a >> 52), e = (ex ? ex : 1) - 1075;
    uint64_t m = (a & 0xfffffffffffffULL) | (ex ? 1ULL << 52 : 0);
    int top = 63;
    while (!(m >> top)) top--;
    int qe = top + e - 7;
    if (qe < -133) qe = -133;
    int drop = qe - e; /* > 0: a double has 53 bits, the quantum is coarser */
    uint64_t q = drop >= 64 ? 0 : m >> drop;
    uint64_t rem = drop >= 64 ? 1 : m & ((1ULL << drop) - 1);
    uint64_t half = drop >= 64 ? 2 : 1ULL << (drop - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    uint32_t bits = qe + 133 >= 255 ? 0x7f80u : ((uint32_t)(qe + 133) << 7) + (uint32_t)q;
    return (uint16_t)(s | (bits >= 0x7f80u ? 0x7f80u : bits));
}

double kiln_bf16_to_f64(uint16_t h) {
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return (double)f;
}
