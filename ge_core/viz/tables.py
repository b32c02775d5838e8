"""Data frames and number formats for the UI's summary tables and charts (pure; pandas only)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ge_core.frontend.ge.op_map import GRAPH_IO_TYPES, registry_op
from ge_core.frontend.summary import ModelSummary, TensorInfo

GRAPH_IO = "graph I/O"  # a GE dump's Data, Const and NetOutput ops (graph inputs, constants, outputs here)


def tensor_table(tensors: Sequence[TensorInfo]) -> pd.DataFrame:
    """One row per graph input/output: name, dtype, dims (symbolic names kept, e.g. [batch, 64])."""
    rows = [{"name": t.name, "dtype": t.dtype, "dims": "[" + ", ".join(t.dims) + "]"}
            if t.dtype != "undefined" else {"name": t.name, "dtype": "?", "dims": "? (not inferred)"}
            for t in tensors]
    return pd.DataFrame(rows, columns=["name", "dtype", "dims"])


def op_table(summary: ModelSummary) -> pd.DataFrame:
    """One row per op type: count and fusion category ("unsupported" when there is no kernel).

    Sorted by count (descending), then by name, so the table and the bar chart read the same way.
    """
    unsupported = {op.rpartition("::")[2] for op in summary.unsupported}
    dump = summary.producer == "GE"  # GE's types: Conv2D counts as the cube op it maps to
    rows = []
    for op, count in summary.op_histogram.items():
        opdef = None if op in unsupported else registry_op(op)
        category = GRAPH_IO if dump and op in GRAPH_IO_TYPES else "unsupported" if opdef is None \
            else opdef.category.value
        rows.append({"op": op, "count": count, "category": category})
    frame = pd.DataFrame(rows, columns=["op", "count", "category"])
    return frame.sort_values(["count", "op"], ascending=[False, True], ignore_index=True)


def format_count(n: int) -> str:
    """12,345 -> '12.3 k'; small numbers as they are."""
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return str(n)


def format_bytes(n: int) -> str:
    """Bytes in binary units: 1536 -> '1.5 KiB'."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # unreachable: the loop returns at GiB
