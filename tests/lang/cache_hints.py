# loads and stores with a cache hint (Numba's cuda.ldcs, cuda.stcs ...): on the CPU the
# element is read and written as any subscript; every dtype they take, 1-D and 2-D
# arrays, indices as ints, tuples written out and tuple values, and a pointer argument
import numpy as np
import kiln


@kiln.jit
def hinted(r, x, y2, r2):
    for i in range(len(r)):
        r[i] = kiln.ldca(x, i) + kiln.ldcg(x, i) + kiln.ldcs(x, i) + kiln.ldlu(x, i) + kiln.ldcv(x, i)
        kiln.stcs(r2, (i, 0), kiln.ldcs(y2, (i, 1)))
        t = (i, 1)
        kiln.stwt(r2, t, kiln.ldcg(y2, t) * 2)
        kiln.stcg(r, i, r[i] + 1)
        kiln.stwb(r, i, kiln.ldcv(r, i) - 1)


@kiln.jit("void(float32*, float32[::1], int64)")
def through_pointer(ptr, r, n):
    for i in range(n):
        r[i] = kiln.ldcs(ptr, i)
        kiln.stcg(ptr, i, r[i] + 1)


def main():
    for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
               np.uint64, np.float16, np.float32, np.float64):
        x = np.arange(5).astype(dt)
        r = np.zeros_like(x)
        y2 = np.arange(10).reshape(5, 2).astype(dt)
        r2 = np.zeros_like(y2)
        hinted[1, 1](r, x, y2, r2)
        print(np.dtype(dt).name, r.tolist(), r2.tolist())
    x = np.arange(5, dtype=np.float32)
    r = np.zeros(5, np.float32)
    through_pointer[1, 1](x.ctypes.data, r, 5)
    print(r.tolist(), x.tolist())
