"""reduce-overhead's CUDA graphs, host side, on tests/fake_cuda (no GPU): the graph is built
and instantiated once per record; a replay with new buffers sets the changed kernel nodes'
parameters in the instantiated graph (cuGraphExecKernelNodeSetParams) and never builds or
instantiates again; what a step does that a graph cannot hold runs eagerly with a warning."""
import textwrap

from test_fake_driver import run


GRAPH = """
import ctypes
def graphs():
    out = (ctypes.c_long * 4)()
    fake.fake_graph_counts(out)
    return dict(zip(("created", "instantiated", "set", "launched"), out))

@kiln.jit
def scale(x, s):
    i = kiln.grid(1)
    if i < x.size:
        x[i] *= s

def step(x, y):
    out = kiln.device_array(x.shape, x.dtype)
    saxpy[4, 128](out, 2.0, x, y)
    scale[4, 128](out, 3.0)
    return out
"""


def go(body):
    return run(GRAPH + textwrap.dedent(body))


def test_replay_with_new_buffers_updates_nodes_without_a_new_graph():
    out = go("""
        f = kiln.compile(step, mode="reduce-overhead")
        x, y = kiln.device_array(512, np.float32), kiln.device_array(512, np.float32)
        r0 = f(x, y)                        # recorded (eager launches) and the graph made
        g0 = graphs()
        assert g0["created"] == 1 and g0["instantiated"] == 1 and g0["launched"] == 0, g0
        assert f.records[0].graph and f.records[0].launches == 2
        r1 = f(x, y)                        # same inputs: only the new output's nodes change
        g1 = graphs()
        assert g1["instantiated"] == 1 and g1["launched"] == 1 and g1["set"] == 2, g1
        name, grid, block, params = last()
        assert params[1] == ptr(r1) and r1 is not r0
        x2, y2 = kiln.device_array(512, np.float32), kiln.device_array(512, np.float32)
        r2 = f(x2, y2)
        g2 = graphs()
        assert g2["instantiated"] == 1 and g2["created"] == 1 and g2["launched"] == 2, g2
        assert g2["set"] == 4, g2
        print("ok", _counts := kiln._kiln.record_counts())
    """)
    assert out.startswith("ok")


def test_buffers_that_take_turns_get_their_own_graph_copies():
    # a step replayed with buffer sets that recur (ping-pong) keeps an executable copy of
    # its graph per set (up to KILN_CUDA_GRAPH_EXECS = 4), so its nodes stop being set;
    # sets seen once update the least recently run copy; every replay launches the
    # pointers of its own call
    out = go("""
        def inplace(x, y):
            saxpy[4, 128](y, 2.0, x, y)
            scale[4, 128](x, 3.0)
            return y

        f = kiln.compile(inplace, mode="reduce-overhead")
        sets = [(kiln.device_array(512, np.float32), kiln.device_array(512, np.float32))
                for _ in range(6)]
        A, B = sets[0], sets[1]
        f(*A)                                   # recorded: the graph holds A's pointers
        def replay(s):
            r = f(*s)
            assert r is s[1]
            name, grid, block, params = last()  # the last node: scale on this call's x
            assert params[1] == ptr(s[0]), (params, ptr(s[0]))
        g0 = graphs()
        replay(B)                               # new: copy 0 is set to B
        g1 = graphs()
        assert g1["instantiated"] == g0["instantiated"] and g1["set"] == g0["set"] + 2, g1
        replay(A)                               # A again: a copy of its own (as recorded)
        g2 = graphs()
        assert g2["instantiated"] == g1["instantiated"] + 1 and g2["set"] == g1["set"], g2
        for _ in range(5):
            replay(B)
            replay(A)
        g3 = graphs()
        assert g3["set"] == g2["set"] and g3["instantiated"] == g2["instantiated"], g3
        assert g3["launched"] == g2["launched"] + 10
        for _ in range(3):                      # more sets than copies: all stay right
            for s in sets:
                replay(s)
        g4 = graphs()
        assert g4["instantiated"] - g0["instantiated"] == 3, g4   # 4 copies, no more
        assert g4["created"] == g0["created"]
        # a node update that fails is the call's error, and the copy it left half set (its
        # first node new, its second not) is never taken as holding the call's pointers:
        # the same call and the others then launch their own
        fake.fake_fail_graph_set(2)
        sets.append((kiln.device_array(512, np.float32), kiln.device_array(512, np.float32)))
        try:
            replay(sets[-1])                    # new pointers: the LRU copy is set
        except kiln.CudaError as e:
            assert "replaying a recorded step" in str(e), e
        else:
            raise AssertionError("no error")
        replay(sets[-1])                        # the same call again, then the others
        for s in sets + sets:
            replay(s)
        print("ok")
    """)
    assert out.startswith("ok")


def test_host_copies_in_a_step_run_it_eagerly_with_one_warning():
    out = go("""
        def copying(x):
            d = kiln.to_device(x)
            scale[1, 64](d, 2.0)
            return d.copy_to_host()

        f = kiln.compile(copying, mode="reduce-overhead")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(3):
                f(np.ones(64, np.float32))
        msgs = [str(m.message) for m in w if issubclass(m.category, kiln.PerformanceWarning)]
        assert len(msgs) == 1 and "copies from the host to the GPU" in msgs[0], msgs
        assert graphs()["created"] == 0
        print("ok")
    """)
    assert out.startswith("ok")


def test_a_reduction_read_on_the_host_runs_its_step_eagerly():
    # the result lands in mapped host memory with no copy to refuse: the reduction itself
    # refuses the recording, or replays would hand back the first call's value
    out = go("""
        @kiln.reduce
        def add(p, q):
            return p + q

        def total(d):
            scale[1, 64](d, 2.0)
            return add(d)

        d = kiln.to_device(np.ones(64, np.float32))
        add(d)                         # its plan made (which copies from the host) first
        f = kiln.compile(total, mode="reduce-overhead")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(3):
                f(d)
        msgs = [str(m.message) for m in w if issubclass(m.category, kiln.PerformanceWarning)]
        assert len(msgs) == 1 and "kiln.reduce reads its result on the host" in msgs[0], msgs
        assert graphs()["created"] == 0
        print("ok")
    """)
    assert out.startswith("ok")


def test_a_host_array_passed_to_a_gpu_kernel_is_not_recorded():
    out = go("""
        def mixed(d, h):
            saxpy[1, 64](d, 1.0, d, h)
            return d

        f = kiln.compile(mixed, mode="reduce-overhead")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            d = kiln.device_array(64, np.float32)
            f(d, np.ones(64, np.float32))
            f(d, np.ones(64, np.float32))
        msgs = [str(m.message) for m in w if issubclass(m.category, kiln.PerformanceWarning)
                and "kiln.compile" in str(m.message)]
        assert len(msgs) == 1 and "passes a host array to GPU kernel" in msgs[0], msgs
        print("ok")
    """)
    assert out.startswith("ok")


def test_a_cooperative_kernel_is_recorded_as_a_cooperative_graph_node():
    out = go("""
        @kiln.jit
        def twice(x):
            i = kiln.grid(1)
            g = kiln.cg.this_grid()
            x[i] += 1
            g.sync()
            x[i] *= 2

        def coop_step(x):
            scale[1, 64](x, 2.0)
            twice[2, 32](x)
            return x

        f = kiln.compile(coop_step, mode="reduce-overhead")
        x = kiln.device_array(64, np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("error", kiln.PerformanceWarning)
            f(x)
            assert fake.fake_last_coop() == 1  # recorded: an eager cooperative launch
            scale[1, 64](x, 2.0)
            assert fake.fake_last_coop() == 0
            f(x)
        g = graphs()
        assert g["created"] == 1 and g["launched"] == 1, g
        assert f.records[0].graph and f.records[0].launches == 2
        # the replayed graph's last node is the cooperative kernel's, marked so
        assert last()[0] == "kiln_entry" and last()[1] == (2, 1, 1) and fake.fake_last_coop() == 1
        print("ok")
    """)
    assert out.startswith("ok")
