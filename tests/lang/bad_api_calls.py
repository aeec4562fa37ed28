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


def first_words(f):
    # the record's name in the signature text depends on what the process registered before
    try:
        f()
        return "ok"
    except TypeError as e:
        return "TypeError: " + str(e).split(", and")[0].split(" (dtype")[0]


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
    rec = kiln.from_dtype(np.dtype([("x", "f8"), ("y", "f4")], align=True))
    print("vectorize over a record type:",
          first_words(lambda: kiln.vectorize([kiln.float64(rec)])(lambda r: r.x)))
    print("guvectorize over a record type:", first_words(lambda: kiln.guvectorize(
        [kiln.void(rec[:], kiln.float64[:])], "(n)->()")(lambda r, o: None)))
    print("vectorize called on records:", first_words(
        lambda: kiln.vectorize(lambda r: r)(np.zeros(3, rec.dtype if hasattr(rec, "dtype") else
                                                     np.dtype([("x", "f8")])))))
    attempt("device_array(order='X')", lambda: kiln.device_array((2, 2), order="X"))
    attempt("a signature with a NUL", lambda: kiln.jit("void(float32[::1])\0junk")(k))

