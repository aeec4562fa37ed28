# A local assigned an integer constant once may give a shared or local array its shape, as in
# Numba-CUDA's test_sync (`N = 100; sm = cuda.shared.array(N, int32)`), also after a
# rebinding no use sees together with it (`N = 10; N = 20`: two variables, syms.c); a local
# whose value at the shape may be either of two is not a constant and the shape is refused.
import numpy as np
import kiln


@kiln.jit
def k(out):
    N = 100
    M = 4
    sm = kiln.shared.array(N, kiln.int32)
    lo = kiln.local.array((M, 2), kiln.float64)
    i = kiln.grid(1)
    if i == 0:
        for j in range(N):
            sm[j] = j
    kiln.syncthreads()
    lo[M - 1, 1] = sm[i] * 2
    out[i] = lo[3, 1] + sm.size + lo.shape[0]


@kiln.jit
def rebound(out):
    N = 10
    out[1] = N
    N = 20
    sm = kiln.local.array(N, kiln.int32)
    out[0] = sm.size


@kiln.jit
def twice(out):
    N = 10
    if out[0] > 0:
        N = 20
    sm = kiln.local.array(N, kiln.int32)
    out[0] = sm[0]


def main():
    out = np.zeros(8)
    k[1, 8](out)
    print(out.tolist())
    r = np.zeros(2)
    rebound[1, 1](r)
    print(r.tolist())
    try:
        twice[1, 1](out)
    except kiln.CompileError as e:
        print(str(e).splitlines()[0])
