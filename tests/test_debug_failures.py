"""ge_core.debugging.failures: load, compile and run errors in plain words, naming pass, stage and nodes."""

from __future__ import annotations

import pytest

import ge_core
from ge_core.debugging import bug_failure, error_failure, import_failure, nodes_named
from ge_core.errors import ExecutionError, GEError, ModelError
from ge_core.frontend.summary import summarize
from ge_core.ir.text import node_to_text
from ge_core.passes.infra.manager import PassError
from ge_core.samples.registry import sample_bytes
from tests.debugging.broken_passes import CrashingPass, RefusingPass, with_step


def test_import_failure_names_every_node_of_a_broken_sample() -> None:
    shape = import_failure(ge_core.import_onnx(sample_bytes("shape_mismatch")))
    assert shape.phase == "load" and shape.nodes == ("y", "z")
    assert "'y'" in shape.headline and "'z'" in shape.headline and shape.graph is not None
    assert "inner dimensions differ" in shape.message
    ops = import_failure(ge_core.import_onnx(sample_bytes("unsupported_op")))
    assert set(ops.nodes) == {"split", "joined", "y", "ngrams"}
    assert "TfIdfVectorizer" in ops.headline and ops.hint


def test_a_refusing_pass_names_pass_stage_node_and_keeps_the_graph_before_it() -> None:
    graph = ge_core.load_onnx(sample_bytes("conv_bn_relu"))
    with pytest.raises(PassError) as info:
        ge_core.compile(graph, pipeline=with_step(RefusingPass()))
    failure = error_failure(info.value, "compile", graph)
    before = info.value.graph_before
    assert before is not None
    assert failure.pass_name == "RefusingPass" and failure.stage == "OptimizeStage1"
    assert failure.passes_before == ("InferShapePass", "ConstantFoldingPass", "NoOpEliminationPass")
    assert failure.nodes == (before.nodes[1].name,) and failure.graph is before
    assert f"'{before.nodes[1].name}'" in failure.headline and "RefusingPass:off" in failure.hint
    assert not failure.bug


def test_a_crashing_pass_is_reported_as_our_bug() -> None:
    with pytest.raises(PassError) as info:
        ge_core.compile(sample_bytes("conv_bn_relu"), pipeline=with_step(CrashingPass()))
    failure = error_failure(info.value, "compile")
    assert failure.bug and failure.error_type == "KeyError" and failure.pass_name == "CrashingPass"


def test_plain_errors_and_bugs() -> None:
    run = error_failure(ExecutionError("mm", "MatMul", [(1, 2)], "boom"), "run")
    assert run.phase == "run" and run.nodes == ("mm",) and run.headline.startswith("Running failed at node 'mm'")
    usage = error_failure(GEError("input 'x' is fed shape [2]", hint="Feed [1]."), "run")
    assert usage.nodes == () and usage.hint == "Feed [1]."
    bug = bug_failure(RuntimeError("oops"), "compile")
    assert bug.bug and "RuntimeError: oops" in bug.headline and "oops" in bug.message
    assert error_failure(ValueError("x"), "load").bug


def test_nodes_named_keeps_only_nodes_of_the_graph() -> None:
    graph = ge_core.load_onnx(sample_bytes("conv_bn_relu"))
    real = graph.nodes[0].name
    texts = [f"node '{real}' (Conv) is odd", "node 'ghost' is not there", f"tensor '{real}' again"]
    assert nodes_named(texts, graph) == [real]
    assert nodes_named(["node 'ghost' here"], None) == ["ghost"]
    err = ModelError("refused:", problems=[f"node '{real}' (Conv): bad"])
    assert error_failure(err, "load", graph).nodes == (real,)


def test_a_tensor_shape_inference_never_reached_reads_not_inferred_not_undefined() -> None:
    """Issue 40: the Debug page's node line and `inspect` showed `undefined[]` for shape_mismatch's outputs."""
    result = ge_core.import_onnx(sample_bytes("shape_mismatch"))
    lines = [node_to_text(result.graph, n) for n in result.graph.nodes]
    assert "%y = MatMul(%x, %w) : ? (not inferred)" in lines
    text = summarize(result).to_text()
    assert "output   y: ? (not inferred)" in text and "undefined" not in text
