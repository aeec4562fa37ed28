"""Numba's ``numba.cuda.misc.special``: ``literal_unroll``.  Imports nothing.

``for x in literal_unroll(t):`` in a kernel loops over the tuple ``t`` whose items may
have different types (arrays of other shapes, dtypes or layouts, scalars): the compiler
writes the body once per item, with that item's type (src/sema/literal_unroll.c).
"""


def literal_unroll(container):
    """In a kernel, the iterable of a for loop whose body is compiled once per item of
    the tuple ``container``.  On the host it returns ``container``, as Numba's does."""
    return container


# how the compiler recognises it among a kernel's globals (kiln/_compile.py's describe)
literal_unroll._kiln_name = "kiln.literal_unroll"
