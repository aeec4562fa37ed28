# Warp shuffles and votes on the CPU target (blocks as fibers, rt_blocks.h): lanes are the
# block's threads in linear order, 32 to a warp; a short last warp is allowed.  A warp-sum
# reduction with shfl_down_sync, each shuffle kind on int32/int64/float32/float64 values,
# ballot/all/any with masks, activemask (also inside a branch: the lanes that took it), laneid
# on 2-D blocks; diffed against NumPy.
import numpy as np
import kiln


@kiln.jit
def warp_sums(a, out):
    i = kiln.grid(1)
    v = a[i] if i < a.size else 0.0
    off = 16
    while off > 0:
        v += kiln.shfl_down_sync(0xffffffff, v, off)
        off //= 2
    if kiln.laneid == 0:
        out[i // 32] = v


@kiln.jit
def kinds(a, b, out):
    i = kiln.grid(1)
    lane = kiln.laneid
    out[i, 0] = kiln.shfl_sync(0xffffffff, a[i], 3)
    out[i, 1] = kiln.shfl_up_sync(0xffffffff, a[i], 2)
    out[i, 2] = kiln.shfl_down_sync(0xffffffff, a[i], 5)
    out[i, 3] = kiln.shfl_xor_sync(0xffffffff, a[i], 1)
    out[i, 4] = kiln.shfl_sync(0xffffffff, b[i], 31 - lane) > 0.5
    out[i, 5] = kiln.shfl_xor_sync(0xffffffff, np.float32(b[i]), 16) > 0.5


@kiln.jit
def votes(a, out):
    i = kiln.grid(1)
    m = kiln.activemask()
    out[i, 0] = kiln.ballot_sync(m, a[i] > 0)
    out[i, 1] = kiln.all_sync(m, a[i] >= 0)
    if kiln.laneid < 4:  # a thread calls a vote only with a mask that names it (CUDA)
        out[i, 2] = kiln.any_sync(0x0000000f, a[i] > 5)
    out[i, 3] = m
    out[i, 4] = kiln.laneid


@kiln.jit
def lanes2d(out):
    x = kiln.threadIdx.x
    y = kiln.threadIdx.y
    out[y, x] = kiln.laneid + 100 * (kiln.activemask() == 0xffffffff)


@kiln.jit
def diverged(out):
    i = kiln.grid(1)
    if i % 2 == 0:
        out[i] = kiln.activemask()   # the even lanes take this side together
    else:
        out[i] = kiln.activemask()


def shuffled(v, lanes, kind, arg):
    # each lane's expected value, and whether it is defined: a source lane past the end of a
    # short warp names a thread that does not exist, which CUDA leaves undefined (the CPU
    # target gives the lane its own value); a source outside 0-31 is the lane's own value
    r = v.copy()
    ok = np.ones(len(v), bool)
    for w in range(0, len(v), 32):
        n = min(32, len(v) - w)
        for l in range(n):
            s = {"idx": arg, "up": l - arg, "down": l + arg, "xor": l ^ arg}[kind]
            if 0 <= s < 32 and s < n:
                r[w + l] = v[w + s]
            elif 0 <= s < 32:
                ok[w + l] = False
    return r, ok


def same(got, want):
    r, ok = want
    return bool((got[ok] == r[ok]).all())


def main():
    rng = np.random.default_rng(3)
    a = rng.random(200)
    out = np.zeros(8)
    warp_sums[2, 128](a, out)
    print("warp sums:", np.allclose(out, np.pad(a, (0, 56)).reshape(8, 32).sum(axis=1)))
    n = 48   # one full warp and a short one of 16
    ia = np.arange(n, dtype=np.int64) * 7
    fb = rng.random(n)
    o = np.zeros((n, 6), np.int64)
    kinds[1, n](ia, fb, o)
    lanes = np.arange(n) % 32
    print("shfl_sync:", same(o[:, 0], shuffled(ia, lanes, "idx", 3)))
    print("shfl_up_sync:", same(o[:, 1], shuffled(ia, lanes, "up", 2)))
    print("shfl_down_sync:", same(o[:, 2], shuffled(ia, lanes, "down", 5)))
    print("shfl_xor_sync:", same(o[:, 3], shuffled(ia, lanes, "xor", 1)))
    rev = np.array([fb[w + 31 - l] for w in range(0, n, 32) for l in range(min(32, n - w))
                    if w + 31 - l < n])
    full = np.array([w + 31 - l < n for w in range(0, n, 32) for l in range(min(32, n - w))])
    print("float64 shuffle:", (o[full, 4] == (rev > 0.5)).all())
    x16, ok = shuffled(fb.astype(np.float32), lanes, "xor", 16)
    print("float32 shuffle:", same(o[:, 5], (x16 > 0.5, ok)))
    v = np.array([1, 0, 3, 0, 7, 0, 0, 0] * 5, np.int64)[:36]
    vo = np.zeros((36, 5), np.int64)
    votes[1, 36](v, vo)
    print("ballot:", hex(vo[0, 0]), hex(vo[35, 0]), "all:", vo[0, 1], "any in lanes 0-3:",
          vo[0, 2], vo[33, 2], "activemask:", hex(vo[0, 3]), hex(vo[35, 3]), "laneid:",
          vo[33, 4])
    q = np.zeros((5, 8), np.int64)
    lanes2d[1, (8, 5)](q)
    print("laneid on 2-D blocks:", q[4].tolist())
    d = np.zeros(40, np.uint32)
    diverged[1, 40](d)
    print("activemask in a branch:", [hex(x) for x in d[:2]], [hex(x) for x in d[32:34]])
