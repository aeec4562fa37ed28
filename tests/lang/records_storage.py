# records in shared and local memory and record-valued globals: kiln.shared.array and
# kiln.local.array of a record type (kiln.from_dtype(dt), or the structured dtype itself),
# whole records and fields copied through them, subarray fields of a local record; global
# NumPy arrays of records frozen into the program, plain and as kiln.const.array_like
# (an aligned layout with padding and an odd itemsize, and an empty one)
import numpy as np
import kiln

NESTED = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])
REC = kiln.from_dtype(NESTED)
ALIGNED = np.dtype([("a", np.uint8), ("b", np.float64), ("c", np.int16)], align=True)
BLOCK = 8

TABLE = np.array([(1.0, 2), (3.0, 4)], dtype=[("x", np.float64), ("y", np.int64)])
ODD = np.array([(1, 2, 3, 0xDEADBEEF, 8), (4, 5, 6, 0xBEEFDEAD, 10)],
               dtype=np.dtype([("a", np.uint8), ("b", np.uint8), ("x", np.uint8),
                               ("y", np.uint32), ("z", np.uint8)], align=True))
EMPTY = np.zeros(0, dtype=[("x", np.float64), ("y", np.int64)])


@kiln.jit
def reverse_blocks(x, y):
    sm = kiln.shared.array(BLOCK, dtype=REC)
    tx = kiln.threadIdx.x
    i = kiln.grid(1)
    if i < x.shape[0]:
        sm[tx] = x[i]
    kiln.syncthreads()
    if i < x.shape[0]:
        y[i] = sm[BLOCK - 1 - tx]


@kiln.jit
def shared_fields(x, out):
    sm = kiln.shared.array((2, BLOCK), dtype=ALIGNED)
    tx = kiln.threadIdx.x
    sm[0, tx].a = tx
    sm[0, tx].b = x[tx] * 0.5
    sm[0, tx].c = -tx
    sm[1, tx] = sm[0, tx]
    kiln.syncthreads()
    r = sm[1, BLOCK - 1 - tx]
    out[tx] = r.a + r.b + r.c


@kiln.jit
def local_records(x, y):
    i = kiln.grid(1)
    if i < x.shape[0]:
        loc = kiln.local.array(2, dtype=NESTED)   # the structured dtype itself
        loc[0] = x[i]
        loc[1].i = loc[0].i * 10
        for p in range(3):
            for q in range(2):
                loc[1].j[p, q] = loc[0].j[p, q] + p * 2 + q
        y[i] = loc[1]


@kiln.jit
def read_tables(xs, ys, odd, n):
    i = kiln.grid(1)
    c = kiln.const.array_like(ODD)
    e = kiln.const.array_like(EMPTY)
    if i < 2:
        xs[i] = TABLE[i].x
        ys[i] = TABLE[i]['y']
        odd[i, 0] = c[i].a
        odd[i, 1] = c[i]['b']
        odd[i, 2] = c[i].x
        odd[i, 3] = c[i].y
        odd[i, 4] = c[i].z
    if i == 0:
        n[0] = len(e)


def main():
    x = np.zeros(2 * BLOCK, NESTED)
    x["i"] = np.arange(2 * BLOCK)
    x["j"] = np.arange(2 * BLOCK * 6).reshape(2 * BLOCK, 3, 2)
    y = np.zeros_like(x)
    reverse_blocks[2, BLOCK](x, y)
    expect = x.reshape(2, BLOCK)[:, ::-1].reshape(-1)
    print("shared whole records:", y.tobytes() == expect.tobytes(), y[:2])
    out = np.zeros(BLOCK)
    shared_fields[1, BLOCK](np.arange(BLOCK, dtype=np.float64), out)
    t = np.arange(BLOCK)[::-1]
    print("shared fields:", out, np.array_equal(out, t + t * 0.5 - t))
    z = np.zeros_like(x)
    local_records[2, BLOCK](x, z)
    ej = x["j"] + np.array([[0, 1], [2, 3], [4, 5]])
    print("local records:", np.array_equal(z["i"], x["i"] * 10), np.array_equal(z["j"], ej))
    xs, ys = np.zeros(2), np.zeros(2, np.int64)
    odd, n = np.zeros((2, 5), np.float64), np.full(1, -1, np.int64)
    read_tables[1, 2](xs, ys, odd, n)
    print("frozen records:", xs, ys, n)
    print(odd.astype(np.int64).tolist())
    names = ODD.dtype.names
    print(np.array_equal(odd, np.array([[r[f] for f in names] for r in ODD], np.float64)))
    print(ODD.dtype.itemsize, [ODD.dtype.fields[f][1] for f in names])
