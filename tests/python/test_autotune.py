"""max-autotune on the CPU target: the search writes only scratch outputs (results equal
default mode's, out= arguments aliasing inputs included), its choice is kept in the cache and
read by a new process without a search, KILN_AUTOTUNE=0 turns it off."""
import json
import os
import subprocess
import sys

import numpy as np

import kiln
from kiln import _autotune, _kiln

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.environ.get("KILN_TEST_PYDIR", os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                       "python"))


@kiln.vectorize
def poly(x, y):
    return x * x * 0.5 + y * 3.0 - 1.0


def step(x, y, out=None):
    return poly(x, y, out=out)


def test_results_equal_default_mode_and_outputs_are_not_corrupted(rng, monkeypatch):
    monkeypatch.setattr(_autotune, "_memo", {})
    f = kiln.compile(step, mode="max-autotune")
    x, y = rng.random(50000), rng.random(50000)
    want = x * x * 0.5 + y * 3.0 - 1.0
    np.testing.assert_allclose(f(x, y), want)
    x2 = x.copy()
    r = f(x2, y, out=x2)                     # out= aliases an input: timed on a scratch
    assert r is x2
    np.testing.assert_allclose(x2, want)
    names = [n for n, v in _autotune.kept() if "poly" in n]
    assert names and all(v.startswith("threads=") for n, v in _autotune.kept() if n in names)


SCRIPT = """
import json, sys, time
import numpy as np
import kiln
from kiln import _autotune
@kiln.vectorize
def poly2(x, y):
    return x * 2.0 + y
searched = []
real = _autotune._search
_autotune._search = lambda *a: searched.append(1) or real(*a)
f = kiln.compile(lambda x, y: poly2(x, y), mode="max-autotune")
x = np.arange(40000.0)
r = f(x, x)
assert np.array_equal(r, 3 * x)
print(json.dumps({"searched": len(searched), "kept": _autotune.kept()}))
"""


def run(tmp_path, **env):
    (tmp_path / "tune.py").write_text(SCRIPT)
    e = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=PYDIR,
             KILN_TARGET="cpu", **env)
    p = subprocess.run([sys.executable, "tune.py"], cwd=tmp_path, env=e, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_the_choice_survives_a_new_process(tmp_path):
    first = run(tmp_path)
    assert first["searched"] == 1 and len(first["kept"]) == 1
    name, value = first["kept"][0]
    assert name.startswith("autotune|vectorize-cpu|") and "poly2" in name and name.endswith("|16")
    second = run(tmp_path)
    assert second["searched"] == 0 and second["kept"] == first["kept"]
    off = run(tmp_path, KILN_AUTOTUNE="0")
    assert off["searched"] == 0
    from test_cli import KILN                  # `kiln cache ls` shows the kept choice
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"))
    text = subprocess.run([KILN, "cache", "ls"], env=env, capture_output=True, text=True,
                          timeout=60).stdout
    assert "max-autotune choices" in text and value in text and name[len("autotune|"):] in text
    js = json.loads(subprocess.run([KILN, "cache", "ls", "--json"], env=env, capture_output=True,
                                   text=True, timeout=60).stdout)
    assert js["autotune"] == [{"name": name[len("autotune|"):], "choice": value}]


def test_kiln_autotune_off_searches_nothing(tmp_path):
    r = run(tmp_path, KILN_AUTOTUNE="0")
    assert r == {"searched": 0, "kept": []}


def test_a_kept_value_kiln_would_not_choose_is_searched_again(monkeypatch):
    monkeypatch.setattr(_autotune, "_memo", {})
    name = _autotune._name("k", "bogus", "cpu", 100)
    _kiln.cache_set_fact(name, "threads=7")
    calls = []
    got = _autotune.choose(("k", 1), "k", lambda: "bogus", "cpu", 100, (64, 256),
                           lambda: calls.append, None)
    assert got in (64, 256) and calls and _kiln.cache_fact(name) == f"threads={got}"


@kiln.jit
def accumulate(h, x):
    i = kiln.grid(1)
    if i < x.size:
        kiln.atomic.add(h, 0, x[i])


def test_forall_is_tuned_on_copies_of_its_arguments(rng, monkeypatch):
    monkeypatch.setattr(_autotune, "_memo", {})
    searched = []
    real = _autotune._search
    monkeypatch.setattr(_autotune, "_search", lambda *a: searched.append(1) or real(*a))
    x = rng.random(20000)
    h = np.zeros(1)
    f = kiln.compile(lambda h, x: accumulate.forall(x.size)(h, x), mode="max-autotune")
    f(h, x)                                # the search added into copies of h, not into h
    np.testing.assert_allclose(h[0], x.sum())
    f(h, x)
    np.testing.assert_allclose(h[0], 2 * x.sum())
    assert searched == [1]
    assert any(n.startswith("autotune|forall-cpu|") and "accumulate" in n
               for n, _ in _autotune.kept())


def test_jit_mode_max_autotune_tunes_forall_outside_a_step(rng, monkeypatch):
    monkeypatch.setattr(_autotune, "_memo", {})

    @kiln.jit(mode="max-autotune")
    def acc2(h, x):
        i = kiln.grid(1)
        if i < x.size:
            kiln.atomic.add(h, 0, x[i])

    x, h = rng.random(5000), np.zeros(1)
    acc2.forall(x.size)(h, x)
    np.testing.assert_allclose(h[0], x.sum())
    assert any("acc2" in n for n, _ in _autotune.kept())
    import pytest
    with pytest.raises(ValueError, match="mode must be one of"):
        kiln.jit(mode="fastest")(lambda a: None)


@kiln.fuse
def fused_chain(x, y):
    return np.exp(x * y + 0.5) * x - y / 3.0


@kiln.fuse
def fused_rows(x, y):
    return np.sum(x * y, axis=-1)


def test_fuse_elementwise_kernels_are_tuned_and_equal_default(rng, monkeypatch):
    monkeypatch.setattr(_autotune, "_memo", {})
    searched = []
    real = _autotune._search
    monkeypatch.setattr(_autotune, "_search", lambda *a: searched.append(1) or real(*a))
    f = kiln.compile(lambda x, y: (fused_chain(x, y), fused_rows(x, y)), mode="max-autotune")
    for shape in ((300, 200), (3000,)):         # two size buckets (a 2-D call runs flat)
        x, y = rng.random(shape), rng.random(shape)
        chain, rows = f(x, y)
        assert np.array_equal(chain, fused_chain(x, y))      # default mode's, bit for bit
        np.testing.assert_allclose(chain, np.exp(x * y + 0.5) * x - y / 3.0, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(rows, np.sum(x * y, axis=-1), rtol=1e-9)
    assert len(searched) == 2           # the two sizes; the row sum is not tuned
    names = [n for n, _ in _autotune.kept() if "fused_chain" in n]
    assert len(names) == 2 and all(n.startswith("autotune|fuse-cpu|") for n in names)
    f(x, y)
    assert len(searched) == 2           # the choice is reused


def test_a_malformed_kiln_autotune_is_warned_about_and_leaves_the_search_on():
    env = dict(os.environ, KILN_AUTOTUNE="junk", PYTHONPATH=PYDIR)
    p = subprocess.run([sys.executable, "-c", "from kiln import _autotune; print(_autotune.on())"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert p.stdout.strip() == "True", p
    assert "KILN_AUTOTUNE must be 0 or 1, not 'junk'" in p.stderr, p.stderr


def test_the_step_s_depth_is_this_thread_s_and_survives_exceptions():
    import threading
    seen = {}

    def inner(tag, fail=False):
        seen[tag] = _autotune.active()
        if fail:
            raise ValueError("in the step")
        t = threading.Thread(target=lambda: seen.__setitem__("other thread", _autotune.active()))
        t.start()
        t.join()
        return tag

    tuned = kiln.compile(inner, mode="max-autotune")
    assert not _autotune.active()
    assert tuned("a") == "a"
    assert tuned(tag="kw") == "kw"          # keywords pass through
    try:
        tuned("b", fail=True)
    except ValueError:
        pass
    assert not _autotune.active()           # an exception leaves the step's depth behind
    assert kiln.compile(lambda: kiln.compile(inner, mode="max-autotune")("c"),
                        mode="max-autotune")() == "c"
    assert not _autotune.active()           # nested steps unwind to zero
    assert seen == {"a": True, "kw": True, "b": True, "c": True, "other thread": False}
    assert kiln.compile(inner)("d") == "d" and seen["d"] is False  # default mode: off
