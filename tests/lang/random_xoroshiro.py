# kiln.random (Numba's cuda.random): the first draws of xoroshiro128+ streams seeded by
# splitmix64, each state 2**64 draws after the previous; kernels call the device functions
# through the module (kiln.random.X) or by name
import numpy as np
import kiln
from kiln.random import (create_xoroshiro128p_states, init_xoroshiro128p_states,
                         xoroshiro128p_next, xoroshiro128p_uniform_float32,
                         xoroshiro128p_dtype)


@kiln.jit
def draws(states, raw, u32, u64, n32, n64):
    i = kiln.grid(1)
    if i < states.shape[0]:
        raw[i] = xoroshiro128p_next(states, i)
        u32[i] = xoroshiro128p_uniform_float32(states, i)
        u64[i] = kiln.random.xoroshiro128p_uniform_float64(states, i)
        n32[i] = kiln.random.xoroshiro128p_normal_float32(states, i)
        n64[i] = kiln.random.xoroshiro128p_normal_float64(states, i)


def main():
    np.set_printoptions(precision=6)
    s = create_xoroshiro128p_states(4, seed=1).copy_to_host()
    print(s)
    t = np.zeros(4, xoroshiro128p_dtype)
    init_xoroshiro128p_states(t, seed=1, subsequence_start=2)
    print((t[:2] == s[2:]).all())
    raw = np.zeros(4, np.uint64)
    u32, n32 = np.zeros(4, np.float32), np.zeros(4, np.float32)
    u64, n64 = np.zeros(4), np.zeros(4)
    draws[1, 4](s, raw, u32, u64, n32, n64)
    for a in (raw, u32, u64, n32, n64):
        print(a)
