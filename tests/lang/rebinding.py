# a name rebound to a value of another type, where no use sees both (Numba's SSA
# versions), is several variables: `arr` 2-D, then 1-D, then 2-D again in a loop; a loop
# variable rebound to an array; an int turned float.  Where a use may see either value (a
# join after an if, a loop's next turn) the name is one variable, unified as before.
import numpy as np
import kiln


@kiln.jit
def reshapes(result, arr):
    for i in range(1):
        arr = arr.reshape(3 * 2)
        result[3, 0] = arr[5]
        arr = arr.reshape(3, 2)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            result[i, j] = arr[i, j]


@kiln.jit
def rebinds(res, m, n, B):
    for t in range(1, m):
        for idx in range(n):
            t = B
            if idx == 0:
                res[0] += t[0]
    x = 7
    res[1] = x // 2
    x = 2.5 * x
    res[2] = x
    k = 0
    while k < 5:
        k += 2
    res[3] = k


def main():
    r = np.zeros((4, 2))
    reshapes[1, 1](r, np.arange(6.0).reshape(3, 2))
    print(r.tolist())
    res = np.zeros(4)
    rebinds[1, 1](res, 3, 2, np.array([7.0, 8.0]))
    print(res.tolist())
    print(reshapes.inspect_types(file=False), end="")
    print(rebinds.inspect_types(file=False), end="")
