# limits: static shared memory is KILN_MAX_SHARED_BYTES (48 KiB) per block; a shape
# too large, overflowing 64 bits, or negative says the limit and what it asked for
# (translated for CUDA directly: no GPU is needed to see the errors)
import numpy as np
import kiln
from kiln import _compile, _kiln


def translate(body, name):
    src = "def k(a):\n" + body
    key = _kiln.key_of(np.zeros(4, np.float32))
    try:
        _kiln.translate(src, name, 1, key, (1, 0, 0, 0, 0, 90), _compile.resolve, k_scope)
        print(name, "ok")
    except kiln.CompileError as e:
        print(name, "CompileError:", str(e).splitlines()[0])


def k_scope(a):
    pass


def main():
    arr = "    s = kiln.shared.array({}, kiln.float32)\n    a[0] = s[0]\n"
    translate(arr.format("2**40"), "2**40")
    translate(arr.format("(2**31, 2**31, 4)"), "overflow")
    translate(arr.format("(2**62, 2**62, 2**62, 2**62, 2**62, 2**62, 2**62, 2**62)"), "eight")
    translate(arr.format("(65536, 65536)"), "65536x65536")
    translate(arr.format("12289"), "12289")
    translate(arr.format("12288"), "12288")
    translate(arr.format("-1"), "negative")
    translate(arr.format("(0, 4)"), "zero")
    translate(arr.format("0"), "dynamic")
    two = ("    s = kiln.shared.array(8192, kiln.float32)\n"
           "    t = kiln.shared.array(8192, kiln.float32)\n    a[0] = s[0] + t[0]\n")
    translate(two, "two")
