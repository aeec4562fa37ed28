"""The C compiler kiln runs, and the source text it compiles.

Broken compilers are real programs on PATH-less paths (scripts, and gcc told to
run a subprogram that does not exist): each must be named as the culprit, with
its command line, how it ended and what it printed, and kept apart from a
working compiler that rejects kiln's code.  A compiler that never returns ends
at KILN_CC_TIMEOUT, or at Ctrl-C with KeyboardInterrupt.  A source file edited
after import must not change what kiln compiles under the old name.
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")


def script(tmp_path, name, body):
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    p.chmod(0o755)
    return str(p)


def compile_with(monkeypatch, cc, **env):
    """Builds a fresh kernel with KILN_CC=cc; returns the CompileError's text."""
    monkeypatch.setenv("KILN_CC", cc)
    for k, v in env.items():
        monkeypatch.setenv(k, v)

    def fresh(a):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = 3.0

    with pytest.raises(kiln.CompileError) as e:
        kiln.jit(fresh, cache=False)[1, 4](np.zeros(4))
    return str(e.value)


def test_a_compiler_that_fails_on_everything_is_blamed_not_kiln(monkeypatch):
    msg = compile_with(monkeypatch, "false")
    assert "the C compiler named by KILN_CC (false) failed" in msg
    assert "fails on a one-line C file too" in msg
    assert "exited with status 1" in msg and "(it printed nothing)" in msg
    assert "false -O3 -march=native -fopenmp" in msg  # the command line
    assert "kiln's code generation" not in msg


@pytest.mark.parametrize("says, hint", [
    ("/usr/bin/ld: final link failed: No space left on device", "the disk of TMPDIR"),
    ("ld: cannot open output file: Too many open files", "ulimit -n"),
    ("gcc: fatal error: cannot fork: Resource temporarily unavailable", "ulimit -u"),
])
def test_a_compiler_short_of_disk_descriptors_or_processes_is_not_called_broken(
        tmp_path, monkeypatch, says, hint):
    # a full TMPDIR, ulimit -n or ulimit -u fail the one-line probe too: the message says
    # what ran out, not that the compiler is broken (hunt12 6)
    cc = script(tmp_path, "short-cc", f"echo '{says}' >&2\nexit 1\n")
    msg = compile_with(monkeypatch, cc)
    assert "failed for want of a resource, not for kiln's code" in msg and says in msg, msg
    assert hint in msg and "the compiler is broken" not in msg, msg


@pytest.mark.parametrize("says, hint", [
    ("cc1: out of memory allocating 7520 bytes after a total of 112836608 bytes", "ulimit -v"),
    ("<kiln entry>:149:1: fatal error: error closing /tmp/cc7YQP2N.s: No space left on device",
     "the disk of TMPDIR"),
    ("virtual memory exhausted: Cannot allocate memory", "ulimit -v"),
])
def test_a_shortage_on_the_kernel_alone_is_not_called_a_kiln_bug(tmp_path, monkeypatch, says,
                                                                  hint):
    # the one-line probe compiles, the kernel (far larger) runs out of memory or disk: the
    # message says what ran out, not "a bug in kiln's code generation" (hunt23 2)
    cc = script(tmp_path, "kernel-short-cc", f"""\
        for a; do case "$a" in *.c) grep -q kiln_entry "$a" && {{ echo '{says}' >&2; exit 1; }};; esac; done
        exec gcc "$@"
        """)
    msg = compile_with(monkeypatch, cc)
    assert "failed for want of a resource, not for kiln's code" in msg and says in msg, msg
    assert hint in msg and "kiln's code generation" not in msg, msg


def test_a_driver_that_cannot_run_its_subprograms_is_blamed(monkeypatch):
    # gcc itself runs (gcc --version works) but cannot execute cc1, as a broken
    # install would: here it is told to run its subprograms through a missing program
    msg = compile_with(monkeypatch, "gcc -wrapper /nonexistent/kiln-wrapper")
    assert "named by KILN_CC (gcc -wrapper /nonexistent/kiln-wrapper) failed" in msg
    assert "fails on a one-line C file too" in msg
    assert "/nonexistent/kiln-wrapper" in msg.split("its output:")[1]  # gcc's own words
    assert "kiln's code generation" not in msg


def test_a_compiler_that_exits_0_without_output_says_so(tmp_path, monkeypatch):
    cc = script(tmp_path, "silent-cc", "echo 'all good' >&2\nexit 0\n")
    msg = compile_with(monkeypatch, cc)
    assert f"the C compiler named by KILN_CC ({cc}) exited with status 0 but wrote no output file" in msg
    assert "all good" in msg
    # and one that writes something that is not a shared object
    cc = script(tmp_path, "junk-cc", """\
        for a; do [ "$prev" = -o ] && echo junk > "$a"; prev=$a; done
        exit 0
        """)
    msg = compile_with(monkeypatch, cc)
    assert "exited with status 0 but its output is not a whole shared object" in msg


def test_a_truncated_shared_object_is_refused_not_loaded(tmp_path, monkeypatch):
    # an output cut short (a full disk, a killed compiler) would be mapped past its end by
    # dlopen and kill the process with SIGBUS, and its cache entry every later process
    # (hunt6.md 1); it is refused before it is stored or loaded
    cc = script(tmp_path, "cut-cc", """\
        out=""; prev=""
        for a; do [ "$prev" = -o ] && out=$a; prev=$a; done
        gcc "$@" || exit $?
        truncate -s 3000 "$out"
        """)
    msg = compile_with(monkeypatch, cc)
    assert "exited with status 0 but its output is not a whole shared object (truncated?)" in msg


def test_a_huge_shared_object_is_refused_unread(tmp_path, monkeypatch):
    # a broken compiler's output of gigabytes (here sparse) was read whole, using as much
    # memory; past KILN_MAX_KERNEL_SO_BYTES it is refused, with its size
    cc = script(tmp_path, "huge-cc", """\
        out=""; prev=""
        for a; do [ "$prev" = -o ] && out=$a; prev=$a; done
        gcc "$@" || exit $?
        truncate -s 3G "$out"
        """)
    msg = compile_with(monkeypatch, cc)
    assert "exited with status 0 but its output is 3221225472 bytes, past the 256 MiB" in msg


def test_a_working_compiler_that_rejects_kilns_code_is_kilns_bug(tmp_path, monkeypatch):
    cc = script(tmp_path, "picky-cc", """\
        case "$*" in *kernel.c*) echo 'kernel.c:1:1: error: I do not like it' >&2; exit 1;; esac
        exec gcc "$@"
        """)
    msg = compile_with(monkeypatch, cc)
    assert "rejected the generated code" in msg and "I do not like it" in msg
    assert "bug in kiln's code generation" in msg


def test_a_compiler_killed_by_a_signal_is_no_kiln_bug(tmp_path, monkeypatch):
    # gcc's driver when the OOM killer ends cc1, and a driver killed itself (hunt7.md 1.4)
    cc = script(tmp_path, "oom-cc", """\
        case "$*" in *kernel.c*) echo 'cc: fatal error: Killed signal terminated program cc1' >&2; exit 1;; esac
        exec gcc "$@"
        """)
    msg = compile_with(monkeypatch, cc)
    assert f"the C compiler named by KILN_CC ({cc}) was killed while compiling the kernel" in msg
    assert "out of memory" in msg and "kiln's code generation" not in msg
    cc = script(tmp_path, "killed-cc", """\
        case "$*" in *kernel.c*) kill -9 $$;; esac
        exec gcc "$@"
        """)
    msg = compile_with(monkeypatch, cc)
    assert "was killed while compiling the kernel (was killed by signal 9)" in msg
    assert "out of memory" in msg
    # a compiler that crashes is no shortage of memory (hunt16 4)
    cc = script(tmp_path, "crashing-cc", """\
        case "$*" in *kernel.c*) exec env -u LD_PRELOAD sh -c 'kill -SEGV $$';; esac
        exec gcc "$@"
        """)  # (without the sanitizer job's preloaded ASan, whose handler would catch it)
    msg = compile_with(monkeypatch, cc)
    assert "was killed while compiling the kernel (was killed by signal 11)" in msg
    assert "the C compiler crashed" in msg and "out of memory" not in msg


def write_first_call(tmp_path, caught, shown):
    """k.py: a first launch of a fresh kernel, printing `shown` when `caught` is raised."""
    (tmp_path / "k.py").write_text(textwrap.dedent(f"""\
        import numpy as np
        import kiln

        @kiln.jit
        def k(a):
            i = kiln.grid(1)
            if i < a.size:
                a[i] = 1.0

        try:
            k[1, 4](np.zeros(4))
        except {caught}:
            print({shown})
        """))


def test_a_compiler_that_never_returns_times_out(tmp_path):
    pidfile = tmp_path / "pid"
    cc = script(tmp_path, "hang-cc", f"echo $$ > {pidfile}\nexec sleep 1000\n")
    write_first_call(tmp_path, "kiln.CompileError as e", "e")
    env = dict(os.environ, PYTHONPATH=PYDIR, KILN_CC=cc, KILN_CC_TIMEOUT="1",
               KILN_CACHE_DIR=str(tmp_path / "cache"))
    t0 = time.time()
    try:  # in a child: before the time limit existed, this waited for ever
        p = subprocess.run([sys.executable, "k.py"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=30)
    finally:
        if pidfile.exists():
            try:
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert time.time() - t0 < 20
    assert f"the C compiler named by KILN_CC ({cc}) did not finish in 1 s" in p.stdout, p.stderr
    assert "KILN_CC_TIMEOUT" in p.stdout


@pytest.mark.parametrize("value", ["soon", "0x10", "1e-300", "-3", "inf", "0.0001", "1.2.3"])
def test_a_malformed_compiler_timeout_is_an_error(monkeypatch, value):
    # strtod's other forms too: 0x10 is no "16 s", 1e-300 no time at all (hunt23 6)
    msg = compile_with(monkeypatch, "gcc", KILN_CC_TIMEOUT=value)
    assert f"KILN_CC_TIMEOUT={value} is not a positive number of seconds" in msg


def start_compiling(tmp_path, env, started):
    """Runs k.py in a child until its compiler has touched `started` (a minute at most)."""
    p = subprocess.Popen([sys.executable, "k.py"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not started.exists() and time.time() < deadline and p.poll() is None:
        time.sleep(0.02)
    if not started.exists():
        p.kill()
        pytest.fail(f"the compiler never started: {p.communicate()}")
    return p


def test_ctrl_c_stops_a_compiler_that_never_returns(tmp_path):
    started = tmp_path / "started"
    pidfile = tmp_path / "pid"
    cc = script(tmp_path, "hang-cc", f"echo $$ > {pidfile}\ntouch {started}\nexec sleep 1000\n")
    write_first_call(tmp_path, "KeyboardInterrupt", '"KeyboardInterrupt"')
    env = dict(os.environ, PYTHONPATH=PYDIR, KILN_CC=cc, KILN_CACHE_DIR=str(tmp_path / "cache"))
    p = start_compiling(tmp_path, env, started)
    try:
        t0 = time.time()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=15)
        assert time.time() - t0 < 5
        assert "KeyboardInterrupt" in out, err
        with pytest.raises(ProcessLookupError):  # kiln killed its compiler
            os.kill(int(pidfile.read_text()), 0)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        if pidfile.exists():
            try:
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_kiln_leaves_no_compiler_and_no_build_directory(tmp_path, sig):
    # `timeout`, systemd or Kubernetes end a process with SIGTERM or SIGKILL, which the
    # compiler (in a group of its own, so that Ctrl-C reaches kiln first) does not see:
    # its supervisor ends it, its own children (a driver's cc1) and kiln's build directory
    started, pidfile = tmp_path / "started", tmp_path / "pid"
    cc = script(tmp_path, "hang-cc", f"sleep 1000 &\necho $! > {pidfile}\ntouch {started}\nwait\n")
    write_first_call(tmp_path, "KeyboardInterrupt", '"KeyboardInterrupt"')
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, PYTHONPATH=PYDIR, KILN_CC=cc, KILN_CACHE_DIR=str(tmp_path / "cache"),
               KILN_TIERS="0", TMPDIR=str(tmp))
    p = start_compiling(tmp_path, env, started)
    try:
        assert [d.name[:5] for d in tmp.iterdir()] == ["kiln-"]
        p.send_signal(sig)
        p.communicate(timeout=15)
        deadline = time.time() + 10
        while time.time() < deadline and (list(tmp.iterdir()) or not gone_quietly(pidfile)):
            time.sleep(0.05)
        assert gone(pidfile), "the compiler's child outlived kiln"
        assert list(tmp.iterdir()) == []
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def test_a_build_removes_the_stale_build_directories_of_ended_processes(tmp_path):
    # a worker that ended with os._exit (multiprocessing's fork workers) or SIGKILL leaves its
    # kiln-PID-XXXXXX; a later build removes those of ended processes an hour old, and leaves
    # a live process's, a recent one, and anything not kiln's
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    p = subprocess.Popen(["true"])
    p.wait()
    dead, live = p.pid, os.getpid()
    old = time.time() - 2 * 3600
    made = {}
    for name in (f"kiln-{dead}-aaaaaa", f"kiln-{dead}-bbbbbb", f"kiln-{live}-cccccc",
                 "kiln-aaaaaa", f"other-{dead}-dddddd"):
        d = tmp / name
        d.mkdir()
        (d / "kernel.c").write_text("int x;\n")
        made[name] = d
    for name in (f"kiln-{dead}-aaaaaa", f"kiln-{live}-cccccc", "kiln-aaaaaa", f"other-{dead}-dddddd"):
        os.utime(made[name], (old, old))
    write_first_call(tmp_path, "kiln.CompileError as e", "e")
    env = dict(os.environ, PYTHONPATH=PYDIR, KILN_CACHE_DIR=str(tmp_path / "cache"),
               KILN_TIERS="0", TMPDIR=str(tmp))
    out = subprocess.run([sys.executable, "k.py"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    left = sorted(d.name for d in tmp.iterdir())
    assert left == sorted([f"kiln-{dead}-bbbbbb", f"kiln-{live}-cccccc", "kiln-aaaaaa",
                           f"other-{dead}-dddddd"]), left


def gone_quietly(pidfile):
    """Whether the process is dead (a zombie counts), without killing it."""
    try:
        with open(f"/proc/{int(pidfile.read_text())}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in "ZX"
    except FileNotFoundError:
        return True


def cli_compile(tmp_path, cc, **env):
    (tmp_path / "k.py").write_text("def k(a):\n    a[0] = 1.0\n")
    kiln_exe = os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build"), "kiln")
    return subprocess.Popen([kiln_exe, "compile", "k.py", "k", "void(float64[:])", "--build"],
                            cwd=tmp_path, env=dict(os.environ, KILN_CC=cc, PYTHONPATH=PYDIR,
                                                   KILN_PYTHON=sys.executable, **env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def gone(pidfile):
    """Whether the process is dead (a zombie left to init counts); kills it if not."""
    pid = int(pidfile.read_text())
    try:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] in "ZX":
                return True
    except FileNotFoundError:
        return True
    os.kill(pid, signal.SIGKILL)
    return False


def test_the_cli_stops_a_compiler_that_never_returns(tmp_path):
    pidfile = tmp_path / "pid"
    cc = script(tmp_path, "hang-cc", f"echo $$ > {pidfile}\nexec sleep 1000\n")
    p = cli_compile(tmp_path, cc, KILN_CC_TIMEOUT="1")
    try:
        err = p.communicate(timeout=30)[1]
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    assert p.returncode == 1 and "did not finish in 1 s" in err, err
    assert gone(pidfile)


def test_ctrl_c_in_a_terminal_ends_the_cli_and_its_compiler(tmp_path):
    # the CLI polls nothing, so its compiler stays in the terminal's process group:
    # the Ctrl-C that ends kiln ends the compiler too
    pidfile, started = tmp_path / "pid", tmp_path / "started"
    cc = script(tmp_path, "hang-cc", f"echo $$ > {pidfile}\ntouch {started}\nexec sleep 1000\n")
    p = cli_compile(tmp_path, cc)
    try:
        deadline = time.time() + 30
        while not started.exists() and time.time() < deadline and p.poll() is None:
            time.sleep(0.02)
        assert started.exists(), p.communicate()
        os.killpg(p.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        p.communicate(timeout=10)
        time.sleep(0.1)
        assert gone(pidfile)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()


# ---- source edited after import ----------------------------------------------------

def run_edit(tmp_path, body):
    """Runs body in a child that imports modules from tmp_path (kiln reads their files)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYDIR, str(tmp_path)]),
               PYTHONDONTWRITEBYTECODE="1")
    (tmp_path / "main.py").write_text(textwrap.dedent(body))
    p = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


KERNELS_V1 = '''\
import kiln
from helpers import bump


@kiln.jit
def fill(a):
    i = kiln.grid(1)
    if i < a.size:
        a[i] = bump(1.0)
'''
KERNELS_V2 = '''\
import kiln
from helpers import bump


@kiln.jit
def wipe(a, b):
    i = kiln.grid(1)
    if i < a.size:
        a[i] = -7.0
'''
HELPERS_V1 = "def bump(x):\n    return x + 1.0\n"
HELPERS_V2 = "def bump2(x, y):\n    return x - 100.0\n"


def test_a_kernel_edited_after_import_runs_as_imported(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS_V1)
    (tmp_path / "helpers.py").write_text(HELPERS_V1)
    out = run_edit(tmp_path, f"""
        import numpy as np
        import kernels
        open("kernels.py", "w").write({KERNELS_V2!r})  # another def at the same lines
        a = np.zeros(4)
        kernels.fill[1, 4](a)
        print(a.tolist())
        """)
    assert out.strip() == "[2.0, 2.0, 2.0, 2.0]"  # fill as imported, with bump as imported


def test_a_function_whose_file_changed_is_refused(tmp_path):
    # helpers.py has no kernel, so nothing took its snapshot: kiln reads it at the
    # first compile and finds another def where bump was
    (tmp_path / "kernels.py").write_text(KERNELS_V1)
    (tmp_path / "helpers.py").write_text(HELPERS_V1)
    out = run_edit(tmp_path, f"""
        import numpy as np
        import kiln, kernels
        open("helpers.py", "w").write({HELPERS_V2!r})
        try:
            kernels.fill[1, 4](np.zeros(4))
        except kiln.CompileError as e:
            print(e)
        """)
    assert "helpers.py:1: error: the source of 'bump' changed since it was imported" in out
    assert "line 1 now starts 'def bump2'" in out and "restart" in out
