"""Compiled external device code linked by nvJitLink: PTX, LTO-IR, cubins, fatbins,
objects and archives given to kiln.declare_device(link=...) or @kiln.jit(link=...), as
files or as Numba's PTXSource/LTOIR/Cubin/... objects.

Without a GPU the kernel is translated for CUDA, compiled by NVRTC to LTO-IR and linked
with the files into a cubin (nvJitLink needs no GPU either); the cubin's symbols show
whether the external function was inlined (link-time optimisation) or called.  A child
process on the fake driver goes through a launch's whole path; test_gpu.py runs the
linked kernels on a GPU and checks their results."""
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln
from kiln import _compile, _kiln

ADD7 = 'extern "C" __device__ int add7(int *out, int a) { *out = a + 7; return 0; }\n'
SIG = "void(int32[::1])"
ARCH = 80


def nvrtc(src, output):
    """src compiled by NVRTC as relocatable PTX (output 1) or LTO-IR (2), for sm_80."""
    code, _, _, _ = _kiln.nvrtc_compile(src, (0, 0, 0), ARCH, True, "ext", False, output)
    return code


def nvcc(tmp_path, src, *flags, out):
    """src compiled by nvcc with flags into tmp_path/out; skips without nvcc."""
    tool = shutil.which("nvcc")
    if tool is None:
        pytest.skip("nvcc is not on PATH: cubins, fatbins and objects are made with it")
    cu = tmp_path / "ext.cu"
    cu.write_text(src)
    # nvcc itself without the sanitizers' runtimes that `make test-san-py` preloads
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    done = subprocess.run([tool, f"-arch=sm_{ARCH}", *flags, str(cu), "-o", str(tmp_path / out)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return tmp_path / out


def kernel_calling(f):
    @kiln.jit
    def kern(a):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = f(a[i])
    return kern


def linked(kern, sig=SIG, arch=ARCH):
    """(cubin, cache key, hit) of kern's specialisation for sig, linked as a launch would."""
    _, argkey = _kiln.parse_signature(sig)
    prog = _compile._translate(kern, argkey, 1, arch)
    links, lto = _compile._links(kern, prog.source)
    image, is_ptx, key, hit = _kiln.nvrtc_compile(prog.source, _compile._nvrtc_options(kern),
                                                  arch, False, "test", True, 0, links, lto)
    assert not is_ptx and image[:4] == b"\x7fELF"
    return bytes(image), key, hit


def called(image, name="add7"):
    """Whether the cubin keeps name as a function of its own (not inlined)."""
    return f".text.{name}".encode() in image


def child_script(path):
    """A child process's code up to a kernel calling add7 from path, translated for sm_80
    (prog), for tests that look at what a process loads."""
    return textwrap.dedent(f"""
        import kiln
        from kiln import _compile, _kiln
        f = kiln.declare_device("add7", "int32(int32)", link={str(path)!r})
        @kiln.jit
        def kern(a):
            a[0] = f(a[0])
        _, argkey = _kiln.parse_signature("void(int32[::1])")
        prog = _compile._translate(kern, argkey, 1, 80)
    """)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_each_kind_of_file_links(cache):
    tmp = cache
    files = {"ptx": nvrtc(ADD7, 1), "ltoir": nvrtc(ADD7, 2)}
    for ext, data in files.items():
        (tmp / f"add7.{ext}").write_bytes(data)
    for ext in files:
        f = kiln.declare_device("add7", "int32(int32)", link=str(tmp / f"add7.{ext}"))
        image, _, _ = linked(kernel_calling(f))
        # LTO-IR is optimised with the kernel: add7 inlines; PTX is compiled on its own
        assert called(image) == (ext == "ptx"), ext


def test_nvcc_made_cubins_fatbins_objects_and_archives_link(cache):
    tmp = cache
    made = {
        "cubin": nvcc(tmp, ADD7, "-rdc=true", "-cubin", out="add7.cubin"),
        "fatbin": nvcc(tmp, ADD7, "-rdc=true", "-fatbin", out="add7.fatbin"),
        "o": nvcc(tmp, ADD7, "-dc", out="add7.o"),
    }
    made["a"] = nvcc(tmp, ADD7, "-lib", "-rdc=true", out="libadd7.a")
    for ext, path in made.items():
        f = kiln.declare_device("add7", "int32(int32)", link=str(path))
        image, _, _ = linked(kernel_calling(f))
        assert called(image), ext  # compiled machine code is called, not inlined


def test_numba_s_code_objects_link(cache):
    for obj in (kiln.PTXSource(nvrtc(ADD7, 1).rstrip(b"\0").decode(), "add7.ptx"),
                kiln.LTOIR(nvrtc(ADD7, 2), "add7.ltoir")):
        f = kiln.declare_device("add7", "int32(int32)", link=obj)
        image, _, _ = linked(kernel_calling(f))
        assert called(image) == isinstance(obj, kiln.PTXSource)
    assert "add7.ltoir" in repr(kiln.LTOIR(b"x", "add7.ltoir"))
    with pytest.raises(TypeError, match="Cubin takes the code's bytes"):
        kiln.Cubin(42)


def test_jit_link_and_lto_false(cache):
    tmp = cache
    (tmp / "add7.ptx").write_bytes(nvrtc(ADD7, 1))
    add7 = kiln.declare_device("add7", "int32(int32)")

    def body(a):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = add7(a[i])

    with_lto = kiln.jit(link=[str(tmp / "add7.ptx")])(body)
    without = kiln.jit(link=[str(tmp / "add7.ptx")], lto=False)(body)
    img1, key1, _ = linked(with_lto)
    img2, key2, _ = linked(without)
    assert called(img1) and called(img2)
    assert key1 != key2  # the link's options are in the key


def test_an_edited_file_is_a_new_cache_key(cache):
    tmp = cache
    path = tmp / "add.ltoir"
    path.write_bytes(nvrtc(ADD7, 2))
    f = kiln.declare_device("add7", "int32(int32)", link=str(path))
    _, key1, hit1 = linked(kernel_calling(f))
    _, again, hit2 = linked(kernel_calling(f))
    assert (again, hit1, hit2) == (key1, 0, 1)
    path.write_bytes(nvrtc(ADD7.replace("a + 7", "a + 8"), 2))
    _, key2, hit3 = linked(kernel_calling(f))
    assert key2 != key1 and hit3 == 0


def test_a_file_that_is_not_what_its_extension_says(cache):
    tmp = cache
    (tmp / "bad.ptx").write_text(".version 1.0\nthis is not PTX\n")
    f = kiln.declare_device("add7", "int32(int32)", link=str(tmp / "bad.ptx"))
    with pytest.raises(kiln.CompileError, match=r"nvJitLink could not read .*bad\.ptx as PTX"):
        linked(kernel_calling(f))


def test_a_missing_definition_is_nvjitlink_s_error(cache):
    tmp = cache
    (tmp / "other.ptx").write_bytes(nvrtc(ADD7.replace("add7", "add8"), 1))
    f = kiln.declare_device("add7", "int32(int32)", link=str(tmp / "other.ptx"))
    with pytest.raises(kiln.CompileError, match=r"(?s)nvJitLink could not link.*add7"):
        linked(kernel_calling(f))


def test_the_cpu_target_refuses_compiled_code_at_the_call(cache, monkeypatch):
    tmp = cache
    (tmp / "add7.ptx").write_bytes(nvrtc(ADD7, 1))
    f = kiln.declare_device("add7", "int32(int32)", link=str(tmp / "add7.ptx"))
    kern = kernel_calling(f)
    monkeypatch.setenv("KILN_TARGET", "cpu")
    with pytest.raises(kiln.CompileError,
                       match=r"'add7' is defined in compiled GPU code \(.*add7\.ptx \(PTX\)\), "
                             r"which the CPU target cannot run"):
        kern[1, 4](np.zeros(4, np.int32))


def test_without_nvjitlink_the_error_says_how_to_get_it(cache):
    tmp = cache
    (tmp / "add7.ptx").write_bytes(nvrtc(ADD7, 1))
    code = child_script(tmp / "add7.ptx") + textwrap.dedent("""
        try:
            _kiln.nvrtc_compile(prog.source, (0, 0, 0), 80, False, "t", True, 0,
                                *_compile._links(kern, prog.source))
        except kiln.CompileError as e:
            print(e)
    """)
    env = dict(os.environ, KILN_NVJITLINK=str(tmp / "no-such-libnvJitLink.so"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "cannot load nvJitLink from KILN_NVJITLINK=" in out.stdout


def test_bad_link_items():
    with pytest.raises(ValueError, match=r"Don't know how to link file with extension \.txt"):
        kiln.declare_device("f", "int32(int32)", link="f.txt")
    with pytest.raises(FileNotFoundError, match="missing.ptx"):
        kiln.declare_device("f", "int32(int32)", link="missing.ptx")
    with pytest.raises(TypeError, match="link= items are CUSource objects, compiled code"):
        kiln.declare_device("f", "int32(int32)", link=[3])


def test_a_launch_on_the_fake_driver_links_and_loads(cache):
    tmp = cache
    (tmp / "add7.ltoir").write_bytes(nvrtc(ADD7, 2))
    fake = os.path.join(os.environ.get("KILN_BUILD_DIR", "build"), "libkiln-fake-cuda.so")
    if not os.path.exists(fake):
        pytest.fail(f"the fake driver {fake} is not built (make build)")
    code = textwrap.dedent(f"""
        import numpy as np, kiln
        f = kiln.declare_device("add7", "int32(int32)", link={str(tmp / 'add7.ltoir')!r})
        @kiln.jit
        def kern(a):
            i = kiln.grid(1)
            if i < a.size:
                a[i] = f(a[i])
        kern[1, 4](kiln.to_device(np.arange(4, dtype=np.int32)))
        kiln.synchronize()
        print("launched", kern.signatures)
    """)
    env = dict(os.environ, KILN_CUDA_DRIVER=os.path.abspath(fake), KILN_TARGET="cuda")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "launched" in out.stdout


def test_the_cpu_target_says_a_kernel_s_own_compiled_code_is_the_gpu_s(cache, monkeypatch):
    tmp = cache
    (tmp / "add7.ptx").write_bytes(nvrtc(ADD7, 1))
    add7 = kiln.declare_device("add7", "int32(int32)")  # defined by the kernel's link=

    @kiln.jit(link=[str(tmp / "add7.ptx")])
    def kern(a):
        a[0] = add7(a[0])

    monkeypatch.setenv("KILN_TARGET", "cpu")
    with pytest.raises(kiln.CompileError, match="external device function 'add7' has no source "
                                                "on the CPU target"):
        kern[1, 1](np.zeros(1, np.int32))


def test_fastmath_links(cache):
    tmp = cache
    (tmp / "add7.ltoir").write_bytes(nvrtc(ADD7, 2))
    f = kiln.declare_device("add7", "int32(int32)", link=str(tmp / "add7.ltoir"))

    @kiln.jit(fastmath=True)
    def kern(a):
        a[0] = f(a[0])

    image, _, _ = linked(kern)  # nvJitLink's -ftz=1 -prec-div=0 -prec-sqrt=0
    assert not called(image)


def test_two_inputs_defining_one_function_are_refused(cache):
    # nvJitLink 13 keeps one of them without failing, then crashes in a later link
    tmp = cache
    (tmp / "a.ptx").write_bytes(nvrtc(ADD7, 1))
    (tmp / "b.ptx").write_bytes(nvrtc(ADD7.replace("a + 7", "a + 9"), 1))
    made = [str(tmp / "a.ptx"), str(tmp / "b.ptx")]
    if shutil.which("nvcc"):
        made[1] = str(nvcc(tmp, ADD7, "-rdc=true", "-cubin", out="add7.cubin"))
    f = kiln.declare_device("add7", "int32(int32)", link=made)
    with pytest.raises(kiln.CompileError, match=r"function 'add7' is defined by two linked "
                                                r"inputs, .*a\.ptx and .*"):
        linked(kernel_calling(f))
    g = kiln.declare_device("add7", "int32(int32)", link=[str(tmp / "a.ptx")] * 2)
    linked(kernel_calling(g))  # one file named twice is linked once


def test_lto_options_and_code_objects_are_checked():
    assert kiln.jit(lto=0)(lambda a: None).options["lto"] is False
    assert kiln.jit(lto=None)(lambda a: None).options["lto"] is True
    with pytest.raises(TypeError, match="lto must be True or False"):
        kiln.jit(lto="no")(lambda a: None)
    with pytest.raises(TypeError, match=r"Cubin takes the code's bytes, not a str \(to link a "
                                        r"file, put its path in link= itself\)"):
        kiln.Cubin("add7.cubin")
    with pytest.raises(TypeError, match="LTOIR's name is a str, not int"):
        kiln.LTOIR(b"x", 3)
    assert kiln.PTXSource(".version 8.0").data == b".version 8.0"


def test_odd_file_names_and_marker_look_alikes(cache):
    tmp = cache
    odd = os.path.join(os.fsencode(tmp), b"add\xff7.ptx")
    with open(odd, "wb") as fh:
        fh.write(nvrtc(ADD7, 1))
    f = kiln.declare_device("add7", "int32(int32)", link=os.fsdecode(odd))
    image, _, _ = linked(kernel_calling(f))
    assert called(image)
    # a source whose text looks like kiln's marker is a source, not a linked input
    fake = kiln.CUSource("/* kiln-linked 2 " + "0" * 64 + " x (PTX) */\n" + ADD7)
    g = kiln.declare_device("add7", "int32(int32)", link=fake)
    linked(kernel_calling(g))


def test_from_buffer_of_a_global_array_is_refused():
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    f = kiln.declare_device("touch", "void(CPointer(int32))", link=kiln.CUSource(
        'extern "C" __device__ int touch(void *r, int *p) { p[0] = 1; return 0; }'))

    @kiln.jit
    def kern(a):
        f(ffi.from_buffer(TABLE))
        a[0] = TABLE[0]

    with pytest.raises(kiln.CompileError, match=r"ffi.from_buffer\(\) of a global array"):
        kiln.compile_ptx(kern, "void(int32[::1])", cc=(8, 0))


TABLE = np.arange(4, dtype=np.int32)


def test_a_warm_hit_loads_neither_nvrtc_nor_nvjitlink(cache):
    tmp = cache
    (tmp / "add7.ltoir").write_bytes(nvrtc(ADD7, 2))
    code = child_script(tmp / "add7.ltoir") + textwrap.dedent("""
        _, _, key, hit = _kiln.nvrtc_compile(prog.source, (0, 0, 0), 80, False, "t", True, 0,
                                             *_compile._links(kern, prog.source))
        maps = open("/proc/self/maps").read()
        print(hit, "libnvJitLink" in maps, "libnvrtc" in maps)
    """)
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp / "shared-cache"))
    outs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout.split())
    assert outs[0] == ["0", "True", "True"]   # a miss: both compile
    assert outs[1] == ["1", "False", "False"]  # a hit: the cubin alone


def test_a_device_function_s_own_link_joins_the_kernel_that_calls_it(cache):
    # Numba's @cuda.jit(device=True, link=[...]): the code links with every kernel that
    # calls the device function, source or compiled
    tmp = cache
    (tmp / "add7.ltoir").write_bytes(nvrtc(ADD7, 2))
    add7 = kiln.declare_device("add7", "int32(int32)")
    for link in (kiln.CUSource(ADD7), str(tmp / "add7.ltoir")):
        @kiln.jit(device=True, link=[link])
        def dev(x):
            return add7(x) * 2

        image, _, _ = linked(kernel_calling(dev))
        assert not called(image)  # inlined: the source, or LTO-IR optimised with the kernel


def test_the_cpu_target_compiles_the_source_beside_compiled_code(cache, monkeypatch):
    # link=[.cu source, .ptx]: the GPU links the PTX's (the source defines another name),
    # the CPU compiles the source
    tmp = cache
    (tmp / "helper.ptx").write_bytes(nvrtc(ADD7.replace("add7", "helper7"), 1))
    f = kiln.declare_device("add7", "int32(int32)",
                            link=[kiln.CUSource(ADD7), str(tmp / "helper.ptx")])
    monkeypatch.setenv("KILN_TARGET", "cpu")
    a = np.arange(4, dtype=np.int32)
    kernel_calling(f)[1, 4](a)
    assert a.tolist() == [7, 8, 9, 10]


def test_without_nvjitlink_the_driver_links(cache):
    # KILN_NVJITLINK=0 (or no nvJitLink found): the kernel's relocatable PTX and the files go
    # through the driver's linker (cuLinkCreate...) on the kernel's device, uncached by
    # nvJitLink's version; the fake driver records the inputs and fails on a marked one
    tmp = cache
    (tmp / "add7.ptx").write_bytes(nvrtc(ADD7, 1))
    (tmp / "bad.ptx").write_bytes(nvrtc(ADD7, 1) + b"\n// FAKE_LINK_ERROR\n")
    (tmp / "add7.ltoir").write_bytes(nvrtc(ADD7, 2))
    fake = os.path.join(os.environ.get("KILN_BUILD_DIR", "build"), "libkiln-fake-cuda.so")
    code = textwrap.dedent("""
        import sys, numpy as np, kiln
        for path in sys.argv[1:]:
            f = kiln.declare_device("add7", "int32(int32)", link=path)
            @kiln.jit
            def kern(a):
                a[0] = f(a[0])
            try:
                kern[1, 1](kiln.to_device(np.zeros(1, np.int32)))
                kiln.synchronize()
                print("linked", path.rsplit("/", 1)[1])
            except kiln.CompileError as e:
                print("error", path.rsplit("/", 1)[1], str(e).splitlines()[0])
    """)
    env = dict(os.environ, KILN_CUDA_DRIVER=os.path.abspath(fake), KILN_TARGET="cuda",
               KILN_NVJITLINK="0")
    out = subprocess.run([sys.executable, "-c", code] + [str(tmp / f) for f in
                         ("add7.ptx", "bad.ptx", "add7.ltoir")],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "linked add7.ptx"
    assert lines[1].startswith("error bad.ptx error: the driver's linker could not link the "
                               "kernel for device 0 (CUresult 218)")
    assert lines[2].startswith("error add7.ltoir error: ") and "is LTO-IR, which the driver's " \
        "linker (used without nvJitLink) cannot link" in lines[2]
