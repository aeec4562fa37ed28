"""``typeof`` at Numba's path (``from numba.cuda.typing.typeof import typeof``): kiln's
:func:`kiln.typeof`, the type a value passed to a kernel gets."""
from .._types import typeof

__all__ = ["typeof"]
