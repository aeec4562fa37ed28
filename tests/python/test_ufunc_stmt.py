"""NumPy ufuncs on arrays inside kernels (src/sema/ufunc_stmt.c): what cannot run is a
CompileError at the user's line, and a statement spelled like a ufunc that is not one
stays the call it is."""
import os
import types

import numpy as np
import pytest

import kiln

HERE = os.path.basename(__file__)


def _error(fn, *args):
    with pytest.raises(kiln.CompileError) as e:
        kiln.jit(fn)[1, 1](*args)
    return str(e.value)


def test_a_ufunc_of_an_array_without_an_output_array():
    def k(r, x):
        r[0] = np.sin(x)[0]
    msg = _error(k, np.zeros(3), np.zeros(3))
    assert f"{HERE}:" in msg and "numpy.sin() of an array would allocate its result" in msg
    assert "        r[0] = np.sin(x)[0]\n" in msg
    assert "hint: pass the output array, as a statement: np.sin(x, out)" in msg


def test_a_ufunc_with_an_output_array_is_a_statement():
    def k(r, x):
        y = np.add(x, 1.0, r)
    assert "numpy.add() with an output array is a statement in kernels" in _error(
        k, np.zeros(3), np.zeros(3))


def test_the_output_converts_under_same_kind():
    def k(r, x):
        np.sin(x, r)
    msg = _error(k, np.zeros(3, np.int64), np.zeros(3))
    assert ("Cannot cast ufunc 'sin' output from float64 to int64 with casting rule "
            "'same_kind'") in msg
    def k2(r, x):
        np.add(x, -1, r)
    assert "from int64 to uint8" in _error(k2, np.zeros(3, np.uint8), np.zeros(3, np.int64))


def test_the_output_is_an_array():
    def k(r, x):
        np.sin(x, 1.5)
    assert "the output of numpy.sin() must be an array, not Python float" in _error(
        k, np.zeros(3), np.zeros(3))


def test_an_input_with_more_dimensions_than_the_output():
    def k(r, x):
        np.add(x, x, r)
    msg = _error(k, np.zeros(3), np.zeros((2, 3)))
    assert "operands could not be broadcast together: a 2-d input of numpy.add()" in msg


def test_comparison_ufuncs_of_numbers_are_the_comparisons():
    @kiln.jit
    def k(r, a, b, z):
        r[0] = np.less(a, b)
        r[1] = np.greater_equal(a, 2)
        r[2] = np.equal(z, 1j) and not np.not_equal(a, a)
        r[3] = np.less(np.int64(-1), np.uint64(1))  # exact across signedness, as NumPy
        r[4] = np.less_equal(b, a) or np.greater(a, b)
    r = np.zeros(5, bool)
    k[1, 1](r, 1.5, 2.0, 1j)
    assert r.tolist() == [True, False, True, True, False]
    # complex numbers: NumPy's order (real parts, then imaginary) in the ufunc, while
    # Python's < has none
    @kiln.jit
    def order(r, z, w):
        r[0] = np.less(z, w)
        r[1] = np.greater(z, w)
        r[2] = np.less_equal(z, z)
    r = np.zeros(3, bool)
    order[1, 1](r, 1 + 2j, 1 + 3j)
    assert r.tolist() == [True, False, True]
    def bad(r, z):
        r[0] = z < z
    assert "complex numbers are not ordered" in _error(bad, np.zeros(1, bool), 1j)


def test_a_pointer_is_no_ufunc_operand():
    def k(x, r, n):
        np.sin(x, r)
    with pytest.raises(kiln.CompileError, match=r"numpy.sin\(\) takes arrays and numbers, not "
                                                r"CPointer\(float64\)"):
        kiln.jit("void(float64*, float64[::1], int64)")(k)


def test_a_device_function_spelled_like_a_ufunc_is_called():
    @kiln.jit(device=True)
    def add(a, b, out):
        out[0] = a[0] - b[0]

    lib = types.ModuleType("lib")
    lib.add = add

    def k(r, a, b):
        add(a, b, r)
        lib.add(r, b, r)
    r, a, b = np.zeros(1), np.array([5.0]), np.array([2.0])
    kiln.jit(k)[1, 1](r, a, b)
    assert r[0] == 1.0


def test_scalar_ufuncs_of_numbers_still_work():
    @kiln.jit
    def k(r, x, y):
        r[0] = np.add(x, y) + np.multiply(x, 2) - np.floor_divide(7, y)
    r = np.zeros(1)
    k[1, 1](r, 1.5, 2.0)
    assert r[0] == 1.5 + 2.0 + 3.0 - 3.0
