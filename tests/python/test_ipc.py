"""GPU memory shared between processes (docs/ipc.md), on the fake driver (tests/fake_cuda),
whose exportable pools are memfd files: a second process maps the same bytes, so what one
process writes the other reads, as on a GPU.  The H200 runs Numba-CUDA's own test_ipc.py
(bench/RESULTS.md) and tests/python/test_gpu.py's IPC test."""
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE = os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build"), "libkiln-fake-cuda.so")

PRELUDE = """
import concurrent.futures, multiprocessing as mp, os, pickle, signal, sys, time
import numpy as np
import kiln

def read_in_child(h):
    with h as d:
        out = d.copy_to_host()
        try:
            with h:
                pass
        except ValueError as e:
            assert "IpcHandle is already opened" in str(e), e
        else:
            raise AssertionError("a handle opened twice")
        d[0] = -5  # the exporting process sees the write: shared memory, not a copy
    return out

def read_bytes_in_child(reserved, n):
    with kiln.open_ipc_array(reserved, shape=n, dtype=np.intp) as d:
        return d.copy_to_host()

def open_error_in_child(reserved, n):
    try:
        with kiln.open_ipc_array(reserved, shape=n, dtype=np.intp):
            pass
    except Exception as e:
        return type(e).__name__ + ": " + str(e)
    return "opened"

def pool():
    return concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))
"""


def run(body, cpu=False, gpu=False):
    """body as a script's main, on the fake driver (or the CPU target, or the real GPU)."""
    assert gpu or os.path.exists(FAKE), f"{FAKE} is missing: build with make (meson builds it)"
    env = dict(os.environ)
    env.pop("KILN_TARGET", None)
    if cpu:
        env["KILN_TARGET"] = "cpu"
    elif not gpu:
        env["KILN_CUDA_DRIVER"] = FAKE
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "ipc_script.py")
        with open(script, "w") as f:
            f.write(PRELUDE + "if __name__ == '__main__':\n" +
                    textwrap.indent(textwrap.dedent(body), "    "))
        p = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                           timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


SHARED_VIEWS = """
        a = np.arange(10, dtype=np.intp)
        d = kiln.to_device(a)
        with pool() as ex:
            for idx, first in ((None, 0), (slice(3, None), 3), (slice(3, 8), 3),
                               (slice(None, None, -2), 9)):
                v = d if idx is None else d[idx]
                h = pickle.loads(pickle.dumps(v.get_ipc_handle()))
                got = ex.submit(read_in_child, h).result(timeout=60)
                assert (got == a[idx if idx is not None else slice(None)]).all(), (idx, got)
                host = d.copy_to_host()
                assert host[first] == -5 and (np.delete(host, first) == np.delete(a, first)).all(), host
                d.copy_to_device(a)
        print("ok")
    """


def test_another_process_opens_a_device_array_and_its_views_and_writes_to_them():
    assert run(SHARED_VIEWS).strip().endswith("ok")


def test_a_context_handle_pickles_and_its_bytes_open_in_another_process():
    out = run("""
        a = np.arange(10, dtype=np.intp)
        d = kiln.to_device(a)
        ipch = kiln.current_context().get_ipc_handle(d.gpu_data)
        r = pickle.loads(pickle.dumps(ipch))
        assert r.base is None and ipch.base is not None
        assert r.handle.reserved == ipch.handle.reserved and r.size == ipch.size == 80
        with pool() as ex:
            got = ex.submit(read_bytes_in_child, ipch.handle.reserved, 10).result(timeout=60)
            assert (got == a).all(), got
            # a slice's handle: the allocation's bytes and the slice's offset in it
            h = kiln.current_context().get_ipc_handle(d[4:].gpu_data)
            assert h.offset == 32 and h.size == 48 and h.handle.reserved == ipch.handle.reserved
            # bytes that are no handle, and a handle whose token was altered
            bad = bytearray(ipch.handle.reserved)
            bad[-1] ^= 0xFF
            e1 = ex.submit(open_error_in_child, b"not a handle", 10).result(timeout=60)
            e3 = ex.submit(open_error_in_child, ipch.handle.reserved, 100000).result(timeout=60)
        with pool() as ex:  # a process that has not imported the pool yet asks for it
            e2 = ex.submit(open_error_in_child, bytes(bad), 10).result(timeout=60)
        assert e1.startswith("ValueError") and "not a kiln IPC handle" in e1, e1
        assert e2.startswith("RuntimeError") and "refused the handle's token" in e2, e2
        assert e3.startswith("ValueError") and "not inside the shared allocation" in e3, e3
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_a_handle_of_a_process_that_ended_says_so():
    out = run("""
        import subprocess
        code = ("import kiln, numpy as np, sys; d = kiln.to_device(np.arange(4)); "
                "sys.stdout.buffer.write(d.get_ipc_handle()._ipc_handle.handle.reserved)")
        reserved = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                  check=True).stdout
        t0 = time.monotonic()
        err = open_error_in_child(reserved, 4)
        assert err.startswith("RuntimeError") and "has ended" in err, err
        assert time.monotonic() - t0 < 10
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_a_forked_child_shares_memory_of_its_own():
    # the child's pid differs: it starts a descriptor server of its own, and its handles
    # open in a third process while the parent's still open too
    out = run("""
        d = kiln.to_device(np.arange(6, dtype=np.intp))
        parent_h = d.get_ipc_handle()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            c = kiln.to_device(np.arange(6, dtype=np.intp) * 10)
            os.write(w, pickle.dumps(c.get_ipc_handle()))
            os.close(w)
            time.sleep(30)  # alive while the handle is opened; killed below
            os._exit(0)
        os.close(w)
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        child_h = pickle.loads(data)
        with pool() as ex:
            got_child = ex.submit(read_in_child, child_h).result(timeout=60)
            got_parent = ex.submit(read_in_child, parent_h).result(timeout=60)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        assert (got_child == np.arange(6) * 10).all(), got_child
        assert (got_parent == np.arange(6)).all(), got_parent
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_a_handle_opens_in_its_own_process_without_mapping_anything():
    out = run("""
        d = kiln.to_device(np.arange(5, dtype=np.float64))
        h = d[1:].get_ipc_handle()
        with h as v:
            assert (v.copy_to_host() == [1, 2, 3, 4]).all()
            v[0] = 9
        assert d.copy_to_host()[1] == 9
        try:
            h.close()
        except ValueError as e:
            assert "not opened" in str(e)
        else:
            raise AssertionError("closed twice")
        try:
            kiln.device_array(0).get_ipc_handle()
        except ValueError as e:
            assert "empty" in str(e)
        else:
            raise AssertionError("an empty array shared")
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_numba_driver_copies_and_memory_info():
    out = run("""
        d = kiln.to_device(np.arange(8, dtype=np.float32))
        host = np.zeros(8, np.float32)
        kiln.driver.device_to_host(host, d.gpu_data, size=32)
        assert (host == np.arange(8)).all()
        kiln.driver.host_to_device(d, np.full(8, 2, np.float32), 16)
        e = kiln.device_array(8, np.float32)
        kiln.driver.device_to_device(e, d, 32)
        assert (e.copy_to_host() == [2, 2, 2, 2, 4, 5, 6, 7]).all(), e.copy_to_host()
        free, total = kiln.current_context().get_memory_info()
        assert 0 < free <= total
        assert kiln.devices.get_context().device == kiln.get_current_device()
        for bad in (-1, 1.5, True):
            try:
                kiln.driver.device_to_host(host, d, bad)
            except ValueError:
                pass
            else:
                raise AssertionError(bad)
        try:
            kiln.driver.device_to_host(host, "x", 4)
        except TypeError:
            pass
        else:
            raise AssertionError("a string as device memory")
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_the_cpu_target_refuses_ipc_handles_clearly():
    out = run("""
        d = kiln.to_device(np.arange(4))
        for f in (d.get_ipc_handle, lambda: kiln.current_context().get_ipc_handle(d.gpu_data)):
            try:
                f()
            except NotImplementedError as e:
                assert "host memory" in str(e), e
            else:
                raise AssertionError("shared host memory")
        print("ok")
    """, cpu=True)
    assert out.strip().endswith("ok")
