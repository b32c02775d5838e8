"""Graph edits keep the users map and order right; verify() catches what edits must not leave behind."""

from __future__ import annotations

import numpy as np
import pytest

from ge_core.errors import GraphEditError, VerifyError
from ge_core.ir import Graph, TensorDesc
from ge_core.ops import REGISTRY


def f32(*shape: int) -> TensorDesc:
    return TensorDesc(shape, "float32")


def mlp() -> Graph:
    g = Graph("mlp")
    g.add_input("x", f32(1, 4))
    g.add_constant("w", np.ones((4, 3), np.float32))
    g.add_node("MatMul", ["x", "w"], ["h"], name="mm", descs=[f32(1, 3)])
    g.add_node("Relu", ["h"], ["y"], name="relu", descs=[f32(1, 3)])
    g.set_outputs(["y"])
    return g


def test_text_form_is_deterministic_and_readable() -> None:
    assert mlp().to_text() == (
        "graph mlp (%x: f32[1,4]) {\n"
        "  const %w: f32[4,3]\n"
        "  %h = MatMul(%x, %w) : f32[1,3]  # mm\n"
        "  %y = Relu(%h) : f32[1,3]  # relu\n"
        "  return %y\n"
        "}")


def test_text_form_shows_attributes_unknown_dims_and_control_edges() -> None:
    g = Graph("g")
    g.add_input("x", TensorDesc((-1, 8), "float32"))
    a = g.add_node("Softmax", ["x"], ["s"], {"axis": -1}, name="s", descs=[TensorDesc((-1, 8), "float32")])
    g.add_node("Relu", ["x"], ["r"], name="r", descs=[TensorDesc((-1, 8), "float32")], control_inputs=[a.name])
    g.set_outputs(["s", "r"])
    text = g.to_text()
    assert "%s = Softmax(%x) {axis=-1} : f32[?,8]" in text
    assert "%r = Relu(%x) after [s] : f32[?,8]" in text


def test_users_and_producer_maps_follow_edits() -> None:
    g = mlp()
    relu = g.node("relu")
    assert g.producer("h").name == "mm"
    assert [u.name for u in g.users("h")] == ["relu"]
    sig = g.insert_after(relu, "Sigmoid", ["h"], ["s"], name="sig", descs=[f32(1, 3)])
    assert [u.name for u in g.users("h")] == ["relu", "sig"]
    g.set_outputs(["y", "s"])
    g.verify(REGISTRY)
    assert g.index_of(sig) == g.index_of(relu) + 1


def test_replace_all_uses_rewires_readers_but_not_the_new_producer() -> None:
    g = mlp()
    relu = g.node("relu")
    tanh = g.insert_before(relu, "Tanh", ["h"], ["t"], name="tanh", descs=[f32(1, 3)])
    assert g.replace_all_uses("h", "t") == 1  # relu now reads t; tanh itself keeps reading h
    assert relu.inputs == ("t",)
    assert tanh.inputs == ("h",)
    g.verify()


def test_replace_all_uses_rewires_the_graph_output() -> None:
    g = mlp()
    g.add_node("Tanh", ["y"], ["t"], name="tanh", descs=[f32(1, 3)])
    assert g.replace_all_uses("y", "t") == 1  # the graph output; tanh keeps reading y
    assert g.outputs == ["t"]
    g.verify()


def test_replace_all_uses_refuses_a_producer_placed_after_the_users() -> None:
    g = mlp()
    g.add_node("Tanh", ["x"], ["t"], name="late", descs=[f32(1, 4)])  # appended after mm
    with pytest.raises(GraphEditError, match="after its user 'mm'"):
        g.replace_all_uses("x", "t")


def test_erase_refuses_a_node_with_users_and_names_them() -> None:
    g = mlp()
    with pytest.raises(GraphEditError, match=r"cannot erase node 'mm'.*read by \['relu'\]"):
        g.erase(g.node("mm"))
    with pytest.raises(GraphEditError, match="graph output"):
        g.erase(g.node("relu"))


def test_erase_after_bypass_keeps_graph_valid() -> None:
    g = mlp()
    g.replace_all_uses("y", "h")
    g.erase(g.node("relu"))
    g.verify(REGISTRY)
    assert g.outputs == ["h"]
    assert not g.has_node("relu")
    assert "y" not in g.descs


def test_duplicate_tensor_and_node_names_are_refused() -> None:
    g = mlp()
    with pytest.raises(GraphEditError, match="already defined"):
        g.add_node("Relu", ["x"], ["h"], name="other")
    with pytest.raises(GraphEditError, match="exists"):
        g.add_node("Relu", ["x"], ["z"], name="relu")
    with pytest.raises(GraphEditError, match="already defined"):
        g.add_constant("x", np.zeros(1, np.float32))


def test_constants_are_read_only_and_kept_apart_from_inputs() -> None:
    g = mlp()
    assert g.inputs == ["x"]
    assert list(g.constants) == ["w"]
    with pytest.raises(ValueError):
        g.constants["w"][0, 0] = 2.0


def test_verify_reports_every_problem_at_once() -> None:
    g = mlp()
    relu, mm = g.node("relu"), g.node("mm")
    g.reorder([relu, mm])  # relu now reads h before it is produced
    g.set_desc("w", f32(9, 9))  # desc disagrees with the array
    with pytest.raises(VerifyError) as info:
        g.verify(REGISTRY)
    problems = info.value.problems
    assert any("'relu' (Relu) reads 'h', which is produced later" in p for p in problems)
    assert any("constant 'w' holds shape [4, 3]" in p for p in problems)


def test_verify_checks_shapes_against_the_op_registry() -> None:
    g = mlp()
    g.set_desc("y", f32(1, 5))
    with pytest.raises(VerifyError, match=r"output 'y' is f32\[1,5\] but the operator infers f32\[1,3\]"):
        g.verify(REGISTRY)


def test_verify_checks_shapes_only_when_given_the_registry() -> None:
    """Without a shape checker only the structure is checked, whatever modules are imported."""
    g = mlp()
    g.set_desc("y", f32(1, 5))
    g.verify()
    seen: list[Graph] = []

    class Checker:  # any ShapeChecker will do
        def shape_problems(self, graph: Graph) -> list[str]:
            seen.append(graph)
            return ["a problem"]

    with pytest.raises(VerifyError, match="a problem"):
        g.verify(Checker())
    assert seen == [g]


def test_verify_reports_dangling_reads() -> None:
    g = mlp()
    g.add_node("Relu", ["nowhere"], ["z"], name="dangling", descs=[f32(1)])
    with pytest.raises(VerifyError, match="reads 'nowhere', which is never produced"):
        g.verify()


def test_copy_is_independent() -> None:
    g = mlp()
    c = g.copy()
    c.replace_all_uses("y", "h")
    c.erase(c.node("relu"))
    assert g.has_node("relu") and g.outputs == ["y"]
    g.verify(REGISTRY)
    c.verify(REGISTRY)
    assert c.constants["w"] is g.constants["w"]  # weights are shared, not copied


def test_json_dump_round_trips_through_json() -> None:
    import json

    g = mlp()
    data = json.loads(json.dumps(g.to_json()))
    assert [n["op_type"] for n in data["nodes"]] == ["MatMul", "Relu"]
    assert data["nodes"][0]["outputs"][0]["shape"] == [1, 3]
    assert data["constants"] == [{"name": "w", "shape": [4, 3], "dtype": "float32", "format": "ND"}]


def chain(n: int) -> Graph:
    g = Graph("chain")
    g.add_input("x0", f32(1, 16))
    for i in range(n):
        g.add_node("Relu", [f"x{i}"], [f"x{i + 1}"], name=f"n{i}", descs=[f32(1, 16)])
    g.set_outputs([f"x{n}"])
    return g


def test_rename_tensor_updates_producer_readers_outputs_and_desc() -> None:
    g = mlp()
    g.rename_tensor("h", "hidden")
    assert g.node("mm").outputs == ("hidden",) and g.node("relu").inputs == ("hidden",)
    g.rename_tensor("y", "out")
    assert g.outputs == ["out"] and g.desc("out") == f32(1, 3)
    g.verify(REGISTRY)
    with pytest.raises(GraphEditError, match="only node outputs"):
        g.rename_tensor("x", "z")


def test_fold_to_constants_keeps_tensor_names_for_readers() -> None:
    g = mlp()
    g.fold_to_constants(g.node("mm"), [np.full((1, 3), 4.0, np.float32)])
    assert g.is_constant("h") and g.producer("h") is None
    assert [u.name for u in g.users("h")] == ["relu"]
    g.verify(REGISTRY)


def test_order_keys_survive_many_inserts_at_one_spot() -> None:
    g = mlp()
    relu = g.node("relu")
    prev = "h"
    for i in range(200):  # more than float midpoints can split: forces a renumbering
        g.insert_before(relu, "Relu", [prev], [f"r{i}"], name=f"r{i}", descs=[f32(1, 3)])
        prev = f"r{i}"
    assert g.is_before(g.node("r0"), g.node("r199")) and g.is_before(g.node("r199"), relu)
    g.set_input(relu, 0, "r199")
    g.verify(REGISTRY)
