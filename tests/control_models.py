"""Small ONNX models with control flow, built with onnx.helper, for the tests that compare with ONNX Runtime.

- `vad_if`: a voice-activity-style model. An If on a runtime condition (the frame's energy over a
  threshold) chooses between a small speech subnetwork (MatMul, Add, Relu, MatMul, Sigmoid) and a cheap
  silence one; both branches capture the frame and the outer weights.
- `loop_rnn`: a Loop with a constant trip count, a carried hidden state and a scan output of every state;
  the body gathers frame i of an outer tensor (captured) and holds an If of its own that reads an outer
  weight two scopes up (nested captures).
- `scan_rnn`: a Scan RNN-like cell over a sequence (scan input axis 0, or 1; reverse direction optional).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
OPSET = 17
HIDDEN, FEATURES, FRAMES = 8, 6, 5


def _weights(seed: int, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * 0.5).astype(np.float32) for s in shapes]


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model, full_check=True)
    return model


def vad_if() -> onnx.ModelProto:
    """x [1, FEATURES] -> If(mean(x^2) > 0.5): speech head, else silence head -> score [1, 1], then + bias."""
    w1, b1, w2 = _weights(0, (FEATURES, HIDDEN), (HIDDEN,), (HIDDEN, 1))
    speech = helper.make_graph([
        helper.make_node("MatMul", ["x", "w1"], ["s_h"]),
        helper.make_node("Add", ["s_h", "b1"], ["s_hb"]),
        helper.make_node("Relu", ["s_hb"], ["s_r"]),
        helper.make_node("MatMul", ["s_r", "w2"], ["s_o"]),
        helper.make_node("Sigmoid", ["s_o"], ["speech_score"]),
    ], "speech", [], [helper.make_tensor_value_info("speech_score", F, [1, 1])])
    silence = helper.make_graph([
        helper.make_node("ReduceMean", ["x"], ["q_mean"], keepdims=1),
        helper.make_node("Mul", ["q_mean", "quiet_scale"], ["silence_score"]),
    ], "silence", [], [helper.make_tensor_value_info("silence_score", F, [1, 1])],
        [numpy_helper.from_array(np.array(0.1, np.float32), "quiet_scale")])
    graph = helper.make_graph([
        helper.make_node("Mul", ["x", "x"], ["power"]),
        helper.make_node("ReduceMean", ["power"], ["energy"], keepdims=0),
        helper.make_node("Greater", ["energy", "threshold"], ["is_speech"]),
        helper.make_node("If", ["is_speech"], ["score"], then_branch=speech, else_branch=silence),
        helper.make_node("Add", ["score", "bias"], ["y"]),
    ], "vad", [helper.make_tensor_value_info("x", F, [1, FEATURES])], [helper.make_tensor_value_info("y", F, [1, 1])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"))]
        + [numpy_helper.from_array(np.array(0.5, np.float32), "threshold"),
           numpy_helper.from_array(np.array([[0.25]], np.float32), "bias")])
    return _model(graph)


def loop_rnn(trips: int = FRAMES) -> onnx.ModelProto:
    """frames [FRAMES, 1, FEATURES], h0 [1, HIDDEN] -> (h_final [1, HIDDEN], states [trips, 1, HIDDEN])."""
    wx, wh, gate = _weights(1, (FEATURES, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN,))
    positive = helper.make_graph([helper.make_node("Mul", ["h_new", "gate"], ["gated"])], "positive", [],
                                 [helper.make_tensor_value_info("gated", F, [1, HIDDEN])])
    negative = helper.make_graph([helper.make_node("Neg", ["h_new"], ["flipped"])], "negative", [],
                                 [helper.make_tensor_value_info("flipped", F, [1, HIDDEN])])
    body = helper.make_graph([
        helper.make_node("Gather", ["frames", "i"], ["frame"], axis=0),
        helper.make_node("MatMul", ["frame", "wx"], ["xw"]),
        helper.make_node("MatMul", ["h_in", "wh"], ["hw"]),
        helper.make_node("Add", ["xw", "hw"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h_new"]),
        helper.make_node("ReduceSum", ["h_new"], ["total"], keepdims=0),
        helper.make_node("Greater", ["total", "zero"], ["up"]),
        helper.make_node("If", ["up"], ["h_out"], then_branch=positive, else_branch=negative),
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Identity", ["h_out"], ["state"]),
    ], "step", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                helper.make_tensor_value_info("h_in", F, [1, HIDDEN])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_out", F, [1, HIDDEN]),
         helper.make_tensor_value_info("state", F, [1, HIDDEN])],
        [numpy_helper.from_array(np.array(0.0, np.float32), "zero")])
    graph = helper.make_graph([
        helper.make_node("Loop", ["trips", "keep_going", "h0"], ["h_final", "states"], body=body),
    ], "loop_rnn", [helper.make_tensor_value_info("frames", F, [FRAMES, 1, FEATURES]),
                    helper.make_tensor_value_info("h0", F, [1, HIDDEN])],
        [helper.make_tensor_value_info("h_final", F, [1, HIDDEN]),
         helper.make_tensor_value_info("states", F, [trips, 1, HIDDEN])],
        [numpy_helper.from_array(a, n) for a, n in ((wx, "wx"), (wh, "wh"), (gate, "gate"))]
        + [numpy_helper.from_array(np.array(trips, np.int64), "trips"),
           numpy_helper.from_array(np.array(True), "keep_going")])
    return _model(graph)


def scan_rnn(axis: int = 0, reverse: bool = False, out_axis: int = 0) -> onnx.ModelProto:
    """h0 [1, HIDDEN], xs (sequence along `axis`) -> (h_last [1, HIDDEN], hs stacked along `out_axis`)."""
    wx, wh, b = _weights(2, (FEATURES, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN,))
    body = helper.make_graph([
        helper.make_node("MatMul", ["x_t", "wx"], ["xw"]),
        helper.make_node("MatMul", ["h_prev", "wh"], ["hw"]),
        helper.make_node("Add", ["xw", "hw"], ["s"]),
        helper.make_node("Add", ["s", "b"], ["sb"]),
        helper.make_node("Tanh", ["sb"], ["h_t"]),
        helper.make_node("Identity", ["h_t"], ["y_t"]),
    ], "cell", [helper.make_tensor_value_info("h_prev", F, [1, HIDDEN]),
                helper.make_tensor_value_info("x_t", F, [1, FEATURES])],
        [helper.make_tensor_value_info("h_t", F, [1, HIDDEN]), helper.make_tensor_value_info("y_t", F, [1, HIDDEN])])
    xs_shape = [FRAMES, 1, FEATURES] if axis == 0 else [1, FRAMES, FEATURES]
    ys_shape = [1, HIDDEN]
    ys_shape.insert(out_axis, FRAMES)
    graph = helper.make_graph([
        helper.make_node("Scan", ["h0", "xs"], ["h_last", "hs"], body=body, num_scan_inputs=1,
                         scan_input_axes=[axis], scan_input_directions=[int(reverse)], scan_output_axes=[out_axis]),
    ], "scan_rnn",
        [helper.make_tensor_value_info("h0", F, [1, HIDDEN]), helper.make_tensor_value_info("xs", F, xs_shape)],
        [helper.make_tensor_value_info("h_last", F, [1, HIDDEN]), helper.make_tensor_value_info("hs", F, ys_shape)],
        [numpy_helper.from_array(a, n) for a, n in ((wx, "wx"), (wh, "wh"), (b, "b"))])
    return _model(graph)


def feeds_for(model: onnx.ModelProto, seed: int = 0, scale: float = 1.0) -> dict[str, np.ndarray]:
    """Seeded normal inputs of every graph input (float32, its declared static shape), times `scale`."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = (rng.standard_normal(shape) * scale).astype(np.float32)
    return feeds
