"""literal_unroll over tuples of arrays and scalars, and global tuples of arrays, with
kernel arguments and globals of C, F and strided layouts (src/sema/literal_unroll.c)."""
import types

import numpy as np
import pytest

import kiln
from kiln import literal_unroll

C2 = np.arange(12, dtype=np.float64).reshape(3, 4)
F2 = np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4))
REV = np.arange(7, dtype=np.float32)[::-1]
GLOBAL_ARRAYS = (C2, F2, REV, C2[:, 1::2])


def _reference(arrays):
    return [float(np.sum(a)) + 10 * a.ndim + float(a.max()) for a in arrays]


@kiln.jit(target="cpu")
def _global_sums(out):
    i = 0
    for a in literal_unroll(GLOBAL_ARRAYS):
        out[i] = np.sum(a) + 10 * a.ndim + a.max()
        i += 1


def test_global_tuple_of_arrays_of_every_layout():
    out = np.zeros(len(GLOBAL_ARRAYS))
    _global_sums[1, 1](out)
    np.testing.assert_allclose(out, _reference(GLOBAL_ARRAYS))


def test_global_tuple_captured_at_compile_time_and_read_only():
    t = (np.array([1.0, 2.0]), np.array([[3, 4]], dtype=np.int64))

    @kiln.jit(target="cpu")
    def k(out):
        a, b = t                      # unpacking
        out[0] = t[0][1] + t[1][0, 1] + len(t) + a[0] + b[0, 0]

    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == 2 + 4 + 2 + 1 + 3
    t[0][1] = 100.0                   # frozen at compile time, as Numba's globals
    k[1, 1](out)
    assert out[0] == 12

    @kiln.jit(target="cpu")
    def w(out):
        for a in literal_unroll(t):
            a[0] = 1
    with pytest.raises(kiln.CompileError, match="captured as a constant"):
        w[1, 1](out)


@pytest.mark.parametrize("order", ["C", "F"])
def test_tuple_argument_of_arrays_unrolled(order):
    @kiln.jit(target="cpu")
    def k(out, arrays):
        i = 0
        for a in literal_unroll(arrays):
            out[i] = a.max() + a.size * 100
            i += 1

    m = np.array(np.arange(12.0).reshape(3, 4), order=order)
    v = np.arange(10, dtype=np.int16)[::-3]      # a negative-stride view: [9, 6, 3, 0]
    out = np.zeros(2)
    k[1, 1](out, (m, v))
    assert out.tolist() == [11 + 1200, 9 + 400]


def test_closure_tuple_of_arrays_and_scalars():
    arrays = (np.arange(3, dtype=np.uint8), np.ones((2, 2), dtype=np.float32))
    scalars = (2.5, 7, np.int8(-1))

    @kiln.jit(target="cpu")
    def k(out):
        s = 0.0
        for x in literal_unroll(arrays):
            s += np.sum(x)
        for y in literal_unroll(scalars):
            s += y
        out[0] = s

    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == 3 + 4 + 2.5 + 7 - 1


def test_literal_unroll_names_are_numbas():
    import kiln.misc.special as special
    assert special.literal_unroll is kiln.literal_unroll
    t = (1, 2.0)
    assert literal_unroll(t) is t     # on the host it is the identity, as Numba's


_cfg = types.ModuleType("_cfg")       # a module's tuple, read as cfg.T
_cfg.T = (np.arange(3.0), np.ones((2, 2), np.int32), 4)


def test_module_attribute_tuple_unrolled():
    @kiln.jit(target="cpu")
    def k(out):
        n = 0
        for x in literal_unroll(_cfg.T):
            n += 1
        out[0] = n + _cfg.T[1][1, 1] + _cfg.T[2]

    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == 3 + 1 + 4


def test_unroll_errors_point_at_the_loop():
    @kiln.jit(target="cpu")
    def k(out, n):
        for x in literal_unroll(n):
            out[0] = x

    with pytest.raises(kiln.CompileError, match=r"(?s)literal_unroll\(\) takes a tuple; "
                                                r"argument 'n' is int64.*\^~~~"):
        k[1, 1](np.zeros(1), 3)
