# / is true division, // and % floor toward -inf, % takes the divisor's sign,
# ** on integers stays integer, mixed signed/unsigned comparisons are exact
import numpy as np
import kiln


@kiln.jit
def k(out, a, b):
    for i in range(a.size):
        out[i, 0] = a[i] / b[i]
        out[i, 1] = a[i] // b[i]
        out[i, 2] = a[i] % b[i]
        out[i, 3] = a[i] ** 2
        out[i, 4] = -a[i] // 2


def main():
    a = np.array([7, -7, 7, -7])
    b = np.array([2, 2, -2, -2])
    out = np.zeros((4, 5))
    k[1, 1](out, a, b)
    print(out.tolist())
