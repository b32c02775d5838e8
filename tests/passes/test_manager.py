"""PassManager and instruments: records, snapshots, verification, numerics, and PassError."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from ge_core.errors import UsageError
from ge_core.ir import Graph, TensorDesc
from ge_core.passes.infra.base import PassResult, Stage, describe, snake_name
from ge_core.passes.infra.instruments import NumericsInstrument, SnapshotInstrument, VerifyInstrument
from ge_core.passes.infra.manager import PassError, PassManager, PipelineStep
from ge_core.passes.infra.pipeline import OptLevel
from ge_core.passes.infra.switches import apply_switches, read_switch_file


def f32(*shape: int) -> TensorDesc:
    return TensorDesc(shape, "float32")


def relu_relu() -> Graph:
    g = Graph("g")
    g.add_input("x", f32(2, 3))
    g.add_node("Relu", ["x"], ["a"], name="r1", descs=[f32(2, 3)])
    g.add_node("Relu", ["a"], ["y"], name="r2", descs=[f32(2, 3)])
    g.set_outputs(["y"])
    return g


@dataclass(frozen=True)
class DropSecondRelu:
    """Relu(Relu(x)) == Relu(x): remove the second."""

    name: ClassVar[str] = "DropSecondReluPass"

    def run(self, graph: Graph) -> PassResult:
        node = graph.node("r2") if graph.has_node("r2") else None
        if node is None:
            return PassResult(False)
        graph.replace_all_uses("y", "a")
        graph.erase(node)
        graph.rename_tensor("a", "y")
        return PassResult(True, ("removed r2",))


@dataclass(frozen=True)
class Nothing:
    """Does nothing."""

    name: ClassVar[str] = "NothingPass"

    def run(self, graph: Graph) -> PassResult:
        return PassResult(False)


@dataclass(frozen=True)
class BreaksShapes:
    """Writes a wrong desc: verification must catch it."""

    name: ClassVar[str] = "BreaksShapesPass"

    def run(self, graph: Graph) -> PassResult:
        graph.set_desc("y", f32(9, 9))
        return PassResult(True)


@dataclass(frozen=True)
class WrongMath:
    """Replaces Relu by Sigmoid: numerics must catch it."""

    name: ClassVar[str] = "WrongMathPass"

    def run(self, graph: Graph) -> PassResult:
        node = graph.node("r2")
        graph.add_node("Sigmoid", ["a"], ["s"], name="sig", descs=[f32(2, 3)], before=node)
        graph.replace_all_uses("y", "s")
        graph.erase(node)
        graph.rename_tensor("s", "y")
        return PassResult(True)


@dataclass(frozen=True)
class Crashes:
    """Raises."""

    name: ClassVar[str] = "CrashesPass"

    def run(self, graph: Graph) -> PassResult:
        graph.add_node("Tanh", ["x"], ["t"], name="half_done", descs=[f32(2, 3)])  # edits, then fails
        raise RuntimeError("boom")


def test_records_carry_stage_counts_notes_and_snapshots() -> None:
    graph = relu_relu()
    snaps = SnapshotInstrument()
    steps = [PipelineStep(Stage.OPTIMIZE_ORIGINAL_GRAPH, Nothing()),
             PipelineStep(Stage.OPTIMIZE_STAGE1, DropSecondRelu())]
    records = PassManager(steps, [snaps, VerifyInstrument()]).run(graph)
    first, second = records
    assert (first.name, first.stage, first.changed, first.nodes_before, first.nodes_after) == \
        ("NothingPass", Stage.OPTIMIZE_ORIGINAL_GRAPH, False, 2, 2)
    assert (second.changed, second.nodes_after, second.notes, second.verified) == (True, 1, ("removed r2",), True)
    assert first.snapshot is not None and len(first.snapshot) == 2  # the graph as it was after NothingPass
    assert second.snapshot is not None and len(second.snapshot) == 1
    assert second.to_json()["stage"] == "OptimizeStage1"
    assert first.description == "Does nothing."


def test_verify_instrument_turns_a_broken_pass_into_a_pass_error() -> None:
    graph = relu_relu()
    steps = [PipelineStep(Stage.OPTIMIZE_ORIGINAL_GRAPH, Nothing()),
             PipelineStep(Stage.OPTIMIZE_STAGE1, BreaksShapes())]
    with pytest.raises(PassError) as info:
        PassManager(steps, [SnapshotInstrument(), VerifyInstrument()]).run(graph)
    err = info.value
    assert err.pass_name == "BreaksShapesPass" and err.stage == Stage.OPTIMIZE_STAGE1
    assert err.passes_before == ["NothingPass"]
    assert "BreaksShapesPass" in str(err) and "OptimizeStage1" in str(err) and "NothingPass" in str(err)
    assert err.graph_before is not None and err.graph_before.desc("y") == f32(2, 3)  # kept from before
    assert [r.name for r in err.records] == ["NothingPass"]


def test_a_crash_inside_a_pass_keeps_the_graph_from_before_it() -> None:
    graph = relu_relu()
    with pytest.raises(PassError, match="boom") as info:
        PassManager([PipelineStep(Stage.OPTIMIZE_STAGE1, Crashes())], [SnapshotInstrument()]).run(graph)
    before = info.value.graph_before
    assert before is not None and before.has_node("r2") and not before.has_node("half_done")


def test_numerics_instrument_records_errors_and_fails_a_wrong_pass() -> None:
    feeds = {"x": np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)}
    graph = relu_relu()
    records = PassManager([PipelineStep(Stage.OPTIMIZE_STAGE1, DropSecondRelu())],
                          [SnapshotInstrument(), NumericsInstrument(feeds, tolerance=1e-6)]).run(graph)
    assert records[0].max_error == {"y": 0.0}
    with pytest.raises(PassError, match="moved by"):
        PassManager([PipelineStep(Stage.OPTIMIZE_STAGE1, WrongMath())],
                    [SnapshotInstrument(), NumericsInstrument(feeds, tolerance=1e-4)]).run(relu_relu())


def test_names_and_descriptions() -> None:
    assert snake_name("ConstantFoldingPass") == "constant_folding"
    assert snake_name("CsePass") == "cse"
    assert snake_name("BatchNormFoldPass") == "batch_norm_fold"
    assert describe(DropSecondRelu()) == "Relu(Relu(x)) == Relu(x): remove the second."


@pytest.mark.parametrize(("text", "level"), [("O0", "O0"), ("o1", "O1"), ("3", "O3"), ("O2", "O3")])
def test_opt_levels_parse(text: str, level: str) -> None:
    assert OptLevel.parse(text) == level


def test_bad_opt_level_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="O0, O1 or O3"):
        OptLevel.parse("O9")


def test_switch_file_text_and_json_forms(tmp_path: Path) -> None:
    text = tmp_path / "switch.cfg"
    text.write_text("# turn two passes off\nCsePass:off\nPrunePass : off  # trailing comment\nInferShapePass:on\n")
    assert read_switch_file(text) == {"CsePass": False, "PrunePass": False, "InferShapePass": True}
    ge_json = tmp_path / "fusion_switch.json"
    ge_json.write_text('{"Switch": {"GraphFusion": {"ALL": "on", "CsePass": "off"}, "UBFusion": {}}}')
    assert read_switch_file(ge_json) == {"ALL": True, "CsePass": False}
    flat = tmp_path / "flat.json"
    flat.write_text('{"PrunePass": "off"}')
    assert read_switch_file(flat) == {"PrunePass": False}


def test_switches_refuse_unknown_passes_and_support_all_off() -> None:
    known = ["CsePass", "PrunePass", "InferShapePass"]
    assert apply_switches({"CsePass": False}, known) == {"CsePass"}
    assert apply_switches({"ALL": False, "InferShapePass": True}, known) == {"CsePass", "PrunePass"}
    with pytest.raises(UsageError, match="Known passes: CsePass"):
        apply_switches({"NoSuchPass": False}, known)


@pytest.mark.parametrize("content", ["CsePass:maybe", "{not json"])
def test_malformed_switch_files_are_usage_errors(tmp_path: Path, content: str) -> None:
    path = tmp_path / "s"
    path.write_text(content)
    with pytest.raises(UsageError):
        read_switch_file(path)


def test_compile_reports_progress_before_every_pass() -> None:
    import ge_core
    from ge_core.samples.registry import sample_bytes

    seen: list[tuple[int, int, str]] = []
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), opt_level="O3",
                               progress=lambda done, total, name: seen.append((done, total, name)))
    assert [name for _, _, name in seen] == [r.name for r in compiled.records]
    assert [done for done, _, _ in seen] == list(range(len(compiled.records)))
    assert {total for _, total, _ in seen} == {len(compiled.records)}
