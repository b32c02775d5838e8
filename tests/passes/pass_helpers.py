"""Shared helpers of the cleanup-pass tests (constant folding, CSE, dead code, no-op elimination): build small
graphs from node specs, run a pass with its contract checks (verify, interface, honest `changed`, numerics)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import ge_core
from ge_core.ir import Graph, TensorDesc
from ge_core.ops import REGISTRY, infer_graph
from ge_core.passes.infra.base import GraphPass, PassResult
from ge_core.samples.registry import get_sample, sample_bytes

NodeSpec = tuple[str, Sequence[str], Sequence[str], dict[str, Any]]
F32 = TensorDesc((2, 4), "float32")


def build(inputs: dict[str, TensorDesc], consts: dict[str, np.ndarray], nodes: Sequence[NodeSpec],
          outputs: Sequence[str], **node_kw: Any) -> Graph:
    """A graph from specs; node names are their first output's, descs come from the op registry."""
    g = Graph("g")
    for name, desc in inputs.items():
        g.add_input(name, desc)
    for name, array in consts.items():
        g.add_constant(name, array)
    for op, ins, outs, attrs in nodes:
        g.add_node(op, ins, outs, attrs, name=outs[0], **node_kw.get(outs[0], {}))
    g.set_outputs(outputs)
    result = infer_graph(g, REGISTRY)
    assert not result.problems, result.problems
    return g


def assert_same_numbers(before: Graph, after: Graph, seed: int = 0) -> None:
    feeds = ge_core.random_feeds(before, seed)
    want, got = ge_core.execute(before, feeds), ge_core.execute(after, feeds)
    assert list(got) == list(want)
    for name, ref in want.items():
        scale = max(float(np.max(np.abs(ref))) if ref.size else 0.0, 1e-6)
        assert got[name].shape == ref.shape and got[name].dtype == ref.dtype
        assert float(np.max(np.abs(got[name].astype(np.float64) - ref), initial=0.0)) <= 1e-4 * scale, name


def run_and_compare(pass_: GraphPass, g: Graph, *, interface: bool = True,
                    numerics: bool = True) -> tuple[Graph, PassResult]:
    """Run `pass_` on `g` (in place); returns the graph from before and the result. Checks verify(), the
    interface (when `interface`), that changed=False leaves the text, and the numbers (when `numerics`)."""
    before = g.copy()
    result = pass_.run(g)
    g.verify(REGISTRY)
    if interface:
        assert g.outputs == before.outputs and g.inputs == before.inputs
    if not result.changed:
        assert g.to_text() == before.to_text()
    if numerics:
        assert_same_numbers(before, g)
    return before, result


def load(name: str) -> Graph:
    """A bundled sample model, with its declared input shapes."""
    return ge_core.load_onnx(sample_bytes(name), get_sample(name).input_shapes or None)
