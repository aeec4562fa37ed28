# Global NumPy arrays are captured as constants when the kernel compiles (Numba's rule): every
# dtype, 1 to 3 dimensions, any layout of the global (F order, strided, negative strides and
# non-native byte order are read in C order as NumPy indexes them), NaN/inf/-0.0 bit for bit,
# shape/size/ndim/len, iteration, a module attribute, a device function reading one; changing
# the array after the first launch changes nothing; writes are refused at compile time.
import types

import numpy as np
import kiln

rng = np.random.default_rng(7)
DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
TABLES = {d: (rng.random((3, 4)) * 100 - 50).astype(d) if d != "bool" else rng.random((3, 4)) > 0.5
          for d in DTYPES}
SPECIAL = np.array([np.inf, -np.inf, np.nan, -0.0, 5e-324, 1.7976931348623157e308])
FORDER = np.asfortranarray(np.arange(24.0).reshape(2, 3, 4))
STRIDED = np.arange(20)[::3]
REVERSED = np.arange(6, dtype=np.int32)[::-1]
BIGENDIAN = np.arange(5, dtype=">f8") * 1.5
cfg = types.ModuleType("cfg")  # a module attribute: cfg.WEIGHTS
cfg.WEIGHTS = np.array([0.25, 0.5, 0.25])
LOOKUP = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int64)


def make_reader(table):
    @kiln.jit
    def read(out):
        i = kiln.grid(1)
        if i < table.size:
            out[i // table.shape[1], i % table.shape[1]] = table[i // table.shape[1], i % table.shape[1]]
    return read


@kiln.jit
def specials(out):
    i = kiln.grid(1)
    if i < SPECIAL.size:
        out[i] = SPECIAL[i]


@kiln.jit
def layouts(a, b, c, d):
    i = kiln.grid(1)
    if i < FORDER.shape[0] * FORDER.shape[1] * FORDER.shape[2]:
        x = i // 12
        y = (i // 4) % 3
        z = i % 4
        a[x, y, z] = FORDER[x, y, z]
    if i < len(STRIDED):
        b[i] = STRIDED[i]
    if i < REVERSED.size:
        c[i] = REVERSED[i]
    if i < BIGENDIAN.shape[0]:
        d[i] = BIGENDIAN[i]


@kiln.jit(device=True)
def smooth(x, i):
    s = 0.0
    for k in range(3):
        j = min(max(i + k - 1, 0), x.size - 1)
        s += cfg.WEIGHTS[k] * x[j]
    return s


@kiln.jit
def use(x, out, meta):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = smooth(x, i)
    if i == 0:
        total = 0
        for v in LOOKUP:
            total += v
        meta[0] = total
        meta[1] = LOOKUP.ndim
        t = LOOKUP
        meta[2] = t[-1]


@kiln.jit
def write_global(out):
    LOOKUP[0] = 1


@kiln.jit
def atomic_on_global(out):
    kiln.atomic.add(LOOKUP, 0, 1)


def main():
    for d in DTYPES:
        out = np.zeros((3, 4), d)
        make_reader(TABLES[d])[1, 12](out)
        print(d, "equal:", out.tobytes() == TABLES[d].tobytes())
    out = np.zeros(SPECIAL.size)
    specials[1, 8](out)
    print("specials bit for bit:", out.tobytes() == SPECIAL.tobytes())
    a, b = np.zeros((2, 3, 4)), np.zeros(len(STRIDED), np.int64)
    c, d = np.zeros(6, np.int32), np.zeros(5)
    layouts[1, 32](a, b, c, d)
    print("F order:", np.array_equal(a, FORDER), "strided:", np.array_equal(b, STRIDED),
          "reversed:", np.array_equal(c, REVERSED), "big-endian:", np.array_equal(d, BIGENDIAN))
    x = np.arange(6.0) ** 2
    out, meta = np.zeros(6), np.zeros(3, np.int64)
    use[1, 8](x, out, meta)
    want = [0.25 * x[max(i - 1, 0)] + 0.5 * x[i] + 0.25 * x[min(i + 1, 5)] for i in range(6)]
    print("device function:", np.allclose(out, want), "meta:", meta)
    # captured when compiled: a later change is not seen by the compiled kernel
    LOOKUP[:] = 0
    cfg.WEIGHTS[:] = 0
    use[1, 8](x, out, meta)
    print("after changing the globals:", np.allclose(out, want), meta)
    for k in (write_global, atomic_on_global):
        try:
            k[1, 1](out)
        except kiln.CompileError as e:
            print(str(e).splitlines()[0].split(": ", 1)[1])
