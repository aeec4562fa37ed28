# A kernel's default parameter values are filled in at launch, as Numba's dispatcher does
# (the kernel is typed for the values given); too few arguments without defaults for them
# is still a TypeError naming the count
import numpy as np
import kiln


@kiln.jit
def scale(x, out, factor=2.0, shift=1):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = x[i] * factor + shift


def main():
    x = np.arange(4.0)
    out = np.zeros(4)
    scale[1, 32](x, out)
    print(out.tolist())
    scale[1, 32](x, out, 3.0)
    print(out.tolist())
    scale[1, 32](x, out, 3.0, 0)
    print(out.tolist())
    try:
        scale[1, 32](x)
    except TypeError as e:
        print("TypeError:", e)
