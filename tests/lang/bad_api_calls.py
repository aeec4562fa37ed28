# what the API refuses says which argument is wrong and what is taken, as a TypeError or
# ValueError of kiln's own words, never an AttributeError from inside kiln
import numpy as np
import kiln
import kiln.cache


def attempt(what, f):
    try:
        f()
        print(what, "ok")
    except Exception as e:
        print(f"{what}: {type(e).__name__}: {e}")


class Junk:
    __cuda_array_interface__ = "junk"


class NoShape:
    __cuda_array_interface__ = {"version": 3}


def k(a):
    a[0] = 1


def main():
    attempt("jit(5)", lambda: kiln.jit(5))
    attempt("jit(print)", lambda: kiln.jit(print))
    attempt("jit('void()')(5)", lambda: kiln.jit("void()")(5))
    attempt("jit(jit(k))", lambda: kiln.jit(kiln.jit(k)))
    attempt("reduce(5)", lambda: kiln.reduce(5))
    attempt("device_array_like(None)", lambda: kiln.device_array_like(None))
    attempt("as_cuda_array(junk interface)", lambda: kiln.as_cuda_array(Junk()))
    attempt("as_cuda_array(interface without shape)", lambda: kiln.as_cuda_array(NoShape()))
    attempt("cache.prune(2**80)", lambda: kiln.cache.prune(2**80))
    attempt("a signature with a NUL", lambda: kiln.jit("void(float32[::1])\0junk")(k))

