"""Control flow costs what its subgraphs cost: an If its dearer branch, a Loop or Scan its body per trip."""

from __future__ import annotations

import ge_core
from ge_core.ops import REGISTRY
from ge_core.ops.control import subgraph_cost
from ge_core.ops.registry import Cost
from tests.control_models import FRAMES, loop_rnn, scan_rnn, vad_if


def _control_node(model: object) -> tuple[ge_core.Graph, ge_core.Node]:
    graph = ge_core.load_onnx(model.SerializeToString())  # type: ignore[attr-defined]
    node = next(n for n in graph.nodes if n.op_type in ("If", "Loop", "Scan"))
    return graph, node


def _cost(graph: ge_core.Graph, node: ge_core.Node) -> Cost:
    op = REGISTRY.for_node(node)
    assert op is not None
    return op.cost(node, graph.input_descs(node), graph.output_descs(node))


def test_an_if_costs_its_dearer_branch() -> None:
    graph, node = _control_node(vad_if())
    branches = [subgraph_cost(REGISTRY, g) for g in node.subgraphs.values()]
    assert len(branches) == 2 and branches[0].flops != branches[1].flops
    assert _cost(graph, node).flops == max(b.flops for b in branches) > 0


def test_a_scan_costs_its_body_once_per_slice() -> None:
    graph, node = _control_node(scan_rnn())
    (body,) = node.subgraphs.values()
    once = subgraph_cost(REGISTRY, body)
    assert once.flops > 0 and _cost(graph, node).flops == once.flops * FRAMES


def test_a_loop_with_a_known_trip_count_costs_its_body_per_trip() -> None:
    graph, node = _control_node(loop_rnn(trips=3))
    (body,) = node.subgraphs.values()
    once = subgraph_cost(REGISTRY, body)
    assert once.flops > 0 and _cost(graph, node).flops == once.flops * 3
