"""Resource limits, checked before memory is allocated (a model must be refused, never OOM the host)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

from ge_core.errors import ResourceLimitError
from ge_core.ir.dtypes import packed_nbytes

# One tensor larger than this is refused. GE_MAX_TENSOR_BYTES overrides (bytes).
DEFAULT_MAX_TENSOR_BYTES = 4 << 30
# A model file or upload larger than this is refused before it is read (protobuf's own limit is 2 GiB).
MAX_MODEL_BYTES = 2 << 30


def max_tensor_bytes() -> int:
    raw = os.environ.get("GE_MAX_TENSOR_BYTES", "")
    return int(raw) if raw.isdigit() else DEFAULT_MAX_TENSOR_BYTES


def check_tensor_size(what: str, shape: Sequence[int], dtype: str, *, limit: int | None = None) -> None:
    """Refuse a tensor of `shape` before allocating it. `what` names the node/tensor for the message."""
    limit = max_tensor_bytes() if limit is None else limit
    if any(int(d) < 0 for d in shape):
        raise ResourceLimitError(f"{what}: negative dimension in shape {list(shape)}.",
                                 hint="Every dim must be >= 0; check the model's shape inputs.")
    nbytes = packed_nbytes(math.prod(int(d) for d in shape), dtype)  # sub-byte types packed, as ONNX stores them
    if nbytes > limit:
        raise ResourceLimitError(
            f"{what}: a {dtype} tensor of shape {list(shape)} needs {human_bytes(nbytes)}, over the "
            f"{human_bytes(limit)} limit per tensor.",
            hint="Use smaller input shapes, or raise GE_MAX_TENSOR_BYTES if the machine has the memory.")


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
