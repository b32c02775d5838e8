"""Small ONNX models built in memory for the app tests."""

from __future__ import annotations

from onnx import TensorProto, helper


def symbolic_model() -> bytes:
    """x: [batch, 4] -> Relu -> y: [batch, 4] (a symbolic batch dim, no spec of its own)."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "symbolic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def tiny_model(*, external: bool = False, doc: str = "") -> bytes:
    """x -> Add(x, w) -> Relu -> y; with `external`, w claims to live in a file next to the model."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    if external:
        w.ClearField("float_data")
        w.data_location = TensorProto.EXTERNAL
        w.external_data.add(key="location", value="../../etc/passwd")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["s"], name="add"), helper.make_node("Relu", ["s"], ["y"], name="relu")],
        "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], doc_string=doc)
    return model.SerializeToString()
