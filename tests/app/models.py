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


def text_line_model() -> bytes:
    """A text-line recognizer's start, as PP-OCR's: x: [batch, 3, 32, width] -> AveragePool 3x3 (no pad): a
    width of 1 is refused ("kernel 3 larger than padded input 1")."""
    graph = helper.make_graph(
        [helper.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[3, 3])], "text_line",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 32, "width"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3, 30, None])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def audio_frames_model() -> bytes:
    """A voice-activity detector's start, as Silero VAD's: samples [batch, samples, 1], reflect-padded by 64,
    then an STFT of frame 256: fewer than 192 samples are refused ("kernel 256 larger than 65" at 1)."""
    frame = helper.make_tensor("frame", TensorProto.INT64, [], [256])
    step = helper.make_tensor("step", TensorProto.INT64, [], [128])
    pads = helper.make_tensor("pads", TensorProto.INT64, [6], [0, 64, 0, 0, 0, 0])
    nodes = [helper.make_node("Pad", ["x", "pads"], ["padded"], name="pad", mode="reflect"),
             helper.make_node("STFT", ["padded", "step", "", "frame"], ["y"], name="stft", onesided=1)]
    graph = helper.make_graph(
        nodes, "audio_frames", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "samples", 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[frame, step, pads])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
