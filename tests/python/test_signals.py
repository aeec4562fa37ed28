"""Ctrl-C during CPU kernels, and kernels in forked children.

Every test runs its kernels in a child process under a watchdog: the failures
these tests exist to catch are hangs (a kernel that only SIGKILL ends, a child
stuck in libgomp), which must show up as a failed test, never a stuck run.
A real SIGINT is sent to the child while its kernel runs.
"""
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")

KERNELS = '''
import os, signal, sys, threading, time, warnings
import numpy as np
import kiln

@kiln.jit
def spin(x):
    i = kiln.grid(1)
    while x[0] >= 0:
        pass

@kiln.jit
def forever(x):
    while True:
        pass

@kiln.jit
def count(out, n):
    i = kiln.grid(1)
    k = 0
    while k < n:
        k += 1
    out[i] = k

@kiln.jit
def touch(a, n):
    i = kiln.grid(1)
    if i < n:
        a[i % 8] += 1.0

@kiln.jit
def churn(out, n):
    i = kiln.grid(1)
    if i < out.size:
        s = 0
        for j in range(n):
            s = (s * 31 + j) % 1000003
        out[i] = s

@kiln.jit
def touch_blocks(a):
    i = kiln.blockIdx.x * kiln.blockDim.x + kiln.threadIdx.x
    a[i % 8] += 1.0

@kiln.jit
def fill(a, v):
    i = kiln.grid(1)
    if i < a.size:
        a[i] = v + i

@kiln.jit(device=True)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)

@kiln.jit
def fib_k(out, n):
    out[0] = fib(n)

@kiln.jit(device=True)
def down(a, x):
    if x <= 0:
        return 0
    r = down(a, x - 1)
    a[0] += r
    return r + 1

@kiln.jit
def down_k(o, n):
    o[0] = down(o, n)

@kiln.jit(device=True)
def tail(a, n):
    if n < 0:
        return 0
    a[0] += 1
    return tail(a, n + 1)  # a tail call: still a frame a call (KILN_DEVFN_REC)

@kiln.jit
def tail_k(o):
    o[1] = tail(o, 0)

@kiln.jit(device=True)
def ping(n):
    if n == 0:
        return 0
    return pong(n - 1) + 1

@kiln.jit(device=True)
def pong(n):
    if n == 0:
        return 0
    return ping(n - 1) + 1

@kiln.jit
def ping_k(o, n):
    o[0] = ping(n)

def ready():
    print("ready", flush=True)

def stopped(launch):
    t = time.time()
    try:
        launch()
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt after {time.time() - t:.2f} s", flush=True)
    else:
        print("finished", flush=True)

'''


def child(body, sigint_after=None, timeout=60, preexec_fn=None):
    """Runs KERNELS + body in a child; with sigint_after, sends SIGINT that many
    seconds after the child prints 'ready'.  Returns (stdout, stderr, status);
    a child still running at the timeout is killed and the test fails."""
    env = dict(os.environ, PYTHONPATH=PYDIR)
    with tempfile.TemporaryDirectory() as d:  # kiln reads kernels from their files
        path = os.path.join(d, "child.py")
        with open(path, "w") as f:
            f.write(KERNELS + textwrap.dedent(body))
        p = subprocess.Popen([sys.executable, path], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn)
        try:
            if sigint_after is not None:
                line = p.stdout.readline()
                assert line.strip() == "ready", (line, p.communicate(timeout=timeout))
                time.sleep(sigint_after)
                p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            pytest.fail(f"the child hung\nstdout: {out}\nstderr: {err}")
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
    return out, err, p.returncode


def interrupted(out):
    assert "KeyboardInterrupt after" in out, out
    return float(out.split("KeyboardInterrupt after ")[1].split()[0])


@pytest.mark.parametrize("kernel", ["spin", "forever"])
def test_ctrl_c_stops_an_endless_while_loop(kernel):
    out, err, rc = child(f"""
        spin[1, 1](np.array([-1.0]))  # compiled, and ends
        forever.compile("void(float64[:])")
        ready()
        stopped(lambda: {kernel}[1, 1](np.zeros(1)))
        fill[1, 8](np.zeros(8), 1.0)  # kiln still works afterwards
        print("after", flush=True)
        """, sigint_after=0.3, timeout=30)
    assert interrupted(out) < 5 and "after" in out, err


def test_ctrl_c_stops_a_long_recursion_and_deep_recursion_is_a_recursion_error():
    # a recursive device function polls the stop word at each call (fib(60): hours), and
    # a recursion past its stack bound (KILN_REC_STACK) is a RecursionError, not a crash
    out, err, rc = child("""
        o = np.zeros(1, np.int64)
        fib_k[1, 1](o, 10)
        assert o[0] == 55
        down_k[1, 1](o, 10)
        deep = "no error"
        try:
            down_k[1, 1](o, 10_000_000)
        except RecursionError as e:
            deep = "RecursionError " + str(e).split(": ", 1)[1][:40]
        down_k[1, 1](o, 100)
        assert o[0] == 100
        ping_k[1, 1](o, 100)
        assert o[0] == 100
        pinged = "mutual no error"
        try:  # each function of a mutual recursion passes the stack bound on (hunt9.md 1)
            ping_k[1, 1](o, 10_000_000)
        except RecursionError:
            pinged = "mutual RecursionError"
        tailed = "tail no error"
        try:  # a runaway tail recursion ends too, rather than looping for ever
            tail_k[1, 1](np.zeros(2, np.int64))
        except RecursionError as e:
            tailed = "tail RecursionError"
        ready()
        stopped(lambda: fib_k[1, 1](o, 60))
        fib_k[1, 1](o, 20)
        assert o[0] == 6765
        print(deep, flush=True)
        print(tailed, flush=True)
        print(pinged, flush=True)
        print("after", flush=True)
        """, sigint_after=0.5, timeout=60)
    assert "RecursionError maximum recursion depth exceeded" in out, (out, err)
    assert "tail RecursionError" in out, (out, err)
    assert "mutual RecursionError" in out, (out, err)
    assert interrupted(out) < 5 and "after" in out, err


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_deep_recursion_on_a_small_stack_is_a_recursion_error(tiers, monkeypatch):
    # a thread with less stack than KILN_REC_STACK below the kernel (threading.stack_size,
    # and the main thread under `ulimit -s 512`): the recursion stops above the thread's
    # own stack's end (src/target/stack.c), where it ran into the guard page (SIGSEGV)
    import resource

    def small_stack():
        resource.setrlimit(resource.RLIMIT_STACK, (512 << 10, 512 << 10))

    body = """
        threading.stack_size(256 << 10)
        got = []
        def go():
            o = np.zeros(1, np.int64)
            down_k[1, 1](o, 100)
            got.append(int(o[0]))
            try:
                down_k[1, 1](o, 10_000_000)
                got.append("no error")
            except RecursionError as e:
                got.append("thread's own" in str(e))
        t = threading.Thread(target=go)
        t.start()
        t.join()
        print("thread", got, flush=True)
        o = np.zeros(1, np.int64)
        try:
            down_k[1, 1](o, 10_000_000)
        except RecursionError:
            print("main RecursionError", flush=True)
        """
    monkeypatch.setenv("KILN_TIERS", tiers)  # the child's (conftest.py sets one for all)
    out, err, rc = child(body, timeout=90, preexec_fn=small_stack)
    assert rc == 0, (rc, out, err)
    assert "thread [100, True]" in out, (out, err)
    assert "main RecursionError" in out, (out, err)


def test_ctrl_c_stops_every_openmp_thread():
    # 2^16 threads spinning: the launch goes parallel, and every thread must leave
    out, err, rc = child("""
        x = np.array([-1.0])
        spin[256, 256](x)
        ready()
        stopped(lambda: spin[256, 256](np.zeros(1)))
        a = np.zeros(1 << 16)
        fill[256, 256](a, 2.0)
        assert a[100] == 102.0
        print("after", flush=True)
        """, sigint_after=0.3, timeout=30)
    assert interrupted(out) < 5 and "after" in out, err


@pytest.mark.parametrize("kernel", ["touch", "touch_blocks"])
def test_ctrl_c_stops_a_huge_grid_between_blocks(kernel):
    # no while loop: the polls between blocks (rows, pieces of the thread loop) stop it;
    # 2^40 threads would take hours
    out, err, rc = child(f"""
        a = np.zeros(8)
        if "{kernel}" == "touch":
            touch[1, 8](a, 8)
            launch = lambda: touch[(1 << 31) - 1, 512](a, 1 << 40)
        else:
            touch_blocks[1, 8](a)
            launch = lambda: touch_blocks[(1 << 31) - 1, 512](a)
        ready()
        stopped(launch)
        """, sigint_after=0.5, timeout=30)
    assert interrupted(out) < 5, err


def test_ctrl_c_stops_a_grid_whose_threads_each_run_a_for_loop():
    # a 1-D grid-only kernel polls between pieces of its thread loop: pieces of 256 threads
    # when the threads loop (KILN_CPU_POLL_SPAN_LOOPS), not 65536 (minutes here)
    out, err, rc = child("""
        o = np.zeros(1 << 17, np.int64)
        churn[1, 16](o[:16], 10)
        ready()
        stopped(lambda: churn[(1 << 17) // 128, 128](o, 3000000))
        """, sigint_after=0.5, timeout=120)
    assert interrupted(out) < 5, err


def test_a_sigint_handler_installed_later_is_kept_and_called():
    # signal.signal replaces kiln's handler; a later launch puts it back, chained to
    # the new one, so Ctrl-C still stops the kernel and the user's handler decides
    out, err, rc = child("""
        class Stop(Exception):
            pass

        def handler(signum, frame):
            raise Stop("from the handler")

        x = np.array([-1.0])
        spin[1, 1](x)
        signal.signal(signal.SIGINT, handler)
        for _ in range(300):  # kiln looks at its handler every 256 launches
            spin[1, 1](x)
        ready()
        try:
            spin[1, 1](np.zeros(1))
        except Stop as e:
            print("Stop:", e, flush=True)
        """, sigint_after=0.3, timeout=30)
    assert "Stop: from the handler" in out, err


def test_a_handler_that_does_not_raise_still_ends_the_launch():
    out, err, rc = child("""
        calls = []
        signal.signal(signal.SIGINT, lambda s, f: calls.append(s))
        x = np.array([-1.0])
        for _ in range(300):
            spin[1, 1](x)
        ready()
        try:
            spin[1, 1](np.zeros(1))
        except KeyboardInterrupt as e:
            print("KeyboardInterrupt:", e, "calls", len(calls), flush=True)
        """, sigint_after=0.3, timeout=30)
    assert "the kernel was stopped by SIGINT before it finished" in out, err
    assert "calls 1" in out


def test_an_ignored_sigint_does_not_stop_kernels():
    out, err, rc = child("""
        out = np.zeros(1, np.int64)
        count[1, 1](out, 10)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for _ in range(300):
            count[1, 1](out, 10)
        n = 4 * 10**9  # about a second
        ready()
        count[1, 1](out, n)
        print("finished", int(out[0]) == n, flush=True)
        """, sigint_after=0.2, timeout=60)
    assert "finished True" in out, err


def test_a_kernel_on_another_thread_runs_to_its_end():
    # Python raises KeyboardInterrupt on the main thread only; kiln leaves kernels on
    # other threads alone, as Python leaves code on them
    out, err, rc = child("""
        res = np.zeros(1, np.int64)
        count[1, 1](res, 10)
        n = 16 * 10**9  # a few seconds: SIGINT comes while it runs, on a busy machine too
        t = threading.Thread(target=lambda: count[1, 1](res, n))
        t.start()
        ready()
        try:
            while t.is_alive():
                time.sleep(0.01)
        except KeyboardInterrupt:
            print("main interrupted", flush=True)
        t.join()
        print("worker finished", int(res[0]) == n, flush=True)
        """, sigint_after=0.2, timeout=60)
    assert "main interrupted" in out and "worker finished True" in out, err


FORK = """
    def in_child(big):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            b = np.zeros(big)
            for r in range(3):
                fill[(big + 255) // 256, 256](b, float(r))
                assert b[7] == r + 7 and b[-1] == r + big - 1
        return [str(x.message) for x in w if issubclass(x.category, kiln.PerformanceWarning)]

    def fork_and_check(big):
        pid = os.fork()
        if pid == 0:
            try:
                warned = in_child(big)
                print("child ok", len(warned), warned[0][:60] if warned else "", flush=True)
                os._exit(0)
            except BaseException as e:
                print("child failed", repr(e), flush=True)
                os._exit(1)
        deadline = time.time() + 20
        while time.time() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                print("child status", status, flush=True)
                return
            time.sleep(0.02)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print("child hung", flush=True)
"""


def test_a_child_forked_after_parallel_launches_runs_kernels():
    # libgomp's thread pool does not survive fork: the child runs its blocks on one
    # thread, and says so once
    out, err, rc = child(textwrap.dedent(FORK) + textwrap.dedent("""
        big = 1 << 18
        a = np.zeros(big)
        fill[(big + 255) // 256, 256](a, 1.0)  # OpenMP's threads start here
        assert a[5] == 6.0
        fork_and_check(big)
        """), timeout=60)
    assert "child ok 1 kiln: this process was forked from one that had run" in out, (out, err)
    assert "child status 0" in out


def test_a_child_forked_before_any_parallel_launch_keeps_openmp():
    out, err, rc = child(textwrap.dedent(FORK) + textwrap.dedent("""
        fill[1, 8](np.zeros(8), 1.0)  # small: no OpenMP threads yet
        fork_and_check(1 << 18)
        """), timeout=60)
    assert "child ok 0" in out and "child status 0" in out, (out, err)


def test_a_thread_that_cannot_start_openmp_threads_runs_its_kernels_on_one():
    # GCC's OpenMP runtime ends the process (exit(1), no exception, no atexit) when it
    # cannot create its team's threads; kiln tries first, and runs serially with a warning
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        # the address-space limit that keeps thread stacks out leaves ASan's own allocator,
        # which reserves terabytes of shadow memory, no room to work
        pytest.skip("a tight RLIMIT_AS leaves AddressSanitizer's allocator out of memory")
    out, err, rc = child("""
        import re, resource, warnings
        n = 300000
        x = np.arange(float(n))
        o = np.zeros(n)
        fill[1, 32](o[:32], 1.0)
        vm = int(re.search(r"VmSize:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) * 1024
        # room for the arrays, not for OpenMP's thread stacks
        resource.setrlimit(resource.RLIMIT_AS, (vm + (4 << 20),) * 2)
        import atexit
        atexit.register(lambda: print("atexit ran", flush=True))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fill[(n + 127) // 128, 128](o, 2.0)
        print("right" if np.array_equal(o, 2.0 + np.arange(n)) else "wrong", flush=True)
        print([str(m.message)[:50] for m in w], flush=True)
        """, timeout=60, preexec_fn=_big_thread_stacks)
    assert rc == 0 and "right" in out and "atexit ran" in out, (out, err)
    assert "kiln: this thread cannot start OpenMP's threads" in out, out


def _big_thread_stacks():
    # a thread's default stack is RLIMIT_STACK's size, read when the child starts: at
    # 64 MiB one never fits the 4 MiB left above the limit, and glibc keeps no freed stack
    # that large for reuse (its cache holds 40 MiB), so no thread of the team can start
    # however the child's memory came and went before the limit (at 8 MiB a stack freed
    # earlier could be reused: the test failed now and then in full runs)
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    want = 64 << 20
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    resource.setrlimit(resource.RLIMIT_STACK, (want, hard))


SPIN = """
    import resource, subprocess
    big = 1 << 18
    a = np.zeros(big)
    print("env", os.environ.get("GOMP_SPINCOUNT"),
          subprocess.run(["sh", "-c", "echo child:$GOMP_SPINCOUNT"], capture_output=True,
                         text=True).stdout.strip(), flush=True)
    burnt = []
    for _ in range(5):
        fill[(big + 255) // 256, 256](a, 1.0)  # an OpenMP team, idle after it
        t = resource.getrusage(resource.RUSAGE_SELF)
        time.sleep(0.05)  # what its threads burn while the program does something else
        u = resource.getrusage(resource.RUSAGE_SELF)
        burnt.append(u.ru_utime + u.ru_stime - t.ru_utime - t.ru_stime)
    print("burnt", sorted(burnt)[2], flush=True)
    """


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one processor: no OpenMP team")
def test_idle_openmp_threads_stop_spinning_soon_unless_the_user_says_otherwise():
    # libgomp's threads spin 300000 iterations (about 3.5 ms here) for the next region unless
    # told otherwise; kiln tells them 10000 (KILN_OMP_SPINCOUNT) while libgomp loads, so
    # a process's first launches keep their processors, and leaves no variable behind
    def burnt(**env):
        saved = {k: os.environ.pop(k, None) for k in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
        os.environ.update(env)
        try:
            out, err, rc = child(SPIN, timeout=60)
        finally:
            for k, v in saved.items():
                os.environ.pop(k, None)
                if v is not None:
                    os.environ[k] = v
        assert rc == 0, (out, err)
        return out, float(out.split("burnt ")[1].split()[0])

    out, ours = burnt()
    assert "env None child:\n" in out, out
    out, theirs = burnt(GOMP_SPINCOUNT="3000000")
    assert "env 3000000 child:3000000" in out, out  # the user's, kept
    # the user's 3000000 spins keep a thread busy through most of the 50 ms sleep
    assert theirs > 0.02, theirs
    # and libgomp's own default (300000; 3.5 ms here) burns several times kiln's
    out, default = burnt(GOMP_SPINCOUNT="300000")
    assert ours < default / 4, (ours, default)
