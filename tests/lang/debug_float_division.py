# debug=True: float division by zero raises ZeroDivisionError, as in Python (Numba's
# error model under debug=True): /, // and % on float64 and float32, the message naming
# the operation; without debug the same kernels give NumPy's inf and nan
import numpy as np
import kiln


def body(r, x, y):
    r[0] = y[0] / x[0]
    r[1] = y[0] // x[0]
    r[2] = y[0] % x[0]


checked = kiln.jit(debug=True)(body)
plain = kiln.jit(body)


@kiln.jit(debug=True)
def floor_only(r, x, y):
    r[0] = y[0] // x[0]


@kiln.jit(debug=True)
def mod_only(r, x, y):
    r[0] = y[0] % x[0]


def attempt(k, dt, xv):
    r = np.zeros(3, dt)
    try:
        k[1, 1](r, np.array([xv], dt), np.array([3.0], dt))
        print("ok", r.tolist())
    except ZeroDivisionError as e:
        print(f"{type(e).__name__}: {e}")


def main():
    for dt in (np.float64, np.float32):
        attempt(checked, dt, 2.0)
        attempt(checked, dt, 0.0)
        attempt(checked, dt, -0.0)
        attempt(floor_only, dt, 0.0)
        attempt(mod_only, dt, 0.0)
        with np.errstate(all="ignore"):
            attempt(plain, dt, 0.0)
