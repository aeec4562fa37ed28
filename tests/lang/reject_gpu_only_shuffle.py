# rejected: warp intrinsics on the CPU target
import numpy as np
import kiln


@kiln.jit
def k(a):
    v = kiln.shfl_down_sync(0xffffffff, a[0], 1)
    m = kiln.ballot_sync(kiln.activemask(), v > 0)
    a[0] = v + m + kiln.laneid


def main():
    k[1, 1](np.zeros(4))
