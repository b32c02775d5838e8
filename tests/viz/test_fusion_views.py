"""The Fusion page's tables on real samples: they agree with the compile report and fusion_result.json."""

from __future__ import annotations

import pytest

from ge_core.compiler import CompiledModel
from ge_core.debugging.dump import fusion_result
from ge_core.viz import filter_decisions, fusion_decisions, fusion_summary, fusions_of_node
from ge_core.viz.fusion_views import DECISION_COLUMNS, SUMMARY_COLUMNS
from ge_core.viz.origins import holders
from tests.viz.compiled import compiled

CASES = [("densenet121", "ascend910"), ("resnet50", None), ("bert_encoder_torch", None), ("residual_block", None)]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def model(request: pytest.FixtureRequest) -> CompiledModel:
    return compiled(request.param[0], "O3", request.param[1])


def test_one_row_per_decision_with_the_reason_in_full(model: CompiledModel) -> None:
    frame = fusion_decisions(model.records)
    report = model.report["fusion"]["decisions"]
    assert list(frame.columns) == DECISION_COLUMNS and len(frame) == len(report) > 0
    assert list(frame["reason"]) == [d["reason"] for d in report]
    assert list(frame["accepted"]) == [d["accepted"] for d in report]
    assert list(frame["nodes"]) == [", ".join(d["nodes"]) for d in report]
    assert list(frame["fused_node"]) == [d["fused_node"] or "" for d in report]
    # `step` is the record the decision was made in (the pass stepper's index)
    assert all(model.records[step].name == name for step, name in zip(frame["step"], frame["pass"], strict=True))


def test_summary_agrees_with_fusion_result_json(model: CompiledModel) -> None:
    summary = fusion_summary(model.records)
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert (summary["matched"] == summary["applied"] + summary["rejected"]).all()
    expected = fusion_result(model.records)["session_and_graph_id_0_0"]
    got: dict[str, dict[str, dict[str, str]]] = {}
    for (kind, name), rows in summary.groupby(["kind", "pass"], sort=False):
        counts = {"match_times": str(rows["matched"].sum()), "effect_times": str(rows["applied"].sum())}
        if kind == "ub":  # GE's writer adds the UB knowledge repository's hits; we have none
            counts["repository_hit_times"] = "0"
        got.setdefault(f"{kind}_fusion", {})[str(name)] = counts
    assert got == expected


def test_filters_select_the_rejected_and_by_text(model: CompiledModel) -> None:
    frame = fusion_decisions(model.records)
    rejected = filter_decisions(frame, accepted=False)
    assert len(rejected) == fusion_summary(model.records)["rejected"].sum() and not rejected["accepted"].any()
    first = frame.iloc[0]
    by_pass = filter_decisions(frame, passes=[first["pass"]], patterns=[first["pattern"]])
    assert set(by_pass["pass"]) == {first["pass"]} and len(by_pass) >= 1
    assert len(filter_decisions(frame, text=first["reason"].upper())) >= 1  # case-insensitive


def test_a_fused_node_knows_the_decision_that_made_it_and_its_originals(model: CompiledModel) -> None:
    originals = {n.name for n in model.input_graph.nodes}
    inside = holders(model.graph)
    fused = [n for n in model.graph.nodes if n.body is not None]
    assert fused
    for node in fused:
        # a fused node fused again may keep its name (Gelu 'Mul_1', then MatMul+Add+Gelu 'Mul_1'): the last made it
        made = [f for f in fusions_of_node(model.records, node.name) if f.role == "made"]
        assert made and all(f.accepted and f.fused_node == node.name for f in made)
        held = {name for name, holder in inside.items() if holder == node.name and name in originals}
        assert set(made[-1].originals) == held


def test_an_original_node_knows_what_took_or_refused_it() -> None:
    model = compiled("densenet121", "O3", "ascend910")
    conv = fusions_of_node(model.records, "n0")  # Conv, fused with its Relu n6 into FusedConv n6
    assert (conv[0].role, conv[0].accepted, conv[0].fused_node) == ("member", True, "n6")
    assert any(f.role == "inside" and f.via == "n6" and not f.accepted for f in conv)  # then refused as n6
    pool = fusions_of_node(model.records, "n7")  # MaxPool: refused, and the reason says why
    assert pool and not any(f.accepted for f in pool) and "opaque" in pool[0].reason
    assert fusions_of_node(model.records, "not a node") == []
