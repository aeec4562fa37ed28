"""kiln.random (Numba's cuda.random): xoroshiro128+ against a plain-Python rendering of the
published algorithm, the jump's defining property, the states' layout and offsets, and the
statistics Numba's own test_random.py checks (that file needs base numba, so the suite skips
it)."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln
from kiln import random as kr

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")
M = (1 << 64) - 1


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M


def ref_next(s):
    """xoroshiro128+ (Blackman and Vigna): the draw and the next state."""
    s0, s1 = s
    r = (s0 + s1) & M
    s1 ^= s0
    return r, (_rotl(s0, 55) ^ s1 ^ ((s1 << 14) & M), _rotl(s1, 36))


def ref_splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


@kiln.jit
def next_k(states, out, count):
    i = kiln.grid(1)
    if i < states.shape[0]:
        for j in range(count):
            out[i, j] = kr.xoroshiro128p_next(states, i)


@kiln.jit
def jump_k(states):
    i = kiln.grid(1)
    if i < states.shape[0]:
        kr.xoroshiro128p_jump(states, i)


UNIFORM, NORMAL = 1, 2


@kiln.jit
def rng32(states, out, count, distribution):  # Numba's test_random.py kernels
    thread_id = kiln.grid(1)
    for i in range(count):
        idx = thread_id * count + i
        if distribution == UNIFORM:
            out[idx] = kr.xoroshiro128p_uniform_float32(states, thread_id)
        elif distribution == NORMAL:
            out[idx] = kr.xoroshiro128p_normal_float32(states, thread_id)


@kiln.jit
def rng64(states, out, count, distribution):
    thread_id = kiln.grid(1)
    for i in range(count):
        idx = thread_id * count + i
        if distribution == UNIFORM:
            out[idx] = kr.xoroshiro128p_uniform_float64(states, thread_id)
        elif distribution == NORMAL:
            out[idx] = kr.xoroshiro128p_normal_float64(states, thread_id)


def host(states):
    return states.copy_to_host() if hasattr(states, "copy_to_host") else states


def test_dtype_and_seeding():
    assert kr.xoroshiro128p_dtype == np.dtype([("s0", np.uint64), ("s1", np.uint64)],
                                               align=True)
    s = host(kr.create_xoroshiro128p_states(3, seed=1))
    z = ref_splitmix64(1)
    assert (int(s[0]["s0"]), int(s[0]["s1"])) == (z, z)
    assert len(np.unique(host(kr.create_xoroshiro128p_states(10, seed=1)))) == 10
    neg = host(kr.create_xoroshiro128p_states(2, seed=-1))  # taken modulo 2**64
    assert int(neg[0]["s0"]) == ref_splitmix64(M)


def test_next_matches_the_published_algorithm():
    states = host(kr.create_xoroshiro128p_states(8, seed=12345))
    want = []
    for rec in states:
        st = (int(rec["s0"]), int(rec["s1"]))
        row = []
        for _ in range(20):
            r, st = ref_next(st)
            row.append(r)
        want.append(row)
    out = np.zeros((8, 20), np.uint64)
    next_k[1, 8](states, out, 20)
    assert out.tolist() == want


def test_uniforms_and_normals_are_numbas():
    # Numba's numba.cuda.random: a float32 uniform is the float64 one (top 53 bits) rounded,
    # and both normals are Box-Muller over two float32 uniforms (log in float32; the float64
    # normal's products in float64), so a seed gives Numba's numbers
    import math

    states = host(kr.create_xoroshiro128p_states(1, seed=2024))
    st = (int(states[0]["s0"]), int(states[0]["s1"]))

    def u64():
        nonlocal st
        r, st = ref_next(st)
        return (r >> 11) * (1.0 / (1 << 53))

    def u32():
        return np.float32(u64())

    out32, out64 = np.zeros(40, np.float32), np.zeros(40, np.float64)
    rng32[1, 1](states.copy(), out32, 40, UNIFORM)
    assert out32.tolist() == [u32() for _ in range(40)]  # exact
    st = (int(states[0]["s0"]), int(states[0]["s1"]))
    rng32[1, 1](states.copy(), out32, 40, NORMAL)
    want = []
    for _ in range(40):
        a, b = u32(), u32()
        want.append(np.sqrt(np.float32(-2.0) * np.log(a)) * np.cos(np.float32(2 * math.pi) * b))
    np.testing.assert_allclose(out32, np.array(want, np.float32), rtol=2e-6, atol=2e-6)
    st = (int(states[0]["s0"]), int(states[0]["s1"]))
    rng64[1, 1](states.copy(), out64, 40, NORMAL)
    want = []
    for _ in range(40):
        a, b = u32(), u32()
        want.append(math.sqrt(-2.0 * float(np.log(a))) * math.cos(2 * math.pi * float(b)))
    np.testing.assert_allclose(out64, want, rtol=1e-6, atol=1e-6)


def test_jump_commutes_with_next():
    # a jump is a linear map (a polynomial in the state transition): jump(next(s)) must
    # equal next(jump(s)), and the states create() makes are one jump apart
    s = host(kr.create_xoroshiro128p_states(4, seed=7))
    a, b = s.copy(), s.copy()
    out = np.zeros((4, 1), np.uint64)
    next_k[1, 4](a, out, 1)
    jump_k[1, 4](a)
    jump_k[1, 4](b)
    next_k[1, 4](b, out, 1)
    assert (a == b).all()
    c = s.copy()
    jump_k[1, 4](c)
    assert (c[:3] == s[1:]).all()


def test_subsequence_start_offsets_the_states():
    s1 = host(kr.create_xoroshiro128p_states(10, seed=1))
    s2 = host(kr.create_xoroshiro128p_states(10, seed=1, subsequence_start=3))
    np.testing.assert_array_equal(s1[3:], s2[:-3])
    t = np.zeros(10, kr.xoroshiro128p_dtype)
    kr.init_xoroshiro128p_states(t, 1, subsequence_start=3)
    np.testing.assert_array_equal(t, s2)
    with pytest.raises(TypeError):
        kr.init_xoroshiro128p_states(np.zeros(3, np.uint64), 1)


@pytest.mark.parametrize("kernel", [rng32, rng64])
def test_uniform_statistics(kernel):
    states = kr.create_xoroshiro128p_states(32 * 2, seed=1)
    out = np.zeros(2 * 32 * 32, dtype=np.float32)
    kernel[2, 32](states, out, 32, UNIFORM)
    assert abs(out.min()) < 1e-3 and abs(out.max() - 1.0) < 1e-3
    assert out.min() >= 0.0 and out.max() < 1.0
    assert abs(out.mean() - 0.5) < 1.5e-2
    assert abs(out.std() - 1.0 / (2 * math.sqrt(3))) < 6e-3


@pytest.mark.parametrize("kernel,dtype", [(rng32, np.float32), (rng64, np.float64)])
def test_normal_statistics(kernel, dtype):
    states = kr.create_xoroshiro128p_states(32 * 2, seed=1)
    out = np.zeros(2 * 32 * 32, dtype=dtype)
    kernel[2, 32](states, out, 32, NORMAL)
    assert abs(out.mean()) < 4e-3 and abs(out.std() - 1.0) < 2e-3
    assert np.isfinite(out).all()


def test_states_are_a_device_array_with_the_host_device_api():
    # KILN_TARGET=cpu: the states are a host-backed kiln device array, as the GPU's would be
    # a device array; the draws are the same as without it
    code = """
import numpy as np, kiln
from kiln.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float64

@kiln.jit
def k(states, out):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = xoroshiro128p_uniform_float64(states, i)

s = create_xoroshiro128p_states(16, seed=99)
assert isinstance(s, kiln.DeviceArray)
out = kiln.device_array(16, np.float64)
k[1, 16](s, out)
print(out.copy_to_host().tobytes().hex())
"""
    runs = []
    for target in ("cpu", ""):
        env = dict(os.environ, KILN_TARGET=target, PYTHONPATH=PYDIR)
        if not target:
            env.pop("KILN_TARGET")
            code_i = code.replace("kiln.device_array(16, np.float64)", "np.zeros(16)") \
                         .replace("out.copy_to_host()", "out")
        else:
            code_i = code
        r = subprocess.run([sys.executable, "-c", code_i], env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        runs.append(r.stdout.strip())
    assert runs[0] == runs[1] and len(runs[0]) == 16 * 16


def test_states_arguments_are_counts_and_a_long_seeding_stops_at_ctrl_c(monkeypatch):
    # hunt14 3: subsequence_start=2**62 jumped for hours with Ctrl-C ignored; floats were
    # truncated into counts
    import os
    import signal
    import subprocess
    import sys
    import kiln.random as kr
    monkeypatch.setenv("KILN_TARGET", "cpu")
    with pytest.raises(ValueError, match="must be below 2\\*\\*64"):
        kr.create_xoroshiro128p_states(4, 1, subsequence_start=2**64)
    for bad in ((2.7, 1), (4, 1.9), ("4", 1)):
        with pytest.raises(TypeError, match="must be an int"):
            kr.create_xoroshiro128p_states(*bad)
    with pytest.raises(ValueError, match="at least 0"):
        kr.create_xoroshiro128p_states(4, 1, subsequence_start=-1)
    code = ("import time, kiln.random as r\nr.create_xoroshiro128p_states(2, 1, 3)\n"
            "print('ready', flush=True)\nt = time.time()\n"
            "try:\n    r.create_xoroshiro128p_states(4, 1, subsequence_start=2**62)\n"
            "except KeyboardInterrupt:\n    print('stopped after', time.time() - t)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, KILN_TARGET="cpu",
               PYTHONPATH=os.environ.get("KILN_TEST_PYDIR") or os.path.join(root, "python"))
    p = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        import time
        time.sleep(1.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert "stopped after" in out, (out, err)
