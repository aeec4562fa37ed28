"""Numba's ``numba.cuda.misc``: only ``special`` (``literal_unroll``).  Imports nothing."""
