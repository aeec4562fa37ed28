"""CPointer(dtype) kernel parameters: what a pointer cannot do is a CompileError at the
user's line, and what a launch passes for one is checked (docs/language.md, "Pointer
arguments")."""
import os

import numpy as np
import pytest

import kiln
from kiln import types

HERE = os.path.basename(__file__)
U8P = types.void(types.CPointer(types.uint8), types.int64)


def _compile_error(body_fn, sig=U8P):
    with pytest.raises(kiln.CompileError) as e:
        kiln.jit(sig)(body_fn)
    return str(e.value)


def test_signature_text_and_repr():
    assert str(U8P) == "void(uint8*, int64)"
    assert repr(types.CPointer(kiln.float32)) == "CPointer(float32)"
    assert kiln.jit(U8P)(lambda x, n: None).signatures == ["(uint8*, int64)"]


def test_shape_of_a_pointer_is_an_error_at_its_line():
    def k(x, n):
        m = x.shape[0]
    msg = _compile_error(k)
    assert f"{HERE}:" in msg and "a CPointer(uint8) has no attribute 'shape'" in msg
    assert "        m = x.shape[0]\n" in msg and "hint: pass the length as a kernel argument" in msg


@pytest.mark.parametrize("line, phrase", [
    ("m = x.size", "has no attribute 'size'"),
    ("m = len(x)", "a CPointer(uint8) has no len()"),
    ("y = x[1:3]", "a CPointer(uint8) takes one integer index"),
    ("y = x[0, 1]", "a CPointer(uint8) takes one integer index"),
    ("t = (0,); y = x[t]", "takes one integer index, not a tuple"),
    ("y = x[0.5]", "must be integers"),
])
def test_what_a_pointer_cannot_do(line, phrase):
    ns = {}
    exec(f"def k(x, n):\n    {line}\n", ns)
    msg = _compile_error(ns["k"])
    assert phrase in msg, msg


def test_a_loop_over_a_pointer_is_an_error():
    def k(x, n):
        for v in x:
            n += v
    assert "a for loop cannot iterate over a CPointer(uint8)" in _compile_error(k)


def test_a_pointer_is_no_array_for_a_device_signature():
    @kiln.jit("float64(float64[::1])", device=True)
    def first(a):
        return a[0]

    def k(x, n):
        x[0] = first(x)
    msg = _compile_error(k, "void(float64*, int64)")
    assert "argument 1 of 'first' is CPointer(float64)" in msg


def test_a_pointer_and_an_array_do_not_unify():
    def k(x, n):
        y = x
        if n > 0:
            y = kiln.local.array(4, kiln.uint8)
        y[0] = 1
    assert "CPointer(uint8)" in _compile_error(k)


def test_functions_cannot_return_pointers():
    with pytest.raises(kiln.CompileError, match="functions cannot return pointers"):
        kiln.jit("uint8*(uint8*)", device=True)(lambda p: p)


def test_a_pointer_takes_an_integer_address():
    k = kiln.jit(U8P)(lambda x, n: None)
    a = np.zeros(4, np.uint8)
    k[1, 1](a.ctypes.data, 4)
    k[1, 1](np.uint64(a.ctypes.data), 4)
    k[1, 1](0, 0)  # null: allowed, as in C
    with pytest.raises(OverflowError, match="the address -1 is negative"):
        k[1, 1](-1, 0)
    with pytest.raises(TypeError, match="No matching definition"):
        k[1, 1](a, 4)


def test_a_pointer_writes_what_it_points_to():
    @kiln.jit("void(int32*, int32*, int64)")
    def k(p, q, n):
        i = kiln.grid(1)
        if i < n:
            p[i] = i * 3
            p[i] -= 1
            kiln.atomic.add(q, i % 2, p[i])

    a = np.zeros(8, np.int32)
    s = np.zeros(2, np.int32)
    k[2, 4](a.ctypes.data, s.ctypes.data, 8)
    want = np.arange(8, dtype=np.int32) * 3 - 1
    assert a.tolist() == want.tolist()
    assert s.tolist() == [want[0::2].sum(), want[1::2].sum()]
