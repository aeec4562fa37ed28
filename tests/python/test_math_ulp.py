"""The precise path of every one-argument math function on float32, against float64
NumPy (and Python's math for erf, erfc, gamma, lgamma) over the whole float32 range:
inputs spread evenly over the bit patterns of both signs (every exponent), plus the
special values.  The error is in units in the last place, from the correctly rounded
float32 result (as CUDA counts it: 0 is correctly rounded).  The
bound is CUDA's documented one for its libdevice function (CUDA Math API, single
precision), which the GPU (pytest -m gpu) must meet; the CPU target calls the C library,
held to the same bound where glibc documents as good (its libm-test-ulps), else to
glibc's.  One kernel computes every function, so each target compiles once."""
import math

import numpy as np
import pytest

import kiln

# name: (CUDA's bound, the CPU's bound, inputs left out: (lo, hi) or None)
BOUNDS = {
    "sqrt": (0, 0, None), "cbrt": (1, 1, None), "exp": (2, 2, None), "exp2": (2, 2, None),
    "expm1": (1, 1, None), "log": (1, 1, None), "log2": (1, 1, None), "log10": (2, 2, None),
    "log1p": (1, 1, None), "sin": (2, 2, None), "cos": (2, 2, None), "tan": (4, 4, None),
    "asin": (2, 2, None), "acos": (2, 2, None), "atan": (2, 2, None), "sinh": (3, 3, None),
    "cosh": (2, 2, None), "tanh": (2, 2, None), "asinh": (3, 3, None), "acosh": (4, 4, None),
    "atanh": (3, 3, None), "erf": (2, 2, None), "erfc": (4, 4, None),
    # CUDA: 5 ulp for gamma; lgamma 6 ulp outside (-10.001, -2.264), where it has its zeros
    # (glibc documents 7 and 8 on x86_64).  Negative gamma arguments lose every digit to the
    # reduction near the poles in both libraries' float paths: left out below -10.001.
    "gamma": (5, 8, (-math.inf, 0.0)), "lgamma": (6, 7, (-10.001, -2.264)),
    "fabs": (0, 0, None),
}
NAMES = list(BOUNDS)


@kiln.jit
def every_math(out, x):
    i = kiln.grid(1)
    if i < x.size:
        v = x[i]
        out[0, i] = math.sqrt(v)
        out[1, i] = math.cbrt(v)
        out[2, i] = math.exp(v)
        out[3, i] = math.exp2(v)
        out[4, i] = math.expm1(v)
        out[5, i] = math.log(v)
        out[6, i] = math.log2(v)
        out[7, i] = math.log10(v)
        out[8, i] = math.log1p(v)
        out[9, i] = math.sin(v)
        out[10, i] = math.cos(v)
        out[11, i] = math.tan(v)
        out[12, i] = math.asin(v)
        out[13, i] = math.acos(v)
        out[14, i] = math.atan(v)
        out[15, i] = math.sinh(v)
        out[16, i] = math.cosh(v)
        out[17, i] = math.tanh(v)
        out[18, i] = math.asinh(v)
        out[19, i] = math.acosh(v)
        out[20, i] = math.atanh(v)
        out[21, i] = math.erf(v)
        out[22, i] = math.erfc(v)
        out[23, i] = math.gamma(v)
        out[24, i] = math.lgamma(v)
        out[25, i] = math.fabs(v)


def inputs():
    """Every 2^15-th bit pattern of the finite float32 values of both signs, nudged by a
    small odd offset so that exact powers of two are not all that is seen, plus 0, -0,
    +-inf, nan, and the smallest subnormal."""
    bits = np.arange(0, 0x7F800000, 1 << 15, dtype=np.uint64) + 12345
    bits = bits[bits < 0x7F800000].astype(np.uint32)
    pos = bits.view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 0.5, 1e-45], np.float32)
    return np.concatenate([pos, -pos, special])


def _ref(name, x):
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        direct = {"sqrt": np.sqrt, "cbrt": np.cbrt, "exp": np.exp, "exp2": np.exp2,
                  "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
                  "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
                  "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
                  "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
                  "atanh": np.arctanh, "fabs": np.abs}
        if name in direct:
            return direct[name](x64)
    fn = getattr(math, name)

    def safe(v):
        try:
            return fn(v)
        except OverflowError:
            return math.inf
        except ValueError:  # a pole or outside the domain: C's values (C11 F.10.5)
            if name == "lgamma":
                return math.inf
            return math.copysign(math.inf, v) if v == 0 else math.nan
    return np.frompyfunc(safe, 1, 1)(x64).astype(np.float64)


def ulp_errors(name, x, got):
    """The largest error in float32 ulps over the inputs the bound covers, and its input."""
    with np.errstate(all="ignore"):
        return _ulp_errors(name, x, got)


def _ulp_errors(name, x, got):
    ref = _ref(name, x)
    skip = BOUNDS[name][2]
    keep = np.ones(x.size, bool)
    if skip:
        keep &= ~((x > skip[0]) & (x < skip[1]))
    g = got.astype(np.float64)
    ref32 = ref.astype(np.float32)
    # special results must match exactly: nan for nan, the same infinity
    nan_r, nan_g = np.isnan(ref), np.isnan(g)
    bad_nan = keep & (nan_r != nan_g)
    inf = keep & ~nan_r & np.isinf(ref32)
    # a result past float32's range is infinity (or the largest float, one rounding short)
    bad_inf = inf & ~((np.sign(g) == np.sign(ref)) & (np.isinf(g) | (np.abs(g) == np.finfo(np.float32).max)))
    fin = keep & ~nan_r & ~np.isinf(ref32)
    spacing = np.spacing(np.abs(ref32[fin])).astype(np.float64)
    err = np.zeros(x.size)
    err[fin] = np.abs(g[fin] - ref32[fin].astype(np.float64)) / spacing
    err[bad_nan | bad_inf] = math.inf
    err[np.isnan(err)] = math.inf
    i = int(np.argmax(err))
    return err[i], x[i], g[i], ref[i]


def run(on_gpu):
    x = inputs()
    if on_gpu:
        out = kiln.device_array((len(NAMES), x.size), np.float32)
        every_math[(x.size + 255) // 256, 256](out, kiln.to_device(x))
        return x, out.copy_to_host()
    out = np.zeros((len(NAMES), x.size), np.float32)
    kiln.jit(every_math.py_func, target="cpu")[(x.size + 255) // 256, 256](out, x)
    return x, out


def check(on_gpu):
    x, out = run(on_gpu)
    report, bad = [], []
    for k, name in enumerate(NAMES):
        bound = BOUNDS[name][0 if on_gpu else 1]
        err, xi, gi, ri = ulp_errors(name, x, out[k])
        report.append((name, err, bound))
        if not err <= bound:
            bad.append(f"{name}: {err:.2f} ulp at x={xi!r} (got {gi!r}, float64 {ri!r}); "
                       f"the bound is {bound}")
    assert not bad, "\n".join(bad)
    return report


def test_math_ulp_cpu(monkeypatch):
    # NVRTC compiling this kernel twice for KILN_CHECK_CUDA would take most of the test's
    # time; test_math_ulp_gpu compiles it for the GPU
    monkeypatch.setenv("KILN_CHECK_CUDA", "0")
    check(on_gpu=False)


@pytest.mark.gpu
def test_math_ulp_gpu():
    for name, err, bound in check(on_gpu=True):
        print(f"{name}: {err:.2f} ulp (bound {bound})")


# ---- fastmath: kiln's own erfc (rt_common.h, kiln_erfcf_fast) --------------------------

FAST_ERFC_REL = 2e-5  # relative, where erfc(x) is a normal float32 (x < 9.19)


@kiln.jit(fastmath=True)
def fast_erfc(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = math.erfc(x[i])


def check_fast_erfc(on_gpu):
    x = inputs()
    if not on_gpu:  # -ffast-math assumes finite values: infinities and nan give anything
        x = x[np.isfinite(x)]
    if on_gpu:
        out = kiln.device_array(x.size, np.float32)
        fast_erfc[(x.size + 255) // 256, 256](out, kiln.to_device(x))
        got = out.copy_to_host().astype(np.float64)
    else:
        out = np.zeros(x.size, np.float32)
        kiln.jit(fast_erfc.py_func, fastmath=True, target="cpu")[(x.size + 255) // 256, 256](out, x)
        got = out.astype(np.float64)
    ref = _ref("erfc", x)
    tiny = np.finfo(np.float32).tiny
    with np.errstate(all="ignore"):
        normal = ~np.isnan(ref) & (ref >= tiny)
        rel = np.abs(got[normal] - ref[normal]) / ref[normal]
    worst = float(rel.max())
    assert worst <= FAST_ERFC_REL, (worst, x[normal][np.argmax(rel)])
    # below the normal range: flushed to zero or as small; nan for nan; 2 for -inf
    assert (np.abs(got[~np.isnan(ref) & ~normal]) <= tiny).all()
    assert np.isnan(got[np.isnan(ref)]).all()
    return worst


def test_fast_erfc_cpu(monkeypatch):
    monkeypatch.setenv("KILN_CHECK_CUDA", "0")
    check_fast_erfc(on_gpu=False)


@pytest.mark.gpu
def test_fast_erfc_gpu():
    print(f"fastmath erfc: {check_fast_erfc(on_gpu=True):.3g} relative")
