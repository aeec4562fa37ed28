"""kiln.launchconfig: the configuration of a launch that compiles, and launch-config
sensitive kernels (Numba-CUDA's numba.cuda.launchconfig), on the CPU target."""
import threading

import numpy as np
import pytest

import kiln
from kiln import launchconfig


def make():
    @kiln.jit(cache=False)
    def f(x):
        kiln.atomic.add(x, 0, 1)

    return f


def hook(f, seen):
    orig = f._compile_for_args

    def wrapped(*args, **kws):
        seen.append(launchconfig.current_launch_config())
        return orig(*args, **kws)

    f._compile_for_args = wrapped


def test_the_config_is_current_only_while_a_launch_compiles():
    f = make()
    seen = []
    hook(f, seen)
    x = np.zeros(1, np.int32)
    assert launchconfig.current_launch_config() is None
    f[2, (3, 1)](x)
    f[2, (3, 1)](x)  # found: no compile, no hook
    assert len(seen) == 1
    cfg = seen[0]
    assert cfg.dispatcher is f and cfg.args[0] is x
    assert cfg.griddim == (2, 1, 1) and cfg.blockdim == (3, 1, 1) and cfg.sharedmem == 0
    assert launchconfig.current_launch_config() is None
    with pytest.raises(RuntimeError, match="No launch config"):
        launchconfig.ensure_current_launch_config()
    assert x[0] == 12
    # a new argument type compiles again; a new configuration alone does not
    f[1, 1](np.zeros(1, np.float64))
    f[5, 5](x)
    assert len(seen) == 2 and seen[1].args[0].dtype == np.float64


def test_capture_compile_config_restores_the_method():
    f = make()
    original = f._compile_for_args
    with launchconfig.capture_compile_config(f) as cap:
        f[1, 4](np.zeros(1, np.int32))
    assert cap["config"].blockdim == (4, 1, 1)
    assert "_compile_for_args" not in f.__dict__
    assert f._compile_for_args.__func__ is original.__func__
    with launchconfig.capture_compile_config(f) as cap:
        f[1, 4](np.zeros(1, np.int32))  # compiled: nothing captured
    assert cap["config"] is None


def test_a_sensitive_kernel_compiles_per_configuration():
    f = make()
    seen = []
    orig = f._compile_for_args

    def wrapped(*args):
        cfg = launchconfig.ensure_current_launch_config()
        cfg.dispatcher.mark_launch_config_sensitive()
        seen.append((cfg.griddim, cfg.blockdim, cfg.sharedmem))
        return orig(*args)

    f._compile_for_args = wrapped
    x = np.zeros(1, np.int32)
    f[1, 2](x)
    f[1, 2](x)
    f[1, 3](x)
    f[1, 3](x)
    f[1, 2](x)
    f[1, 2, 0, 64](x)
    assert seen == [((1, 1, 1), (2, 1, 1), 0), ((1, 1, 1), (3, 1, 1), 0),
                    ((1, 1, 1), (2, 1, 1), 64)]
    entry = next(iter(f.overloads.values()))
    assert entry.launch_config_sensitive and entry is next(iter(f.overloads.values()))
    assert entry.signature == "(int32[::1])"  # the Entry's own attributes show through
    assert f.signatures == ["(int32[::1])"]  # one specialisation's code serves them all
    assert x[0] == 2 * 2 + 2 * 3 + 2 + 2
    # the wrappers follow the live Entries: none kept for entries cleared
    f._clear_entries()
    assert dict(f.overloads) == {} or all(v is None for v in f.overloads.values())
    assert f.__dict__["_lc_views"] == {}
    # a kernel nothing marked stays per argument types only, though the same code may serve
    # both dispatchers (the memory tier shares it)
    g = make()
    g[1, 1](x)
    assert not next(iter(g.overloads.values())).launch_config_sensitive


def test_marking_outside_its_compile_is_an_error():
    f, g = make(), make()
    with pytest.raises(RuntimeError, match="No launch config"):
        f.mark_launch_config_sensitive()
    orig = f._compile_for_args

    def wrapped(*args):
        g.mark_launch_config_sensitive()  # another dispatcher's launch is compiling
        return orig(*args)

    f._compile_for_args = wrapped
    with pytest.raises(RuntimeError, match="active launch configuration's dispatcher"):
        f[1, 1](np.zeros(1, np.int32))
    with pytest.raises(RuntimeError, match="runs only within a launch"):
        g._compile_for_args(np.zeros(1, np.int32))


def test_a_hook_must_return_the_entry():
    f = make()
    f._compile_for_args = lambda *args: None
    with pytest.raises(TypeError, match="must return the Entry"):
        f[1, 1](np.zeros(1, np.int32))
    del f._compile_for_args
    x = np.zeros(1, np.int32)
    f[1, 1](x)
    assert x[0] == 1


def test_launch_args_are_per_thread():
    f = make()
    configured = f[1, 1]
    barrier = threading.Barrier(2)
    seen, errors = [], []
    orig = f._compile_for_args

    def wrapped(*args):
        barrier.wait(timeout=10)  # both threads compile at once
        seen.append(id(configured.args[0]))
        return orig(*args)

    f._compile_for_args = wrapped
    arrays = [np.zeros(1, np.int32), np.zeros(1, np.int32)]

    def launch(a):
        try:
            configured(a)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=launch, args=(a,)) for a in arrays]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors and not any(t.is_alive() for t in threads)
    assert set(seen) == {id(a) for a in arrays}
    assert configured.args is None
    assert [a[0] for a in arrays] == [1, 1]
