"""Control flow in the IR: subgraphs on the node, captured tensors in the users map, renames that reach into
subgraphs (nested ones too), copies, verify() and the text form."""

from __future__ import annotations

import numpy as np
import pytest

from ge_core.errors import GraphEditError, VerifyError
from ge_core.ir.graph import Graph
from ge_core.ir.inline import can_inline, inline_subgraph
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY, infer_graph
from ge_core.runtime import execute

F = TensorDesc((2, 3), "float32")
B = TensorDesc((), "bool")


def branch(name: str, op: str, reads: str, out: str) -> Graph:
    g = Graph(name)
    g.add_capture(reads, F)
    g.add_node(op, [reads], [out], name=out, descs=[F])
    g.set_outputs([out])
    return g


def if_graph(then: Graph | None = None) -> Graph:
    """y = If(c) then Neg(r) else Abs(x), with r = Relu(x); z = Sigmoid(y)."""
    g = Graph("main")
    g.add_input("x", F)
    g.add_input("c", B)
    g.add_node("Relu", ["x"], ["r"], name="relu", descs=[F])
    then = then or branch("then", "Neg", "r", "t")
    g.add_node("If", ["c"], ["y"], name="if1", descs=[F], captures=[*then.captures, "x"],
               subgraphs={"then_branch": then, "else_branch": branch("else", "Abs", "x", "e")})
    g.add_node("Sigmoid", ["y"], ["z"], name="sig", descs=[F])
    g.set_outputs(["z"])
    return g


def nested_graph() -> Graph:
    """An If whose then_branch holds an If of its own reading `r` from two scopes up."""
    inner = Graph("inner_then")
    inner.add_capture("r", F)
    inner.add_node("Exp", ["r"], ["ex"], name="ex", descs=[F])
    inner.set_outputs(["ex"])
    then = Graph("then")
    then.add_capture("c", B)
    then.add_capture("r", F)
    then.add_node("If", ["c"], ["deep"], name="if2", descs=[F], captures=["r"],
                  subgraphs={"then_branch": inner, "else_branch": branch("inner_else", "Neg", "r", "ne")})
    then.set_outputs(["deep"])
    return if_graph(then)


def test_captured_tensors_are_uses_of_the_control_flow_node() -> None:
    g = if_graph()
    node = g.node("if1")
    assert node.explicit_inputs == ("c",) and node.captures == ("r", "x")
    assert node in g.users("r") and node in g.users("x")
    with pytest.raises(GraphEditError, match="read by \\['if1'\\]"):
        g.erase(g.node("relu"))
    g.verify(REGISTRY)


def test_replace_all_uses_renames_inside_the_subgraphs_nested_ones_too() -> None:
    g = nested_graph()
    g.add_node("Tanh", ["x"], ["r2"], name="tanh", descs=[F], before=g.node("if1"))
    g.replace_all_uses("r", "r2")
    then = g.node("if1").subgraphs["then_branch"]
    assert "r2" in then.captures and "r" not in then.captures
    deep = then.node("if2")
    assert deep.captures == ("r2",)
    assert deep.subgraphs["then_branch"].node("ex").inputs == ("r2",)
    assert deep.subgraphs["else_branch"].captures == ["r2"]
    g.verify(REGISTRY)
    assert "r2" in g.to_text() and "%r)" not in g.to_text()


def test_rename_tensor_renames_captures_and_moves_an_inner_name_out_of_the_way() -> None:
    g = if_graph()
    g.rename_tensor("r", "t")  # the then_branch has a tensor of its own called 't'
    then = g.node("if1").subgraphs["then_branch"]
    assert then.captures == ["t"]
    assert then.outputs == ["t_1"] and then.node("t").inputs == ("t",)
    g.verify(REGISTRY)
    feeds = {"x": np.arange(6, dtype=np.float32).reshape(2, 3) - 2, "c": np.array(True)}
    np.testing.assert_allclose(execute(g, feeds)["z"], 1 / (1 + np.exp(np.maximum(feeds["x"], 0))), rtol=1e-6)


def test_two_captures_pointed_at_one_tensor_become_one() -> None:
    g = Graph("main")
    g.add_input("x", F)
    g.add_input("c", B)
    g.add_node("Relu", ["x"], ["a"], name="a", descs=[F])
    g.add_node("Relu", ["x"], ["b"], name="b", descs=[F])
    sub = Graph("then")
    sub.add_capture("a", F)
    sub.add_capture("b", F)
    sub.add_node("Add", ["a", "b"], ["s"], name="s", descs=[F])
    sub.set_outputs(["s"])
    g.add_node("If", ["c"], ["y"], name="if1", descs=[F], captures=["a", "b"],
               subgraphs={"then_branch": sub, "else_branch": branch("else", "Neg", "a", "n")})
    g.set_outputs(["y"])
    g.replace_all_uses("b", "a")  # what CSE does when it merges two Relu(x)
    g.erase(g.node("b"))
    assert sub.captures == ["a"] and sub.node("s").inputs == ("a", "a")
    g.verify(REGISTRY)


def test_copies_own_their_subgraphs() -> None:
    g = nested_graph()
    copy = g.copy()
    assert copy.to_text() == g.to_text()
    copy.add_node("Tanh", ["x"], ["r2"], name="tanh", descs=[F], before=copy.node("if1"))
    copy.replace_all_uses("r", "r2")
    assert "r2" not in g.to_text()
    g.verify(REGISTRY)
    copy.verify(REGISTRY)


def test_verify_names_the_node_and_subgraph_of_a_problem() -> None:
    g = if_graph()
    other = g.node("if1").subgraphs["else_branch"]
    other.add_capture("c", B)
    other.add_node("Not", ["c"], ["nc"], name="nc", descs=[B])
    with pytest.raises(VerifyError, match="else_branch of node 'if1' \\(If\\) reads outer tensor 'c', which the "
                                          "node does not capture"):
        g.verify()
    g = if_graph()
    g.node("if1").subgraphs["then_branch"].set_desc("t", TensorDesc((3, 2), "float32"))
    with pytest.raises(VerifyError, match="output 't' is f32\\[3,2\\] but the operator infers f32\\[2,3\\]"):
        g.verify(REGISTRY)


def test_text_form_shows_captures_and_subgraphs() -> None:
    text = if_graph().to_text()
    assert "%y = If(%c) captures [%r, %x] : f32[2,3]  # if1 {" in text
    assert "    else_branch: graph else (captures %x: f32[2,3]) {\n      %e = Abs(%x) : f32[2,3]\n" in text
    assert "    then_branch: graph then (captures %r: f32[2,3]) {" in text
    json = if_graph().to_json()["nodes"][1]
    assert json["captures"] == ["r", "x"] and set(json["subgraphs"]) == {"then_branch", "else_branch"}
    assert json["subgraphs"]["else_branch"]["captures"][0]["name"] == "x"


def test_inference_fills_subgraph_descs_and_merges_branches() -> None:
    g = if_graph()
    g.node("if1").subgraphs["else_branch"].set_desc("x", TensorDesc((2, 3), "undefined"))
    g.set_desc("x", TensorDesc((2, -1), "float32"))
    result = infer_graph(g, REGISTRY)
    assert not result.problems
    assert g.desc("y").text() == "f32[2,?]"
    assert g.node("if1").subgraphs["else_branch"].desc("e").text() == "f32[2,?]"


def test_inline_a_branch_keeps_the_interface() -> None:
    g = nested_graph()
    g.set_outputs(["z", "y"])
    node = g.node("if1")
    assert can_inline(g, node, "then_branch")
    added = inline_subgraph(g, node, "then_branch")
    assert [n.op_type for n in added] == ["If"] and g.outputs == ["z", "y"]
    assert g.producer("y") is added[0] and added[0].captures == ("r",)
    g.verify(REGISTRY)
