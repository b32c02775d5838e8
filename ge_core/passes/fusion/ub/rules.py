"""What each node is to UB fusion: its fusion category, and if it can never join a group, why not.

Computed once per node before grouping (O(N)), so the grouping never re-derives it per candidate.
"""

from __future__ import annotations

from dataclasses import dataclass

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY
from ge_core.ops.registry import Category

UB_FUSED_OP = "UbFused"  # op type of the kernels this pass makes (domain "ge")
# The vector unit's types. int64 and float64 have no vector instructions on Ascend's AI Core.
FUSABLE_DTYPES = frozenset({"float16", "float32", "bfloat16", "int32", "int16", "int8", "uint8", "bool"})
# May sit between a group's first op and its last (REDUCE only ends a group; CUBE only starts one).
THROUGH = frozenset({Category.ELEMENTWISE, Category.BROADCAST, Category.INJECTIVE})
# May be the first op of a group, or the whole of one before it grows.
STARTS = THROUGH | {Category.CUBE}
# What a cube op's kernel takes after it: FixPipe feeds the vector unit elementwise work (and views).
AFTER_CUBE = frozenset({Category.ELEMENTWISE, Category.BROADCAST})


@dataclass(frozen=True)
class Role:
    category: Category
    view: bool  # launches no kernel (Reshape, Squeeze...)
    block: str | None  # why the node can never be in a group, in plain words; None when it can

    @property
    def launches_kernel(self) -> bool:
        return not self.view


def node_role(graph: Graph, node: Node, pinned: set[str]) -> Role:
    op = REGISTRY.for_node(node)
    category = Category.OPAQUE if op is None else op.category
    view = op is not None and op.view
    return Role(category, view, _block(graph, node, category, pinned))


def _block(graph: Graph, node: Node, category: Category, pinned: set[str]) -> str | None:
    label = f"{node.op_type} '{node.name}'"
    if node.op_type == UB_FUSED_OP and node.domain == "ge":
        return f"{label} is already a UB-fused kernel"
    if category == Category.OPAQUE:
        return f"{label} is opaque: never fused through"
    if node.name in pinned:
        return f"{label} is pinned by a control edge: never fused"
    data = [(t, "produces") for t in node.outputs] + [(t, "reads") for t in node.inputs
                                                      if t and not graph.is_constant(t)]
    for t, verb in data:
        desc = graph.descs.get(t)
        if desc is None:
            return f"{label} {verb} '{t}', whose type is not inferred"
        if desc.dtype not in FUSABLE_DTYPES:
            return f"dtype {desc.dtype} not fusable: {label} {verb} '{t}'"
    return None


def kind_word(category: Category) -> str:
    """'a cube op', 'a reduce', 'injective'... for reasons."""
    return {Category.CUBE: "a cube op", Category.REDUCE: "a reduce", Category.INJECTIVE: "injective",
            Category.ELEMENTWISE: "elementwise", Category.BROADCAST: "broadcast",
            Category.OPAQUE: "opaque"}[category]
