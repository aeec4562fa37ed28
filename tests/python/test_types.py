"""Numba's type objects (kiln.types), signatures built from them, explicit signatures
chosen by the conversions they need, and tuple arguments of kernels."""
import collections

import numpy as np
import pytest

import kiln
from kiln import types


def test_type_objects_spell_numba_types():
    assert types.Array(kiln.float32, 2, "C") == kiln.float32[:, ::1]
    assert types.Array(kiln.float32, 2, "F") == kiln.float32[::1, :]
    assert types.Array(kiln.float32, 1, "A") == kiln.float32[:]
    assert repr(kiln.float64[::1]) == "Array(float64, 1, 'C', False, aligned=True)"
    assert str(types.Array(kiln.int16, 3, "A")) == "int16[:, :, :]"
    assert types.Tuple([kiln.int64, kiln.int64]) == types.UniTuple(kiln.int64, 2)
    assert isinstance(types.Tuple([kiln.int64, kiln.float32]), types.Tuple)
    assert types.Tuple([kiln.int64, kiln.float32]).types == (kiln.int64, kiln.float32)
    assert types.UniTuple(kiln.int8, 3).count == 3
    assert repr(types.CPointer(kiln.uint8)) == "CPointer(uint8)"
    assert isinstance(kiln.int32, types.Integer) and isinstance(kiln.int32, types.Number)
    assert isinstance(kiln.float32, types.Float) and isinstance(kiln.bool_, types.Boolean)
    assert not isinstance(kiln.float32, types.Integer)
    assert kiln.int32 in types.signed_domain and kiln.uint8 in types.unsigned_domain
    assert kiln.float32 in types.real_domain and kiln.float32 not in types.integer_domain
    assert types.longlong is kiln.int64 and types.ulonglong is kiln.uint64
    assert kiln.types.Array is kiln.Array  # numba.cuda.types.NAME maps to kiln.NAME
    with pytest.raises(TypeError, match="scalar type"):
        types.Array(np.float32, 1, "C")
    with pytest.raises(ValueError, match="layout"):
        types.Array(kiln.float32, 1, "X")


def test_type_base_class_takes_a_name():
    class Mine(types.Type):
        def __init__(self):
            super().__init__(name="Mine")

    m = Mine()
    assert str(m) == "Mine" and m == Mine() and hash(m) == hash(Mine())


def test_calling_a_type_makes_a_signature():
    sig = kiln.void(kiln.float32[:], kiln.int32)
    assert isinstance(sig, kiln.Signature) and str(sig) == "void(float32[:], int32)"
    assert str(kiln.float64(kiln.float64, kiln.float64)) == "float64(float64, float64)"
    assert sig.return_type is kiln.void and sig.args == (kiln.float32[:], kiln.int32)
    # no arguments too, whatever the return type (Numba's: signature(CPointer(int32)))
    for t in (kiln.int32, kiln.types.CPointer(kiln.int32), kiln.void):
        empty = t()
        assert isinstance(empty, kiln.Signature) and empty.args == () and empty.return_type == t
    assert kiln.float32(1.5) == 1.5 and type(kiln.float32(1.5)).__name__ == "float32"


def test_from_dtype_and_typeof():
    assert kiln.from_dtype(np.dtype(np.uint16)) is kiln.uint16
    assert kiln.from_dtype(np.float64) is kiln.float64
    with pytest.raises(NotImplementedError, match="kiln has no type"):
        kiln.from_dtype(np.dtype("U4"))
    assert isinstance(kiln.from_dtype(np.dtype([("a", np.int32)])), kiln.types.Record)
    assert kiln.typeof(1) is kiln.int64 and kiln.typeof(1.5) is kiln.float64
    assert kiln.typeof(True) is kiln.boolean and kiln.typeof(np.float32(1)) is kiln.float32
    a = np.zeros((3, 4), np.float32)
    assert kiln.typeof(a) == kiln.float32[:, ::1]
    assert kiln.typeof(np.asfortranarray(a)) == kiln.float32[::1, :]
    assert kiln.typeof(a[:, ::2]) == kiln.float32[:, :]
    assert kiln.typeof((1, 2)) == types.UniTuple(kiln.int64, 2)
    assert kiln.typeof((1, (2.0, a))) == types.Tuple([kiln.int64,
                                                       types.Tuple([kiln.float64, kiln.typeof(a)])])
    P = collections.namedtuple("P", "x y")
    assert isinstance(kiln.typeof(P(1, 2)), types.NamedUniTuple)
    assert kiln.typeof(P(1, 2)).fields == ("x", "y")
    with pytest.raises(ValueError, match="cannot type a str"):
        kiln.typeof("a")


def add(r, x, y):
    r[0] = x + y


def test_signatures_from_type_objects_compile_kernels_and_device_functions():
    @kiln.jit(kiln.float32(kiln.float32), device=True)
    def twice(v):
        return v * 2

    @kiln.jit(kiln.void(types.Array(kiln.float32, 1, "C"), kiln.float32))
    def k(r, v):
        r[0] = v

    assert k.signatures == ["(float32[::1], float32)"]

    @kiln.jit([(kiln.float32[::1], kiln.float32)])
    def k2(r, v):
        r[0] = twice(v)

    r = np.zeros(1, np.float32)
    k2[1, 1](r, np.float32(1.5))
    assert r[0] == 3.0
    with pytest.raises(TypeError, match="a tuple argument is typed at the launch"):
        kiln.jit(kiln.void(types.UniTuple(kiln.int64, 2), kiln.uint32, kiln.uint32))(add)
    # a pointer is a signature type (tests/python/test_cpointer.py)
    assert str(kiln.void(types.CPointer(kiln.uint8), kiln.uint32)) == "void(uint8*, uint32)"


def test_explicit_signatures_take_the_best_ranked_one():
    f = kiln.jit(["(float64[::1], float32, float32)", "(float64[::1], float64, float64)"])(add)
    r = np.zeros(1)
    f[1, 1](r, np.float32(1), np.float32(2 ** -25))
    assert r[0] == 1.0      # float32 arithmetic: the exact signature
    f[1, 1](r, 1, 2 ** -25)
    assert r[0] == 1.0000000298023224  # int64, float64: the float64 one (safe, exact)


def test_ambiguous_explicit_signatures_name_the_candidates():
    f = kiln.jit(["(float64[::1], float32, float64)", "(float64[::1], float64, float32)",
                  "(float64[::1], int64, int64)"])(add)
    with pytest.raises(TypeError) as ei:
        f[1, 1](np.zeros(1), 1.0, 2.0)
    msg = str(ei.value)
    assert msg.startswith(f"Ambiguous overloading for {add!r} (Array(float64, 1, 'C', False, "
                          "aligned=True), float64, float64):\n(Array(float64, 1, 'C', False, "
                          "aligned=True), float32, float64) -> none\n")
    assert "int64" not in msg
    with pytest.raises(TypeError, match="No matching definition"):
        f[1, 1](np.zeros(1, np.int32), 1, 2)


def test_an_int_array_of_the_other_signedness_reads_as_the_signature_type():
    # Numba-CUDA launches an explicit signature's kernel on a uint32 array declared
    # int32[:, :]: the elements are read as int32 bit patterns (kiln ranks it unsafe and
    # takes it only at the same width); other dtypes are refused
    @kiln.jit("void(int32[:,:])")
    def dec(a):
        i, j = kiln.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] -= 1
            if a[i, j] < 0:
                a[i, j] = -7

    a = np.arange(32, dtype=np.uint32).reshape(4, 8)
    dec[1, (4, 8)](a)
    want = np.arange(32).reshape(4, 8) - 1
    want[0, 0] = -7
    assert a.dtype == np.uint32 and (a.view(np.int32) == want).all()
    for bad in (np.zeros((4, 8), np.int16), np.zeros((4, 8), np.float32), np.zeros((4, 8), np.uint64)):
        with pytest.raises(TypeError, match="No matching definition"):
            dec[1, (4, 8)](bad)


def test_tuple_arguments_of_kernels():
    @kiln.jit
    def k(r, t, arrs):
        i = kiln.grid(1)
        a, (b, c) = t
        if i < len(arrs[0]):
            arrs[0][i] = arrs[1][i] * a + b * c
        if i == 0:
            r[0] = len(t) + len(arrs)

    x, y = np.zeros(10), np.arange(10.0)
    r = np.zeros(1, np.int64)
    k[2, 8](r, (2.0, (3, 4)), (x, y))
    np.testing.assert_array_equal(x, y * 2 + 12)
    assert r[0] == 4
    k[2, 8](r, (1, (np.int8(1), 0.5)), (x, y))  # other leaf types: a new specialisation
    np.testing.assert_array_equal(x, y + 0.5)
    assert len(k._tuple_kernels) == 1
    # the kernel of the leaves takes the kernel's options
    bounded = kiln.jit(k.py_func, launch_bounds=64, debug=True)
    bounded[2, 8](r, (1.0, (2, 3)), (x, y))
    np.testing.assert_array_equal(x, y + 6)
    flat = next(iter(bounded._tuple_kernels.values()))
    assert flat.options["launch_bounds"] == bounded.options["launch_bounds"] and flat.options["debug"]


def test_arrays_written_through_tuples_are_written_parameters():
    """An array written through a tuple (a tuple argument's leaf, or a tuple passed to a
    device function) is a written parameter: on the GPU a host array is copied back only
    when its parameter is written, so missing this loses the kernel's results there."""
    @kiln.jit
    def k(r, arrs):
        i = kiln.grid(1)
        if i < len(arrs[0]):
            arrs[0][i] = arrs[1][i] + 1
        if i == 0:
            r[0] = 1

    x, y, r = np.zeros(10), np.arange(10.0), np.zeros(1, np.int64)
    k[2, 8](r, (x, y))
    flat = next(iter(k._tuple_kernels.values()))
    assert flat._entry_for(None).program.written[:2] == (True, True)

    @kiln.jit(device=True)
    def put(pair, i):
        pair[0][i] = 2.0

    @kiln.jit
    def through_device(a, b, c):
        i = kiln.grid(1)
        if i < a.size:
            put((a, b), i)
            c[i] = a[i]

    a, b, c = np.zeros(4), np.zeros(4), np.zeros(4)
    through_device[1, 4](a, b, c)
    np.testing.assert_array_equal(a, 2.0)
    assert through_device._entry_for(None).program.written[0]


def test_namedtuple_arguments_read_fields_by_name_and_index():
    P = collections.namedtuple("P", "x y")

    @kiln.jit
    def k(r, t):
        r[0] = t.y * 10 + t[0]

    r = np.zeros(1)
    k[1, 1](r, P(1, 2))
    assert r[0] == 21
    k[1, 1](r, P(3.5, 1))  # another specialisation: x a float
    assert r[0] == 13.5


def test_tuple_argument_errors_name_the_element():
    @kiln.jit
    def k(r, t):
        r[0] = t[1][0]

    with pytest.raises(TypeError, match=r"argument 't' \(t\[1\]\[0\]\) of kernel 'k' is a str"):
        k[1, 1](np.zeros(1), (1, ("s",)))
    f = kiln.jit(["(float64[::1], int64)"])(lambda r, t: None)
    with pytest.raises(TypeError, match="No matching definition"):
        f[1, 1](np.zeros(1), (1, 2))


def test_namedtuple_argument_errors_name_the_field():
    # hunt19 2: the message's rewrite looked for '[' and raised ValueError for a field
    Opts = collections.namedtuple("Opts", "scale mode")

    @kiln.jit
    def k(opts, out):
        out[0] = opts.scale

    with pytest.raises(TypeError, match=r"argument 'opts' \(opts.mode\) of kernel 'k' is a str"):
        k[1, 1](Opts(2.0, "fast"), np.zeros(1))


def test_every_atomic_is_a_host_name_too():
    # hunt19 3: cuda.atomic.nanmax at module level raised AttributeError
    for name in ("add", "sub", "max", "min", "nanmax", "nanmin", "exch", "compare_and_swap", "cas",
                 "and_", "or_", "xor", "inc", "dec"):
        assert hasattr(kiln.atomic, name), name


def test_numpy_scalar_arguments_are_read_in_place_and_right():
    # A NumPy scalar's type is remembered at its first launch, with the offset of its value
    # in the object (from the buffer NumPy gives); later arguments of that exact type are
    # read there, without the buffer protocol.  Every number type, extreme values, several
    # calls each; a subclass (not NumPy's own type) is read through its buffer every time.
    from kiln import _kiln

    @kiln.jit
    def put(out, x):
        out[0] = x

    values = {
        np.bool_: [True, False, True],
        np.int8: [-128, 127, 0], np.int16: [-32768, 32767, 5], np.int32: [-2**31, 2**31 - 1, 7],
        np.int64: [-2**63, 2**63 - 1, 9], np.uint8: [255, 0, 1], np.uint16: [65535, 0, 3],
        np.uint32: [2**32 - 1, 0, 4], np.uint64: [2**64 - 1, 0, 2**63],
        np.float16: [65504.0, -0.0, 1e-7], np.float32: [3.4028235e38, -1.5, 1e-45],
        np.complex64: [1.5 - 2.5j, -0.0 + 3j, 1e30j], np.complex128: [1e300 + 1e-300j, -2j, 0j],
    }
    for tp, vs in values.items():
        for v in vs:
            x = tp(v)
            out = np.zeros(1, tp)
            put[1, 1](out, x)
            assert out[0] == x and np.signbit(np.real(out[0])) == np.signbit(np.real(x)), (tp, v, out)

    class MyFloat(np.float32):
        pass

    out = np.zeros(1, np.float32)
    for v in (2.5, -7.25):
        put[1, 1](out, MyFloat(v))
        assert out[0] == np.float32(v)
    known = {t: (code, off) for t, code, off in _kiln.scalar_types()}
    # np.complex128 (like np.float64) subclasses Python's own number: read as one
    assert set(values) - {np.complex128} <= set(known) and MyFloat not in known, known
    assert all(off >= 16 for _, off in known.values())
