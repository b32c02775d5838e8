"""A measured profile (op_summary) beside the simulation of our own compile: which task is which kernel, and
how far the simulator is off per op, per op type and in total.

Tasks are matched to our kernels by name first (GE keeps an ONNX node's name on the op it makes), then in
order by type: the next kernel of ours, after the last match, whose op (or, for a fused kernel, an op of its
body) has the task's type as its name or one of its GE names (OpDef.ge_types: Conv2D is a Conv, MatMulV2 a
MatMul, SoftmaxV2 a Softmax...). Tasks with no kernel of ours (a Cast GE inserted, an AIPP, a memset) and
kernels no task ran stay unmatched and are listed apart. Ratios are simulated / measured: above 1, the
simulator is slower than the chip.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from ge_core.ir.graph import Graph
from ge_core.ops import REGISTRY
from ge_core.sim.op_summary import OpSummary
from ge_core.sim.simulator import SimResult

PER_OP_COLUMNS = ["task", "ge_type", "node", "op_type", "measured_us", "simulated_us", "ratio", "error_us"]
PER_TYPE_COLUMNS = ["op_type", "kernels", "measured_us", "simulated_us", "ratio"]


def families(graph: Graph) -> dict[str, set[str]]:
    """node -> the op types (lower case) a measured task of it may carry: its own, its fused body's, and their GE
    names (OpDef.ge_types)."""
    out: dict[str, set[str]] = {}
    for node in graph.nodes:
        types = {node.op_type, *_body_types(node.body)}
        names = set(types)
        for t in types:
            op = REGISTRY.get(t)
            if op is not None:
                names.update(op.ge_types)
        out[node.name] = {n.lower() for n in names}
    return out


def _body_types(body: Graph | None) -> Iterable[str]:
    if body is None:
        return
    for inner in body.nodes:
        yield inner.op_type
        yield from _body_types(inner.body)


def match_tasks(summary: OpSummary, sim: SimResult, graph: Graph) -> dict[int, str]:
    """task index (in summary.tasks) -> the node of `sim` it ran; unmatched tasks are absent."""
    kinds = families(graph)
    order = [r.node for r in sim.ops]
    position = {name: i for i, name in enumerate(order)}
    taken: set[str] = set()
    matched: dict[int, str] = {}
    tasks = list(zip(summary.tasks["name"], summary.tasks["type"], strict=True))
    for i, (name, kind) in enumerate(tasks):  # by name: GE keeps the ONNX node's name
        if name in position and name not in taken and (not kind or kind.lower() in kinds.get(name, set())):
            matched[i] = name
            taken.add(name)
    cursor = 0
    for i, (_, kind) in enumerate(tasks):  # the rest in order, by type
        if i in matched:
            cursor = position[matched[i]] + 1
            continue
        want = kind.lower()
        for j in range(cursor, len(order)):
            node = order[j]
            if node not in taken and want and want in kinds.get(node, set()):
                matched[i] = node
                taken.add(node)
                cursor = j + 1
                break
    return matched


def per_op(summary: OpSummary, sim: SimResult, matched: dict[int, str]) -> pd.DataFrame:
    """One row per measured task (its kernel of ours and both times, NaN where unmatched), then one per kernel
    of ours no task matched."""
    simulated = {r.node: r for r in sim.ops}
    rows = []
    for i, task in enumerate(summary.tasks.itertuples(index=False)):
        node = matched.get(i)
        row = simulated.get(node) if node is not None else None
        sim_us = row.latency_us if row is not None else math.nan
        rows.append({"task": task.name, "ge_type": task.type, "node": node or "", "op_type": row.op_type if row else "",
                     "measured_us": float(task.duration_us), "simulated_us": sim_us})
    seen = set(matched.values())
    rows += [{"task": "", "ge_type": "", "node": r.node, "op_type": r.op_type, "measured_us": math.nan,
              "simulated_us": r.latency_us} for r in sim.ops if r.node not in seen]
    frame = pd.DataFrame(rows, columns=PER_OP_COLUMNS[:6])
    frame["ratio"] = frame["simulated_us"] / frame["measured_us"]
    frame["error_us"] = frame["simulated_us"] - frame["measured_us"]
    return frame[PER_OP_COLUMNS]


def per_type(ops: pd.DataFrame) -> pd.DataFrame:
    """Matched kernels summed per op type of ours, largest measured time first."""
    both = ops.dropna(subset=["measured_us", "simulated_us"])
    grouped = both.groupby("op_type", sort=False).agg(kernels=("node", "size"), measured_us=("measured_us", "sum"),
                                                      simulated_us=("simulated_us", "sum")).reset_index()
    grouped["ratio"] = grouped["simulated_us"] / grouped["measured_us"]
    return grouped.sort_values("measured_us", ascending=False, kind="stable")[PER_TYPE_COLUMNS].reset_index(drop=True)


def most_wrong(ops: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    """The matched kernels whose simulated time is furthest from the measured one, in µs (what moves the total)."""
    both = ops.dropna(subset=["measured_us", "simulated_us"])
    return both.reindex(both["error_us"].abs().sort_values(ascending=False).index).head(n).reset_index(drop=True)


def per_op_error(ops: pd.DataFrame) -> float:
    """Geometric mean of |ln(simulated / measured)| over the matched kernels (0: exact; ln 2 = 0.69: off by 2x
    on average); NaN with no match."""
    both = ops.dropna(subset=["measured_us", "simulated_us"])
    both = both[(both["measured_us"] > 0) & (both["simulated_us"] > 0)]
    if both.empty:
        return math.nan
    return float((both["simulated_us"] / both["measured_us"]).map(lambda r: abs(math.log(r))).mean())


def totals(summary: OpSummary, sim: SimResult, ops: pd.DataFrame) -> dict[str, float]:
    """Measured and simulated totals: the whole timeline, the matched kernels alone, and the per-op error."""
    both = ops.dropna(subset=["measured_us", "simulated_us"])
    measured, simulated = summary.total_us, sim.total_us
    return {"measured_us": measured, "simulated_us": simulated,
            "ratio": simulated / measured if measured else math.nan,
            "matched_tasks": float(len(both)), "tasks": float(len(summary.tasks)), "kernels": float(len(sim.ops)),
            "matched_measured_us": float(both["measured_us"].sum()),
            "matched_simulated_us": float(both["simulated_us"].sum()), "per_op_error": per_op_error(ops)}
