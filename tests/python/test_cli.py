"""The `kiln` command follows its neighbours' conventions (git, pip, numba -s): --version,
--help on every command (stdout, exit 0), usage errors (stderr, exit 2), --json that
json.loads reads whatever bytes a path holds, `kiln info` with secrets masked, and
`kiln compile` resolving a file's globals as the import path does.

Every test runs the real program ($KILN_BUILD_DIR/kiln) in a child process."""

import json
import os
import platform
import signal
import subprocess
import sys
import time

import pytest

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")
BUILD = os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build"))
KILN = os.path.join(BUILD, "kiln")
FAKE_DRIVER = os.path.join(BUILD, "libkiln-fake-cuda.so")
DEMO = os.path.join(ROOT, "examples", "demo.py")
DEMO_SIG = ("void(float32[::1], float32[::1], float32[::1], float32[::1], float32[::1], "
            "float32, float32)")
TINY = "import math\n\ndef tiny(a):\n    a[0] = math.sqrt(2.0)\n"


def env_for(cache_dir, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("KILN_") or k in ("KILN_BUILD_DIR", "KILN_TEST_PYDIR")}
    env.update(KILN_CACHE_DIR=os.fsdecode(cache_dir), KILN_PYTHON=sys.executable, PYTHONPATH=PYDIR,
               KILN_TARGET="cpu")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def cli(*args, env=None, cwd=None, timeout=120):
    return subprocess.run([KILN, *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def env(tmp_path):
    return env_for(tmp_path / "cache")


# ---- --version, --help, usage errors -------------------------------------------------------

@pytest.mark.parametrize("args", [["--version"], ["version"]])
def test_version(args, env):
    p = cli(*args, env=env)
    assert (p.returncode, p.stdout, p.stderr) == (0, f"kiln {kiln.__version__}\n", "")


HELP = [
    (["--help"], ["info", "compile", "cache", "precompile"]),
    (["-h"], ["info"]),
    (["help"], ["compile"]),
    (["info", "--help"], ["--json", "--no-probe"]),
    (["compile", "--help"], ["--target", "--arch", "--types", "--build", "--fastmath", "--debug",
                             "--no-python", "SIGNATURE"]),
    (["compile", "demo.py", "k", "-h"], ["--target"]),
    (["precompile", "--help"], ["--target", "MODULE.py"]),
    (["cache", "--help"], ["stats", "ls", "verify", "clear", "prune", "export", "import"]),
    (["cache", "stats", "--help"], ["--json"]),
    (["cache", "ls", "--help"], ["--json", "--sort"]),
    (["cache", "verify", "--help"], ["verify"]),
    (["cache", "clear", "--help"], ["clear"]),
    (["cache", "prune", "--help"], ["SIZE"]),
    (["cache", "export", "--help"], ["--target", "FILE"]),
    (["cache", "import", "--help"], ["--trust-unsigned", "FILE"]),
    (["version", "--help"], ["version"]),
    (["help", "cache", "export"], ["--target"]),
    (["help", "compile"], ["--no-python"]),
]


@pytest.mark.parametrize("args,words", HELP, ids=[" ".join(a) for a, _ in HELP])
def test_help_goes_to_stdout_and_exits_0(args, words, env):
    env["KILN_PYTHON"] = "/bin/false"  # help is the kiln program's: no Python runs
    p = cli(*args, env=env)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout.startswith("usage: kiln"), p.stdout
    for w in words:
        assert w in p.stdout, (w, p.stdout)


USAGE_ERRORS = [
    ([], "missing command"),
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["--frobnicate"], "unknown option '--frobnicate'"),
    (["info", "--bogus"], "unknown option '--bogus'"),
    (["info", "extra"], "unexpected argument 'extra'"),
    (["compile"], "missing arguments"),
    (["compile", "demo.py", "k"], "missing arguments"),
    (["compile", "demo.py", "k", "void()", "--target"], "option '--target' needs a value"),
    (["compile", "demo.py", "k", "void()", "--target", "gpu"], "unknown target 'gpu'"),
    (["compile", "demo.py", "k", "void()", "--target", "cuda", "--arch", "5"],
     "'5' is not a CUDA architecture"),
    (["compile", "demo.py", "k", "void()", "--types=yes"], "option '--types' takes no value"),
    (["compile", "demo.py", "k", "void()", "extra"], "unexpected argument 'extra'"),
    (["cache"], "missing subcommand"),
    (["cache", "frobnicate"], "unknown subcommand 'frobnicate'"),
    (["cache", "stats", "--bogus"], "unknown option '--bogus'"),
    (["cache", "ls", "--sort", "colour"], "cannot sort by 'colour'"),
    (["cache", "prune", "lots"], "'lots' is not a size"),
    (["cache", "prune", "0x10"], "'0x10' is not a size"),  # not 16 bytes (hunt23 6)
    (["cache", "prune", "1e3"], "'1e3' is not a size"),
    (["cache", "prune", "-1"], "unknown option '-1'"),
    (["cache", "export"], "missing arguments"),
    (["cache", "export", "b.kiln", "--target", "gpu"], "bad target 'gpu'"),
    (["cache", "import"], "missing arguments"),
    (["cache", "import", "a", "b"], "unexpected argument 'b'"),
    (["precompile"], "missing arguments"),
    (["precompile", "m.py", "--target"], "option '--target' needs a value"),
    (["precompile", "m.py", "--target", "bogus"], "bad target 'bogus'"),
    (["precompile", "m.py", "--target", "cuda:sm_5"], "bad target 'cuda:sm_5'"),
    (["precompile", "m.py", "--target", "cuda:80,"], "bad target 'cuda:80,'"),
    (["version", "now"], "unexpected argument 'now'"),
    (["help", "frobnicate"], "no command 'frobnicate'"),
]


@pytest.mark.parametrize("args,why", USAGE_ERRORS,
                         ids=[" ".join(a) or "-" for a, _ in USAGE_ERRORS])
def test_usage_errors_go_to_stderr_and_exit_2(args, why, env):
    env["KILN_PYTHON"] = "/bin/false"  # refused before any Python runs
    p = cli(*args, env=env)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == ""
    assert why in p.stderr and "usage: kiln" in p.stderr, p.stderr


def test_python_m_kiln_usage_errors_exit_2_and_export_names_a_missing_directory(tmp_path, env):
    # huntF 09: `python -m kiln precompile --target bogus` exited 1; huntF 10: an export
    # into a missing directory gave SQLite's message about a temporary file
    (tmp_path / "m.py").write_text("x = 1\n")
    for t, why in (("bogus", "bad target 'bogus'"), ("cuda:sm_5", "architecture 'sm_5'")):
        p = subprocess.run([sys.executable, "-m", "kiln", "precompile", "m.py", "--target", t],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
        assert p.returncode == 2 and why in p.stderr, (p.returncode, p.stderr)
    p = cli("cache", "export", str(tmp_path / "no" / "dir" / "b.kiln"), env=env)
    assert p.returncode == 1
    assert f"its directory {tmp_path / 'no' / 'dir'} does not exist" in p.stderr, p.stderr


def test_options_may_come_anywhere_and_take_equals(tmp_path, env):
    (tmp_path / "tiny.py").write_text(TINY)
    a = cli("compile", "--target=cpu", "tiny.py", "--types", "tiny", "void(float64[::1])",
            env=env, cwd=tmp_path)
    b = cli("compile", "tiny.py", "tiny", "void(float64[::1])", "-t", "cpu", "--types",
            env=env, cwd=tmp_path)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert a.stdout == b.stdout and "kernel tiny(a: array(float64, 1d, C))" in a.stdout


# ---- --json --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def odd_cache(tmp_path_factory):
    """A cache whose directory name is not UTF-8 and has a quote and a backslash, with one
    entry (built through `kiln compile --build`)."""
    base = tmp_path_factory.mktemp("json")
    cache = os.fsencode(base) + b'/c\xff\xe9-"q\\x'
    (base / "tiny.py").write_text(TINY)
    env = {os.fsencode(k): os.fsencode(v) for k, v in env_for(base).items()}
    env[b"KILN_CACHE_DIR"] = cache
    p = subprocess.run([KILN, "compile", "tiny.py", "tiny", "void(float64[::1])", "--build"],
                       cwd=base, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "built: " in p.stderr and "cache key" in p.stderr, p.stderr
    return cache, env


def run_json(env, *args):
    p = subprocess.run([KILN, *args], env=env, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_cache_ls_json(odd_cache):
    cache, env = odd_cache
    data = run_json(env, "cache", "ls", "--json")
    assert os.fsencode(data["path"]) == cache + b"/kiln.db"
    [e] = data["entries"]
    assert e["kind"] == "so" and e["target"].startswith("cpu:") and e["size"] > 0
    assert len(e["key"]) == 32 and int(e["key"], 16) >= 0
    assert e["name"] == "tiny.tiny(float64[::1])"
    assert 0 < e["created_ms"] <= e["last_used_ms"]
    by_size = run_json(env, "cache", "ls", "--json", "--sort", "size")
    assert by_size["entries"] == data["entries"]


def test_cache_stats_json(odd_cache):
    cache, env = odd_cache
    data = run_json(env, "cache", "stats", "--json")
    disk = data["disk"]
    assert os.fsencode(disk["path"]) == cache + b"/kiln.db"
    assert disk["entries"] == 1 and disk["bytes"] > 0 and disk["max_bytes"] == 1 << 30
    assert disk["compiles"] == 1 and disk["compile_ms"] > 0
    assert disk["evictions"] == 0 and disk["failed_checks"] == 0
    assert data["remote"] is None


def test_info_json(odd_cache):
    cache, env = odd_cache
    env = dict(env)
    env[b"KILN_CC_TIMEOUT"] = b"77"
    env[b"KILN_BUNDLE_KEY"] = b"bundle-secret-1234"
    env[b"KILN_REMOTE_KEY"] = b"remote-secret-5678"
    env[b"KILN_ODD"] = b'q"\\\n\t\x01\x7f\xff\xe9 \xc3\xa9 \xed\xa0\x80'  # escapes, bad UTF-8
    p = subprocess.run([KILN, "info", "--json"], env=env, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert b"secret" not in p.stdout + p.stderr
    data = json.loads(p.stdout)
    assert data["kiln"]["version"] == kiln.__version__
    assert data["python"]["executable"] and data["python"]["found_by"] == "KILN_PYTHON"
    assert data["python"]["version"] == platform.python_version()
    assert data["python"]["kiln_version"] == kiln.__version__ and data["python"]["error"] is None
    cc = data["c_compiler"]
    assert cc["command"] == "cc" and cc["version"] and cc["path"].startswith("/")
    assert cc["openmp"] is True and cc["openmp_threads"] >= 1, cc
    for lib in ("nvrtc", "nvjitlink", "driver"):
        assert isinstance(data[lib]["found"], bool)
        assert (data[lib]["error"] is None) == data[lib]["found"], data[lib]
        assert bool(data[lib]["path"]) == data[lib]["found"], data[lib]
    assert isinstance(data["devices"], list)
    c = data["cache"]
    assert os.fsencode(c["path"]) == cache + b"/kiln.db" and c["entries"] == 1
    assert c["tiers"] == ["memory", "disk"] and c["remote"] is None
    envs = data["environment"]
    assert envs["KILN_CC_TIMEOUT"] == "77"
    assert envs["KILN_BUNDLE_KEY"] == envs["KILN_REMOTE_KEY"] == "********"
    assert os.fsencode(envs["KILN_ODD"]) == env[b"KILN_ODD"]
    assert os.fsencode(envs["KILN_CACHE_DIR"]) == cache


def test_info_text_lists_kiln_variables_and_masks_secrets(env):
    env.update(KILN_CC_TIMEOUT="77", KILN_BUNDLE_KEY="bundle-secret-1234",
               KILN_REMOTE_CACHE="redis://:hunter2@127.0.0.1:9/0", KILN_REMOTE_TIMEOUT_MS="200")
    p = cli("info", env=env)
    assert p.returncode == 0, p.stderr
    assert "secret" not in p.stdout + p.stderr and "hunter2" not in p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert "KILN_CC_TIMEOUT              77" in lines
    assert "KILN_BUNDLE_KEY              ********" in lines
    assert "KILN_REMOTE_CACHE            redis://:********@127.0.0.1:9/0" in lines
    assert f"version:                     {kiln.__version__}" in lines
    assert any(line.startswith("OpenMP:") and "works" in line for line in lines), p.stdout
    assert "could not be used" in p.stdout  # the remote tier that failed, masked


def test_info_reports_tier_0(tmp_path, env):
    data = json.loads(cli("info", "--json", env=env).stdout)["tier0"]
    if not data["built_with_libtcc"]:
        assert data["runtime"] is None
        return
    assert data["works"] is True and data["error"] is None and data["runtime"].endswith("libtcc1.a")
    assert data["kiln_tiers"].startswith("1 (default")
    env.update(KILN_TCC_DIR=str(tmp_path / "nowhere"), KILN_TIERS="0")
    data = json.loads(cli("info", "--json", env=env).stdout)["tier0"]
    assert data["works"] is False and data["kiln_tiers"] == "0"
    assert data["runtime"] == str(tmp_path / "nowhere" / "libtcc1.a") and data["error"], data


def test_info_shows_the_devices_the_driver_reports(env):
    env["KILN_CUDA_DRIVER"] = FAKE_DRIVER
    data = json.loads(cli("info", "--json", "--no-probe", env=env).stdout)
    assert data["driver"]["found"] and data["driver"]["version"] == "13.0"
    assert data["driver"]["path"] == FAKE_DRIVER
    [d] = data["devices"]
    assert d == {"index": 0, "name": "kiln fake GPU", "compute_capability": "9.0",
                 "arch": "sm_90", "memory_bytes": None, "multiprocessors": 132}
    assert data["python"]["version"] is None  # --no-probe ran no program
    text = cli("info", "--no-probe", env=env).stdout
    assert "[0] kiln fake GPU: compute capability 9.0 (sm_90)" in text


def test_info_says_why_openmp_does_not_work(tmp_path, env):
    cc = tmp_path / "no-openmp-cc"
    cc.write_text("#!/bin/sh\necho 'fake-cc 1.0'\necho 'omp.h: No such file' >&2\nexit 1\n")
    cc.chmod(0o755)
    env["KILN_CC"] = str(cc)
    data = json.loads(cli("info", "--json", env=env).stdout)
    c = data["c_compiler"]
    assert c["command"] == str(cc) and c["version"] == "fake-cc 1.0"
    assert c["openmp"] is False and "-fopenmp failed" in c["openmp_error"], c


def test_info_says_why_python_cannot_run_kiln(env):
    env["KILN_PYTHON"] = "/nonexistent/python3"
    data = json.loads(cli("info", "--json", env=env).stdout)
    assert data["python"]["command"] == "/nonexistent/python3"
    assert "No such file or directory" in data["python"]["error"]
    env["KILN_PYTHON"] = sys.executable
    env.pop("PYTHONPATH")
    data = json.loads(cli("info", "--json", env=env).stdout)
    assert data["python"]["version"] == platform.python_version()
    assert "No module named 'kiln'" in data["python"]["error"]


# ---- kiln compile ------------------------------------------------------------------------

def test_compile_resolves_the_demo_as_the_import_path_does(env):
    p = cli("compile", DEMO, "black_scholes", DEMO_SIG, env=env)
    assert p.returncode == 0, p.stderr
    assert "generated by kiln" in p.stdout and "black_scholes" in p.stdout
    assert "cnd" in p.stdout  # the device function, found among the module's globals
    t = cli("compile", DEMO, "black_scholes", DEMO_SIG, "--types", env=env)
    assert t.returncode == 0, t.stderr
    assert t.stdout.startswith("kernel black_scholes(call: array(float32, 1d, C)")
    assert "device function cnd(d: float32) -> float32" in t.stdout
    g = cli("compile", DEMO, "black_scholes", DEMO_SIG, "--target", "cuda", "--arch", "sm_80",
            env=env)
    assert g.returncode == 0 and "__global__" in g.stdout, g.stderr
    # the C-only path resolves no module globals: the demo's device function is unknown there
    c = cli("compile", DEMO, "black_scholes", DEMO_SIG, "--no-python", env=env)
    assert c.returncode == 1 and "name 'cnd' is not defined" in c.stderr


def test_compile_a_device_function_says_where_its_code_is(env):
    p = cli("compile", DEMO, "cnd", "float32(float32)", env=env)
    assert p.returncode == 1 and "'cnd' is a device function" in p.stderr, p.stderr


def test_compile_missing_file_and_kernel(tmp_path, env):
    p = cli("compile", str(tmp_path / "nope.py"), "k", "void()", env=env)
    assert p.returncode == 1 and f"no such file {tmp_path / 'nope.py'}" in p.stderr, p.stderr
    p = cli("compile", DEMO, "black_scholez", DEMO_SIG, env=env)
    assert p.returncode == 1, p.stderr
    assert "has no function 'black_scholez'; its kernels and device functions: " \
           "black_scholes, cnd" in p.stderr
    p = cli("compile", DEMO, "RISKFREE", DEMO_SIG, env=env)
    assert p.returncode == 1 and "'RISKFREE' in" in p.stderr and "is a float" in p.stderr
    p = cli("compile", str(tmp_path / "nope.py"), "k", "void()", "--no-python", env=env)
    assert p.returncode == 1 and "cannot read" in p.stderr


def test_compile_errors_are_the_compilers(tmp_path, env):
    p = cli("compile", DEMO, "black_scholes", "void(float32)", env=env)
    assert p.returncode == 1 and "has 1 arguments but 'black_scholes' takes 7" in p.stderr
    p = cli("compile", DEMO, "black_scholes", DEMO_SIG.replace("float32,", "flaot32,"), env=env)
    assert p.returncode == 1 and "unknown type 'flaot32'" in p.stderr, p.stderr
    (tmp_path / "bad.py").write_text("import kiln\n\n@kiln.jit\ndef k(a):\n    a[0] = b\n")
    p = cli("compile", "bad.py", "k", "void(float64[::1])", env=env, cwd=tmp_path)
    assert p.returncode == 1 and "bad.py:5:12: error: name 'b' is not defined" in p.stderr, \
        p.stderr


def test_modules_are_read_as_python_whatever_their_names_and_what_they_do(tmp_path, env):
    # a file named *.txt is Python source too; a directory, a module that exits while it
    # is imported and a function of another module (kiln.jit) get one line, no traceback
    src = "import kiln\n\n@kiln.jit('void(float32[::1])')\ndef k(a):\n    a[0] = 1\n"
    (tmp_path / "kernels.txt").write_text(src)
    p = cli("precompile", "kernels.txt", env=env, cwd=tmp_path)
    assert p.returncode == 0 and "1 built" in p.stdout, p.stderr
    p = cli("precompile", str(tmp_path), env=env)
    assert p.returncode == 1 and "is not a file" in p.stderr, p.stderr
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(3)\n")
    p = cli("precompile", "exits.py", env=env, cwd=tmp_path)
    assert p.returncode == 1 and "called sys.exit(3)" in p.stderr, p.stderr
    p = cli("compile", "kernels.txt", "kiln.jit", "void(float32[::1])", env=env, cwd=tmp_path)
    assert p.returncode == 1 and "is a function of module kiln._dispatch" in p.stderr
    assert "Traceback" not in p.stderr, p.stderr


def test_compile_reports_a_module_that_fails_to_import(tmp_path, env):
    (tmp_path / "boom.py").write_text("import kiln\n\nraise RuntimeError('boom at import')\n")
    p = cli("compile", "boom.py", "k", "void()", env=env, cwd=tmp_path)
    assert p.returncode == 1
    assert "RuntimeError: boom at import" in p.stderr and "importing" in p.stderr
    assert "runpy" not in p.stderr and "__main__.py" not in p.stderr, p.stderr  # its frames only


def test_compile_says_when_python_or_kiln_is_missing(tmp_path, env):
    (tmp_path / "tiny.py").write_text(TINY)
    env["KILN_PYTHON"] = str(tmp_path / "no-python")
    p = cli("compile", "tiny.py", "tiny", "void(float64[::1])", env=env, cwd=tmp_path)
    assert p.returncode == 1
    assert f"cannot run {tmp_path / 'no-python'} (KILN_PYTHON)" in p.stderr, p.stderr
    assert "--no-python" in p.stderr
    env["KILN_PYTHON"] = sys.executable
    env.pop("PYTHONPATH")
    p = cli("compile", "tiny.py", "tiny", "void(float64[::1])", env=env, cwd=tmp_path)
    assert p.returncode == 1 and "No module named kiln" in p.stderr
    assert "before running kiln's compile" in p.stderr, p.stderr
    # --no-python needs neither
    p = cli("compile", "tiny.py", "tiny", "void(float64[::1])", "--no-python", env=env,
            cwd=tmp_path)
    assert p.returncode == 0 and "sqrt" in p.stdout, p.stderr


def test_compile_does_not_build_kernels_with_signatures_at_import(tmp_path, env):
    # a signature the kernel cannot compile for: building it at import would fail
    (tmp_path / "sig.py").write_text(
        "import kiln\n\n@kiln.jit('void(int32[::1])')\ndef k(a):\n    a[0] = 1.5j\n\n"
        "@kiln.jit('void(float64[::1])')\ndef ok(a):\n    a[0] = 2.0\n")
    p = cli("compile", "sig.py", "ok", "void(float64[::1])", env=env, cwd=tmp_path)
    assert p.returncode == 0 and "2.0" in p.stdout, p.stderr
    stats = json.loads(cli("cache", "stats", "--json", env=env).stdout)
    assert stats["disk"]["entries"] == 0  # nothing was built


def gone(pid, wait=2.0):
    """Whether the process ended (a zombie not yet reaped by init counts) within `wait` s."""
    deadline = time.time() + wait
    while time.time() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in "ZX":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


def test_ctrl_c_ends_kiln_info_and_its_probe(tmp_path, env):
    # the probes run in a process group of their own (a timeout kills what they started),
    # so the terminal's Ctrl-C does not reach them: kiln info ends them itself
    pidfile = tmp_path / "pid"
    cc = tmp_path / "hang-cc"
    cc.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 1000\n")
    cc.chmod(0o755)
    env["KILN_CC"] = str(cc)
    p = subprocess.Popen([KILN, "info"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        deadline = time.time() + 5
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.time() < deadline:
            time.sleep(0.02)
        assert pidfile.exists(), p.communicate(timeout=30)
        os.killpg(p.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        p.communicate(timeout=5)
        assert p.returncode == -signal.SIGINT
        assert gone(int(pidfile.read_text()))
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
        try:
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
        except (OSError, ValueError):
            pass


def test_paths_and_signatures_that_are_not_utf8(tmp_path, env):
    # Linux paths are bytes: a kernel in a directory named b"d\xffir" runs, and kiln
    # compile reads it; its diagnostics show the byte as \xff.  A signature with such a
    # byte is an invalid signature, not a traceback.
    d = tmp_path / os.fsdecode(b"d\xffir")
    d.mkdir()
    (d / "m.py").write_text("import numpy as np\nimport kiln\n\n@kiln.jit\ndef k(a):\n"
                            "    a[0] = 1\n\n@kiln.jit\ndef bad(a):\n    a[0] = nope\n\n"
                            "if __name__ == '__main__':\n    a = np.zeros(1)\n    k[1, 1](a)\n"
                            "    print('ran', a[0])\n")
    p = subprocess.run([sys.executable, os.fsencode(d / "m.py")], env=env, capture_output=True,
                       text=True, timeout=120)
    assert (p.returncode, p.stdout) == (0, "ran 1.0\n"), p.stderr
    r = cli("compile", os.fsencode(d / "m.py"), "k", "void(float64[::1])", "--types", env=env)
    assert r.returncode == 0 and "kernel k(a: array(float64, 1d, C))" in r.stdout, r.stderr
    r = cli("compile", os.fsencode(d / "m.py"), "bad", "void(float64[::1])", env=env)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "d\\xffir/m.py:10:" in r.stderr and "nope" in r.stderr, r.stderr
    r = cli("compile", os.fsencode(d / "m.py"), "k", b"void(float64\xff[::1])", env=env)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "invalid signature 'void(float64\\xff[::1])': it is not UTF-8 text" in r.stderr
