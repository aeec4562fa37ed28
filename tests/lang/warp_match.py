# match_any_sync, match_all_sync, eq_sync and lanemask_lt (Numba's warp intrinsics), on a full
# warp and a short one of 10 lanes, with int32, int64, float32 and float64 values; diffed
# against what NumPy computes from the same inputs.
import numpy as np
import kiln


@kiln.jit
def match_any(vals, out):
    i = kiln.grid(1)
    if i < vals.size:
        out[i] = kiln.match_any_sync(0xFFFFFFFF, vals[i])


@kiln.jit
def match_all(vals, out, pred):
    i = kiln.grid(1)
    if i < vals.size:
        m, p = kiln.match_all_sync(0xFFFFFFFF, vals[i])
        out[i] = m
        pred[i] = p


@kiln.jit
def eq_and_lanes(vals, eq, lt):
    i = kiln.grid(1)
    if i < vals.size:
        eq[i] = kiln.eq_sync(0xFFFFFFFF, vals[i])
        lt[i] = kiln.lanemask_lt()


def expect_any(v):
    out = np.zeros(len(v), np.uint32)
    for w in range(0, len(v), 32):
        seg = v[w:w + 32]
        for l in range(len(seg)):
            out[w + l] = sum(1 << k for k in range(len(seg)) if seg[k] == seg[l])
    return out


def main():
    rng = np.random.default_rng(5)
    for dt in (np.int32, np.int64, np.float32, np.float64):
        for n in (32, 10):
            v = rng.integers(0, 3, n).astype(dt)
            o = np.zeros(n, np.uint32)
            match_any[1, n](v, o)
            ok_any = (o == expect_any(v)).all()
            m = np.zeros(n, np.uint32)
            p = np.zeros(n, np.bool_)
            match_all[1, n](v, m, p)
            same = np.full(n, 7, dt)
            m2 = np.zeros(n, np.uint32)
            p2 = np.zeros(n, np.bool_)
            match_all[1, n](same, m2, p2)
            full = (1 << n) - 1
            ok_all = (not p.any() and (m == 0).all() and p2.all() and (m2 == full).all())
            print(dt.__name__, n, "match_any:", ok_any, "match_all:", ok_all)
    flags = np.zeros(32, np.int32)
    eq = np.zeros(32, np.bool_)
    lt = np.zeros(32, np.uint32)
    eq_and_lanes[1, 32](flags, eq, lt)
    print("eq_sync all zero:", eq.all())
    flags[3] = 1
    eq_and_lanes[1, 32](flags, eq, lt)
    print("eq_sync one differs:", not eq.any())
    print("lanemask_lt:", (lt == np.array([(1 << l) - 1 for l in range(32)], np.uint32)).all())
