# string constants: literals, str globals and device-function arguments, compared with
# == and != (folded when compiling: the branch not taken is not typed); anything else
# done with a string is an error (src/sema/strings.c)
import numpy as np
import kiln

MODE = "relu"
OTHER = "gelu"
MODES = ("neg", "neg", "silu")


@kiln.jit(device=True)
def act(x, kind):
    if kind == "relu":
        return max(x, 0.0)
    elif kind in ("gelu", "silu"):
        return x * 0.5
    elif kind != "id":
        return -x
    return x


@kiln.jit(device=True)
def only_sq(x, kind):
    if kind == "sq":
        return x * x
    return x.no_such_attribute  # typed only where kind is not "sq"


@kiln.jit
def k(out, x):
    out[0] = act(x, "relu")
    out[1] = act(x, OTHER)
    out[2] = act(x, "id")
    out[3] = act(x, "neg")
    out[4] = act(x, MODE)
    out[5] = only_sq(x, "sq")
    out[6] = MODE == "relu"
    out[7] = MODE != 'relu'
    out[8] = "a" == 1  # a string is never equal to a constant of another type
    out[9] = 2.0 != "b"
    mode = "id"  # a string variable holds its one constant
    out[10] = act(x, mode)
    total = 0.0
    for name in kiln.literal_unroll(("relu", "neg", "id")):  # a copy per string
        total += act(x, name)
    out[11] = total
    for name in kiln.literal_unroll(MODES):  # a global tuple of strings
        out[12] += act(x, name)


REC = np.dtype([("a", "f8"), ("b", "i4"), ("c", "f4")])
FIELD = "c"


@kiln.jit(device=True)
def set_field(rec, name, v):
    rec[name] = v


@kiln.jit
def fields(r, names):
    v = 1.0
    for f in kiln.literal_unroll(("a", "b", "c")):  # Numba's record idiom
        r[0][f] = v
        v += 1.0
    r[1][FIELD] = 2.5
    set_field(r[1], "a", 4.0)
    s = names[0] = names[2] = "ab"  # a string variable and two string elements
    names[1] = FIELD  # a name's string constant into an element


ERRMSG = 'bad "input"\tvalue'


@kiln.jit
def raises(out):
    if out[0] == 0:
        raise ValueError(ERRMSG)  # a str global as the exception's message


def reject(name, body, extra=""):
    ns = {"kiln": kiln, "np": np}
    exec(extra + "@kiln.jit\ndef " + name + "(out):\n" + body, ns)
    try:
        ns[name][1, 1](np.zeros(2))
        print(name, "| compiled")
    except kiln.CompileError as e:
        print(name, "|", str(e).splitlines()[0].split("error: ", 1)[1])


def main():
    out = np.zeros(13)
    k[1, 1](out, -2.0)
    print(out.tolist())
    r = np.zeros(2, REC)
    names = np.zeros(3, "U4")
    fields[1, 1](r, names)
    print(r.tolist(), names.tolist())
    try:
        raises[1, 1](np.zeros(1))
    except ValueError as e:
        print("raised:", repr(str(e).split(": ", 1)[1]))
    reject("order", "    out[0] = 'a' < 'b'\n")
    reject("variable", "    s = 'abc'\n    if out[0] > 0:\n        s = 'abd'\n    out[0] = s == 'abc'\n")
    reject("tuple", "    t = ('abc', 1)\n    out[0] = 1\n")
    reject("global_tuple", "    t = MODES\n", "MODES = ('a', 'b')\n")
    reject("escape", "    out[0] = 'a\\\\n' == 'b'\n")
    reject("bytes", "    out[0] = b'a' == 'b'\n")
    reject("fstring", "    out[0] = f'a' == 'b'\n")
    reject("concat", "    out[0] = 'a' 'b' == 'ab'\n")
    reject("store", "    out[0] = 'a'\n")
    reject("arith", "    out[0] = 'a' * 2\n")
    reject("computed", "    out[0] = out[1] == 'a'\n")
    reject("dtype", "    out[0] = out.dtype == 'float64'\n")
    reject("chain", "    out[0] = 'a' == 'a' == 'a'\n")
    reject("array", "    out[0] = (out == 'a')[0]\n")
    reject("surrogate", "    out[0] = BAD == 'a'\n", "BAD = '\\udc80'\n")
    reject("newline", "    s = 'a\\nb'\n    out[0] = 1\n")
    reject("dead", "    out[0] = only_sq(2.0, 'cube')\n",
           "@kiln.jit(device=True)\ndef only_sq(x, kind):\n    if kind == 'sq':\n"
           "        return x * x\n    return x.no_such_attribute\n")
