"""If/Loop/Scan through the frontend: subgraphs imported with their outer-scope reads resolved (nested too),
problems inside a branch named with the branch and the node, and the way back to ONNX (ORT agrees)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ge_core
from ge_core.errors import ModelError
from ge_core.frontend import import_onnx
from ge_core.frontend.onnx_export import to_onnx
from ge_core.ops import REGISTRY
from tests.control_models import feeds_for, loop_rnn, scan_rnn, vad_if

MODELS = {"vad_if": vad_if, "loop_rnn": loop_rnn, "scan_rnn": scan_rnn}


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def test_outer_names_become_captures_of_each_scope() -> None:
    graph = ge_core.load_onnx(loop_rnn().SerializeToString())
    loop = graph.nodes[0]
    assert loop.explicit_inputs == ("trips", "keep_going", "h0")
    assert loop.captures == ("frames", "wx", "wh", "gate")  # `gate` is read two scopes down, by the If
    body = loop.subgraphs["body"]
    assert body.inputs == ["i", "cond_in", "h_in"] and body.captures == ["frames", "wx", "wh", "gate"]
    inner = body.node("If_7")
    assert inner.captures == ("h_new", "gate")  # h_new is the body's own, gate the main graph's
    assert inner.subgraphs["then_branch"].captures == ["h_new", "gate"]
    assert body.desc("h_in").text() == "f32[1,8]" and graph.desc("states").text() == "f32[5,1,8]"
    graph.verify(REGISTRY)


def _if_model(then_nodes: list[onnx.NodeProto], out: str) -> onnx.ModelProto:
    then = helper.make_graph(then_nodes, "then", [], [helper.make_empty_tensor_value_info(out)])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["n"])], "else", [],
                              [helper.make_empty_tensor_value_info("n")])
    graph = helper.make_graph([helper.make_node("If", ["c"], ["y"], name="gate", then_branch=then, else_branch=other)],
                              "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
                                    helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("nodes", "message"), [
    ([helper.make_node("Relu", ["x"], ["r"], name="act", alpha=1.0)],
     "then_branch of node 'gate': node 'act' (Relu) has an unknown attribute 'alpha'"),
    ([helper.make_node("Relu", ["nowhere"], ["r"], name="act")],
     "then_branch of node 'gate': node 'act' (Relu) reads tensor 'nowhere', which no node"),
    ([helper.make_node("Concat", ["x", "x"], ["r"], name="act", axis=3)],
     "node 'gate' (If) with inputs [[], [2]]: in then_branch: node 'act' (Concat) with inputs [[2], [2]]: axis=3"),
])
def test_problems_inside_a_branch_name_the_branch_and_the_node(nodes: list[onnx.NodeProto], message: str) -> None:
    with pytest.raises(ModelError) as caught:
        ge_core.load_onnx(_if_model(nodes, "r").SerializeToString())
    assert any(message in p for p in caught.value.problems), caught.value.problems


def test_an_unsupported_op_inside_a_branch_is_listed_with_where_it_is() -> None:
    result = import_onnx(_if_model([helper.make_node("NoSuchOp", ["x"], ["r"], name="odd")], "r"))
    assert result.unsupported == [("odd (in then_branch of node 'gate')", "NoSuchOp")]


@pytest.mark.parametrize("name", MODELS)
def test_export_writes_subgraphs_back(name: str) -> None:
    model = MODELS[name]()
    graph = ge_core.load_onnx(model.SerializeToString())
    exported = to_onnx(graph)
    onnx.checker.check_model(exported, full_check=True)
    again = ge_core.load_onnx(exported.SerializeToString())
    assert again.to_text().replace(again.name, "g") == graph.to_text().replace(graph.name, "g")
    for seed in (0, 1):
        feeds = feeds_for(model, seed, scale=3.0 * seed + 0.2)
        for want, got in zip(_ort(model, feeds), _ort(exported, feeds), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_export_after_o3_still_matches() -> None:
    model = vad_if()
    compiled = ge_core.compile(ge_core.load_onnx(model.SerializeToString()), opt_level="O3")
    exported = to_onnx(compiled.graph)
    onnx.checker.check_model(exported, full_check=True)
    for seed, scale in ((0, 0.2), (1, 3.0)):
        feeds = feeds_for(model, seed, scale)
        np.testing.assert_allclose(_ort(exported, feeds)[0], _ort(model, feeds)[0], rtol=1e-6, atol=1e-6)
