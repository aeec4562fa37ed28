"""reduce-overhead on a GPU (pytest -m gpu): graph replays equal eager results on fresh
random inputs, new buffers update the graph's nodes without a new graph (counted), and
returned arrays are new at each call."""
import numpy as np
import pytest

import kiln
from kiln import _kiln

pytestmark = pytest.mark.gpu


@kiln.jit
def axpy(out, a, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@kiln.jit
def hist(h, x):
    i = kiln.grid(1)
    if i < x.size:
        kiln.atomic.add(h, int(x[i] * 16) % 16, 1)


def step(x, y):
    n = x.size
    t = kiln.device_array(x.shape, x.dtype)
    out = kiln.device_array(x.shape, x.dtype)
    g = (n + 255) // 256
    axpy[g, 256](t, 2.0, x, y)
    axpy[g, 256](out, -1.0, t, x)
    axpy[g, 256](t, 0.5, out, y)
    axpy[g, 256](out, 1.0, t, t)
    return out


def ref(x, y):
    t = 2 * x + y
    o = -t + x
    t = 0.5 * o + y
    return t + t


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_graph_replay_equals_eager(rng, dt):
    f = kiln.compile(step, mode="reduce-overhead")
    made0, rep0, graphs0, _ = _kiln.record_counts()
    outs = []
    for _ in range(6):
        xh, yh = rng.random(1 << 16).astype(dt), rng.random(1 << 16).astype(dt)
        x, y = kiln.to_device(xh), kiln.to_device(yh)
        r = f(x, y)
        outs.append((r, ref(xh, yh)))
    for r, want in outs:                      # earlier results were not overwritten
        np.testing.assert_allclose(r.copy_to_host(), want, rtol=1e-6)
    made, rep, graphs, _ = _kiln.record_counts()
    assert (made - made0, rep - rep0, graphs - graphs0) == (1, 5, 1)
    assert f.records[0].graph and f.records[0].launches == 4


def test_graph_histogram_into_a_fresh_temporary(rng):
    def h(x):
        acc = kiln.device_array(16, np.int64)
        zero[1, 16](acc)
        hist[(x.size + 255) // 256, 256](acc, x)
        return acc

    @kiln.jit
    def zero(a):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = 0

    f = kiln.compile(h, mode="reduce-overhead")
    for _ in range(4):
        xh = rng.random(10000)
        want = np.bincount((xh * 16).astype(np.int64) % 16, minlength=16)
        np.testing.assert_array_equal(f(kiln.to_device(xh)).copy_to_host(), want)


def test_max_autotune_on_the_gpu_keeps_outputs_and_a_choice(rng):
    from kiln import _autotune

    @kiln.vectorize
    def poly(x, y):
        return x * x * 0.5 + y * 3.0 - 1.0

    f = kiln.compile(lambda x, y, out=None: poly(x, y, out=out), mode="max-autotune")
    xh, yh = rng.random(1 << 18), rng.random(1 << 18)
    x, y = kiln.to_device(xh), kiln.to_device(yh)
    want = xh * xh * 0.5 + yh * 3.0 - 1.0
    np.testing.assert_allclose(f(x, y).copy_to_host(), want)
    r = f(x, y, out=x)                       # out= aliases x: the search writes a scratch
    np.testing.assert_allclose(x.copy_to_host(), want)
    assert any("vectorize-gpu" in k for k, _ in _autotune.kept())
