"""A small LLM decoder block as exporters write it at opset 23: RMSNormalization, Q/K/V projections,
RotaryEmbedding on Q and K, Attention with GQA (4 query heads over 2 key/value heads) and a causal mask,
an output projection and residual, then RMSNormalization and a SwiGLU MLP (Sigmoid/Mul at opset 23; the
SwiGLU op at opset 28). Compiled at O3 it matches onnx.reference, and ONNX Runtime (which runs opset 23's
ops but not SwiGLU), and the simulator prices it."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import ge_core

RNG = np.random.default_rng(0)
SEQ, HIDDEN, HEADS, KV_HEADS, HEAD, FFN, POSITIONS = 8, 64, 4, 2, 16, 128, 32


def _weight(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)


def _heads(src: str, heads: int, out: str) -> list[onnx.NodeProto]:
    """(1, seq, heads * head) -> (1, heads, seq, head)."""
    return [helper.make_node("Reshape", [src, f"shape_{heads}"], [f"{out}_bshd"]),
            helper.make_node("Transpose", [f"{out}_bshd"], [out], perm=[0, 2, 1, 3])]


def _mlp(swiglu_op: bool) -> list[onnx.NodeProto]:
    if swiglu_op:
        return [helper.make_node("SwiGLU", ["gate", "up"], ["act"])]
    return [helper.make_node("Sigmoid", ["gate"], ["gate_sigmoid"]), helper.make_node("Mul", ["gate", "gate_sigmoid"],
                                                                                      ["silu"]),
            helper.make_node("Mul", ["silu", "up"], ["act"])]


def decoder_block(opset: int = 23, swiglu_op: bool = False) -> onnx.ModelProto:
    angles = np.arange(POSITIONS)[:, None] / 10000 ** (np.arange(HEAD // 2)[None] * 2 / HEAD)
    inits = {"attn_norm": 1 + 0.1 * _weight(HIDDEN), "mlp_norm": 1 + 0.1 * _weight(HIDDEN),
             "wq": _weight(HIDDEN, HEADS * HEAD), "wk": _weight(HIDDEN, KV_HEADS * HEAD),
             "wv": _weight(HIDDEN, KV_HEADS * HEAD), "wo": _weight(HEADS * HEAD, HIDDEN),
             "wg": _weight(HIDDEN, FFN), "wu": _weight(HIDDEN, FFN), "wd": _weight(FFN, HIDDEN),
             "cos": np.cos(angles).astype(np.float32), "sin": np.sin(angles).astype(np.float32),
             f"shape_{HEADS}": np.array([1, SEQ, HEADS, HEAD], np.int64),
             f"shape_{KV_HEADS}": np.array([1, SEQ, KV_HEADS, HEAD], np.int64),
             "shape_hidden": np.array([1, SEQ, HEADS * HEAD], np.int64)}
    mm = helper.make_node
    nodes = [mm("RMSNormalization", ["x", "attn_norm"], ["h"], epsilon=1e-6),
             mm("MatMul", ["h", "wq"], ["q2"]), mm("MatMul", ["h", "wk"], ["k2"]), mm("MatMul", ["h", "wv"], ["v2"]),
             *_heads("q2", HEADS, "q"), *_heads("k2", KV_HEADS, "k"), *_heads("v2", KV_HEADS, "v"),
             mm("RotaryEmbedding", ["q", "cos", "sin", "positions"], ["q_rot"]),
             mm("RotaryEmbedding", ["k", "cos", "sin", "positions"], ["k_rot"]),
             mm("Attention", ["q_rot", "k_rot", "v"], ["attn"], is_causal=1),
             mm("Transpose", ["attn"], ["attn_bshd"], perm=[0, 2, 1, 3]),
             mm("Reshape", ["attn_bshd", "shape_hidden"], ["attn_flat"]),
             mm("MatMul", ["attn_flat", "wo"], ["attn_out"]), mm("Add", ["x", "attn_out"], ["r1"]),
             mm("RMSNormalization", ["r1", "mlp_norm"], ["h2"], epsilon=1e-6),
             mm("MatMul", ["h2", "wg"], ["gate"]), mm("MatMul", ["h2", "wu"], ["up"]), *_mlp(swiglu_op),
             mm("MatMul", ["act", "wd"], ["down"]), mm("Add", ["r1", "down"], ["y"])]
    graph = helper.make_graph(
        nodes, "decoder_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, SEQ, HIDDEN]),
         helper.make_tensor_value_info("positions", TensorProto.INT64, [1, SEQ])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, SEQ, HIDDEN])],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


FEEDS = {"x": RNG.standard_normal((1, SEQ, HIDDEN)).astype(np.float32),
         "positions": (np.arange(SEQ)[None] + 3).astype(np.int64)}


@pytest.fixture(scope="module", params=[(23, False), (28, True)], ids=["opset23_sigmoid_mul", "opset28_swiglu"])
def block(request: pytest.FixtureRequest) -> tuple[onnx.ModelProto, ge_core.CompiledModel]:
    opset, swiglu_op = request.param
    model = decoder_block(opset, swiglu_op)
    return model, ge_core.compile(model.SerializeToString(), opt_level=3, verify=True)


def test_compiled_at_o3_matches_the_reference(block: tuple[onnx.ModelProto, ge_core.CompiledModel]) -> None:
    model, compiled = block
    (want,) = ReferenceEvaluator(model).run(None, FEEDS)
    got = compiled.run(FEEDS)["y"]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    ops = Counter(n.op_type for n in compiled.graph.nodes)
    assert ops["Attention"] == 1 and ops["RotaryEmbedding"] == 2 and ops["RMSNormalization"] == 2, ops


def test_matches_onnxruntime_at_opset_23() -> None:
    model = decoder_block(23, False)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, FEEDS)
    got = ge_core.compile(model.SerializeToString(), opt_level=3).run(FEEDS)["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_simulated(block: tuple[onnx.ModelProto, ge_core.CompiledModel]) -> None:
    _, compiled = block
    result = ge_core.simulate(compiled, "ascend910b", FEEDS, precision="force_fp32")  # exact: the CPU's numbers
    units = {row.op_type: row.unit for row in result.ops}
    assert units["Attention"] == "cube" and result.total_us > 0
    np.testing.assert_allclose(result.outputs["y"], compiled.run(FEEDS)["y"], rtol=1e-6)
