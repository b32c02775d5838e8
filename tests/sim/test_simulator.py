"""simulate(): the timeline on small models, its report and trace, real outputs, precision modes."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import ge_core
from ge_core.errors import UsageError
from ge_core.hardware import load_profile
from ge_core.samples.registry import get_sample, sample_bytes
from ge_core.sim import SimResult, simulate
from ge_core.sim.precision import parse_precision
from ge_core.sim.simulator import schedule_of


def _compiled(name: str, level: str = "O3", hardware: str | None = None) -> ge_core.CompiledModel:
    return ge_core.compile(sample_bytes(name), input_shapes=get_sample(name).input_shapes or None,
                           opt_level=level, hardware=hardware)


@pytest.fixture(scope="module")
def conv_bn_relu() -> SimResult:
    return simulate(_compiled("conv_bn_relu", hardware="ascend910"), "ascend910", seed=1)


def test_ops_run_back_to_back_on_one_stream(conv_bn_relu: SimResult) -> None:
    ops = conv_bn_relu.ops
    assert ops[0].start_us == 0
    for before, after in itertools.pairwise(ops):
        assert after.start_us == pytest.approx(before.end_us)
    assert conv_bn_relu.total_us == pytest.approx(ops[-1].end_us)
    assert conv_bn_relu.total_us >= conv_bn_relu.floor_us


def test_every_op_respects_its_roofline_floor(conv_bn_relu: SimResult) -> None:
    p = conv_bn_relu.profile
    for r in conv_bn_relu.ops:
        floor = max(r.flops / p.peak_flops, r.bytes / p.memory_bandwidth) * 1e6
        assert r.floor_us == pytest.approx(floor)
        assert r.latency_us >= floor, r.node
        assert r.bound in ("compute", "memory", "overhead")
        assert all(busy <= r.latency_us * 1.000001 for busy in r.busy_us.values())


def test_report_follows_the_design_schema(conv_bn_relu: SimResult) -> None:
    report = json.loads(json.dumps(conv_bn_relu.report()))
    assert report["hardware"]["name"] == "ascend910"
    assert report["hardware"]["peak_flops"] == pytest.approx(256e12)
    assert report["hardware"]["memory_bandwidth"] == pytest.approx(1.2e12)
    assert report["total_us"] == pytest.approx(conv_bn_relu.total_us, rel=1e-5)
    for row in report["ops"]:
        assert {"node", "op_type", "unit", "start_us", "latency_us", "flops", "bytes", "bound"} <= set(row)
        assert {"busy_us", "attained_flops", "intensity", "floor_us", "block_dim", "tiling"} <= set(row)


def test_trace_is_chrome_trace_json(conv_bn_relu: SimResult) -> None:
    trace = json.loads(json.dumps(conv_bn_relu.trace()))
    events = trace["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {"kernels", "cube", "vector", "scalar", "mte1", "mte2", "mte3", "fixpipe"}
    spans = [e for e in events if e["ph"] == "X"]
    assert all(isinstance(e["ts"], float | int) and e["dur"] >= 0 and e["pid"] == 1 for e in spans)
    assert len([e for e in spans if e["tid"] == 0]) == len(conv_bn_relu.ops)  # one X event per op


def test_outputs_are_the_cpu_executors() -> None:
    compiled = _compiled("residual_block")
    feeds = ge_core.random_feeds(compiled.graph, seed=4)
    result = simulate(compiled, "ascend310", feeds, precision="force_fp32")
    want = compiled.run(feeds)
    assert set(result.outputs) == set(want)
    for name, value in want.items():
        np.testing.assert_array_equal(result.outputs[name], value)
    assert result.precision_errors == {}


def test_fp16_cube_inputs_show_a_small_error_per_output() -> None:
    compiled = _compiled("transformer_encoder")
    exact = simulate(compiled, "ascend910", seed=2, precision="force_fp32")
    half = simulate(compiled, "ascend910", seed=2, precision="allow_fp32_to_fp16")
    assert set(half.precision_errors) == set(compiled.graph.outputs)
    assert all(0 < e < 1e-2 for e in half.precision_errors.values())
    assert half.total_us < exact.total_us  # fp16 operands: the cube runs at its full rate
    forced = simulate(compiled, "ascend910", seed=2, precision="force_fp16")
    assert max(forced.precision_errors.values()) >= max(half.precision_errors.values())


def test_with_no_mode_the_profile_default_is_atcs_force_fp16() -> None:
    compiled = _compiled("residual_block")
    assert compiled.config.precision_mode is None
    assert simulate(compiled, "ascend310p", run=False).precision == "force_fp16"
    exact = ge_core.compile(compiled.input_graph, opt_level="O3", hardware="ascend310p", precision_mode="force_fp32")
    assert simulate(exact, run=False).precision == "force_fp32"


def test_unknown_precision_mode_is_refused() -> None:
    with pytest.raises(UsageError, match="unknown precision mode 'fp8'"):
        parse_precision("fp8")


def test_dynamic_shapes_are_refused_with_what_to_do() -> None:
    compiled = ge_core.compile(sample_bytes("mlp"), opt_level="O3")  # batch left symbolic
    with pytest.raises(UsageError, match="Compile with static input shapes"):
        simulate(compiled, "ascend910", run=False)


def test_schedule_is_computed_once_per_graph_profile_and_mode() -> None:
    compiled = _compiled("conv_bn_relu")
    p, mode = load_profile("ascend910"), parse_precision("force_fp32")
    assert schedule_of(compiled.graph, p, mode) is schedule_of(compiled.graph, p, mode)
    assert schedule_of(compiled.graph, load_profile("ascend310"), mode) is not schedule_of(compiled.graph, p, mode)


def test_ub_fusion_keeps_intermediates_on_chip() -> None:
    """O3's fused kernels move fewer off-chip bytes than O0's separate ones, and launch fewer kernels."""
    o0 = simulate(_compiled("conv_bn_relu", "O0"), "ascend910", run=False)
    o3 = simulate(_compiled("conv_bn_relu", "O3"), "ascend910", run=False)
    assert o3.bytes < o0.bytes and len(o3.ops) < len(o0.ops) and o3.total_us < o0.total_us


def test_transdata_is_priced_as_data_movement() -> None:
    result = simulate(_compiled("conv_bn_relu", hardware="ascend910"), "ascend910", run=False)
    moves = [r for r in result.ops if r.op_type == "TransData"]
    assert moves and all(r.flops == 0 and r.bytes > 0 and r.busy_us["cube"] == 0 for r in moves)
    assert all(r.busy_us["mte2"] > 0 and r.busy_us["mte3"] > 0 for r in moves)


def test_repeated_layers_are_priced_once_and_keep_their_names() -> None:
    from ge_core.sim.signature import signature

    compiled = _compiled("bert_encoder_torch")
    graph = compiled.graph
    result = simulate(compiled, "ascend910", run=False)
    views = set(result.views)
    assert [r.node for r in result.ops] == [n.name for n in graph.nodes if n.name not in views]
    keys = [signature(n, graph) for n in graph.nodes]
    assert len(set(keys)) < len(keys)  # two encoder layers: twins
    twins = [n for n, k in zip(graph.nodes, keys, strict=True) if keys.count(k) > 1 and n.body is not None]
    rows = {r.node: r for r in result.ops}
    a, b = twins[0], next(n for n in twins[1:] if signature(n, graph) == signature(twins[0], graph))
    assert rows[a.name].latency_us == rows[b.name].latency_us and rows[a.name].start_us < rows[b.name].start_us


def test_different_shapes_have_different_signatures() -> None:
    from ge_core.sim.signature import signature
    from tests.hardware.graphs import one_op

    relu = one_op("Relu", (4, 8), {}, dtype="float32")
    wider = one_op("Relu", (4, 16), {}, dtype="float32")
    assert signature(relu.node("op"), relu) == signature(relu.node("op"), relu)
    assert signature(relu.node("op"), relu) != signature(wider.node("op"), wider)
