"""The legality check reports attribute and declared-type problems up front, with every other problem
(issue 12): nothing that `inspect` passes may fail later in a kernel or a pass."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge_core
from ge_core.errors import ModelError
from tests.cli.test_cli import run_cli


def _batchnorm(**attrs: object) -> onnx.ModelProto:
    params = [numpy_helper.from_array(np.ones(3, np.float32), n) for n in ("scale", "bias", "mean", "var")]
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2, 2])], params)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def _relu_declared(elem_type: int) -> bytes:
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    graph.output[0].type.tensor_type.elem_type = elem_type
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_an_attribute_of_the_wrong_type_is_refused_by_inspect(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bn.onnx"
    path.write_bytes(_batchnorm(epsilon=[1e-5, 1e-5]).SerializeToString())
    code, _, err = run_cli(["inspect", str(path)], capsys)
    assert code == 3 and "attribute 'epsilon' is FLOATS, but BatchNormalization expects FLOAT" in err
    assert "node 'bn'" in err and "Traceback" not in err


def test_an_unknown_attribute_is_a_problem_listing_the_known_ones() -> None:
    with pytest.raises(ModelError, match=r"unknown attribute 'epsilom'.*takes: epsilon, momentum, training_mode"):
        ge_core.load_onnx(_batchnorm(epsilom=1e-5).SerializeToString())


def test_a_missing_required_attribute_is_a_problem() -> None:
    node = helper.make_node("Cast", ["x"], ["y"], name="cast")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ModelError, match=r"node 'cast' \(Cast\) lacks its required attribute 'to'"):
        ge_core.load_onnx(model.SerializeToString())


@pytest.mark.parametrize(("elem_type", "words"), [
    (99, "declares element type 99, which is not an ONNX data type"),
    (TensorProto.BOOL, "is declared BOOL, but the graph computes float32"),
    (TensorProto.BFLOAT16, "is declared BFLOAT16"),
    (TensorProto.COMPLEX128, "is declared COMPLEX128"),
])
def test_a_declared_output_type_that_contradicts_the_graph_is_a_problem(elem_type: int, words: str) -> None:
    with pytest.raises(ModelError) as info:
        ge_core.load_onnx(_relu_declared(elem_type))
    assert words in str(info.value) and "graph output 'y'" in str(info.value)


def test_a_declared_output_type_that_matches_is_fine() -> None:
    assert ge_core.load_onnx(_relu_declared(TensorProto.FLOAT)).outputs == ["y"]


def test_an_input_of_no_known_type_passed_through_an_op_is_a_problem_not_a_crash() -> None:
    """Found by the fuzzer (seed 1876): an input declared with element type 99 reached a static-shape
    output through Unsqueeze, and sizing that output raised TypeError (exit 1)."""
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    node = helper.make_node("Unsqueeze", ["mask", "axes"], ["y"], name="unsq")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [axes])
    graph.input[0].type.tensor_type.elem_type = 99
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ModelError, match=r"output 'y' has no known element type"):
        ge_core.load_onnx(model.SerializeToString())
