"""float16 conversions against NumPy's, exhaustively where it is cheap: every float16 bit
pattern widened, float32 and float64 values at and around every rounding midpoint narrowed
(rt_half.h's kiln_h2f, kiln_f2h, kiln_d2h), and scalar arguments rounded at the launch
(src/util/half.c).  KILN_CHECK_CUDA=1 compiles the same kernels for the GPU, whose
conversions are PTX cvt instructions."""
import numpy as np

import kiln


@kiln.jit
def widen(out, h):
    i = kiln.grid(1)
    if i < h.size:
        out[i] = h[i]


@kiln.jit
def narrow(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = x[i]


@kiln.jit("void(float16[::1], float16)")
def store_scalar(out, s):
    out[kiln.grid(1)] = s


def _launch(k, out, x):
    k[(x.size + 255) // 256, 256](out, x)
    return out


def _bits_equal(got, want):
    g, w = got.view(np.uint16), want.view(np.uint16)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    bad = np.flatnonzero(g[~nan] != w[~nan])
    assert bad.size == 0, (want[~nan][bad[:5]], got[~nan][bad[:5]])


def test_every_float16_widens_exactly():
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    for dt in (np.float32, np.float64):
        got = _launch(widen, np.zeros(h.size, dt), h)
        want = h.astype(dt)
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def _around_midpoints(dt):
    """Every finite float16, the midpoints between neighbours (ties go to even), and the
    values one step of dt below and above each: where rounding twice would go wrong."""
    h = np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    mids = (h[:-1] + h[1:]) / 2
    top = np.array([65504.0, 65520.0, 65536.0, 1e6, np.inf, np.nan])
    v = np.concatenate([h, mids, top]).astype(dt)
    v = np.concatenate([v, np.nextafter(v, dt(np.inf)), np.nextafter(v, dt(0))])
    return np.concatenate([v, -v])


def test_float32_and_float64_narrow_as_numpy():
    for dt in (np.float32, np.float64):
        x = _around_midpoints(dt)
        with np.errstate(over="ignore"):
            want = x.astype(np.float16)
        _bits_equal(_launch(narrow, np.zeros(x.size, np.float16), x), want)


def test_integers_narrow_as_numpy():
    x = np.concatenate([np.arange(-70000, 70000, 7), [2**24 + 1, 2**62, -2**63]]).astype(np.int64)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    _bits_equal(_launch(narrow, np.zeros(x.size, np.float16), x), want)


def test_scalar_arguments_round_once_as_np_float16():
    x = _around_midpoints(np.float64)[::97]
    out = np.zeros(1, np.float16)
    got = np.zeros(x.size, np.float16)
    for i, v in enumerate(x):
        store_scalar[1, 1](out, float(v))
        got[i] = out[0]
    with np.errstate(over="ignore"):
        _bits_equal(got, x.astype(np.float16))
