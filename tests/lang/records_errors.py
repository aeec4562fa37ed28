# records: a wrong field name is a CompileError at the field naming the fields there are;
# a record is copied only into a record of the same layout
import numpy as np
import kiln

R = np.dtype([("x", np.float32), ("y", np.int32)], align=True)
S = np.dtype([("x", np.float32), ("z", np.int32)], align=True)


@kiln.jit
def wrong_field(a):
    a[0].w = 1


@kiln.jit
def wrong_key(a):
    a[0]['q'] = a[0]['x']


@kiln.jit
def other_layout(a, b):
    a[0] = b[0]


def main():
    a = np.zeros(2, R)
    for k, args in ((wrong_field, (a,)), (wrong_key, (a,)), (other_layout, (a, np.zeros(2, S)))):
        try:
            k[1, 1](*args)
        except kiln.CompileError as e:
            print(e)
