# Type stubs for kiln.types: Numba's type classes and names (see types.py).
from collections.abc import Iterable, Iterator
from typing import Any

class Type:
    name: str
    def __init__(self, name: str) -> None: ...
    def __call__(self, *args: Any) -> Any: ...
    @property
    def key(self) -> Type: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Void(Type):
    def __init__(self) -> None: ...

class Scalar(Type):
    code: int
    def __new__(cls, name: str | None = ...) -> Scalar: ...
    def __init__(self, name: str) -> None: ...
    def __getitem__(self, idx: Any) -> Array: ...
    @property
    def dtype(self) -> Any: ...
    @property
    def bitwidth(self) -> int: ...
    @property
    def underlying_float(self) -> Float: ...

class Boolean(Scalar): ...
class Number(Scalar): ...
class Integer(Number):
    @property
    def signed(self) -> bool: ...
class Float(Number): ...
class Complex(Number): ...

class Array(Type):
    dtype: Scalar
    ndim: int
    layout: str
    readonly: bool
    def __init__(self, dtype: Scalar, ndim: int, layout: str = ..., readonly: bool = ...,
                 aligned: bool = ...) -> None: ...
    def copy(self, dtype: Scalar | None = ..., ndim: int | None = ..., layout: str | None = ...,
             readonly: bool | None = ...) -> Array: ...

class BaseTuple(Type):
    types: tuple[Type, ...]
    @property
    def count(self) -> int: ...
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Type: ...
    def __iter__(self) -> Iterator[Type]: ...

class UniTuple(BaseTuple):
    dtype: Type
    def __init__(self, dtype: Type, count: int) -> None: ...

class Tuple(BaseTuple):
    def __new__(cls, types: Iterable[Type] = ...) -> Tuple: ...
    def __init__(self, types: Iterable[Type] = ...) -> None: ...

class NamedUniTuple(UniTuple):
    instance_class: type
    def __init__(self, dtype: Type, count: int, cls: type) -> None: ...
    @property
    def fields(self) -> tuple[str, ...]: ...

class NamedTuple(Tuple):
    instance_class: type
    def __new__(cls, types: Iterable[Type] = ..., klass: type | None = ...) -> NamedTuple: ...
    def __init__(self, types: Iterable[Type], cls: type) -> None: ...
    @property
    def fields(self) -> tuple[str, ...]: ...

class CPointer(Type):
    dtype: Type
    def __init__(self, dtype: Type) -> None: ...

class Signature:
    ret: Type
    args: tuple[Type, ...]
    def __init__(self, ret: Type, args: Iterable[Type]) -> None: ...
    @property
    def return_type(self) -> Type: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

def from_dtype(dtype: Any) -> Scalar: ...
def typeof(value: Any) -> Type: ...

signed_domain: frozenset[Integer]
unsigned_domain: frozenset[Integer]
integer_domain: frozenset[Integer]
real_domain: frozenset[Float]
complex_domain: frozenset[Complex]
number_domain: frozenset[Scalar]

void: Void
none: Void
bool_: Boolean
boolean: Boolean
b1: Boolean
int8: Integer
i1: Integer
byte: Integer
char: Integer
int16: Integer
i2: Integer
short: Integer
int32: Integer
i4: Integer
intc: Integer
int64: Integer
i8: Integer
intp: Integer
int_: Integer
long_: Integer
longlong: Integer
uint8: Integer
u1: Integer
uchar: Integer
uint16: Integer
u2: Integer
ushort: Integer
uint32: Integer
u4: Integer
uintc: Integer
uint64: Integer
u8: Integer
uintp: Integer
uint: Integer
ulong: Integer
ulonglong: Integer
float16: Float
bfloat16: Float
f2: Float
half: Float
float32: Float
f4: Float
single: Float
float64: Float
f8: Float
double: Float
float_: Float
complex64: Complex
c8: Complex
csingle: Complex
complex128: Complex
c16: Complex
cdouble: Complex
complex_: Complex
