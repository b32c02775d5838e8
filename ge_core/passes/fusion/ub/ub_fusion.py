"""UbFusionPass: GE's UB (buffer) fusion: ops whose intermediates can stay in the Unified Buffer become one kernel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ge_core.hardware.ub_limits import DEFAULT_PROFILE, UB_BYTES, ub_bytes
from ge_core.hardware.ub_working_set import WorkingSet, working_set
from ge_core.ir.fusion import cycle_through, fuse
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops.registry import Category
from ge_core.passes.fusion.ub.grouping import Grouper, Rejection, kb
from ge_core.passes.fusion.ub.rules import UB_FUSED_OP, Role
from ge_core.passes.infra.base import FusionDecision, PassResult
from ge_core.passes.infra.rewrite import control_pinned

_RANK = [Category.ELEMENTWISE, Category.BROADCAST, Category.INJECTIVE, Category.REDUCE, Category.CUBE]


@dataclass(frozen=True)
class UbFusionPass:
    """Fuse chains of vector ops, and a cube op with the elementwise ops after it, into one AI Core kernel.

    On an Ascend AI Core every kernel reads its inputs from global memory and writes its outputs back.
    Between two small kernels (Add, then Relu) the tensor makes a round trip off chip for nothing. UB fusion
    runs such ops as one kernel whose intermediates stay in the on-chip Unified Buffer (UB): a Conv or
    MatMul whose output goes through FixPipe into the UB, followed by the elementwise/broadcast ops on it
    (bias, residual Add, activation), or a chain or diamond of elementwise/broadcast/injective ops,
    possibly ending in a reduce (Exp -> ReduceSum). Opaque ops (pools, TopK...) never join a group.

    Which ops group together follows TVM's FuseOps: a node joins the group of its immediate
    post-dominator, the first node where all of its readers meet again, with everything in between, if all
    of it can be fused. So no group creates a cycle, and an op whose output is also read by a node that
    cannot join stays outside. Groups are bounded by the hardware: at most `max_group_ops` ops, and the
    working set of one tile must fit the UB (`ub_bytes`: 256 KB on Ascend 310/910, 192 KB on 910B-like).

    Working set: the kernel walks its data in tiles of T elements. Each tensor the vector stage touches (the
    cube op's output, every other input, the intermediates alive at once, every output) needs a buffer of
    one tile (a smaller tensor, such as a per-channel bias, only its own size), 32-byte aligned, doubled
    for double buffering. T is the largest tile that fits; a group ending in a reduce needs at least one
    whole reduction slab. If even the smallest tile does not fit, the group is split there
    (ge_core/passes/ub_working_set.py has the details). Unknown dims: the working set is unknown, no fusion.

    Every group and every refusal is in the fusion log with its reason. A fused group is one `ge.UbFused`
    node with attributes naming its anchor op, its ops and its working set; its body keeps the original ops.
    """

    name: ClassVar[str] = "UbFusionPass"
    fusion_kind: ClassVar[str] = "ub"
    ub_bytes: int = UB_BYTES[DEFAULT_PROFILE]
    max_group_ops: int = 16
    dry_run: bool = False  # find and log every group, fuse none ("disabled by switch file")

    @classmethod
    def for_profile(cls, profile: str, **kwargs: Any) -> UbFusionPass:
        """The pass with the UB size of a named hardware profile (ascend310, ascend310p, ascend910, ascend910b)."""
        return cls(ub_bytes=ub_bytes(profile), **kwargs)

    def run(self, graph: Graph) -> PassResult:
        grouper = Grouper(graph, self.ub_bytes, self.max_group_ops, control_pinned(graph))
        groups = grouper.run()
        order = {name: i for i, name in enumerate(n.name for n in grouper.nodes)}
        kernels_before = sum(r.launches_kernel for r in grouper.roles)
        decisions = [self._rejected(grouper, r) for r in grouper.rejections]
        saved = fused = 0
        for group in groups:
            decision = self._group_decision(graph, [grouper.nodes[i] for i in group],
                                            [grouper.roles[i] for i in group])
            decisions.append(decision)
            if decision.accepted:
                fused += 1
                saved += sum(grouper.roles[i].launches_kernel for i in group) - 1
        decisions.sort(key=lambda d: order[d.nodes[0]])
        notes = [f"{fused} UB kernel(s) fused: {kernels_before} -> {kernels_before - saved} kernels"] if fused else []
        refused = sum(not d.accepted for d in decisions)
        if refused:
            notes.append(f"{refused} candidate(s) not fused (see the fusion log)")
        return PassResult(fused > 0, tuple(notes), tuple(decisions))

    def _rejected(self, grouper: Grouper, rejection: Rejection) -> FusionDecision:
        nodes = [grouper.nodes[i] for i in rejection.nodes]
        return FusionDecision(self.name, _pattern(nodes), tuple(n.name for n in nodes), False, rejection.reason)

    def _group_decision(self, graph: Graph, nodes: list[Node], roles: list[Role]) -> FusionDecision:
        """Fuse one group (or say why not): the last checks run on the graph as it is now."""
        names = tuple(n.name for n in nodes)
        pattern = _pattern(nodes)
        kernels = [n.name for n, r in zip(nodes, roles, strict=True) if r.launches_kernel]
        if len(kernels) < 2:
            only = f"only '{kernels[0]}'" if kernels else "no op"
            return FusionDecision(self.name, pattern, names, False,
                                  f"{only} in the group launches a kernel (the rest are views): fusing saves nothing")
        blocker = cycle_through(graph, nodes)
        if blocker is not None:
            return FusionDecision(self.name, pattern, names, False, f"would create a cycle through '{blocker.name}': "
                                  "a path leaves the group there and comes back into it")
        model = working_set(graph, nodes)
        tile = model.best_tile(self.ub_bytes) if isinstance(model, WorkingSet) else None
        if not isinstance(model, WorkingSet) or tile is None:  # the grouping checked both: kept as a guard
            reason = model if isinstance(model, str) else f"working set exceeds UB {kb(self.ub_bytes)}"
            return FusionDecision(self.name, pattern, names, False, reason)
        if self.dry_run:
            return FusionDecision(self.name, pattern, names, False, "disabled by switch file")
        anchor = _anchor(nodes, roles)
        attrs = {"anchor": anchor.op_type, "anchor_node": anchor.name, "ops": [n.op_type for n in nodes],
                 "working_set_bytes": model.bytes_at(tile), "tile_elems": tile, "ub_bytes": self.ub_bytes}
        fused = fuse(graph, nodes, UB_FUSED_OP, domain="ge", attrs=attrs)
        reason = f"{_grouped(nodes, roles)}; working set {kb(model.bytes_at(tile))} of UB {kb(self.ub_bytes)} " \
                 f"at a tile of {tile} element(s)"
        return FusionDecision(self.name, pattern, names, True, reason, fused.name)


def _pattern(nodes: list[Node]) -> str:
    return "+".join(n.op_type for n in nodes)


def _anchor(nodes: list[Node], roles: list[Role]) -> Node:
    """The op that shapes the kernel: the cube op, else a reduce, else the strongest vector op."""
    def rank(i: int) -> tuple[int, int]:
        category = roles[i].category
        return (_RANK.index(category) if category in _RANK else 0, -i)  # ties: the first in the group

    return nodes[max(range(len(nodes)), key=rank)]


def _grouped(nodes: list[Node], roles: list[Role]) -> str:
    """What was grouped, in words."""
    cube = next((n for n, r in zip(nodes, roles, strict=True) if r.category == Category.CUBE), None)
    reduce = next((n for n, r in zip(nodes, roles, strict=True) if r.category == Category.REDUCE), None)
    rest = [n for n in nodes if n is not cube and n is not reduce]
    listed = ", ".join(f"'{n.name}'" for n in rest[:4]) + (", ..." if len(rest) > 4 else "")
    if cube is not None:
        return (f"grouped cube op '{cube.name}' ({cube.op_type}) with {len(rest)} elementwise/broadcast "
                f"op(s) ({listed}) into one kernel")
    ending = f", ending in reduce '{reduce.name}' ({reduce.op_type})" if reduce is not None else ""
    return f"grouped {len(rest)} elementwise/broadcast/injective op(s) ({listed}) into one kernel{ending}"
