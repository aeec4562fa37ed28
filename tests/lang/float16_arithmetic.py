# float16: arrays, scalars, arithmetic rounded per operation, promotion, conversions,
# comparisons, local arrays, against NumPy's float16 bit for bit
import numpy as np
import kiln


@kiln.jit
def arith(out, a, b, s):
    i = kiln.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[0, i] = x + y
        out[1, i] = x - y
        out[2, i] = x * y
        out[3, i] = x / y
        out[4, i] = x * y + s          # two roundings, as NumPy does
        out[5, i] = -x
        out[6, i] = abs(y)
        out[7, i] = x * 3              # a Python int stays float16 (NEP 50)
        out[8, i] = x + 0.1            # a Python float too
        out[9, i] = x // y
        out[10, i] = x % y
        t = x
        t += y
        t *= y
        out[11, i] = t
        out[12, i] = np.float16(1000.0) * x + np.float16(0.1)
        out[13, i] = max(x, y)


@kiln.jit
def mixed(o32, o16, c, a, f, i8, i16):
    i = kiln.grid(1)
    if i < a.size:
        o32[0, i] = a[i] + f[i]        # float16 with float32: float32
        o16[0, i] = a[i] + i8[i]       # with int8: float16
        o32[1, i] = a[i] + i16[i]      # with int16: float32
        c[0, i] = a[i] < f[i]
        c[1, i] = a[i] == i8[i]
        c[2, i] = a[i] >= a[i] * i8[i]


@kiln.jit
def convert(h, d, i64, u8, f32, f64, src16):
    i = kiln.grid(1)
    if i < d.size:
        h[0, i] = d[i]                 # float64 -> float16, rounded once
        h[1, i] = i64[i]
        h[2, i] = u8[i]
        h[3, i] = f32[i]
        h[4, i] = kiln.float16(d[i] * 2.0)
        f64[i] = src16[i]
        f32[i] = src16[i]
        i64[i] = np.int64(src16[i])
        u8[i] = np.uint8(abs(src16[i]) % 200)


@kiln.jit
def local_sum(out, a):
    i = kiln.grid(1)
    if i < out.size:
        buf = kiln.local.array(4, kiln.float16)
        for k in range(4):
            buf[k] = a[(i + k) % a.size]
        acc = np.float16(0)
        for k in range(4):
            acc += buf[k]
        out[i] = acc


def same(got, want):
    """How many results differ from NumPy's (NaN equals NaN)."""
    got, want = np.asarray(got), np.asarray(want)
    return int(np.sum(~((got == want) | (np.isnan(got) & np.isnan(want)))))


def main():
    rng = np.random.default_rng(7)
    n = 4096
    a = (rng.standard_normal(n) * 40).astype(np.float16)
    b = (rng.standard_normal(n) * 3).astype(np.float16)
    b[b == 0] = np.float16(1)
    a[:4] = [np.inf, -np.inf, 65504, 6e-8]   # inf, the largest and a subnormal
    s = np.float16(0.3)
    out = np.zeros((14, n), np.float16)
    arith[(n + 255) // 256, 256](out, a, b, s)
    with np.errstate(all="ignore"):
        t = (a + b) * b
        want = [a + b, a - b, a * b, a / b, a * b + s, -a, abs(b), a * np.float16(3),
                a + np.float16(0.1), a // b, a % b, t,
                np.float16(1000) * a + np.float16(0.1), np.maximum(a, b)]
    print("arithmetic, differing from NumPy:", [same(out[k], want[k]) for k in range(14)])

    f = rng.standard_normal(n).astype(np.float32)
    i8 = rng.integers(-128, 128, n).astype(np.int8)
    i16 = rng.integers(-30000, 30000, n).astype(np.int16)
    o32 = np.zeros((2, n), np.float32)
    o16 = np.zeros((1, n), np.float16)
    c = np.zeros((3, n), np.bool_)
    mixed[(n + 255) // 256, 256](o32, o16, c, a, f, i8, i16)
    with np.errstate(all="ignore"):
        print("mixed:", same(o32[0], a + f), same(o16[0], a + i8), same(o32[1], a + i16),
              same(c[0], a < f), same(c[1], a == i8), same(c[2], a >= a * i8))
        print("result types as NumPy's:", (a + f).dtype, (a + i8).dtype, (a + i16).dtype)

    d = rng.standard_normal(n) * 1000
    d[:6] = [65519.99, 65520.0, 2.0 ** -25, 2.0 ** -25 * 1.0000001, 1 + 2.0 ** -11, 1e300]
    i64 = rng.integers(-70000, 70000, n)
    u8 = rng.integers(0, 256, n).astype(np.uint8)
    f32 = (rng.standard_normal(n) * 100).astype(np.float32)
    h = np.zeros((5, n), np.float16)
    f64o = np.zeros(n)
    src16 = (rng.standard_normal(n) * 300).astype(np.float16)
    i64c, u8c, f32c = i64.copy(), u8.copy(), f32.copy()
    convert[(n + 255) // 256, 256](h, d, i64, u8, f32, f64o, src16)
    with np.errstate(all="ignore"):
        print("to float16:", same(h[0], d.astype(np.float16)), same(h[1], i64c.astype(np.float16)),
              same(h[2], u8c.astype(np.float16)), same(h[3], f32c.astype(np.float16)),
              same(h[4], (d * 2.0).astype(np.float16)))
    print("from float16:", same(f64o, src16.astype(np.float64)), same(f32, src16.astype(np.float32)),
          same(i64, src16.astype(np.int64)), same(u8, (abs(src16) % np.float16(200)).astype(np.uint8)))

    ls = np.zeros(64, np.float16)
    local_sum[1, 64](ls, a[4:68])
    x = a[4:68]
    ref = np.zeros(64, np.float16)
    for k in range(4):
        ref += x[(np.arange(64) + k) % 64]
    print("local array:", same(ls, ref))
    print(arith.inspect_types(file=False), end="")
    print(mixed.inspect_types(file=False), end="")
