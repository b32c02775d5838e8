"""Graph signatures for round trips: our graph with its tensors renamed GE's way (`<op>:<index>`), compared
field by field (node names, types, domains, edges, control edges, attrs, descs, constants, outputs)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ge_core.compiler import CompiledModel
from ge_core.compiler import compile as ge_compile
from ge_core.config import CompileConfig
from ge_core.ir.graph import Graph
from ge_core.samples import sample_bytes

# attrs the readers add (OpDef fields, GE's names for fused originals), left out of the comparison
READER_ATTRS = {"id", "stream_id", "_datadump_original_op_names"}


def canonical(graph: Graph, tensor: str) -> str:
    producer = graph.producer(tensor)
    return tensor if producer is None or not tensor else f"{producer.name}:{producer.outputs.index(tensor)}"


def signature(graph: Graph) -> dict[str, Any]:
    nodes = []
    for node in graph.nodes:
        attrs = {k: _plain(v) for k, v in node.attrs.items() if k not in READER_ATTRS and "_desc_" not in k}
        nodes.append((node.name, node.op_type, node.domain, tuple(canonical(graph, t) for t in node.inputs),
                      node.control_inputs, tuple(canonical(graph, t) for t in node.outputs), attrs,
                      tuple(graph.desc(t) for t in node.outputs), sorted(node.subgraphs)))
    return {"inputs": [(t, graph.desc(t)) for t in graph.inputs],
            "constants": {k: graph.desc(k) for k in graph.constants},
            "outputs": [canonical(graph, t) for t in graph.outputs], "nodes": nodes}


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.name, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def compiled_npu(sample: str = "conv_bn_relu") -> CompiledModel:
    return ge_compile(sample_bytes(sample), CompileConfig(opt_level="O3", hardware="ascend310"), cache=None)
