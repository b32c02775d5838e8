"""CsePass: identical nodes and identical constants are computed/stored once; random ops never merge."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ge_core.ir import Graph, TensorDesc
from ge_core.ops import REGISTRY, Category, OpDef
from ge_core.passes.cleanup.constant_folding import ConstantFoldingPass
from ge_core.passes.cleanup.cse import CsePass
from ge_core.passes.infra.base import PassResult
from ge_core.samples.registry import get_sample
from tests.passes.pass_helpers import F32, build, load, run_and_compare


def run_pass(g: Graph, *, numerics: bool = True) -> PassResult:
    return run_and_compare(CsePass(), g, numerics=numerics)[1]


def test_duplicate_nodes_and_constants_merge_into_the_first() -> None:
    g = build({"x": F32}, {"k1": np.full(4, 2.0, np.float32), "k2": np.full(4, 2.0, np.float32)},
              [("Tanh", ["x"], ["a"], {}), ("Tanh", ["x"], ["b"], {}),
               ("Mul", ["a", "k1"], ["am"], {}), ("Mul", ["b", "k2"], ["bm"], {}),
               ("Add", ["am", "bm"], ["y"], {})],
              ["y"])
    result = run_pass(g)
    assert result.notes == ("merged 2 duplicate node(s) and 1 duplicate constant(s)",)
    assert g.to_text() == (
        "graph g (%x: f32[2,4]) {\n"
        "  const %k1: f32[4]\n"
        "  %a = Tanh(%x) : f32[2,4]\n"
        "  %am = Mul(%a, %k1) : f32[2,4]\n"  # bm's Mul became a duplicate once b and k2 were merged
        "  %y = Add(%am, %am) : f32[2,4]\n"
        "  return %y\n"
        "}")
    assert not CsePass().run(g).changed


def test_nothing_to_merge_reports_unchanged() -> None:
    g = build({"x": F32}, {"k1": np.full(4, 2.0, np.float32), "k2": np.full(4, 3.0, np.float32)},
              [("Mul", ["x", "k1"], ["a"], {}), ("Mul", ["x", "k2"], ["b"], {}), ("Sub", ["a", "b"], ["c"], {}),
               ("Sub", ["b", "a"], ["d"], {}), ("Add", ["c", "d"], ["y"], {})],
              ["y"])
    result = run_pass(g)
    assert not result.changed and result.notes == ()  # Sub does not commute


def test_commutative_inputs_match_in_either_order() -> None:
    g = build({"x": F32, "z": F32}, {},
              [("Add", ["x", "z"], ["a"], {}), ("Add", ["z", "x"], ["b"], {}), ("Mul", ["a", "b"], ["y"], {})],
              ["y"])
    run_pass(g)
    assert [n.name for n in g.nodes] == ["a", "y"] and g.node("y").inputs == ("a", "a")


def test_attributes_must_match_canonically() -> None:
    ones = np.array([1.0], np.float32)
    g = build({"x": TensorDesc((4, 4), "float32")}, {"shape": np.array([4, 4], np.int64)},
              [("Softmax", ["x"], ["s0"], {"axis": 0}), ("Softmax", ["x"], ["s1"], {"axis": 1}),
               ("ConstantOfShape", ["shape"], ["c0"], {"value": ones}),
               ("ConstantOfShape", ["shape"], ["c1"], {"value": ones.copy()}),  # equal array, other object
               ("ConstantOfShape", ["shape"], ["c2"], {"value": np.array([1], np.int64)}),
               ("Add", ["s0", "s1"], ["a"], {}), ("Add", ["a", "c0"], ["b"], {}), ("Add", ["b", "c1"], ["y"], {})],
              ["y", "c2"])
    run_pass(g)
    assert [n.name for n in g.nodes] == ["s0", "s1", "c0", "c2", "a", "b", "y"]


def test_a_returned_duplicate_keeps_its_name() -> None:
    g = build({"x": F32}, {},
              [("Relu", ["x"], ["r"], {}), ("Exp", ["r"], ["e"], {}), ("Relu", ["x"], ["out"], {})],
              ["e", "out"])
    run_pass(g)
    assert g.to_text() == (
        "graph g (%x: f32[2,4]) {\n"
        "  %out = Relu(%x) : f32[2,4]  # r\n"  # the first Relu now produces the returned name
        "  %e = Exp(%out) : f32[2,4]\n"
        "  return %e, %out\n"
        "}")


def test_two_returned_duplicates_both_stay() -> None:
    g = build({"x": F32}, {}, [("Relu", ["x"], ["r1"], {}), ("Relu", ["x"], ["r2"], {})], ["r1", "r2"])
    assert not run_pass(g).changed


def test_a_returned_duplicate_constant_stays_but_loses_its_readers() -> None:
    g = build({"x": F32}, {"k1": np.ones(4, np.float32), "k2": np.ones(4, np.float32)},
              [("Add", ["x", "k1"], ["a"], {}), ("Add", ["x", "k2"], ["b"], {}), ("Mul", ["a", "b"], ["y"], {})],
              ["y", "k2"])
    run_pass(g)
    assert set(g.constants) == {"k1", "k2"} and [n.name for n in g.nodes] == ["a", "y"]
    assert not CsePass().run(g).changed


def test_constants_with_equal_bytes_but_another_dtype_or_shape_stay_apart() -> None:
    g = build({"x": TensorDesc((2, 2), "float32")},
              {"f": np.zeros((2, 2), np.float32), "i": np.zeros((2, 2), np.int32), "v": np.zeros(4, np.float32),
               "s": np.array([2, 2], np.int64)},
              [("Cast", ["i"], ["ic"], {"to": 1}), ("Reshape", ["v", "s"], ["vr"], {}), ("Add", ["x", "f"], ["a"], {}),
               ("Add", ["a", "ic"], ["b"], {}), ("Add", ["b", "vr"], ["y"], {})],
              ["y"])
    assert not run_pass(g).changed


def test_dropout_with_a_run_time_training_flag_is_not_merged() -> None:
    flag = TensorDesc((), "bool")
    g = build({"x": F32, "training": flag}, {"ratio": np.array(0.0, np.float32)},
              [("Dropout", ["x", "ratio", "training"], ["d1"], {}), ("Dropout", ["x", "ratio", "training"], ["d2"], {}),
               ("Add", ["d1", "d2"], ["y"], {})],
              ["y"])
    assert not run_pass(g, numerics=False).changed


def test_random_ops_and_control_sources_are_never_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    def infer(node: Any, operands: Any) -> list[TensorDesc]:
        return [operands[0].desc]

    def kernel(node: Any, inputs: Any) -> list[np.ndarray]:
        return [np.random.default_rng().random(inputs[0].shape).astype(inputs[0].dtype)]

    # a random op says so in its OpDef (deterministic=False, hence never foldable): CSE asks the registry
    monkeypatch.setitem(REGISTRY._ops, ("", "RandomUniformLike"),
                        OpDef("RandomUniformLike", Category.OPAQUE, infer, kernel, foldable=False,
                              deterministic=False))
    g = build({"x": F32}, {},
              [("RandomUniformLike", ["x"], ["r1"], {}), ("RandomUniformLike", ["x"], ["r2"], {}),
               ("Neg", ["x"], ["n1"], {}), ("Neg", ["x"], ["n2"], {}), ("Add", ["r1", "r2"], ["a"], {}),
               ("Add", ["n1", "n2"], ["b"], {}), ("Add", ["a", "b"], ["y"], {})],
              ["y"], a={"control_inputs": ["n2"]})
    assert not run_pass(g, numerics=False).changed


# ---- real models -------------------------------------------------------------------------------
def test_dead_branches_consts_computes_its_tanh_once() -> None:
    g = load("dead_branches_consts")
    result = run_pass(g)
    assert result.notes == ("merged 1 duplicate node(s) and 0 duplicate constant(s)",)
    assert not g.has_node("tanh_b") and g.node("tanh_sum").inputs == ("tanh_a", "tanh_a")


@pytest.mark.parametrize(("name", "nodes", "consts"), [("transformer_encoder", 0, 3), ("bert_encoder_torch", 0, 119),
                                                      ("ocr_rec_crnn_paddle", 0, 51)])
def test_exported_models_repeat_constants(name: str, nodes: int, consts: int) -> None:
    assert get_sample(name).path.exists(), f"sample {name} is missing: {get_sample(name).path}"  # committed or in onnx
    g = load(name)
    ConstantFoldingPass().run(g)  # the folded shape arithmetic is where the repeats show
    result = run_pass(g)
    assert result.notes == (f"merged {nodes} duplicate node(s) and {consts} duplicate constant(s)",)


def test_resnet50_has_no_duplicates() -> None:
    g = load("resnet50")
    text = g.to_text()
    assert not CsePass().run(g).changed and g.to_text() == text
