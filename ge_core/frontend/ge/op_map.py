"""GE op types -> our registry's, for costs and the simulator: a table of (GE type, our type, how the attrs
and inputs translate). A dump's graph keeps GE's types (what the file says); `registry_graph` gives a copy in
which every mapped node is our op under the same name, reading and writing the same tensors (descs kept), so
the cost model and the simulator can price it. A type with no row stays as it is.

Attribute facts from GE's op prototypes (hicann/ge and CANN's ops: Conv2D's strides/dilations are 4 values in
the data_format's order, pads [top, bottom, left, right]; MaxPool's ksize/strides likewise with padding
SAME/VALID; FullyConnection computes x . W^T + b; SoftmaxV2 takes `axes`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY, OpDef

Attrs = dict[str, Any]


def _hw(values: Any, fmt: str) -> list[int]:
    """The H and W entries of a 4-value NCHW/NHWC list (GE's strides, dilations, ksize)."""
    v = [int(x) for x in values]
    return v[1:3] if fmt == "NHWC" else v[2:4]


def _conv(a: Attrs) -> Attrs:
    fmt = str(a.get("data_format", "NCHW"))
    top, bottom, left, right = [int(x) for x in a.get("pads", [0, 0, 0, 0])]
    ones = [1, 1, 1, 1]
    return {"strides": _hw(a.get("strides", ones), fmt), "dilations": _hw(a.get("dilations", ones), fmt),
            "pads": [top, left, bottom, right], "group": int(a.get("groups", 1))}


def _pool(a: Attrs) -> Attrs:
    fmt = str(a.get("data_format", "NCHW"))
    padding = str(a.get("padding", "VALID")).upper()
    return {"kernel_shape": _hw(a.get("ksize", [1, 1, 1, 1]), fmt), "strides": _hw(a.get("strides", [1, 1, 1, 1]), fmt),
            "auto_pad": "SAME_UPPER" if padding == "SAME" else "VALID"}


def _softmax(a: Attrs) -> Attrs:
    axes = a.get("axes", [-1])
    return {"axis": int(axes[0]) if isinstance(axes, list) and axes else -1}


def _none(a: Attrs) -> Attrs:
    return {}


@dataclass(frozen=True)
class GeMapping:
    ge_type: str
    op_type: str  # ours, default (ONNX) domain
    attrs: Callable[[Attrs], Attrs]
    inputs: int | None = None  # how many leading inputs our op takes (GE's offset_w etc. dropped)
    extra: tuple[tuple[str, Any], ...] = ()  # attrs our op needs that GE's has no counterpart for


TABLE: tuple[GeMapping, ...] = (
    GeMapping("Conv2D", "Conv", _conv, 3),  # x, filter, bias (offset_w dropped)
    GeMapping("MaxPool", "MaxPool", _pool, 1),
    GeMapping("AvgPool", "AveragePool", _pool, 1),
    GeMapping("FullyConnection", "Gemm", _none, 3, (("transB", 1),)),  # y = x . W^T + b
    GeMapping("MatMulV2", "MatMul", _none, 2),
    GeMapping("SoftmaxV2", "Softmax", _softmax, 1),
    GeMapping("RealDiv", "Div", _none, 2),
    GeMapping("Relu", "Relu", _none, 1), GeMapping("Sigmoid", "Sigmoid", _none, 1), GeMapping("Tanh", "Tanh", _none, 1),
    GeMapping("Add", "Add", _none, 2), GeMapping("AddV2", "Add", _none, 2), GeMapping("Sub", "Sub", _none, 2),
    GeMapping("Mul", "Mul", _none, 2), GeMapping("Reshape", "Reshape", _none, 2),
    # our own fused Conv (+activation, +residual) as our dump writer names it (its body is not dumped): priced
    # as its Conv, on the dumped descs (the activation rides in the cube kernel's epilogue)
    GeMapping("FusedConv", "Conv", _none, 3),
)
BY_GE_TYPE = {m.ge_type: m for m in TABLE}


GE_DOMAIN = "ge"
GRAPH_IO_TYPES = frozenset({"Data", "RefData", "AippData", "Const", "Constant", "NetOutput"})  # not nodes here


def registry_op(op_type: str, domain: str = "") -> OpDef | None:
    """The op of ours a dumped type stands for: one registered under it (default or `ge` domain), else its
    op_map row's (Conv2D: Conv), else None."""
    found = REGISTRY.get(op_type, domain) or REGISTRY.get(op_type) or REGISTRY.get(op_type, GE_DOMAIN)
    mapping = BY_GE_TYPE.get(op_type)
    return found or (REGISTRY.get(mapping.op_type) if mapping is not None else None)


def registry_node(node: Node) -> Node | None:
    """`node` as our op (same name, inputs, outputs), or None when its GE type has no row."""
    mapping = BY_GE_TYPE.get(node.op_type)
    if mapping is None:
        return None
    inputs = node.inputs[: mapping.inputs] if mapping.inputs is not None else node.inputs
    attrs = {**mapping.attrs(node.attrs), **dict(mapping.extra)}
    return Node(node.name, mapping.op_type, inputs, node.outputs, attrs, node.control_inputs, "", 21)


def registry_graph(graph: Graph) -> Graph:
    """A copy of a dump's graph with every mapped node as our op (for costs and the simulator)."""
    out = Graph(graph.name, graph.opset)
    for tensor in graph.inputs:
        out.add_input(tensor, graph.desc(tensor))
    for name, array in graph.constants.items():
        out.add_constant(name, array, graph.desc(name))
    for node in graph.nodes:
        ours = registry_node(node) or node
        out.add_node(ours.op_type, ours.explicit_inputs, ours.outputs, ours.attrs, name=ours.name,
                     descs=[graph.desc(t) for t in ours.outputs], domain=ours.domain, opset=ours.opset,
                     control_inputs=ours.control_inputs, body=node.body, subgraphs=node.subgraphs,
                     captures=node.captures)
    out.set_outputs(graph.outputs)
    out.metadata = dict(graph.metadata)
    return out
