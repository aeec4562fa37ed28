"""max-autotune: launch configurations chosen by timing, kept in the cache.

While a step compiled with ``kiln.compile(step, mode="max-autotune")`` runs, the launches
whose configuration kiln chooses (``vectorize``, and Numba's ``kernel.forall(n)``) time each candidate number of threads
per block on the real arguments, writing a scratch output so nothing the caller sees is
touched, and keep the fastest: in memory, and in the disk cache as the fact
``autotune|<kind>|<function:code:types:kernel>|<device>|<size bucket>`` = ``threads=N``, so
a later process pays no search (``kiln cache ls`` lists them).  The size bucket is the bit
length of the element count (sizes within a factor of 2 share a choice).  A candidate must
beat the default by more than NOISE to be kept over it.  KILN_AUTOTUNE=0 turns the search
off (read when kiln is imported): the default then, and kept choices are not read.  docs/modes.md is the user's account.
"""
import os
import _thread
import time

from . import _kiln

DEFAULT_THREADS = _kiln.ufunc_threads  # 256, the flat launch of ufunc.c too
GPU_THREADS = (128, 256, 512, 1024)      # threads per block on the GPU
CPU_THREADS = (64, 256, 1024)           # on the CPU: the block one OpenMP iteration runs
ROUNDS = 7                               # timed launches per candidate (median)
NOISE = 0.05                             # a candidate beats the default by more than this,
                                         # in two separate contests

_memo = {}
_lock = _thread.allocate_lock()  # not threading's: 3 ms of `import kiln`


def _read_on():
    """KILN_AUTOTUNE, read once when kiln is imported: 0 or 1; another value is warned about
    (importing kiln must not fail on it) and leaves the search on, the default."""
    v = os.environ.get("KILN_AUTOTUNE", "1").strip()
    if v in ("0", "1", ""):
        return v != "0"
    import warnings

    warnings.warn(f"KILN_AUTOTUNE must be 0 or 1, not {v!r}: the autotuner stays on",
                  RuntimeWarning, stacklevel=2)
    return True


_ON = _read_on()


def _never():
    return False


# active(): whether this thread runs a max-autotune step (a C thread-local that
# kiln.compile's step raises through _kiln.tune_call: tunedepth.c) and the search is on
active = _kiln.tuning if _ON else _never


def on():
    """Whether KILN_AUTOTUNE leaves the search on."""
    return _ON



def _name(kind, ident, device, n):
    return f"autotune|{kind}|{ident}|{device}|{bucket(n)}"


def bucket(n):
    """Sizes within a factor of 2 share a choice."""
    return max(int(n), 1).bit_length()


def choose(key, kind, ident, device, n, candidates, make_run, sync, default=DEFAULT_THREADS,
           label="threads"):
    """The threads per block for this launch (or what label names: "blocks" for a
    reduction's grid): the kept choice, else the fastest candidate.
    key: a cheap, hashable identity of the launch (looked up first, in memory); ident():
    its text for the cache; make_run() returns run(c), which launches with c threads into
    a scratch output; sync waits for the device (None on the CPU)."""
    c = _memo.get(key)
    if c is not None:
        return c
    name = _name(kind, ident(), device, n)
    kept = _kiln.cache_fact(name)
    if kept is not None and kept.startswith(label + "="):
        try:
            c = int(kept[len(label) + 1:])
        except ValueError:
            c = None
        if c not in candidates:     # a value this kiln would not choose: search again
            c = None
    if c is None:
        c = _search(candidates, make_run(), sync, default)
        _kiln.cache_set_fact(name, f"{label}={c}")
    with _lock:
        _memo[key] = c
    return c


def _median(v):
    """statistics.median, without importing statistics (10 ms of `import kiln`)."""
    v = sorted(v)
    h = len(v) // 2
    return v[h] if len(v) % 2 else (v[h - 1] + v[h]) / 2


def _timed(cands, run, sync, rounds):
    """Median seconds of each candidate over rounds that interleave them (drift hits all)."""
    times = {c: [] for c in cands}
    for _ in range(rounds):
        for c in cands:
            t0 = time.perf_counter()
            run(c)
            if sync:
                sync()
            times[c].append(time.perf_counter() - t0)
    return {c: _median(v) for c, v in times.items()}


def _search(candidates, run, sync, default=DEFAULT_THREADS):
    for c in candidates:            # the first launches of each compile it and touch memory
        run(c)
        run(c)
    if sync:
        sync()
    med = _timed(candidates, run, sync, ROUNDS)
    best = min(med, key=med.get)
    if default not in med or best == default:
        return best
    # a second, separate contest between the winner and the default: a winner by chance
    # (a noisy round) rarely wins twice; the default stays unless beaten by more than NOISE
    again = _timed((best, default), run, sync, ROUNDS)
    if med[best] < med[default] * (1 - NOISE) and again[best] < again[default] * (1 - NOISE):
        return best
    return default


def kept():
    """The choices kept in the disk cache: [(name, value)]."""
    return _kiln.cache_facts("autotune|")
