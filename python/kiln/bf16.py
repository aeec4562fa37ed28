"""kiln.bf16: bfloat16 in kernels, as Numba's ``numba.cuda.bf16`` (and the same names
as its ``numba.cuda._internal.cuda_bf16``, CUDA's cuda_bf16.h).

``bfloat16`` is the scalar type (``kiln.bfloat16``: ``bfloat16(3.14)`` in a kernel
rounds to nearest even; ``+ - * /`` and comparisons work on it as on float16).  The
functions below exist only inside kernels, on both targets with the same bits:

- arithmetic, each result rounded to bfloat16 once: ``hadd hsub hmul hdiv`` (and
  ``hadd_rn hsub_rn hmul_rn``, the same: kiln never contracts them into an fma),
  ``hfma``; ``hadd_sat hsub_sat hmul_sat hfma_sat`` clamp the result to [0, 1]
  (NaN to 0); ``hfma_relu`` clamps it below at 0 (NaN stays NaN); ``hneg habs``;
- comparisons ``heq hne hgt hge hlt hle`` (bool), ``hmax hmin`` (a NaN operand
  gives the other), ``hmax_nan hmin_nan`` (a NaN operand gives NaN), ``hisnan``
  (bool), ``hisinf`` (int32: 1 for +inf, -1 for -inf, else 0);
- math, computed in float32 and rounded: ``htrunc hceil hfloor hrint hsqrt hrsqrt hrcp
  hlog hlog2 hlog10 hcos hsin htanh htanh_approx hexp hexp2 hexp10``;
- bit casts ``bfloat16_as_int16 bfloat16_as_uint16 int16_as_bfloat16
  uint16_as_bfloat16``;
- conversions with a rounding mode (``_rn`` to nearest even, ``_rz`` toward zero,
  ``_rd`` down, ``_ru`` up): ``float32_to_bfloat16_rX``, ``{int,uint}{16,32,64}_to_bfloat16_rX``,
  ``bfloat16_to_{int,uint}{16,32,64}_rX`` (saturating at the integer type's ends, NaN
  to 0, as CUDA's), ``bfloat16_to_int8_rz``, ``bfloat16_to_uint8_rz``, and
  ``float32_to_bfloat16``, ``float64_to_bfloat16``, ``bfloat16_to_float32``.

``is_bfloat16_supported()`` says whether kernels can use bfloat16 here.  See
docs/language.md (bfloat16).  Imports nothing of kiln at module level but
``_types`` and ``_intrinsics``.
"""
from . import _intrinsics, _types

bfloat16 = nv_bfloat16 = _types.bfloat16

_MODES = ("rn", "rz", "rd", "ru")
_INTS = ("int16", "uint16", "int32", "uint32", "int64", "uint64")

_FUNCTIONS = (
    "habs", "hadd", "hsub", "hmul", "hadd_rn", "hsub_rn", "hmul_rn", "hdiv", "hadd_sat",
    "hsub_sat", "hmul_sat", "hfma", "hfma_sat", "hneg", "hfma_relu", "heq", "hne", "hge",
    "hgt", "hle", "hlt", "hmax", "hmin", "hmax_nan", "hmin_nan", "hisnan", "hisinf",
    "htrunc", "hceil", "hfloor", "hrint", "hsqrt", "hrsqrt", "hrcp", "hlog", "hlog2",
    "hlog10", "hcos", "hsin", "htanh", "htanh_approx", "hexp", "hexp2", "hexp10",
    "bfloat16_as_int16", "int16_as_bfloat16", "bfloat16_as_uint16", "uint16_as_bfloat16",
    "bfloat16_to_float32", "float32_to_bfloat16", "float64_to_bfloat16",
    "bfloat16_to_int8_rz", "bfloat16_to_uint8_rz",
) + tuple(f"float32_to_bfloat16_{m}" for m in _MODES) + tuple(
    name for t in _INTS for m in _MODES
    for name in (f"{t}_to_bfloat16_{m}", f"bfloat16_to_{t}_{m}"))

for _name in _FUNCTIONS:
    globals()[_name] = _intrinsics._Intrinsic("kiln.bf16." + _name)
del _name


def is_bfloat16_supported():
    """Whether kernels here can use bfloat16 (Numba's ``cuda.is_bfloat16_supported``):
    on a GPU, whether the current device has compute capability 8.0 or more (bfloat16
    arithmetic is native there; kiln's generated CUDA needs it); where kernels run on the
    CPU target (no GPU, or KILN_TARGET=cpu), True: the CPU computes bfloat16 in C with
    the same results."""
    from . import _cuda, _dispatch

    if _cuda.on_host() or not _dispatch.is_available():
        return True
    return tuple(_cuda.get_current_device().compute_capability) >= (8, 0)


__all__ = ["bfloat16", "nv_bfloat16", "is_bfloat16_supported", *_FUNCTIONS]
