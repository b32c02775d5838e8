"""Dumps per pass (DUMP_GE_GRAPH style) and the compile report, from the API and from the CLI."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import onnx
import pytest

import ge_core
from ge_core.cli.main import main
from ge_core.compiler import CompiledModel
from ge_core.debugging.dump import CANVAS_SUFFIX, write_dumps
from ge_core.ir.graph import Graph
from ge_core.passes.infra.base import PassResult, Stage, snake_name
from ge_core.passes.infra.manager import PipelineStep
from ge_core.samples.registry import sample_bytes
from ge_core.viz.canvas_export import canvas_json

STAGES = list(Stage)


def stems(folder: Path) -> list[str]:
    """Per-step dump stems (fusion_result.json, one per compile, is checked on its own)."""
    return sorted({Path(p.name.removesuffix(CANVAS_SUFFIX)).stem for p in folder.iterdir()
                   if p.name != "fusion_result.json"})


def expected_stems(compiled: CompiledModel) -> list[str]:
    return [f"000_{Stage.PRE_RUN_BEGIN}_input"] + [
        f"{r.index:03d}_{r.stage}_{snake_name(r.name)}" for r in compiled.records]


def check_dumps(folder: Path, compiled: CompiledModel) -> None:
    """One .txt/.json/.onnx triple per step, numbered in pass order, stages in GE's order, all readable."""
    assert stems(folder) == expected_stems(compiled)
    stage_order = [STAGES.index(Stage(stem.split("_")[1])) for stem in stems(folder)]
    assert stage_order == sorted(stage_order)
    graphs = [compiled.input_graph] + [r.snapshot or compiled.graph for r in compiled.records]
    for stem, graph in zip(stems(folder), graphs, strict=True):
        text = (folder / f"{stem}.txt").read_text(encoding="utf-8")
        assert text.endswith(graph.to_text() + "\n")
        assert json.loads((folder / f"{stem}.json").read_text(encoding="utf-8")) == graph.to_json()
        model = onnx.load(str(folder / f"{stem}.onnx"))
        onnx.checker.check_model(model, full_check=False)
        if not any(n.body is not None for n in graph.nodes):  # fused nodes are written as their bodies
            assert ge_core.load_onnx(model.SerializeToString()).to_text() == graph.to_text()
        assert f"# onnx {stem}.onnx" in text
        check_canvas(folder / f"{stem}{CANVAS_SUFFIX}", stem, graph)
    for record, stem in zip(compiled.records, stems(folder)[1:], strict=True):
        header = [line for line in (folder / f"{stem}.txt").read_text().splitlines() if line.startswith("#")]
        assert header[0] == f"# pass {record.name} (stage {record.stage}), step {record.index}"
        assert header[1].startswith(f"# changed {record.changed}; nodes {record.nodes_before} -> "
                                    f"{record.nodes_after}; ")


def check_canvas(path: Path, stem: str, graph: Graph) -> None:
    """The step's Model Explorer file: a collection whose first graph is the step's graph (one node per
    GE node, named as it), then one graph per fused body. (tests/viz/test_canvas_files.py opens it with
    Model Explorer's own loader.)"""
    collection = json.loads(path.read_text(encoding="utf-8"))
    assert set(collection) >= {"label", "graphs"} and collection["label"]
    main_graph, *bodies = collection["graphs"]
    assert main_graph["id"] == stem
    ops = [n["id"] for n in main_graph["nodes"] if n["label"] not in ("Input", "Output")]
    assert ops == [n.name for n in graph.nodes]
    fused = [n for n in graph.nodes if n.body is not None]
    assert {f"{stem}/{n.name}" for n in fused} <= {b["id"] for b in bodies}


def test_write_dumps_writes_text_json_onnx_and_model_explorer_json_per_pass(tmp_path: Path) -> None:
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")
    files = write_dumps(compiled, tmp_path)
    assert len(files) == 4 * (1 + len(compiled.records)) + 1  # .txt/.json/.onnx/.me.json + fusion_result.json
    assert files[-1].name == "fusion_result.json"
    files = files[:-1]
    assert [p.stem for p in files] == sorted(p.stem for p in files)  # numbered in pass order
    assert any(r.changed for r in compiled.records)  # the dumps show something happening
    check_dumps(tmp_path, compiled)


def test_cli_compile_writes_dumps_and_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump_dir, report_path = tmp_path / "dumps", tmp_path / "report.json"
    code = main(["compile", "sample:conv_bn_relu", "--dump-dir", str(dump_dir), "--report", str(report_path),
                 "--dump-graph-level", "1"])  # every pass (the default, 2, writes GE's whitelist: below)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "wrote report" in out and "dump files" in out
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert isinstance(report["compile_seconds"], float) and report["compile_seconds"] > 0
    assert isinstance(report["kernels"], int) and report["kernels"] > 0
    keys = {"name", "stage", "changed", "nodes_before", "nodes_after", "seconds"}
    assert report["passes"] and all(keys <= set(p) for p in report["passes"])
    assert all(p["stage"] in {str(s) for s in Stage} for p in report["passes"])
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")
    assert [p["name"] for p in report["passes"]] == [r.name for r in compiled.records]
    assert stems(dump_dir) == expected_stems(compiled)
    check_dumps(dump_dir, compiled)


def test_cli_compile_dumps_ges_default_stages_by_default(tmp_path: Path) -> None:
    """DUMP_GRAPH_LEVEL=2, GE's default: the graph as imported, the end of AfterInfershape and of
    OptimizeOriginalGraph, and Build (the final graph), not every pass; 3 only Build; names pick stages."""
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")
    ends = {r.stage: r for r in compiled.records}  # each stage's last record
    want = [f"000_{Stage.PRE_RUN_BEGIN}_input"] + [
        f"{r.index:03d}_{r.stage}_{snake_name(r.name)}"
        for r in (ends[Stage.AFTER_INFERSHAPE], ends[Stage.OPTIMIZE_ORIGINAL_GRAPH], compiled.records[-1])]
    assert main(["compile", "sample:conv_bn_relu", "--dump-dir", str(tmp_path / "default")]) == 0
    assert stems(tmp_path / "default") == want
    assert main(["compile", "sample:conv_bn_relu", "--dump-dir", str(tmp_path / "build"),
                 "--dump-graph-level", "3"]) == 0
    assert stems(tmp_path / "build") == want[-1:]
    assert main(["compile", "sample:conv_bn_relu", "--dump-dir", str(tmp_path / "named"),
                 "--dump-graph-level", "PreRunBegin|CsePass"]) == 0
    assert stems(tmp_path / "named") == [want[0], *(s for s in expected_stems(compiled) if s.endswith("_cse"))]
    text = (tmp_path / "default" / f"{want[-1]}.txt").read_text()
    assert "# GE stage names: PreRunAfterOptimize2_UbFusionPass, PreRunAfterOptimize2, Build" in text


def test_a_step_that_changed_nothing_gets_the_same_model_explorer_file_as_built(tmp_path: Path) -> None:
    """Such a file is copied from the graph's earlier one under the step's id and label: it must read exactly as
    canvas_json builds it."""
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")
    write_dumps(compiled, tmp_path)
    quiet = [i for i, r in enumerate(compiled.records[:-1]) if not r.changed and not r.decisions]
    assert len(quiet) >= 2
    for i in quiet:
        stem = f"{compiled.records[i].index:03d}_{compiled.records[i].stage}_{snake_name(compiled.records[i].name)}"
        written = json.loads((tmp_path / f"{stem}{CANVAS_SUFFIX}").read_text())
        assert written == json.loads(json.dumps(canvas_json(compiled, i))), stem


@dataclass(frozen=True)
class FuseRelu:
    """Turns every Relu into a made-up fused op of the default domain, which ONNX cannot express."""

    name: ClassVar[str] = "FuseReluPass"

    def run(self, graph: Graph) -> PassResult:
        for node in graph.nodes:
            if node.op_type == "Relu":
                node.op_type = "FusedRelu"
        return PassResult(True)


def test_a_graph_with_a_non_standard_op_gets_no_onnx_file_and_says_why(tmp_path: Path) -> None:
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"),
                               pipeline=[PipelineStep(Stage.OPTIMIZE_STAGE1, FuseRelu())])
    files = write_dumps(compiled, tmp_path)
    assert [p.name for p in files] == ["000_PreRunBegin_input.txt", "000_PreRunBegin_input.json",
                                       "000_PreRunBegin_input.onnx", "000_PreRunBegin_input.me.json",
                                       "001_OptimizeStage1_fuse_relu.txt", "001_OptimizeStage1_fuse_relu.json",
                                       "001_OptimizeStage1_fuse_relu.me.json"]
    text = (tmp_path / "001_OptimizeStage1_fuse_relu.txt").read_text()
    assert "# onnx not written: 2 node(s) are not standard ONNX ops: 'relu1' (FusedRelu)" in text


def test_fusion_result_json_counts_matches_and_effects_per_pass(tmp_path: Path) -> None:
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")
    write_dumps(compiled, tmp_path)
    result = json.loads((tmp_path / "fusion_result.json").read_text())["session_and_graph_id_0_0"]
    assert set(result) == {"graph_fusion", "ub_fusion"}
    decisions = compiled.report["fusion"]["decisions"]
    for section_name, section in result.items():
        for name, counts in section.items():
            mine = [d for d in decisions if d["pass"] == name]
            expected = {"match_times": str(len(mine)), "effect_times": str(sum(d["accepted"] for d in mine))}
            if section_name == "ub_fusion":  # GE's writer adds its UB knowledge repository's hits; we have none
                expected["repository_hit_times"] = "0"
            assert counts == expected
    assert "ConvActivationFusionPass" in result["graph_fusion"]
    assert int(result["graph_fusion"]["ConvActivationFusionPass"]["effect_times"]) >= 2


def test_the_model_explorer_dumps_mark_what_each_pass_did(tmp_path: Path) -> None:
    """Each step's .me.json carries the step's change marks and its fusion decisions; canvas=False leaves
    the files out."""
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3")
    write_dumps(compiled, tmp_path)
    fusing = next(r for r in compiled.records if r.name == "ConvActivationFusionPass")
    stem = f"{fusing.index:03d}_{fusing.stage}_{snake_name(fusing.name)}"
    graph = json.loads((tmp_path / f"{stem}{CANVAS_SUFFIX}").read_text())["graphs"][0]
    attrs = {n["id"]: {a["key"]: a["value"] for a in n["attrs"]} for n in graph["nodes"]}
    assert attrs["relu1"]["change"].startswith("changed")  # relu1 became the FusedConv
    assert attrs["relu1"]["fusion"].startswith("accepted by ConvActivationFusionPass")
    assert all("change" not in a for n, a in attrs.items() if n.startswith(("input:", "output:")))
    files = write_dumps(compiled, tmp_path / "plain", canvas=False)
    assert files and not any(p.name.endswith(CANVAS_SUFFIX) for p in files)
