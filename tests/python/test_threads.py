"""kiln under real threads: launches that race on a kernel's first call.

Each test runs its threads in a child process, so a crash (the failure these
tests exist to catch) is a failed test with the child's exit status, not a
dead test run."""
import os
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")


def run(body, timeout=120):
    env = dict(os.environ, PYTHONPATH=PYDIR)
    with tempfile.TemporaryDirectory() as d:  # kiln reads kernels from their files
        script = os.path.join(d, "threads_script.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(body))
        p = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                           timeout=timeout)
    return p


def test_first_launches_of_one_kernel_on_eight_threads():
    # 8 threads released together each make the first launch of the same fresh
    # kernel: all miss the specialisation table, all build (the cache makes
    # the later builds cheap), and each runs long enough (tens of ms) for the
    # others to finish their builds meanwhile.  The entry a thread runs must
    # stay loaded until its launch returns, whatever the others insert.
    p = run("""
        import math, threading
        import numpy as np
        import kiln

        def spin(out, n):
            i = kiln.grid(1)
            s = 0.0
            for j in range(n):
                s += math.sin(j * 1e-3 + i)
            out[i] = s

        N, THREADS, ROUNDS = 300000, 8, 6
        ref = np.zeros(4)
        kiln.jit(spin)[1, 4](ref, N)  # builds once: later builds are cache hits
        for r in range(ROUNDS):
            k = kiln.jit(spin)  # a fresh dispatcher: an empty table
            outs = [np.zeros(4) for _ in range(THREADS)]
            barrier = threading.Barrier(THREADS)
            errors = []

            def work(out):
                try:
                    barrier.wait()
                    k[1, 4](out, N)
                except BaseException as e:
                    errors.append(e)

            ts = [threading.Thread(target=work, args=(o,)) for o in outs]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            assert not errors, errors
            for o in outs:
                assert np.array_equal(o, ref), (o, ref)
            # one specialisation, whichever thread built it
            assert len(k._entries()) == 1
            assert k.signatures == ["(float64[::1], int64)"], k.signatures
        print("ok")
    """)
    assert p.returncode == 0 and p.stdout.strip() == "ok", (p.returncode, p.stdout + p.stderr)


def test_explicit_signature_compiles_race_to_one_entry():
    # compile(signature) on 8 threads at once: one entry stays in the table,
    # and every thread gets that one (a replaced entry would be unloaded).
    p = run("""
        import threading
        import numpy as np
        import kiln

        def add(a, b):
            i = kiln.grid(1)
            if i < a.size:
                a[i] += b[i]

        kiln.jit(add).compile("void(float32[::1], float32[::1])")
        for r in range(4):
            k = kiln.jit(add)
            barrier = threading.Barrier(8)
            got = []

            def work():
                barrier.wait()
                got.append(k.compile("void(float32[::1], float32[::1])"))

            ts = [threading.Thread(target=work) for _ in range(8)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            [(key, entry)] = k._entries()
            assert all(e is entry for e in got), got
            a = np.ones(10, np.float32)
            k[1, 16](a, a.copy())
            assert (a == 2).all()
        print("ok")
    """)
    assert p.returncode == 0 and p.stdout.strip() == "ok", (p.returncode, p.stdout + p.stderr)
