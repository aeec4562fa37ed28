# a.view(dtype) in a kernel: the array's bytes read (and written) as another dtype, as
# NumPy's ndarray.view; a different itemsize needs a contiguous last axis whose bytes the
# new itemsize divides, else NumPy's ValueError, raised by the launch
import numpy as np
import kiln


@kiln.jit
def word_at(byte_arr, start, stop, output):
    output[0] = byte_arr[start:stop].view(np.int32)[0]


@kiln.jit
def bits(a, out):
    v = a.view(np.uint32)               # 2-d, twice the columns
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            out[i, j] = v[i, j]


@kiln.jit
def write_through(a):
    w = a.view(np.uint8)                # a narrower dtype: four times the extent
    w[0] = 255


@kiln.jit
def same_size(a, out):
    v = a.view(np.float32)
    out[0] = v[1]


@kiln.jit
def shape_of(a, out):
    v = a.view(np.int64)
    out[0] = v.shape[0]


def main():
    b = np.arange(256, dtype=np.uint8)
    out = np.zeros(1, np.int32)
    for start in (0, 4, 100, 252):
        word_at[1, 1](b, start, start + 4, out)
        print("word at", start, out[0] == b[start:start + 4].view(np.int32)[0])

    a = np.arange(12, dtype=np.float64).reshape(3, 4) - 5.5
    r = np.zeros((3, 8), np.uint32)
    bits[1, 1](a, r)
    print("float64 bits as uint32:", (r == a.view(np.uint32)).all())

    x = np.zeros(2, np.int32)
    write_through[1, 1](x)
    print("written through the view:", x, x.view(np.uint8)[:4])

    i = np.array([1, 0x3FC00000, 3], np.int32)
    f = np.zeros(1, np.float32)
    same_size[1, 1](i, f)
    print("int32 bits as float32:", f[0])

    n = np.zeros(1, np.int64)
    shape_of[1, 1](np.zeros(6, np.int32), n)
    print("6 int32 as int64:", n[0])
    for arr in (a[:, ::2], np.zeros(3, np.int32)):
        try:
            bits[1, 1](arr, r) if arr.ndim == 2 else shape_of[1, 1](arr, n)
        except ValueError as e:
            print("ValueError:", e)
