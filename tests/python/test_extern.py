"""External CUDA device functions: kiln.declare_device and kiln.CUSource (Numba's).

Without a GPU the kernels that call them are translated for CUDA and compiled by NVRTC
(kiln.compile_ptx), and the PTX shows the external code inlined; test_gpu.py runs them.
The CPU target compiles their sources as C (the C subset of CUDA C runs on the host)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln
from kiln import float32, int32, types

TIMES2 = kiln.CUSource("""
extern "C" __device__ int times2(int *out, int a) { *out = a * 2; return 0; }
""")
# declares times2 and calls it: linked with TIMES2, which defines it
TIMES4 = kiln.CUSource("""
extern "C" __device__ int times2(int *out, int a);
extern "C" __device__ int times4(int *out, int a) { int t; times2(&t, a); *out = t * 2; return 0; }
""")
MUL_CABI = kiln.CUSource("""
extern "C" __device__ int mul12345(int a) { return a * 12345; }
extern "C" __device__ int const42() { return 42; }
extern "C" __device__ int add2(int a, int b) { return a + b + 777; }
extern "C" __device__ void store54321(int *p) { *p = 54321; }
""")


def ptx_of(kernel, sig):
    return kiln.compile_ptx(kernel, sig, cc=(8, 0))[0]


def caller(f):
    """A kernel whose one statement calls f: r[0] = f(x[0])."""
    @kiln.jit
    def kern(r, x):
        r[0] = f(x[0])
    return kern


# ---- the declaration --------------------------------------------------------------


def test_declaration_has_name_and_signature():
    for sig in (int32(float32[:]), "int32(float32[:])"):
        f = kiln.declare_device("f1", sig)
        assert f.name == "f1"
        assert f.sig.args == (float32[:],)
        assert f.sig.return_type == int32
    g = kiln.declare_device("g", "void(int32*, uint64)", abi="c")
    assert g.sig.args == (types.CPointer(int32), kiln.uint64) and g.sig.return_type == kiln.void


@pytest.mark.parametrize("sig", [(float32[:],), "(float32[:],)", "(int32)"])
def test_a_signature_without_return_type_is_a_type_error(sig):
    with pytest.raises(TypeError, match="Return type must be given"):
        kiln.declare_device("f1", sig)


def test_bad_declarations(tmp_path):
    with pytest.raises(ValueError, match="abi= is 'numba' or 'c'"):
        kiln.declare_device("f", "int32(int32)", abi="python")
    with pytest.raises(ValueError, match="C symbol"):
        kiln.declare_device("not a name", "int32(int32)")
    with pytest.raises(ValueError, match=r"Don't know how to link file with extension \.txt"):
        kiln.declare_device("f", "int32(int32)", link=[TIMES2, str(tmp_path / "f.txt")])
    with pytest.raises(FileNotFoundError, match="missing.cu"):
        kiln.declare_device("f", "int32(int32)", link=str(tmp_path / "missing.cu"))
    with pytest.raises(TypeError, match="CUSource takes CUDA C source text"):
        kiln.CUSource(42)


def test_a_source_that_is_not_utf8_is_named(tmp_path):
    # hunt29 8: a bare UnicodeDecodeError at the first launch, naming nothing
    src = tmp_path / "latin1.cu"
    src.write_bytes(b"// caf\xe9\nextern \"C\" __device__ int f(int *r, int x) { *r = x; return 0; }\n")
    f = kiln.declare_device("f", "int32(int32)", link=str(src))

    @kiln.jit(link=[str(src)])
    def k(out):
        out[0] = f(3)

    with pytest.raises(kiln.CompileError, match=r"latin1.cu is not UTF-8 text \(byte 0xe9 at "
                                                r"offset 6\)"):
        k[1, 1](np.zeros(1, np.int32))


def test_host_call_is_a_type_error():
    f = kiln.declare_device("times2", "int32(int32)", link=TIMES2)
    with pytest.raises(TypeError, match="only be called from kernels"):
        f(3)


# ---- the CPU target -------------------------------------------------------------------

times2 = kiln.declare_device("times2", "int32(int32)", link=TIMES2)


@kiln.jit(target="cpu")  # the CPU target even where a GPU is usable
def use_times2(r, x):
    i = kiln.grid(1)
    if i < r.size:
        r[i] = times2(x[i])


times4 = kiln.declare_device("times4", "int32(int32)", link=[TIMES2, TIMES4])
mul = kiln.declare_device("mul12345", "int32(int32)", link=MUL_CABI, abi="c")
const42 = kiln.declare_device("const42", "int32()", link=MUL_CABI, abi="c")
add2 = kiln.declare_device("add2", "int32(int32, int32)", link=MUL_CABI, abi="c")
store = kiln.declare_device("store54321", "void(CPointer(int32))", link=MUL_CABI, abi="c")
BLOCK = kiln.CUSource("""
/* a block of C declarations: extern "C" { ... } and its brace go, the rest is C */
extern "C" {
__device__ __forceinline__ int twice(int a) { return a * 2; }
__device__ int plus_twice(long long *out, int a, int b) { *out = a + twice(b); return 0; }
}
""")
plus_twice = kiln.declare_device("plus_twice", "int64(int32, int32)", link=BLOCK)


def use_all(r, x):
    i = kiln.grid(1)
    if i < r.size:
        r[i] = (times2(x[i]) + times4(x[i]) * 10 + mul(x[i]) + add2(x[i], 1) * 7
                + const42() + plus_twice(x[i], 3))


@kiln.jit("void(int32*)", target="cpu")
def use_store(p):
    store(p)


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_the_cpu_target_compiles_the_sources_as_c(monkeypatch, tiers):
    # the C subset of CUDA C runs on the host: Numba's ABI and the C ABI, declarations
    # taken from the sources, extern "C" blocks, __forceinline__; tier 0 (tcc) too
    from kiln import _kiln

    monkeypatch.setenv("KILN_TIERS", tiers)
    loads = _kiln.tier_stats()["tier0_loads"]
    x = np.arange(40, dtype=np.int32)
    r = np.zeros_like(x)
    kiln.jit(target="cpu", cache=False)(use_all)[2, 32](r, x)  # a new dispatcher each time
    want = x * 2 + x * 40 + x * 12345 + (x + 1 + 777) * 7 + 42 + x + 6
    assert np.array_equal(r, want)
    if tiers == "tcc" and _kiln.tier_stats()["available"]:
        assert _kiln.tier_stats()["tier0_loads"] == loads + 1
    p = np.zeros(1, np.int32)
    use_store[1, 1](p.ctypes.data)
    assert p[0] == 54321


def test_the_cpu_target_reports_a_source_it_cannot_compile_as_c():
    cxx = kiln.declare_device("cxx", "int32(int32)", link=kiln.CUSource(
        'extern "C" __device__ int cxx(int *out, int a) { int &r = *out; r = a; return 0; }'))

    @kiln.jit(target="cpu")
    def k(r):
        r[0] = cxx(1)

    with pytest.raises(kiln.CompileError, match="(?s)rejected a source linked into the kernel.*"
                                                "<CUSource>:1"):
        k[1, 1](np.zeros(1, np.int32))


def test_a_kernel_s_own_link_sources_stay_the_gpu_s_on_the_cpu():
    # @jit(link=...) sources that no called function needs are not compiled for the host
    @kiln.jit(target="cpu", link=[kiln.CUSource("#include <cuda_fp16.h>\n__device__ void g() {}")])
    def k(r):
        r[0] = 5

    r = np.zeros(1, np.int32)
    k[1, 1](r)
    assert r[0] == 5


# ---- CUDA code: Numba's ABI -------------------------------------------------------------

SIG = "void(int32[::1], int32[::1])"


def test_cu_source_is_compiled_into_the_kernel():
    k = kiln.declare_device("kmul", "int32(int32)", link=kiln.CUSource(
        'extern "C" __device__ int kmul(int *out, int a) { *out = a * 98765; return 0; }'))

    @kiln.jit
    def kern(r, x):
        i = kiln.grid(1)
        if i < r.size:
            r[i] = k(x[i])

    ptx = ptx_of(kern, SIG)
    assert "98765" in ptx          # the external body, inlined into the kernel
    assert "call" not in ptx.split(".entry")[1]


@pytest.mark.parametrize("make", [list, tuple, set])
def test_several_sources_each_once(make):
    times4 = kiln.declare_device("times4", "int32(int32)", link=make([TIMES2, TIMES4]))

    @kiln.jit
    def kern(r, x):
        i = kiln.grid(1)
        if i < r.size:
            r[i] = times4(x[i]) + times2(x[i])  # TIMES2 reached twice: pasted once

    ptx_of(kern, SIG)


@kiln.jit
def calls_times2(x):  # a plain @jit function called from a kernel is a device function
    return times2(x)


@kiln.jit
def calls_calls(x):
    return calls_times2(x)


def test_declared_in_called_functions_and_the_kernel():
    @kiln.jit
    def kern(r, x):
        i = kiln.grid(1)
        if i < r.size:
            r[i] = calls_calls(x[i]) + calls_times2(x[i] + i) + times2(x[i])

    ptx_of(kern, SIG)


def test_void_function_with_numba_abi_and_pointer_argument():
    bump = kiln.declare_device("bump", types.void(types.CPointer(int32)), link=kiln.CUSource(
        'extern "C" __device__ int bump(void *out, int *a) { a[0] = a[1] + 31337; return 0; }'))

    @kiln.jit
    def kern(p):
        bump(p)

    ptx = ptx_of(kern, "void(int32*)")
    assert "31337" in ptx


def test_cu_file_on_disk_and_cuda_headers(tmp_path):
    f = tmp_path / "rng.cu"
    f.write_text(textwrap.dedent("""\
        #include <curand_kernel.h>
        extern "C" __device__ int random_number(unsigned int *out, unsigned long long seed) {
          curandStateXORWOW_t state;
          curand_init(seed, 1, 0, &state);
          *out = curand(&state);
          return 0;
        }
        """))
    # int32 where the source says unsigned int, as in Numba's test: kiln takes the source's types
    rnd = kiln.declare_device("random_number", types.int32(types.uint64), link=[str(f)])

    @kiln.jit
    def kern(x, seed):
        x[0] = rnd(seed)

    assert "curand" in open(f).read()
    ptx_of(kern, "void(uint32[::1], uint64)")


def test_an_error_in_the_external_source_names_its_file_and_line(tmp_path):
    cu = tmp_path / "bad.cu"
    cu.write_text('// line 1\n\nextern "C" __device__ int bad(int *out, int a) '
                  '{ *out = a +; return 0; }\n')
    bad = kiln.declare_device("bad", "int32(int32)", link=str(cu))
    with pytest.raises(kiln.CompileError) as e:
        ptx_of(caller(bad), SIG)
    msg = str(e.value)
    assert "program with external CUDA C sources" in msg
    assert f"{cu}(3): error" in msg and "external CUDA C sources" in msg


def test_a_declaration_without_link_uses_another_declarations_source():
    # Numba's jitlink.cu pattern: a `void *out` for a void function, and array_mutator's
    # definition linked by the declaration of the function that calls it
    mutator_cu = kiln.CUSource(
        'extern "C" __device__ int array_mutator(void *out, int *a) { a[0] = a[1]; return 0; }')
    user_cu = kiln.CUSource(
        'extern "C" __device__ int array_mutator(void *out, int *a);\n'
        'extern "C" __device__ int use_array_mutator(void *out, int *a)'
        ' { array_mutator(out, a); return 0; }')
    use = kiln.declare_device("use_array_mutator", types.void(types.CPointer(int32)),
                              link=[mutator_cu, user_cu])
    direct = kiln.declare_device("array_mutator", types.void(types.CPointer(int32)))

    @kiln.jit
    def kern(p):
        use(p)
        direct(p)

    ptx_of(kern, "void(int32*)")


def test_arrays_are_refused_at_the_call():
    f = kiln.declare_device("takes_array", "int32(float32[:])", link=TIMES2)

    @kiln.jit
    def kern(r, x):
        r[0] = f(x)

    with pytest.raises(kiln.CompileError, match=r"(?s)external functions take real scalars "
                                                r"and pointers.*r\[0\] = f\(x\)"):
        kiln.compile_ptx(kern, "void(int32[::1], float32[::1])")


# ---- CUDA code: the C ABI ---------------------------------------------------------------


def test_c_abi_calls():
    mul = kiln.declare_device("mul12345", "int32(int32)", link=MUL_CABI, abi="c")
    c42 = kiln.declare_device("const42", "int32()", link=MUL_CABI, abi="c")
    add2 = kiln.declare_device("add2", "int32(int32, int32)", link=MUL_CABI, abi="c")
    store = kiln.declare_device("store54321", types.void(types.CPointer(int32)), link=MUL_CABI,
                                abi="c")

    @kiln.jit
    def kern(r, x, p):
        i = kiln.grid(1)
        if i < r.size:
            r[i] = mul(x[i]) + c42() + add2(x[i], i)
            store(p)

    ptx = ptx_of(kern, "void(int32[::1], int32[::1], int32*)")
    for v in ("12345", "54321"):
        assert v in ptx


# ---- the cache key holds the sources ------------------------------------------------------

CHILD = """
import kiln, sys
f = kiln.declare_device("fromfile", "int32(int32)", link=sys.argv[1])
@kiln.jit
def kern(r, x):
    r[0] = f(x[0])
print(kiln.compile_ptx(kern, "void(int32[::1], int32[::1])", cc=(8, 0))[0])
"""


def test_an_edited_cu_file_is_a_new_cache_key(tmp_path):
    cu = tmp_path / "f.cu"
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"))

    def run(mult):
        cu.write_text('extern "C" __device__ int fromfile(int *out, int a) '
                      f'{{ *out = a * {mult}; return 0; }}\n')
        out = subprocess.run([sys.executable, "-c", CHILD, str(cu)], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert "11111" in run(11111)
    second = run(22222)  # the same kernel and cache: a stale hit would print 11111
    assert "22222" in second and "11111" not in second


def test_jit_link_pastes_the_kernels_own_sources(tmp_path):
    # Numba's @cuda.jit(link=[...]): a declaration without link=, defined by the kernel's
    cu = tmp_path / "mutator.cu"
    cu.write_text('extern "C" __device__ int mutate(void *out, int *a) '
                  '{ a[0] = a[1] + 4242; return 0; }\n')
    mutate = kiln.declare_device("mutate", types.void(types.CPointer(int32)))

    @kiln.jit(link=[str(cu), TIMES2])
    def kern(p, r):
        mutate(p)
        r[0] = times2(r[1])  # TIMES2 also comes with times2's declaration: pasted once

    ptx = ptx_of(kern, "void(int32*, int32[::1])")
    assert "4242" in ptx


def test_two_declarations_of_one_function():
    # agreeing ones (another source list) share one wrapper; differing ones are refused
    again = kiln.declare_device("times2", "int32(int32)", link=[TIMES2, TIMES4])
    other = kiln.declare_device("times2", "int64(int64)", link=TIMES2)

    @kiln.jit
    def agree(r, x):
        r[0] = times2(x[0]) + again(x[1])

    ptx_of(agree, SIG)

    @kiln.jit
    def differ(r, x):
        r[0] = times2(x[0]) + other(x[1])

    with pytest.raises(kiln.CompileError, match="two declarations of external device "
                                                "function 'times2' differ"):
        ptx_of(differ, SIG)


def test_use_cooperative_makes_the_caller_a_cooperative_kernel():
    from kiln import _compile, _kiln
    src = kiln.CUSource('#include <cooperative_groups.h>\n'
                        'extern "C" __device__ int gsync(int *out) '
                        '{ cooperative_groups::this_grid().sync(); return 0; }')
    plain = kiln.declare_device("gsync", "void()", link=src)
    coop = kiln.declare_device("gsync", "void()", link=src, use_cooperative=True)

    @kiln.jit
    def k1(r):
        plain()

    @kiln.jit
    def k2(r):
        coop()

    key = _kiln.parse_signature("void(int32[::1])")[1]
    assert "#define KILN_COOPERATIVE" not in _compile._translate(k1, key, 1, 80).source
    assert "#define KILN_COOPERATIVE 1" in _compile._translate(k2, key, 1, 80).source
    ptx_of(k2, "void(int32[::1])")


def test_pointer_results():
    # a C-ABI function returning a pointer; Numba's cta_barrier pattern: a CPointer result
    # declared for an `int *ret` out parameter, the result unused
    src = kiln.CUSource(
        'extern "C" __device__ int *nxt(int *p) { return p + 1; }\n'
        'extern "C" __device__ int barrier_like(int *ret) { __syncthreads(); return 0; }')
    nxt = kiln.declare_device("nxt", types.CPointer(int32)(types.CPointer(int32)), link=src,
                              abi="c")
    barrier = kiln.declare_device("barrier_like", "int32*()", link=src)

    @kiln.jit
    def kern(p):
        q = nxt(p)
        q[0] = 2468
        barrier()

    ptx = ptx_of(kern, "void(int32*)")
    assert "2468" in ptx and "bar.sync" in ptx


def test_an_error_in_a_linked_source_blames_that_source(tmp_path):
    """A link= source whose header is missing: the CPU build says the linked source failed,
    not that kiln generated bad code (hunt25 6)."""
    src = tmp_path / "f.cu"
    src.write_text('#include "missing_header.cuh"\n'
                   'extern "C" __device__ int twice(int *r, int x) { *r = 2 * x; return 0; }\n')
    twice = kiln.declare_device("twice", "int32(int32)", link=str(src))

    @kiln.jit(target="cpu")
    def k(a):
        a[0] = twice(a[0])

    with pytest.raises(kiln.CompileError) as e:
        k[1, 1](np.ones(1, np.int32))
    msg = str(e.value)
    assert "rejected a source linked into the kernel" in msg and "missing_header.cuh" in msg
    assert "kiln's code generation" not in msg


# ---- headers a linked source includes ------------------------------------------------


def _headers(tmp_path):
    """a .cu that includes a header beside it ("quoted", which includes another with
    #pragma once, twice) and one in a search path (<angled>)."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "twice.h").write_text(
        '#pragma once\n#include "base.h"\n__device__ static int twice(int a) { return BASE * a; }\n')
    (tmp_path / "src" / "base.h").write_text("#pragma once\n#define BASE 2\n")
    (tmp_path / "inc" / "offset.h").write_text(
        "#ifndef OFFSET_H\n#define OFFSET_H\n#define OFFSET 1000\n#endif\n")
    cu = tmp_path / "src" / "f.cu"
    cu.write_text('#include "twice.h"\n#include "base.h"\n#include <offset.h>\n'
                  'extern "C" __device__ int twice_off(int *out, int a) '
                  '{ *out = twice(a) + OFFSET; return 0; }\n')
    return cu


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_headers_beside_the_source_and_in_the_search_paths(tmp_path, monkeypatch, target):
    cu = _headers(tmp_path)
    monkeypatch.setattr(kiln.config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS",
                        f"{tmp_path / 'nowhere'}:{tmp_path / 'inc'}")
    f = kiln.declare_device("twice_off", "int32(int32)", link=str(cu))

    @kiln.jit
    def kern(r, x):
        i = kiln.grid(1)
        if i < r.size:
            r[i] = f(x[i])

    if target == "cuda":
        ptx = ptx_of(kern, SIG)
        assert "1000" in ptx
        return
    x = np.arange(10, dtype=np.int32)
    r = np.zeros_like(x)
    kiln.jit(target="cpu", cache=False)(kern.py_func)[1, 32](r, x)
    np.testing.assert_array_equal(r, 2 * x + 1000)


def test_numbas_own_config_module_adds_search_paths(tmp_path, monkeypatch):
    # Numba's doc example sets numba.cuda.config.CUDA_NVRTC_EXTRA_SEARCH_PATHS (a program
    # that kept `from numba.cuda import config`): kiln reads that module's value too
    import types

    cu = _headers(tmp_path)
    monkeypatch.setattr(kiln.config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", "")
    numba_config = types.ModuleType("numba.cuda.config")
    numba_config.CUDA_NVRTC_EXTRA_SEARCH_PATHS = str(tmp_path / "inc")
    monkeypatch.setitem(sys.modules, "numba.cuda.config", numba_config)
    f = kiln.declare_device("twice_off", "int32(int32)", link=str(cu))
    assert "1000" in ptx_of(caller(f), SIG)
    numba_config.CUDA_NVRTC_EXTRA_SEARCH_PATHS = 7
    g = kiln.declare_device("twice_off", "int32(int32)", link=str(cu))
    with pytest.raises(TypeError, match=r"numba.cuda.config.CUDA_NVRTC_EXTRA_SEARCH_PATHS is "
                                        r"a string"):
        ptx_of(caller(g), SIG)


def test_a_header_not_found_is_the_compilers_error_at_the_include(tmp_path, monkeypatch):
    cu = _headers(tmp_path)   # <offset.h> is in no search path now
    monkeypatch.setattr(kiln.config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", "")
    f = kiln.declare_device("twice_off", "int32(int32)", link=str(cu))
    with pytest.raises(kiln.CompileError) as e:
        ptx_of(caller(f), SIG)
    assert f"{cu}(3)" in str(e.value) and "offset.h" in str(e.value)


def test_an_edited_header_is_a_new_cache_key(tmp_path):
    cu = _headers(tmp_path)
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"),
               NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS=str(tmp_path / "inc"))
    child = CHILD.replace('"fromfile"', '"twice_off"')

    def run(offset):
        (tmp_path / "inc" / "offset.h").write_text(f"#define OFFSET {offset}\n")
        out = subprocess.run([sys.executable, "-c", child, str(cu)], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert "11111" in run(11111)
    second = run(22222)  # a stale hit would print 11111
    assert "22222" in second and "11111" not in second


def test_include_cycles_and_bad_search_paths(tmp_path, monkeypatch):
    (tmp_path / "a.h").write_text('#include "b.h"\n#define CYC_A 1\n')
    (tmp_path / "b.h").write_text('#include "a.h"\n#define CYC_B 2\n')
    cu = tmp_path / "c.cu"
    cu.write_text('#include "a.h"\n'
                  'extern "C" __device__ int ab(int *out, int x) { *out = CYC_A + CYC_B + x; return 0; }\n')
    f = kiln.declare_device("ab", "int32(int32)", link=str(cu))
    assert ptx_of(caller(f), SIG)   # each header once: the cycle ends
    monkeypatch.setattr(kiln.config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", 42)
    g = kiln.declare_device("ab", "int32(int32)", link=str(cu))
    with pytest.raises(TypeError, match="CUDA_NVRTC_EXTRA_SEARCH_PATHS is a string"):
        ptx_of(caller(g), SIG)


# ---- cffi's ffi.from_buffer (Numba's cffi support) ----------------------------------

SUM_REDUCE = kiln.CUSource(
    'extern "C" __device__ int sum_reduce(float *r, float *a, int n) '
    '{ float s = 0; for (int i = 0; i < n; i++) s += a[i]; *r = s; return 0; }')
CONSUME42 = kiln.CUSource('extern "C" __device__ void consume42(int *p) { *p = 42; }')


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_ffi_from_buffer_passes_an_array_s_first_element(target, monkeypatch):
    cffi = pytest.importorskip("cffi")  # tools/requirements-dev.txt installs it
    ffi = cffi.FFI()
    sum_reduce = kiln.declare_device("sum_reduce", "float32(CPointer(float32), int32)",
                                     link=SUM_REDUCE)
    consume = kiln.declare_device("consume42", types.void(types.CPointer(int32)),
                                  link=CONSUME42, abi="c")

    @kiln.jit
    def each(x):  # a slice of a 1-d array keeps its layout: the pointer is x[i]'s address
        i = kiln.grid(1)
        if i < len(x):
            consume(ffi.from_buffer(x[i:]))

    @kiln.jit
    def reduction(result, array, m):
        loc = kiln.local.array(4, kiln.float32)
        for i in range(4):
            loc[i] = i + 1
        ptr = ffi.from_buffer(array)
        result[0] = sum_reduce(ptr, len(array))
        result[1] = sum_reduce(ffi.from_buffer(loc), 4)
        result[2] = sum_reduce(ffi.from_buffer(m), m.size)  # an F-ordered 2-d array

    if target == "cuda":
        ptx = ptx_of(each, "void(int32[::1])")
        assert "st.u32" in ptx or "st.global.u32" in ptx
        ptx_of(reduction, "void(float32[::1], float32[::1], float32[::1, :])")
        return
    monkeypatch.setenv("KILN_TARGET", "cpu")
    x = np.zeros(10, np.int32)
    each[1, 32](x)
    assert x.tolist() == [42] * 10
    r = np.zeros(3, np.float32)
    m = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    reduction[1, 1](r, np.arange(10, dtype=np.float32), m)
    assert r.tolist() == [45.0, 10.0, 15.0]


def test_ffi_from_buffer_refuses_what_has_no_contiguous_buffer():
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    sum_reduce = kiln.declare_device("sum_reduce", "float32(CPointer(float32), int32)",
                                     link=SUM_REDUCE)

    @kiln.jit
    def strided(r, x):
        r[0] = sum_reduce(ffi.from_buffer(x[::2]), 4)

    @kiln.jit
    def scalar(r, x):
        r[0] = sum_reduce(ffi.from_buffer(x[0]), 1)

    with pytest.raises(kiln.CompileError, match=r"from_buffer\(\) of a non-contiguous array"):
        ptx_of(strided, "void(float32[::1], float32[::1])")
    with pytest.raises(kiln.CompileError, match=r"from_buffer\(\) takes an array of numbers, "
                                                r"not float32"):
        ptx_of(scalar, "void(float32[::1], float32[::1])")


def test_ffi_from_buffer_counts_as_a_write_of_its_array(monkeypatch):
    # the external function writes through the pointer: a host array's copy comes back
    # (Numba's test_cffi and test_device_func pass NumPy arrays this way)
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    mutate = kiln.declare_device("mutate1", types.void(types.CPointer(int32)), link=kiln.CUSource(
        'extern "C" __device__ int mutate1(void *out, int *a) { a[0] = a[1]; return 0; }'))

    @kiln.jit
    def kern(x):
        mutate(ffi.from_buffer(x))

    from kiln import _compile, _kiln
    _, argkey = _kiln.parse_signature("void(int32[::1])")
    assert list(_compile._translate(kern, argkey, 1, 80).written) == [True]
    monkeypatch.setenv("KILN_TARGET", "cpu")
    x = np.arange(2, dtype=np.int32)
    kern[1, 1](x)
    assert x.tolist() == [1, 1]



def test_ffi_from_buffer_through_a_subclass_of_cffi_ffi():
    cffi = pytest.importorskip("cffi")

    class MyFFI(cffi.FFI):
        pass

    ffi = MyFFI()
    consume = kiln.declare_device("consume42", types.void(types.CPointer(int32)),
                                  link=CONSUME42, abi="c")

    @kiln.jit
    def each(x):
        consume(ffi.from_buffer(x))

    assert ", 42;" in ptx_of(each, "void(int32[::1])")  # consume42 inlined: it stores 42
