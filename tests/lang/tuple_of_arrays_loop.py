# tuples of arrays of one type (arguments and globals) loop and index at run time;
# arrays of different types need literal_unroll (the hint says so)
import numpy as np
import kiln

G = (np.arange(3.0), np.arange(3.0) * 10, np.arange(3.0) * 100)


@kiln.jit
def k(out, t):
    s = 0.0
    for a in t:
        s += a[1]
        a[0] = 5             # written through the tuple: copied back
    for g in G:
        s += g[2]
    j = 1
    out[0] = s + t[j][2] + G[j][1] + len(t)
    for i, a in enumerate(t):
        out[1 + i] = a[0] + i


@kiln.jit
def mixed(out, t):
    for a in t:
        out[0] += a[0]


def main():
    out = np.zeros(4)
    x, y = np.ones(3), np.ones(6)[3:]
    k[1, 1](out, (x, y))
    print(out.tolist(), x.tolist(), y.tolist())
    f = np.ones((2, 3), order="F")
    out = np.zeros(4)
    k2 = (f[0], f[1])        # strided rows of an F array: one type (any layout)
    k[1, 1](out, k2)
    print(out.tolist(), f.tolist())
    try:
        mixed[1, 1](out, (np.ones(2), np.ones(4)[::2]))
    except kiln.CompileError as e:
        print("CompileError:", e)
