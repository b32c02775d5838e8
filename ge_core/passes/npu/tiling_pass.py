"""TilingPass: how every kernel of the lowered graph is cut for the target's on-chip buffers and cores."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from ge_core.hardware import DEFAULT_PROFILE, load_profile, tile_node
from ge_core.ir.graph import Graph
from ge_core.passes.infra.base import PassResult

DEFAULT_HARDWARE = DEFAULT_PROFILE


@dataclass(frozen=True)
class TilingPass:
    """Tile every kernel for the target's AI Core and split it over the cores (the block dim).

    A cube op (Conv, MatMul, Gemm, a fused kernel around one) is cut into blocks that fit L0A/L0B (inputs)
    and L0C (accumulators), staged through L1; a vector op into tiles that fit the Unified Buffer. The
    blocks are spread over the AI cores: the block dim is how many cores the kernel launches on. Views
    launch nothing and are not tiled. Every decision, with its reason, goes to the compile report's
    `tiling` section (one entry per kernel); the graph itself is not changed.
    """

    name: ClassVar[str] = "TilingPass"
    hardware: str = DEFAULT_HARDWARE  # a profile name (ascend310, ascend910...) or a profile .json path

    def run(self, graph: Graph) -> PassResult:
        profile = load_profile(self.hardware)
        tilings = [t for node in graph.nodes if (t := tile_node(node, graph, profile)).unit != "none"]
        units = Counter(t.unit for t in tilings)
        widest = max((t.block_dim for t in tilings), default=0)
        note = (f"{len(tilings)} kernel(s) tiled for {profile.name}: "
                + ", ".join(f"{n} {unit}" for unit, n in sorted(units.items()))
                + f"; block dim up to {widest} of {profile.ai_cores} core(s)")
        report = {"tiling": tuple(t.to_json() | {"hardware": profile.name} for t in tilings)}
        return PassResult(False, (note,) if tilings else (), report=report)
