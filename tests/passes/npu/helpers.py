"""Small graphs for the lowering tests: ONNX node specs through the importer (descs inferred)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ge_core
from ge_core.ir import Graph
from ge_core.passes.infra.instruments import relative_error
from ge_core.passes.npu.edits import is_transdata

RNG = np.random.default_rng(0)


def node(op: str, inputs: list[str], output: str, **attrs: Any) -> onnx.NodeProto:
    return helper.make_node(op, inputs, [output], name=output, **attrs)


def weight(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) * 0.3).astype(np.float32)


def build(nodes: list[onnx.NodeProto], inputs: dict[str, list[int]], outputs: list[str],
          consts: dict[str, np.ndarray] | None = None) -> Graph:
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(a, n) for n, a in (consts or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return ge_core.load_onnx(model.SerializeToString())


def transdata(graph: Graph) -> list[tuple[str, str, str]]:
    """(input tensor, src_format, dst_format) of every TransData, in order."""
    return [(n.input(0), n.attr("src_format"), n.attr("dst_format")) for n in graph.nodes if is_transdata(n)]


def same_outputs(before: Graph, after: Graph) -> None:
    feeds = ge_core.random_feeds(before, seed=0)
    want, got = ge_core.execute(before, feeds), ge_core.execute(after, feeds)
    assert list(got) == list(want)
    assert all(relative_error(got[t], want[t]) == 0.0 for t in want)  # TransData moves no values on the CPU
