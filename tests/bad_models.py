"""Malformed and hostile models, each with the words its refusal must contain.

Shared by the frontend tests (load_onnx raises) and the CLI tests (exit 3, message, no traceback).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


@dataclass(frozen=True)
class BadModel:
    name: str
    data: bytes
    expect: tuple[str, ...]  # substrings the refusal must contain (node / tensor names, the problem)


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           initializers: list[TensorProto] | None = None, opset: int = 17) -> bytes:
    graph = helper.make_graph(nodes, "bad", inputs, outputs, initializer=initializers or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return model.SerializeToString()


def vi(name: str, shape: list[int | str] | None, dtype: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def external_tensor(name: str, data_type: int, dims: list[int], location: str, **extra: str) -> TensorProto:
    """A tensor with no data of its own: it says its data lives in `location` (plus `extra` entries)."""
    tensor = TensorProto(name=name, data_type=data_type, dims=dims)
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in {"location": location, **extra}.items():
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def good_relu() -> bytes:
    return _model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", [1, 4])], [vi("y", [1, 4])])


def unknown_ops() -> bytes:
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("FancyOp", ["a"], ["b"], name="fancy_1", domain="com.example"),
             helper.make_node("NonMaxSuppression", ["x", "x"], ["c"], name="nms_7"),
             helper.make_node("Add", ["b", "c"], ["y"], name="add")]
    model = helper.make_model(helper.make_graph(nodes, "bad", [vi("x", [1, 4])], [vi("y", None)]),
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    return model.SerializeToString()


def cycle() -> bytes:
    nodes = [helper.make_node("Relu", ["x_plus"], ["a"], name="loop_a"),
             helper.make_node("Add", ["a", "x"], ["x_plus"], name="loop_b"),
             helper.make_node("Relu", ["a"], ["y"], name="out")]
    return _model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])])


def missing_input() -> bytes:
    nodes = [helper.make_node("Add", ["x", "ghost_tensor"], ["y"], name="needs_ghost")]
    return _model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])])


def duplicate_outputs() -> bytes:
    nodes = [helper.make_node("Relu", ["x"], ["t"], name="first_writer"),
             helper.make_node("Sigmoid", ["x"], ["t"], name="second_writer"),
             helper.make_node("Relu", ["t"], ["y"], name="out")]
    return _model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])])


def negative_dim() -> bytes:
    return _model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", [1, -5])], [vi("y", None)])


def softmax_bad_axis() -> bytes:
    nodes = [helper.make_node("Softmax", ["x"], ["y"], name="softmax_axis5", axis=5)]
    return _model(nodes, [vi("x", [2, 8])], [vi("y", [2, 8])])


def raw_data_wrong_size() -> bytes:
    w = TensorProto(name="w_short", data_type=TensorProto.FLOAT, dims=[4, 4], raw_data=b"\x00" * 12)  # needs 64
    nodes = [helper.make_node("MatMul", ["x", "w_short"], ["y"], name="mm")]
    return _model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])], [w])


def matmul_mismatch() -> bytes:
    w = numpy_helper.from_array(np.ones((5, 6), np.float32), "w56")
    nodes = [helper.make_node("MatMul", ["x", "w56"], ["y"], name="bad_matmul")]
    return _model(nodes, [vi("x", [3, 4])], [vi("y", None)], [w])


def huge_constant_of_shape() -> bytes:
    shape = numpy_helper.from_array(np.array([100000, 100000, 64], np.int64), "huge_shape")
    nodes = [helper.make_node("ConstantOfShape", ["huge_shape"], ["huge"], name="make_huge"),
             helper.make_node("Add", ["huge", "x"], ["y"], name="add")]
    return _model(nodes, [vi("x", [1])], [vi("y", None)], [shape])


def huge_initializer_dims() -> bytes:
    # Dims claim 2^62 elements while holding none: must be refused before decoding.
    w = TensorProto(name="w_lies", data_type=TensorProto.FLOAT, dims=[1 << 31, 1 << 31])
    nodes = [helper.make_node("Add", ["x", "w_lies"], ["y"], name="add")]
    return _model(nodes, [vi("x", [1])], [vi("y", None)], [w])


def external_initializer(location: str = "weights.bin") -> bytes:
    w = external_tensor("w_ext", TensorProto.FLOAT, [2, 2], location, offset="0", length="16")
    nodes = [helper.make_node("Add", ["x", "w_ext"], ["y"], name="add")]
    return _model(nodes, [vi("x", [2, 2])], [vi("y", [2, 2])], [w])


def external_in_constant_attribute() -> bytes:
    value = external_tensor("c_ext", TensorProto.FLOAT, [2], "/etc/passwd")
    nodes = [helper.make_node("Constant", [], ["c"], name="const_ext", value=value),
             helper.make_node("Add", ["x", "c"], ["y"], name="add")]
    return _model(nodes, [vi("x", [2])], [vi("y", [2])])


def valid_bytes() -> bytes:
    return good_relu()


BAD_MODELS: list[Callable[[], BadModel]] = [
    lambda: BadModel("empty", b"", ("empty",)),
    lambda: BadModel("truncated", valid_bytes()[:-7], ("not a valid ONNX model", "truncated")),
    lambda: BadModel("random", np.random.default_rng(0).bytes(4096), ("ONNX",)),
    lambda: BadModel("unknown_ops", unknown_ops(), ("com.example::FancyOp", "fancy_1", "NonMaxSuppression", "nms_7")),
    lambda: BadModel("cycle", cycle(), ("cycle", "loop_a", "loop_b")),
    lambda: BadModel("missing_input", missing_input(), ("needs_ghost", "ghost_tensor")),
    lambda: BadModel("duplicate_outputs", duplicate_outputs(), ("'t'", "first_writer", "second_writer")),
    lambda: BadModel("negative_dim", negative_dim(), ("'x'", "negative")),
    lambda: BadModel("softmax_bad_axis", softmax_bad_axis(), ("softmax_axis5", "axis")),
    lambda: BadModel("raw_data_wrong_size", raw_data_wrong_size(), ("w_short", "12 bytes", "64")),
    lambda: BadModel("matmul_mismatch", matmul_mismatch(), ("bad_matmul", "[3,4]", "[5,6]")),
    lambda: BadModel("huge_constant_of_shape", huge_constant_of_shape(), ("make_huge", "limit")),
    lambda: BadModel("huge_initializer_dims", huge_initializer_dims(), ("w_lies", "limit")),
    lambda: BadModel("external_initializer_upload", external_initializer(), ("w_ext", "external")),
    lambda: BadModel("external_constant_upload", external_in_constant_attribute(), ("c_ext", "external")),
]


def bad_models() -> list[BadModel]:
    return [make() for make in BAD_MODELS]
