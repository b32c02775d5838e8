"""External tensor data, read only from regular files inside the model's own folder.

Every location is opened ONCE, component by component from a descriptor of the model's folder, with
`O_NOFOLLOW` (a symlink anywhere is refused) and `O_NONBLOCK` (a FIFO cannot hang the open); the open
descriptor is then `fstat`-ed (a regular file) and read with `pread`. Nothing is looked up by path a second
time, so a file swapped for a symlink between a check and a read cannot be read: there is no such gap.
Sizes come before bytes: the tensor's dtype and dims give its size, checked against the memory budget
and against the file's own size before a byte is read; a tensor whose size cannot be known that way
(strings, unknown types) is refused.
"""

from __future__ import annotations

import errno
import math
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath

from onnx import TensorProto

from ge_core.errors import ModelError, quote
from ge_core.ir.dtypes import packed_nbytes
from ge_core.ir.limits import check_tensor_size

_HINT_EXPORT = "Re-export the model, or check the file was copied completely."
_HINT_BESIDE = "External data must be a regular file beside the model (no links, no '..', no absolute paths)."
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class ExternalFiles:
    """The data files of one model, each opened once and kept open while the model loads."""

    def __init__(self, folder_fd: int) -> None:
        self.folder_fd = folder_fd
        self._open: dict[str, tuple[int, int]] = {}  # location -> (descriptor, size in bytes)

    def read(self, tensor: TensorProto, dtype: str | None) -> None:
        """Move `tensor`'s external bytes into raw_data (the tensor is then an ordinary one)."""
        name = quote(tensor.name or "<unnamed>")
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        expected = _expected_bytes(tensor, name, dtype)
        fd, file_size = self._descriptor(name, location)
        offset = _int_field(name, info, "offset", 0)
        length = _int_field(name, info, "length", expected)
        if length != expected:
            raise ModelError(f"tensor {name}: external data holds {length} bytes but dims {list(tensor.dims)} "
                             f"need {expected}.", hint=_HINT_EXPORT)
        if offset < 0 or offset + length > file_size:
            raise ModelError(f"tensor {name}: external data range offset={offset} length={length} lies "
                             f"outside {quote(location)} ({file_size} bytes).", hint=_HINT_EXPORT)
        tensor.raw_data = _pread_exactly(fd, length, offset, name)
        tensor.data_location = TensorProto.DEFAULT
        del tensor.external_data[:]

    def close(self) -> None:
        for fd, _ in self._open.values():
            os.close(fd)
        self._open.clear()

    def _descriptor(self, name: str, location: str) -> tuple[int, int]:
        if location not in self._open:
            fd = open_inside(self.folder_fd, location, f"tensor {name}: external data location {quote(location)}")
            try:
                info = os.fstat(fd)
            except OSError:
                os.close(fd)
                raise
            if not stat.S_ISREG(info.st_mode):
                os.close(fd)
                raise ModelError(f"tensor {name}: external data location {quote(location)} is not a regular "
                                 "file.", hint=_HINT_BESIDE)
            self._open[location] = (fd, info.st_size)
        return self._open[location]


@contextmanager
def external_files(folder: str | os.PathLike[str]) -> Iterator[ExternalFiles]:
    """The model folder opened once; every data file is opened relative to it."""
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    files = ExternalFiles(folder_fd)
    try:
        yield files
    finally:
        files.close()
        os.close(folder_fd)


def open_inside(folder_fd: int, location: str, what: str) -> int:
    """A descriptor of `location` (relative, '/'-separated) opened from `folder_fd` without following any
    link; refused with a ModelError naming `what` for anything that is not a plain name inside."""
    parts = _plain_parts(location, what)
    current = folder_fd
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                fd = os.open(part, _FILE_FLAGS if last else _DIR_FLAGS, dir_fd=current)
            except OSError as exc:
                raise _refusal(exc, what, part, current) from None
            if current != folder_fd:
                os.close(current)
            current = fd
    except BaseException:
        if current != folder_fd:
            os.close(current)
        raise
    return current


def _plain_parts(location: str, what: str) -> list[str]:
    if not location or "\x00" in location or location.startswith(("/", "\\")) or ":" in location \
            or "\\" in location:
        raise ModelError(f"{what} is not a relative file name inside the model's folder.", hint=_HINT_BESIDE)
    parts = [p for p in PurePosixPath(location).parts if p != "."]
    if not parts or any(p == ".." for p in parts):
        raise ModelError(f"{what} leaves the model's folder ('..').", hint=_HINT_BESIDE)
    return parts


def _refusal(exc: OSError, what: str, part: str, folder_fd: int) -> ModelError:
    if exc.errno in (errno.ELOOP, errno.EMLINK) or _is_link(part, folder_fd):
        return ModelError(f"{what} goes through a symbolic link ({quote(part)}), which is refused.",
                          hint="Copy the data file itself next to the model.")
    if exc.errno == errno.ENOENT:
        return ModelError(f"{what} does not exist next to the model.",
                          hint="Copy the external data file beside the model.")
    if exc.errno == errno.ENOTDIR:
        return ModelError(f"{what}: {quote(part)} is not a folder.", hint=_HINT_BESIDE)
    return ModelError(f"{what} cannot be opened ({os.strerror(exc.errno or 0)}).", hint=_HINT_BESIDE)


def _is_link(part: str, folder_fd: int) -> bool:
    """For the message only (a link to a folder fails O_DIRECTORY | O_NOFOLLOW as "not a directory")."""
    try:
        return stat.S_ISLNK(os.stat(part, dir_fd=folder_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _expected_bytes(tensor: TensorProto, name: str, dtype: str | None) -> int:
    """The bytes the tensor's dims and dtype need, checked against the memory budget (nothing read yet)."""
    if dtype is None or dtype in ("str", "undefined"):
        kind = "strings" if dtype == "str" else "an unknown data type"
        raise ModelError(f"tensor {name} holds {kind} as external data, whose size cannot be checked before "
                         "reading.", hint="Store string and unusual tensors inside the model file.")
    dims = list(tensor.dims)
    if any(d < 0 for d in dims):
        raise ModelError(f"tensor {name} has a negative dim in {dims}.", hint=_HINT_EXPORT)
    check_tensor_size(f"tensor {name}", dims, dtype)
    return packed_nbytes(math.prod(dims), dtype)  # sub-byte types packed, as ONNX stores them


def _int_field(name: str, info: dict[str, str], key: str, default: int) -> int:
    if key not in info:
        return default
    try:
        return int(info[key])
    except ValueError:
        raise ModelError(f"tensor {name}: external data {key} {quote(info[key])} is not an integer.") from None


def _pread_exactly(fd: int, length: int, offset: int, name: str) -> bytes:
    chunks: list[bytes] = []
    done = 0
    while done < length:
        chunk = os.pread(fd, min(length - done, 1 << 26), offset + done)
        if not chunk:  # the file shrank after fstat
            raise ModelError(f"tensor {name}: external data ended after {done} of {length} bytes.",
                             hint=_HINT_EXPORT)
        chunks.append(chunk)
        done += len(chunk)
    return b"".join(chunks)
