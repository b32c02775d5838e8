"""A dump folder (or zip) of our compile's stages in GE's forms: grouped, ordered, preferred ge_proto over
ge_onnx, turned into pass records, and counted by `inspect --json` exactly as the file lists its ops."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest

from ge_core.cli.main import main
from ge_core.debugging.ge_records import dump_records
from ge_core.debugging.ge_stages import GeDumpOptions, wanted, write_ge_dumps
from ge_core.frontend.ge.dump_files import parse_name, read_dump
from tests.frontend.ge.helpers import compiled_npu, signature


@pytest.fixture(scope="module")
def dump_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dump")
    write_ge_dumps(compiled_npu("resnet50"), folder, GeDumpOptions(content=2, stages="2"))
    return folder


def test_file_names_are_ges() -> None:
    assert parse_name("ge_proto_00000094_graph_1_Build.txt") == ("ge_proto", 94, 1, "Build")
    assert parse_name("ge_onnx_00000003_graph_0_PreRunAfterOptimizeSubgraph.pbtxt") == \
        ("ge_onnx", 3, 0, "PreRunAfterOptimizeSubgraph")
    assert parse_name("ge_proto_00000001_aclop_graph_2_OptimizeOriginalGraph_FeGraphFusionAfter.txt") == \
        ("ge_proto", 1, 2, "OptimizeOriginalGraph_FeGraphFusionAfter")
    assert parse_name("readme.txt") is None


def test_stage_filter_is_ges() -> None:
    assert wanted("Build", "2") and wanted("AfterInfershape", "2") and not wanted("PreRunAfterOptimize1", "2")
    assert wanted("PreRunAfterOptimize1", "1") and not wanted("OptimizeSubGraphAfter", "1")
    assert wanted("Build", "3") and not wanted("PreRunBegin", "3") and wanted("PreRunBegin", "4")
    assert wanted("OptimizeStage1_cse", "PreRunBegin|Stage1") and not wanted("Build", "PreRunBegin|Stage1")
    assert not wanted("Build", "5") and not wanted("", "1")


def test_folder_stages_are_ordered_and_stepped(dump_dir: Path) -> None:
    names = sorted(p.name for p in dump_dir.iterdir())
    assert names[0] == "ge_onnx_00000000_graph_1_PreRunBegin.pbtxt" and "ge_proto_00000003_graph_1_Build.txt" in names
    dump = read_dump(dump_dir)
    stages = dump.stages()
    assert [s.stage for s in stages] == ["PreRunBegin", "AfterInfershape", "PreRunAfterOptimizeOriginalGraph", "Build"]
    assert {s.file.kind for s in stages} == {"ge_proto"}  # both forms written: the fuller one read
    first, records = dump_records(dump)
    assert len(first) == len(stages[0].result.graph) and [r.name for r in records] == [s.stage for s in stages[1:]]
    build = records[-1]
    assert build.changed and build.snapshot is stages[-1].result.graph and build.nodes_after == 60
    fused = [d for d in build.decisions if d.pattern == "FusedConv"]
    assert len(fused) == 49 and all(len(d.nodes) >= 2 for d in fused)  # the original ops of each fusion


def test_a_zip_of_the_folder_reads_the_same(dump_dir: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in dump_dir.iterdir():
            archive.write(path, f"pid_1_deviceid_0/{path.name}")
    from_zip, from_folder = read_dump(buffer.getvalue(), "dump.zip").stages(), read_dump(dump_dir).stages()
    assert [signature(s.result.graph) for s in from_zip] == [signature(s.result.graph) for s in from_folder]


def test_inspect_json_counts_exactly_the_ops_of_the_file(dump_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build = dump_dir / "ge_proto_00000003_graph_1_Build.txt"
    assert main(["inspect", str(build), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    text = build.read_text()
    direct: dict[str, int] = {}
    for op_type in re.findall(r'^    type: "([^"]+)"$', text, re.MULTILINE):  # `type:` of each op, at op depth
        direct[op_type] = direct.get(op_type, 0) + 1
    assert summary["op_histogram"] == direct and summary["nodes"] == sum(direct.values()) == 171
    assert direct["TransData"] == 2 and "NC1HWC0" in text
    assert main(["inspect", str(dump_dir), "--json"]) == 0  # the folder: its last stage, Build
    assert json.loads(capsys.readouterr().out)["op_histogram"] == direct


def test_inspect_opens_the_ge_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "sample:ge_resnet50_build", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["nodes"] == 171 and summary["producer"] == "GE" and summary["op_histogram"]["TransData"] == 2
