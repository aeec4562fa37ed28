"""Numba's library kernels, where Numba's users import them from (``numba.cuda.kernels``):
kiln.kernels.transpose."""
