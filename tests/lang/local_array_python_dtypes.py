# kiln.local.array and kiln.shared.array take Python's float, int, bool and complex as
# NumPy does (np.dtype(float) is float64), besides NumPy's types and dtype strings
# (hunt31: dtype=float was "must be a scalar type")
import numpy as np
import kiln


@kiln.jit
def k(out):
    i = kiln.grid(1)
    f = kiln.local.array(2, dtype=float)
    n = kiln.local.array(2, dtype=int)
    b = kiln.local.array(2, dtype=bool)
    z = kiln.local.array(2, dtype=complex)
    s = kiln.shared.array(4, dtype=float)
    f[0] = 0.1
    n[0] = 2**40
    b[0] = True
    z[0] = 1.5 + 2j
    s[i] = f[0] * 2
    kiln.syncthreads()
    if i == 0:
        out[0] = f[0]
        out[1] = n[0]
        out[2] = b[0]
        out[3] = z[0].imag
        out[4] = s[3]


def main():
    out = np.zeros(5)
    k[1, 4](out)
    print(out.tolist())
