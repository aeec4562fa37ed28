"""kiln.reduce on the GPU (pytest -m gpu): one launch whose last block folds the blocks'
partials (accumulators that kiln.atomic.add takes), two launches otherwise; results at
sizes around the block and grid boundaries, repeated calls (the last block resets its
counter), res= written by the kernel itself, init=, and two streams."""
import numpy as np
import pytest

import kiln
from test_ufunc import add, biggest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("n", [1, 2, 255, 256, 257, 256 * 1024 - 1, 256 * 1024 + 1, (1 << 20) + 7])
def test_one_launch_sizes(rng, n):
    a = rng.random(n)
    d = kiln.to_device(a)
    for _ in range(3):  # the counter is back at zero after each call
        np.testing.assert_allclose(add(d), a.sum(), rtol=1e-9)
    res = kiln.device_array(1, np.float64)
    assert add(d, res=res) is None
    np.testing.assert_allclose(res.copy_to_host()[0], a.sum(), rtol=1e-9)
    np.testing.assert_allclose(add(d, init=2.5), a.sum() + 2.5, rtol=1e-9)


def test_every_one_launch_dtype_and_the_two_launch_path(rng):
    for dt in (np.float32, np.float64, np.int32, np.uint32, np.int64, np.uint64):
        a = rng.integers(0, 100, 300001).astype(dt)
        assert add(kiln.to_device(a)) == pytest.approx(a.sum(dtype=np.float64), rel=1e-5)
        assert biggest(kiln.to_device(a)) == a.max()
    # int16 + int16 stays int16 (NEP 50): atomics do not take it, two launches
    a = rng.integers(-3, 4, 300001).astype(np.int16)
    assert add(kiln.to_device(a)) == np.int16(a.sum(dtype=np.int64))
    res = kiln.device_array(1, np.int16)
    add(kiln.to_device(a), res=res)
    assert res.copy_to_host()[0] == np.int16(a.sum(dtype=np.int64))
    small = a[:100]
    assert add(kiln.to_device(small), init=5) == np.int16(small.sum() + 5)


def test_two_streams_keep_their_own_counters(rng):
    a, b = rng.random(1 << 20), rng.random(1 << 21)
    s1, s2 = kiln.stream(), kiln.stream()
    da, db = kiln.to_device(a), kiln.to_device(b)
    ra, rb = kiln.device_array(1, np.float64), kiln.device_array(1, np.float64)
    for _ in range(5):
        add(da, res=ra, stream=s1)
        add(db, res=rb, stream=s2)
    kiln.synchronize()
    np.testing.assert_allclose(ra.copy_to_host()[0], a.sum(), rtol=1e-9)
    np.testing.assert_allclose(rb.copy_to_host()[0], b.sum(), rtol=1e-9)
