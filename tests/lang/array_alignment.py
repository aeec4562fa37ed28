# alignment= of kiln.local.array and kiln.shared.array (Numba's keyword): a power of two,
# from a literal or a global, or None; records keep their 16 bytes.  The arrays work as
# any others; the generated declaration carries the alignment.  Then the errors: a value
# that is not a power of two, too large, not an integer.
import numpy as np
import kiln

ALIGN = 256
rec = np.dtype([("a", np.uint8), ("b", np.int32)], align=True)


def k(out):
    i = kiln.grid(1)
    a = kiln.local.array(5, np.uint8, alignment=ALIGN)
    b = kiln.local.array((2, 3), dtype=np.float64, alignment=64)
    r = kiln.local.array(3, dtype=rec, alignment=4)
    c = kiln.local.array(3, dtype=np.float32, alignment=None)
    s = kiln.shared.array((4, 2), np.int32, alignment=128)
    for j in range(5):
        a[j] = j
    b[1, 2] = 2.5
    r[1].b = 7
    c[2] = 0.5
    s[i, 1] = i
    out[i] = a[4] + b[1, 2] + r[1].b + c[2] + s[i, 1]


def bad(value):
    def f(out):
        x = kiln.shared.array(1, np.uint8, alignment=value)
        out[0] = x[0]
    return f


def main():
    out = np.zeros(4)
    kernel = kiln.jit(k)
    kernel[1, 4](out)
    print(out.tolist())
    src = kernel.inspect_source()
    print([w for w in ("_Alignas(256) u8", "_Alignas(64) f64", "_Alignas(16) KR", "f32 lst")
           if w in src])
    for value in (0, 3, -16, 8192, 2.0, True):
        try:
            kiln.jit(bad(value))[1, 1](np.zeros(1))
        except kiln.CompileError as e:
            lines = str(e).splitlines()
            print(lines[0].split("error: ")[1], "/", lines[1])
