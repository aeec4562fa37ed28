# x.view(dtype) of a typed number: its bits read as another type of the same size, as
# NumPy's 0-d view and Numba's (sortable float keys, bit tricks on floats); another size,
# or a Python number, is an error
import numpy as np
import kiln


@kiln.jit
def keys(x, out, back):
    i = kiln.grid(1)
    if i < x.size:
        b = np.float32(x[i]).view(np.int32)
        out[i] = b ^ ((b >> 31) & 0x7FFFFFFF)
        back[i] = np.int64(x[i].view(np.int32)) + 0.0
        back[i] += np.uint32(b).view(np.float32)


def main():
    x = np.array([1.0, -2.0, 0.5, -0.0, np.inf], np.float32)
    out = np.zeros(x.size, np.int32)
    back = np.zeros(x.size, np.float64)
    keys[1, 32](x, out, back)
    b = x.view(np.int32)
    print(np.array_equal(out, b ^ ((b >> 31) & 0x7FFFFFFF)))
    print(np.array_equal(back, b.astype(np.float64) + x.astype(np.float64)))
