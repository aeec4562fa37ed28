"""What kiln shows of itself: kiln.metrics(), kiln.profile() and KILN_TRACE, KILN_LOG,
KILN_DUMP, KILN_NVTX, the disk cache's per-entry hits and compile times (`kiln cache
stats|ls`, `kiln metrics`), and the GPU side of all of it against tests/fake_cuda.

Each scenario runs in a child process with a cache directory of its own, so the
counts are exactly those of the launches and compiles it makes."""

import json
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")
BUILD = os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build"))
FAKE = os.path.join(BUILD, "libkiln-fake-cuda.so")

KERNELS = '''
import kiln

@kiln.jit
def add(a, b, c):
    i = kiln.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
'''

PRELUDE = '''
import json, os, sys, warnings
import numpy as np
import kiln
from kernels import add
'''


def env_for(cache, **extra):
    env = dict(os.environ)
    for k in ("KILN_REMOTE_CACHE", "KILN_CHECK_CUDA", "KILN_LOG", "KILN_TRACE", "KILN_DUMP",
              "KILN_NVTX", "NVTX_INJECTION64_PATH", "KILN_CUDA_DRIVER"):
        env.pop(k, None)
    env.update(KILN_CACHE_DIR=str(cache), PYTHONPATH=PYDIR, KILN_TARGET="cpu", KILN_TIERS="0")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(tmp_path, body, cache=None, ok=True, **extra):
    """Runs PRELUDE + body in a child in tmp_path; (stdout, stderr)."""
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "script.py").write_text(PRELUDE + textwrap.dedent(body))
    p = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120, env=env_for(cache or tmp_path / "cache", **extra))
    if ok:
        assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout, p.stderr


def last_json(out):
    return json.loads(out.strip().splitlines()[-1])


def cli(cache, *args):
    p = subprocess.run([os.path.join(BUILD, "kiln"), *args], capture_output=True, text=True,
                       env=env_for(cache), timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


# ---- metrics ------------------------------------------------------------------------------

LAUNCH_TWO = '''
a, b, c = np.ones(100), np.ones(100), np.zeros(100)
for _ in range(10):
    add[1, 128](a, b, c)
f = a.astype(np.float32)
for _ in range(5):
    add[1, 128](f, b, c)
assert (c == 2).all()
print(json.dumps(kiln.metrics()))
'''


def by_spec(m):
    return {k["spec"]: k for k in m["kernels"]}


def test_metrics_count_compiles_launches_and_hits_across_processes(tmp_path):
    cache = tmp_path / "cache"
    m = last_json(run(tmp_path, LAUNCH_TWO, cache)[0])
    assert m["compiles"] == 2 and m["builds"] == 2
    assert m["launches"] == 15
    c = m["cache"]
    assert (c["lookups"], c["hits"], c["misses"], c["hit_rate"]) == (2, 0, 2, 0.0)
    assert c["memory"] == {"hits": 0, "misses": 2} and c["disk"] == {"hits": 0, "misses": 2}
    for stage in ("front", "sema", "emit", "cc", "load"):
        assert m["compile_ms"][stage] > 0, stage
    assert m["compile_ms"]["nvrtc"] == 0
    ks = by_spec(m)
    f64 = ks["(float64[::1], float64[::1], float64[::1])"]
    f32 = ks["(float32[::1], float64[::1], float64[::1])"]
    assert (f64["launches"], f32["launches"]) == (10, 5)
    assert f64["kernel"] == "kernels.add" and f64["target"] == "cpu"
    assert f64["loc"].endswith("kernels.py:4") and f64["compiles"] == 1
    assert f64["cache_tier"] is None and f64["compile_ms"]["cc"] > 0
    assert f64["h2d_bytes"] == 0 and f64["d2h_bytes"] == 0

    # a second process finds both in the disk tier: no build
    m2 = last_json(run(tmp_path, LAUNCH_TWO, cache)[0])
    assert m2["builds"] == 0 and m2["compile_ms"]["cc"] == 0
    assert m2["cache"]["disk"] == {"hits": 2, "misses": 0} and m2["cache"]["hit_rate"] == 1.0
    assert {k["cache_tier"] for k in m2["kernels"]} == {"disk"}

    # the disk tier's counts over both processes: 2 compiles, 2 hits
    st = json.loads(cli(cache, "cache", "stats", "--json"))["disk"]
    assert (st["compiles"], st["hits"], st["hit_rate"]) == (2, 2, 0.5)
    assert "hit rate 50.0%" in cli(cache, "cache", "stats")
    ls = json.loads(cli(cache, "cache", "ls", "--json", "--sort", "hits"))["entries"]
    assert [e["hits"] for e in ls] == [1, 1] and all(e["compile_ms"] > 0 for e in ls)
    met = json.loads(cli(cache, "metrics", "--json"))
    assert met["hits"] == 2 and met["compiles"] == 2 and len(met["kernels"]) == 2
    es = last_json(run(tmp_path, "print(json.dumps(kiln.cache.entries()))", cache)[0])
    assert [e["hits"] for e in es] == [1, 1] and all(e["compile_ms"] > 0 for e in es)


def test_cache_ls_sorts_by_hits_and_compile_time(tmp_path):
    cache = tmp_path / "cache"
    run(tmp_path, LAUNCH_TWO, cache)
    # a third process uses only the float64 one: it has more hits
    run(tmp_path, "add[1, 128](np.ones(3), np.ones(3), np.zeros(3))", cache)
    ls = json.loads(cli(cache, "cache", "ls", "--json", "--sort", "hits"))["entries"]
    assert [e["hits"] for e in ls] == [1, 0] and "float64[::1], float64" in ls[0]["name"]
    ms = [e["compile_ms"] for e in
          json.loads(cli(cache, "cache", "ls", "--json", "--sort", "compile"))["entries"]]
    assert ms == sorted(ms, reverse=True)
    assert "hits" in cli(cache, "cache", "ls", "--sort", "last").splitlines()[0]
    p = subprocess.run([os.path.join(BUILD, "kiln"), "cache", "ls", "--sort", "speed"],
                       capture_output=True, text=True, env=env_for(cache))
    assert p.returncode == 2 and "hits or compile" in p.stderr


def test_metrics_reset_and_sampled_host_cost(tmp_path):
    m = last_json(run(tmp_path, '''
        a, b, c = np.ones(10), np.ones(10), np.zeros(10)
        add[1, 16](a, b, c)
        before = kiln.metrics(reset=True)
        after = kiln.metrics()
        for _ in range(200):
            add[1, 16](a, b, c)
        print(json.dumps([before, after, kiln.metrics()]))
    ''')[0])
    before, after, later = m
    assert before["launches"] == 1 and before["compiles"] == 1
    assert after["launches"] == 0 and after["compiles"] == 0 and after["builds"] == 0
    assert after["compile_ms"]["total"] == 0 and after["cache"]["lookups"] == 0
    assert after["kernels"][0]["launches"] == 0 and after["kernels"][0]["compiles"] == 0
    # one launch in 64 is timed: 200 launches give 3 samples
    k = later["kernels"][0]
    assert k["launches"] == 200 and k["timed_launches"] == 3
    assert 0 < k["host_us"] < 1000 and k["run_us"] > 0


def test_tiered_compiles_count_one_look_up_and_name_the_optimised_build(tmp_path):
    # huntF 03, 11: the optimised build's look-up on the worker counted a second miss, and
    # its log lines named no kernel
    body = '''
        from kiln import _kiln
        add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
        assert _kiln.tier_wait(60.0)    # the optimised build has ended
        assert _kiln.tier_stats()["swaps"] == 1
        print(json.dumps(kiln.metrics()["cache"]))
    '''
    env = dict(KILN_TIERS="1", KILN_LOG="compile,cache")
    out, err = run(tmp_path, body, **env)
    c = last_json(out)
    assert c["lookups"] == 1 and c["misses"] == 1, c
    lines = [ln for ln in err.splitlines() if ln.startswith("kiln ")]
    assert lines and all("add(" in ln for ln in lines), lines
    assert any("(optimised build)" in ln for ln in lines), lines


def test_memory_tier_hit_for_the_same_kernel_text(tmp_path):
    (tmp_path / "kernels2.py").write_text(KERNELS)
    m = last_json(run(tmp_path, '''
        import kernels2
        a, b, c = np.ones(10), np.ones(10), np.zeros(10)
        add[1, 16](a, b, c)
        kernels2.add[1, 16](a, b, c)
        print(json.dumps(kiln.metrics()))
    ''')[0])
    assert m["cache"]["memory"] == {"hits": 1, "misses": 1} and m["builds"] == 1
    assert sorted(str(k["cache_tier"]) for k in m["kernels"]) == ["None", "memory"]


def test_metrics_exact_under_threads(tmp_path):
    m = last_json(run(tmp_path, '''
        import threading
        a, b, c = np.ones(10), np.ones(10), np.zeros(10)
        add[1, 16](a, b, c)
        kiln.metrics(reset=True)
        def work():
            for _ in range(500):
                add[1, 16](a, b, c)
        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts: t.start()
        for t in ts: t.join()
        print(json.dumps(kiln.metrics()))
    ''')[0])
    assert m["launches"] == 2000 and m["kernels"][0]["launches"] == 2000


def test_old_kiln_db_keeps_working(tmp_path):
    """A kiln.db made before the per-entry columns gets them (0) at open; rows an older
    kiln writes afterwards (without the new columns) read as 0 hits."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    db = sqlite3.connect(cache / "kiln.db")
    db.executescript("""
        PRAGMA journal_mode=WAL;
        CREATE TABLE artifacts(key BLOB PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL,
          target TEXT NOT NULL, size INTEGER NOT NULL, checksum BLOB NOT NULL,
          created INTEGER NOT NULL, last_used INTEGER NOT NULL, blob BLOB NOT NULL);
        CREATE INDEX artifacts_lru ON artifacts(last_used);
        CREATE TABLE pending(key BLOB PRIMARY KEY, owner TEXT NOT NULL, expires INTEGER NOT NULL);
        CREATE TABLE counters(name TEXT PRIMARY KEY, value REAL NOT NULL);
        CREATE TABLE facts(name TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO counters VALUES('compiles', 7);
    """)
    db.commit()
    db.close()
    run(tmp_path, LAUNCH_TWO, cache)
    m = last_json(run(tmp_path, LAUNCH_TWO, cache)[0])
    assert m["cache"]["disk"]["hits"] == 2  # the entries written after the migration
    cols = [r[1] for r in sqlite3.connect(cache / "kiln.db").execute(
        "PRAGMA table_info(artifacts)")]
    assert cols[-2:] == ["hits", "compile_ms"]
    st = json.loads(cli(cache, "cache", "stats", "--json"))["disk"]
    assert st["compiles"] == 9 and st["hits"] == 2
    # an older kiln's INSERT names only the old columns
    db = sqlite3.connect(cache / "kiln.db")
    db.execute("INSERT INTO artifacts(key, kind, name, target, size, checksum, created, "
               "last_used, blob) VALUES(x'00112233445566778899aabbccddeeff', 'so', 'old', "
               "'cpu:x', 1, x'00', 0, 0, x'00')")
    db.commit()
    db.close()
    old = [e for e in json.loads(cli(cache, "cache", "ls", "--json"))["entries"]
           if e["name"] == "old"]
    assert old and old[0]["hits"] == 0 and old[0]["compile_ms"] == 0


# ---- traces ---------------------------------------------------------------------------------

def check_schema(doc):
    """The shape docs/observability.md promises (the report helper reads it)."""
    assert doc["displayTimeUnit"] == "ms"
    assert doc["otherData"]["kiln_version"] == doc["otherData"]["kiln_version"].strip()
    assert isinstance(doc["otherData"]["devices"], list)
    for e in doc["traceEvents"]:
        assert e["ph"] in ("X", "M"), e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        if e["ph"] == "X":
            assert e["cat"] in ("compile", "cache", "launch", "copy", "sync"), e
            assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0
            assert isinstance(e["name"], str) and isinstance(e["args"], dict)


def test_profile_writes_a_chrome_trace_with_compiles_cache_and_launches(tmp_path):
    out, _ = run(tmp_path, '''
        a, b, c = np.ones(10), np.ones(10), np.zeros(10)
        add[1, 16](a, b, c)  # before the profile: not in it
        with kiln.profile("trace.json") as p:
            add[1, 16](a.astype(np.float32), b, c)
            add[1, 16](a, b, c)
        add[1, 16](a, b, c)  # after: not in it either
        print(os.getpid())
    ''')
    doc = json.loads((tmp_path / "trace.json").read_text())
    check_schema(doc)
    pid = int(out.split()[-1])
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in xs} == {pid}
    stages = [e["args"]["stage"] for e in xs if e["cat"] == "compile"]
    assert stages == ["front", "sema", "emit", "cc", "load"]
    (cache_ev,) = [e for e in xs if e["cat"] == "cache"]
    assert cache_ev["args"]["tier"] == "none" and cache_ev["args"]["hit"] is False
    launches = [e for e in xs if e["cat"] == "launch"]
    assert len(launches) == 2 and all(e["name"] == "add" for e in launches)
    specs = [e["args"]["spec"] for e in launches]
    assert specs == ["(float32[::1], float64[::1], float64[::1])",
                     "(float64[::1], float64[::1], float64[::1])"]
    for e in launches + [cache_ev]:
        assert e["args"]["kernel"] == "kernels.add" and e["args"]["loc"].endswith("kernels.py:4")
    assert launches[1]["args"]["bytes"] == 240 and launches[1]["args"]["run_us"] >= 0
    # the compile ran inside the first launch: its events nest in it
    first = launches[0]
    for e in xs:
        if e["cat"] in ("compile", "cache"):
            assert first["ts"] <= e["ts"] and e["ts"] + e["dur"] <= first["ts"] + first["dur"] + 1
    names = {e["name"] for e in doc["traceEvents"] if e["ph"] == "M"}
    assert names == {"process_name", "thread_name"}


def test_profile_tracks_threads_and_nests(tmp_path):
    run(tmp_path, '''
        import threading
        a, b, c = np.ones(10), np.ones(10), np.zeros(10)
        add[1, 16](a, b, c)
        with kiln.profile("outer.json"):
            with kiln.profile() as inner:
                t = threading.Thread(target=lambda: add[1, 16](a, b, c))
                t.start(); t.join()
            add[1, 16](a, b, c)
        assert len([e for e in inner.trace["traceEvents"] if e.get("cat") == "launch"]) == 1
    ''')
    doc = json.loads((tmp_path / "outer.json").read_text())
    launches = [e for e in doc["traceEvents"] if e.get("cat") == "launch"]
    assert len(launches) == 2 and len({e["tid"] for e in launches}) == 2
    tids = {e["tid"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {e["tid"] for e in launches} <= tids


def test_kiln_trace_writes_at_exit_and_a_forked_child_writes_its_own(tmp_path):
    out, _ = run(tmp_path, '''
        a, b, c = np.ones(10), np.ones(10), np.zeros(10)
        add[1, 16](a, b, c)
        pid = os.fork()
        if pid == 0:
            add[1, 16](a, b, c)
            add[1, 16](a, b, c)
            sys.exit(0)  # a normal exit: the child writes trace.PID.json
        os.waitpid(pid, 0)
        add[1, 16](a, b, c)
        print(os.getpid(), pid)
    ''', KILN_TRACE="trace.json")
    parent, child = map(int, out.split())
    doc = json.loads((tmp_path / "trace.json").read_text())
    check_schema(doc)
    launches = [e for e in doc["traceEvents"] if e.get("cat") == "launch"]
    assert len(launches) == 2 and {e["pid"] for e in launches} == {parent}
    cdoc = json.loads((tmp_path / f"trace.{child}.json").read_text())
    clauncher = [e for e in cdoc["traceEvents"] if e.get("cat") == "launch"]
    assert len(clauncher) == 2 and {e["pid"] for e in clauncher} == {child}


def test_kiln_trace_bad_path_warns_and_runs(tmp_path):
    _, err = run(tmp_path, "add[1, 16](np.ones(3), np.ones(3), np.zeros(3))",
                 KILN_TRACE=str(tmp_path / "no" / "such" / "dir" / "t.json"))
    assert "KILN_TRACE=" in err and "no trace is recorded" in err
    _, err = run(tmp_path, "add[1, 16](np.ones(3), np.ones(3), np.zeros(3))",
                 KILN_TRACE=str(tmp_path))
    assert "cannot write a file there" in err


def test_a_trace_never_replaces_what_is_not_a_regular_file(tmp_path):
    # huntF 01: the trace was renamed onto the path, so a FIFO (or, as root, /dev/null)
    # became a regular file; a symbolic link's file is written, the link kept
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _, err = run(tmp_path, "add[1, 16](np.ones(3), np.ones(3), np.zeros(3))", KILN_TRACE=str(fifo))
    assert "not a regular file" in err and fifo.is_fifo()
    (tmp_path / "real.json").write_text("old")
    os.symlink(tmp_path / "real.json", tmp_path / "link.json")
    run(tmp_path, "add[1, 16](np.ones(3), np.ones(3), np.zeros(3))",
        KILN_TRACE=str(tmp_path / "link.json"))
    assert (tmp_path / "link.json").is_symlink()
    check_schema(json.loads((tmp_path / "real.json").read_text()))


def test_trace_paths_relative_bytes_and_the_event_limit(tmp_path):
    # huntF 02, 07, 06: a relative KILN_TRACE stays where it was checked after a chdir;
    # profile() takes a bytes path (not UTF-8 too); every recorder keeps at most
    # TRACE_MAX_EVENTS events, however often profiles drain the buffer
    (tmp_path / "elsewhere").mkdir()
    out, _ = run(tmp_path, '''
        from kiln import _obs
        add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
        os.chdir("elsewhere")
        with kiln.profile(os.fsencode(os.path.join(os.getcwd(), "b\\udcff.json"))):
            add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
        _obs.TRACE_MAX_EVENTS = 40
        with kiln.profile() as p:
            for _ in range(30):
                with kiln.profile():
                    add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
        print(json.dumps([len(p.trace["traceEvents"]), p.trace["otherData"]["dropped_events"]]))
    ''', KILN_TRACE="rel.json")
    kept, dropped = last_json(out)
    assert kept == 40 and dropped > 0
    assert (tmp_path / "rel.json").exists() and not (tmp_path / "elsewhere" / "rel.json").exists()
    assert os.path.exists(os.path.join(os.fsencode(tmp_path / "elsewhere"), b"b\xff.json"))


def test_profiles_on_threads_each_keep_their_launches(tmp_path):
    # huntF 05: a closing profile turned tracing off while another thread's was opening
    out, _ = run(tmp_path, '''
        import threading
        a, b, c = np.ones(3), np.ones(3), np.zeros(3)
        add[1, 16](a, b, c)
        missed = []
        def work():
            for _ in range(300):
                with kiln.profile() as p:
                    add[1, 16](a, b, c)
                if not any(e.get("cat") == "launch" for e in p.trace["traceEvents"]):
                    missed.append(1)
        ts = [threading.Thread(target=work) for _ in range(6)]
        for t in ts: t.start()
        for t in ts: t.join()
        print(len(missed))
    ''')
    assert out.strip().splitlines()[-1] == "0"


# ---- KILN_LOG ------------------------------------------------------------------------------

def test_kiln_log_lines_and_recompile_reasons(tmp_path):
    _, err = run(tmp_path, '''
        a, b, c = np.ones(10), np.ones(10), np.zeros(10)
        add[1, 16](a, b, c)
        add[1, 16](a.astype(np.float32), b, c)
        add[1, 16](np.ones((2, 5))[:, 0], b, c)
    ''', KILN_LOG="compile,cache,launch,recompile")
    lines = err.splitlines()
    comp = [l for l in lines if l.startswith("kiln compile: ")]
    assert len(comp) == 3 and all("kernels.add(" in l and " cc " in l for l in comp), comp
    assert len([l for l in lines if l.startswith("kiln cache: ")]) == 3
    assert len([l for l in lines if l.startswith("kiln launch: ")]) == 3
    rec = [l for l in lines if l.startswith("kiln recompile: ")]
    assert len(rec) == 2, lines
    assert "argument 'a' dtype changed: float64[::1] -> float32[::1]" in rec[0]
    assert "argument 'a' layout changed: float64[::1] -> float64[:]" in rec[1]


def test_kiln_log_one_name_and_unknown_names(tmp_path):
    _, err = run(tmp_path, "add[1, 16](np.ones(3), np.ones(3), np.zeros(3))",
                 KILN_LOG="cache, bogus,launchs")
    assert "kiln cache: " in err and "kiln launch: " not in err and "kiln compile" not in err
    assert "unknown names 'bogus', 'launchs' ignored" in err
    assert "compile, cache, launch, recompile and all" in err


# ---- KILN_DUMP -------------------------------------------------------------------------------

def test_kiln_dump_writes_sources_under_readable_names(tmp_path):
    run(tmp_path, '''
        add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
        add[1, 16](np.ones(3, np.float32), np.ones(3), np.zeros(3))
        open("src.txt", "w").write(add.inspect_source())
    ''', KILN_DUMP="dump", KILN_TIERS="1")  # tiers on: tier 0's vector source too
    files = sorted(os.listdir(tmp_path / "dump"))
    # each specialisation's source, and the text tier 0 compiles with its vector entry
    main = [f for f in files if f.endswith(".cpu.c")]
    assert len(main) == 2 and all(f.startswith("kernels.add.") for f in main), files
    assert sorted(f.replace(".cpu-tier0.c", ".cpu.c") for f in files if f not in main) == main
    texts = [(tmp_path / "dump" / f).read_text() for f in main]
    assert (tmp_path / "src.txt").read_text() in texts
    for f in main:
        t0 = (tmp_path / "dump" / f.replace(".cpu.c", ".cpu-tier0.c")).read_text()
        assert t0.startswith((tmp_path / "dump" / f).read_text()) and "kiln_ventry" in t0
    # the same specialisations in another run: the same names, so `diff -r` pairs them
    run(tmp_path, '''
        add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
        add[1, 16](np.ones(3, np.float32), np.ones(3), np.zeros(3))
    ''', KILN_DUMP="dump2", KILN_TIERS="1")
    assert sorted(os.listdir(tmp_path / "dump2")) == files


def test_kiln_dump_numbers_a_factorys_kernels(tmp_path):
    # huntF 04: kernels a factory makes (one qualname, one key) overwrote one file
    out, _ = run(tmp_path, '''
        def make(n):
            @kiln.jit
            def k(a):
                i = kiln.grid(1)
                if i < a.size:
                    a[i] = n
            return k
        for n in (7, 8, 9, 7):
            make(n)[1, 4](np.zeros(2))
        print(sorted(f for f in os.listdir("dump") if f.endswith(".cpu.c")))
    ''', KILN_DUMP=str(tmp_path / "dump"))
    names = eval(out.strip().splitlines()[-1])
    # three sources (the second 7 is the first's again): three files, two numbered
    assert len(names) == 3 and sum("-" in n.split(".")[-3] for n in names) == 2, names


def test_kiln_dump_unwritable_warns_once(tmp_path):
    (tmp_path / "afile").write_text("x")
    out, err = run(tmp_path, '''
        add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
        add[1, 16](np.ones(3, np.float32), np.ones(3), np.zeros(3))
        print("ran")
    ''', KILN_DUMP=str(tmp_path / "afile" / "sub"))
    assert out.strip() == "ran"
    assert err.count("KILN_DUMP=") == 1 and "kernels are not dumped" in err
    _, err = run(tmp_path, "add[1, 16](np.ones(3), np.ones(3), np.zeros(3))",
                 KILN_DUMP=str(tmp_path / "afile"))
    assert "(it is not a directory)" in err  # huntF 08: it said "(File exists)"


def test_kiln_dump_leaves_no_cut_file_when_the_disk_fills(tmp_path):
    """A write that fails partway (here the file size limit, as a full disk would) leaves no
    empty or cut dump behind (hunt23 6); tier 0 alone, which writes no file of its own."""
    out, err = run(tmp_path, '''
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
        add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
        print("ran")
    ''', KILN_DUMP="dump", KILN_TIERS="tcc")
    assert out.strip() == "ran"
    assert err.count("KILN_DUMP=") == 1 and "kernels are not dumped" in err, err
    assert os.listdir(tmp_path / "dump") == []


# ---- NVTX ------------------------------------------------------------------------------------

FAKE_NVTX = r'''
#include <stdio.h>
#include <stdlib.h>
static FILE *log_file(void) {
    static FILE *f;
    if (!f) f = fopen(getenv("FAKE_NVTX_LOG"), "w");
    return f;
}
int nvtxRangePushA(const char *m) { fprintf(log_file(), "push %s\n", m); fflush(log_file()); return 0; }
int nvtxRangePop(void) { fprintf(log_file(), "pop\n"); fflush(log_file()); return 0; }
'''


def test_nvtx_ranges_around_compiles_and_launches(tmp_path):
    src = tmp_path / "fake_nvtx.c"
    src.write_text(FAKE_NVTX)
    lib = tmp_path / "libfake_nvtx.so"
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", str(lib), str(src)],
                   check=True)
    log = tmp_path / "nvtx.log"
    run(tmp_path, '''
        for _ in range(3):
            add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
    ''', KILN_NVTX="1", KILN_NVTX_LIB=str(lib), FAKE_NVTX_LOG=str(log))
    lines = log.read_text().splitlines()
    assert lines.count("push kiln launch add") == 3 and lines.count("push kiln compile add") == 1
    assert lines.count("pop") == 4


# A tool's side of NVTX 3 (what Nsight Systems loads through NVTX_INJECTION64_PATH): the
# library calls InitializeInjectionNvtx2 with its export-table getter, and the tool puts its
# handlers into the core module's function table.  The numbers are NVTX 3's ABI
# (nvtx3/nvtxDetail/nvtxTypes.h): export table 1 is the callbacks table, module 1 the core,
# slots 9 and 11 nvtxRangePushA and nvtxRangePop.
FAKE_NVTX_TOOL = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef void (*fn)(void);
typedef struct { size_t size; int (*module_table)(int module, fn ***table, unsigned *n); } callbacks;
static FILE *log_file(void) {
    static FILE *f;
    if (!f) f = fopen(getenv("FAKE_NVTX_LOG"), "w");
    return f;
}
static int push(const char *m) { fprintf(log_file(), "push %s\n", m); fflush(log_file()); return 0; }
static int pop(void) { fprintf(log_file(), "pop\n"); fflush(log_file()); return 0; }
int InitializeInjectionNvtx2(const void *(*get_table)(uint32_t)) {
    const callbacks *cb = get_table(1);
    fn **table = NULL;
    unsigned n = 0;
    if (!cb || !cb->module_table(1, &table, &n) || n < 11) return 0;
    *table[9] = (fn)push;
    *table[11] = (fn)pop;
    return 1;
}
"""


def nvtx3_interop():
    import ctypes.util
    import glob
    for pat in ("/usr/local/cuda/lib64/libnvtx3interop.so.1", "/usr/local/cuda*/lib64/libnvtx3interop.so.1"):
        hits = sorted(glob.glob(pat))
        if hits:
            return hits[0]
    return ctypes.util.find_library("nvtx3interop")


def test_nvtx_through_cuda13s_interop_library_reaches_the_tool(tmp_path):
    """CUDA 12.9+/13 ship no libnvToolsExt: kiln loads libnvtx3interop by itself (no
    KILN_NVTX_LIB), and the ranges reach the tool NVTX_INJECTION64_PATH names, as under
    Nsight Systems."""
    lib = nvtx3_interop()
    if lib is None:
        pytest.skip("the CUDA toolkit's libnvtx3interop is not on this machine")
    src = tmp_path / "fake_tool.c"
    src.write_text(FAKE_NVTX_TOOL)
    tool = tmp_path / "libfake_tool.so"
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", str(tool), str(src)],
                   check=True)
    log = tmp_path / "nvtx.log"
    env = dict(NVTX_INJECTION64_PATH=str(tool), FAKE_NVTX_LOG=str(log))
    if not lib.startswith("/usr/local/cuda/lib64/"):  # elsewhere: found through the loader's path
        env["LD_LIBRARY_PATH"] = os.path.dirname(lib)
    out, err = run(tmp_path, """
        for _ in range(2):
            add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
        print(kiln._kiln.obs_nvtx()[0])
    """, **env)
    assert out.split()[-1] == "True", err
    lines = log.read_text().splitlines()
    assert lines.count("push kiln launch add") == 2 and lines.count("push kiln compile add") == 1
    assert lines.count("pop") == 3


def test_nvtx_missing_library_warns_and_runs(tmp_path):
    out, err = run(tmp_path, '''
        add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
        print(kiln._kiln.obs_nvtx()[0], kiln._kiln.obs_flags() & 64)
    ''', KILN_NVTX="1", KILN_NVTX_LIB=str(tmp_path / "nope.so"))
    assert out.split() == ["False", "0"]
    assert "KILN_NVTX=1, but no NVTX library (libnvToolsExt, libnvtx3interop) can be loaded" in err and "nope.so" in err
    # nsys's variable alone turns it on quietly; without a library it stays off, silent
    out, err = run(tmp_path, '''
        add[1, 16](np.ones(3), np.ones(3), np.zeros(3))
        print("ok")
    ''', NVTX_INJECTION64_PATH="/nonexistent", KILN_NVTX_LIB=str(tmp_path / "nope.so"))
    assert out.strip() == "ok" and "NVTX" not in err
    _, err = run(tmp_path, "pass", KILN_NVTX="yes")
    assert "KILN_NVTX must be 0 or 1, not 'yes'" in err


# ---- the GPU path's host side, against tests/fake_cuda ---------------------------------------

def run_fake(tmp_path, body, **extra):
    assert os.path.exists(FAKE), f"{FAKE} is missing: build with make"
    return run(tmp_path, body, KILN_CUDA_DRIVER=FAKE, KILN_TARGET="auto", **extra)


def test_fake_gpu_bytes_device_time_and_gpu_track(tmp_path):
    out, _ = run_fake(tmp_path, '''
        warnings.simplefilter("ignore")
        n = 1000
        a, b, c = np.ones(n), np.ones(n), np.zeros(n)
        with kiln.profile("gpu.json"):
            add[4, 256](a, b, c)        # host arrays: kiln copies all in, c back
            d = kiln.to_device(a)
            d.copy_to_host()
            kiln.synchronize()
        m = kiln.metrics(device_time=True)
        da, db, dc = (kiln.to_device(x) for x in (a, b, c))
        for _ in range(3):
            add[4, 256](da, db, dc)
        print(json.dumps(kiln.metrics(device_time=True)))
    ''')
    m = last_json(out)
    (k,) = m["kernels"]
    assert k["target"] == "cuda:0" and k["launches"] == 4
    assert k["h2d_bytes"] == 3 * 8000 and k["d2h_bytes"] == 8000
    # process totals add to_device and copy_to_host (and the 3 to_device above)
    assert m["h2d_bytes"] == 3 * 8000 + 8000 + 3 * 8000 and m["d2h_bytes"] == 8000 + 8000
    assert k["device_launches"] == 4 and k["device_ms"] >= 0 and "gbps" in k
    assert m["compile_ms"]["nvrtc"] > 0 or m["cache"]["hits"] == 1
    doc = json.loads((tmp_path / "gpu.json").read_text())
    check_schema(doc)
    gpu = [e for e in doc["traceEvents"] if e["pid"] == 1000000000]
    dev = [e for e in gpu if e["ph"] == "X"]
    assert len(dev) == 1 and dev[0]["cat"] == "launch" and dev[0]["name"] == "add"
    assert dev[0]["args"]["bytes"] == 24000 and "device_us" in dev[0]["args"]
    assert [e["args"]["name"] for e in gpu if e["ph"] == "M"][0].startswith("GPU 0: ")
    cats = [e["cat"] for e in doc["traceEvents"] if e["ph"] == "X"]
    assert cats.count("copy") == 2 and cats.count("sync") == 1
    assert any(c == "compile" for c in cats)
    assert [d["name"] for d in doc["otherData"]["devices"]] and \
        doc["otherData"]["devices"][0]["copy_gbps"] is None
