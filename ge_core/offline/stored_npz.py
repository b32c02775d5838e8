"""An offline model's arrays: an .npz written with every array 64-byte aligned, read back in one pass.

A `.gem` stores arrays.npz uncompressed inside the outer zip, and its .npy members uncompressed too, so
every array's bytes sit at a known offset of the file. Reading them with zipfile and np.load would read
the file three times more than needed (zipfile's CRC of the member, np.load's CRC of each .npy, a copy at
each step). Here the member is read once into one buffer, hashed chunk by chunk as it arrives (the
manifest's sha256 covers it, so the zip CRCs add nothing), and each array is a view of that buffer: the
writer pads each member's local header (zipalign's extra field) so its .npy starts 64-byte aligned, and
numpy pads the .npy header to 64 bytes, so every view is aligned. The arrays of a file written before that
alignment are copied out (an unaligned array is slower, and a type of its own to numba's kernels).
Reading resnet50's cache entry (94 MB of folded weights) this way took 0.07 s of CPU; memory-mapping it,
hashing the map, then copying the member (io.BytesIO) and every array out of it 0.25 s (load average ~9).
"""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import numpy as np

from ge_core.ir.dtypes import is_extension

if TYPE_CHECKING:
    from hashlib import _Hash

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # zip's local file header (30 bytes)
_LOCAL_MAGIC = b"PK\x03\x04"
_ALIGN = 64
_ALIGNMENT_EXTRA = 0xD935  # the extra field Android's zipalign pads with: any zip reader skips it
_CHUNK = 1 << 22  # hashed while it is still in the CPU's cache


class StoredMemberError(ValueError):
    """The member is not laid out as a stored (uncompressed) zip member we can read in place."""


# -- writing -------------------------------------------------------------------------------------------

def aligned_npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """An .npz of `arrays` (one NAME.npy member each, never pickled) whose array data start 64-byte aligned;
    ml_dtypes arrays are stored as their raw bytes, as ge_core.runtime.npz stores them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            array = np.asarray(value)
            array = array if array.flags.c_contiguous else array.copy(order="C")  # (ascontiguousarray makes 0-d 1-d)
            if is_extension(array.dtype):
                array = array.view(f"V{array.dtype.itemsize}")
            header = io.BytesIO()  # numpy pads it to a multiple of 64 bytes
            np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(array))
            info = zipfile.ZipInfo(f"{name}.npy")
            info.file_size = header.tell() + array.nbytes  # known ahead: no zip64 field unless it is needed
            info.extra = _padding(buffer.tell() + _LOCAL_HEADER.size + len(info.filename.encode("utf-8")))
            with archive.open(info, "w") as member:
                member.write(header.getvalue())
                member.write(array.reshape(-1).view(np.uint8).data)
    return buffer.getvalue()


def _padding(offset: int) -> bytes:
    """An extra field that moves data written at `offset` to the next multiple of _ALIGN."""
    size = -offset % _ALIGN
    if size == 0:
        return b""
    size += _ALIGN if size < 4 else 0  # the field's own id and length take 4 bytes
    return struct.pack("<HH", _ALIGNMENT_EXTRA, size - 4) + bytes(size - 4)


# -- reading -------------------------------------------------------------------------------------------

def read_member(file: io.BufferedIOBase, info: zipfile.ZipInfo, digest: _Hash) -> np.ndarray:
    """The bytes of the stored member `info` of the zip open as `file`, read once into a new 64-byte aligned
    buffer and fed to `digest` as they arrive."""
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
        raise StoredMemberError(f"member {info.filename!r} is compressed or encrypted")
    file.seek(info.header_offset)
    header = file.read(_LOCAL_HEADER.size)
    if len(header) < _LOCAL_HEADER.size:
        raise StoredMemberError(f"member {info.filename!r} lies past the end of the file")
    fields = _LOCAL_HEADER.unpack(header)
    if fields[0] != _LOCAL_MAGIC:
        raise StoredMemberError(f"member {info.filename!r} has no local header")
    file.seek(info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1])
    raw = np.empty(info.file_size + _ALIGN, np.uint8)
    start = -raw.ctypes.data % _ALIGN
    buffer = raw[start:start + info.file_size]
    view, done = buffer.data, 0
    while done < info.file_size:
        count = file.readinto(view[done:done + _CHUNK])
        if not count:
            raise StoredMemberError(f"member {info.filename!r} is truncated")
        digest.update(view[done:done + count])
        done += count
    return buffer


def npz_arrays(buffer: np.ndarray) -> dict[str, np.ndarray]:
    """The arrays of the .npz held in `buffer` (as read_member returns it), as views of it where aligned."""
    arrays: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(_BufferFile(buffer.data)) as archive:  # reads the central directory only
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                raise StoredMemberError(f"member {info.filename!r} is not an .npy array")
            arrays[info.filename[:-4]] = _npy(_member(buffer, info), info.filename)
    return arrays


def _member(buffer: np.ndarray, info: zipfile.ZipInfo) -> np.ndarray:
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
        raise StoredMemberError(f"member {info.filename!r} is compressed or encrypted")
    start = info.header_offset
    header = buffer[start:start + _LOCAL_HEADER.size].tobytes()
    if len(header) < _LOCAL_HEADER.size or header[:4] != _LOCAL_MAGIC:
        raise StoredMemberError(f"member {info.filename!r} has no local header")
    fields = _LOCAL_HEADER.unpack(header)
    begin = start + _LOCAL_HEADER.size + fields[-2] + fields[-1]
    if begin + info.file_size > len(buffer):
        raise StoredMemberError(f"member {info.filename!r} is truncated")
    return buffer[begin:begin + info.file_size]


def _npy(member: np.ndarray, name: str) -> np.ndarray:
    head = io.BytesIO(member[:65536 + 10].tobytes())  # an .npy header is at most 64 KiB (format 2/3: 4 GiB, never ours)
    version = np.lib.format.read_magic(head)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(head)
    elif version in ((2, 0), (3, 0)):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(head)
    else:
        raise StoredMemberError(f"member {name!r} is .npy format {version}")
    if dtype.hasobject:
        raise StoredMemberError(f"member {name!r} holds Python objects")
    count = int(np.prod(shape, dtype=np.int64))
    offset = head.tell()
    if offset + count * dtype.itemsize != len(member):
        raise StoredMemberError(f"member {name!r} holds {len(member) - offset} bytes, not {count * dtype.itemsize}")
    order: Literal["C", "F"] = "F" if fortran else "C"
    array = member[offset:].view(dtype).reshape(tuple(shape), order=order)
    return array if array.flags.aligned else array.copy(order=order)


class _BufferFile(io.RawIOBase):
    """A read-only file over a buffer: zipfile reads an npz's directory through it without a copy."""

    def __init__(self, data: memoryview) -> None:
        super().__init__()
        self._data, self._position = data, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: len(self._data)}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, target: memoryview) -> int:  # type: ignore[override]
        chunk = self._data[self._position:self._position + len(target)]
        target[:len(chunk)] = chunk
        self._position += len(chunk)
        return len(chunk)
