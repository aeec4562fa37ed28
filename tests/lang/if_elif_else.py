# if / elif / else and conditional expressions
import numpy as np
import kiln


@kiln.jit
def k(out, x):
    i = kiln.grid(1)
    if i < x.size:
        v = x[i]
        if v < 0:
            c = -1
        elif v == 0:
            c = 0
        elif v < 10:
            c = 1
        else:
            c = 2
        out[i] = c * 10 + (1 if v % 2 == 0 else 0)


def main():
    x = np.array([-3, 0, 4, 7, 12, 15])
    out = np.zeros(6, np.int64)
    k[1, 8](out, x)
    print(out.tolist())
