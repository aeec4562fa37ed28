"""The launcher's memo of its last type key and entry (launch.c): a launch whose argument
types equal the last launch's skips the table, and nothing stale survives a change of types
or a clear of the kernel's table."""
import numpy as np

import kiln


def make_fill():
    @kiln.jit
    def fill(x, v):
        i = kiln.grid(1)
        if i < x.size:
            x[i] = v
    return fill


def test_a_reused_launcher_follows_the_argument_types():
    fill = make_fill()
    launch = fill[1, 8]
    a32, a64, ai = np.zeros(8, np.float32), np.zeros(8), np.zeros(8, np.int16)
    for round_ in range(3):
        launch(a32, 1.5 + round_)
        launch(a64, 2.25 + round_)
        launch(ai, 7 + round_)
        launch(a32, 3 + round_)  # an int value: another key than (float32[::1], float64)
        assert (a64 == 2.25 + round_).all() and (ai == 7 + round_).all()
        assert (a32 == 3 + round_).all()
    assert sorted(fill.signatures) == sorted(
        ["(float32[::1], float64)", "(float64[::1], float64)", "(int16[::1], int64)",
         "(float32[::1], int64)"])


def test_a_cleared_table_is_not_served_from_the_memo():
    fill = make_fill()
    launch = fill[1, 8]
    a = np.zeros(8, np.float32)
    launch(a, 1.0)
    assert len(fill._entries()) == 1
    fill._clear_entries()
    assert fill._entries() == []
    # the memo's entry left with the table: this launch looks the key up again and, finding
    # nothing, inserts a new entry (a stale memo would run the freed one and insert nothing)
    launch(a, 2.0)
    assert len(fill._entries()) == 1
    assert (a == 2).all()
    launch(a, 3.0)
    assert (a == 3).all() and len(fill._entries()) == 1


def test_path_launches_runs_the_whole_launch_each_time():
    @kiln.jit
    def inc(x):
        i = kiln.grid(1)
        if i < x.size:
            x[i] += 1
    a = np.zeros(4, np.int64)
    seconds = inc[1, 4]._path_launches(5, a)
    assert seconds > 0 and (a == 5).all()
