# an atomic on an array of a dtype it does not take names the dtypes that one takes
# (hunt19 6: every hint listed the six of add, the rejected one among them)
import numpy as np
import kiln as cuda


def cas(o):
    cuda.atomic.cas(o, 0, 0.0, 1.0)


def and_(o):
    cuda.atomic.and_(o, 0, 1)


def inc(o):
    cuda.atomic.inc(o, 0, 1)


def add(o):
    cuda.atomic.add(o, 0, 1)


def main():
    for f, a in ((cas, np.zeros(2)), (and_, np.zeros(2)), (inc, np.zeros(2, np.int32)),
                 (add, np.zeros(2, np.int8))):
        try:
            cuda.jit(f)[1, 1](a)
        except cuda.CompileError as e:
            lines = str(e).splitlines()
            print(lines[0].split("error: ")[1], "|", lines[-1])
