# A constant index outside a local or shared array's shape is a compile error naming the
# axis and the size (NumPy's IndexError words), where it would read or write outside the
# array; negative constants count from the end and in-bounds ones compile as before.
import numpy as np
import kiln


def main():
    @kiln.jit
    def fine(out):
        a = kiln.local.array(4, np.float32)
        s = kiln.shared.array((2, 3), np.int32)
        for i in range(4):
            a[i] = i
        s[1, 2] = 5
        s[-1, -3] = 6
        kiln.syncthreads()
        out[0] = a[3] + a[-4] + s[1, 2] + s[1, 0]

    out = np.zeros(1, np.float32)
    fine[1, 1](out)
    print(out[0])

    def past_end(out):
        a = kiln.local.array(4, np.float32)
        a[0] = 1.0
        out[0] = a[4]

    def shared_axis(out):
        s = kiln.shared.array((2, 3), np.float32)
        s[0, -4] = 1.0
        kiln.syncthreads()
        out[0] = s[0, 0]

    for f in (past_end, shared_axis):
        try:
            kiln.jit(f)[1, 1](out)
        except kiln.CompileError as e:
            print(str(e).splitlines()[0].split(": error: ")[1])
