"""ConstantFoldingPass: constant-only nodes become constants under the same names, within a size cap."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import ge_core
from ge_core.ir import Graph, TensorDesc
from ge_core.ops import REGISTRY, Category, OpDef
from ge_core.passes.cleanup.constant_folding import ConstantFoldingPass
from ge_core.samples.registry import get_sample
from tests.passes.pass_helpers import F32, build, load, run_and_compare


def run_pass(g: Graph, p: ConstantFoldingPass | None = None) -> tuple[Graph, Any]:
    """Run the pass on `g` (in place); returns the graph from before and the result; checks the contract."""
    return run_and_compare(p or ConstantFoldingPass(), g, interface=False)


def scale_chain() -> Graph:
    return build(
        {"x": F32},
        {"k1": np.arange(4, dtype=np.float32), "k2": np.ones(4, np.float32), "half": np.array(0.5, np.float32),
         "shape": np.array([1, 4], np.int64)},
        [("Add", ["k1", "k2"], ["k.add"], {}),
         ("Mul", ["k.add", "half"], ["k.mul"], {}),
         ("Reshape", ["k.mul", "shape"], ["k.row"], {}),
         ("Add", ["x", "k.row"], ["y"], {})],
        ["y"])


def test_a_constant_chain_folds_into_one_constant_per_tensor() -> None:
    g = scale_chain()
    _, result = run_pass(g)
    assert result.changed
    assert result.notes == ("folded 3 node(s) into constants (48 B of constants created)",)
    assert g.to_text() == (
        "graph g (%x: f32[2,4]) {\n"
        "  const %k1: f32[4]\n"
        "  const %k2: f32[4]\n"
        "  const %half: f32[]\n"
        "  const %shape: i64[2]\n"
        "  const %k.add: f32[4]\n"
        "  const %k.mul: f32[4]\n"
        "  const %k.row: f32[1,4]\n"
        "  %y = Add(%x, %k.row) : f32[2,4]\n"
        "  return %y\n"
        "}")  # the now-unused k1, k2, k.add... are PrunePass's to remove
    np.testing.assert_array_equal(g.constants["k.row"], [[0.5, 1.0, 1.5, 2.0]])
    assert not g.constants["k.row"].flags.writeable


def test_nothing_to_fold_reports_unchanged_and_leaves_the_text() -> None:
    g = build({"x": F32}, {"w": np.ones((4, 3), np.float32)},
              [("MatMul", ["x", "w"], ["h"], {}), ("Relu", ["h"], ["y"], {})], ["y"])
    _, result = run_pass(g)
    assert not result.changed and result.notes == ()


def test_shape_and_size_of_a_static_activation_fold_from_its_desc() -> None:
    g = build({"x": F32}, {},
              [("Relu", ["x"], ["r"], {}), ("Shape", ["r"], ["s"], {}), ("Size", ["r"], ["n"], {}),
               ("Reshape", ["r", "s"], ["y"], {})],
              ["y", "n"])
    run_pass(g)
    assert g.to_text() == (
        "graph g (%x: f32[2,4]) {\n"
        "  const %s: i64[2]\n"
        "  const %n: i64[]\n"
        "  %r = Relu(%x) : f32[2,4]\n"
        "  %y = Reshape(%r, %s) : f32[2,4]\n"
        "  return %y, %n\n"
        "}")  # n is a graph output: folded, its name kept
    assert g.constants["s"].tolist() == [2, 4] and int(g.constants["n"]) == 8


def test_shape_of_a_dynamic_activation_stays() -> None:
    g = build({"x": TensorDesc((-1, 4), "float32")}, {}, [("Shape", ["x"], ["s"], {})], ["s"])
    result = ConstantFoldingPass().run(g)
    assert not result.changed and g.producer("s") is not None


def test_shape_with_start_end_folds_the_static_part_even_when_another_dim_is_unknown() -> None:
    g = build({"x": TensorDesc((-1, 4, 5), "float32")}, {}, [("Shape", ["x"], ["s"], {"start": 1})], ["s"])
    assert ConstantFoldingPass().run(g).changed
    assert g.constants["s"].tolist() == [4, 5]
    g.verify(REGISTRY)


def test_makers_fold_within_the_cap_and_stay_above_it() -> None:
    g = build({"x": TensorDesc((8, 8), "float32")},
              {"shape": np.array([8, 8], np.int64), "big": np.array([2048, 1024], np.int64),
               "start": np.array(0, np.int64), "limit": np.array(8, np.int64), "delta": np.array(1, np.int64),
               "row": np.ones((1, 8), np.float32)},
              [("ConstantOfShape", ["shape"], ["ones"], {"value": np.array([1.0], np.float32)}),
               ("Range", ["start", "limit", "delta"], ["r"], {}),
               ("Expand", ["row", "shape"], ["e"], {}),
               ("ConstantOfShape", ["big"], ["huge"], {}),
               ("Add", ["x", "ones"], ["a"], {}), ("Add", ["a", "e"], ["y"], {})],
              ["y", "r", "huge"])
    _, result = run_pass(g)
    assert result.notes == ("folded 3 node(s) into constants (576 B of constants created)",)
    assert {"ones", "r", "e"} <= set(g.constants) and g.producer("huge") is not None  # 2M elements > 1M cap
    small = build({}, {"shape": np.array([8, 8], np.int64)}, [("ConstantOfShape", ["shape"], ["z"], {})], ["z"])
    assert not ConstantFoldingPass(max_elements=63).run(small).changed
    assert ConstantFoldingPass(max_elements=64).run(small).changed


def test_a_node_reading_an_activation_stays() -> None:
    g = build({"x": F32}, {"k": np.ones(4, np.float32)}, [("Add", ["x", "k"], ["y"], {})], ["y"])
    _, result = run_pass(g)
    assert not result.changed


def test_a_node_with_a_control_edge_or_one_others_wait_for_stays() -> None:
    g = build({"x": F32}, {"k": np.ones(4, np.float32)},
              [("Neg", ["k"], ["a"], {}), ("Neg", ["k"], ["b"], {}), ("Add", ["x", "a"], ["c"], {}),
               ("Add", ["c", "b"], ["y"], {})],
              ["y"], b={"control_inputs": ["a"]})
    _, result = run_pass(g)
    assert not result.changed  # a is waited for by b; b waits for a


def test_an_unknown_op_and_a_non_foldable_op_stay(monkeypatch: pytest.MonkeyPatch) -> None:
    add = REGISTRY.get("Add")
    assert add is not None
    monkeypatch.setitem(REGISTRY._ops, ("", "Add"), dataclasses.replace(add, foldable=False))
    g = build({"x": F32}, {"k": np.ones(4, np.float32)},
              [("Add", ["k", "k"], ["k2"], {}), ("Add", ["x", "k2"], ["y"], {})], ["y"])
    assert not ConstantFoldingPass().run(g).changed
    g.add_node("com.example.Fancy", ["k"], ["z"], name="z", descs=[TensorDesc((4,), "float32")])
    assert not ConstantFoldingPass().run(g).changed


def _fake_op(monkeypatch: pytest.MonkeyPatch, op_type: str, kernel: Any) -> None:
    def infer(node: Any, operands: Any) -> list[TensorDesc]:
        return [operands[0].desc]

    monkeypatch.setitem(REGISTRY._ops, ("", op_type), OpDef(op_type, Category.OPAQUE, infer, kernel))


def test_a_kernel_failure_leaves_the_node_for_the_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(node: Any, inputs: Any) -> list[np.ndarray]:
        raise ValueError("boom")

    _fake_op(monkeypatch, "TestBoom", boom)
    g = build({}, {"k": np.ones(4, np.float32)}, [("TestBoom", ["k"], ["y"], {})], ["y"])
    assert not ConstantFoldingPass().run(g).changed
    with pytest.raises(ge_core.errors.ExecutionError, match="boom"):
        ge_core.execute(g, {})


def test_a_value_unlike_its_desc_is_not_folded(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_op(monkeypatch, "TestWiden", lambda node, inputs: [inputs[0].astype(np.float64)])
    g = build({}, {"k": np.ones(4, np.float32)}, [("TestWiden", ["k"], ["y"], {})], ["y"])
    assert not ConstantFoldingPass().run(g).changed  # readers were inferred for f32, not f64


def test_a_folded_graph_output_keeps_its_name() -> None:
    g = build({"x": F32}, {"k": np.full(4, 2.0, np.float32)},
              [("Relu", ["x"], ["y"], {}), ("Sqrt", ["k"], ["root"], {})], ["y", "root"])
    run_pass(g)
    assert g.outputs == ["y", "root"] and "root" in g.constants


# ---- real models -------------------------------------------------------------------------------
def test_dead_branches_consts_folds_its_constant_chains() -> None:
    g = load("dead_branches_consts")
    assert len(g) == 24
    run_pass(g)
    assert len(g) == 19
    assert {"k.add", "k.mul", "k.reshape", "flat2.shape", "relu.shape"} <= set(g.constants)


@pytest.mark.parametrize(("name", "folded"), [("transformer_encoder", 7), ("bert_encoder_torch", 74),
                                              ("bert_encoder_torch_dynamo", 24), ("conv_bn_relu", 0)])
def test_real_models_fold_their_shape_arithmetic(name: str, folded: int) -> None:
    assert get_sample(name).path.exists(), f"sample {name} is missing: {get_sample(name).path}"  # committed or in onnx
    g = load(name)
    count = len(g)
    _, result = run_pass(g)
    assert count - len(g) == folded and result.changed == bool(folded)
    assert not ConstantFoldingPass().run(g).changed  # a second run finds nothing left


def test_resnet50_has_nothing_to_fold() -> None:
    g = load("resnet50")
    text = g.to_text()
    assert not ConstantFoldingPass().run(g).changed and g.to_text() == text
