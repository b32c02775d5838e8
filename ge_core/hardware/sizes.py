"""Element and byte counts of TensorDescs, memoised by shape: the simulator prices every kernel of a model
on every call, and a TensorDesc recomputes its count each time it is asked (it is a frozen slots class)."""

from __future__ import annotations

import functools
import math

from ge_core.ir.formats import DEVICE_FORMATS, device_numel
from ge_core.ir.tensor import TensorDesc, dtype_itemsize


@functools.lru_cache(maxsize=1 << 16)
def shape_numel(shape: tuple[int, ...]) -> int | None:
    """Elements of `shape`, None while a dim is unknown."""
    for d in shape:
        if d < 0:
            return None
    return math.prod(shape)


def numel(desc: TensorDesc) -> int:
    """Elements of `desc`, 0 while a dim is unknown."""
    return shape_numel(desc.shape) or 0


def nbytes(desc: TensorDesc) -> int:
    return numel(desc) * desc.itemsize


def stored_bytes(desc: TensorDesc) -> int:
    """Bytes as the device stores the tensor (its format's padding included); 0 while a dim is unknown."""
    return _stored_bytes(desc.shape, desc.dtype, desc.format)


@functools.lru_cache(maxsize=1 << 16)
def _stored_bytes(shape: tuple[int, ...], dtype: str, fmt: str) -> int:
    n = device_numel(shape, fmt) if fmt in DEVICE_FORMATS else shape_numel(shape)
    return (n or 0) * dtype_itemsize(dtype)


def device_bytes(desc: TensorDesc, float_bytes: int | None) -> int:
    """stored_bytes of `desc` with its floats `float_bytes` wide when given (a precision mode that stores every
    float tensor in fp16 halves an fp32 tensor's bytes); other dtypes as they are."""
    stored = stored_bytes(desc)
    if float_bytes is None or not desc.dtype.startswith("float") or desc.itemsize <= float_bytes:
        return stored
    return stored * float_bytes // desc.itemsize
