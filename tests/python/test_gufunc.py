"""kiln.guvectorize on the CPU target: layouts, loop broadcasting, outputs passed or
allocated, scalar cores, host-backed device arrays, and the errors (each names what is
wrong).  The GPU runs of the same gufuncs are in test_gpu.py."""
import warnings

import numpy as np
import pytest

import kiln
from kiln import float32, float64, int32, int64, void

# calls with a loop of one point warn as Numba's low occupancy warning does (tested below)
pytestmark = pytest.mark.filterwarnings("ignore:.*Grid size 1:kiln.PerformanceWarning")


@kiln.guvectorize([void(float32[:, :], float32[:, :], float32[:, :]),
                   void(float64[:, :], float64[:, :], float64[:, :])], "(m,n),(n,p)->(m,p)")
def matmul(A, B, C):
    m, n = A.shape
    p = B.shape[1]
    for i in range(m):
        for j in range(p):
            acc = 0.0
            for k in range(n):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc


@kiln.guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()")
def dot(x, y, r):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    r[0] = s


@kiln.guvectorize(["void(float32, float32[:], float32[:], float32[:])"], "(),(t),(t)->(t)")
def saxpy(a, x, y, out):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + y[i]


@kiln.guvectorize([void(float32[:], float32[:], float64[:])], "(x)->(x),(x)")
def copy_and_double(A, B, C):
    for i in range(A.shape[0]):
        B[i] = A[i]
        C[i] = A[i] * 2.5


def test_matmul_over_loop_dimensions(rng):
    a = rng.random((4, 5, 2, 3)).astype(np.float32)
    b = rng.random((4, 5, 3, 6)).astype(np.float32)
    c = matmul(a, b)
    assert c.shape == (4, 5, 2, 6) and c.dtype == np.float32
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    # the float64 signature for float64 inputs; a pinned (loop-free) second operand
    x, y = rng.random((10, 3, 3)), rng.random((3, 3))
    np.testing.assert_allclose(matmul(x, y), x @ y)
    # strided and transposed inputs are views, not copies
    big = rng.random((6, 8, 8))
    np.testing.assert_allclose(matmul(big[::2, :3, ::2], big[1::2, ::2, :5].transpose(0, 1, 2)),
                               big[::2, :3, ::2] @ big[1::2, ::2, :5])


def test_outputs_passed_positionally_and_by_keyword(rng):
    a = rng.random((7, 4))
    b = rng.random((7, 4))
    r = np.zeros(7)
    assert dot(a, b, r) is r
    np.testing.assert_allclose(r, (a * b).sum(1))
    r2 = np.zeros(7)
    assert dot(a, b, out=r2) is r2
    np.testing.assert_allclose(r2, r)
    # NumPy broadcasting of loop dimensions: (3,1) with (5,) loops -> (3,5)
    c, d = rng.random((3, 1, 4)), rng.random((5, 4))
    np.testing.assert_allclose(dot(c, d), (c * d).sum(-1))


def test_scalar_cores_and_scalar_results():
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    out = saxpy(np.float32(2), x, x)
    np.testing.assert_array_equal(out, 3 * x)
    a = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(saxpy(a, x, x), a[:, None] * x + x)

    @kiln.guvectorize(["void(int32, int32[:])"], "()->()")
    def twice(v, out):
        out[0] = v * 2

    r = twice(10)   # no loop dimensions, scalar cores: a scalar, as NumPy's gufuncs give
    assert r == 20 and np.ndim(r) == 0
    np.testing.assert_array_equal(twice(np.arange(6, dtype=np.int32)), 2 * np.arange(6))
    # int64 inputs cast to the int32 signature within their kind
    np.testing.assert_array_equal(twice(np.arange(3, dtype=np.int64)), [0, 2, 4])


def test_old_style_scalar_as_one_element_array():
    @kiln.guvectorize(["void(int32[:], int32[:], int32[:])"], "(n),()->(n)")
    def add_first(x, y, res):
        for i in range(x.shape[0]):
            res[i] = x[i] + y[0]

    res = np.zeros(4, np.int32)
    add_first(np.array([1, 2, 3, 4], np.int32), np.array([2], np.int32), out=res)
    np.testing.assert_array_equal(res, [3, 4, 5, 6])
    a = np.arange(8, dtype=np.int32).reshape(2, 4)
    np.testing.assert_array_equal(add_first(a, np.array([2, 10], np.int32)), a + [[2], [10]])


def test_several_outputs():
    a = np.arange(6, dtype=np.float32)
    b, c = copy_and_double(a)
    assert b.dtype == np.float32 and c.dtype == np.float64
    np.testing.assert_array_equal(b, a)
    np.testing.assert_array_equal(c, a * 2.5)
    b2, c2 = np.zeros(6, np.float32), np.zeros(6, np.float64)
    r1, r2 = copy_and_double(a, out=(b2, c2))
    assert r1 is b2 and r2 is c2
    np.testing.assert_array_equal(c2, a * 2.5)
    # an out= of another dtype receives the result cast, as NumPy's out= does
    c3 = np.zeros(6, np.float32)
    copy_and_double(a, b2, c3)
    np.testing.assert_array_equal(c3, a * 2.5)


def test_tuples_are_arrays():
    r = dot(((1.0, 2.0, 3.0), (4.0, 5.0, 6.0)), ((1.5, 2.5, 3.5), (4.5, 5.5, 6.5)))
    np.testing.assert_array_equal(r, [17.0, 84.5])


def test_host_backed_device_arrays_in_and_out(monkeypatch, rng):
    monkeypatch.setenv("KILN_TARGET", "cpu")
    a = rng.random((9, 2, 3)).astype(np.float32)
    b = rng.random((9, 3, 4)).astype(np.float32)
    dc = matmul(kiln.to_device(a), b)   # a device array in: a device array out
    assert isinstance(dc, kiln.DeviceArray) and dc.shape == (9, 2, 4)
    np.testing.assert_allclose(dc.copy_to_host(), a @ b, rtol=1e-5)
    s = kiln.stream()
    out = kiln.device_array((9, 2, 4), np.float32)
    assert matmul(kiln.to_device(a), kiln.to_device(b), out=out, stream=s) is out
    s.synchronize()
    np.testing.assert_allclose(out.copy_to_host(), a @ b, rtol=1e-5)
    with pytest.raises(TypeError, match=r"input 1 is a device array of int64.*\.astype\(\)"):
        saxpy(kiln.to_device(np.arange(5)), np.zeros((5, 2), np.float32),
              np.zeros((5, 2), np.float32))


def test_dynamic_gufunc_compiles_per_call_dtypes():
    @kiln.guvectorize("(n)->(n)")
    def cumsum(x, out):
        acc = x[0] - x[0]
        for i in range(x.shape[0]):
            acc += x[i]
            out[i] = acc

    assert cumsum.is_dynamic and cumsum.nin == 1 and cumsum.nout == 1
    for dt in (np.int64, np.float32):
        x = np.arange(12, dtype=dt).reshape(3, 4)
        out = np.zeros_like(x)
        cumsum(x, out)
        np.testing.assert_array_equal(out, np.cumsum(x, axis=1))
    with pytest.raises(TypeError, match="dynamic gufunc.*pass its outputs"):
        cumsum(np.arange(3.0))


def test_attributes():
    assert matmul.__name__ == "matmul"
    assert (matmul.nin, matmul.nout, matmul.nargs) == (2, 1, 3)
    assert matmul.signature == "(m,n),(n,p)->(m,p)" and not matmul.is_dynamic
    assert matmul.types == ["ff->f", "dd->d"] and matmul.ufunc is matmul


def test_kernel_marks_only_outputs_written():
    """On the GPU, host arrays are copied back only when their parameter is written: the
    loop kernel must see the writes the user's function makes through its views."""
    a = np.ones((3, 4))
    dot(a, a)
    k = dot._kernels[1]
    assert k._entry_for(None).program.written[:3] == (False, False, True)


def test_one_point_loop_warns_low_occupancy():
    a = np.ones(64)
    with pytest.warns(kiln.PerformanceWarning, match="Grid size 1 .* low occupancy"):
        dot(a, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dot(np.ones((64, 2)), np.ones((64, 2)))  # a real loop: no warning
        saxpy(np.float32(1), np.ones(1, np.float32), np.ones(1, np.float32))  # cores of one
        assert dot(np.ones(0), np.ones(0)) == 0.0    # an empty core: no work to spread


def test_argument_count_and_out_errors():
    a = np.ones((2, 3))
    with pytest.raises(TypeError, match=r"accepts 2 positional arguments \(the inputs\) or 3 "
                                        r"positional arguments.*Got 1 positional argument\."):
        dot(a)
    with pytest.raises(TypeError, match="Got 4 positional arguments"):
        dot(a, a, a, a)
    with pytest.raises(ValueError, match="cannot specify argument 'out' as both positional and keyword"):
        dot(a, a, np.zeros(2), out=np.zeros(2))
    with pytest.raises(ValueError, match="has 2 outputs, but out= gives 1"):
        copy_and_double(np.ones(3, np.float32), out=np.zeros(3, np.float32))


def test_core_dimension_errors():
    with pytest.raises(ValueError, match=r"core dimension 'n' is 3 in input 1 but 4 in input 2"):
        dot(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"input 1 has 1 dimension\(s\), fewer than the 2 of its "
                                         r"layout \(m,n\)"):
        matmul(np.ones(3), np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"loop dimensions \(2,\), \(3,\) do not broadcast"):
        dot(np.ones((2, 4)), np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"output 1 has shape \(5,\), but the loop and core "
                                         r"dimensions make it \(2,\)"):
        dot(np.ones((2, 4)), np.ones((2, 4)), out=np.zeros(5))
    with pytest.raises(TypeError, match=r"cannot take inputs \(complex64, complex64\)"):
        matmul(np.ones((2, 2), np.complex64), np.ones((2, 2), np.complex64))

    @kiln.guvectorize(["void(float64[:], float64[:])"], "(n)->(q)")
    def unsized(x, y):
        y[0] = x[0]

    with pytest.raises(ValueError, match="core dimension 'q' of output 1 appears in no input"):
        unsized(np.ones(3))
    out = np.zeros(2)
    unsized(np.ones(3), out)   # passed, it is sized
    assert out[0] == 1.0


@pytest.mark.parametrize("layout, message", [
    ("(m,n),(n,p)", "exactly one '->'"),
    ("(m)->(m)->(m)", "exactly one '->'"),
    ("(m)(n)->(m)", "not a comma-separated list"),
    ("m->(m)", "not a comma-separated list"),
    ("(m-1)->(m)", "'m-1' in (m-1) is not a dimension name"),
    ("->(m)", "has no inputs"),
    ("(m)->", "has no outputs"),
])
def test_bad_layouts_name_what_is_wrong(layout, message):
    with pytest.raises(ValueError) as e:
        kiln.guvectorize(["void(float64[:], float64[:])"], layout)
    assert message in str(e.value) and layout in str(e.value)


def test_bad_signatures_and_options():
    with pytest.raises(TypeError, match="guvectorized functions cannot return values.*specifies "
                                        "int32 return type"):
        kiln.guvectorize([int32(int32[:], int32[:])], "(m)->(m)")
    with pytest.raises(TypeError, match=r"has 2 argument\(s\), but layout '\(m\),\(m\)->\(m\)' has 3"):
        kiln.guvectorize(["void(int32[:], int32[:])"], "(m),(m)->(m)")
    with pytest.raises(TypeError, match=r"argument 1 .* is a 2-D array, but its layout \(m\) has 1"):
        kiln.guvectorize(["void(int32[:, :], int32[:])"], "(m)->(m)")
    with pytest.raises(TypeError, match=r"argument 1 .* is the scalar int64, but its layout \(m\)"):
        kiln.guvectorize([(int64, int64[:])], "(m)->(m)")
    with pytest.raises(TypeError, match="argument 2 .* is an output and must be an array"):
        kiln.guvectorize(["void(int32, int32)"], "()->()")
    with pytest.raises(TypeError, match="nopython flag must be True"):
        kiln.guvectorize(["void(int32[:], int32[:])"], "(m)->(m)", nopython=False)
    with pytest.raises(TypeError, match="The following target options are not supported: 'what1'"):
        kiln.guvectorize(["void(int32[:], int32[:])"], "(m)->(m)", what1=True)
    # hunt29 10: options checked when given, not at the launch
    for bad in (-1, 0, 2048, "x", True, 2.0):
        with pytest.raises(ValueError, match="max_blocksize is the most threads a block"):
            kiln.guvectorize(["void(int32[:], int32[:])"], "(m)->(m)", max_blocksize=bad)
    for bad in ((2,), ("nope",), ("b",), (True,)):
        with pytest.raises(ValueError, match="writable_args names the gufunc's inputs"):
            kiln.guvectorize(["void(int32[:], int32[:])"], "(m)->(m)",
                             writable_args=bad)(lambda a, b: None)
    with pytest.raises(TypeError, match="decorates a Python function, not 5"):
        kiln.guvectorize(["void(int32[:], int32[:])"], "(m)->(m)")(5)


def test_launch_errors_name_the_gufuncs_inputs_and_outputs():
    ro = np.zeros(2)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="output 1 of gufunc 'dot' is read-only") as e:
        dot(np.ones((2, 3)), np.ones((2, 3)), out=ro)
    assert "__kiln" not in str(e.value)
    with pytest.raises(TypeError, match="input 1 of gufunc 'dot' has 9 dimensions") as e:
        dot(np.ones((1,) * 8 + (3,)), np.ones(3))
    with pytest.raises(TypeError, match="'dot': output 1 must be a NumPy array or a device "
                                        "array, not list"):
        dot(np.ones((2, 3)), np.ones((2, 3)), out=[0.0, 0.0])
    with pytest.raises(TypeError, match="output 1 is an array of int32, but the signature "
                                        "writes float64"):
        dot(np.ones((2, 3)), np.ones((2, 3)), out=np.zeros(2, np.int32))


@kiln.guvectorize(["void(float64[:], float64[:])"], "(n)->()", writable_args=("x",))
def consume(x, r):
    r[0] = x[0]
    x[0] = -1.0


def test_writable_args_lets_the_function_write_an_input():
    x = np.arange(6.0).reshape(2, 3)
    r = consume(x)
    assert r.tolist() == [0.0, 3.0] and x[:, 0].tolist() == [-1.0, -1.0]

    @kiln.guvectorize(["void(float64[:], float64[:])"], "(n)->()")
    def no(x, r):
        x[0] = -1.0

    with pytest.raises(ValueError, match="input 1 of gufunc 'no' is read-only"):
        no(np.ones(3))
    x = np.ones((2, 3))          # its own layout is the kernel's view: read-only all the same
    with pytest.raises(ValueError, match="input 1 of gufunc 'no' is read-only"):
        no(x)
    assert x.flags.writeable and (x == 1).all()


def test_errors_in_the_function_point_at_its_lines():
    @kiln.guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")
    def broken(x, y):
        for i in range(x.shape[0]):
            y[i] = x[i] + undefined_name  # noqa: F821

    with pytest.raises(kiln.CompileError, match=r"test_gufunc\.py:\d+:\d+: .*undefined_name"):
        broken(np.ones((2, 3)))


def test_fixed_size_core_dimensions():
    @kiln.guvectorize(["void(float64[:], float64[:])"], "(n)->(2)")
    def ends(x, out):
        out[0] = x[0]
        out[1] = x[x.shape[0] - 1]

    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(ends(x), x[:, [0, 3]])

    @kiln.guvectorize(["void(float64[:], float64[:])"], "(3)->()")
    def first(x, out):
        out[0] = x[0]

    with pytest.raises(ValueError, match=r"input 1 has core dimension 4 where layout '\(3\)->\(\)' fixes 3"):
        first(x)


def test_kernels_cannot_call_a_gufunc():
    @kiln.jit
    def k(a, b):
        dot(a, a, b)

    with pytest.raises(kiln.CompileError, match="Untyped global name 'dot'"):
        k[1, 1](np.ones((2, 2)), np.zeros(2))


@kiln.guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")
def _reverse(x, y):
    n = x.shape[0]
    for i in range(n):
        y[i] = x[n - 1 - i]


def test_an_output_over_an_input_reads_the_input_as_it_was():
    # NumPy's gufuncs copy an input that shares memory with an output; without it the core
    # loop read elements it had already written ([4, 3, 2, 3, 4])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kiln.PerformanceWarning)  # one loop point
        a = np.arange(5.0)
        _reverse(a, a)
        assert a.tolist() == [4.0, 3.0, 2.0, 1.0, 0.0]
        b = np.arange(10.0).reshape(2, 5)
        _reverse(b, out=b)
        assert b.tolist() == [[4, 3, 2, 1, 0], [9, 8, 7, 6, 5]]
        c = np.arange(6.0)
        _reverse(c[::-1], c[:])      # an output over a reversed view of the input
        assert c.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_a_device_output_over_a_device_input_reads_the_input_as_it_was(monkeypatch):
    import warnings

    monkeypatch.setenv("KILN_TARGET", "cpu")  # the device path, on host memory
    d = kiln.to_device(np.arange(5.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kiln.PerformanceWarning)
        _reverse(d, d)
    assert d.copy_to_host().tolist() == [4.0, 3.0, 2.0, 1.0, 0.0]


@kiln.guvectorize(["void(float64[:], int64, float64[:])"], "(n),()->(n)")
def moving_avg(x, w, out):
    for i in range(x.shape[0]):
        s = 0.0
        c = 0
        for j in range(max(0, i - w + 1), i + 1):
            s += x[j]
            c += 1
        out[i] = s / c


def test_python_scalar_of_another_kind_takes_the_signature_as_numba():
    # NEP 50 types 3 next to float64 arrays as float64, which no signature takes; Numba's
    # resolution takes the Python int as the int64 parameter (hunt8.md 3)
    x = np.random.default_rng(2).random((3, 10))
    want = np.array([[x[r, max(0, i - 2):i + 1].mean() for i in range(10)] for r in range(3)])
    np.testing.assert_allclose(moving_avg(x, 3), want)
    np.testing.assert_allclose(moving_avg(x, np.int64(3)), want)
    with pytest.raises(TypeError, match="cannot take"):
        moving_avg(x, 2.5)  # a float is no int64
