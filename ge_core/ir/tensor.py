"""TensorDesc: what GE knows about a tensor before it exists (shape, dtype, format, ranges).

Dims are ints; -1 is an unknown dim (GE's UNKNOWN_DIM). Descs are immutable, so graph copies share them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from ge_core.ir.formats import device_numel, device_shape

UNKNOWN_DIM = -1

# numpy dtype name -> short name used by the text form (MLIR-like, as in `f32[1,64]`).
SHORT_DTYPE = {
    "float32": "f32", "float16": "f16", "float64": "f64", "bfloat16": "bf16",
    "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8",
    "uint64": "u64", "uint32": "u32", "uint16": "u16", "uint8": "u8",
    "bool": "bool", "str": "str", "complex64": "c64", "complex128": "c128",
}


@dataclass(frozen=True, slots=True)
class TensorDesc:
    """GE's GeTensorDesc: shape, dtype, format, origin shape/format and an optional shape range."""

    shape: tuple[int, ...]
    dtype: str
    format: str = "ND"
    origin_shape: tuple[int, ...] | None = None
    origin_format: str | None = None
    shape_range: tuple[tuple[int, int], ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.shape, tuple):
            object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return not self.shape or min(self.shape) >= 0  # min(): C speed, called on every cost and plan

    @property
    def numel(self) -> int | None:
        """Element count, or None while a dim is unknown."""
        return math.prod(self.shape) if self.is_static else None

    @property
    def itemsize(self) -> int:
        return dtype_itemsize(self.dtype)

    @property
    def nbytes(self) -> int | None:
        n = self.numel
        return None if n is None else n * self.itemsize

    @property
    def device_shape(self) -> tuple[int, ...]:
        """The shape on the NPU in this desc's format (padding included); `shape` for ND/NCHW (ir/formats.py)."""
        return device_shape(self.shape, self.format)

    @property
    def device_nbytes(self) -> int | None:
        """Bytes the tensor takes on the NPU in its format (NC1HWC0 pads C to 16), or None while a dim is unknown."""
        n = device_numel(self.shape, self.format)
        return None if n is None else n * self.itemsize

    def with_shape(self, shape: tuple[int, ...] | list[int]) -> TensorDesc:
        return replace(self, shape=tuple(int(d) for d in shape))

    def with_dtype(self, dtype: str) -> TensorDesc:
        return replace(self, dtype=dtype)

    def text(self) -> str:
        """`f32[1,3,224,224]`; unknown dims print as `?`."""
        dims = ",".join("?" if d < 0 else str(d) for d in self.shape)
        short = SHORT_DTYPE.get(self.dtype, self.dtype)
        fmt = "" if self.format in ("ND", "NCHW") else f"@{self.format}"
        return f"{short}[{dims}]{fmt}"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"shape": list(self.shape), "dtype": self.dtype, "format": self.format}
        if self.origin_shape is not None:
            out["origin_shape"] = list(self.origin_shape)
        if self.origin_format is not None:
            out["origin_format"] = self.origin_format
        if self.device_shape != self.shape:
            out["device_shape"] = list(self.device_shape)
        if self.shape_range is not None:
            out["shape_range"] = [list(r) for r in self.shape_range]
        return out


@functools.cache
def known_dtype(dtype: str) -> bool:
    """A dtype a tensor can be held in (a numpy dtype, or our bfloat16 and string stand-ins)."""
    if dtype in ("bfloat16", "str"):
        return True
    try:
        np.dtype(dtype)
    except TypeError:
        return False
    return True


@functools.cache
def dtype_itemsize(dtype: str) -> int:
    if dtype == "bfloat16":
        return 2
    if dtype == "str":
        return 8
    return int(np.dtype(dtype).itemsize)


def desc_of(array: np.ndarray, fmt: str | None = None) -> TensorDesc:
    """The desc of a concrete array (constants, feeds)."""
    shape = tuple(int(d) for d in array.shape)
    return TensorDesc(shape, _dtype_name(array.dtype), fmt or default_format(len(shape)))


@functools.cache
def _dtype_name(dtype: np.dtype) -> str:
    return "str" if dtype.kind in "OUS" else dtype.name


def default_format(rank: int) -> str:
    """ONNX models are NCHW: 4-D tensors carry that format, others ND (as GE's ONNX parser sets)."""
    return "NCHW" if rank == 4 else "ND"
