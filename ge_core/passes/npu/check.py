"""`format_problems(graph)`: does every edge of a lowered graph carry the format its reader needs?

graph.verify(REGISTRY) checks shapes and dtypes, which formats never change; this checks the layouts: a
TransData reads its src_format and writes its dst_format, an op working in NC1HWC0 reads feature maps in NC1HWC0
and weights in FRACTAL_Z, every other op reads only origin formats, and graph outputs are in theirs.
"""

from __future__ import annotations

from ge_core.ir.formats import DEVICE_FORMATS, NC1HWC0
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.passes.npu.edits import formats_of, is_transdata
from ge_core.passes.npu.rules import Refusal, classify


def format_problems(graph: Graph) -> list[str]:
    problems: list[str] = []
    for node in graph.nodes:
        if is_transdata(node):
            problems += _transdata_problems(graph, node)
        elif any(graph.desc(t).format == NC1HWC0 for t in node.outputs):
            problems += _device_op_problems(graph, node)
        else:
            problems += [f"node '{node.name}' ({node.op_type}) works in its origin format but reads '{t}' in "
                         f"{graph.desc(t).format}" for t in node.inputs if t and _on_device(graph, t)]
    problems += [f"graph output '{t}' is in {graph.desc(t).format}" for t in graph.outputs if _on_device(graph, t)]
    return problems


def _on_device(graph: Graph, tensor: str) -> bool:
    return graph.desc(tensor).format in DEVICE_FORMATS


def _transdata_problems(graph: Graph, node: Node) -> list[str]:
    src, dst = formats_of(node)
    have_in, have_out = graph.desc(node.input(0)).format, graph.desc(node.outputs[0]).format
    if (have_in, have_out) == (src, dst):
        return []
    return [f"TransData '{node.name}' converts {src} -> {dst} but reads {have_in} and writes {have_out}"]


def _device_op_problems(graph: Graph, node: Node) -> list[str]:
    verdict = classify(graph, node)
    if isinstance(verdict, Refusal):
        return [f"node '{node.name}' ({node.op_type}) writes NC1HWC0 but cannot work in it: {verdict.why}"]
    problems = []
    for i, t in enumerate(node.inputs):
        want = verdict.wanted(i)
        if t and want is not None and graph.desc(t).format != want:
            problems.append(f"node '{node.name}' ({node.op_type}) works in NC1HWC0 and needs input {i} '{t}' in "
                            f"{want}, but it is {graph.desc(t).format}")
    return problems
