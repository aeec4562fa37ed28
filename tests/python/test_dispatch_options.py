"""Dispatcher options and hooks of Numba's API (shared_memory_carveout, ...): what they
check when the kernel is made, and what reaches the driver (tests/fake_cuda, through
test_fake_driver's child process)."""
import numpy as np
import pytest

import kiln
from test_fake_driver import run


def _body(a):
    i = kiln.grid(1)
    if i < a.size:
        a[i] = 1.0


@pytest.mark.parametrize("bad", [150, -2, 101])
def test_shared_memory_carveout_out_of_range_is_a_value_error(bad):
    with pytest.raises(ValueError, match="must be between -1 and 100"):
        kiln.jit(shared_memory_carveout=bad)(_body)
    with pytest.raises(ValueError, match="must be between -1 and 100"):
        kiln.jit("void(float64[::1])", shared_memory_carveout=bad)(_body)


def test_shared_memory_carveout_unknown_name_or_type():
    with pytest.raises(ValueError, match="Invalid carveout value: 'MaxL2'.*'MaxShared'"):
        kiln.jit(shared_memory_carveout="MaxL2")(_body)
    with pytest.raises(TypeError, match="shared_memory_carveout must be an int or a str"):
        kiln.jit(shared_memory_carveout=50.0)(_body)


def test_shared_memory_carveout_runs_on_the_cpu_target():
    # a hint to the GPU's driver: the CPU target runs the kernel as before
    k = kiln.jit(shared_memory_carveout="MaxShared", target="cpu")(_body)
    a = np.zeros(10)
    k[1, 16](a)
    assert a.sum() == 10


def test_shared_memory_carveout_is_set_on_each_gpu_specialisation():
    # cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) on each loaded
    # entry, names mapped as Numba's; the fake driver keeps the value for cuFuncGetAttribute
    run("""
        def body(a):
            i = kiln.grid(1)
            if i < a.size:
                a[i] = 1.0

        def carveout(k):
            return [kiln._kiln.entry_attribute(e, 9) for e in k.overloads.values()]

        for given, want in (("MaxL1", 0), ("MaxShared", 100), ("default", -1), (0, 0),
                            (50, 50), (100, 100), (-1, -1)):
            k = kiln.jit(shared_memory_carveout=given)(body)
            k[1, 10](kiln.device_array(10, np.float32))
            k[1, 10](kiln.device_array(10, np.float64))
            assert carveout(k) == [want, want], (given, carveout(k))
            s = kiln.jit("void(int32[::1])", shared_memory_carveout=given)(body)
            assert carveout(s) == [want], (given, carveout(s))
        plain = kiln.jit(body)
        plain[1, 10](kiln.device_array(10, np.float32))
        assert carveout(plain) == [-1]
        print("ok")
    """)
