"""Reading an offline model's arrays straight from the file: one pass to hash, one copy per array.

A `.gem` stores arrays.npz uncompressed inside the outer zip, and numpy writes each .npy member of it
uncompressed too, so every array's bytes sit at a known offset of the file. Reading them with zipfile and
np.load would read the file three times more than needed (zipfile's CRC of the member, np.load's CRC of
each .npy, a copy at each step): on resnet50's cache entry (190 MB with its pass snapshots) that was over a
second, more than compiling again. Here the file is memory-mapped; the caller hashes the mapped bytes
(the manifest's sha256 covers them, so the zip CRCs add nothing) and each array is copied out once.
"""

from __future__ import annotations

import io
import mmap
import struct
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, Literal

import numpy as np

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # zip's local file header (30 bytes)
_LOCAL_MAGIC = b"PK\x03\x04"


class StoredMemberError(ValueError):
    """The member is not laid out as a stored (uncompressed) zip member we can read in place."""


@contextmanager
def mapped(file: BinaryIO) -> Iterator[memoryview]:
    """The open file's bytes, memory-mapped read-only (an empty file maps to an empty view). Views taken
    of it must be released before the block ends."""
    if file.seek(0, io.SEEK_END) == 0:
        yield memoryview(b"")
        return
    with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as m:
        view = memoryview(m)
        try:
            yield view
        finally:
            view.release()


def stored_member(data: memoryview, info: zipfile.ZipInfo) -> memoryview:
    """The bytes of a stored member of the zip `data`, without a copy."""
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
        raise StoredMemberError(f"member {info.filename!r} is compressed or encrypted")
    start = info.header_offset
    header = bytes(data[start:start + _LOCAL_HEADER.size])
    if len(header) < _LOCAL_HEADER.size:
        raise StoredMemberError(f"member {info.filename!r} lies past the end of the file")
    fields = _LOCAL_HEADER.unpack(header)
    if fields[0] != _LOCAL_MAGIC:
        raise StoredMemberError(f"member {info.filename!r} has no local header")
    name_length, extra_length = fields[-2], fields[-1]
    begin = start + _LOCAL_HEADER.size + name_length + extra_length
    end = begin + info.file_size
    if end > len(data):
        raise StoredMemberError(f"member {info.filename!r} is truncated")
    return data[begin:end]


def read_stored_npz(data: memoryview) -> dict[str, np.ndarray]:
    """An .npz whose members are stored, read in place: each array copied once (never unpickled)."""
    arrays: dict[str, np.ndarray] = {}
    problem = ""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:  # reads the central directory only
            for info in archive.infolist():
                if not info.filename.endswith(".npy"):
                    raise StoredMemberError(f"member {info.filename!r} is not an .npy array")
                arrays[info.filename[:-4]] = _npy(stored_member(data, info), info.filename)
    except (StoredMemberError, ValueError, zipfile.BadZipFile) as exc:
        problem = str(exc)  # raised below, once the traceback holding views of the mapped file is gone
    if problem:
        raise StoredMemberError(problem)
    return arrays


def _npy(member: memoryview, name: str) -> np.ndarray:
    head = io.BytesIO(member[:65536 + 10])  # an .npy header is at most 64 KiB (format 2/3: 4 GiB, never ours)
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
    flat = np.frombuffer(member, dtype=dtype, count=count, offset=offset)
    order: Literal["C", "F"] = "F" if fortran else "C"
    return flat.reshape(tuple(shape), order=order).copy(order=order)
