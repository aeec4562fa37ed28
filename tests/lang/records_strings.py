# NumPy fixed-width strings: kernels store string constants into elements of bytes ('S')
# and unicode ('U') arrays and into string fields of records, as NumPy stores them (cut
# at the width, padded with zeros); whole records with string fields copy as bytes
import numpy as np
import kiln

REC = np.dtype([("x", np.int32), ("name", "U6"), ("tag", "S4"), ("y", np.float32)])
PACKED = np.dtype([("k", np.int8), ("s", "S3")])


@kiln.jit
def fill(u, s):
    i = kiln.grid(1)
    if i < u.shape[0] - 1:
        u[i] = "XYZ"
        s[i] = b"XYZ"
    if i == 0:
        u[u.shape[0] - 1] = "héllo wörld, too long"   # cut at 12 code points
        s[s.shape[0] - 1] = b"0123456789abcdef"


@kiln.jit
def records(a):
    a[0].x = 1
    a[0]['name'] = "ABC"
    a[0].tag = b"ab"
    a[1].x = 2
    a[1].name = "ÅÄÖ–✓x!"
    a[1]['tag'] = b"abcdef"
    a[1].y = 2.5
    a[2] = a[1]


@kiln.jit
def packed(p):
    i = kiln.grid(1)
    if i < p.shape[0]:
        p[i].s = b"hey"
        p[i].k = i


def main():
    u = np.zeros(5, "<U12")
    s = np.zeros(5, "S12")
    fill[1, 8](u, s)
    print(u)
    print(s)
    a = np.zeros(3, REC)
    records[1, 1](a)
    print(a)
    ref = np.array([(1, "ABC", b"ab", 0), (2, "ÅÄÖ–✓x!", b"abcdef", 2.5),
                    (2, "ÅÄÖ–✓x!", b"abcdef", 2.5)], REC)
    print(np.array_equal(a, ref), a.tobytes() == ref.tobytes())
    p = np.zeros(3, PACKED)
    packed[1, 3](p)
    print(p)
