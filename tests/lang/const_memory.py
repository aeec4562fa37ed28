# kiln.const.array_like (Numba's cuda.const.array_like): a global NumPy array's elements as
# the kernel's constant memory (__constant__ on the GPU, static data on the CPU): 1-D, F-order
# 2-D, complex 3-D, uint8 beside float64, and an empty array; diffed against NumPy.
import numpy as np
import kiln

CONST_EMPTY = np.array([])
CONST1D = np.arange(10, dtype=np.float64) / 2.0
CONST2D = np.asfortranarray(np.arange(100, dtype=np.int32).reshape(10, 10))
CONST3D = (np.arange(5 * 5 * 5, dtype=np.complex64).reshape(5, 5, 5) + 1j) / 2j
CONST3BYTES = np.arange(3, dtype=np.uint8)


@kiln.jit
def empty(a):
    c = kiln.const.array_like(CONST_EMPTY)
    a[kiln.grid(1)] = len(c)


@kiln.jit
def one(a):
    c = kiln.const.array_like(CONST1D)
    i = kiln.grid(1)
    a[i] = c[i] + 1.0


@kiln.jit
def two(a):
    c = kiln.const.array_like(CONST2D)
    i, j = kiln.grid(2)
    a[i, j] = c[i, j]


@kiln.jit
def three(a):
    c = kiln.const.array_like(CONST3D)
    a[kiln.threadIdx.x, kiln.threadIdx.y, kiln.threadIdx.z] = c[kiln.threadIdx.x, kiln.threadIdx.y,
                                                                kiln.threadIdx.z]


@kiln.jit
def mixed(a):
    b = kiln.const.array_like(CONST3BYTES)
    d = kiln.const.array_like(CONST1D)
    i = kiln.grid(1)
    a[i] = b[i] + d[i]


def main():
    a = np.full(1, -1, np.int64)
    empty[1, 1](a)
    print("empty:", a.tolist())
    o = np.zeros(10)
    one[2, 5](o)
    print("1-D:", (o == CONST1D + 1).all())
    t = np.zeros((10, 10), np.int32)
    two[(2, 2), (5, 5)](t)
    print("2-D F order:", (t == CONST2D).all())
    c = np.zeros((5, 5, 5), np.complex64)
    three[1, (5, 5, 5)](c)
    print("3-D complex64:", (c == CONST3D).all())
    m = np.zeros(3)
    mixed[1, 3](m)
    print("uint8 + float64:", (m == CONST3BYTES + CONST1D[:3]).all())
