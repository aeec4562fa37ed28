# NumPy 2 promotion: Python literals are weak and take the other operand's type
import numpy as np
import kiln


@kiln.jit
def k(f32, i8, u8, i32):
    a = f32[0] * 2.0
    b = i8[0] + 1
    c = u8[0] * 2
    d = i32[0] * 1.5
    e = f32[0] + i8[0]
    g = i32[0] + u8[0]
    h = 3 / 2
    f32[0] = a + b + c + d + e + g + h


def main():
    k[1, 1](np.ones(1, np.float32), np.ones(1, np.int8), np.ones(1, np.uint8),
            np.ones(1, np.int32))
    print(k.inspect_types(file=False), end="")
