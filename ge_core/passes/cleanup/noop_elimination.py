"""NoOpEliminationPass: remove nodes whose output is their input, unchanged."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.rewrite import bypass, control_pinned

# A rule looks at a node and returns the input tensor its (first) output equals, or None.
Rule = Callable[[Graph, Node], str | None]


@dataclass(frozen=True)
class NoOpEliminationPass:
    """Remove operators that hand their input on unchanged: Identity, Dropout at inference, a Reshape
    to the shape the tensor already has, a Cast to its own dtype, a Transpose by the identity perm, a
    Pad by zeros, a Mul by 1 or an Add of 0... Exporters and earlier rewrites leave many of them.
    Each would still cost a kernel launch and a copy on the device, so GE deletes them and lets the
    readers read the input directly.
    """

    name: ClassVar[str] = "NoOpEliminationPass"

    def run(self, graph: Graph) -> PassResult:
        pinned = control_pinned(graph)
        removed: Counter[str] = Counter()
        # One sweep suffices: removing a no-op changes no other node's input descs or attributes.
        for node in graph.nodes:
            rule = RULES.get(node.op_type) if node.domain in ("", "ai.onnx") else None
            if rule is None or node.control_inputs or node.name in pinned:
                continue
            source = rule(graph, node)
            if source is not None and bypass(graph, node, source):
                removed[node.op_type] += 1
        if not removed:
            return PassResult(False)
        kinds = ", ".join(f"{op} x{n}" for op, n in sorted(removed.items()))
        return PassResult(True, (f"removed {sum(removed.values())} no-op node(s): {kinds}",))


# ---- conditions ----------------------------------------------------------------------------------
def _desc(graph: Graph, tensor: str) -> TensorDesc | None:
    return graph.descs.get(tensor) if tensor else None


def _passes_through(graph: Graph, node: Node, source: str) -> bool:
    """The output has the source's dtype and (known) shape: readers cannot tell them apart."""
    a, b = _desc(graph, source), _desc(graph, node.outputs[0])
    return a is not None and b is not None and a.dtype == b.dtype and a.shape == b.shape


def _same_static(graph: Graph, node: Node, source: str) -> bool:
    """As _passes_through, with every dim known (an unknown dim might differ at run time)."""
    desc = _desc(graph, source)
    return desc is not None and desc.is_static and _passes_through(graph, node, source)


def _const(graph: Graph, node: Node, index: int) -> np.ndarray | None:
    return graph.constants.get(node.input(index))


def _input0(graph: Graph, node: Node) -> str | None:
    return node.input(0) or None


def _same_shape(graph: Graph, node: Node) -> str | None:
    return node.input(0) if _same_static(graph, node, node.input(0)) else None


def _same_dtype(graph: Graph, node: Node) -> str | None:
    return node.input(0) if _passes_through(graph, node, node.input(0)) else None


def _single_input(graph: Graph, node: Node) -> str | None:
    return node.input(0) if len(node.inputs) == 1 and _passes_through(graph, node, node.input(0)) else None


def _single_output(graph: Graph, node: Node) -> str | None:
    return node.input(0) if len(node.outputs) == 1 and _same_static(graph, node, node.input(0)) else None


def _dropout_inference(graph: Graph, node: Node) -> str | None:
    if node.has_input(2):  # training_mode: only a constant False proves inference
        flag = _const(graph, node, 2)
        if flag is None or bool(np.asarray(flag).reshape(-1)[0]):
            return None
    return _same_dtype(graph, node)


def _identity_perm(graph: Graph, node: Node) -> str | None:
    desc = _desc(graph, node.input(0))
    if desc is None:
        return None
    perm = node.attr("perm")
    identity = desc.rank <= 1 if perm is None else [int(p) for p in perm] == list(range(desc.rank))
    return node.input(0) if identity and _passes_through(graph, node, node.input(0)) else None


def _zero_pads(graph: Graph, node: Node) -> str | None:
    pads = node.attr("pads") if node.opset < 11 else _const(graph, node, 1)
    if pads is None or np.any(np.asarray(pads) != 0):
        return None  # any mode pads nothing with zero widths
    return _same_dtype(graph, node)


def _whole_slice(graph: Graph, node: Node) -> str | None:
    if node.opset >= 10 and any(t and t not in graph.constants for t in node.inputs[1:]):
        return None
    steps = node.attr("steps") if node.opset < 10 else _const(graph, node, 4)
    if steps is not None and np.any(np.asarray(steps) != 1):
        return None
    # unit steps and every dim kept in full: the window can only be [0:dim] on every axis
    return _same_shape(graph, node)


def _same_size_resize(graph: Graph, node: Node) -> str | None:
    if str(node.attr("coordinate_transformation_mode", "")) in ("tf_crop_and_resize", "tf_half_pixel_for_nn"):
        return None  # these sample off the grid even at scale 1
    if node.op_type == "Upsample" and node.opset < 9:
        scales = node.attr("scales")
    else:
        scales = _const(graph, node, 1 if node.op_type == "Upsample" or node.opset < 11 else 2)
    if scales is not None and np.asarray(scales).size and np.any(np.asarray(scales) != 1):
        return None  # a scale like 1.1 can keep a dim's size yet move every sample
    return _same_shape(graph, node)


def _with_constant(value: float) -> Rule:
    """x op c where c is all `value` (1 for Mul/Div, 0 for Add/Sub) and broadcasting c adds nothing; c may
    come first when the op is commutative (OpDef.commutative: c * x, c + x)."""

    def rule(graph: Graph, node: Node) -> str | None:
        op = REGISTRY.get(node.op_type, node.domain)
        sides = [(0, 1), (1, 0)] if op is not None and op.commutative else [(0, 1)]
        for x, c in sides:
            const = _const(graph, node, c)
            desc = _desc(graph, node.input(x))
            if const is None or desc is None or not _broadcast_adds_nothing(desc.shape, const.shape):
                continue
            if const.dtype.name == desc.dtype and np.all(const == value) and \
                    _passes_through(graph, node, node.input(x)):
                return node.input(x)
        return None

    return rule


def _broadcast_adds_nothing(x: tuple[int, ...], c: tuple[int, ...]) -> bool:
    """Broadcasting a c-shaped constant against x gives x's shape, even where x's dims are unknown."""
    if len(c) > len(x):
        return False
    return all(dc == 1 or (dc == dx and dx >= 0) for dx, dc in zip(x[len(x) - len(c):], c, strict=True))


# When each op is a no-op: the rewrite's own per-op conditions (a table of pattern -> rewrite, one per line).
RULES: dict[str, Rule] = {
    "Identity": _input0,                                   # a copy of its input
    "Dropout": _dropout_inference,                         # inference: input unchanged (mask unused)
    "Reshape": _same_shape,                                # to the shape the tensor already has
    "Flatten": _same_shape,                                # of a tensor already 2-D at that axis
    "Squeeze": _same_shape,                                # with no size-1 dim to drop
    "Unsqueeze": _same_shape,                              # adding no dim (empty axes)
    "Expand": _same_shape,                                 # broadcast to the shape it has
    "Cast": _same_dtype,                                   # to the input's own dtype
    "CastLike": _same_dtype,                               # like a tensor of the input's own dtype
    "Transpose": _identity_perm,                           # perm [0, 1, ..., n-1]
    "Pad": _zero_pads,                                     # by all-zero constant pads
    "Slice": _whole_slice,                                 # constant bounds, unit steps, whole tensor
    "Concat": _single_input,                               # of one tensor
    "Sum": _single_input,                                  # of one tensor
    "Max": _single_input,                                  # of one tensor
    "Min": _single_input,                                  # of one tensor
    "Mean": _single_input,                                 # of one tensor
    "Split": _single_output,                               # into one piece: the whole tensor
    "Resize": _same_size_resize,                           # to the same size, scale 1
    "Upsample": _same_size_resize,                         # by scale 1
    "Mul": _with_constant(1),                              # x * 1 (ones broadcast into x's shape)
    "Div": _with_constant(1),                              # x / 1
    "Add": _with_constant(0),                              # x + 0
    "Sub": _with_constant(0),                              # x - 0
}
