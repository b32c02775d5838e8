"""Pricing a control-flow node (If, Loop, Scan) from its subgraphs, which the simulator schedules like graphs.

- If: the dearer branch (which one runs is known only at run time);
- Loop: trip count x one run of the body, when the trip count is known before running (a constant M with no
  condition, or a known true one the body passes through), else one iteration, and the row says so;
- Scan: sequence length x one run of the body (the length is a dim of its scan inputs), else one iteration.

The node's row sums its subgraphs' kernels (latency, FLOPs, bytes, busy time per unit); its `tiling` column
says what was priced. Subgraph kernels do not get rows of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import Operand
from ge_core.ops.control import iterations, loop_trips
from ge_core.sim.cost import UNITS


class RowLike(Protocol):
    @property
    def latency_us(self) -> float: ...
    @property
    def flops(self) -> int: ...
    @property
    def bytes(self) -> int: ...
    @property
    def floor_us(self) -> float: ...
    @property
    def bound(self) -> str: ...
    @property
    def busy_us(self) -> dict[str, float]: ...


R = TypeVar("R", bound=RowLike)


def priced_runs(node: Node, graph: Graph, price: Callable[[Graph], Sequence[R]]) -> tuple[list[R], int, str]:
    """The kernels of the subgraph run that is priced, how many times it runs, and a note saying so."""
    if node.op_type == "If" or "body" not in node.subgraphs:
        runs = {attr: list(price(sub)) for attr, sub in sorted(node.subgraphs.items())}
        attr = max(runs, key=lambda a: sum(r.latency_us for r in runs[a])) if runs else ""
        return runs.get(attr, []), 1, f"{node.op_type}: the dearer subgraph ({attr}) priced; which runs is " \
                                       "known at run time"
    rows = list(price(node.subgraphs["body"]))
    trips = _trips(node, graph)
    if trips is None:
        return rows, 1, f"{node.op_type}: iteration count unknown before running: one iteration priced"
    return rows, trips, f"{node.op_type}: {trips} iteration(s) x body ({len(rows)} kernels)"


def _trips(node: Node, graph: Graph) -> int | None:
    if node.op_type == "Loop":
        count = graph.constants.get(node.input(0)) if node.input(0) else None
        cond_name = node.input(1) if len(node.explicit_inputs) > 1 else ""
        cond = Operand(graph.desc(cond_name), graph.constants.get(cond_name)) if cond_name else None
        known = loop_trips(node, count, cond)
        if known is not None:
            return known
    return iterations(node, graph.input_descs(node), graph.output_descs(node))


def totals(rows: Sequence[RowLike], times: int) -> tuple[float, int, int, float, str, dict[str, float]]:
    """(latency, FLOPs, bytes, floor, bound, busy per unit) of `times` runs of `rows`."""
    busy: dict[str, float] = dict.fromkeys(UNITS, 0.0)
    by_bound: dict[str, float] = {}
    for r in rows:
        for u, v in r.busy_us.items():
            busy[u] = busy.get(u, 0.0) + v * times
        by_bound[r.bound] = by_bound.get(r.bound, 0.0) + r.latency_us
    bound = max(by_bound, key=lambda b: by_bound[b]) if by_bound else "overhead"
    return (sum(r.latency_us for r in rows) * times, sum(r.flops for r in rows) * times,
            sum(r.bytes for r in rows) * times, sum(r.floor_us for r in rows) * times, bound, busy)
