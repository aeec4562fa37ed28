"""kiln.cg (Numba's cuda.cg) on the CPU target and in the CUDA code kiln writes: a kernel
that takes the grid group is cooperative; its CUDA has the grid barrier (atomics on one
counter, fences) and no wide entry, and compiles with NVRTC for sm_80 and sm_90; on the CPU
its whole grid runs as fibers within KILN_CG_MAX_THREADS, which max_cooperative_grid_blocks
reports and a larger grid is refused with (tests/lang/cooperative_groups.py has the
results; tests/python/test_fake_driver.py the GPU launch; test_gpu.py the H200)."""
import numpy as np
import pytest

import kiln
from kiln import _compile, _kiln


@kiln.jit
def phases(x, out):
    i = kiln.grid(1)
    g = kiln.cg.this_grid()
    if i < x.size:
        out[i] = x[i] + 1
    g.sync()
    if i < x.size:
        x[i] = out[(i + 1) % x.size] * 2


@kiln.jit
def saxpy(out, a, x):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i]


def test_cuda_code_has_the_grid_barrier_and_no_wide_entry():
    _, argkey = _kiln.parse_signature("void(float32[::1], float32[::1])")
    src = _compile._translate(phases, argkey, 1, 90).source
    assert "#define KILN_COOPERATIVE 1" in src and "kiln_grid_sync_()" in src
    assert "void kiln_entry_wide" not in src
    # the entry counts the block's live threads: one that returns counts as arrived
    assert "kiln_grid_enter_();" in src and "kiln_grid_exit_();" in src
    for arch in (80, 90):
        ptx = _kiln.nvrtc_compile(src, (0, 0, 0), arch, True)[0].decode()
        assert "atom.global.add.u32" in ptx or "atom.add.u32" in ptx, ptx[-2000:]
        assert "membar.gl" in ptx or "fence.sc.gpu" in ptx or "fence.acq_rel.gpu" in ptx
    plain = _compile._translate(saxpy, _kiln.parse_signature(
        "void(float32[::1], float32, float32[::1])")[1], 1, 90).source
    assert "#define KILN_COOPERATIVE" not in plain and "void kiln_entry_wide" in plain


def test_cpu_grid_meets_at_each_sync_and_matches_numpy():
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    phases[8, 128](x, out)
    np.testing.assert_array_equal(out, np.arange(1000, dtype=np.float32) + 1)
    np.testing.assert_array_equal(x, np.roll(out, -1) * 2)
    (e,) = phases.overloads.values()
    assert e.cooperative


def test_max_cooperative_grid_blocks_on_the_cpu_is_the_named_bound():
    phases[1, 32](np.zeros(4, np.float32), np.zeros(4, np.float32))
    e = phases.overloads["(float32[::1], float32[::1])"]
    most = _kiln.CG_MAX_THREADS
    assert e.max_cooperative_grid_blocks(256) == most // 256
    assert e.max_cooperative_grid_blocks((16, 4, 4), 0) == most // 256
    assert phases.max_cooperative_grid_blocks(1000, dynsmemsize=64) == most // 1000
    with pytest.raises(ValueError, match="1 to 1024 threads"):
        e.max_cooperative_grid_blocks((64, 32))
    with pytest.raises(TypeError):
        e.max_cooperative_grid_blocks("32")


def test_a_grid_past_the_bound_is_refused_before_any_thread_runs():
    most = _kiln.CG_MAX_THREADS // 1024
    x = np.zeros((most + 1) * 1024, np.float32)
    out = np.full_like(x, 7)
    with pytest.raises(ValueError, match=rf"{most + 1} blocks of 1024 threads is too large: "
                                         rf"at most {most} blocks.*KILN_CG_MAX_THREADS"):
        phases[most + 1, 1024](x, out)
    assert (out == 7).all()  # nothing ran
    phases[most, 1024](x[:most * 1024], out[:most * 1024])  # the bound itself runs
    assert (out[:most * 1024] == 1).all()


def test_reduce_overhead_replays_a_cooperative_kernel_on_the_cpu():
    def step(x, out):
        phases[4, 64](x, out)
        return out

    f = kiln.compile(step, mode="reduce-overhead")
    for k in range(3):
        x = np.arange(200, dtype=np.float32) * (k + 1)
        want_out = x + 1
        out = np.zeros_like(x)
        f(x, out)
        np.testing.assert_array_equal(out, want_out)
        np.testing.assert_array_equal(x, np.roll(want_out, -1) * 2)


def test_a_device_function_that_syncs_the_grid_is_not_compiled_alone():
    def barrier_then_write(a):
        kiln.cg.this_grid().sync()
        a[0] = 1.0

    with pytest.raises(kiln.CompileError, match="cannot be compiled alone"):
        kiln.compile_ptx(barrier_then_write, "void(float32[::1])", device=True)
    ptx, _ = kiln.compile_ptx(barrier_then_write, "void(float32[::1])")  # as a kernel it is
    assert "kiln_gbar_" in ptx
