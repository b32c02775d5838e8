"""GE's fusion_result.json in every layout real files show (tests/debugging/ge_fusion, sources in SOURCES.md),
ours written exactly as GE's writer does, and the two side by side pass by pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ge_core
from ge_core.compiler import CompiledModel
from ge_core.debugging import ge_fusion_result
from ge_core.debugging.dump import fusion_result, fusion_result_text
from ge_core.debugging.ge_fusion_result import (
    PassCounts,
    compare_fusion_results,
    fusion_result_frame,
    fusion_result_from_dict,
    read_fusion_result,
    read_fusion_result_file,
)
from ge_core.errors import ModelError, ResourceLimitError
from ge_core.samples.registry import sample_bytes

FILES = Path(__file__).parent / "ge_fusion"


@pytest.fixture(scope="module")
def compiled() -> CompiledModel:
    return ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")


def test_ges_current_layout_one_key_per_session_and_graph() -> None:
    result = read_fusion_result_file(FILES / "verl_keyed.json")
    assert result.layout == "keyed" and [g.session_and_graph_id for g in result.graphs] == ["0_0"]
    assert result.graphs[0].passes[0] == PassCounts("graph", "RefreshInt64ToInt32FusionPass", 1, 0)


def test_an_older_single_record_with_ub_fusion_without_repository_hits() -> None:
    (graph,) = read_fusion_result_file(FILES / "atc_ctpn_record.json").graphs
    assert graph.session_and_graph_id == "0_0" and len(graph.of_kind("graph")) == 6
    assert graph.of_kind("ub") == (PassCounts("ub", "TbeCommonRules0FusionPass", 150, 150, None),)


def test_older_records_written_one_after_the_other_or_as_a_list() -> None:
    concatenated = read_fusion_result_file(FILES / "paddlegan_concatenated.json")
    assert concatenated.layout == "records"
    assert [(g.session_and_graph_id, len(g.passes)) for g in concatenated.graphs] == [("0_0", 1), ("10_10", 3),
                                                                                       ("19_19", 3)]
    listed = read_fusion_result_file(FILES / "yolov8_list.json")
    ub = listed.graphs[0].of_kind("ub")
    assert len(ub) == 5 and ub[2] == PassCounts("ub", "TbeConvSigmoidMulQuantFusionPass", 62, 62, 0)


def test_ges_writer_appending_a_second_graph_to_the_same_file() -> None:
    """GE's writer seeks back over the closing brace and appends the next graph's key: one object, two keys."""
    first = (FILES / "verl_keyed.json").read_text()
    second = json.dumps({"session_and_graph_id_1_1": {"ub_fusion": {"TbeEltwiseFusionPass": {
        "effect_times": "2", "match_times": "3", "repository_hit_times": "1"}}}}, indent=4)
    appended = first[:-2] + ",\n" + second[2:]
    result = read_fusion_result(appended)
    assert [g.session_and_graph_id for g in result.graphs] == ["0_0", "1_1"]
    assert result.graphs[1].passes == (PassCounts("ub", "TbeEltwiseFusionPass", 3, 2, 1),)
    frame = fusion_result_frame(result)
    assert list(frame.columns) == ge_fusion_result.FRAME_COLUMNS and len(frame) == 5


def test_ours_is_laid_out_exactly_as_ges_writer_lays_it_out(compiled: CompiledModel) -> None:
    text = fusion_result_text(compiled.records)
    document = json.loads(text)
    assert text == json.dumps(document, indent=4, sort_keys=True)  # nlohmann's dump(4) of sorted maps
    assert text.startswith('{\n    "session_and_graph_id_0_0": {\n        "graph_fusion": {')
    graph = document["session_and_graph_id_0_0"]
    assert all(list(c) == ["effect_times", "match_times"] for c in graph["graph_fusion"].values())
    assert all(list(c) == ["effect_times", "match_times", "repository_hit_times"] for c in graph["ub_fusion"].values())
    assert all(isinstance(v, str) for c in graph["graph_fusion"].values() for v in c.values())


def test_a_section_without_passes_is_left_out_as_ges_writer_does(compiled: CompiledModel) -> None:
    graph_only = [r for r in compiled.records if r.name != "UbFusionPass"]
    assert set(fusion_result(graph_only)["session_and_graph_id_0_0"]) == {"graph_fusion"}
    assert fusion_result([]) == {}  # no decision at all: GE writes nothing


def test_ours_beside_ges_pass_by_pass(compiled: CompiledModel) -> None:
    ours = fusion_result_from_dict(fusion_result(compiled.records)).graphs[0]
    ge = read_fusion_result_file(FILES / "yolov8_list.json").graphs[0]
    shared = ours.passes[0]
    ge_with_shared = type(ge)(ge.session_and_graph_id, (*ge.passes, PassCounts(shared.kind, shared.name, 4, 1)))
    frame = compare_fusion_results(ge_with_shared, ours)
    assert list(frame.columns) == ge_fusion_result.COMPARE_COLUMNS
    first = frame.iloc[0]
    assert (first["pass"], first["present"], first["ge_match"], first["our_match"]) == (
        shared.name, "both", 4, shared.match_times)
    assert list(dict.fromkeys(frame["present"])) == ["both", "GE only", "ours only"]
    ge_only = frame[frame["present"] == "GE only"]
    assert ge_only["our_match"].isna().all() and (ge_only["ge_match"] >= 0).all()
    assert compare_fusion_results(ge, None)["present"].eq("GE only").all()


@pytest.mark.parametrize(("text", "message"), [
    ('{"graph_fusion": {"P": {"match_times": "3"', r"not valid JSON at line 1, column \d+"),
    ('{"nodes": [], "edges": []}', "holds no fusion counts"),
    ('{"session_and_graph_id_0_0": {"graph_fusion": {"P": {"match_times": "many"}}}}',
     r"session_and_graph_id_0_0.graph_fusion.P.match_times is 'many', not a count"),
    ('{"graph_fusion": {"P": {"match_times": "-1"}}, "session_and_graph_id": "0_0"}', "cannot be negative"),
    ('[1, 2]', "expected a JSON object per graph"),
    ('{"graph_fusion": ["P"]}', "should map pass names to counts"),
])
def test_another_schema_or_a_garbled_file_is_refused_naming_the_field(text: str, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        read_fusion_result(text, "upload.json")


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "fusion_result.json"
    path.write_text("{}" + " " * 100)
    monkeypatch.setattr(ge_fusion_result, "MAX_BYTES", 10)
    with pytest.raises(ResourceLimitError, match=r"fusion_result\.json"):
        read_fusion_result_file(path)
