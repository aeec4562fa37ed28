# a grid(1) kernel without barriers runs its threads as lanes of a vector loop on the CPU;
# locals private to one run of statements that are structs in C (complex numbers, tuples)
# start as {0}, like the function's own locals (`c64 v = 0` was a C error)
import numpy as np
import kiln

G = np.array([1 + 2j, 3 - 1j, -0.5j], np.complex64)


@kiln.jit
def over_global(o):
    i = kiln.grid(1)
    if i < o.size:
        for v in G:
            o[i] += v * i


@kiln.jit
def loop_locals(o, a):
    i = kiln.grid(1)
    if i < o.size:
        acc = 0j
        for j in range(3):
            z = a[i] * (j + 1j)
            acc += z
        t = (a[i], 2.0)
        for j in range(2):
            t = (t[0] * 2, t[1] + 1)
        o[i] = acc + t[0] + t[1]


def main():
    o = np.zeros(6, np.complex128)
    over_global[2, 3](o)
    print(np.allclose(o, [G.astype(np.complex128).sum() * i for i in range(6)]))
    a = np.arange(8.0) + 1j
    o = np.zeros(8, np.complex128)
    loop_locals[2, 4](o, a)
    ref = [sum(x * (j + 1j) for j in range(3)) + x * 4 + 4.0 for x in a]
    print(np.allclose(o, ref), o[:2].tolist())
