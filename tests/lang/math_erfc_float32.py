# math.erfc on float32: the C library's on the CPU; on the GPU kiln's own precise
# sequence (rt_mathf.h, within libdevice's 4 ulp), which KILN_CHECK_CUDA compiles here
# (no subnormal results: tier 0 on the CPU flushes them)
import math

import numpy as np
import kiln


@kiln.jit
def k(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = math.erfc(x[i])


def main():
    x = np.array([-math.inf, -3.0, -0.5, -0.0, 0.0, 1e-45, 0.5, 1.0, 4.0, 9.0, 10.06, math.inf,
                  math.nan], np.float32)
    out = np.zeros_like(x)
    k[1, 32](out, x)
    print(out.dtype, [float(np.format_float_scientific(v, 6)) for v in out])
    ref = np.array([math.erfc(float(v)) for v in x[:-1]])
    print(bool(np.all(np.abs(out[:-1] - ref) <= 4 * np.spacing(np.abs(ref.astype(np.float32))))))
