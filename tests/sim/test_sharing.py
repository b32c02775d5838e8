"""The pricing shortcuts never change a row: twins (repeated layers) priced once, and the tilings the compile
made reused, give exactly the rows of pricing every kernel on its own with fresh tilings."""

from __future__ import annotations

import pytest

import ge_core
from ge_core.hardware import load_profile
from ge_core.samples.registry import get_sample, sample_bytes
from ge_core.sim import OpRow, kernel_cost
from ge_core.sim.precision import parse_precision
from ge_core.sim.signature import signature
from ge_core.sim.simulator import build_schedule


def _compiled(name: str, level: str, hardware: str | None) -> ge_core.CompiledModel:
    return ge_core.compile(sample_bytes(name), input_shapes=get_sample(name).input_shapes or None,
                           opt_level=level, hardware=hardware)


def _alone(graph: ge_core.Graph, profile: str, precision: str) -> tuple[list[OpRow], list[str]]:
    """Every kernel priced on its own, on a copy of the graph (new nodes: no tiling remembered for them)."""
    p, mode = load_profile(profile), parse_precision(precision)
    fresh = graph.copy()
    rows: list[OpRow] = []
    views: list[str] = []
    clock = 0.0
    for node in fresh.nodes:
        c = kernel_cost(node, fresh, p, mode)
        if c is None:
            views.append(node.name)
            continue
        rows.append(OpRow(node.name, c.op_type, c.unit, clock, c.latency_us, c.flops, c.ddr_bytes, c.bound,
                          c.floor_us, {u: p.cycles_to_us(v) for u, v in c.busy.items()}, c.tiling.block_dim,
                          c.tiling.tiles, c.tiling.reason))
        clock += c.latency_us
    return rows, views


@pytest.mark.parametrize(("name", "level", "hardware", "profile", "precision"), [
    ("bert_encoder_torch", "O3", "ascend910", "ascend910", "force_fp32"),  # the compile's tilings reused
    ("bert_encoder_torch", "O3", "ascend910", "ascend310", "force_fp16"),  # tiled afresh, fp16 everywhere
    ("bert_encoder_torch", "O0", None, "ascend910b", "allow_fp32_to_fp16"),
    ("ocr_rec_crnn_paddle", "O3", "ascend310", "ascend310", "allow_fp32_to_fp16"),
    ("resnet50", "O3", "ascend910", "ascend910", "force_fp32"),
])
def test_rows_are_those_of_pricing_every_kernel_alone(name: str, level: str, hardware: str | None, profile: str,
                                                       precision: str) -> None:
    compiled = _compiled(name, level, hardware)
    graph = compiled.graph
    keys = [k for n in graph.nodes if (k := signature(n, graph)) is not None]
    assert len(set(keys)) < len(keys)  # the model has twins: some rows are shared
    for _ in range(2):  # the first schedule tiles what the compile did not; the second reuses those too
        schedule = build_schedule(graph, load_profile(profile), parse_precision(precision))
        rows, views = _alone(graph, profile, precision)
        assert list(schedule.views) == views
        assert len(schedule.ops) == len(rows)
        for got, want in zip(schedule.ops, rows, strict=True):
            assert got == want  # exactly: every number, and the tiling text naming the row's own ops


def test_twins_in_different_layers_share_a_signature() -> None:
    """UB fusion labels a group with its anchor's name (an attribute): a label, not part of the cost."""
    graph = _compiled("bert_encoder_torch", "O3", "ascend910").graph
    fused = [n for n in graph.nodes if n.op_type == "UbFused" and "anchor_node" in n.attrs]
    layer0 = [n for n in fused if "/layer.0/" in n.attrs["anchor_node"]]
    layer1 = [n for n in fused if "/layer.1/" in n.attrs["anchor_node"]]
    assert layer0 and len(layer0) == len(layer1)
    for a, b in zip(layer0, layer1, strict=True):
        assert signature(a, graph) == signature(b, graph)
