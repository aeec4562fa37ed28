"""Tiered compilation on the CPU target (docs/architecture.md, "Tiers").

A first call whose optimised build is in no cache tier runs tier 0 (libtcc, in the
process) and queues the optimising build; the build's module is swapped in for the
next launch.  Every scenario runs in a fresh process with a cache directory of its
own and KILN_TIERS=1 (the rest of the suite runs with KILN_TIERS=0), checking every
result against NumPy; waits are bounded (kiln._kiln.tier_wait)."""
import glob
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import kiln
from kiln import _kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")

# under a sanitizer (LD_PRELOAD) everything takes a few times longer
SLOW = 4 if any(s in os.environ.get("LD_PRELOAD", "") for s in ("tsan", "asan")) else 1

pytestmark = pytest.mark.skipif(not _kiln.tier_stats()["available"],
                                reason="kiln was built without libtcc (tier 0 off)")

HEAD = f'''
SLOW = {SLOW}
''' + '''
import os, sys, time, warnings, threading
import numpy as np
import kiln
from kiln import _kiln

@kiln.jit
def mix(out, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = x[i] * 3 + y[i] // 2 + i % 7

def want(x, y):
    return x * 3 + y // 2 + np.arange(x.size) % 7

def inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(-1000, 1000, n), rng.integers(-1000, 1000, n)

def entry(k):
    return k._entry_for(None)

def until_running():
    """Waits (at most 10 s) until a worker runs the optimising build."""
    for _ in range(1000):
        if _kiln.tier_stats()["running"]:
            return
        time.sleep(0.01)
    raise AssertionError(_kiln.tier_stats())

def until_compiling(word=b"slow-cc"):
    """Waits (at most 10 s) until this process's optimising build runs the C compiler."""
    me = str(os.getpid())
    for _ in range(1000):
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = f.read().rsplit(")", 1)[1].split()[1]
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if ppid == me and word in f.read():
                        time.sleep(0.05)  # the worker is past spawning, in its poll
                        return
            except (OSError, IndexError):
                pass
        time.sleep(0.01)
    raise AssertionError(_kiln.tier_stats())
'''


# a kernel whose threads each run a loop of n (the scripts below dedent what follows it)
HEAVY = '''
@kiln.jit
def heavy(out, n):
    i = kiln.grid(1)
    s = 0.0
    for k in range(n):
        s += (i + k) % 7
    out[i] += s
'''


def env_for(tmp_path, **extra):
    env = dict(os.environ)
    env.update(PYTHONPATH=PYDIR, KILN_CACHE_DIR=str(tmp_path / "cache"), KILN_TARGET="cpu",
               KILN_TIERS="1", TMPDIR=str(tmp_path))
    env.pop("KILN_REMOTE_CACHE", None)
    env.pop("KILN_CHECK_CUDA", None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(tmp_path, body, timeout=60, pre="", **extra):
    """Runs HEAD + pre + body in a new process; returns its stdout (asserting status 0)."""
    script = tmp_path / f"script{len(list(tmp_path.glob('script*.py')))}.py"
    script.write_text(HEAD + pre + textwrap.dedent(body))
    p = subprocess.run([sys.executable, str(script)], env=env_for(tmp_path, **extra),
                       capture_output=True, text=True, timeout=timeout * SLOW, cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def slow_cc(tmp_path, seconds):
    """A C compiler that takes `seconds` before compiling: the optimising build stays
    pending meanwhile."""
    path = tmp_path / "slow-cc"
    path.write_text(f"#!/bin/sh\nsleep {seconds}\nexec cc \"$@\"\n")
    path.chmod(0o755)
    return str(path)


def failing_cc(tmp_path):
    """A C compiler that fails at once: the optimising build ends, and the entry stays on
    tier 0."""
    path = tmp_path / "failing-cc"
    path.write_text("#!/bin/sh\nexit 1\n")
    path.chmod(0o755)
    return str(path)


def running(word):
    """Whether a process whose command line holds word runs (what pgrep -f says, without
    starting a program under this interpreter's LD_PRELOAD)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if word.encode() in f.read():
                    return True
        except OSError:
            pass
    return False


def test_first_call_runs_tier0_then_the_optimised_code(tmp_path):
    out = run(tmp_path, '''
        x, y = inputs(5000)
        out = np.zeros_like(x)
        mix[40, 128](out, x, y)
        e = entry(mix)
        s = _kiln.tier_stats()
        assert e.tier == 0 and s["tier0_loads"] == 1, (e.tier, s)
        assert np.array_equal(out, want(x, y))
        assert _kiln.tier_wait(60)
        s = _kiln.tier_stats()
        assert e.tier == 1 and s["swaps"] == 1 and s["failures"] == 0, s
        out[:] = 0
        mix[40, 128](out, x, y)
        assert np.array_equal(out, want(x, y))
        assert kiln.cache.stats()["compiles"] == 1
        print("ok", s["tier0_ms"])
    ''')
    assert out.startswith("ok")


def test_eight_threads_launch_across_the_swap(tmp_path):
    out = run(tmp_path, '''
        x, y = inputs(3000)
        ref = want(x, y)
        start = threading.Barrier(8)
        seen = []   # the tier each launch found before it started
        bad = []
        def work(t):
            out = np.empty_like(x)
            start.wait()
            for r in range(100000):
                before = mix._entry_for(None).tier if r else 0
                out[:] = -1
                mix[24, 128](out, x, y)
                if not np.array_equal(out, ref):
                    bad.append((t, r))
                seen.append(before)
                if before == 1 and r > 20:
                    break
        ts = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for t in ts: t.start()
        for t in ts: t.join(60 * SLOW)
        assert not any(t.is_alive() for t in ts)
        assert not bad, bad[:5]
        assert seen.count(0) > 8 and seen.count(1) >= 8, (seen.count(0), seen.count(1))
        assert _kiln.tier_stats()["swaps"] == 1
        print("ok", len(seen))
    ''', KILN_CC=slow_cc(tmp_path, 0.5))
    assert out.startswith("ok")


def test_kiln_tiers_0_builds_the_optimised_code_at_the_first_call(tmp_path):
    out = run(tmp_path, '''
        x, y = inputs(1000)
        out = np.zeros_like(x)
        mix[8, 128](out, x, y)
        assert np.array_equal(out, want(x, y))
        s = _kiln.tier_stats()
        assert entry(mix).tier == 1 and s["tier0_loads"] == 0 and s["queued"] + s["running"] == 0
        assert kiln.cache.stats()["compiles"] == 1
        print("ok")
    ''', KILN_TIERS=0)
    assert out.startswith("ok")


def test_a_cache_hit_skips_tier0(tmp_path):
    body = '''
        x, y = inputs(1000)
        out = np.zeros_like(x)
        mix[8, 128](out, x, y)
        assert np.array_equal(out, want(x, y))
        print(entry(mix).tier, _kiln.tier_stats()["tier0_loads"])
        _kiln.tier_wait(60)
    '''
    assert run(tmp_path, body).split() == ["0", "1"]
    assert run(tmp_path, body).split() == ["1", "0"]  # the disk tier has the optimised build
    # the memory tier: a second kernel of the same text in the same process
    out = run(tmp_path, body + '''
        mix._clear_entries()
        mix[8, 128](out, x, y)
        print(entry(mix).tier, _kiln.tier_stats()["tier0_loads"])
    ''')
    assert out.split() == ["1", "0", "1", "0"]


def test_a_large_launch_waits_for_the_optimised_build(tmp_path):
    out = run(tmp_path, '''
        x, y = inputs(1 << 21)
        out = np.zeros_like(x)
        mix[(x.size + 255) // 256, 256](out, x, y)   # 2M threads: past tier 0's budget
        s = _kiln.tier_stats()
        assert entry(mix).tier == 1 and s["waits"] == 1 and s["tier0_loads"] == 1, s
        assert np.array_equal(out, want(x, y))
        print("ok")
    ''', KILN_TIER0_SCALAR=1)  # the scalar entry's guess: 100 ns a thread
    assert out.startswith("ok")


def test_a_broken_compiler_after_tier0_warns_once_and_results_stay_right(tmp_path):
    bad = tmp_path / "broken-cc"
    bad.write_text("#!/bin/sh\necho 'broken-cc: cannot work today' >&2\nexit 3\n")
    bad.chmod(0o755)
    out = run(tmp_path, '''
        x, y = inputs(2000)
        out = np.zeros_like(x)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            mix[16, 128](out, x, y)
            assert np.array_equal(out, want(x, y))
            assert _kiln.tier_wait(60)
            for _ in range(3):
                out[:] = 0
                mix[16, 128](out, x, y)
                assert np.array_equal(out, want(x, y))
        perf = [str(m.message) for m in w if issubclass(m.category, kiln.PerformanceWarning)]
        assert len(perf) == 1, perf
        assert "broken-cc" in perf[0] and "tier 0" in perf[0], perf[0]
        assert entry(mix).tier == 0 and _kiln.tier_stats()["failures"] == 1
        print("ok")
    ''', KILN_CC=str(bad))
    assert out.startswith("ok")


def test_fork_while_the_optimised_build_runs(tmp_path):
    out = run(tmp_path, '''
        x, y = inputs(2000)
        out = np.zeros_like(x)
        mix[16, 128](out, x, y)
        assert entry(mix).tier == 0
        # fork while the worker waits for the (slow) compiler: under GCC 12's libasan, whose
        # allocator has no fork handlers, a fork while the worker is inside malloc leaves
        # the child's malloc waiting for ever on the lock that thread held (seen in CI)
        until_compiling()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                for _ in range(5):
                    out[:] = 0
                    mix[16, 128](out, x, y)
                    assert np.array_equal(out, want(x, y))
                assert _kiln.tier_wait(60), _kiln.tier_stats()
                assert entry(mix).tier == 1, _kiln.tier_stats()
                mix[16, 128](out, x, y)
                assert np.array_equal(out, want(x, y))
                code = 0
            except BaseException:
                import traceback
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        deadline = time.time() + 90
        while time.time() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.02)
        else:
            os.kill(pid, 9)
            raise AssertionError("the child did not end")
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        assert _kiln.tier_wait(60) and entry(mix).tier == 1
        mix[16, 128](out, x, y)
        assert np.array_equal(out, want(x, y))
        print("ok")
    ''', timeout=120, KILN_CC=slow_cc(tmp_path, 1))
    assert out.startswith("ok")


@pytest.mark.parametrize("blocks", [1, 64], ids=["one-thread", "shared"])
def test_ctrl_c_stops_a_tier0_kernel_in_an_endless_loop(tmp_path, blocks):
    # 64 blocks of 128: a launch tier 0 shares between its threads (several spin at once)
    script = tmp_path / "spin.py"
    script.write_text(f"BLOCKS, THREADS = {blocks}, {1 if blocks == 1 else 128}\n" + textwrap.dedent('''
        import sys, numpy as np, kiln
        from kiln import _kiln

        @kiln.jit
        def spin(a, n):
            i = kiln.grid(1)
            k = 0
            while k >= 0:
                k = (k + 1) % n
            a[i] = k

        a = np.zeros(BLOCKS * THREADS, np.int64)
        print("started", flush=True)
        try:
            spin[BLOCKS, THREADS](a, 1000)
        except KeyboardInterrupt:
            s = _kiln.tier_stats()
            print("interrupted", spin._entry_for(None).tier, s["tier0_loads"], s["pooled"],
                  flush=True)
    '''))
    # the optimised build takes long: the launch runs tier 0's code
    # (the scalar entry: its guess shares 8192 threads; the vector entry's runs them on one)
    p = subprocess.Popen([sys.executable, str(script)],
                         env=env_for(tmp_path, KILN_CC=slow_cc(tmp_path, 30),
                                     KILN_TIER0_SCALAR=1 if blocks > 1 else 0),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "started"
        time.sleep(1.0)  # in the kernel by now (tier 0 builds in milliseconds)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, out + err
    shared = blocks > 1 and len(os.sched_getaffinity(0)) > 1 and \
        os.environ.get("OMP_NUM_THREADS", "2") != "1"
    assert out.split() == ["interrupted", "0", "1", "1" if shared else "0"], out + err


def test_interpreter_exit_during_a_pending_build_is_prompt(tmp_path):
    t0 = time.monotonic()
    out = run(tmp_path, '''
        x, y = inputs(1000)
        out = np.zeros_like(x)
        mix[8, 128](out, x, y)
        assert np.array_equal(out, want(x, y))
        until_running()
        print("ok")
    ''', KILN_CC=slow_cc(tmp_path, 60))
    took = time.monotonic() - t0
    assert out.startswith("ok")
    assert took < 15 * SLOW, took  # the exit grace (2 s) and the compiler's kill, not its 60 s
    assert not glob.glob(str(tmp_path / "kiln-*")), "the build's temporary directory is left"
    assert not running(str(tmp_path / "slow-cc")), "the slow compiler still runs"


def test_a_missing_tcc_runtime_falls_back_to_the_optimising_build(tmp_path):
    out = run(tmp_path, '''
        x, y = inputs(1000)
        out = np.zeros_like(x)
        mix[8, 128](out, x, y)
        assert np.array_equal(out, want(x, y))
        s = _kiln.tier_stats()
        assert entry(mix).tier == 1 and s["tier0_refusals"] == 1, s
        assert "libtcc1.a" in s["last_refusal"], s["last_refusal"]
        print("ok")
    ''', KILN_TCC_DIR=str(tmp_path / "no-such-dir"))
    assert out.startswith("ok")


def test_an_entry_dropped_while_its_build_runs(tmp_path):
    out = run(tmp_path, '''
        import gc
        x, y = inputs(1000)
        out = np.zeros_like(x)
        mix[8, 128](out, x, y)
        until_running()
        mix._clear_entries()   # the entry goes; its build, running, goes on to the cache
        gc.collect()
        assert _kiln.tier_wait(60)
        s = _kiln.tier_stats()
        assert s["swaps"] == 0 and s["failures"] == 0, s
        mix[8, 128](out, x, y)   # the build was stored: a cache hit now
        assert entry(mix).tier == 1 and np.array_equal(out, want(x, y))
        print("ok")
    ''')
    assert out.startswith("ok")


def test_tier0_refusals_are_errors_and_libtcc_stays_usable():
    good = "int kiln_entry(void) { return 1; }\n"
    cases = [
        # an undeclared function: tcc would call it as returning int; -Werror refuses
        ("double f(double x) { return kiln_undeclared(x); }\n", "implicit declaration"),
        # declared, but nowhere to link: two of them, both named (libtcc reports them
        # out of a compile, where it calls exit(1) unless tcc.c keeps its state entered)
        ("extern double kiln_nowhere1(double), kiln_nowhere2(double);\n"
         "double kiln_entry(double x) { return kiln_nowhere1(x) + kiln_nowhere2(x); }\n",
         "undefined symbol 'kiln_nowhere2'"),
        ("int kiln_entry(void) { return }\n", "error"),
        ("int other(void) { return 0; }\n", "no symbol 'kiln_entry'"),
    ]
    for src, said in cases:
        with pytest.raises(kiln.CompileError) as e:
            _kiln.tier0_try(src, "kiln_entry")
        assert said in str(e.value) and "tier 0" in str(e.value), str(e.value)
        _kiln.tier0_try(good, "kiln_entry")  # the next compile works: nothing left held


def test_tier_stats_while_the_collector_frees_a_tiered_entry(tmp_path):
    # building tier_stats' dict may run the garbage collector, which may free an Entry,
    # whose dealloc takes the tiers' lock: tier_stats must not hold it meanwhile
    out = run(tmp_path, '''
        import gc
        gc.disable()
        def make():
            @kiln.jit
            def k(out, x, y):
                i = kiln.grid(1)
                if i < out.size:
                    out[i] = x[i] + y[i]
            x, y = inputs(100)
            out = np.zeros_like(x)
            k[1, 128](out, x, y)
            assert np.array_equal(out, x + y)
            k.me = k   # only a cycle keeps the dispatcher, and so its tiered entry
        import weakref
        make()
        keep = [{} for _ in range(200)]  # no dict left in the free list: the next one is new
        gc.set_threshold(1)
        gc.enable()
        s = _kiln.tier_stats()   # its dict's allocation collects the cycle
        gc.disable()
        assert gc.get_count()[0] < 10, gc.get_count()
        print("ok", s["tier0_loads"])
    ''', timeout=20)
    assert out.split() == ["ok", "1"]


# ---- every kernel of tests/lang through tier 0 ----------------------------------------

_FLOAT = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")


def _rounded(text):
    """Floats to 9 significant digits: tier 0 (tcc) neither contracts a * b + c into an
    FMA nor calls libmvec's vector functions, so the last bits may differ from cc's."""
    return _FLOAT.sub(lambda m: f"{float(m.group()):.9g}", text)


def test_every_lang_kernel_through_tier0(monkeypatch):
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import test_lang

    monkeypatch.setenv("KILN_TIERS", "tcc")  # tier 0 alone; a refusal raises CompileError
    # the CUDA side of every case is test_lang's (NVRTC for two archs: 350 s of this test,
    # paid twice when pytest -n runs test_lang in another process)
    monkeypatch.delenv("KILN_CHECK_CUDA", raising=False)
    before = _kiln.tier_stats()["tier0_loads"]
    vbefore = _kiln.tier_stats()["tier0_vector"]
    rbefore = _kiln.tier_stats()["tier0_vector_refusals"]
    bad = []
    for name in test_lang.CASES:
        with open(os.path.join(test_lang.LANG, name + ".expect")) as f:
            expected = f.read()
        got = test_lang.run_case(name)
        if _rounded(got) != _rounded(expected):
            bad.append(f"{name}:\n--- expected\n{expected}--- tier 0\n{got}")
    assert not bad, "\n".join(bad)
    assert _kiln.tier_stats()["tier0_loads"] - before > 50
    # most take tier 0's vector entry (src/emit/emit_tier0.c), the rest its scalar one
    assert _kiln.tier_stats()["tier0_vector"] - vbefore > 150
    # and libtcc compiles every vector text the emitter writes
    assert _kiln.tier_stats()["tier0_vector_refusals"] == rbefore


# ---- tier 0 on several threads (src/target/tcc.c, kiln_cpu_quick_run) ----------------
from test_cooperative import phases  # noqa: E402  (a cooperative kernel: one thread)
from test_cpu_atomics import asum  # noqa: E402  (an atomic sum: an accumulator)

# Launches large enough (KILN_TIER0_POOL_MIN_US on one thread, at the 100 ns guess
# 5000 grid positions) run as shares on threads of tier 0's own; each entry shape
# (a 1-D row, collapsed rows of 2-D and 3-D grids, tiled transposes, blocks with
# shared memory, loops over blocks with thread indices, private histograms, atomic
# sums, a cooperative grid that stays on one thread) against NumPy.

@kiln.jit
def _t0_axpy(out, a, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] += a * x[i] + y[i] + i % 5


@kiln.jit
def _t0_stencil(out, a):
    i, j = kiln.grid(2)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        out[i, j] += a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1] - 4 * a[i, j]


@kiln.jit
def _t0_transpose(out, a):
    i, j = kiln.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[j, i] += a[i, j]


@kiln.jit
def _t0_cube(out, a):
    k, j, i = kiln.grid(3)
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        out[i, j, k] += a[i, j, k] * 2 + i - j + k


@kiln.jit
def _t0_block_sums(out, x):
    s = kiln.shared.array(128, kiln.float64)
    t = kiln.threadIdx.x
    i = kiln.grid(1)
    s[t] = x[i] if i < x.size else 0.0
    kiln.syncthreads()
    step = 64
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        kiln.syncthreads()
        step //= 2
    if t == 0:
        out[kiln.blockIdx.x] = s[0]


@kiln.jit
def _t0_by_index(out, x):
    i = kiln.blockIdx.x * kiln.blockDim.x + kiln.threadIdx.x
    if i < x.size:
        out[i] += x[i] - kiln.threadIdx.x


@kiln.jit
def _t0_histogram(bins, x):
    i = kiln.grid(1)
    if i < x.size:
        kiln.atomic.add(bins, x[i] % bins.size, 1)


def test_large_tier0_launches_run_on_several_threads(monkeypatch):
    monkeypatch.setenv("KILN_TIERS", "tcc")
    rng = np.random.default_rng(7)
    before = _kiln.tier_stats()["pooled"]
    pooled = 0

    n = 200_003
    x, y = rng.random(n), rng.random(n)
    out = np.zeros(n)
    _t0_axpy[(n + 255) // 256, 256](out, 2.5, x, y)
    np.testing.assert_allclose(out, 2.5 * x + y + np.arange(n) % 5, rtol=1e-15)
    pooled += 1

    a = rng.random((301, 257))
    out = np.zeros_like(a)
    _t0_stencil[(19, 17), (16, 16)](out, a)
    ref = np.zeros_like(a)
    ref[1:-1, 1:-1] = a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] - 4 * a[1:-1, 1:-1]
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    pooled += 1

    a = rng.random((513, 385))
    out = np.zeros((385, 513))
    _t0_transpose[(33, 25), (16, 16)](out, a)
    assert np.array_equal(out, a.T)
    pooled += 1

    a = rng.random((41, 53, 37))
    out = np.zeros_like(a)
    _t0_cube[(5, 7, 6), (8, 8, 8)](out, a)
    ii, jj, kk = np.indices(a.shape)
    np.testing.assert_allclose(out, a * 2 + ii - jj + kk, rtol=1e-15)
    pooled += 1

    x = rng.random(128 * 500 - 17)
    sums = np.zeros(500)
    _t0_block_sums[500, 128](sums, x)
    np.testing.assert_allclose(sums, np.add.reduceat(x, np.arange(0, x.size, 128)), rtol=1e-12)
    pooled += 1

    out = np.zeros_like(x)
    _t0_by_index[500, 128](out, x)
    np.testing.assert_allclose(out, x - np.arange(x.size) % 128, rtol=1e-15)
    pooled += 1

    v = rng.integers(0, 1 << 30, 300_000)
    bins = np.zeros(61, np.int64)
    _t0_histogram[(v.size + 255) // 256, 256](bins, v)
    assert np.array_equal(bins, np.bincount(v % 61, minlength=61))
    pooled += 1

    w = rng.integers(-1000, 1000, 300_000)
    total = np.zeros(1, np.int64)
    kiln.jit(cache=False)(asum.py_func)[(w.size + 255) // 256, 256](w, total)  # compiled here
    assert total[0] == w.sum()
    pooled += 1

    # the cooperative entry runs its grid on one thread: not shared, still right
    x = rng.random(64 * 64)
    o = np.zeros_like(x)
    want_x = (np.roll(x, -1) + 1) * 2
    kiln.jit(cache=False)(phases.py_func)[64, 64](x, o)
    np.testing.assert_allclose(x, want_x, rtol=1e-15)

    got = _kiln.tier_stats()["pooled"] - before
    if len(os.sched_getaffinity(0)) > 1 and os.environ.get("OMP_NUM_THREADS", "2") != "1":
        assert got == pooled, (got, pooled)
    else:
        assert got == 0


def test_a_shared_tier0_launch_of_one_block_runs_its_serial_path_once(tmp_path):
    # the first launch times the entry (its guess keeps it on one thread); the second,
    # expected to take milliseconds, is shared, and with a single block every share
    # but the first leaves the entry's serial path to it (each result added once)
    out = run(tmp_path, '''
        out = np.zeros(1024)
        heavy[1, 1024](out, 3000)
        s0 = _kiln.tier_stats()
        # the optimising build ends (it fails): no build keeps a processor from tier 0
        for _ in range(1000):
            if _kiln.tier_stats()["failures"]:
                break
            time.sleep(0.01)
        heavy[1, 1024](out, 3000)
        s1 = _kiln.tier_stats()
        assert heavy._entry_for(None).tier == 0
        ref = np.array([sum((i + k) % 7 for k in range(3000)) for i in range(1024)], float)
        assert np.array_equal(out, 2 * ref)
        print("ok", s0["pooled"], s1["pooled"])
    ''', pre=HEAVY, KILN_CC=failing_cc(tmp_path))
    assert out.startswith("ok")
    if len(os.sched_getaffinity(0)) > 1 and os.environ.get("OMP_NUM_THREADS", "2") != "1":
        assert out.split()[1:3] == ["0", "1"], out


# ---- tier 0's vector entry (src/emit/emit_tier0.c) ------------------------------------
# Blocks of threads through kiln's vector operations, with masks for what varies: each
# kernel below runs in one process through the vector entry and in another through the
# scalar entry (KILN_TIER0_SCALAR=1), on the same inputs, and the results must agree
# (exactly, but for float32 math through libmvec: 2 ulp) and match NumPy where it says.

VECTOR_KERNELS = '''
import math

@kiln.jit(device=True)
def cnd(d):
    k = 1.0 / (1.0 + 0.2316419 * abs(d))
    r = 0.3989422804014327 * math.exp(-0.5 * d * d) * (k * (0.31938153 + k * (-0.356563782 +
        k * (1.781477937 + k * (-1.821255978 + k * 1.330274429)))))
    if d > 0:
        return 1.0 - r
    return r

@kiln.jit
def bs(call, put, s, x, t, r, v):
    i = kiln.grid(1)
    if i >= s.size:
        return
    st = math.sqrt(t[i])
    d1 = (math.log(s[i] / x[i]) + (r + 0.5 * v * v) * t[i]) / (v * st)
    d2 = d1 - v * st
    e = math.exp(-r * t[i])
    call[i] = s[i] * cnd(d1) - x[i] * e * cnd(d2)
    put[i] = x[i] * e * (1.0 - cnd(d2)) - s[i] * (1.0 - cnd(d1))

@kiln.jit(device=True)
def steps(n, cap):
    k = 0
    while n != 1:
        if k >= cap:
            return -1
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        k += 1
    return k

@kiln.jit
def collatz(out, x):
    i = kiln.grid(1)
    if i < x.size:
        out[i] = steps(x[i], 60)

@kiln.jit
def loops(out, x, m):
    i = kiln.grid(1)
    if i >= out.size:
        return
    acc = 0.0
    for k in range(m):
        v = x[(i + k) % x.size]
        if v < -0.5:
            continue
        if v > 0.9:
            break
        acc += v if k % 2 == 0 else -v
        if acc > 3.0:
            out[i] = acc
            return
    out[i] = acc * 2

@kiln.jit
def guarded(out, x, lo):
    i, j = kiln.grid(2)
    if i < out.shape[0] and j < out.shape[1] and x[i, j] > lo or j == 0 and i < out.shape[0]:
        out[i, j] = x[i, j - 1] + x[i, 0] * j - (x[i, j] if j % 3 else 0.5)

@kiln.jit(device=True)
def sq1(v):
    return v * v + 1.0

@kiln.jit
def memo(out, x):
    # calls with the same arguments share one result only while the arguments stand
    i = kiln.grid(1)
    if i < x.size:
        d = x[i]
        a = sq1(d)
        d = d + 1.0
        c = sq1(d) if d > 1.5 else -1.0   # made under a mask: not for e below
        e = sq1(d)
        b = sq1(d)
        acc = 0.0
        for k in range(3):
            d = x[i] + k
            acc += sq1(d)
        f = sq1(d)
        for k in range(3):   # made before the loop, stale from its second iteration on
            acc += 10000 * sq1(d)
            d = d + 1.0
        out[i] = a + 10 * b + 100 * c + 1000 * e + acc + f

@kiln.jit
def strided(out, x, y):
    i = kiln.grid(1)
    if i < out.size:
        q = int(x[i] * 10)
        out[i] = q // 3 + q % 5 + (y[-i - 1] if i % 2 else y[i])
'''


def _vector_run(tmp_path, scalar):
    body = VECTOR_KERNELS + '''
rng = np.random.default_rng(7)
res = {}
n = 3000
s = rng.uniform(5, 30, n).astype(np.float32); x = rng.uniform(1, 100, n).astype(np.float32)
t = rng.uniform(0.25, 10, n).astype(np.float32)
c = np.zeros(n, np.float32); p = np.zeros(n, np.float32)
bs[(n + 127) // 128, 128](c, p, s, x, t, np.float32(0.02), np.float32(0.3))
res["bs"] = (c, p)
xs = rng.integers(1, 5000, 1000)
o = np.zeros(1000, np.int64)
collatz[8, 128](o, xs)
res["collatz"] = o
xf = rng.uniform(-1, 1, 777)
o = np.zeros(700, np.float64)
loops[3, 256](o, xf, 40)
res["loops"] = o
xg = rng.uniform(-1, 1, (37, 53))
o = np.full((37, 53), -7.0)
guarded[(3, 4), (16, 16)](o, xg, 0.1)
res["guarded"] = o
a = rng.uniform(-3, 3, 901)[::-2]
yv = rng.integers(-9, 9, 2000)[::3]
o = np.zeros(400, np.int64)
strided[2, 256](o, a, yv)
res["strided"] = o
xm = rng.uniform(0, 1, 600)
o = np.zeros(600)
memo[3, 256](o, xm)
res["memo"] = o
np.savez(os.environ["OUT"], **{k: (np.stack(v) if isinstance(v, tuple) else v) for k, v in res.items()})
print(_kiln.tier_stats()["tier0_vector"], _kiln.tier_stats()["tier0_loads"])
'''
    out = tmp_path / ("scalar.npz" if scalar else "vector.npz")
    extra = dict(KILN_TIERS="tcc", OUT=str(out))
    if scalar:
        extra["KILN_TIER0_SCALAR"] = "1"
    printed = run(tmp_path, body, **extra).split()
    return np.load(out), [int(v) for v in printed]


def test_vector_entry_agrees_with_the_scalar_entry(tmp_path):
    vec, (nv, nl) = _vector_run(tmp_path, scalar=False)
    sca, (sv, sl) = _vector_run(tmp_path, scalar=True)
    assert nv == nl == 6, (nv, nl)  # every kernel took the vector entry
    assert sv == 0 and sl == 6
    for k in ("collatz", "loops", "guarded", "strided", "memo"):
        assert np.array_equal(vec[k], sca[k]), k
    np.testing.assert_allclose(vec["bs"], sca["bs"], rtol=3e-7, atol=1e-5)
    # and what NumPy says for two of them
    rng = np.random.default_rng(7)
    for _ in range(3):
        rng.uniform(0, 1, 3000)
    xs = rng.integers(1, 5000, 1000)

    def steps(v):
        k = 0
        while v != 1:
            if k >= 60:
                return -1
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            k += 1
        return k
    assert list(vec["collatz"]) == [steps(int(v)) for v in xs]
    sq = lambda v: v * v + 1.0  # noqa: E731
    xs_m = _memo_input()
    d1 = xs_m + 1.0
    acc = sum(sq(xs_m + k) for k in range(3)) + sum(10000 * sq(xs_m + 2 + k) for k in range(3))
    want = (sq(xs_m) + 10 * sq(d1) + 100 * np.where(d1 > 1.5, sq(d1), -1.0) + 1000 * sq(d1)
            + acc + sq(xs_m + 2))
    np.testing.assert_allclose(vec["memo"], want, rtol=1e-12)


def _memo_input():
    """The memo kernel's input, drawn as _vector_run draws it."""
    rng = np.random.default_rng(7)
    rng.uniform(5, 30, 3000); rng.uniform(1, 100, 3000); rng.uniform(0.25, 10, 3000)
    rng.integers(1, 5000, 1000)
    rng.uniform(-1, 1, 777)
    rng.uniform(-1, 1, (37, 53))
    rng.uniform(-3, 3, 901)
    rng.integers(-9, 9, 2000)
    return rng.uniform(0, 1, 600)


def test_the_optimising_build_lets_the_first_tier0_launch_run_first(tmp_path):
    # KILN_TIER_HOLD_MS: the C compiler starts when the first tier-0 launch ends or 100 ms
    # after the build was queued, whichever comes first; a launch longer than that sees
    # it start near 100 ms, not at once
    out = run(tmp_path, '''
        seen = []
        def watch():
            t0 = time.monotonic()
            while time.monotonic() - t0 < 20:
                if any(b"slow-cc" in open(f"/proc/{p}/cmdline", "rb").read()
                       for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{p}/cmdline")):
                    seen.append(time.monotonic())
                    return
                time.sleep(0.002)
        out = np.zeros(4096)
        w = threading.Thread(target=watch)
        t0 = time.monotonic()
        w.start()
        heavy[4, 1024](out, 20000)
        t1 = time.monotonic()
        w.join()
        print("ok", round((seen[0] - t0) * 1e3), round((t1 - t0) * 1e3))
    ''', pre=HEAVY, KILN_CC=slow_cc(tmp_path, 5))
    _, started, ran = out.split()
    # the compiler did not start with the launch (without the hold: a few ms)
    assert int(started) >= 60 or int(started) >= int(ran) - 5, out


def test_later_tier0_launches_leave_a_processor_to_the_running_build(tmp_path):
    out = run(tmp_path, '''
        out = np.zeros(1 << 16)
        heavy[64, 1024](out, 200)   # times the entry (its own threads, all of them)
        s0 = _kiln.tier_stats()["pooled"]
        until_compiling()
        heavy[64, 1024](out, 200)   # the build runs: one thread fewer
        s1 = _kiln.tier_stats()["pooled"]
        print("ok", s0, s1)
    ''', pre=HEAVY, KILN_CC=slow_cc(tmp_path, 5))
    _, s0, s1 = out.split()
    n = len(os.sched_getaffinity(0))
    if os.environ.get("OMP_NUM_THREADS"):
        n = min(n, int(os.environ["OMP_NUM_THREADS"]))
    assert int(s1) - int(s0) == (1 if n - 1 > 1 else 0), out


def test_the_vector_entry_is_written_only_for_tier0():
    # translating without tiers (KILN_TIERS=0, a precompile, the optimising build) writes
    # no vector entry; tier 0's translation does, after the unchanged source
    from kiln import _compile

    @kiln.jit
    def axpy(out, x):
        i = kiln.grid(1)
        if i < out.size:
            out[i] = 2.0 * x[i] + 1.0

    x = np.ones(8)
    key = _kiln.key_of(x, x)
    plain = _compile._translate(axpy, key, 0)
    vec = _compile._translate(axpy, key, 0, tier0=True)
    assert plain.tier0_source is None
    assert vec.tier0_source.startswith(vec.source) and "kiln_ventry" in vec.tier0_source
    assert vec.source == plain.source


def test_a_kernel_whose_arrays_would_fill_the_stack_gets_the_scalar_entry(tmp_path):
    # T0_MAX_FRAME_BYTES: 70 varying float64 variables are 140 KiB of arrays of 256 lanes
    names = [f"v{k}" for k in range(70)]
    lines = "".join(f"        {v} = x[i] * {k}.0 + 1.0\n" for k, v in enumerate(names))
    kernel = ("@kiln.jit\ndef wide(out, x):\n    i = kiln.grid(1)\n    if i < x.size:\n"
              + lines.replace("        ", "        ", 1) + f"        out[i] = {' + '.join(names)}\n")
    out = run(tmp_path, '''
        x = np.arange(1000, dtype=np.float64)
        out = np.zeros_like(x)
        wide[4, 256](out, x)
        want = sum(x * k + 1.0 for k in range(70))
        assert np.allclose(out, want), (out[:4], want[:4])
        s = _kiln.tier_stats()
        print("ok", s["tier0_loads"], s["tier0_vector"])
    ''', pre=kernel, KILN_TIERS="tcc")
    assert out.split() == ["ok", "1", "0"], out


def _fused_kernel():
    """A kernel whose every line is a pair of + - * / that tier 0 fuses into one kv_bin2:
    each operator pair, the inner pair on either side, a scalar in each place."""
    ops = "+-*/"
    lines, k = [], 0
    for o1 in ops:
        for o2 in ops:
            for e in (f"(x[i] {o1} y[i]) {o2} s", f"s {o2} (x[i] {o1} y[i])",
                      f"(x[i] {o1} s) {o2} y[i]", f"y[i] {o2} (s {o1} x[i])",
                      f"(x[i] {o1} y[i]) {o2} x[i]", f"y[i] {o2} (x[i] {o1} y[i])"):
                lines.append(f"        o[{k}, i] = {e}")
                k += 1
    src = ("@kiln.jit\ndef fused(o, x, y, s):\n    i = kiln.grid(1)\n    if i < x.size:\n"
           + "\n".join(lines) + "\n")
    return src, k


def test_tier0_fuses_pairs_of_operations_exactly(tmp_path):
    src, rows = _fused_kernel()
    body = src + f'''
out = {{}}
for dt in (np.float32, np.float64):
    rng = np.random.default_rng(3)
    x = rng.uniform(-4, 4, 700).astype(dt)
    y = rng.uniform(0.5, 3, 700).astype(dt)
    o = np.zeros(({rows}, 700), dt)
    fused[3, 256](o, x, y, dt(1.75))
    out[np.dtype(dt).name] = o
np.savez(os.environ["OUT"], **out)
print(_kiln.tier_stats()["tier0_vector"])
'''
    res = {}
    for scalar in (False, True):
        out = tmp_path / f"fused{int(scalar)}.npz"
        extra = dict(KILN_TIERS="tcc", OUT=str(out), KILN_DUMP=str(tmp_path / "dump"))
        if scalar:
            extra["KILN_TIER0_SCALAR"] = "1"
        assert run(tmp_path, body, **extra).split() == ["0" if scalar else "2"]
        res[scalar] = np.load(out)
    text = "".join(p.read_text() for p in (tmp_path / "dump").glob("*fused*tier0.c"))
    assert text.count("kv_bin2(") >= 2 * rows, text.count("kv_bin2(")  # every line fused
    for name in ("float32", "float64"):
        dt = np.dtype(name).type
        assert np.array_equal(res[False][name], res[True][name]), name
        rng = np.random.default_rng(3)
        x = rng.uniform(-4, 4, 700).astype(dt)
        y = rng.uniform(0.5, 3, 700).astype(dt)
        s = dt(1.75)
        env = {"x": x, "y": y, "s": s, "i": slice(None)}
        want = [eval(line.split(" = ", 1)[1], env) for line in src.splitlines()
                if line.startswith("        o[")]
        assert np.array_equal(res[False][name], np.array(want, dt)), name


def test_tier0_tuple_targets_and_float32_compares_with_literals(tmp_path):
    # a tuple of loads goes straight into its targets' arrays; a float32 compared with a
    # literal float32 holds exactly (0, -2.5) is compared in float32, with one it does not
    # (0.1, 2^24 + 1) in float64, as the language says: x = float32(0.1) and x = 2^24
    # tell the two apart
    src = '''
@kiln.jit
def tup(o, x, y):
    i = kiln.grid(1)
    if i < x.size:
        a, b = x[i], y[i]
        a, b = b, a
        c, c = a, b
        o[0, i] = a - 2 * b + c
        o[1, i] = 1.0 if x[i] > 0 else 0.0
        o[2, i] = 1.0 if x[i] > 0.1 else 0.0
        o[3, i] = 1.0 if -2.5 <= x[i] else 0.0
        o[4, i] = 1.0 if 16777217 > x[i] else 0.0
'''
    body = src + '''
x = np.array([0.0, np.float32(0.1), -2.5, -2.5000002, 16777216.0, 16777218.0, 0.2, -1e-30]
             * 40, np.float32)
y = np.linspace(-3, 3, x.size).astype(np.float32)
o = np.zeros((5, x.size), np.float32)
tup[2, 256](o, x, y)
np.save(os.environ["OUT"], o)
print(_kiln.tier_stats()["tier0_vector"])
'''
    res = {}
    for scalar in (False, True):
        out = tmp_path / f"tup{int(scalar)}.npy"
        extra = dict(KILN_TIERS="tcc", OUT=str(out), KILN_DUMP=str(tmp_path / f"dump{int(scalar)}"))
        if scalar:
            extra["KILN_TIER0_SCALAR"] = "1"
        assert run(tmp_path, body, **extra).split() == ["0" if scalar else "1"]
        res[scalar] = np.load(out)
    x = np.array([0.0, np.float32(0.1), -2.5, -2.5000002, 16777216.0, 16777218.0, 0.2, -1e-30]
                 * 40, np.float32)
    y = np.linspace(-3, 3, x.size).astype(np.float32)
    x64 = x.astype(np.float64)
    want = np.array([(y - np.float32(2) * x) + x, x64 > 0, x64 > 0.1, -2.5 <= x64,
                     16777217 > x64], np.float32)
    assert np.array_equal(res[True], want)
    assert np.array_equal(res[False], want)
    text = "".join(p.read_text() for p in (tmp_path / "dump0").glob("*tup*tier0.c"))
    vec = text[text.index("kiln_ventry"):]
    assert vec.count("kv_cvt(11, 10,") == 2, vec  # only x > 0.1 and 16777217 > x widen
    first = re.findall(r"kv_load\(10, (\w+),", vec)[:2]  # a, b = x[i], y[i]
    assert len(first) == 2 and all(d.startswith("kv") for d in first), first  # into a, b
