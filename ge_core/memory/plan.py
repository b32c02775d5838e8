"""MemoryPlan: where every activation lives in one arena, and the steps that read and write them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Allocation:
    tensor: str
    offset: int
    size: int  # bytes reserved (aligned); a view's is its base's
    shape: tuple[int, ...]
    dtype: str

    @property
    def end(self) -> int:
        return self.offset + self.size

    def to_json(self) -> dict[str, Any]:
        return {"tensor": self.tensor, "offset": self.offset, "size": self.size, "shape": list(self.shape),
                "dtype": self.dtype}


@dataclass(frozen=True)
class PlanStep:
    node: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    inplace: dict[str, str] = field(default_factory=dict)  # output -> input whose bytes it reuses
    no_task: bool = False  # a no-copy Concat: its inputs were written into its output, nothing to launch

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"node": self.node, "inputs": list(self.inputs), "outputs": list(self.outputs)}
        if self.inplace:
            out["inplace"] = dict(self.inplace)
        if self.no_task:
            out["no_task"] = True
        return out


@dataclass
class MemoryPlan:
    alignment: int
    strategy: str
    arena_bytes: int
    theory_min_bytes: int  # peak over steps of the live (aligned) bytes
    no_reuse_bytes: int  # every tensor its own range
    graph_outputs: list[str]
    steps: list[PlanStep]
    allocations: dict[str, Allocation]  # every tensor a step produces
    aliases: dict[str, str]  # view tensor -> the tensor it aliases
    strategies: dict[str, int]  # arena bytes each strategy reached (", no-copy concat": with parts pinned)
    copy_concat_min_bytes: int = 0  # the theory minimum if every Concat copied its inputs (no parts)
    execution_order: str = "graph"  # or "memory_aware": the graph was reordered to lower the peak
    memory_aware_min_bytes: int = 0  # peak live bytes (no in-place) of the best memory-aware order found
    graph_order_min_bytes: int = 0  # the same for the order the passes left

    @property
    def no_copy_concats(self) -> list[str]:
        return [s.node for s in self.steps if s.no_task]

    def to_json(self) -> dict[str, Any]:
        """The compile report's `memory` section (DESIGN.md contract), plus `strategies`."""
        return {
            "alignment": self.alignment,
            "strategy": self.strategy,
            "arena_bytes": self.arena_bytes,
            "theory_min_bytes": self.theory_min_bytes,
            "no_reuse_bytes": self.no_reuse_bytes,
            "graph_outputs": list(self.graph_outputs),
            "steps": [s.to_json() for s in self.steps],
            "allocations": [a.to_json() for a in self.allocations.values()],
            "aliases": dict(self.aliases),  # view -> base: a view shares its base's bytes (and keeps it alive)
            "strategies": dict(self.strategies),
            "copy_concat_min_bytes": self.copy_concat_min_bytes,
            "no_copy_concats": self.no_copy_concats,
            "execution_order": self.execution_order,
            "graph_order_min_bytes": self.graph_order_min_bytes,
            "memory_aware_min_bytes": self.memory_aware_min_bytes,
        }


def plan_from_json(data: Mapping[str, Any]) -> MemoryPlan:
    """The inverse of MemoryPlan.to_json (an offline model stores its plan so)."""
    steps = [PlanStep(s["node"], tuple(s["inputs"]), tuple(s["outputs"]), dict(s.get("inplace", {})),
                      bool(s.get("no_task", False))) for s in data["steps"]]
    allocations = {a["tensor"]: Allocation(a["tensor"], int(a["offset"]), int(a["size"]),
                                           tuple(int(d) for d in a["shape"]), str(a["dtype"]))
                   for a in data["allocations"]}
    return MemoryPlan(int(data["alignment"]), str(data["strategy"]), int(data["arena_bytes"]),
                      int(data["theory_min_bytes"]), int(data["no_reuse_bytes"]), list(data["graph_outputs"]),
                      steps, allocations, dict(data["aliases"]), {k: int(v) for k, v in data["strategies"].items()},
                      int(data["copy_concat_min_bytes"]), str(data["execution_order"]),
                      int(data["memory_aware_min_bytes"]), int(data["graph_order_min_bytes"]))
