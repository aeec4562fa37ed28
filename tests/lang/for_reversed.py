# for loops over reversed(range), reversed(array), reversed(tuple), also inside enumerate(),
# and empty ranges; reversed(enumerate()) is an error, as Python cannot reverse it
import numpy as np
import kiln


@kiln.jit
def k(o, a):
    s = 0
    for i in reversed(range(4)):
        s = s * 10 + i
    o[0] = s
    s = 0
    for i in reversed(range(1, 10, 3)):
        s = s * 10 + i
    o[1] = s
    s = 0
    for i in reversed(range(10, 1, -4)):
        s = s * 100 + i
    o[2] = s
    s = 0
    for x in reversed(a):
        s = s * 10 + x
    o[3] = s
    s = 0
    for j, x in enumerate(reversed((3, 5, 7))):
        s = s * 100 + j * 10 + x
    o[4] = s
    s = 0
    for i in reversed(range(0)):
        s += 1
    for i in reversed(range(5, 2)):
        s += 1
    o[5] = s


def bad(o):
    for j, x in reversed(enumerate((1, 2))):
        o[0] = x


def python(a):
    out = []
    for it in (range(4), range(1, 10, 3)):
        s = 0
        for i in reversed(it):
            s = s * 10 + i
        out.append(s)
    s = 0
    for i in reversed(range(10, 1, -4)):
        s = s * 100 + i
    out.append(s)
    s = 0
    for x in reversed(a.tolist()):
        s = s * 10 + x
    out.append(s)
    s = 0
    for j, x in enumerate(reversed((3, 5, 7))):
        s = s * 100 + j * 10 + x
    out.append(s)
    out.append(0)
    return out


def main():
    o = np.zeros(6, np.int64)
    a = np.array([1, 2, 3])
    k[1, 1](o, a)
    print(o.tolist() == python(a), o.tolist())
    try:
        kiln.jit(bad)[1, 1](o)
    except kiln.CompileError as e:
        print(str(e).splitlines()[0].split("error: ")[1])
