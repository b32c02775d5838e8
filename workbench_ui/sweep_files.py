"""Where the Compare page gets a sweep's results: an upload, or a file in this server's sweep folder.

The folder is `GE_SWEEP_DIR` (default `sweeps/` under the working directory). Only the .csv and .parquet
files directly in it are offered, by name; a name is looked up again when read, and is refused when it
is not one of those, is a symlink (the folder's files are the ones the server's owner put there, never a
link out of it) or resolves outside the folder. Files are read with O_NOFOLLOW, so a file swapped for a
link between the check and the read is refused too. Both ways are size-checked and parsed by
ge_core.sweep.read_results (pandas and pyarrow, never pickle).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pandas as pd

from ge_core.errors import UsageError, quote
from ge_core.sweep import read_results

SWEEP_DIR_ENV = "GE_SWEEP_DIR"
DEFAULT_SWEEP_DIR = "sweeps"
SUFFIXES = (".csv", ".parquet")
MAX_BYTES = 64 * 1024 * 1024  # a sweep of 10^5 rows is ~50 MB of CSV (each row carries its config JSON)
MAX_ROWS = 500_000  # also bounds what a small, highly compressed Parquet file may unpack into


def sweep_dir() -> Path:
    return Path(os.environ.get(SWEEP_DIR_ENV) or DEFAULT_SWEEP_DIR).absolute()


def server_files(folder: Path | None = None) -> list[str]:
    """The names of the results files directly in the sweep folder (no links, no subfolders), sorted."""
    folder = folder or sweep_dir()
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if p.suffix in SUFFIXES and not p.is_symlink() and p.is_file())


def server_file(name: str, folder: Path | None = None) -> Path:
    """The path of `name` in the sweep folder; anything but one of server_files() is refused in words."""
    folder = folder or sweep_dir()
    if name not in server_files(folder):
        raise UsageError(f"{quote(name)} is not a results file in the server's sweep folder {quote(folder)}.",
                         hint=f"Pick one of its .csv or .parquet files ({', '.join(server_files(folder)) or 'none'}).")
    path = folder / name
    if path.resolve().parent != folder.resolve():
        raise UsageError(f"{quote(name)} lies outside the server's sweep folder {quote(folder)}.")
    return path


def read_server_file(name: str, folder: Path | None = None) -> tuple[bytes, str]:
    """The bytes and suffix of a file of the sweep folder (checked as server_file does, then opened without
    following a link and size-checked before it is read)."""
    path = server_file(name, folder)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as err:
        raise UsageError(f"{quote(name)} cannot be opened ({err.strerror}); symlinks are not read.") from err
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"{quote(name)} is not a regular file.")
        check_size(name, info.st_size)
        return file.read(MAX_BYTES + 1), path.suffix


def check_size(name: str, size: int) -> None:
    if size > MAX_BYTES:
        raise UsageError(f"{quote(name)} is {size / 2**20:,.1f} MB, more than the {MAX_BYTES // 2**20} MB this "
                         "page reads.", hint="Filter the sweep down (pandas) and load the smaller file.")


def parse_upload(name: str, data: bytes) -> pd.DataFrame:
    """An uploaded (or read) results file as ge_core.sweep.load_results gives it, or a UsageError in words."""
    suffix = Path(name).suffix.lower()
    if suffix not in SUFFIXES:
        raise UsageError(f"{quote(name)} is neither a .csv nor a .parquet file.",
                         hint="Load the file a sweep wrote with --out results.csv or results.parquet.")
    check_size(name, len(data))
    return read_results(data, suffix, name, max_rows=MAX_ROWS)
