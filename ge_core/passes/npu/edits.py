"""Graph edits of the NPU lowering: descs in a device format, and TransData nodes put on a tensor.

A tensor converted to another format gets a new name, `<tensor>_<format>` (lower case), so the text form
reads `%conv1_nc1hwc0 = ge.TransData(%conv1) {dst_format='NC1HWC0', src_format='NCHW'}`.
"""

from __future__ import annotations

from dataclasses import replace

from ge_core.ir.formats import DEVICE_FORMATS
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc, default_format
from ge_core.ops.transdata import DOMAIN

TRANSDATA = "TransData"
FLOATS = frozenset({"float16", "float32", "float64", "bfloat16"})


def is_transdata(node: Node) -> bool:
    return node.op_type == TRANSDATA and node.domain == DOMAIN


def formats_of(node: Node) -> tuple[str, str]:
    """(src_format, dst_format) of a TransData."""
    return str(node.attr("src_format")), str(node.attr("dst_format"))


def origin_format(desc: TensorDesc) -> str:
    """The format the tensor has in the model as written (NCHW for 4-D, ND otherwise)."""
    if desc.format not in DEVICE_FORMATS:
        return desc.format
    return desc.origin_format or default_format(desc.rank)


def in_format(desc: TensorDesc, fmt: str) -> TensorDesc:
    """`desc` laid out in `fmt`, remembering its origin format and shape (GE's origin_format/origin_shape)."""
    return replace(desc, format=fmt, origin_format=origin_format(desc), origin_shape=desc.origin_shape or desc.shape)


def add_transdata(graph: Graph, source: str, dst: str, output: str, *, before: Node | None = None,
                  after: Node | None = None) -> Node:
    """A TransData reading `source`, writing `output` in format `dst`, placed before/after an anchor node."""
    desc = graph.desc(source)
    src = desc.format
    out_desc = in_format(desc, dst) if dst in DEVICE_FORMATS else replace(desc, format=dst)
    return graph.add_node(TRANSDATA, [source], [output], {"src_format": src, "dst_format": dst},
                          name=graph.unique_node_name(output), descs=[out_desc], before=before, after=after,
                          domain=DOMAIN, opset=1)


def convert_input(graph: Graph, node: Node, index: int, fmt: str) -> str:
    """Make input `index` of `node` read its tensor converted to `fmt` by a new TransData just before it."""
    source = node.input(index)
    output = graph.unique_tensor_name(f"{source}_{fmt.lower()}")
    add_transdata(graph, source, fmt, output, before=node)
    graph.set_input(node, index, output)
    return output


def convert_output(graph: Graph, node: Node, tensor: str, fmt: str) -> str:
    """`node` writes `tensor` in `fmt` under a new name; a TransData after it writes `tensor` back in its
    origin format, so every reader (and a graph output) still sees `tensor` as before."""
    origin = graph.desc(tensor)
    device = graph.unique_tensor_name(f"{tensor}_{fmt.lower()}")
    graph.rename_tensor(tensor, device)  # moves readers and graph outputs too: moved back below
    graph.set_desc(device, in_format(origin, fmt))
    back = add_transdata(graph, device, origin.format, tensor, after=node)
    graph.set_desc(tensor, origin)
    graph.replace_all_uses(device, tensor)  # the TransData itself keeps reading `device`
    return back.outputs[0]


def rebind_bodies(graph: Graph, device_format: str | None = None, nodes: list[Node] | None = None) -> int:
    """Give fused nodes whose inputs or outputs were renamed a body that reads and returns the new names
    (a body's interface must be its node's; bodies are shared with snapshots, so a new one is made).
    With `device_format`, the body's own feature maps are marked in it too. Returns how many changed."""
    changed = 0
    for node in graph.nodes if nodes is None else nodes:
        body = node.body
        if body is None:
            continue
        outer = [t for t in node.inputs if t]
        if tuple(body.inputs) == tuple(outer) and tuple(body.outputs) == node.outputs and device_format is None:
            continue
        node.body = _rebound(graph, node, outer, device_format)
        changed += 1
    return changed


def _rebound(graph: Graph, node: Node, outer: list[str], device_format: str | None) -> Graph:
    body = node.body
    assert body is not None
    fresh = body.copy()
    for old, new in zip(body.inputs, outer, strict=True):
        if old != new:
            fresh.add_input(new, graph.desc(new))
            fresh.replace_all_uses(old, new)
            fresh.remove_input(old)
    fresh.inputs = list(outer)  # add_input appended: back to the node's operand order
    for old, new in zip(body.outputs, node.outputs, strict=True):
        if old != new:
            fresh.rename_tensor(old, new)
    for t in [*outer, *node.outputs]:
        fresh.set_desc(t, graph.desc(t))
    if device_format is not None:
        for t in (t for inner in fresh.nodes for t in inner.outputs if t not in node.outputs):
            desc = fresh.desc(t)
            if desc.rank == 4 and desc.dtype in FLOATS and desc.format not in DEVICE_FORMATS:
                fresh.set_desc(t, in_format(desc, device_format))
    rebind_bodies(fresh, device_format)  # a nested fused node may read or write a renamed tensor
    return fresh
