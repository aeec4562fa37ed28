"""Foreign GPU arrays given as hostile or malformed input: __cuda_array_interface__
dicts that change while kiln reads them, CAI fields and DLPack tensors that are not
what they claim.  Each is a clear TypeError or ValueError naming the argument, and
nothing is launched.  The GPU path runs against tests/fake_cuda in a child process
(see test_fake_driver.py)."""
import os
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE = os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build"), "libkiln-fake-cuda.so")
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")

PRELUDE = """
import ctypes, os
import numpy as np
import kiln
fake = ctypes.CDLL(os.environ["KILN_CUDA_DRIVER"])
fake.fake_last_name.restype = ctypes.c_char_p

def params():
    buf = (ctypes.c_int64 * 512)()
    n = fake.fake_last_params(buf, 512)
    return list(buf[:n])

@kiln.jit
def saxpy(out, a, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]

class CAI:
    '''An object whose __cuda_array_interface__ is whatever make() returns.'''
    def __init__(self, make):
        self.make = make

    @property
    def __cuda_array_interface__(self):
        return self.make()

def refused(fn, exc, *words):
    '''fn() raises exc whose message has every word, and launches nothing.'''
    before = fake.fake_launch_count()
    try:
        fn()
    except exc as e:
        msg = str(e)
        assert all(w in msg for w in words), (msg, words)
    else:
        raise AssertionError(f"no {exc.__name__}")
    assert fake.fake_launch_count() == before, "it launched"
"""


def run(body):
    assert os.path.exists(FAKE), f"{FAKE} is missing: build with make (meson builds it)"
    env = dict(os.environ, KILN_CUDA_DRIVER=FAKE, PYTHONPATH=PYDIR)
    with tempfile.TemporaryDirectory() as d:  # kiln reads kernels from their files
        script = os.path.join(d, "interop_script.py")
        with open(script, "w") as f:
            f.write(PRELUDE + textwrap.dedent(body))
        p = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                           timeout=120)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), (p.returncode,
                                                                   p.stdout + p.stderr)


def test_cai_dict_emptied_by_index_while_being_read():
    # shape[0].__index__ empties the dict kiln is reading, dropping the last references
    # to its shape, typestr, data and strides, and fills the freed tuples' memory
    # with other tuples: kiln holds what it reads, so the launch sees the values given
    run("""
        n = (1 << 22) + 37
        out, x = kiln.device_array(n, np.float32), kiln.device_array(n, np.float32)
        keep = []

        class Evil:
            def __init__(self, d):
                self.d = d
            def __index__(self):
                self.d.clear()
                keep.append([(object(), object()) for _ in range(1000)])
                keep.append([(object(),) for _ in range(1000)])
                return n

        def make():
            d = {"typestr": "<f4", "data": (x.__cuda_array_interface__["data"][0], False),
                 "strides": None, "version": 3}
            d["shape"] = (Evil(d),)
            return d

        launch = saxpy[(n + 127) // 128, 128]
        launch(out, np.float32(2), CAI(make), x)
        p = params()
        assert launch._last_wide, "a large 1-D launch takes the wide entry"
        ptr = x.__cuda_array_interface__["data"][0]
        assert p[5:8] == [ptr, n, 1], p  # x's data pointer, shape and stride as given
        print("ok")
    """)


def test_cai_data_and_strides_emptied_by_index():
    # the same through strides[0].__index__ and data's read-only flag's __bool__
    run("""
        n = 1000
        out, x = kiln.device_array(n, np.float32), kiln.device_array(n, np.float32)
        ptr = x.__cuda_array_interface__["data"][0]
        keep = []

        class Clearing:
            def __init__(self, d, v):
                self.d, self.v = d, v
            def __index__(self):
                self.d.clear()
                keep.append([(object(), object()) for _ in range(1000)])
                return self.v
            def __bool__(self):
                self.d.clear()
                keep.append([(object(), object()) for _ in range(1000)])
                return False

        def by_strides():
            d = {"shape": (n,), "typestr": "<f4", "data": (ptr, False), "version": 3}
            d["strides"] = (Clearing(d, 4),)
            return d

        def by_flag():
            d = {"shape": (n,), "typestr": "<f4", "strides": (4,), "version": 3}
            d["data"] = (ptr, Clearing(d, 0))
            return d

        for make in (by_strides, by_flag):
            saxpy[8, 128](out, np.float32(2), CAI(make), x)
            assert params()[3] == ptr, (make.__name__, params())
        print("ok")
    """)


def test_malformed_cai_fields_are_refused_by_name():
    run("""
        n = 64
        out, x = kiln.device_array(n, np.float32), kiln.device_array(n, np.float32)
        ptr = x.__cuda_array_interface__["data"][0]

        def cai(**change):
            d = {"shape": (n,), "typestr": "<f4", "data": (ptr, False), "strides": None,
                 "version": 3}
            d.update(change)
            for k in [k for k, v in change.items() if v is KeyError]:
                del d[k]
            return CAI(lambda: d)

        launch = saxpy[1, 64]
        arg = "argument 'x' of kernel 'saxpy'"
        cases = [
            (dict(shape=(-4,)), ValueError, "shape[0] is -4"),
            (dict(shape=(4, -1)), ValueError, "shape[1] is -1"),
            (dict(typestr="<f4junk"), ValueError, "'<f4junk'", "not a type string"),
            (dict(typestr="f4"), ValueError, "not a type string"),
            (dict(typestr="<f"), ValueError, "not a type string"),
            (dict(typestr=">f4"), TypeError, "'>f4'", "big-endian"),
            (dict(typestr="<M8"), TypeError, "'<M8'", "not supported"),
            (dict(typestr=4), TypeError, "['typestr'] must be a str"),
            (dict(shape=[n]), TypeError, "['shape'] must be a tuple"),
            (dict(shape=(float(n),)), TypeError, "['shape'][0] must be an int, not float"),
            (dict(shape=("64",)), TypeError, "['shape'][0] must be an int, not str"),
            (dict(shape=(2,) * 9), TypeError, "9 dimensions", "at most"),
            (dict(shape=(1 << 40, 1 << 40)), ValueError, "64 bits"),
            (dict(strides=(4, 4)), ValueError, "['strides'] has 2 entries"),
            (dict(strides=(None,)), TypeError, "['strides'][0] must be an int"),
            (dict(strides=((1 << 62),), shape=(8,)), ValueError, "64 bits"),
            (dict(data=("0x10", False)), ValueError, "['data'][0] must be a device address"),
            (dict(data=(-1, False)), ValueError, "['data'][0] must be a device address"),
            (dict(data=(ptr,)), TypeError, "['data'] must be a tuple (pointer, read_only)"),
            (dict(data=KeyError), TypeError, "has no 'data'"),
            (dict(shape=KeyError), TypeError, "has no 'shape'"),
            (dict(mask=object()), TypeError, "masked"),
            (dict(stream=0), ValueError, "['stream'] is 0"),
            (dict(stream="s"), TypeError, "['stream'] must be an int"),
            # a null pointer with elements, a pointer its elements cannot sit at (a GPU
            # faults on either, and the fault ends the context)
            (dict(data=(0, False)), ValueError, "null pointer", "64 elements"),
            (dict(data=(ptr + 2, False)), ValueError, "not aligned to 4 bytes"),
            (dict(typestr="<M8[s]"), TypeError, "'<M8[s]'", "kiln.as_cuda_array"),
        ]
        for change, exc, *words in cases:
            refused(lambda: launch(out, np.float32(2), cai(**change), x), exc, arg, *words)
        refused(lambda: launch(out, np.float32(2), CAI(lambda: [1]), x), TypeError, arg,
                "__cuda_array_interface__ is a list, not a dict")
        # negative strides that run before the start are a view's business: accepted
        launch(out, np.float32(2), cai(strides=(-4,)), x)
        launch(out, np.float32(2), cai(data=(0, False), shape=(0,)), x)  # empty: no pointer
        # kiln.as_cuda_array checks the same
        for change, words in ((dict(data=(0, False)), "null pointer"),
                              (dict(data=(ptr + 2, False)), "not aligned to 4 bytes")):
            try:
                kiln.as_cuda_array(cai(**change))
            except ValueError as e:
                assert words in str(e), str(e)
            else:
                raise AssertionError(change)
        try:
            kiln.as_cuda_array(cai(typestr="|S0"))
        except TypeError as e:
            assert "0 bytes" in str(e), str(e)
        else:
            raise AssertionError("|S0")
        print("ok")
    """)


def test_complex_arrays_arrive_through_the_cai():
    run("""
        @kiln.jit
        def cscale(out, a, s):
            i = kiln.grid(1)
            if i < out.size:
                out[i] = a[i] * s

        n = 64
        for ts, dt in (("<c8", np.complex64), ("<c16", np.complex128)):
            x, out = kiln.device_array(n, dt), kiln.device_array(n, dt)
            d = {"shape": (n,), "typestr": ts, "data": (x.__cuda_array_interface__["data"][0], False),
                 "strides": None, "version": 3}
            before = fake.fake_launch_count()
            cscale[1, 64](out, CAI(lambda: d), 2 - 1j)
            assert fake.fake_launch_count() == before + 1, ts
        print("ok")
    """)


def test_malformed_dlpack_tensors_are_refused():
    run("""
        class DLDevice(ctypes.Structure):
            _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

        class DLDataType(ctypes.Structure):
            _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                        ("lanes", ctypes.c_uint16)]

        class DLTensor(ctypes.Structure):
            _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                        ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                        ("shape", ctypes.POINTER(ctypes.c_int64)),
                        ("strides", ctypes.POINTER(ctypes.c_int64)),
                        ("byte_offset", ctypes.c_uint64)]

        class DLManagedTensor(ctypes.Structure):
            _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                        ("deleter", ctypes.c_void_p)]

        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype = ctypes.py_object
        new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        NAME = b"dltensor"
        n = 64
        x = kiln.device_array(n, np.float32)
        out = kiln.device_array(n, np.float32)
        ptr = x.__cuda_array_interface__["data"][0]
        keep = []

        class Tensor:
            def __init__(self, ndim=1, shape=(n,), code=2, bits=32, lanes=1, device_type=2):
                t = DLManagedTensor()
                t.dl_tensor.data = ptr
                t.dl_tensor.device = DLDevice(device_type, 0)
                t.dl_tensor.ndim = ndim
                t.dl_tensor.dtype = DLDataType(code, bits, lanes)
                sh = (ctypes.c_int64 * 8)(*shape) if shape is not None else None
                t.dl_tensor.shape = sh
                keep.append((t, sh))
                self.t = t

            def __dlpack_device__(self):
                return (2, 0)

            def __dlpack__(self, stream=None):
                return new_capsule(ctypes.addressof(self.t), NAME, None)

        launch = saxpy[1, 64]
        arg = "argument 'x' of kernel 'saxpy'"
        cases = [
            (dict(ndim=-1), TypeError, "-1 dimensions"),
            (dict(ndim=9, shape=(1,) * 8), TypeError, "9 dimensions"),
            (dict(shape=None), ValueError, "no shape"),
            (dict(shape=(-4,)), ValueError, "shape[0] is -4"),
            (dict(bits=12), TypeError, "12 bits"),
            (dict(lanes=4), TypeError, "4 lanes"),
            (dict(code=5), TypeError, "code 5"),
            (dict(code=4, bits=32), TypeError, "code 4, 32 bits"),  # bfloat16 is 16 bits
            (dict(device_type=1), TypeError, "device type 1"),
        ]
        for kw, exc, *words in cases:
            refused(lambda: launch(out, np.float32(2), Tensor(**kw), x), exc, arg, *words)
        launch(out, np.float32(2), Tensor(), x)  # the well-formed one runs
        assert params()[3] == ptr
        print("ok")
    """)
