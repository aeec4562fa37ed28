# CPointer(dtype) parameters (Numba's raw pointers): an integer address, indexed x[i] for
# reads, writes, augmented assignment and atomics, passed on to device functions; no
# extent, so a negative index is C's pointer arithmetic
import numpy as np
import kiln
from kiln import types


@kiln.jit(types.void(types.CPointer(types.uint8), types.uint32))
def add_one(x, n):
    i = kiln.grid(1)
    if i < n:
        x[i] += 1


@kiln.jit("float64(float64*, int64)", device=True)
def twice(p, i):
    return p[i] * 2.0


@kiln.jit(device=True)
def store(p, i, v):
    p[i] = v


@kiln.jit("void(float64*, float64*, int32*, int64)")
def mixed(src, dst, count, n):
    i = kiln.grid(1)
    if i < n:
        store(dst, i, twice(src, i) + src[i - 1])  # src[-1] is the element before
        kiln.atomic.add(count, 0, 1)
        old = kiln.atomic.max(count, 1, i)


@kiln.jit("void(complex128*, int64)")
def scale(z, n):
    for i in range(n):
        z[i] = z[i] * 2


@kiln.jit(["void(complex128*, int64)", "void(float32*, int64)"])
def either(z, n):
    pass


def main():
    a = np.arange(10, dtype=np.uint8)
    add_one[1, 32](a.ctypes.data, np.uint32(len(a)))
    print(a.tolist())
    add_one[1, 32](a.ctypes.data, 4)  # a Python int converts to the signature's uint32
    print(a.tolist())

    buf = np.arange(6, dtype=np.float64)
    dst = np.zeros(5)
    count = np.zeros(2, np.int32)
    # src points at buf[1], so src[-1] is buf[0]
    mixed[2, 4](buf.ctypes.data + 8, dst.ctypes.data, count.ctypes.data, np.int64(5))
    print(dst.tolist(), count.tolist())
    want = 2 * buf[1:] + buf[:-1]
    print("same as NumPy:", np.array_equal(dst, want))

    z = np.array([1 + 2j, -3j], np.complex128)
    scale[1, 1](z.ctypes.data, 2)
    print(z.tolist(), add_one.signatures, scale.signatures)

    add_one[1, 1](0, 0)  # a null pointer is allowed; the kernel must not dereference it
    try:
        add_one[1, 1](-8, 0)
    except OverflowError as e:
        print("OverflowError:", e)
    try:
        add_one[1, 1](a, 1)
    except TypeError as e:
        print("TypeError:", str(e).splitlines()[0])
    try:
        add_one[1, 1](1.5, 1)
    except TypeError as e:
        print("TypeError:", str(e).splitlines()[0])
    try:  # an address says nothing of what it points to
        either[1, 1](z.ctypes.data, 2)
    except TypeError as e:
        print("TypeError:", str(e).splitlines()[0].split(" <function")[0])
