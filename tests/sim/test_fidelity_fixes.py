"""Where the simulator was wrong against published Ascend figures (docs/fidelity.md), one test per fix: device bytes
follow the precision mode, a no-copy Concat launches no kernel, a Gather moves the rows it picks."""

from __future__ import annotations

import numpy as np

import ge_core
from ge_core.hardware import load_profile
from ge_core.ir import Graph, TensorDesc
from ge_core.ops import REGISTRY, infer_graph
from ge_core.samples.registry import sample_bytes
from ge_core.sim import kernel_cost, simulate
from ge_core.sim.precision import parse_precision
from tests.hardware.graphs import one_op


def test_force_fp16_moves_half_the_bytes_of_an_fp32_kernel() -> None:
    graph = one_op("Relu", (1, 64, 56, 56), {}, dtype="float32")
    p = load_profile("ascend310p")
    node = graph.node("op")
    wide = kernel_cost(node, graph, p, parse_precision("force_fp32"))
    half = kernel_cost(node, graph, p, parse_precision("force_fp16"))
    assert wide is not None and half is not None
    assert half.ddr_bytes * 2 == wide.ddr_bytes
    assert half.busy["mte2"] < wide.busy["mte2"]


def test_fp16_cube_operands_are_loaded_at_half_their_fp32_bytes() -> None:
    graph = one_op("MatMul", (256, 1024), {"b": np.ones((1024, 512), np.float32)}, dtype="float32")
    p = load_profile("ascend310p")
    wide = kernel_cost(graph.node("op"), graph, p, parse_precision("force_fp32"))
    half = kernel_cost(graph.node("op"), graph, p, parse_precision("allow_fp32_to_fp16"))
    assert wide is not None and half is not None
    assert half.tiling.cube is not None and wide.tiling.cube is not None
    assert half.tiling.cube.mte2_bytes * 2 == wide.tiling.cube.mte2_bytes


def test_a_no_copy_concat_launches_no_kernel() -> None:
    compiled = ge_core.compile(sample_bytes("densenet121"), opt_level="O3", hardware="ascend310p")
    free = set(compiled.memory.no_copy_concats) if compiled.memory is not None else set()
    assert free
    result = simulate(compiled, run=False)
    assert not free & {op.node for op in result.ops}
    assert free <= set(result.views)
    assert len(result.ops) == compiled.plan.kernels


def test_a_gather_moves_the_rows_it_picks_not_its_table() -> None:
    g = Graph("embedding")
    g.add_input("ids", TensorDesc((1, 128), "int64"))
    g.add_constant("table", np.zeros((30522, 768), np.float32))  # BERT-base's word embeddings: 94 MB
    g.add_node("Gather", ["table", "ids"], ["rows"], {}, name="op")
    g.set_outputs(["rows"])
    assert not infer_graph(g, REGISTRY).problems
    cost = kernel_cost(g.node("op"), g, load_profile("ascend310p"), parse_precision("force_fp32"))
    assert cost is not None
    rows = 128 * 768 * 4
    assert cost.ddr_bytes == 128 * 8 + 2 * rows  # the indices, the rows read, the rows written
    assert cost.latency_us < 20
