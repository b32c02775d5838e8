"""Every element type a tensor can have: ONNX's data types, by the names numpy and ml_dtypes give them.

A desc's dtype is a name: numpy's for the types numpy has (`float32`, `int64`, `bool`), ml_dtypes' for the
ones it lacks (`bfloat16`, `float8_e4m3fn`, `int4`, `float4_e2m1fn`...), `str` for strings (held in object
arrays) and `undefined` for a tensor whose type was never inferred. Arrays of every type but `str` are
numpy arrays of that very dtype (importing this module registers ml_dtypes' names with numpy).

Sub-byte types (int4/uint4/float4: 4 bits; int2/uint2: 2; float6: 6) are *packed* in memory, as ONNX
stores them (element i at bit i * bits of the little-endian byte stream): a tensor of N elements takes
ceil(N * bits / 8) bytes — `packed_nbytes`, which is `TensorDesc.nbytes`, the memory plan's size and the
arena executor's slot. Host arrays hold one element per byte (ml_dtypes' layout), which is what kernels
see; `pack`/`unpack` convert between the two.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import ml_dtypes  # noqa: F401  (registers bfloat16, float8_*, int4... with numpy under their names)
import numpy as np


@dataclass(frozen=True, slots=True)
class DType:
    name: str  # the desc's dtype name
    onnx: int  # ONNX TensorProto.DataType code (the frontend's element types, Cast's `to`)
    bits: int  # bits per element in memory
    kind: str  # "float", "int", "uint", "bool", "complex", "str"
    short: str  # the text form's name, as in `f32[1,64]`


DTYPES: tuple[DType, ...] = (
    DType("float32", 1, 32, "float", "f32"),
    DType("uint8", 2, 8, "uint", "u8"),
    DType("int8", 3, 8, "int", "i8"),
    DType("uint16", 4, 16, "uint", "u16"),
    DType("int16", 5, 16, "int", "i16"),
    DType("int32", 6, 32, "int", "i32"),
    DType("int64", 7, 64, "int", "i64"),
    DType("str", 8, 64, "str", "str"),  # an object reference per element on the host
    DType("bool", 9, 8, "bool", "bool"),
    DType("float16", 10, 16, "float", "f16"),
    DType("float64", 11, 64, "float", "f64"),
    DType("uint32", 12, 32, "uint", "u32"),
    DType("uint64", 13, 64, "uint", "u64"),
    DType("complex64", 14, 64, "complex", "c64"),
    DType("complex128", 15, 128, "complex", "c128"),
    DType("bfloat16", 16, 16, "float", "bf16"),
    DType("float8_e4m3fn", 17, 8, "float", "f8e4m3fn"),
    DType("float8_e4m3fnuz", 18, 8, "float", "f8e4m3fnuz"),
    DType("float8_e5m2", 19, 8, "float", "f8e5m2"),
    DType("float8_e5m2fnuz", 20, 8, "float", "f8e5m2fnuz"),
    DType("uint4", 21, 4, "uint", "u4"),
    DType("int4", 22, 4, "int", "i4"),
    DType("float4_e2m1fn", 23, 4, "float", "f4e2m1"),
    DType("float8_e8m0fnu", 24, 8, "float", "f8e8m0"),
    DType("uint2", 25, 2, "uint", "u2"),
    DType("int2", 26, 2, "int", "i2"),
    DType("float6_e2m3fn", 27, 6, "float", "f6e2m3"),
    DType("float6_e3m2fn", 28, 6, "float", "f6e3m2"),
)
BY_NAME: dict[str, DType] = {d.name: d for d in DTYPES}
BY_ONNX: dict[int, DType] = {d.onnx: d for d in DTYPES}
FLOAT_NAMES = frozenset(d.name for d in DTYPES if d.kind == "float")
INT_NAMES = frozenset(d.name for d in DTYPES if d.kind in ("int", "uint"))
SUB_BYTE = frozenset(d.name for d in DTYPES if d.bits < 8)


def dtype_info(name: str) -> DType | None:
    return BY_NAME.get(name)


def onnx_dtype_name(code: int) -> str | None:
    """The dtype name of an ONNX data type code; None for UNDEFINED and unknown codes."""
    info = BY_ONNX.get(code)
    return None if info is None else info.name


def onnx_code(name: str) -> int | None:
    info = BY_NAME.get(name)
    return None if info is None else info.onnx


def dtype_bits(name: str) -> int:
    """Bits per element in memory (8 for a dtype numpy knows but ONNX does not, from its itemsize)."""
    info = BY_NAME.get(name)
    return info.bits if info is not None else 8 * int(np.dtype(name).itemsize)


def packed_nbytes(numel: int, name: str) -> int:
    """Bytes `numel` elements take in memory: sub-byte types packed as ONNX packs them."""
    return -(-numel * dtype_bits(name) // 8)


def is_float(name: str) -> bool:
    return name in FLOAT_NAMES


def is_extension(dtype: np.dtype) -> bool:
    """A dtype numpy does not define itself (ml_dtypes'): .npy files cannot name it, only hold its bytes."""
    return dtype.isbuiltin == 2


def name_of(dtype: np.dtype) -> str:
    """The desc name of an array's dtype (object and text arrays are `str`)."""
    return "str" if dtype.kind in "OUS" else dtype.name


@functools.cache
def numpy_dtype(name: str) -> np.dtype | None:
    """The numpy dtype arrays of `name` have; None for `str` (object arrays), `undefined` and unknown names."""
    if name in ("str", "undefined"):
        return None
    try:
        dtype = np.dtype(name)
    except TypeError:
        return None
    return dtype if dtype.name == name and dtype.kind not in "OUS" else None


def pack(array: np.ndarray) -> np.ndarray:
    """A sub-byte array as ONNX's packed bytes (uint8, ceil(N * bits / 8) of them); others as their bytes."""
    bits = dtype_bits(array.dtype.name)
    codes = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    if bits >= 8:
        return codes
    stream = np.unpackbits(codes[:, None], axis=1, count=bits, bitorder="little").reshape(-1)
    return np.packbits(stream, bitorder="little")


def unpack(data: np.ndarray, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """The array of dtype `name` and `shape` whose packed bytes are `data` (the inverse of `pack`)."""
    dtype = np.dtype(name)
    numel = int(np.prod(shape, dtype=np.int64))
    bits = dtype_bits(name)
    if bits >= 8:
        return np.asarray(data).reshape(-1)[: numel * dtype.itemsize].view(dtype).reshape(shape)
    stream = np.unpackbits(np.asarray(data, dtype=np.uint8), bitorder="little")[: numel * bits]
    codes = np.packbits(stream.reshape(numel, bits), axis=1, bitorder="little").reshape(-1)
    return codes.view(dtype).reshape(shape)
