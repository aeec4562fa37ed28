# range() as Python counts it, also at the limits of the counter's type: a range whose
# last value is within one step of int64's or uint64's limit ends (the counter does not
# wrap around and run on); uint64 bounds with a bound that may be negative (a signed
# argument, a negative literal) count in int64, as Numba's range of mixed bounds does;
# and a right shift of a negative value by a negative count is -1, as in NumPy.
import numpy as np
import kiln


@kiln.jit
def count(out, lo, hi, step):
    c = 0
    last = lo - lo
    for i in range(lo, hi, step):
        c += 1
        last = i
        if c > 1000:  # a wrapped counter would run on: stop it and show it
            break
    out[0] = c
    out[1] = last


@kiln.jit
def count4(out, lo, hi):
    c = 0
    for i in range(lo, hi, 4):
        c += 1
        if c > 1000:
            break
    out[0] = c


@kiln.jit
def down_to_zero(out, n):
    c = 0
    for i in range(n, -1, -1):
        out[c] = i
        c += 1


@kiln.jit
def shift(out, x, n):
    out[0] = x >> n


def main():
    I, U = np.int64, np.uint64
    big, top = 2**63 - 1, 2**64 - 1
    cases = [
        (I(big - 10), I(big), I(4)),
        (I(-big - 1 + 10), I(-big - 1), I(-4)),
        (U(top - 10), U(top), U(4)),
        (I(0), I(big), I(2**62)),
        (I(-big - 1), I(big), I(2**62)),
        (I(big - 3), I(big), I(1)),
        (I(-2), U(3), I(1)),
        (U(3), I(-2), I(-1)),
        (I(7), I(-8), I(-3)),
        (I(0), I(10), I(3)),
    ]
    for lo, hi, step in cases:
        out = np.zeros(2, np.int64)
        count[1, 1](out, lo, hi, step)
        r = range(int(lo), int(hi), int(step))
        want = (len(r), r[-1] % 2**64 if len(r) else 0)  # out holds a uint64 as int64
        got = (int(out[0]), int(out[1]) % 2**64 if out[0] <= 1000 else None)
        print(f"range({int(lo)}, {int(hi)}, {int(step)}):", got[0], "ok" if got == want else f"WRONG {got} {want}")
    out = np.zeros(2, np.int64)
    count4[1, 1](out, I(big - 10), I(big))
    print("constant step 4 at the top:", out[0])
    for dt in (np.uint64, np.uint32, np.int64):
        out = np.full(6, -7, np.int64)
        down_to_zero[1, 1](out, dt(3))
        print(f"range({dt.__name__}(3), -1, -1):", out[:5].tolist())
    for dt in (np.int8, np.int32, np.int64):
        out = np.zeros(1, np.int64)
        shift[1, 1](out, dt(-5), dt(-1))
        print(f"{dt.__name__}(-5) >> -1:", out[0], np.right_shift(dt(-5), dt(-1)))

