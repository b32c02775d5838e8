"""msprof's op_summary CSV (one row per task a real Ascend device ran) read into a simulator-shaped result.

    summary = read_op_summary("op_summary_20240101.csv")       # a path or the file's bytes
    real = measured_result(summary, load_profile("ascend310p"))  # a SimResult: every profile view shows it

The columns are msprof's (Ascend/msprof: docs/en/user_guide/profile_data_file_references.md, "op_summary";
its exporter's header list, analysis/msconfig/msprof_export_data_config.py). Two layouts are read:

- today's: `Task Start Time(us)`, `Block Num`, per-unit PMU times prefixed `aic_` (cube core) and `aiv_`
  (vector core): `aic_mac_time(us)`, `aic_mte2_time(us)`, `aiv_vec_time(us)`...;
- the older one (CANN 5/6, and msprof before its commit 14417d4 "rename block Dim to block Num"): `Task Start
  Time` without a unit, `Block Dim`, unprefixed `aicore_time(us),total_cycles,vec_time(us),mac_time(us)...`.

`Model Name` and `Infer ID` are optional (msprof writes them for models only); values may be `N/A` or end in a
tab (msprof appends one to start times so that spreadsheets keep their digits). A model run several times has
one set of rows per `Infer ID`: the last one is read (the first runs warm up). A file that cannot be read is
refused with an OpSummaryError naming the file, the line and the column.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ge_core.errors import UsageError
from ge_core.hardware.profile import HardwareProfile
from ge_core.sim.cost import UNITS
from ge_core.sim.simulator import OpRow, SimResult

MAX_BYTES = 256 << 20  # a model's op_summary is kilobytes to megabytes; more is not an op_summary
NA = {"", "N/A", "NA", "n/a", "nan", "NaN", "None", "-"}

# canonical name -> the header spellings msprof wrote over its versions, newest first
REQUIRED = {"name": ("Op Name",), "duration_us": ("Task Duration(us)",)}
OPTIONAL = {
    "type": ("OP Type",), "task_type": ("Task Type",), "start_us": ("Task Start Time(us)", "Task Start Time"),
    "wait_us": ("Task Wait Time(us)",), "block": ("Block Num", "Block Dim"), "stream": ("Stream ID",),
    "model": ("Model Name",), "model_id": ("Model ID",), "infer_id": ("Infer ID",), "device": ("Device_id",),
    "core_us": ("aicore_time(us)",), "vector_core_us": ("aiv_time(us)",),
}
# our unit -> PMU time columns: prefixed (cube core aic_, vector core aiv_) or unprefixed (older CANN)
UNIT_COLUMNS = {
    "cube": ("aic_mac_time(us)", "aiv_mac_time(us)", "mac_time(us)"),
    "vector": ("aiv_vec_time(us)", "aic_vec_time(us)", "vec_time(us)"),
    "scalar": ("aic_scalar_time(us)", "aiv_scalar_time(us)", "scalar_time(us)"),
    "mte1": ("aic_mte1_time(us)", "aiv_mte1_time(us)", "mte1_time(us)"),
    "mte2": ("aic_mte2_time(us)", "aiv_mte2_time(us)", "mte2_time(us)"),
    "mte3": ("aic_mte3_time(us)", "aiv_mte3_time(us)", "mte3_time(us)"),
    "fixpipe": ("aic_fixpipe_time(us)", "fixpipe_time(us)"),
}
NUMERIC = ("duration_us", "start_us", "wait_us", "block", "stream", "infer_id", "core_us", "vector_core_us")


class OpSummaryError(UsageError):
    """An op_summary CSV that cannot be read: names the file, and the line and column when one is at fault."""


@dataclass(frozen=True)
class OpSummary:
    """The tasks of one inference, in start order: columns name, type, task_type, start_us (from 0), duration_us,
    wait_us, block, stream and one `<unit>_us` per unit of ge_core.sim.UNITS (NaN when not measured)."""

    file: str
    layout: str  # "current" (Task Start Time(us), Block Num, aic_/aiv_) or "older" (no unit, Block Dim)
    tasks: pd.DataFrame
    infer_ids: tuple[int, ...]  # every Infer ID in the file (one inference read: the last)
    infer_id: int | None

    @property
    def total_us(self) -> float:
        t = self.tasks
        return float((t["start_us"] + t["duration_us"]).max()) if len(t) else 0.0


def read_op_summary(source: str | Path | bytes, name: str = "", infer_id: int | None = None) -> OpSummary:
    """An op_summary CSV (a path, or its bytes with `name` for messages); `infer_id`: which inference to read
    when the file holds several (default: the last)."""
    label, data = _bytes_of(source, name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise OpSummaryError(f"op_summary '{label}' is not UTF-8 text (byte {exc.start}).",
                             hint="Give msprof's op_summary_*.csv as it wrote it.") from None
    try:
        raw = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise OpSummaryError(f"op_summary '{label}' is not a CSV table ({str(exc).strip()}).",
                             hint="Give msprof's op_summary_*.csv as it wrote it.") from None
    raw.columns = [str(c).strip() for c in raw.columns]
    columns, layout = _columns(raw, label)
    frame = pd.DataFrame({key: raw[col].map(_clean) for key, col in columns.items()})
    for key in (k for k in NUMERIC if k in frame):
        frame[key] = _numbers(frame[key], columns[key], label)
    for unit, col in _unit_columns(raw).items():
        frame[f"{unit}_us"] = _numbers(raw[col].map(_clean), col, label)
    if (frame["duration_us"] < 0).any():
        line = int(frame.index[frame["duration_us"] < 0][0]) + 2
        raise OpSummaryError(f"op_summary '{label}', line {line}, column 'Task Duration(us)': a negative duration.")
    return _one_inference(frame, label, layout, infer_id)


def _bytes_of(source: str | Path | bytes, name: str) -> tuple[str, bytes]:
    if isinstance(source, bytes):
        label = name or "<bytes>"
        data = source
    else:
        path = Path(source)
        label = name or path.name
        if not path.is_file():
            raise OpSummaryError(f"op_summary '{path}' not found.", hint="Give the path of msprof's op_summary_*.csv.")
        if path.stat().st_size > MAX_BYTES:
            raise OpSummaryError(f"op_summary '{label}' is {path.stat().st_size >> 20} MiB, more than the "
                                 f"{MAX_BYTES >> 20} MiB an op_summary of one model can be.",
                                 hint="Export one model's profile (msprof --export) and give its op_summary.")
        data = path.read_bytes()
    if len(data) > MAX_BYTES:
        raise OpSummaryError(f"op_summary '{label}' is {len(data) >> 20} MiB, more than the {MAX_BYTES >> 20} MiB "
                             "an op_summary of one model can be.")
    if not data.strip():
        raise OpSummaryError(f"op_summary '{label}' is empty.", hint="Give msprof's op_summary_*.csv as it wrote it.")
    return label, data


def _columns(raw: pd.DataFrame, label: str) -> tuple[dict[str, str], str]:
    """canonical name -> the file's column, and which layout the file is."""
    found: dict[str, str] = {}
    for key, spellings in {**REQUIRED, **OPTIONAL}.items():
        col = next((s for s in spellings if s in raw.columns), None)
        if col is not None:
            found[key] = col
    missing = [spellings[0] for key, spellings in REQUIRED.items() if key not in found]
    if missing:
        raise OpSummaryError(f"op_summary '{label}' has no column {', '.join(repr(m) for m in missing)}: it is "
                             f"not an op_summary (its columns: {', '.join(list(raw.columns)[:12])}...).",
                             hint="msprof writes op_summary_*.csv with 'Op Name' and 'Task Duration(us)'.")
    older = found.get("start_us") == "Task Start Time" or found.get("block") == "Block Dim" \
        or ("aicore_time(us)" in raw.columns and not any(c.startswith(("aic_", "aiv_")) for c in raw.columns))
    return found, "older" if older else "current"


def _unit_columns(raw: pd.DataFrame) -> dict[str, str]:
    """unit -> the first of its PMU time columns the file has that holds any value."""
    out = {}
    for unit, spellings in UNIT_COLUMNS.items():
        for col in spellings:
            if col in raw.columns and (~raw[col].map(_clean).isin(NA)).any():
                out[unit] = col
                break
    return out


def _clean(value: object) -> str:
    """A cell without msprof's trailing tab and spaces."""
    return str(value).strip().rstrip("\t").strip()


def _numbers(column: pd.Series, name: str, label: str) -> pd.Series:
    """The column as floats (N/A and empty: NaN); a cell that is no number is refused naming line and column."""
    values = column.where(~column.isin(NA))
    numbers = pd.to_numeric(values, errors="coerce")
    bad = numbers.isna() & values.notna()
    if bad.any():
        row = int(bad.idxmax())
        raise OpSummaryError(f"op_summary '{label}', line {row + 2}, column '{name}': {column[row]!r} is not a number.",
                             hint="Fix that cell, or export the profile again with msprof.")
    return numbers.astype(float)


def _one_inference(frame: pd.DataFrame, label: str, layout: str, infer_id: int | None) -> OpSummary:
    ids: tuple[int, ...] = ()
    chosen = None
    if "infer_id" in frame and frame["infer_id"].notna().any():
        ids = tuple(sorted({int(v) for v in frame["infer_id"].dropna()}))
        chosen = ids[-1] if infer_id is None else infer_id
        if chosen not in ids:
            raise OpSummaryError(f"op_summary '{label}' has no Infer ID {chosen}.",
                                 hint=f"Its Infer IDs: {', '.join(map(str, ids))}.")
        frame = frame[frame["infer_id"] == chosen]
    if frame.empty:
        raise OpSummaryError(f"op_summary '{label}' has no task rows.", hint="Profile a run of the model with msprof.")
    frame = frame.copy()
    if "start_us" not in frame or frame["start_us"].isna().all():  # no times: back to back, as on one stream
        frame["start_us"] = frame["duration_us"].cumsum() - frame["duration_us"]
    frame = frame.sort_values("start_us", kind="stable").reset_index(drop=True)
    frame["start_us"] = frame["start_us"] - frame["start_us"].min()
    for key, default in (("type", ""), ("task_type", "AI_CORE"), ("stream", 0.0), ("block", math.nan),
                         ("wait_us", 0.0)):
        if key not in frame:
            frame[key] = default
    frame["type"] = frame["type"].fillna("").map(str)
    frame["stream"] = frame["stream"].fillna(0).astype(int)
    for unit in UNITS:
        if f"{unit}_us" not in frame:
            frame[f"{unit}_us"] = math.nan
    return OpSummary(label, layout, frame, ids, chosen)


def measured_result(summary: OpSummary, profile: HardwareProfile, names: dict[int, str] | None = None,
                    precision: str = "") -> SimResult:
    """The measured tasks as a SimResult (one OpRow per task), so every view of a simulation shows them.
    `names`: task index -> the node of our compile it matched (ge_core.sim.real_compare), for the overlay on
    our graph; unmatched tasks keep their own name. FLOPs and bytes are unknown (0); per-unit busy time is
    the PMU's where measured."""
    rows = []
    for i, task in enumerate(summary.tasks.itertuples(index=False)):
        busy = {u: _or_zero(getattr(task, f"{u}_us")) for u in UNITS}
        node = (names or {}).get(i, str(task.name))
        block = int(task.block) if not math.isnan(task.block) else 0
        rows.append(OpRow(node, str(task.type), _unit(str(task.task_type), busy), float(task.start_us),
                          float(task.duration_us), 0, 0, _bound(busy), 0.0, busy, block, 0,
                          f"measured: {task.name} ({task.type or '?'}, {task.task_type}), stream {task.stream}",
                          stream=int(task.stream)))
    return SimResult(profile, precision or profile.default_precision_mode, rows, [], {}, source=summary.file)


def _or_zero(value: float) -> float:
    return 0.0 if math.isnan(value) else float(value)


def _unit(task_type: str, busy: dict[str, float]) -> str:
    if task_type.startswith("AI_CPU"):
        return "scalar"
    if task_type == "AI_VECTOR_CORE" or busy["cube"] <= 0 < busy["vector"]:
        return "vector"
    return "cube" if busy["cube"] > 0 else "vector"


def _bound(busy: dict[str, float]) -> str:
    """compute or memory from the PMU's busiest pipe (msprof's memory_bound: mte2 over max(mac, vec)); unknown
    when the file has no PMU columns."""
    compute = max(busy["cube"], busy["vector"])
    memory = max(busy["mte1"], busy["mte2"], busy["mte3"], busy["fixpipe"])
    if compute <= 0 and memory <= 0:
        return "unknown"
    return "memory" if memory > compute else "compute"
