# A Python number compares exactly with a float32 or float16 value (in float64), as Python
# and Numba compare: float32(0.1) > 0.1 is True (the float32 is 0.100000001...), and
# 16777216 < 16777217 stays True; NumPy 2 would round the literal to float32 first
import numpy as np
import kiln


@kiln.jit
def k(o, x, h):
    i = kiln.grid(1)
    if i < x.size:
        t = 0.1
        o[i, 0] = x[i] > 0.1
        o[i, 1] = x[i] == 0.1
        o[i, 2] = x[i] < 16777217
        o[i, 3] = x[i] == 16777217
        o[i, 4] = 0.1 < x[i] <= 1.96
        o[i, 5] = h[i] == 0.1
        o[i, 6] = x[i] >= t
        o[i, 7] = x[i] == np.float32(0.1)


def main():
    x = np.array([0.1, 16777216.0, 1.96, 0.05], np.float32)
    h = np.array([0.1, 2.0, 1.96, 0.05], np.float16)
    o = np.zeros((4, 8), np.bool_)
    k[1, 4](o, x, h)
    want = [[float(v) > 0.1, float(v) == 0.1, float(v) < 16777217, float(v) == 16777217,
             0.1 < float(v) <= 1.96, float(w) == 0.1, float(v) >= 0.1, v == np.float32(0.1)]
            for v, w in zip(x, h)]
    print(o.tolist() == want, o.astype(int).tolist())
