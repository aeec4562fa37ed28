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


# ---- Numba's argument hints (kiln.In, kiln.Out, kiln.InOut) and extensions ---------------

_rec = np.dtype([("b", np.int32)], align=True)


@kiln.jit(target="cpu")
def _set_three(a):
    a[0] = 3


@kiln.jit(target="cpu")
def _set_rec_three(r):
    r[0]["b"] = 3


@pytest.mark.parametrize("hint, want", [(kiln.In, 0), (kiln.InOut, 3), (kiln.Out, 3),
                                        (lambda a: a, 3)])
def test_argument_hints_on_the_cpu(hint, want):
    # the kernel runs on the host array itself, except that In gives it a copy
    a = np.zeros(1, np.int64)
    _set_three[1, 1](hint(a))
    assert a[0] == want
    r = np.zeros(1, _rec)
    _set_rec_three[1, 1](hint(r))
    assert r[0]["b"] == want


def test_wrap_arg_and_hint_types():
    a = np.zeros(3)
    h = kiln.In(a)
    assert kiln.args.wrap_arg(h) is h and h.value is a
    assert isinstance(kiln.args.wrap_arg(a), kiln.InOut)
    assert isinstance(kiln.args.wrap_arg(a, default=kiln.Out), kiln.args.ArgHint)
    assert repr(h).startswith("kiln.In(")


def test_a_hint_of_a_hint_and_a_bad_argument_are_type_errors():
    with pytest.raises(TypeError, match="hint holds another hint"):
        _set_three[1, 1](kiln.In(kiln.In(np.zeros(1, np.int64))))
    with pytest.raises(TypeError, match="argument 'a' of kernel '_set_three' is a str"):
        _set_three[1, 1]("x")


class _DefaultIn:
    def __init__(self):
        self.seen = []

    def prepare_args(self, ty, val, **kwargs):
        self.seen.append((ty, sorted(kwargs)))
        return ty, kiln.args.wrap_arg(val, default=kiln.In)


def test_extensions_prepare_each_argument():
    @kiln.jit(target="cpu")
    def f(a, n):
        a[0] = n

    ext = _DefaultIn()
    f.extensions.append(ext)
    a = np.zeros(1, np.int64)
    f[1, 1](a, 3)           # host arrays become In: not written back
    assert a[0] == 0
    assert ext.seen == [(kiln.int64[::1], ["retr", "stream"]), (kiln.int64, ["retr", "stream"])]
    f[1, 1](kiln.InOut(a), 4)   # a hint the caller gives stays
    assert a[0] == 4
    f.extensions.clear()    # no extension: the plain launch path again
    f[1, 1](a, 5)
    assert a[0] == 5


def test_extension_callbacks_run_after_the_launch():
    order = []

    class After:
        def prepare_args(self, ty, val, stream=0, retr=None):
            retr.append(lambda: order.append(("after", int(val[0]))))
            return ty, val

    @kiln.jit(target="cpu")
    def f(a):
        a[0] = 7

    f.extensions.append(After())
    f[1, 1](np.zeros(1, np.int64))
    assert order == [("after", 7)]


def test_argument_hints_reach_the_gpu_as_device_arrays():
    # with the fake driver: a hinted host array is copied to "device" memory, and the
    # launch gets its device pointer, not the host array's
    run("""
        @kiln.jit
        def k(a):
            a[0] = 3

        for hint in (kiln.In, kiln.Out, kiln.InOut):
            h = np.zeros(4, np.int64)
            k[1, 1](hint(h))
            name, grid, block, p = last()
            assert name == "kiln_entry" and p[1] != h.ctypes.data, (hint, p)
        d = kiln.to_device(np.zeros(4, np.int64))
        k[1, 1](kiln.In(d))   # a device array in a hint is passed as it is
        assert last()[3][1] == ptr(d)
        print("ok")
    """)


def test_the_host_array_warning_says_numbas_phrase():
    # the GPU path stages host arrays with one PerformanceWarning per kernel, which carries
    # Numba's phrase so that code filtering Numba's warning by message filters kiln's too
    run("""
        @kiln.jit
        def foo(r, x):
            r[0] = x + 1

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            foo[1, 10](np.zeros(10, np.float32), 10)
        msgs = [str(x.message) for x in w if issubclass(x.category, kiln.PerformanceWarning)]
        assert len(msgs) == 1, msgs
        import re
        assert re.search("Host array used in CUDA kernel will incur.+copy overhead", msgs[0])
        assert "argument 'r'" in msgs[0] and "kiln.to_device()" in msgs[0], msgs[0]
        print("ok")
    """)


# ---- pickling kernels, configured launches and vectorize functions -----------------------

import math  # noqa: E402
import pickle  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402


@kiln.jit(target="cpu")
def _module_kernel(a):
    a[0] = 1


def test_a_module_level_kernel_pickles_by_reference():
    assert pickle.loads(pickle.dumps(_module_kernel)) is _module_kernel


def _local_kernels():
    @kiln.jit(device=True)
    def inner(a):
        return a + 1

    k = 3

    @kiln.jit(target="cpu")
    def foo(arr):
        arr[0] = inner(arr[0]) + k + int(math.floor(1.5))

    @kiln.jit("void(intp[::1])", target="cpu")
    def bar(arr):
        arr[0] = inner(arr[0])

    return foo, bar


def test_a_local_kernel_pickles_with_its_closure_and_globals():
    foo, bar = _local_kernels()
    for k in (foo, pickle.loads(pickle.dumps(foo)),
              pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(foo))))):
        a = np.array([100])
        k[1, 1](a)
        assert a[0] == 105
    b = pickle.loads(pickle.dumps(bar))
    assert b.signatures == bar.signatures and b.options == bar.options
    a = np.array([1])
    b[1, 1](a)
    assert a[0] == 2


def test_a_pickled_kernel_runs_in_another_process():
    foo, _ = _local_kernels()
    code = ("import pickle, sys, numpy as np\n"
            "f = pickle.loads(sys.stdin.buffer.read())\n"
            "a = np.array([100])\n"
            "f[1, 1](a)\n"
            "print(a[0])\n")
    p = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(foo),
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.strip() == b"105"


def test_a_configured_launch_pickles_with_its_configuration():
    foo, _ = _local_kernels()

    @kiln.jit(target="cpu")
    def mark(a):
        a[kiln.grid(1)] = 1

    got = pickle.loads(pickle.dumps(mark[5, 8]))
    assert (got.griddim, got.blockdim) == ((5, 1, 1), (8, 1, 1))
    a = np.zeros(40)
    got(a)
    assert a.sum() == 40
    run("""
        import pickle
        with_stream = saxpy[1, 1, kiln.stream()]
        try:
            pickle.dumps(with_stream)
        except pickle.PicklingError as e:
            assert "on a stream cannot be pickled" in str(e), e
        else:
            raise AssertionError("a launch on a stream pickled")
        print("ok")
    """)


def test_a_vectorize_function_pickles():
    @kiln.vectorize(["intp(intp)", "float64(float64)"], target="cpu")
    def twice(x):
        return x * 2

    again = pickle.loads(pickle.dumps(twice))
    assert again(np.arange(4)).tolist() == [0, 2, 4, 6]
    assert again(np.array([0.5])).tolist() == [1.0]


def test_numbas_forceinline_is_accepted_and_checked():
    # numba-cuda's jit(forceinline=...) (NVVM-level inlining): kiln compiles each kernel with
    # everything it calls as one program, so it changes nothing; a non-bool is a TypeError
    import numpy as np

    @kiln.jit(device=True, forceinline=True)
    def twice(x):
        return 2 * x

    @kiln.jit(forceinline=False)
    def k(a):
        a[0] = twice(a[0])

    a = np.array([3.0])
    k[1, 1](a)
    assert a[0] == 6.0
    with pytest.raises(TypeError, match="forceinline must be True or False"):
        kiln.jit(forceinline="yes")(twice.py_func)
