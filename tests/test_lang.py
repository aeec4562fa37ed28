"""Golden tests as data: each tests/lang/NAME.py defines main(); its output, or the
exception it ends with, must equal tests/lang/NAME.expect.

Regenerate the expectations after a deliberate change with

    make regen-lang        (python tests/test_lang.py --regen)

and read the diff before committing it.
"""
import contextlib
import glob
import io
import os
import re
import runpy
import sys
import traceback

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
LANG = os.path.join(HERE, "lang")
CASES = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(LANG, "*.py")))


def run_case(name):
    path = os.path.join(LANG, name + ".py")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            ns = runpy.run_path(path, run_name=f"lang_{name}")
            ns["main"]()
        except Exception as e:  # the expected outcome of error cases
            print(f"{type(e).__name__}: {e}")
    text = out.getvalue()
    # paths: keep the file's base name so expectations do not depend on the checkout
    text = re.sub(r"[^\s:'\"]*/(tests/lang/)?([\w.-]+\.py)", r"\2", text)
    return text


@pytest.mark.parametrize("name", CASES)
def test_lang(name):
    expect_path = os.path.join(LANG, name + ".expect")
    assert os.path.exists(expect_path), f"no {name}.expect: run make regen-lang"
    with open(expect_path) as f:
        expected = f.read()
    assert run_case(name) == expected


if __name__ == "__main__":
    if "--regen" not in sys.argv:
        sys.exit("usage: python tests/test_lang.py --regen [NAME...]")
    names = [a for a in sys.argv[1:] if not a.startswith("-")] or CASES
    sys.path.insert(0, os.environ.get("KILN_TEST_PYDIR") or os.path.join(os.path.dirname(HERE), "python"))
    for name in names:
        text = run_case(name)
        with open(os.path.join(LANG, name + ".expect"), "w") as f:
            f.write(text)
        print(f"wrote {name}.expect ({len(text.splitlines())} lines)")
