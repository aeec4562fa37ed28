# rejected: loops over what is not range(), an array, a tuple, enumerate() or zip(), and a
# loop that rebinds the name it iterates over (kiln reads the iterable at each iteration,
# where Python evaluated it once)
import numpy as np
import kiln


@kiln.jit
def rebinds(a, b):
    for x in a:
        a = b


@kiln.jit
def scalar(a, n):
    for x in n:
        pass


@kiln.jit
def outside(a):
    z = enumerate(a)


@kiln.jit
def step(a, n):
    for i, j in zip(a, range(0, 10, n)):
        pass


@kiln.jit
def call(a):
    for x in abs(a):
        pass


def main():
    for k, args in [(rebinds, (np.zeros(4), np.ones(4))), (scalar, (np.zeros(4), 3)),
                    (outside, (np.zeros(4),)), (step, (np.zeros(4), 2)),
                    (call, (np.zeros(4),))]:
        try:
            k[1, 1](*args)
        except kiln.CompileError as e:
            print(f"CompileError: {e}")
