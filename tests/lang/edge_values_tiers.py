# Edge values where the optimised code (gcc, vectorised loops) and tier 0 (tcc) used to
# disagree with each other or with Python (hunt30), checked bit for bit on 256 threads
# (a vector loop and its scalar tail): x ** 0.5 of -0.0 and -inf, float16 to unsigned,
# round() of a uint64 past 2**63 and of floats at |ndigits| past 300, ldexp of uint64
# exponents, np.fmin/np.fmax of signed zeros, and the sign of a negated NaN.
import math

import numpy as np
import kiln

N = 256


@kiln.jit
def powers(o, a, b):
    i = kiln.grid(1)
    if i < a.size:
        o[i, 0] = a[i] ** 0.5
        o[i, 1] = math.pow(a[i], 0.5)
        o[i, 2] = b[i] ** 0.5


@kiln.jit
def to_unsigned(o64, o32, h):
    i = kiln.grid(1)
    if i < h.size:
        o64[i] = np.uint64(h[i])
        o32[i] = np.uint32(h[i])


@kiln.jit
def rounds(o, u, n):
    i = kiln.grid(1)
    if i < u.size:
        o[i] = round(u[i], n)


@kiln.jit
def frounds(o, x, n):
    i = kiln.grid(1)
    if i < x.size:
        o[i] = round(x[i], n[i])


@kiln.jit
def ldexps(o, x, e):
    i = kiln.grid(1)
    if i < x.size:
        o[i] = math.ldexp(x[i], e[i])


@kiln.jit
def zeros(o, a, b):
    i = kiln.grid(1)
    if i < a.size:
        o[i, 0] = np.fmin(a[i], b[i])
        o[i, 1] = np.fmax(a[i], b[i])
        o[i, 2] = -a[i]


@kiln.jit
def absmin(o, u):
    o[0] = abs(-2**63)  # Python's 2**63, a uint64 constant (hunt32: it was -2**63)
    u[0] = abs(-2**63) - 1


def bits(xs, nan_sign=False):
    """The distinct values, zeros' signs shown; a NaN's sign only where asked (an invalid
    operation's NaN is negative on x86 and positive on the GPU)."""
    return sorted({repr(float(x)) if not math.isnan(x) else
                   ("-nan" if nan_sign and math.copysign(1.0, x) < 0 else "nan") for x in xs})


def main():
    a = np.tile([-0.0, -math.inf, 4.0, -1.0], N // 4)
    o = np.zeros((N, 3))
    powers[1, N](o, a, a.astype(np.float32))
    for c in range(3):
        print("x ** 0.5", [bits(o[j::4, c]) for j in range(4)])

    h = np.tile(np.array([-1.0, -2.5, -7.0, 3.0], np.float16), N // 4)
    o64, o32 = np.zeros(N, np.uint64), np.zeros(N, np.uint32)
    to_unsigned[1, N](o64, o32, h)
    print("float16 to uint64", sorted(set(o64.tolist())))
    print("float16 to uint32", sorted(set(o32.tolist())))

    u = np.tile(np.array([2**63, 2**63 + 1, 2**64 - 1, 10**19 - 1], np.uint64), N // 4)
    r = np.zeros(N, np.uint64)
    for nd in (-2, -19):
        rounds[1, N](r, u, nd)
        print("round(uint64, %d)" % nd, [sorted(set(r[j::4].tolist())) for j in range(4)],
              [round(int(v), nd) % 2**64 for v in u[:4]])

    x = np.tile([1e308, 7e300, 1.5e-310, 1.5e-310, math.inf, 1234.5678], N // 6 + 1)[:N]
    nds = np.tile(np.array([-308, -301, 305, 310, 3, 2], np.int64), N // 6 + 1)[:N]
    f = np.zeros(N)
    frounds[1, N](f, x, nds)
    print("round(float, n)", [["%.6g" % v for v in sorted(set(f[j::6].tolist()))] for j in range(6)])

    e = np.tile(np.array([2**63, 2**64 - 1, 5, 2**63 + 5], np.uint64), N // 4)
    xs = np.tile([1.0, 1.0, -2.0, -2.0], N // 4)
    l = np.zeros(N)
    ldexps[1, N](l, xs, e)
    print("ldexp(x, uint64)", [bits(l[j::4]) for j in range(4)])

    za = np.tile([0.0, -0.0, math.nan, -math.nan], N // 4)
    zb = np.tile([-0.0, 0.0, 1.0, 1.0], N // 4)
    z = np.zeros((N, 3))
    zeros[1, N](z, za, zb)
    for c, what in enumerate(("fmin", "fmax", "negation")):
        print(what, [bits(z[j::4, c], c == 2) for j in range(4)])
    o, u = np.zeros(1), np.zeros(1, np.uint64)
    absmin[1, 1](o, u)
    print("abs(-2**63)", o.tolist(), u.tolist())
