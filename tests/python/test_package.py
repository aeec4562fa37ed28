"""kiln as a Python package: one version number, every module in the wheel, type stubs
that match the module and that mypy reads, and a wheel that installs into a fresh virtual
environment and runs a kernel from outside the repository (marked slow: .ci/run and
`make test` run it as `make test-slow`)."""

import ast
import glob
import os
import re
import subprocess
import sys
import textwrap

import pytest

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")
BUILD = os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build"))
HERE = os.path.dirname(os.path.abspath(__file__))


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


# ---- the version ---------------------------------------------------------------------------

def test_the_version_is_written_once_and_every_reader_agrees():
    version = read("VERSION").strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+([a-z0-9.+-]*)", version), version
    assert kiln.__version__ == version
    out = subprocess.run([os.path.join(BUILD, "kiln"), "--version"], capture_output=True,
                         text=True, timeout=30)
    assert out.stdout == f"kiln {version}\n"
    # nowhere else: meson reads the file, pyproject's version is dynamic, kiln.h takes it
    # from the build
    assert "version: files('VERSION')" in read("meson.build")
    assert 'dynamic = ["version"]' in read("pyproject.toml")
    assert not re.search(r"^version\s*=", read("pyproject.toml"), re.M)
    assert not re.search(r'#define KILN_VERSION "', read("include", "kiln.h"))


# ---- what the wheel holds ------------------------------------------------------------------

def test_meson_installs_every_file_of_the_package():
    text = read("meson.build")
    block = text[text.index("py.install_sources("):]
    block = block[:block.index("subdir: 'kiln')")]
    listed = set(re.findall(r"'python/kiln/([^']+)'", block))
    here = {f for f in os.listdir(os.path.join(ROOT, "python", "kiln"))
            if f.endswith((".py", ".pyi")) or f == "py.typed"}
    assert here - listed == set(), "add these to py.install_sources in meson.build"
    assert listed - here == set(), "meson.build installs files that do not exist"
    # and every subpackage (kiln.kernels, kiln.misc, ...), each in its own block, which the
    # sanitizer runs' package copies too (Makefile)
    pkg = os.path.join(ROOT, "python", "kiln")
    for sub in sorted(os.listdir(pkg)):
        if sub.startswith(("_", ".")) or not os.path.isdir(os.path.join(pkg, sub)):
            continue
        files = {f for f in os.listdir(os.path.join(pkg, sub)) if f.endswith((".py", ".pyi"))}
        installed = set(re.findall(rf"'python/kiln/{sub}/([^']+)'", text))
        assert files and files == installed and f"subdir: 'kiln/{sub}'" in text, (sub, files, installed)
        assert f"python/kiln/{sub}" in read("Makefile"), f"the ASan package copy misses kiln/{sub}"


def test_license_and_metadata():
    assert "MIT License" in read("LICENSE")
    meta = read("pyproject.toml")
    for needed in ('license = "MIT"', "[project.urls]", "classifiers", "Typing :: Typed",
                   'dependencies = ["numpy', 'report = ["plotly'):
        assert needed in meta, needed


# ---- type stubs ----------------------------------------------------------------------------

mypy = pytest.importorskip("mypy", reason="mypy is not installed (make's venv installs it)")


def _mypy_env():
    """stubtest imports every public module of kiln: with the package of the plain build.
    The sanitizer job's package (KILN_TEST_PYDIR) holds an extension linked to libasan,
    which, loaded without the job's LD_PRELOAD, breaks NumPy's C++ start-up when a module
    (kiln.random) imports NumPy after kiln; its .py and .pyi files are copies of these."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "MYPYPATH")}
    plain = os.path.join(ROOT, "python")
    if not glob.glob(os.path.join(plain, "kiln", "_kiln*.so")):
        pytest.skip("the plain build's extension is not built (make build): stubtest needs it")
    env["PYTHONPATH"] = plain
    return env


def test_the_stubs_match_the_module_at_run_time(tmp_path):
    """mypy's stubtest: every public name of kiln has a stub, and each stub's parameters
    match the function's (tests/python/stubtest-allowlist.txt lists what differs on
    purpose)."""
    cfg = tmp_path / "mypy.ini"
    # only the stubs are checked; the package's untyped modules are read, not judged
    cfg.write_text(f"[mypy]\nignore_missing_imports = True\ncache_dir = {tmp_path / 'cache'}\n"
                   "[mypy-kiln.*]\nignore_errors = True\n")
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "kiln", "--mypy-config-file",
                        str(cfg), "--allowlist", os.path.join(HERE, "stubtest-allowlist.txt")],
                       capture_output=True, text=True, cwd=tmp_path, env=_mypy_env(), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


USER_CODE = '''
import numpy as np
import kiln

@kiln.jit
def saxpy(out, x, y, a):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]

@kiln.jit("void(float32[:, ::1])", fastmath=True)
def tile(a):
    x, y = kiln.grid(2)
    s = kiln.shared.array((16, 16), kiln.float32)
    s[kiln.threadIdx.x, kiln.threadIdx.y] = a[x, y]
    kiln.syncthreads()
    kiln.atomic.add(a, (0, 0), s[0, 0])

@kiln.vectorize(["float32(float32, float32)"])
def add(a, b):
    return a + b

@kiln.reduce
def total(a, b):
    return a + b

x = np.ones(16, np.float32)
saxpy[1, 16](x, x, x, np.float32(2))
d: kiln.DeviceArray = kiln.device_array(16, np.float32)
n: int = d.size
sig: kiln.Signature = kiln.void(kiln.float32[::1])
s: str = saxpy.inspect_source()
hits: dict = kiln.cache.stats()
where: str | None = kiln.cache.path()
v: str = kiln.__version__
ok: bool = kiln.is_available()
'''


def test_mypy_reads_the_stubs_of_an_installed_kiln(tmp_path):
    """A user's program type-checks against the stubs, and mistakes in it are found: the
    package is typed (py.typed) and the stubs are what mypy reads."""
    good = tmp_path / "good.py"
    good.write_text(USER_CODE)
    bad = tmp_path / "bad.py"
    bad.write_text(textwrap.dedent('''
        import kiln
        k = kiln.jit(target="gpu")
        n: str = kiln.device_array(4).size
        kiln.cache.prune("all")
        i: int = kiln.grid(2)
    '''))
    run = [sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir",
           str(tmp_path / "cache"), "--python-executable", sys.executable]
    r = subprocess.run(run + [str(good)], capture_output=True, text=True, env=_mypy_env(),
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(run + [str(bad)], capture_output=True, text=True, env=_mypy_env(),
                       cwd=tmp_path, timeout=120)
    lines = [ln for ln in r.stdout.splitlines() if ": error:" in ln]
    assert [ln.split(":")[1] for ln in lines] == ["3", "4", "5", "6"], r.stdout


def test_the_stubs_are_valid_python_and_document_themselves():
    for name in ("__init__.pyi", "cache.pyi"):
        tree = ast.parse(read("python", "kiln", name))
        assert tree.body


# ---- a wheel in a fresh environment ----------------------------------------------------------

KERNEL_FILE = '''
import numpy as np
import kiln

SCALE = 3.0

@kiln.jit(device=True)
def twice(v):
    return 2.0 * v

@kiln.jit
def scale(out, x):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = SCALE * twice(x[i])

if __name__ == "__main__":
    x = np.arange(1000, dtype=np.float64)
    out = np.empty_like(x)
    scale[4, 256](out, x)
    assert np.array_equal(out, 6.0 * x), out[:4]
    print("ok", kiln.__version__, kiln.__file__)
'''


@pytest.mark.slow
def test_a_wheel_installs_into_a_fresh_venv_and_runs_a_kernel_outside_the_repository(tmp_path):
    """`pip wheel . --no-deps` with the build tools of this environment, installed (with
    NumPy, its dependency) into a new virtual environment; a kernel file in a directory
    of its own runs with that environment's python, and its `kiln` command works."""
    wheels = tmp_path / "wheels"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_PRELOAD") and not k.startswith("KILN_")}
    env["KILN_CACHE_DIR"] = str(tmp_path / "cache")
    # meson-python runs the meson and ninja of this environment, beside its python
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps",
                        "--no-build-isolation", "-w", str(wheels), "-q"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    [whl] = [f for f in os.listdir(wheels) if f.endswith(".whl")]
    assert whl.startswith(f"kiln-{kiln.__version__}-")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = str(venv / "bin" / "python")
    r = subprocess.run([py, "-m", "pip", "install", "-q", str(wheels / whl)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "mine.py").write_text(KERNEL_FILE)
    r = subprocess.run([py, "mine.py"], capture_output=True, text=True, cwd=work, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith(f"ok {kiln.__version__} {venv}"), r.stdout
    kiln_cmd = str(venv / "bin" / "kiln")
    r = subprocess.run([kiln_cmd, "--version"], capture_output=True, text=True, env=env,
                       timeout=30)
    assert r.stdout == f"kiln {kiln.__version__}\n"
    # `kiln compile` finds the python3 beside it, which imports the installed kiln
    r = subprocess.run([kiln_cmd, "compile", "mine.py", "scale", "void(float64[::1], float64[::1])"],
                       capture_output=True, text=True, cwd=work, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "twice" in r.stdout
    # the package is typed, and its stubs went in
    r = subprocess.run([py, "-c", "import kiln, os; d = os.path.dirname(kiln.__file__); "
                        "print(sorted(f for f in os.listdir(d) if f.endswith(('.pyi', '.typed'))))"],
                       capture_output=True, text=True, cwd=work, env=env, timeout=60)
    assert r.stdout.strip() == "['__init__.pyi', 'cache.pyi', 'py.typed', 'types.pyi']", r.stdout + r.stderr
