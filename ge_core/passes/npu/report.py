"""What the NPU lowering did, in one line (the CLI) and as numbers (tests, the UI)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ge_core.ir.graph import Graph
from ge_core.passes.npu.edits import is_transdata


def transdata_count(graph: Graph) -> int:
    return sum(is_transdata(n) for n in graph.nodes)


def lowering_line(graph: Graph, report: Mapping[str, Any]) -> str:
    """`lowered for ascend910: 2 TransData, 55 op(s) in NC1HWC0, 59 kernel(s) tiled (block dim up to 32)`"""
    in_5hd = sum(f["format"] == "NC1HWC0" for f in report.get("formats", ()))
    tiling = report.get("tiling", ())
    widest = max((t["block_dim"] for t in tiling), default=0)
    return (f"lowered for {report.get('hardware', '?')}: {transdata_count(graph)} TransData, {in_5hd} op(s) in "
            f"NC1HWC0, {len(tiling)} kernel(s) tiled (block dim up to {widest})")
