"""The vector work of one op: how many vector repeats it issues, of which instruction class.

One vector repeat processes `vector_bytes_per_cycle` bytes (256 B: 64 fp32 or 128 fp16 lanes) and takes
`class_cycles[class]` cycles (profile data: simple arithmetic 1, transcendental functions more, reductions
and data reordering in between). An op issues one pass of repeats over its elements per FLOP it costs per
element (the registry's cost: Gelu is 8 FLOPs per element, Relu 1), at least one pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from ge_core.hardware.profile import HardwareProfile
from ge_core.hardware.sizes import numel, shape_numel
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY
from ge_core.ops.registry import Category, OpDef

TRANSCENDENTAL = frozenset({"Exp", "Log", "Tanh", "Sigmoid", "Erf", "Gelu", "Softplus", "Softsign", "Sqrt",
                            "Reciprocal", "Div", "Pow", "Sin", "Cos", "Elu", "Selu", "Celu", "Mish", "LRN",
                            "HardSwish", "Mod"})
DATA_MOVE = frozenset({"TransData", "Transpose", "Gather", "GatherElements", "GatherND", "DepthToSpace",
                       "SpaceToDepth", "Trilu", "ScatterND", "TopK"})


def instruction_class(node: Node) -> str:
    return instruction_class_of(node.op_type, REGISTRY.for_node(node))


def op_elements(node: Node, graph: Graph) -> tuple[int, int]:
    """(elements the op walks: its largest tensor, bytes per element of its first output)."""
    descs = graph.descs
    largest = max((numel(descs[t]) for t in (*node.inputs, *node.outputs) if t), default=0)
    return largest, descs[node.outputs[0]].itemsize if node.outputs else 4


def vector_cycles(node: Node, graph: Graph, flops: int, share: float, p: HardwareProfile,
                  float_bytes: int | None = None, *, output_only: bool = False) -> float:
    """Vector cycles of `node` on one core doing `share` (0..1] of its elements.

    `float_bytes` overrides the width of float data (2 when a precision mode runs vector ops in fp16);
    `output_only` walks the output alone (a cube op's epilogue: the bias add on C, not on the weights)."""
    descs = graph.descs
    ins = [] if output_only else [descs[t] for t in node.inputs if t]
    outs = [descs[t] for t in node.outputs]
    return vector_cycles_of(node.op_type, REGISTRY.for_node(node), ins, outs[:1] if output_only else outs, flops,
                            share, p, float_bytes)


def vector_cycles_of(op_type: str, op: OpDef | None, ins: Sequence[TensorDesc | None], outs: Sequence[TensorDesc],
                     flops: int, share: float, p: HardwareProfile, float_bytes: int | None) -> float:
    """vector_cycles from the op (its registry op: None if unknown) and the descs of its tensors (None: an
    omitted optional input); `outs` of one output alone for a cube op's epilogue."""
    elements = 0
    for d in (*ins, *outs):
        if d is not None:
            n = shape_numel(d.shape) or 0
            if n > elements:
                elements = n
    if elements == 0:
        return 0.0
    itemsize = 4
    if outs:
        out = outs[0]
        itemsize = out.itemsize
        if float_bytes is not None and itemsize == 4 and out.dtype.startswith("float"):
            itemsize = float_bytes
    if op_type in DATA_MOVE:
        passes, cls = 1, "data_move"
    else:
        passes, cls = max(1, -(-flops // elements)), instruction_class_of(op_type, op)
    repeats = -(-int(elements * share * itemsize) // p.vector_bytes_per_cycle)
    return float(repeats * passes * p.vector_class_cycles[cls])


def instruction_class_of(op_type: str, op: OpDef | None) -> str:
    """The vector instruction class of an op of `op_type` (`op`: its registry op)."""
    if op_type in DATA_MOVE:
        return "data_move"
    if op_type in TRANSCENDENTAL:
        return "transcendental"
    if op is not None and op.category == Category.REDUCE:
        return "reduce"
    return "elementwise"
