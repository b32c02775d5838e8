"""Sweep results (DESIGN.md "Sweep results"): one row per (model, config key, hardware), in a .parquet or
.csv file that is written as rows arrive and is never half-written.

Each row is appended at once to a journal beside the file (`.NAME.journal`, one JSON line per row, flushed);
the file itself is rewritten whole from time to time and at the end, to a temporary file that then replaces
it (os.replace is atomic). A sweep that is interrupted, even killed, leaves the file as of its last rewrite
and the journal with everything since: the next run reads both, skips every task it finds, and removes the
journal once the file holds it all. A torn last journal line (a kill mid-write) is ignored: that task runs again.
"""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ge_core.errors import UsageError, quote

if TYPE_CHECKING:
    from ge_core.sweep.plan import Task

Row = dict[str, Any]
STATUSES = ("ok", "refused", "failed", "timeout")
# name -> pandas dtype, in file order. Numbers a task did not reach are missing (<NA>, NaN), never 0.
COLUMNS: dict[str, str] = {
    "key": "string",  # model digest : config key : hardware, what resume matches on
    "model": "string",  # sample:NAME or the path given
    "model_hash": "string",  # sha256 of the model file
    "config_name": "string",
    "config_key": "string",  # CompileConfig.key() of the config as given
    "config": "string",  # CompileConfig JSON as compiled (with the task's hardware and input shapes)
    "hardware": "string",  # profile name, "" for none (not simulated)
    "status": "string",  # ok, refused, failed, timeout
    "error": "string",  # in words; "" when ok
    "nodes": "Int64",
    "kernels": "Int64",
    "arena_bytes": "Int64",
    "theory_min_bytes": "Int64",
    "simulated_us": "float64",
    "compile_seconds": "float64",
    "max_rel_error": "float64",  # against the O0 graph on seeded inputs
    "seconds": "float64",  # the whole task, on its worker
    "worker": "string",  # host:pid of the worker process that ran it
}
SUFFIXES = (".parquet", ".csv")
FLUSH_SECONDS = 2.0  # how often the file is rewritten while rows arrive (the journal has every row at once)


def empty_row(task: Task) -> Row:
    """A task's row before anything is measured (status "failed" until it says otherwise)."""
    row: Row = dict.fromkeys(COLUMNS)
    row.update(key=task.key, model=task.model.name, model_hash=task.model.digest, config_name=task.config.name,
               config_key=task.config.config.key(), config=json.dumps(task.compile_config().to_json()),
               hardware=task.hardware, status="failed", error="")
    return row


def to_frame(rows: list[Row]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return _typed(frame)


def load_results(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A sweep's results file (.parquet or .csv) as a DataFrame with the columns and dtypes of COLUMNS."""
    file = Path(path)
    _check_suffix(file)
    if not file.is_file():
        raise UsageError(f"sweep results {quote(file)} not found.")
    return _parse(file, file.suffix, quote(file))


def read_results(data: bytes, suffix: str, name: str, max_rows: int | None = None) -> pd.DataFrame:
    """A results file's bytes (an upload: `name` names it in errors) as load_results reads a file: parsed by
    pandas and pyarrow only (never pickle). More than `max_rows` rows, or bytes that are no results file,
    are refused in words."""
    _check_suffix(Path(f"file{suffix}"))
    if suffix == ".parquet" and max_rows is not None:
        try:
            rows = pq.ParquetFile(io.BytesIO(data)).metadata.num_rows  # before decompressing anything
        except (pa.ArrowException, OSError) as err:
            raise UsageError(f"{quote(name)} is not a Parquet file ({err}).") from err
        if rows > max_rows:
            raise UsageError(f"{quote(name)} has {rows:,} rows, more than the {max_rows:,} this reads.",
                             hint="Filter the sweep down (pandas) and load the smaller file.")
    try:
        frame = _parse(io.BytesIO(data), suffix, quote(name), max_rows)
    except (ValueError, TypeError, pa.ArrowException, OSError, pd.errors.ParserError) as err:
        raise UsageError(f"{quote(name)} cannot be read as a sweep results {suffix} file ({err}).",
                         hint="Load a file written by `python -m ge_core sweep ... --out FILE`.") from err
    if max_rows is not None and len(frame) > max_rows:
        raise UsageError(f"{quote(name)} has more than the {max_rows:,} rows this reads.",
                         hint="Filter the sweep down (pandas) and load the smaller file.")
    return frame


def _parse(source: Path | io.BytesIO, suffix: str, label: str, max_rows: int | None = None) -> pd.DataFrame:
    if suffix == ".csv":
        numeric = [name for name, dtype in COLUMNS.items() if dtype != "string"]
        frame = pd.read_csv(source, dtype={n: "string" for n, d in COLUMNS.items() if d == "string"},
                            keep_default_na=False, na_values={n: ["", "<NA>"] for n in numeric},
                            nrows=None if max_rows is None else max_rows + 1)
    else:
        frame = pd.read_parquet(source, engine="pyarrow")
    missing = [name for name in COLUMNS if name not in frame.columns]
    if missing:
        raise UsageError(f"{label} is not a sweep results file: it has no {', '.join(missing)} column(s).")
    return _typed(frame)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    typed = frame.astype({name: dtype for name, dtype in COLUMNS.items() if name in frame.columns})
    for name, dtype in COLUMNS.items():
        if dtype == "string" and name in typed.columns:
            typed[name] = typed[name].fillna("")
    return typed.reset_index(drop=True)


def _check_suffix(file: Path) -> None:
    if file.suffix not in SUFFIXES:
        raise UsageError(f"sweep results {quote(file)} must end in .parquet or .csv.")


class ResultsStore:
    """The rows of one results file (those already there, then new ones), kept by key: each task once."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._rows: dict[str, Row] = {}
        self._last_write = time.monotonic()
        self._unwritten = False  # rows the file does not hold yet (new ones, or a journal's)
        if self.path is None:
            return
        _check_suffix(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            for row in load_results(self.path).astype(object).where(lambda f: f.notna(), None).to_dict("records"):
                self._rows[str(row["key"])] = row
        journal = _read_journal(self.journal)
        self._rows.update(journal)
        self._unwritten = bool(journal)

    @property
    def journal(self) -> Path:
        assert self.path is not None
        return self.path.with_name(f".{self.path.name}.journal")

    @property
    def keys(self) -> set[str]:
        return set(self._rows)

    def add(self, row: Mapping[str, Any]) -> None:
        self._rows[str(row["key"])] = dict(row)
        self._unwritten = True
        if self.path is None:
            return
        with self.journal.open("a", encoding="utf-8") as journal:
            journal.write(json.dumps(dict(row)) + "\n")
            journal.flush()
            os.fsync(journal.fileno())
        if time.monotonic() - self._last_write >= FLUSH_SECONDS:
            self.write()

    def write(self) -> None:
        """The whole file, atomically: to a temporary file beside it, then os.replace."""
        if self.path is None:
            return
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        frame = self.frame()
        if self.path.suffix == ".csv":
            frame.to_csv(temporary, index=False)
        else:
            frame.to_parquet(temporary, index=False)
        os.replace(temporary, self.path)
        self._last_write = time.monotonic()
        self._unwritten = False

    def close(self) -> None:
        """The file holds every row: the journal is no longer needed. (Nothing new: the file is left as it is,
        and none is made for a sweep that ran no task.)"""
        if self.path is None:
            return
        if self._unwritten:
            self.write()
        self.journal.unlink(missing_ok=True)

    def frame(self, keys: list[str] | None = None) -> pd.DataFrame:
        """Every row (or those of `keys`, in that order)."""
        rows = list(self._rows.values()) if keys is None else [self._rows[k] for k in keys if k in self._rows]
        return to_frame(rows)


def _read_journal(path: Path) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    if not path.is_file():
        return rows
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue  # torn by a kill mid-write: that task runs again
        if isinstance(row, dict) and "key" in row:
            rows[str(row["key"])] = row
    return rows
