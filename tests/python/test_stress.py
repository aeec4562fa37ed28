"""kiln under stress: threads, fork and Ctrl-C at once (issue 9).

Each scenario runs in a child process of its own session, with a deadline: a
crash is the child's exit status, a hang is a timeout that kills the child's
whole process group (and any compiler it started), so neither takes the test
run down with it.  A child that outlives most of its time prints every
thread's stack (faulthandler) before it is killed, so a hang says where.

The kernels are written fresh for every run (a random salt in their
constants), so every first launch really compiles, and each result is checked
against NumPy.

    threads   8 threads released together make the first launches of the same
              fresh kernels in different orders, two dtypes each, some large
              enough for OpenMP, and then launch them again
    fork      while 4 threads make first launches (compiling, in the cache) and 2
              read the cache's stats in a loop, the main thread, which ran an
              OpenMP launch first, forks 4 children; each child compiles a fresh
              kernel and launches one the parent compiled (OpenMP-sized)
    sigint    Ctrl-C while the main thread runs an endless kernel over 16384
              threads (OpenMP) and 7 other threads launch kernels: a
              KeyboardInterrupt in the main thread, the others stop, a clean exit
    sigint-cc Ctrl-C while the main thread waits for a C compiler that does not
              return: a KeyboardInterrupt at once, not after the compiler

The same file is the child's script: `python test_stress.py SCENARIO DIR`.
"""
import os
import random
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")
# deadlines are for hangs: under a sanitizer (make test-san-py, make test-tsan) all is slower
SLOW = 3 if any(s in os.environ.get("LD_PRELOAD", "") for s in ("tsan", "asan")) else 1

# ---- the kernels ------------------------------------------------------------------------

# (body, NumPy reference); {c} is a constant unique to the run, so each source is new
FORMS = [
    ("out[j] = a[j] * {c} + b[j]", lambda a, b, c: a * c + b),
    ("out[j] = max(a[j], b[j]) - {c}", lambda a, b, c: __import__("numpy").maximum(a, b) - c),
    # long enough (a few ms a launch) that a thread's first launch still runs while the
    # others finish building the same kernel; s converges to 2 a
    ("s = 0.0\n        for t in range(20000):\n            s = s * 0.5 + a[j]\n"
     "        out[j] = s + {c}", lambda a, b, c: 2 * a + c),
    ("out[j] = dev(a[j], {c}) - b[j]", lambda a, b, c: a * c + 1 - b),
    ("out[j] = math.sqrt(abs(a[j])) + {c} * b[j]",
     lambda a, b, c: __import__("numpy").sqrt(abs(a)) + c * b),
    ("out[j] = a[j] if a[j] > b[j] else b[j] * {c}",
     lambda a, b, c: __import__("numpy").where(a > b, a, b * c)),
]


def kernels_module(salt, groups):
    """Source of a module with kernels GROUP_I for each group and form."""
    lines = ["import math", "import kiln", "",
             "@kiln.jit(device=True)", "def dev(x, c):", f"    return x * c + 1.0  # {salt}", ""]
    for g in groups:
        for i, (body, _) in enumerate(FORMS):
            c = round(1 + (salt % 997) / 1000 + i / 7 + groups.index(g) / 3, 6)
            lines += ["@kiln.jit", f"def {g}_{i}(out, a, b):", "    j = kiln.grid(1)",
                      "    if j < out.size:", "        " + body.format(c=c), ""]
    lines += ["@kiln.jit", "def spin(out, n):", "    j = kiln.grid(1)",
              "    if j < out.size:", "        s = 0", "        i = 0",
              "        while i < n:", "            s += i % 7", "            i += 1",
              f"        out[j] = s + {salt % 1000}", ""]
    return "\n".join(lines)


def constant(salt, groups, g, i):
    return round(1 + (salt % 997) / 1000 + i / 7 + groups.index(g) / 3, 6)


# ---- the child's side ------------------------------------------------------------------------

GROUPS = ["shared", "fresh", "child0", "child1", "child2", "child3"]
CHILD_SECONDS = 10 * SLOW  # a forked child's time to launch twice and exit


class Checker:
    """Launches a kernel of the generated module and compares with NumPy."""

    def __init__(self, mod, salt):
        import numpy as np
        self.np, self.mod, self.salt = np, mod, salt

    def run(self, group, i, dtype, n, rng):
        np = self.np
        k = getattr(self.mod, f"{group}_{i}")
        a = rng.uniform(-10, 10, n).astype(dtype)
        b = rng.uniform(-10, 10, n).astype(dtype)
        out = np.zeros(n, dtype)
        k[(n + 255) // 256, 256](out, a, b)
        c = constant(self.salt, GROUPS, group, i)
        want = FORMS[i][1](a.astype(np.float64), b.astype(np.float64), c)
        tol = 1e-4 if dtype == np.float32 else 1e-12
        if not np.allclose(out, want, rtol=tol, atol=tol):
            bad = int(np.argmax(~np.isclose(out, want, rtol=tol, atol=tol)))
            raise AssertionError(f"{group}_{i} {np.dtype(dtype).name} n={n}: out[{bad}] = "
                                 f"{out[bad]}, NumPy says {want[bad]}")


def sizes(rng, big):
    """A small launch, or an OpenMP-sized one (>= 16384 threads)."""
    return 20000 if big else int(rng.integers(1, 3000))


def child(scenario, workdir):
    import faulthandler
    import threading

    import numpy as np

    salt = int(os.environ["STRESS_SALT"])
    deadline = float(os.environ["STRESS_SECONDS"])
    # a hang prints every thread's stack before the parent's deadline; a forked child's
    # stack comes out on SIGABRT
    faulthandler.enable(all_threads=True)
    faulthandler.dump_traceback_later(deadline, exit=True)
    sys.path.insert(0, workdir)
    import stress_kernels as mod

    chk = Checker(mod, salt)
    errors = []

    def guarded(fn, *args):
        try:
            fn(*args)
        except BaseException as e:  # noqa: B036  (a KeyboardInterrupt in a worker is a failure too)
            import traceback
            errors.append(f"{threading.current_thread().name}: {e!r}\n{traceback.format_exc()}")

    # 6 specialisations to build (4 forms in float64, 2 in float32); the long one first,
    # which all threads released together launch first.  (Each thread of a process builds
    # a kernel that misses on its own: 8 threads, 48 builds.)
    every = [(2, np.float64), (0, np.float64), (3, np.float64), (5, np.float64),
             (2, np.float32), (4, np.float32)]
    if SLOW > 1:  # under a sanitizer every build is several times slower: fewer of them
        every = every[:2] + every[-2:]

    def launches(group, seed, passes=2, stop=None, barrier=None, todo=every):
        rng = np.random.default_rng(seed)
        if barrier is not None:
            barrier.wait(timeout=30)
        p = 0
        while p < passes or (stop is not None and not stop.is_set()):
            # the first pass in the same order on every thread: first launches collide
            order = list(todo)
            if p:
                random.Random(seed + p).shuffle(order)
            big = rng.integers(len(order)) if p else -1  # one OpenMP launch a pass, after the first
            for x, (i, dt) in enumerate(order):
                if stop is not None and stop.is_set():
                    return
                chk.run(group, i, dt, sizes(rng, x == big), rng)
            p += 1

    t0 = time.monotonic()

    def join_all(ts, timeout=None):
        # by default, until shortly before the deadline
        end = time.monotonic() + timeout if timeout else t0 + deadline - 3
        for t in ts:
            t.join(max(0.0, end - time.monotonic()))
        hung = [t.name for t in ts if t.is_alive()]
        if hung:
            errors.append(f"threads still running after {time.monotonic() - t0:.0f} s: {hung}")

    if scenario == "threads":
        barrier = threading.Barrier(8)
        ts = [threading.Thread(target=guarded, args=(launches, "shared", 100 + w, 2, None, barrier),
                               name=f"worker{w}") for w in range(8)]
        for t in ts:
            t.start()
        join_all(ts)

    elif scenario == "fork":
        rng = np.random.default_rng(1)
        chk.run("shared", 0, np.float64, 40000, rng)  # OpenMP's team starts in the parent
        fresh = [(0, np.float64), (1, np.float64)]  # compiling during the forks
        ts = [threading.Thread(target=guarded, args=(launches, "fresh", 200 + w, 1, None, None,
                                                     fresh), name=f"worker{w}") for w in range(4)]
        # and two threads that keep going into the cache (its lock, SQLite) as the forks happen
        import kiln.cache
        stop = threading.Event()

        def in_cache():
            while not stop.is_set():
                kiln.cache.stats()
                kiln.cache.entries()

        ts += [threading.Thread(target=guarded, args=(in_cache,), name=f"cache{w}")
               for w in range(2)]
        for t in ts:
            t.start()
        pids = []
        for c in range(4):
            time.sleep(0.05 + 0.1 * c)  # the workers are compiling and launching
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    # (no dump_traceback_later here: its watchdog thread stayed in the
                    # parent, and re-arming it in a child waits for that thread forever)
                    r = np.random.default_rng(10 + c)
                    # a first launch: the cache, which a parent's thread may have been in
                    chk.run(f"child{c}", c % len(FORMS), np.float64, 1000, r)
                    # OpenMP, which the parent started before the fork
                    chk.run("shared", 0, np.float64, 40000, r)
                    chk.run(f"child{c}", c % len(FORMS), np.float64, 30000, r)
                    code = 0
                except BaseException as e:  # noqa: B036
                    print(f"child {c}: {e!r}", file=sys.stderr, flush=True)
                finally:
                    os._exit(code)
            pids.append(pid)
        end = time.monotonic() + CHILD_SECONDS
        for c, pid in enumerate(pids):
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    if os.waitstatus_to_exitcode(status) != 0:
                        errors.append(f"forked child {c} failed: exit "
                                      f"{os.waitstatus_to_exitcode(status)}")
                    break
                if time.monotonic() > end:
                    os.kill(pid, signal.SIGABRT)  # faulthandler prints where it hangs
                    time.sleep(0.5)
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    errors.append(f"forked child {c} hung (killed after {CHILD_SECONDS} s)")
                    break
                time.sleep(0.02)
        stop.set()
        join_all(ts)

    elif scenario == "sigint":
        stop = threading.Event()
        rng = np.random.default_rng(3)
        spin_out = np.zeros(16384, np.int64)
        mod.spin[1, 1](np.zeros(1, np.int64), 10)  # compiled before the signal
        ready = [(0, np.float64), (1, np.float64)]  # and what the threads launch
        for i, dt in ready:
            chk.run("shared", i, dt, 100, rng)
        ts = [threading.Thread(target=guarded, args=(launches, "shared", 300 + w, 1, stop, None,
                                                     ready), name=f"worker{w}") for w in range(7)]
        for t in ts:
            t.start()
        print("ready", flush=True)
        try:
            mod.spin[64, 256](spin_out, 10**15)  # endless, on every OpenMP thread
            errors.append("the endless kernel returned")
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        stop.set()
        join_all(ts)  # after the launch or build each one is in

    elif scenario == "sigint-cc":
        print("ready", flush=True)
        try:
            chk.run("fresh", 0, np.float64, 100, np.random.default_rng(4))
            errors.append("the launch returned although the compiler never does")
        except KeyboardInterrupt:
            print("interrupted", flush=True)

    if errors:
        print("\n".join(errors), file=sys.stderr, flush=True)
        os._exit(1)  # no interpreter teardown: a thread may still be stuck in kiln
    print("clean", flush=True)
    # a normal exit, with kiln's own clean-up (under the deadline still armed)


# ---- the parent's side --------------------------------------------------------------------

def spawn(tmp_path, scenario, seconds, **env):
    salt = random.randrange(1 << 30)
    (tmp_path / "stress_kernels.py").write_text(kernels_module(salt, GROUPS))
    # 8 threads' OpenMP teams on a machine of a few cores: threads that spin at barriers
    # (libgomp's default) would slow every launch to a crawl.  No NVRTC checks of every
    # kernel (KILN_CHECK_CUDA): the CPU's launch path is what is stressed here, and
    # NVRTC would double the time of each first launch.
    e = dict(os.environ, PYTHONPATH=PYDIR, STRESS_SALT=str(salt),
             STRESS_SECONDS=str(seconds * SLOW), OMP_WAIT_POLICY="passive",
             KILN_CHECK_CUDA="0")
    e.update(env)
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), scenario, str(tmp_path)],
                            cwd=tmp_path, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)  # the child and anything it started (a compiler)
    except ProcessLookupError:
        pass


def finish(p, timeout):
    timeout *= SLOW
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(p)
        out, err = p.communicate()
        pytest.fail(f"hung: killed after {timeout} s\n--- stdout\n{out}\n--- stderr\n{err}")
    finally:
        kill_group(p)
    return p.returncode, out, err


def wait_ready(p, timeout):
    end = time.monotonic() + timeout * SLOW
    line = ""
    while time.monotonic() < end:
        r, _, _ = select.select([p.stdout], [], [], max(0.0, end - time.monotonic()))
        if not r:
            break
        line = p.stdout.readline()
        if line.strip() == "ready" or not line:
            break
    if line.strip() != "ready":
        kill_group(p)
        out, err = p.communicate()
        pytest.fail(f"the child never got ready (exit {p.returncode})\n{line}{out}\n{err}")


def test_stress_threads_first_launches(tmp_path):
    p = spawn(tmp_path, "threads", 40)
    rc, out, err = finish(p, 45)
    assert rc == 0 and out.strip() == "clean", f"exit {rc}\n{out}\n{err}"


def test_stress_fork_while_threads_launch(tmp_path):
    p = spawn(tmp_path, "fork", 40)
    rc, out, err = finish(p, 45)
    assert rc == 0 and out.strip() == "clean", f"exit {rc}\n{out}\n{err}"


def test_stress_sigint_in_kernel_while_threads_launch(tmp_path):
    p = spawn(tmp_path, "sigint", 20)
    wait_ready(p, 15)
    time.sleep(0.3)  # into the endless kernel
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    rc, out, err = finish(p, 20)
    took = time.monotonic() - sent
    assert "interrupted" in out, f"no KeyboardInterrupt (exit {rc})\n{out}\n{err}"
    assert rc == 0 and out.split()[-1] == "clean", f"exit {rc}\n{out}\n{err}"
    assert took < 15 * SLOW, f"{took:.1f} s from Ctrl-C to exit"


def test_stress_sigint_while_compiler_hangs(tmp_path):
    cc = tmp_path / "slow-cc"
    cc.write_text(textwrap.dedent("""\
        #!/bin/sh
        sleep 60
        exec cc "$@"
        """))
    cc.chmod(0o755)
    p = spawn(tmp_path, "sigint-cc", 10, KILN_CC=str(cc))
    wait_ready(p, 8)
    time.sleep(0.5)  # into the compiler
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    rc, out, err = finish(p, 12)
    took = time.monotonic() - sent
    assert "interrupted" in out, f"no KeyboardInterrupt (exit {rc})\n{out}\n{err}"
    assert rc == 0 and out.split()[-1] == "clean", f"exit {rc}\n{out}\n{err}"
    assert took < 5 * SLOW, f"{took:.1f} s from Ctrl-C to exit"


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2])
