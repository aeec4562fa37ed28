# CUDA vector types (Numba's cuda.float32x4, cuda.int2...): made from scalars and from
# smaller vectors of the same lane type, read as .x .y .z .w, passed to and returned from
# device functions, looped over in a tuple; every lane type and count, and CUDA's aliases.
# Then the errors: a lane count that does not add up, vectors of another lane type, an
# index, an assignment to a lane, a lane the type does not have.
import numpy as np
import kiln
from kiln.vector_types import vector_types


@kiln.jit(device=True)
def swap(v):
    return kiln.float32x2(v.y, v.x)


@kiln.jit(device=True)
def total(v):
    return v.x + v.y + v.z + v.w


def mixed(res, a):
    one = kiln.float32x1(a[0])
    two = swap(kiln.float2(a[1], a[2]))        # (a2, a1)
    v4 = kiln.float4(two, one, 7)              # (a2, a1, a0, 7)
    w4 = kiln.float32x4(one, kiln.float3(two, a[3]))
    d = kiln.double2(kiln.float64x1(0.5), 1)
    u = kiln.uchar4(250, 1, 2, 3)
    j = 0
    for v in (v4, w4):
        res[j] = v.x
        res[j + 1] = v.y
        res[j + 2] = v.z
        res[j + 3] = v.w
        j += 4
    res[8] = total(v4)
    res[9] = d.x + d.y
    res[10] = u.x + u.w
    res[11] = kiln.long3(1, 2, 3).z


def make(vty):
    ctor, base = vty.user_facing_object, vty.base_type

    def k1(res):
        v = ctor(base(1))
        res[0] = v.x

    def k2(res):
        v = ctor(base(1), base(2))
        res[0] = v.x
        res[1] = v.y

    def k3(res):
        v = ctor(base(1), base(2), base(3))
        res[0] = v.x
        res[1] = v.y
        res[2] = v.z

    def k4(res):
        v = ctor(base(1), base(2), base(3), base(4))
        res[0] = v.x
        res[1] = v.y
        res[2] = v.z
        res[3] = v.w

    return kiln.jit((k1, k2, k3, k4)[vty.num_elements - 1])


def bad_count(res):
    v = kiln.float32x3(1.0, kiln.float2(1.0, 2.0), 3.0)
    res[0] = v.x


def bad_lane_type(res):
    v = kiln.float32x2(kiln.int2(1, 2))
    res[0] = v.x


def bad_index(res):
    v = kiln.int2(1, 2)
    res[0] = v[0]


def bad_store(res):
    v = kiln.int2(1, 2)
    v.x = 3
    res[0] = v.x


def bad_lane(res):
    v = kiln.int2(1, 2)
    res[0] = v.z


def main():
    res = np.zeros(12, np.float64)
    kiln.jit(mixed)[1, 1](res, np.array([1.5, 2.5, 3.5, 4.5], np.float32))
    print(res.tolist())
    ok = []
    for name, vty in vector_types.items():
        res = np.zeros(vty.num_elements, np.float64)
        make(vty)[1, 1](res)
        ok.append(res.tolist() == list(range(1, vty.num_elements + 1)))
    print(len(ok), all(ok))
    print(kiln.float4 is kiln.float32x4, kiln.longlong2 is kiln.int64x2, kiln.float32x4.aliases,
          kiln.uint64x3.aliases, vector_types["int16x2"].base_type is kiln.int16)
    for f in (bad_count, bad_lane_type, bad_index, bad_store, bad_lane):
        try:
            kiln.jit(f)[1, 1](np.zeros(1))
        except kiln.CompileError as e:
            print(str(e).splitlines()[0].split("error: ")[1])
