# rejected: a field view of a packed record array whose field is not a whole number of
# its items apart (kiln's strides count items); align=True, or a[i].f, works
import numpy as np
import kiln

PACKED = np.dtype([("flag", np.int8), ("v", np.float64)])


@kiln.jit
def k(a):
    i = kiln.grid(1)
    if i < a.size:
        a["v"][i] = 1.0


def main():
    k[1, 4](np.zeros(4, PACKED))
