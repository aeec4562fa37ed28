# arrays of records (NumPy structured dtypes): fields of every scalar kind, aligned and
# packed layouts, subarray fields, a[i].f and a[i]['f'] read and written, a record taken
# from an array is a reference, a record argument is passed by reference, whole records
# copied
import numpy as np
import kiln

ALIGNED = np.dtype([("flag", np.bool_), ("i8", np.int8), ("u16", np.uint16), ("i32", np.int32),
                    ("u64", np.uint64), ("h", np.float16), ("f", np.float32), ("d", np.float64),
                    ("c", np.complex64), ("z", np.complex128), ("v", np.float32, (3,)),
                    ("m", np.int16, (2, 3))], align=True)
PACKED = np.dtype([("a", np.int8), ("b", np.float64), ("c", np.int32)])  # b at byte 1


@kiln.jit
def fields(a, out):
    i = kiln.grid(1)
    if i < a.shape[0]:
        r = a[i]                      # a reference: writes reach a[i]
        r.flag = not r.flag
        r.i8 = r.i8 - 3
        r['u16'] = r['u16'] + 1000
        r.i32 *= 2
        a[i].u64 = a[i].u64 + 10
        r.h = r.h * 2
        r.f += 0.5
        a[i]['d'] = r.d / 4
        r.c = r.c * 1j
        r.z = r.z + complex(1, 1)
        for k in range(3):
            r.v[k] = r.v[k] + k
        for p in range(2):
            for q in range(3):
                r.m[p, q] = p * 10 + q
        out[i] = r.i32 + r.f + r.v[2] + r.m[1, 2]


@kiln.jit
def packed(a):
    i = kiln.grid(1)
    if i < a.shape[0]:
        a[i].b = a[i].b * 2 + a[i].a
        a[i].c = a[i].c + 1


# a packed record's misaligned fields are read byte-wise on the CPU; the GPU refuses them
# (test_records.py), so KILN_CHECK_CUDA leaves this kernel out
packed._cpu_only = True


@kiln.jit
def set_field(r, v):
    r.d = v


@kiln.jit
def copy_rec(a, i, j):
    a[i] = a[j]


@kiln.jit
def by_position(a, out):
    out[0] = a[1][3]          # the fourth field, i32


def main():
    a = np.zeros(3, ALIGNED)
    for i in range(3):
        a[i] = (i % 2 == 0, i, 60000 + i, 7 * i, 2**63 + i, 1.5 * i, i / 4, 10.0 * i,
                complex(i, 1), complex(2, i), (i, 2 * i, 3 * i), 0)
    out = np.zeros(3, np.float64)
    fields[1, 3](a, out)
    for r in a:
        print(r)
    print(out)
    p = np.zeros(4, PACKED)
    p['a'] = [1, 2, 3, 4]
    p['b'] = [0.5, 1.5, 2.5, 3.5]
    p['c'] = [10, 20, 30, 40]
    packed[1, 4](p)
    print(PACKED.itemsize, p)
    b = a.copy()
    set_field[1, 1](b[1], 123.25)
    print(b['d'])
    copy_rec[1, 1](b, 0, 2)
    print(b[0] == b[2], b[0] == a[2])
    o = np.zeros(1, np.int32)
    by_position[1, 1](a, o)
    print(o)
