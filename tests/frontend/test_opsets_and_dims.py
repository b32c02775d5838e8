"""Old opsets are converted, unknown dims written as -1 / 0 / nothing are settable (issue 15)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge_core
from ge_core.errors import ModelError, UsageError
from ge_core.runtime import relative_error
from tests.cli.test_cli import run_cli

RNG = np.random.default_rng(0)


def _classifier(opset: int, dims: list[int | str]) -> onnx.ModelProto:
    """Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm -> Softmax, in the ops of an old opset (the same
    seeded weights on every call)."""
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    fc = numpy_helper.from_array(rng.standard_normal((5, 4)).astype(np.float32), "fc")
    bias = numpy_helper.from_array(rng.standard_normal(5).astype(np.float32), "bias")  # Gemm's C: required at opset 7
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
             helper.make_node("Flatten", ["p"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "fc", "bias"], ["g"], name="gemm", transB=1),
             helper.make_node("Softmax", ["g"], ["y"], name="softmax")]
    graph = helper.make_graph(nodes, "classifier", [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w, fc, bias])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


def _ort(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"x": x})[0])


def test_an_opset_7_model_is_converted_runs_and_matches_onnxruntime() -> None:
    model = _classifier(7, [1, 3, 8, 8])
    x = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
    result = ge_core.import_onnx(model.SerializeToString())
    assert result.ok, result.problems
    assert "converted from ai.onnx opset 7 to 13" in ge_core.summarize(result).to_text()
    compiled = ge_core.compile(result.graph, opt_level="O3")
    assert relative_error(compiled.run({"x": x})["y"], _ort(model, x)) < 1e-5


@pytest.mark.parametrize(("op", "words"), [("Affine", "'Affine' (node 'n1') is not an ONNX operator any more"),
                                           ("Scan", "op 'Scan': Unsupported conversion")])
def test_an_old_model_the_converter_cannot_take_is_refused_naming_the_op(op: str, words: str) -> None:
    node = helper.make_node(op, ["x"], ["y"], name="n1")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1 if op == "Affine" else 8)])
    with pytest.raises(ModelError, match="version_converter cannot convert") as info:
        ge_core.load_onnx(model.SerializeToString())
    assert words in str(info.value)


@pytest.mark.parametrize("unknown", [-1, 0, None], ids=["minus-one", "zero", "empty"])
def test_unknown_dims_are_set_with_input_shapes_like_symbolic_ones(unknown: int | None) -> None:
    model = _classifier(17, [1, 3, 8, 8])
    for axis in (0, 2, 3):
        dim = model.graph.input[0].type.tensor_type.shape.dim[axis]
        dim.Clear()
        if unknown is not None:
            dim.dim_value = unknown
    data = model.SerializeToString()
    result = ge_core.import_onnx(data)
    assert result.graph.input_dims_text("x") == ["?", "3", "?", "?"]
    graph = ge_core.load_onnx(data, "x:2,3,8,8")
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    oracle = _classifier(17, [-1, 3, -1, -1])  # ONNX Runtime reads a 0 dim as fixed: ask it about -1
    assert relative_error(ge_core.compile(graph, opt_level="O3").run({"x": x})["y"], _ort(oracle, x)) < 1e-5


def test_a_fixed_dim_still_cannot_be_overridden() -> None:
    model = _classifier(17, [-1, 3, -1, -1])
    with pytest.raises(UsageError, match="fixes it to 3"):
        ge_core.load_onnx(model.SerializeToString(), "x:1,4,8,8")


def test_the_cli_runs_a_model_with_minus_one_dims(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "paddle_like.onnx"
    path.write_bytes(_classifier(17, [-1, 3, -1, -1]).SerializeToString())
    code, out, err = run_cli(["run", str(path), "--input-shape", "x:1,3,16,16", "--opt-level", "O3"], capsys)
    assert code == 0, err
    assert "y: float32[1, 5]" in out
