"""Reading and writing `.npz` files of named arrays (feeds and outputs), whatever the names are.

`numpy.savez(path, **arrays)` passes tensor names as keyword arguments, so a tensor named `file` or
`allow_pickle` collides with savez's own parameters (an error, or an output silently dropped). These
write each array as a `NAME.npy` member of the zip themselves; `numpy.load` reads them back by name.
Reading never unpickles. ml_dtypes arrays (bfloat16, float8, int4...) are written as their raw bytes (a
void dtype of their width: .npy cannot name them); feeding them back, `check_feeds` reads those bytes as the
dtype the input declares.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ge_core.errors import UsageError, quote
from ge_core.ir.dtypes import is_extension


def write_npz(target: str | os.PathLike[str] | io.BufferedIOBase | io.BytesIO,
              arrays: Mapping[str, np.ndarray]) -> None:
    """Write `arrays` to `target` (a path or a binary file object), one member per name."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, _storable(np.asanyarray(value)), allow_pickle=False)


def _storable(value: np.ndarray) -> np.ndarray:
    return value.view(f"V{value.dtype.itemsize}") if is_extension(value.dtype) else value


def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    write_npz(buffer, arrays)
    return buffer.getvalue()


def read_npz(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The arrays of an .npz file by name; a missing or unreadable file is a UsageError (exit 2)."""
    if not Path(path).is_file():
        raise UsageError(f"inputs file {quote(path)} not found.")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise UsageError(f"inputs file {quote(path)} is not a readable .npz ({exc}).",
                         hint="Write it with numpy.savez(path, input_name=array, ...).") from None
