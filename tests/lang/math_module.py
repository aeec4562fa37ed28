# math.* and numpy.* scalar functions and constants, float32 stays float32
import math

import numpy as np
import kiln


@kiln.jit
def k(out, x):
    out[0] = math.sqrt(x) + math.exp(x) + math.log(x) + math.log(x, 2.0)
    out[1] = math.sin(x) * math.cos(x) + math.tan(x) + math.atan2(x, 2.0)
    out[2] = math.floor(-2.5) + math.ceil(2.1) + math.trunc(-2.7)
    out[3] = math.pi + math.e
    out[4] = math.isnan(math.nan) + math.isinf(math.inf) + math.isfinite(x)
    out[5] = np.floor(x) + np.sqrt(x) + np.minimum(x, 1.0) + np.maximum(x, 1.0)
    out[6] = math.erf(x) + math.gamma(x) + math.lgamma(x) + math.hypot(3.0, 4.0)
    out[7] = math.pow(x, 2) + math.fmod(7.5, 2.0) + math.copysign(1.0, -0.0)


def main():
    out = np.zeros(8, np.float32)
    k[1, 1](out, np.float32(1.25))
    print([round(float(v), 4) for v in out])
    print(k.inspect_types(file=False), end="")
