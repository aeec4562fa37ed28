"""Numba's Dispatcher API beyond launching: forall, overloads, specialize, inspect_asm."""
import numpy as np
import pytest

import kiln


def make_inc():
    @kiln.jit
    def inc(x):
        i = kiln.grid(1)
        if i < x.size:
            x[i] += 1
    return inc


def test_forall_covers_every_task():
    inc = make_inc()
    # 300 tasks with the default block size: more than one block, and a ragged last one
    a = np.arange(300)
    inc.forall(a.size)(a)
    assert (a == np.arange(300) + 1).all()
    b = np.zeros(5, np.float32)
    inc.forall(b.size, tpb=2)(b)  # 3 blocks of 2 threads
    assert (b == 1).all()


def test_forall_of_no_tasks_launches_nothing():
    inc = make_inc()
    a = np.zeros(4)
    inc.forall(0)(a)
    assert (a == 0).all() and inc.signatures == []


def test_forall_refuses_a_negative_count():
    with pytest.raises(ValueError, match="Can't create ForAll with negative task count: -1"):
        make_inc().forall(-1)
    with pytest.raises(TypeError, match="task count"):
        make_inc().forall(2.0)


def test_overloads_count_each_compiled_specialisation():
    @kiln.jit
    def add(r, x, y):
        r[0] = x + y
    r = np.zeros(1)
    assert add.overloads == {}
    add[1, 1](r, 1, 1.5)
    add[1, 1](r, 1.5, 1)
    add[1, 1](r, 1.5, 1)
    assert list(add.overloads) == ["(float64[::1], int64, float64)",
                                   "(float64[::1], float64, int64)"]
    assert all(e is not None for e in add.overloads.values())


def test_specialize_makes_one_kernel_per_signature():
    inc = make_inc()
    f32 = inc.specialize(kiln.float32[::1])
    assert f32.signatures == ["(float32[::1])"]
    assert inc.specialize(kiln.float32[::1]) is f32
    i32 = inc.specialize(np.zeros(3, np.int32))  # a value: typed as a launch types it
    assert i32 is not f32 and i32.signatures == ["(int32[::1])"]
    assert len(inc.specializations) == 2
    a = np.zeros(3, np.float32)
    f32[1, 3](a)
    assert (a == 1).all()
    with pytest.raises(TypeError, match="cannot take"):  # only its own signature
        f32[1, 3](np.zeros(3))
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        f32.specialize(kiln.float32[::1])

    @kiln.jit("void(int32[::1])")
    def typed(x):
        pass
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        typed.specialize(kiln.float32[::1])


def test_inspect_asm_gives_ptx_without_a_gpu():
    # a CPU specialisation is translated for CUDA and compiled to PTX by NVRTC
    inc = make_inc()
    inc[1, 4](np.zeros(4, np.float32), )
    asm = inc.inspect_asm()
    assert list(asm) == ["(float32[::1])"]
    ptx = asm["(float32[::1])"]
    assert ".entry" in ptx and "add.f32" in ptx
    assert inc.inspect_asm("(float32[::1])") == ptx


def test_inspect_methods_take_the_signature_as_sig_or_signature():
    # LANGUAGE.md spells it k.inspect_types(sig=None); Numba's keyword is signature=
    inc = make_inc()
    inc[1, 4](np.zeros(4, np.float32))
    sig = inc.signatures[0]
    assert inc.inspect_source(sig=sig) == inc.inspect_source(signature=sig) == inc.inspect_source(sig)
    assert inc.inspect_types(sig=sig, file=False) == inc.inspect_types(sig, file=False)
    assert "add.f32" in inc.inspect_ptx(sig=sig)
    with pytest.raises(TypeError, match="not both"):
        inc.inspect_source(sig, sig=sig)


def test_launch_bounds_reach_the_cuda_entries():
    # @jit(launch_bounds=...) as Numba takes it: CUDA's __launch_bounds__ on both entries,
    # seen in the PTX NVRTC makes (no GPU needed); the CPU target runs the kernel as before
    def body(a):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = 1.0

    for lb, want, absent in ((128, [".maxntid 128, 1, 1"], [".minnctapersm", ".maxclusterrank"]),
                             ((128,), [".maxntid 128, 1, 1"], [".minnctapersm"]),
                             ((128, 2), [".minnctapersm 2"], [".maxclusterrank"]),
                             ((128, 2, 4), [".minnctapersm 2", ".maxclusterrank 4"], [])):
        k = kiln.jit(launch_bounds=lb)(body)
        a = np.zeros(10)
        k[1, 16](a)
        assert a.sum() == 10
        ptx = k.inspect_ptx()
        for w in want:
            assert ptx.count(w) == 2, (lb, w)          # kiln_entry and kiln_entry_wide
        assert ".maxntid 128, 1, 1" in ptx and not any(x in ptx for x in absent), lb
    plain = kiln.jit(body)
    plain[1, 16](np.zeros(10))
    assert ".maxntid" not in plain.inspect_ptx()
    with pytest.raises(ValueError, match="Got 4 launch bounds:"):
        kiln.jit("void(float64[::1])", launch_bounds=(128, 2, 4, 8))(body)
    for bad in ((0,), (128, -1), ()):
        with pytest.raises(ValueError, match="positive"):
            kiln.jit(launch_bounds=bad)(body)
    with pytest.raises(TypeError, match="launch_bounds"):
        kiln.jit(launch_bounds="128")(body)


def test_gpu_resources_of_a_cpu_specialisation_are_an_error():
    @kiln.jit(target="cpu")
    def k(a):
        a[0] = 1
    k[1, 1](np.zeros(1))
    with pytest.raises(RuntimeError, match="runs on the CPU target, which has no registers"):
        k.get_regs_per_thread(kiln.void(kiln.float64[::1]))


def test_type_annotation_typemap_as_numbas():
    # Numba's tests read overload._type_annotation.typemap[name].dtype
    @kiln.jit("void(int32[::1])", target="cpu")
    def f(x):
        l = kiln.local.array(10, dtype="int32")
        t = (1, 2.0)
        l[0] = x[0] + t[0]
        x[0] = l[0]
    ann = next(iter(f.overloads.values()))._type_annotation
    assert ann.typemap["l"].dtype == kiln.int32 and ann.typemap["l"] == kiln.int32[::1]
    assert ann.typemap["x"] == kiln.int32[::1]
    assert ann.typemap["t"] == kiln.types.Tuple([kiln.int64, kiln.float64])
    assert "l: array(int32, 1d, C)" in ann.text


# ---- IntEnum members: their class tells `is` apart, their signature reads as their int's --

import enum as _enum  # noqa: E402


class _Shape(_enum.IntEnum):
    circle = 1


class _Neg(_enum.IntEnum):
    two = 1


def _enum_is(a, b, out):
    out[0] = a is b


def test_enum_members_signatures_parse_back_and_plain_int_subclasses_take_no_tag(monkeypatch):
    monkeypatch.setenv("KILN_TARGET", "cpu")
    k = kiln.jit(_enum_is)
    o = np.zeros(1, np.bool_)
    k[1, 1](_Shape.circle, _Neg.two, o)
    assert not o[0]
    assert k.signatures == ["(int64, int64, bool[::1])"]
    sig = k.signatures[0]
    assert k.inspect_source(sig)  # the text parses back to the specialisation
    k.inspect_types(sig)
    for i in range(300):  # int subclasses that are not enums use up no enum tag
        t = type(f"Plain{i}", (int,), {})
        k[1, 1](t(1), t(1), o)
        assert o[0]
    e1 = _enum.IntEnum("E1", {"x": 1})
    e2 = _enum.IntEnum("E2", {"y": 1})
    k[1, 1](e1.x, e2.y, o)
    assert not o[0]


def _tuple_sum(t, out):
    out[0] = t[0] + t[1]


def test_launches_with_tuple_arguments_have_signatures_and_overloads(monkeypatch):
    import collections
    monkeypatch.setenv("KILN_TARGET", "cpu")
    point = collections.namedtuple("Point", "x y")
    k = kiln.jit(_tuple_sum)
    o = np.zeros(1)
    k[1, 1]((1.0, 2.0), o)
    k[1, 1]((1.0, 2), o)
    k[1, 1](point(1.0, 2.0), o)
    assert o[0] == 3.0
    want = ["(UniTuple(float64 x 2), float64[::1])", "(Tuple(float64, int64), float64[::1])",
            "(Point(float64, float64), float64[::1])"]
    assert k.signatures == want
    assert list(k.overloads) == want
    for sig in want:  # each text finds its specialisation
        assert "t__1" in k.inspect_types(sig, file=False)
        assert k.inspect_source(sig)
    assert k.inspect_types(file=False).count("kernel _tuple_sum") == 3
