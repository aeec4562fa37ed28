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


@kiln.jit
def narrow_bounds(o, b):
    # the length of range(b[0], b[1]) is Python's for uint8 and int8 bounds (review17 3:
    # hi - lo wrapped in the bounds' type: range(5, 2) ran 253 times)
    k = 0
    for i in reversed(range(b[0], b[1])):
        if k < 3:
            o[k] = i
        k += 1
    for j, i in enumerate(range(b[0], b[1])):
        k += 1000
    o[3] = k


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
    for b in (np.array([5, 2], np.uint8), np.array([-100, 100], np.int8),
              np.array([2, 5], np.uint8)):
        o = np.zeros(4, np.int64)
        narrow_bounds[1, 1](o, b)
        r = list(reversed(range(int(b[0]), int(b[1]))))
        want = (r + [0, 0, 0])[:3] + [len(r) * 1001]
        print(o.tolist() == want, o.tolist())
    try:
        kiln.jit(bad)[1, 1](o)
    except kiln.CompileError as e:
        print(str(e).splitlines()[0].split("error: ")[1])
