# Integer arithmetic wraps, and a non-negative sum, product, shift or power that wraps is
# negative: %, // and indexing then follow Python on the wrapped value (sema may skip their
# sign corrections only where the value provably cannot wrap: src/sema/bounds.c)
import numpy as np
import kiln

BIG = 9223372036854775807  # 2**63 - 1


@kiln.jit
def k(out, a):
    s = a.size                                   # 10, known >= 0
    w = s * BIG                                  # int64: wraps to -10
    out[0] = w % 3
    out[1] = w // 3
    out[2] = a[w]                                # a[-10] is a[0]
    v = s + BIG + 9223372036854775796            # wraps to -3
    out[3] = v % 7
    out[4] = a[v]                                # a[7]
    out[5] = (s << 62) % 7                       # -2**63
    out[6] = (s << 62) // 7
    x = kiln.int32(s) * 429496729                # int32: wraps to -6
    out[7] = x % 4
    out[8] = x // 4
    out[9] = a[x]                                # a[4]
    y = kiln.int8(s) * 13                        # int8: wraps to -126
    out[10] = y % 5
    out[11] = y // 5
    z = kiln.int32(s * 429496729)                # a value past int32's maximum: -6
    out[12] = z % 4
    out[13] = a[z]
    acc = 0
    for j in range(s):
        acc += 4611686018427387904               # 10 * 2**62 wraps to -2**63
    out[14] = acc % 7
    out[15] = acc // 7
    out[16] = s ** 19 % 7                        # 10**19 wraps to a negative
    out[17] = abs(acc) % 7                       # abs(-2**63) is -2**63, as in NumPy
    u = kiln.int64(kiln.uint64(s) * kiln.uint64(18446744073709551615))  # -10
    out[18] = a[u]
    out[19] = kiln.grid(1) + 1                   # bounded: stays known non-negative


def wrap(v, bits=64):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def main():
    a = np.arange(100, 110)
    out = np.zeros(20, np.int64)
    k[1, 1](out, a)
    s = 10
    w, v, x, y = wrap(s * BIG), wrap(s + BIG + 9223372036854775796), wrap(s * 429496729, 32), wrap(s * 13, 8)
    acc, p = wrap(10 * 2**62), wrap(10**19)
    ref = [w % 3, w // 3, a[w], v % 7, a[v], wrap(s << 62) % 7, wrap(s << 62) // 7, x % 4, x // 4,
           a[x], y % 5, y // 5, x % 4, a[x], acc % 7, acc // 7, p % 7, acc % 7, a[-10], 1]
    print(out.tolist())
    print("matches Python on the wrapped values:", out.tolist() == [int(r) for r in ref])
