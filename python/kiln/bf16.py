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

_I = _intrinsics._Intrinsic  # each name below exists only inside kernels

habs = _I("kiln.bf16.habs")
hadd = _I("kiln.bf16.hadd")
hsub = _I("kiln.bf16.hsub")
hmul = _I("kiln.bf16.hmul")
hadd_rn = _I("kiln.bf16.hadd_rn")
hsub_rn = _I("kiln.bf16.hsub_rn")
hmul_rn = _I("kiln.bf16.hmul_rn")
hdiv = _I("kiln.bf16.hdiv")
hadd_sat = _I("kiln.bf16.hadd_sat")
hsub_sat = _I("kiln.bf16.hsub_sat")
hmul_sat = _I("kiln.bf16.hmul_sat")
hfma = _I("kiln.bf16.hfma")
hfma_sat = _I("kiln.bf16.hfma_sat")
hneg = _I("kiln.bf16.hneg")
hfma_relu = _I("kiln.bf16.hfma_relu")
heq = _I("kiln.bf16.heq")
hne = _I("kiln.bf16.hne")
hge = _I("kiln.bf16.hge")
hgt = _I("kiln.bf16.hgt")
hle = _I("kiln.bf16.hle")
hlt = _I("kiln.bf16.hlt")
hmax = _I("kiln.bf16.hmax")
hmin = _I("kiln.bf16.hmin")
hmax_nan = _I("kiln.bf16.hmax_nan")
hmin_nan = _I("kiln.bf16.hmin_nan")
hisnan = _I("kiln.bf16.hisnan")
hisinf = _I("kiln.bf16.hisinf")
htrunc = _I("kiln.bf16.htrunc")
hceil = _I("kiln.bf16.hceil")
hfloor = _I("kiln.bf16.hfloor")
hrint = _I("kiln.bf16.hrint")
hsqrt = _I("kiln.bf16.hsqrt")
hrsqrt = _I("kiln.bf16.hrsqrt")
hrcp = _I("kiln.bf16.hrcp")
hlog = _I("kiln.bf16.hlog")
hlog2 = _I("kiln.bf16.hlog2")
hlog10 = _I("kiln.bf16.hlog10")
hcos = _I("kiln.bf16.hcos")
hsin = _I("kiln.bf16.hsin")
htanh = _I("kiln.bf16.htanh")
htanh_approx = _I("kiln.bf16.htanh_approx")
hexp = _I("kiln.bf16.hexp")
hexp2 = _I("kiln.bf16.hexp2")
hexp10 = _I("kiln.bf16.hexp10")
bfloat16_as_int16 = _I("kiln.bf16.bfloat16_as_int16")
int16_as_bfloat16 = _I("kiln.bf16.int16_as_bfloat16")
bfloat16_as_uint16 = _I("kiln.bf16.bfloat16_as_uint16")
uint16_as_bfloat16 = _I("kiln.bf16.uint16_as_bfloat16")
bfloat16_to_float32 = _I("kiln.bf16.bfloat16_to_float32")
float32_to_bfloat16 = _I("kiln.bf16.float32_to_bfloat16")
float64_to_bfloat16 = _I("kiln.bf16.float64_to_bfloat16")
bfloat16_to_int8_rz = _I("kiln.bf16.bfloat16_to_int8_rz")
bfloat16_to_uint8_rz = _I("kiln.bf16.bfloat16_to_uint8_rz")
float32_to_bfloat16_rn = _I("kiln.bf16.float32_to_bfloat16_rn")
float32_to_bfloat16_rz = _I("kiln.bf16.float32_to_bfloat16_rz")
float32_to_bfloat16_rd = _I("kiln.bf16.float32_to_bfloat16_rd")
float32_to_bfloat16_ru = _I("kiln.bf16.float32_to_bfloat16_ru")
int16_to_bfloat16_rn = _I("kiln.bf16.int16_to_bfloat16_rn")
bfloat16_to_int16_rn = _I("kiln.bf16.bfloat16_to_int16_rn")
int16_to_bfloat16_rz = _I("kiln.bf16.int16_to_bfloat16_rz")
bfloat16_to_int16_rz = _I("kiln.bf16.bfloat16_to_int16_rz")
int16_to_bfloat16_rd = _I("kiln.bf16.int16_to_bfloat16_rd")
bfloat16_to_int16_rd = _I("kiln.bf16.bfloat16_to_int16_rd")
int16_to_bfloat16_ru = _I("kiln.bf16.int16_to_bfloat16_ru")
bfloat16_to_int16_ru = _I("kiln.bf16.bfloat16_to_int16_ru")
uint16_to_bfloat16_rn = _I("kiln.bf16.uint16_to_bfloat16_rn")
bfloat16_to_uint16_rn = _I("kiln.bf16.bfloat16_to_uint16_rn")
uint16_to_bfloat16_rz = _I("kiln.bf16.uint16_to_bfloat16_rz")
bfloat16_to_uint16_rz = _I("kiln.bf16.bfloat16_to_uint16_rz")
uint16_to_bfloat16_rd = _I("kiln.bf16.uint16_to_bfloat16_rd")
bfloat16_to_uint16_rd = _I("kiln.bf16.bfloat16_to_uint16_rd")
uint16_to_bfloat16_ru = _I("kiln.bf16.uint16_to_bfloat16_ru")
bfloat16_to_uint16_ru = _I("kiln.bf16.bfloat16_to_uint16_ru")
int32_to_bfloat16_rn = _I("kiln.bf16.int32_to_bfloat16_rn")
bfloat16_to_int32_rn = _I("kiln.bf16.bfloat16_to_int32_rn")
int32_to_bfloat16_rz = _I("kiln.bf16.int32_to_bfloat16_rz")
bfloat16_to_int32_rz = _I("kiln.bf16.bfloat16_to_int32_rz")
int32_to_bfloat16_rd = _I("kiln.bf16.int32_to_bfloat16_rd")
bfloat16_to_int32_rd = _I("kiln.bf16.bfloat16_to_int32_rd")
int32_to_bfloat16_ru = _I("kiln.bf16.int32_to_bfloat16_ru")
bfloat16_to_int32_ru = _I("kiln.bf16.bfloat16_to_int32_ru")
uint32_to_bfloat16_rn = _I("kiln.bf16.uint32_to_bfloat16_rn")
bfloat16_to_uint32_rn = _I("kiln.bf16.bfloat16_to_uint32_rn")
uint32_to_bfloat16_rz = _I("kiln.bf16.uint32_to_bfloat16_rz")
bfloat16_to_uint32_rz = _I("kiln.bf16.bfloat16_to_uint32_rz")
uint32_to_bfloat16_rd = _I("kiln.bf16.uint32_to_bfloat16_rd")
bfloat16_to_uint32_rd = _I("kiln.bf16.bfloat16_to_uint32_rd")
uint32_to_bfloat16_ru = _I("kiln.bf16.uint32_to_bfloat16_ru")
bfloat16_to_uint32_ru = _I("kiln.bf16.bfloat16_to_uint32_ru")
int64_to_bfloat16_rn = _I("kiln.bf16.int64_to_bfloat16_rn")
bfloat16_to_int64_rn = _I("kiln.bf16.bfloat16_to_int64_rn")
int64_to_bfloat16_rz = _I("kiln.bf16.int64_to_bfloat16_rz")
bfloat16_to_int64_rz = _I("kiln.bf16.bfloat16_to_int64_rz")
int64_to_bfloat16_rd = _I("kiln.bf16.int64_to_bfloat16_rd")
bfloat16_to_int64_rd = _I("kiln.bf16.bfloat16_to_int64_rd")
int64_to_bfloat16_ru = _I("kiln.bf16.int64_to_bfloat16_ru")
bfloat16_to_int64_ru = _I("kiln.bf16.bfloat16_to_int64_ru")
uint64_to_bfloat16_rn = _I("kiln.bf16.uint64_to_bfloat16_rn")
bfloat16_to_uint64_rn = _I("kiln.bf16.bfloat16_to_uint64_rn")
uint64_to_bfloat16_rz = _I("kiln.bf16.uint64_to_bfloat16_rz")
bfloat16_to_uint64_rz = _I("kiln.bf16.bfloat16_to_uint64_rz")
uint64_to_bfloat16_rd = _I("kiln.bf16.uint64_to_bfloat16_rd")
bfloat16_to_uint64_rd = _I("kiln.bf16.bfloat16_to_uint64_rd")
uint64_to_bfloat16_ru = _I("kiln.bf16.uint64_to_bfloat16_ru")
bfloat16_to_uint64_ru = _I("kiln.bf16.bfloat16_to_uint64_ru")

_FUNCTIONS = tuple(n for n, v in globals().items() if isinstance(v, _I))


def is_bfloat16_supported():
    """Whether kernels here can use bfloat16 (Numba's ``cuda.is_bfloat16_supported``):
    on a GPU, whether the current device has compute capability 8.0 or more (bfloat16
    arithmetic is native there; kiln's generated CUDA needs it); where kernels run on the
    CPU target (no GPU, or KILN_TARGET=cpu), True: the CPU computes bfloat16 in C with
    the same results."""
    from . import _cuda, _dispatch

    if _cuda.on_host() or not _dispatch._gpu_usable():
        return True
    return tuple(_cuda.get_current_device().compute_capability) >= (8, 0)

