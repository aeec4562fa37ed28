"""Numba-CUDA features on the GPU (pytest -m gpu): vector types, aligned local and shared
arrays, a.copy(), 0-d device arrays, namedtuple arguments.  The same kernels run on the
CPU target in tests/lang and tests/python; here the GPU must give the same values."""
import numpy as np
import pytest

import kiln

pytestmark = pytest.mark.gpu


def test_vector_types_on_the_gpu():
    @kiln.jit(device=True)
    def swap(v):
        return kiln.float2(v.y, v.x)

    @kiln.jit
    def k(out, a):
        i = kiln.grid(1)
        if i < a.size // 4:
            v = kiln.float4(a[4 * i], a[4 * i + 1], a[4 * i + 2], a[4 * i + 3])
            s = swap(kiln.float32x2(v.x, v.y))
            w = kiln.float32x4(s, kiln.float2(v.z, v.w))
            out[4 * i] = w.x
            out[4 * i + 1] = w.y
            out[4 * i + 2] = w.z + kiln.double2(1.0, 2.0).y
            out[4 * i + 3] = w.w + kiln.uchar3(1, 2, 3).z

    a = np.arange(4096, dtype=np.float32)
    out = np.zeros_like(a)
    k[16, 64](out, a)
    want = a.reshape(-1, 4)[:, [1, 0, 2, 3]] + np.array([0, 0, 2, 3], np.float32)
    np.testing.assert_array_equal(out, want.ravel())
    assert "KV_float32x4" in k.inspect_source()


def test_aligned_local_and_shared_arrays_on_the_gpu():
    @kiln.jit
    def k(out):
        i = kiln.grid(1)
        s = kiln.shared.array(64, np.uint8, alignment=128)
        loc = kiln.local.array(4, np.float32, alignment=64)
        s[i] = i
        kiln.syncthreads()
        for j in range(4):
            loc[j] = s[63 - i] + j
        out[i] = loc[0] + loc[3]

    out = np.zeros(64)
    k[1, 64](out)
    np.testing.assert_array_equal(out, 2 * (63 - np.arange(64)) + 3)
    assert ".shared .align 128" in k.inspect_ptx()


TABLE = np.array([1.0, 2.0, 3.0, 4.0])[::-1]


def test_array_copy_of_a_global_on_the_gpu():
    @kiln.jit
    def k(out):
        i = kiln.grid(1)
        q = TABLE.copy()
        q[0] = i
        out[i] = q[0] + q[1] + q[3]

    out = kiln.to_device(np.zeros(32))
    k[1, 32](out)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(32) + 3.0 + 1.0)


def test_namedtuple_arguments_on_the_gpu():
    from collections import namedtuple

    Point = namedtuple("Point", ("x", "y", "r"))

    @kiln.jit
    def k(out, p):
        i = kiln.grid(1)
        out[i] = p.x * i + p[1] + p.r

    out = kiln.to_device(np.zeros(64))
    k[2, 32](out, Point(2, 3, 0.5))
    np.testing.assert_array_equal(out.copy_to_host(), 2 * np.arange(64) + 3.5)


def test_zero_d_device_arrays_on_the_gpu():
    g = kiln.to_device(np.array(42.0, np.float32))

    @kiln.jit
    def k(out, x):
        out[()] = x[()] * 2.0 + out.size

    out = kiln.device_array((), dtype=np.float32)
    k[1, 1](out, g)
    assert out.copy_to_host() == 85.0
