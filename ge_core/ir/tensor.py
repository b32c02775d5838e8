"""TensorDesc: what GE knows about a tensor before it exists (shape, dtype, format, ranges).

Dims are ints; -1 is an unknown dim (GE's UNKNOWN_DIM). Descs are immutable, so graph copies share them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from ge_core.ir.dtypes import DTYPES, dtype_info, name_of, packed_nbytes
from ge_core.ir.formats import device_numel, device_shape

UNKNOWN_DIM = -1

NOT_INFERRED = "? (not inferred)"  # a desc shape inference never reached (dtype `undefined`)
# dtype name -> short name used by the text form (MLIR-like, as in `f32[1,64]`; ir/dtypes.py lists them).
SHORT_DTYPE = {d.name: d.short for d in DTYPES}


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
        """Whole bytes per element (1 for the packed sub-byte types: `nbytes` counts those exactly)."""
        return dtype_itemsize(self.dtype)

    @property
    def nbytes(self) -> int | None:
        """Bytes in memory (sub-byte types packed, as ONNX stores them), or None while a dim is unknown."""
        n = self.numel
        return None if n is None else packed_nbytes(n, self.dtype)

    @property
    def device_shape(self) -> tuple[int, ...]:
        """The shape on the NPU in this desc's format (padding included); `shape` for ND/NCHW (ir/formats.py)."""
        return device_shape(self.shape, self.format)

    @property
    def device_nbytes(self) -> int | None:
        """Bytes the tensor takes on the NPU in its format (NC1HWC0 pads C to 16), or None while a dim is unknown."""
        n = device_numel(self.shape, self.format)
        return None if n is None else packed_nbytes(n, self.dtype)

    def with_shape(self, shape: tuple[int, ...] | list[int]) -> TensorDesc:
        return replace(self, shape=tuple(int(d) for d in shape))

    def with_dtype(self, dtype: str) -> TensorDesc:
        return replace(self, dtype=dtype)

    def text(self) -> str:
        """`f32[1,3,224,224]`; unknown dims print as `?`, a desc shape inference never reached as
        `? (not inferred)`."""
        if self.dtype == "undefined":
            return NOT_INFERRED
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
    """A dtype a tensor can be held in (every ONNX type by its numpy/ml_dtypes name, any numpy dtype, str)."""
    if dtype_info(dtype) is not None:
        return True
    try:
        np.dtype(dtype)
    except TypeError:
        return False
    return True


@functools.cache
def dtype_itemsize(dtype: str) -> int:
    """Whole bytes per element: an object reference (8) for str, 1 for sub-byte types (packed: see nbytes)."""
    info = dtype_info(dtype)
    if info is not None:
        return max(1, info.bits // 8)
    return int(np.dtype(dtype).itemsize)


def desc_of(array: np.ndarray, fmt: str | None = None) -> TensorDesc:
    """The desc of a concrete array (constants, feeds)."""
    shape = tuple(int(d) for d in array.shape)
    return TensorDesc(shape, _dtype_name(array.dtype), fmt or default_format(len(shape)))


@functools.cache
def _dtype_name(dtype: np.dtype) -> str:
    return name_of(dtype)


def default_format(rank: int) -> str:
    """ONNX models are NCHW: 4-D tensors carry that format, others ND (as GE's ONNX parser sets)."""
    return "NCHW" if rank == 4 else "ND"
