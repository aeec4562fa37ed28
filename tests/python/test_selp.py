"""kiln.selp (Numba's cuda.selp) is a function of three values: each operand is evaluated,
in order, whichever the predicate chooses, and the GPU selects (PTX selp) rather than
branching around the load of the operand not chosen."""
import re

import numpy as np

import kiln
from kiln import int64


@kiln.jit
def selp_counts(out, n, a):
    i = kiln.grid(1)
    if i < a.size:
        # the atomic in the operand not chosen runs too
        out[i] = kiln.selp(a[i] > 0, kiln.atomic.add(n, 0, 1), kiln.atomic.add(n, 1, 1) + 100)


def test_selp_evaluates_both_operands():
    a = np.array([1, -1, 2, -2, 3], np.int64)
    out = np.zeros(5, np.int64)
    n = np.zeros(2, np.int64)
    selp_counts[1, 5](out, n, a)
    assert list(n) == [5, 5]
    assert (out[a > 0] < 5).all() and (out[a <= 0] >= 100).all()


def branching_with_selps(a, b, c):
    i = kiln.grid(1)
    inner = kiln.selp(b % 2 == 0, c[i], 13)
    a[i] = kiln.selp(a[i] > 4, inner, 3)


def test_selp_is_a_select_in_the_ptx():
    sig = (int64[:], int64, int64[:])
    k = kiln.jit(sig)(branching_with_selps)
    ptx = k.inspect_asm(sig)
    entry = re.search(r"\.entry kiln_entry\(.*?\n\}", ptx, re.S).group(0)
    assert "selp.b64" in entry
    assert not re.findall(r"\s+bra\s+", entry)
    a, c = np.arange(32, dtype=np.int64), np.full(32, 17, np.int64)
    k[1, 32](a, 6, c)
    assert (a[:5] == 3).all() and (a[5:] == 17).all()
