# atomics work on the CPU target: add, sub, max, min, exch, cas, and_, or_, xor, inc, dec
import numpy as np
import kiln


@kiln.jit
def k(a, u, f):
    i = kiln.grid(1)
    kiln.atomic.add(a, 0, 1)
    kiln.atomic.sub(a, 1, 1)
    kiln.atomic.max(a, 2, i)
    kiln.atomic.min(a, 3, i)
    kiln.atomic.or_(a, 4, 1 << (i % 8))
    kiln.atomic.inc(u, 0, 5)
    kiln.atomic.add(f, 0, 0.25)
    kiln.atomic.max(f, 1, 0.5 * i)
    if i == 0:
        kiln.atomic.exch(a, 5, 42)
        kiln.atomic.compare_and_swap(a[6:], 0, 9)


def main():
    a = np.array([0, 0, -1, 100, 0, 0, 0], np.int32)
    u = np.zeros(1, np.uint32)
    f = np.zeros(2, np.float64)
    k[4, 16](a, u, f)
    print(a.tolist(), u.tolist(), f.tolist())
