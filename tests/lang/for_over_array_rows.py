# for loops over an element or slice of an array (x[i], x[i, 1:], x[i][::-1]), also in
# enumerate, zip and reversed, as Numba allows (hunt19 5: "kernels cannot loop over this");
# over a scalar element it is a clear error
import numpy as np
import kiln as cuda


@cuda.jit
def k(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        s = 0.0
        for v in x[i]:
            s += v
        out[i, 0] = s
        s = 0.0
        for j, v in enumerate(x[i, 1:]):
            s += v * j
        out[i, 1] = s
        s = 0.0
        for a, b in zip(x[i], x[i][::-1]):
            s += a * b
        out[i, 2] = s
        s = 0.0
        for v in reversed(x[i]):
            s = s * 100 + v
        out[i, 3] = s


@cuda.jit
def scalar(x, out):
    for v in x[0]:
        out[0] = v


def main():
    x = np.arange(12.0).reshape(3, 4)
    out = np.zeros((3, 4))
    k[1, 3](x, out)
    want = []
    for r in x:
        s = 0.0
        for v in r[::-1]:
            s = s * 100 + v
        want.append([r.sum(), sum(v * j for j, v in enumerate(r[1:])), (r * r[::-1]).sum(), s])
    print(np.allclose(out, want), out[2].tolist())
    try:
        scalar[1, 1](np.zeros(3), np.zeros(1))
    except cuda.CompileError as e:
        print(str(e).splitlines()[0].split("error: ")[1])
