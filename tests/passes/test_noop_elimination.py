"""NoOpEliminationPass: nodes that hand their input on unchanged go; near misses and the interface stay."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from ge_core.ir import Graph, TensorDesc
from ge_core.passes.cleanup.constant_folding import ConstantFoldingPass
from ge_core.passes.cleanup.noop_elimination import NoOpEliminationPass
from ge_core.passes.infra.base import PassResult
from ge_core.samples.registry import get_sample
from tests.passes.pass_helpers import F32, NodeSpec, build, load, run_and_compare

I64 = np.int64
BIG = np.iinfo(np.int64).max


def run_pass(g: Graph, *, numerics: bool = True) -> PassResult:
    return run_and_compare(NoOpEliminationPass(), g, numerics=numerics)[1]


def survivors(g: Graph) -> list[str]:
    return [n.name for n in g.nodes]


def one_op(op: str, inputs: Sequence[str], consts: dict[str, np.ndarray], attrs: dict[str, Any] | None = None,
           x: TensorDesc = F32, **kw: Any) -> Graph:
    """x -> Relu -> op(...) -> Neg -> y: the op under test sits between two ordinary nodes."""
    return build({"x": x}, consts,
                 [("Relu", ["x"], ["r"], {}), (op, ["r", *inputs], ["t"], attrs or {}), ("Neg", ["t"], ["y"], {})],
                 ["y"], **kw)


def test_a_chain_of_no_ops_disappears() -> None:
    g = build({"x": F32}, {"ratio": np.array(0.1, np.float32), "no": np.array(False)},
              [("Relu", ["x"], ["r"], {}),
               ("Identity", ["r"], ["i"], {}),
               ("Dropout", ["i", "ratio", "no"], ["d"], {}),
               ("Cast", ["d"], ["c"], {"to": 1}),
               ("Transpose", ["c"], ["t"], {"perm": [0, 1]}),
               ("Neg", ["t"], ["y"], {})],
              ["y"])
    result = run_pass(g)
    assert result.notes == ("removed 4 no-op node(s): Cast x1, Dropout x1, Identity x1, Transpose x1",)
    assert g.to_text() == (
        "graph g (%x: f32[2,4]) {\n"
        "  const %ratio: f32[]\n"
        "  const %no: bool[]\n"
        "  %r = Relu(%x) : f32[2,4]\n"
        "  %y = Neg(%r) : f32[2,4]\n"
        "  return %y\n"
        "}")
    assert not NoOpEliminationPass().run(g).changed


def test_a_returned_no_op_keeps_the_returned_name() -> None:
    g = build({"x": F32}, {}, [("Relu", ["x"], ["r"], {}), ("Identity", ["r"], ["y"], {})], ["y"])
    run_pass(g)
    assert g.to_text() == (
        "graph g (%x: f32[2,4]) {\n"
        "  %y = Relu(%x) : f32[2,4]  # r\n"
        "  return %y\n"
        "}")


def test_no_ops_on_the_interface_stay() -> None:
    g = build({"x": F32}, {}, [("Identity", ["x"], ["y"], {}), ("Relu", ["x"], ["r"], {}),
                               ("Identity", ["r"], ["y2"], {})], ["y", "y2", "r"])
    assert not run_pass(g).changed  # input->output, and an output copying another output


def test_nothing_to_remove_reports_unchanged() -> None:
    g = one_op("Transpose", [], {}, {"perm": [1, 0]})
    result = run_pass(g)
    assert not result.changed and result.notes == ()


@pytest.mark.parametrize(("inputs", "consts", "kw", "removed"), [
    ([], {}, {}, True),  # opset 21 without ratio/training_mode
    (["", "on"], {"on": np.array(False)}, {}, True),  # training_mode = constant False
    (["zero", "on"], {"zero": np.array(0.0, np.float32), "on": np.array(True)}, {}, False),  # training_mode on
    ([], {}, {"outputs": 2}, True),  # a mask nobody reads
    ([], {}, {"outputs": 2, "read_mask": True}, False),  # a mask that is read
])
def test_dropout_goes_only_in_inference_with_an_unread_mask(inputs: list[str], consts: dict[str, np.ndarray],
                                                            kw: dict[str, Any], removed: bool) -> None:
    outs = ["t", "mask"] if kw.get("outputs") == 2 else ["t"]
    extra: list[NodeSpec] = [("Not", ["mask"], ["nm"], {})] if kw.get("read_mask") else []
    g = build({"x": F32}, consts,
              [("Relu", ["x"], ["r"], {}), ("Dropout", ["r", *inputs], outs, {}), ("Neg", ["t"], ["y"], {}), *extra],
              ["y", *(["nm"] if extra else [])])
    assert run_pass(g, numerics=removed).changed == removed


def test_dropout_with_a_run_time_training_flag_stays() -> None:
    g = build({"x": F32, "training": TensorDesc((), "bool")}, {},
              [("Dropout", ["x", "", "training"], ["t"], {}), ("Neg", ["t"], ["y"], {})], ["y"])
    assert not run_pass(g, numerics=False).changed


@pytest.mark.parametrize(("op", "inputs", "consts", "attrs", "removed"), [
    ("Reshape", ["s"], {"s": np.array([2, 4], I64)}, {}, True),
    ("Reshape", ["s"], {"s": np.array([4, 2], I64)}, {}, False),
    ("Flatten", [], {}, {"axis": 1}, True),
    ("Flatten", [], {}, {"axis": 0}, False),
    ("Squeeze", [], {}, {}, True),  # no size-1 dim to drop
    ("Expand", ["s"], {"s": np.array([1, 4], I64)}, {}, True),
    ("Expand", ["s"], {"s": np.array([3, 2, 4], I64)}, {}, False),
    ("Cast", [], {}, {"to": 1}, True),
    ("Cast", [], {}, {"to": 10}, False),
    ("CastLike", ["like"], {"like": np.zeros(1, np.float32)}, {}, True),
    ("Transpose", [], {}, {"perm": [0, 1]}, True),
    ("Transpose", [], {}, {}, False),  # no perm: reversed axes
    ("Pad", ["p"], {"p": np.zeros(4, I64)}, {}, True),
    ("Pad", ["p"], {"p": np.zeros(4, I64)}, {"mode": "reflect"}, True),
    ("Pad", ["p"], {"p": np.array([0, 1, 0, 0], I64)}, {}, False),
    ("Slice", ["b", "e"], {"b": np.array([0], I64), "e": np.array([BIG], I64)}, {}, True),
    ("Slice", ["b", "e", "a", "st"], {"b": np.array([-9, 0], I64), "e": np.array([9, 4], I64),
                                      "a": np.array([0, 1], I64), "st": np.array([1, 1], I64)}, {}, True),
    ("Slice", ["b", "e", "a", "st"], {"b": np.array([-1], I64), "e": np.array([-BIG], I64),
                                      "a": np.array([1], I64), "st": np.array([-1], I64)}, {}, False),  # reversed
    ("Slice", ["b", "e"], {"b": np.array([1], I64), "e": np.array([BIG], I64)}, {}, False),
    ("Concat", [], {}, {"axis": 0}, True),
    ("Concat", ["r"], {}, {"axis": 0}, False),
    ("Sum", [], {}, {}, True),
    ("Max", [], {}, {}, True),
    ("Min", [], {}, {}, True),
    ("Mean", [], {}, {}, True),
    ("Mean", ["r"], {}, {}, False),
    ("Split", ["sp"], {"sp": np.array([4], I64)}, {"axis": 1}, True),
    ("Mul", ["one"], {"one": np.ones(4, np.float32)}, {}, True),
    ("Mul", ["one"], {"one": np.ones((3, 2, 4), np.float32)}, {}, False),  # broadcasting grows x
    ("Mul", ["two"], {"two": np.full(4, 2.0, np.float32)}, {}, False),
    ("Div", ["one"], {"one": np.ones((1, 4), np.float32)}, {}, True),
    ("Add", ["zero"], {"zero": np.zeros((2, 1), np.float32)}, {}, True),
    ("Sub", ["zero"], {"zero": np.array(0.0, np.float32)}, {}, True),
])
def test_each_rule_fires_on_its_no_op_and_not_on_its_near_miss(op: str, inputs: list[str], consts: dict[str, Any],
                                                               attrs: dict[str, Any], removed: bool) -> None:
    g = one_op(op, inputs, consts, attrs)
    assert run_pass(g).changed == removed
    assert survivors(g) == (["r", "y"] if removed else ["r", "t", "y"])


def test_a_neutral_constant_must_be_on_the_right_side_of_sub_and_div() -> None:
    g = build({"x": F32}, {"one": np.ones(4, np.float32), "zero": np.zeros(4, np.float32)},
              [("Div", ["one", "x"], ["d"], {}), ("Sub", ["zero", "x"], ["s"], {}), ("Mul", ["one", "x"], ["m"], {}),
               ("Add", ["d", "s"], ["a"], {}), ("Add", ["a", "m"], ["y"], {})],
              ["y"])
    run_pass(g)
    assert survivors(g) == ["d", "s", "a", "y"]  # 1/x and 0-x are not x; 1*x is
    assert g.node("y").inputs == ("a", "x")


def test_neutral_broadcasts_against_unknown_dims() -> None:
    x = TensorDesc((-1, 4), "float32")
    g = build({"x": x}, {"row": np.ones((1, 4), np.float32)}, [("Mul", ["x", "row"], ["y1"], {}),
                                                              ("Neg", ["y1"], ["y"], {})], ["y"])
    assert run_pass(g, numerics=False).changed  # [1,4] against [?,4] adds nothing
    col = TensorDesc((-1, 1), "float32")
    g = build({"x": col}, {"row": np.ones((1, 4), np.float32)}, [("Mul", ["x", "row"], ["y1"], {}),
                                                                ("Neg", ["y1"], ["y"], {})], ["y"])
    assert not run_pass(g, numerics=False).changed  # [?,1] * [1,4] is [?,4]


def test_reshape_with_an_unknown_dim_stays() -> None:
    x = TensorDesc((-1, 4), "float32")
    g = one_op("Reshape", ["s"], {"s": np.array([-1, 4], I64)}, x=x)
    assert not run_pass(g, numerics=False).changed


@pytest.mark.parametrize(("scales", "attrs", "removed"), [
    ([1.0, 1.0, 1.0, 1.0], {"mode": "linear"}, True),
    ([1.0, 1.0, 1.0, 1.0], {"mode": "cubic", "exclude_outside": 1}, True),
    ([1.0, 1.0, 1.0, 1.0], {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"}, True),
    ([1.0, 1.0, 1.0, 1.0], {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, True),
    ([1.0, 1.0, 1.0, 1.0], {"mode": "nearest", "coordinate_transformation_mode": "align_corners"}, True),
    ([1.0, 1.0, 1.0, 1.0], {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                            "nearest_mode": "ceil"}, True),
    ([1.0, 1.0, 1.1, 1.1], {"mode": "linear"}, False),  # same shape (floor(4*1.1) = 4), moved samples
    ([1.0, 1.0, 1.0, 1.0], {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize"}, False),
])
def test_resize_to_the_same_size_goes_only_at_scale_one(scales: list[float], attrs: dict[str, Any],
                                                       removed: bool) -> None:
    x = TensorDesc((1, 2, 4, 4), "float32")
    roi = np.array([0, 0, 0.25, 0.25, 1, 1, 0.75, 0.75], np.float32)  # read by tf_crop_and_resize only
    g = one_op("Resize", ["roi", "sc"], {"roi": roi, "sc": np.array(scales, np.float32)}, attrs, x=x)
    assert run_pass(g).changed == removed


def test_resize_by_sizes_equal_to_the_input_goes() -> None:
    x = TensorDesc((1, 2, 4, 4), "float32")
    g = one_op("Resize", ["", "", "sz"], {"sz": np.array([1, 2, 4, 4], I64)}, {"mode": "linear"}, x=x)
    assert run_pass(g).changed


def test_a_node_with_control_edges_stays() -> None:
    g = build({"x": F32}, {}, [("Relu", ["x"], ["r"], {}), ("Identity", ["r"], ["i"], {}),
                               ("Identity", ["r"], ["j"], {}), ("Add", ["i", "j"], ["y"], {})],
              ["y"], j={"control_inputs": ["i"]})
    assert not run_pass(g).changed


# ---- real models -------------------------------------------------------------------------------
def test_dead_branches_consts_loses_identity_dropout_and_cast() -> None:
    g = load("dead_branches_consts")
    result = run_pass(g)
    assert result.notes == ("removed 3 no-op node(s): Cast x1, Dropout x1, Identity x1",)
    assert g.node("relu").inputs == ("conv.shift",) and g.node("add_folded_bias").input(0) == "to_nchw"


@pytest.mark.parametrize(("name", "removed"), [("ocr_det_db_paddle", 39), ("bert_encoder_torch", 2),
                                               ("squeezenet", 1), ("transformer_encoder", 0), ("resnet50", 0)])
def test_real_models(name: str, removed: int) -> None:
    assert get_sample(name).path.exists(), f"sample {name} is missing: {get_sample(name).path}"  # committed or in onnx
    g = load(name)
    ConstantFoldingPass().run(g)  # folding settles the shapes some no-ops are recognised by
    count = len(g)
    run_pass(g, numerics=name != "resnet50")  # resnet50: nothing removed, the text check covers it
    assert count - len(g) == removed
