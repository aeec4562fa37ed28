# range() outside a for loop's iterable, and tuple ordering, are compile errors that say so
# (hunt17: a range stored in a variable was "cannot store None", len(range(5)) "object of
# type None has no len()"); range in a for loop, reversed, and tuple equality still work
import numpy as np
import kiln


def stored(o):
    r = range(2, 10, 3)
    s = 0
    for i in r:
        s += i
    o[0] = s


def length(o):
    o[0] = len(range(5))


def ordered(o):
    o[0] = (1, 2) < (1, 3)


@kiln.jit
def fine(o):
    s = 0
    for i in range(2, 10, 3):
        s += i
    for i in reversed(range(4)):
        s = s * 10 + i
    o[0] = s
    o[1] = (1, 2) == (1, 2)


def main():
    for f in (stored, length, ordered):
        try:
            kiln.jit(f)[1, 1](np.zeros(2))
        except kiln.CompileError as e:
            lines = str(e).splitlines()
            print(lines[0].split("error: ")[1], "|", lines[-1])
    o = np.zeros(2)
    fine[1, 1](o)
    print(o.tolist())
