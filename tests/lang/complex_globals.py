# frozen complex globals: a Python complex is weak (complex64 stays complex64), a NumPy one
# keeps its dtype; a tuple holding one is refused
import numpy as np
import kiln

J = 0.5j
C64 = np.complex64(1 + 2j)
PAIR = (1.0, 2j)


@kiln.jit
def k(a, b):
    a[0] = J * 2 + C64
    b[0] = b[0] * J


@kiln.jit
def bad(a):
    a[0] = PAIR[1]


def main():
    a = np.zeros(1, np.complex128)
    b = np.full(1, 3 + 1j, np.complex64)
    k[1, 1](a, b)
    print(a, b)
    print(k.inspect_types(file=False), end="")
    try:
        bad[1, 1](a)
    except kiln.CompileError as e:
        print(f"CompileError: {e}")
