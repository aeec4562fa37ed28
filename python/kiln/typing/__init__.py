"""Numba's typing names, where Numba's users import them from (``numba.cuda.typing``):
kiln.typing.typeof."""
