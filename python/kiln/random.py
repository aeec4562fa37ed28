"""kiln.random: Numba's ``numba.cuda.random``, xoroshiro128+ generators kernels call.

Each generator's state is one record of ``xoroshiro128p_dtype`` (two uint64 words, s0 and
s1) in an array the kernel takes; a thread draws from its own element with
``xoroshiro128p_uniform_float32(states, i)`` and the others below, which are kiln device
functions written here in the kernel language (on both targets).

The generator is xoroshiro128+ (Blackman and Vigna, 2016: the 55/14/36 rotations, and its
2**64-step jump polynomial).  ``create_xoroshiro128p_states(n, seed)`` seeds the first
state from ``seed`` with splitmix64 (Steele, Lea and Flood), advances it by
``subsequence_start`` jumps, and makes each further state one jump (2**64 draws) after the
previous one, so the n streams never overlap for any practical run.  The states are
computed on the host by a CPU kernel of one thread (the jumps are sequential: about a
second for 2**21 states), then copied to the GPU.

Floats: uniform in [0, 1) from the top 53 (float64) or 24 (float32) bits of a draw; normal
by Box-Muller from two uniform draws.
"""
import math
import operator

import numpy as np

from . import _cuda
from ._dispatch import jit

__all__ = ["xoroshiro128p_dtype", "create_xoroshiro128p_states", "init_xoroshiro128p_states",
           "xoroshiro128p_next", "xoroshiro128p_jump", "xoroshiro128p_uniform_float32",
           "xoroshiro128p_uniform_float64", "xoroshiro128p_normal_float32",
           "xoroshiro128p_normal_float64"]

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)

_TWO_PI = 2.0 * math.pi


@jit(device=True)
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@jit(device=True)
def xoroshiro128p_next(states, index):
    """The next 64-bit draw of generator ``index`` (a uint64), advancing its state."""
    s0 = states[index].s0
    s1 = states[index].s1
    result = s0 + s1
    s1 ^= s0
    states[index].s0 = _rotl(s0, 55) ^ s1 ^ (s1 << np.uint64(14))
    states[index].s1 = _rotl(s1, 36)
    return result


@jit(device=True)
def xoroshiro128p_jump(states, index):
    """Advances generator ``index`` by 2**64 draws (the jump polynomial of xoroshiro128+)."""
    j0 = np.uint64(0xBEAC0467EBA5FACB)
    j1 = np.uint64(0xD86B048B86AA9922)
    t0 = np.uint64(0)
    t1 = np.uint64(0)
    for w in range(2):
        word = j0 if w == 0 else j1
        for b in range(64):
            if (word >> np.uint64(b)) & np.uint64(1):
                t0 ^= states[index].s0
                t1 ^= states[index].s1
            xoroshiro128p_next(states, index)
    states[index].s0 = t0
    states[index].s1 = t1


@jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """A float64 uniform in [0, 1): the top 53 bits of a draw."""
    return np.float64(xoroshiro128p_next(states, index) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """A float32 uniform in [0, 1): the float64 uniform of the draw rounded to float32, as
    Numba's (so the same seed gives the same numbers)."""
    return np.float32(xoroshiro128p_uniform_float64(states, index))


@jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """A float64 drawn from the standard normal distribution by Box-Muller over two float32
    uniforms, as Numba's (the same numbers for the same seed; a draw of 0 gives inf)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    # float32 logarithm and uniforms, float64 products: Numba's types
    return math.sqrt(np.float64(-2.0) * math.log(u1)) * math.cos(np.float64(_TWO_PI) * u2)


@jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """A float32 drawn from the standard normal distribution (Box-Muller, as Numba's)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return np.float32(math.sqrt(np.float32(-2.0) * math.log(u1))
                      * math.cos(np.float32(_TWO_PI) * u2))


@jit(device=True)
def _splitmix64(x):
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@jit(target="cpu")
def _init_states(states, seed, subsequence_start):
    # one thread: each state is one jump after the previous, so the work is sequential;
    # while loops, which look for Ctrl-C at each turn (a huge subsequence_start takes long)
    n = states.shape[0]
    if n == 0:
        return
    z = _splitmix64(seed)
    states[0].s0 = z
    states[0].s1 = z
    j = np.uint64(0)
    while j < subsequence_start:
        xoroshiro128p_jump(states, 0)
        j += np.uint64(1)
    i = 1
    while i < n:
        states[i] = states[i - 1]
        xoroshiro128p_jump(states, i)
        i += 1


def _host_states(n, seed, subsequence_start):
    subsequence_start = _count("subsequence_start", subsequence_start)
    seed = _count("seed", seed, signed=True)
    if subsequence_start >= 1 << 64:  # a jump is 2**64 draws of a 2**128 period
        raise ValueError(f"subsequence_start is {subsequence_start}; a generator has 2**64 "
                         f"subsequences (jumps), so it must be below 2**64")
    states = np.empty(n, dtype=xoroshiro128p_dtype)
    _init_states[1, 1](states, np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF),
                       np.uint64(subsequence_start))
    return states


def _count(what, v, signed=False):
    """An integer argument (a Python or NumPy int, not a float or a string)."""
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(v).__name__}") from None
    if v < 0 and not signed:
        raise ValueError(f"{what} is a count, at least 0; got {v}")
    return v


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Seeds an array of ``xoroshiro128p_dtype`` (a device array or a host array) as
    ``create_xoroshiro128p_states`` does."""
    if np.dtype(states.dtype) != xoroshiro128p_dtype:
        raise TypeError(f"states must have dtype xoroshiro128p_dtype, not {states.dtype}")
    if len(states.shape) != 1:  # a 2-d array got one row's states broadcast to every row
        raise ValueError(f"states must be a 1-d array of generator states, not of shape "
                         f"{tuple(states.shape)}")
    host = _host_states(states.shape[0], seed, subsequence_start)
    if isinstance(states, np.ndarray):
        states[...] = host
    else:
        states.copy_to_device(host, stream=stream)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """n generator states, each 2**64 draws after the previous (the first one
    ``subsequence_start`` jumps after ``seed``'s), as a kiln device array: in GPU memory when
    a GPU is usable (and KILN_TARGET is not cpu), else in host memory, which CPU launches
    take without a copy (and which has ``copy_to_host``, as Numba's device arrays do)."""
    from . import _kiln

    n = _count("n", n)
    host = _host_states(n, seed, subsequence_start)
    if _gpu_usable() and not _cuda.on_host():
        return _cuda.to_device(host, stream=stream)
    d = _kiln.device_empty(host.shape, _cuda._code(host.dtype), "C", _cuda.HOST, 0)
    _kiln.copy("h2d", d._device, d._ptr, host, host.nbytes, 0)
    return d


def _gpu_usable():
    from . import _kiln

    try:
        return bool(_kiln.cuda_available()[0])
    except Exception:  # no driver: the CPU target
        return False
