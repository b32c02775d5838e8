"""Our graph as GE's ge_proto dump text (a ModelDef: the graph, then its subgraphs), streamed op by op.

Levels mirror DUMP_GE_GRAPH: 1 writes Const weights, 2 and 3 leave them out (GE's ge_proto is the same at 2
and 3: hicann/ge docs/zh/user_guides/env_vars/DUMP_GE_GRAPH.md). Nothing but one op's text is built at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TextIO

from google.protobuf import text_format

from ge_core.frontend.ge.op_defs import OpText, subgraph_name
from ge_core.frontend.ge.vendor import ge_ir_pb2 as pb
from ge_core.ir.graph import Graph


def write_ge_proto(graph: Graph, out: TextIO, *, level: int = 2, model_name: str = "",
                   ops: OpText | None = None) -> int:
    """Write `graph` to `out`; returns the number of ops written. Pass one `ops` to every stage of a compile
    to reuse the text of ops that did not change."""
    ops = ops or OpText(weights=level == 1)
    out.write(text_format.MessageToString(pb.ModelDef(name=model_name or graph.name)))
    written = 0
    for name, sub in _graphs(graph):
        written += _write_graph(sub, name, out, ops)
    return written


def _graphs(graph: Graph) -> Iterator[tuple[str, Graph]]:
    """The graph, then every subgraph (depth first) under the name its node gives it."""
    yield graph.name, graph
    for node in graph.nodes:
        for key, sub in node.subgraphs.items():
            for name, inner in _graphs(sub):
                yield (subgraph_name(node, key) if inner is sub else name), inner


def _write_graph(graph: Graph, name: str, out: TextIO, ops: OpText) -> int:
    head = pb.GraphDef(name=name)
    head.input.extend(f"{t}:0" for t in graph.inputs)
    head.output.extend(_output_ref(graph, t) for t in graph.outputs)
    out.write("graph {\n" + text_format.MessageToString(head, indent=2))
    count = 0
    for block in ops.graph_ops(graph):
        out.write(block)
        count += 1
    out.write("}\n")
    return count


def _output_ref(graph: Graph, tensor: str) -> str:
    producer = graph.producer(tensor)
    return f"{tensor}:0" if producer is None else f"{producer.name}:{producer.outputs.index(tensor)}"
