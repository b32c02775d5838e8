"""Compare: metrics agree with each CompiledModel's report, every original node is aligned, latencies sum to
each simulated total, and a comparison's spec round-trips through JSON and the address."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest

from ge_core.config import CompileConfig
from ge_core.errors import UsageError
from ge_core.samples import sample_bytes
from ge_core.viz import Comparison, ComparisonSpec, compare, run_spec
from ge_core.viz.origins import holders
from tests.viz.compiled import config


@pytest.fixture(scope="module")
def densenet() -> Comparison:
    exact = {"precision_mode": "force_fp32"}  # the numbers compared with O0's (ATC's default fp16 rounds them)
    return compare("sample:densenet121", [("O1", config("densenet121", "O1", "ascend910", **exact)),
                                          ("O3", config("densenet121", "O3", "ascend910", **exact))])


@pytest.fixture(scope="module")
def bert() -> Comparison:
    return compare("sample:bert_encoder_torch", [("O0", config("bert_encoder_torch", "O0")),
                                                 ("O3", config("bert_encoder_torch", "O3")),
                                                 ("O3 npu", config("bert_encoder_torch", "O3", "ascend910b",
                                                                   precision_mode="force_fp32"))])


def test_metrics_are_each_reports_numbers_with_deltas(densenet: Comparison) -> None:
    frame = densenet.metrics()
    assert list(frame["config"]) == ["O1", "O3"] and list(frame["status"]) == ["ok", "ok"]
    for row, entry in zip(frame.itertuples(), densenet.entries, strict=True):
        assert entry.compiled is not None and entry.sim is not None
        report = entry.compiled.report
        assert (row.nodes, row.kernels, row.compile_seconds) == (report["nodes"], report["kernels"],
                                                                 report["compile_seconds"])
        assert (row.arena_bytes, row.theory_min_bytes) == (report["memory"]["arena_bytes"],
                                                           report["memory"]["theory_min_bytes"])
        assert row.simulated_us == entry.sim.total_us and row.key == entry.config.key()
        assert 0 <= row.max_rel_error < 1e-3
    first, last = frame.iloc[0], frame.iloc[1]
    assert last["kernels_delta"] == last["kernels"] - first["kernels"] < 0  # O3 fuses
    assert last["simulated_us_delta"] == pytest.approx(last["simulated_us"] - first["simulated_us"])
    assert first["nodes_delta"] == 0


def test_node_alignment_maps_every_original_node(densenet: Comparison) -> None:
    frame = densenet.node_alignment()
    entry = densenet.entries[1]
    assert entry.compiled is not None
    assert list(frame["node"]) == [n.name for n in entry.compiled.input_graph.nodes]
    for e in densenet.entries:
        assert e.compiled is not None
        inside = holders(e.compiled.graph)
        for node, holder, status in zip(frame["node"], frame[e.name], frame[f"{e.name} status"], strict=True):
            assert status in ("kept", "fused", "removed")
            assert (holder == "") == (status == "removed")
            if holder:
                assert inside[node] == holder  # the node holding it: itself or the fused node that absorbed it
    o3 = frame.set_index("node")
    assert o3.at["n0", "O3"] == "n6" and o3.at["n0", "O3 status"] == "fused"  # Conv into FusedConv n6
    assert o3.at["n0", "O3 pass"] == "ConvActivationFusionPass" and o3.at["n0", "O1"] == "n0"
    assert o3.at["n1", "O3 status"] == "removed" and o3.at["n1", "O3 pass"] == "BatchNormFoldPass"


def test_latency_delta_sums_to_each_total_and_counts_each_kernel_once(densenet: Comparison) -> None:
    frame = densenet.latency_delta()
    for e in densenet.entries:
        assert e.sim is not None
        assert frame[f"{e.name} us"].sum() == pytest.approx(e.sim.total_us)
        kernels = [k for cell in frame[f"{e.name} kernels"] if cell for k in cell.split(", ")]
        assert sorted(kernels) == sorted(r.node for r in e.sim.ops)
    assert (frame["O3 delta_us"] == frame["O3 us"] - frame["O1 us"]).all()
    conv = frame[frame["nodes"] == "n0, n6"].iloc[0]  # Conv + Relu: two kernels at O1, one at O3
    assert (conv["O1 kernels"], conv["O3 kernels"]) == ("n0, n6", "n6") and conv["O3 delta_us"] < 0


def test_without_hardware_no_simulation_and_errors_vs_o0(bert: Comparison) -> None:
    frame = bert.metrics()
    assert list(frame["status"]) == ["ok"] * 3
    assert frame["simulated_us"].iloc[:2].isna().all() and frame["simulated_us"].iloc[2] > 0
    assert frame["max_rel_error"].iloc[0] == 0 and (frame["max_rel_error"] < 1e-3).all()
    assert list(bert.latency_delta().filter(like=" us").columns) == ["O3 npu us"]  # only the simulated one
    alignment = bert.node_alignment()
    assert (alignment["O0 status"] == "kept").all() and (alignment["O3 status"] != "kept").any()


def test_a_spec_round_trips_and_refuses_unknown_keys(densenet: Comparison) -> None:
    spec = densenet.spec
    assert spec.model == "sample:densenet121"
    assert ComparisonSpec.from_json(densenet.to_json()) == spec == Comparison.from_json(densenet.to_json())
    assert ComparisonSpec.from_address(spec.to_address()) == spec
    data = spec.to_json()
    for bad, where in (({**data, "colour": 1}, "colour"),
                       ({**data, "configs": [{**data["configs"][0], "extra": 1}]}, "extra"),
                       ({**data, "configs": [{"name": "x", "config": {"opt_levle": "O1"}}]}, "opt_levle")):
        with pytest.raises(UsageError, match=where):
            ComparisonSpec.from_json(bad)
    with pytest.raises(UsageError, match="distinct"):
        ComparisonSpec.of("sample:mlp", [("a", CompileConfig()), ("a", CompileConfig())])
    with pytest.raises(UsageError, match="not readable"):
        ComparisonSpec.from_address("%%%")


def test_a_loaded_spec_runs_again_and_bytes_get_an_upload_reference() -> None:
    data = sample_bytes("residual_block")
    first = compare(data, [("O1", CompileConfig(opt_level="O1")), ("O3", CompileConfig(opt_level="O3"))])
    assert first.spec.model == f"upload:{hashlib.sha256(data).hexdigest()}"
    with pytest.raises(UsageError, match="upload"):
        run_spec(first.spec)  # an upload's bytes must be given
    again = run_spec(ComparisonSpec.from_json(first.to_json()), data)
    assert list(again.metrics()["nodes"]) == list(first.metrics()["nodes"])
    spec = replace(first.spec, model="sample:residual_block")
    quick = run_spec(spec, numerics=False).metrics()  # timing and structure only: no graph is run
    assert list(quick["kernels"]) == list(first.metrics()["kernels"]) and quick["max_rel_error"].isna().all()


def test_a_failing_config_is_a_row_with_its_error() -> None:
    result = compare("sample:residual_block", [("ok", CompileConfig()),
                                               ("bad", CompileConfig(input_shapes="nope:1,2"))])
    frame = result.metrics()
    assert list(frame["status"]) == ["ok", "error"] and "nope" in frame["error"].iloc[1]
    assert frame["nodes_delta"].iloc[1] is None or frame["nodes_delta"].isna().iloc[1]
    assert set(result.node_alignment()["bad status"]) == {"error"}
