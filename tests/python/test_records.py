"""Records (NumPy structured dtypes) in kernels: layouts as NumPy gives them, references,
record arguments, explicit signatures, specialisation and cache keys, device arrays of
records, and the errors (tests/lang/records*.py hold the golden cases)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln
from kiln import _compile, _kiln

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")

# the same size and field types, the names swapped: a kernel reading .a must read other bytes
AB = np.dtype([("a", np.int32), ("b", np.int32)])
BA = np.dtype([("b", np.int32), ("a", np.int32)])


@kiln.jit
def read_a(r, out):
    i = kiln.grid(1)
    if i < r.shape[0]:
        out[i] = r[i].a


def test_same_size_dtypes_do_not_share_code():
    x = np.zeros(3, AB)
    y = np.zeros(3, BA)
    x["a"], x["b"] = [1, 2, 3], [7, 8, 9]
    y["a"], y["b"] = [1, 2, 3], [7, 8, 9]
    out = np.zeros(3, np.int32)
    read_a[1, 3](x, out)
    assert list(out) == [1, 2, 3]
    read_a[1, 3](y, out)
    assert list(out) == [1, 2, 3]
    assert len(read_a.signatures) == 2
    sx, sy = (read_a.inspect_source(s) for s in read_a.signatures)
    # the layout is in the source, so in the disk cache's key (the hash of the source)
    assert "a int32@0 b int32@4" in sx and "b int32@0 a int32@4" in sy
    assert sx != sy


def test_offsets_and_itemsize_are_numpys():
    # offsets NumPy was told, with a gap and a trailing pad: never recomputed
    dt = np.dtype({"names": ["x", "y"], "formats": [np.float32, np.int16],
                   "offsets": [4, 10], "itemsize": 16})
    a = np.zeros(4, dt)
    a["x"] = [1, 2, 3, 4]

    @kiln.jit
    def k(a):
        i = kiln.grid(1)
        if i < a.shape[0]:
            a[i].y = int(a[i].x) * 3

    k[1, 4](a)
    assert list(a["y"]) == [3, 6, 9, 12]
    raw = a.view(np.uint8).reshape(4, 16)
    assert raw[:, :4].sum() == 0 and raw[:, 12:].sum() == 0  # the gaps are untouched


def test_record_argument_is_a_reference():
    dt = np.dtype([("a", np.float64), ("n", np.int64)], align=True)

    @kiln.jit
    def bump(r, v):
        r.a = r.a + v
        r["n"] += 1

    arr = np.zeros(3, dt)
    rec = arr[1]
    bump[1, 1](rec, 2.5)
    bump[1, 1](np.recarray(3, dtype=dt, buf=arr)[1], 1.0)
    assert arr[1]["a"] == 3.5 and arr[1]["n"] == 2
    assert arr[0]["n"] == 0 and arr[2]["n"] == 0


def test_record_in_device_functions():
    dt = np.dtype([("g", np.int32), ("h", np.float32, (2,))], align=True)

    @kiln.jit(device=True)
    def first(a):
        return a[0]

    @kiln.jit(device=True)
    def total(r):
        return r.g + r.h[0] + r.h[1]

    @kiln.jit
    def k(a, out):
        out[0] = total(first(a))

    a = np.zeros(2, dt)
    a[0] = (1, (2.0, 3.5))
    out = np.zeros(1, np.float64)
    k[1, 1](a, out)
    assert out[0] == 6.5


def test_subarray_field_assigned_from_an_array():
    dt = np.dtype([("u", np.float64), ("m", np.int16, (3, 2))], align=True)

    @kiln.jit
    def k(dest, src):
        dest["m"] = src

    got = np.zeros(2, dt)
    src = np.arange(6, dtype=np.int16).reshape(3, 2) + 1
    k[1, 1](got[1], src)
    assert (got[1]["m"] == src).all() and (got[0]["m"] == 0).all()
    with pytest.raises(IndexError):
        k[1, 1](got[0], src[:2])


def test_explicit_signature_from_dtype():
    dt = np.dtype([("a", np.int32), ("b", np.float64)], align=True)
    rec = kiln.from_dtype(dt)
    assert isinstance(rec, kiln.types.Record) and rec == kiln.from_dtype(dt)
    assert str(rec[:]).endswith("[:]") and kiln.typeof(np.zeros(1, dt)[0]) == rec

    @kiln.jit((rec[:],))
    def foo(a):
        i = kiln.grid(1)
        a[i].a = a[i].b

    @kiln.jit(kiln.void(rec, kiln.float64))
    def setb(r, v):
        r.b = v

    a = np.zeros(3, dt)
    a["b"] = [123, 246, 369]
    foo[1, 3](a)
    setb[1, 1](a[2], 0.5)
    assert list(a["a"]) == [123, 246, 369] and a[2]["b"] == 0.5
    with pytest.raises(TypeError):
        foo[1, 3](np.zeros(3, AB))  # another record: no signature takes it


def test_misaligned_field_refused_for_the_gpu():
    packed = np.dtype([("a", np.int8), ("b", np.float64)])

    @kiln.jit
    def k(a):
        a[0].b = 1.0

    key = _kiln.key_of(np.zeros(2, packed))
    with pytest.raises(kiln.CompileError, match="type float64 is not aligned"):
        _compile._translate(k, key, 1, 90)
    assert "KU_f64" in _compile._translate(k, key, 0).source  # the CPU reads it byte-wise


def test_unsupported_dtypes_are_type_errors():
    nested = np.dtype([("inner", [("x", np.int32)])])
    objs = np.dtype([("o", object)])
    swapped = np.dtype([("x", ">f8")])
    for dt, what in ((nested, "itself a record"), (objs, "dtype object"),
                     (swapped, "byte order")):
        with pytest.raises(TypeError, match=what):
            read_a[1, 1](np.zeros(1, dt), np.zeros(1, np.int32))


def test_device_arrays_of_records_on_the_host_device():
    code = """
import numpy as np, kiln
dt = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
a = np.zeros(4, dt)
a["s0"] = np.arange(4)
d = kiln.to_device(a)
assert d.dtype == dt and d.itemsize == 16

@kiln.jit
def k(s):
    i = kiln.grid(1)
    if i < s.shape[0]:
        s[i].s1 = s[i].s0 * 3

k[1, 4](d)
assert list(d.copy_to_host()["s1"]) == [0, 3, 6, 9]
assert kiln.device_array(3, dtype=dt).dtype == dt
print("ok")
"""
    env = dict(os.environ, KILN_TARGET="cpu", PYTHONPATH=PYDIR)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.stdout.strip() == "ok", r.stderr


def test_datetime_device_arrays_on_the_host_device():
    # datetime64/timedelta64 device arrays keep their dtype (the record registry names
    # it); kernels see their int64 counts, and .view('int64') is the same memory
    code = """
import numpy as np, kiln
a = np.arange("2005-02", "2005-03", dtype="datetime64[D]")
d = kiln.to_device(a)
assert d.dtype == a.dtype and d.itemsize == 8
assert np.array_equal(d.copy_to_host(), a)
v = d.view(np.int64)
assert v.dtype == np.int64 and v.device_ctypes_pointer.value == d.device_ctypes_pointer.value
assert np.array_equal(v.copy_to_host(), a.view(np.int64))
assert v.gpu_data == d.gpu_data and d[1:].gpu_data != d.gpu_data
t = kiln.device_array(a.size, dtype="timedelta64[D]")
assert t.dtype == np.dtype("timedelta64[D]")

@kiln.jit
def since(x, start, out):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = x[i] - start

since[1, 32](d, a[3], t)
assert np.array_equal(t.copy_to_host(), a - a[3])
try:
    since[1, 32](d, np.datetime64("2005-02-03T10", "h"), t)
    raise SystemExit("no error for mixed units")
except TypeError as e:
    assert "share one unit" in str(e), e
print("ok")
"""
    env = dict(os.environ, KILN_TARGET="cpu", PYTHONPATH=PYDIR)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.stdout.strip() == "ok", r.stderr


def test_datetime_without_unit_is_a_type_error():
    @kiln.jit
    def k(a):
        a[0] = 1

    with pytest.raises(TypeError, match="without a unit"):
        k[1, 1](np.zeros(1, "m8"))
    with pytest.raises(TypeError, match="need a unit"):
        kiln.device_array(2, dtype="M8")


@kiln.jit
def put(a, x):
    a[0] = x


def test_nat_without_a_unit_matches_any_unit():
    a = np.zeros(1, "M8[s]")
    put[1, 1](a, np.datetime64("NaT"))
    assert np.isnat(a[0])
    with pytest.raises(NotImplementedError, match="datetime64"):
        kiln.from_dtype(np.dtype("datetime64[D]"))


STRS = np.dtype([("x", np.int32), ("u", "U4"), ("b", "S4")])


def _store_error(body):
    ns = {}
    exec(compile(f"def k(a):\n    {body}\n", "<strings>", "exec"), {"kiln": kiln}, ns)
    with pytest.raises(kiln.CompileError) as e:
        kiln.jit(ns["k"])[1, 1](np.zeros(2, STRS))
    return str(e.value)


def test_string_stores_that_kernels_refuse():
    assert "a bytes field takes a bytes constant" in _store_error('a[0].b = "ab"')
    assert "a str field takes a str constant, not bytes" in _store_error('a[0].u = b"ab"')
    assert "escapes are not supported" in _store_error('a[0].u = "a\\\\n"')
    assert "strings are stored only into string fields" in _store_error('a[0].x = "ab"')
    assert "takes a string constant" in _store_error("a[0].u = a[1].x")


def test_records_of_zero_bytes_are_type_errors():
    # np.dtype([]), a 0-byte string field, a field of shape (0,): the stride arithmetic
    # divided by the item size (SIGFPE) before this was refused
    for dt in (np.dtype([]), np.dtype([("s", "S0")]), np.dtype([("a", "f8", (0,))])):
        with pytest.raises(TypeError, match="0 bytes"):
            read_a[1, 1](np.zeros(3, dt), np.zeros(1, np.int32))
    deep = np.dtype([("a", "f8"), ("b", "f8", (1,) * 9)])
    with pytest.raises(TypeError, match="field 'b' is an array of 9 dimensions"):
        read_a[1, 1](np.zeros(2, deep), np.zeros(1, np.int32))


XY = np.dtype([("x", np.float64), ("y", np.int32)], align=True)


@kiln.jit
def set_x(r):
    r.x = 42.0


@kiln.jit(device=True)
def set_x_dev(r):
    r.x = 9.0


@kiln.jit
def set_x_through(a):
    set_x_dev(a[0])


def test_a_record_from_read_only_memory_is_not_written():
    ro = np.zeros(3, XY)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only, but the kernel writes"):
        set_x[1, 1](ro[1])
    assert ro["x"].tolist() == [0.0, 0.0, 0.0]
    frozen = np.frombuffer(bytes(XY.itemsize), XY)[0]  # a record viewing a bytes object
    with pytest.raises(ValueError, match="read-only"):
        set_x[1, 1](frozen)
    # a record of a writable array is written in place
    w = np.zeros(3, XY)
    set_x[1, 1](w[1])
    assert w["x"].tolist() == [0.0, 42.0, 0.0]


def test_a_device_function_writing_a_record_counts_as_a_write():
    ro = np.zeros(2, XY)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="argument 'a' of kernel 'set_x_through' is read-only"):
        set_x_through[1, 1](ro)
    assert ro["x"].tolist() == [0.0, 0.0]
    w = np.zeros(2, XY)
    set_x_through[1, 1](w)
    assert w["x"].tolist() == [9.0, 0.0]


def test_record_signatures_read_back_by_the_get_methods():
    a = np.zeros(2, XY)
    set_x_through[1, 1](a)
    sig = set_x_through.signatures[0]
    assert sig.startswith("(record")
    from kiln._dispatch import _args_of

    (t,) = _args_of(sig)
    assert t.dtype == kiln.from_dtype(XY) and t.ndim == 1
