"""`compile(hardware=...)`, `compile --hardware`: the lowering passes join the pipeline only with a target,
are switched off like any pass, and the lowered graph still exports to ONNX and dumps."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import ge_core
from ge_core.cli.main import main
from ge_core.debugging.dump import write_dumps
from ge_core.errors import UsageError
from ge_core.frontend.onnx_export import is_standard, to_onnx
from ge_core.passes.infra.base import Stage
from ge_core.passes.infra.pipeline import all_passes, default_pipeline
from ge_core.passes.npu import LOWERING_PASSES
from ge_core.passes.npu.report import transdata_count
from ge_core.samples.registry import get_sample, sample_bytes

SAMPLE = "residual_block"


def compile_sample(name: str = SAMPLE, **kw: object) -> ge_core.CompiledModel:
    return ge_core.compile(sample_bytes(name), input_shapes=get_sample(name).input_shapes or None, **kw)  # type: ignore[arg-type]


def test_without_a_target_nothing_changes() -> None:
    assert not any(s.name in LOWERING_PASSES for level in ("O0", "O1", "O3") for s in default_pipeline(level))
    report = compile_sample().report
    assert {"hardware", "formats", "tiling"}.isdisjoint(report)
    assert not any(p["name"] in LOWERING_PASSES for p in report["passes"])


def test_the_target_appends_the_lowering_in_ge_stages() -> None:
    steps = default_pipeline("O3", "ascend910")
    assert [(s.stage, s.name) for s in steps[-4:]] == [
        (Stage.PRE_RUN_AFTER_OPTIMIZE2, "FormatSelectionPass"),
        (Stage.PRE_RUN_AFTER_OPTIMIZE2, "TransDataSymmetryEliminationPass"),
        (Stage.PRE_RUN_AFTER_OPTIMIZE2, "TransDataBreadthFusionPass"),
        (Stage.BUILD, "TilingPass")]
    assert [s.name for s in default_pipeline("O0", "ascend310")] == list(LOWERING_PASSES)  # lowering needs no opt
    assert [p.name for p in all_passes()][-4:] == list(LOWERING_PASSES)  # known to switch files and the UI


def test_compile_with_hardware_reports_the_target() -> None:
    compiled = compile_sample(hardware="ascend910b", verify=True)
    report = compiled.report
    assert report["hardware"] == "ascend910b"
    assert [p["name"] for p in report["passes"]][-4:] == list(LOWERING_PASSES)
    assert all(p["verified"] for p in report["passes"])
    assert {t["node"] for t in report["tiling"]} == {n.name for n in compiled.graph.nodes}  # no views here
    assert all(t["hardware"] == "ascend910b" and t["block_dim"] >= 1 for t in report["tiling"])
    assert {f["format"] for f in report["formats"]} == {"NC1HWC0"}
    assert transdata_count(compiled.graph) == 2


def test_unknown_hardware_is_refused_listing_the_known_ones() -> None:
    with pytest.raises(UsageError, match="ascend310, ascend310p, ascend910, ascend910b"):
        compile_sample(hardware="ascend999")


def test_a_profile_file_is_a_target_too(tmp_path: Path) -> None:
    path = tmp_path / "mychip.json"
    path.write_text(json.dumps({"extends": "ascend910", "name": "mychip",
                                "cores": {"ai_cores": 4, "vector_cores": 4}}), encoding="utf-8")
    report = compile_sample(hardware=path).report
    assert report["hardware"] == "mychip"
    assert max(t["block_dim"] for t in report["tiling"]) <= 4


@pytest.mark.parametrize("name", LOWERING_PASSES)
def test_each_lowering_pass_switches_off(name: str) -> None:
    compiled = compile_sample(hardware="ascend910", disabled=[name], verify=True)
    assert name not in [r.name for r in compiled.records]
    feeds = ge_core.random_feeds(compiled.input_graph, seed=0)
    want = ge_core.execute(compiled.input_graph, feeds)
    got = compiled.run(feeds)
    assert all(np.allclose(got[t], want[t], rtol=1e-5, atol=1e-5) for t in want)
    if name == "FormatSelectionPass":
        assert transdata_count(compiled.graph) == 0 and "formats" not in compiled.report
    if name == "TilingPass":
        assert "tiling" not in compiled.report


def test_switch_file_line(tmp_path: Path) -> None:
    switch = tmp_path / "switch.cfg"
    switch.write_text("TransDataSymmetryEliminationPass:off\n", encoding="utf-8")
    compiled = compile_sample(hardware="ascend910", switch_file=switch)
    assert transdata_count(compiled.graph) > 2  # the pairs at every op boundary stay


def test_lowered_graph_exports_and_runs_in_onnxruntime(tmp_path: Path) -> None:
    compiled = compile_sample(hardware="ascend910")
    assert is_standard(compiled.graph)  # TransData is written as Identity: ONNX has no layouts
    model = to_onnx(compiled.graph)
    onnx.checker.check_model(model)
    feeds = ge_core.random_feeds(compiled.graph, seed=1)
    got = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    want = compiled.run(feeds)
    assert all(np.allclose(g, want[t], rtol=1e-4, atol=1e-5) for g, t in zip(got, want, strict=True))
    files = write_dumps(compiled, tmp_path)
    assert any(f.name.endswith("_format_selection.onnx") for f in files)


def test_cli_compile_with_hardware(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.json"
    code = main(["compile", f"sample:{SAMPLE}", "--hardware", "ascend910", "--report", str(report)])
    out = capsys.readouterr().out
    assert code == 0
    assert "TransDataSymmetryEliminationPass" in out and "TilingPass" in out
    assert "lowered for ascend910: 2 TransData, 5 op(s) in NC1HWC0, 7 kernel(s) tiled" in out
    assert json.loads(report.read_text())["hardware"] == "ascend910"


def test_cli_unknown_hardware_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", f"sample:{SAMPLE}", "--hardware", "tpu"]) == 2
    assert "Known profiles: ascend310, ascend310p, ascend910, ascend910b" in capsys.readouterr().err
