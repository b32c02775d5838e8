"""RNN, GRU and LSTM: every ONNX feature against ONNX Runtime (directions, sequence_lens, initial states,
activations with alpha/beta, clip, peepholes, input_forget, linear_before_reset) and onnx.reference
(layout=1, which ORT's CPU kernels refuse); shape errors; costs; a speech-style model (bidirectional LSTM
with sequence_lens, then a Gemm) and a GRU model compiled at O3 against ONNX Runtime; conformance."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge_core
from ge_core.ops import REGISTRY, Category
from ge_core.ops.common import make_desc
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, infer, infer_error, make_node

RNG = np.random.default_rng(7)
T, B, I, H = 5, 3, 4, 6
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _rand(*shape: int, scale: float = 0.5) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _inputs(op: str, d: int = 1, *, lens: np.ndarray | None = None, bias: bool = True, h0: bool = False,
            c0: bool = False, peep: bool = False, layout: int = 0) -> list[np.ndarray | None]:
    g = GATES[op]
    x = _rand(B, T, I) if layout else _rand(T, B, I)
    state = (B, d, H) if layout else (d, B, H)
    ins: list[np.ndarray | None] = [x, _rand(d, g * H, I), _rand(d, g * H, H), _rand(d, 2 * g * H) if bias else None,
                                    lens, _rand(*state) if h0 else None]
    if op == "LSTM":
        ins += [_rand(*state) if c0 else None, _rand(d, 3 * H) if peep else None]
    while ins and ins[-1] is None:
        ins.pop()
    return ins


def _n_outputs(op: str) -> int:
    return 3 if op == "LSTM" else 2


LENS = np.array([5, 2, 3], dtype=np.int32)

ORT_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (op, attrs, kw) for op in ("RNN", "GRU", "LSTM") for attrs, kw in [
        ({}, {}),
        ({"direction": "reverse"}, {"h0": True}),
        ({"direction": "bidirectional"}, {"d": 2, "h0": True, "c0": True}),
        ({"direction": "bidirectional"}, {"d": 2, "lens": LENS}),
        ({"direction": "reverse"}, {"lens": LENS, "bias": False}),
        ({"clip": 0.3}, {"h0": True}),
    ]
]


def _id(case: tuple[str, dict[str, Any], dict[str, Any]]) -> str:
    op, attrs, kw = case
    return op + "-" + ",".join(f"{k}={v}" for k, v in {**attrs, **kw}.items() if not isinstance(v, np.ndarray)) + \
        ("-lens" if "lens" in kw else "")


@pytest.mark.parametrize("case", ORT_CASES, ids=_id)
def test_matches_onnxruntime(case: tuple[str, dict[str, Any], dict[str, Any]]) -> None:
    op, attrs, kw = case
    check(op, _inputs(op, **kw), {"hidden_size": H, **attrs}, opset=14, oracle="onnxruntime", rtol=1e-5,
          atol=1e-6, n_outputs=_n_outputs(op))


def test_lstm_peepholes_and_input_forget_match_onnxruntime() -> None:
    ins = _inputs("LSTM", 2, lens=LENS, h0=True, c0=True, peep=True)
    check("LSTM", ins, {"hidden_size": H, "direction": "bidirectional"}, 14, oracle="onnxruntime", rtol=1e-5,
          atol=1e-6, n_outputs=3)
    check("LSTM", ins[:5], {"hidden_size": H, "direction": "bidirectional", "input_forget": 1}, 14,
          oracle="onnxruntime", rtol=1e-5, atol=1e-6, n_outputs=3)


def test_gru_linear_before_reset_matches_onnxruntime() -> None:
    check("GRU", _inputs("GRU", 2, lens=LENS, h0=True), {"hidden_size": H, "direction": "bidirectional",
                                                        "linear_before_reset": 1},
          14, oracle="onnxruntime", rtol=1e-5, atol=1e-6, n_outputs=2)


@pytest.mark.parametrize(("op", "acts", "alpha", "beta"), [
    ("RNN", ["Relu"], None, None),
    ("RNN", ["LeakyRelu", "Affine"], [0.1, 0.5], [0.2]),
    ("GRU", ["HardSigmoid", "Softsign"], [0.3], [0.4]),
    ("LSTM", ["Sigmoid", "Elu", "ScaledTanh"], [0.7, 1.2], [0.9]),
    ("LSTM", ["HardSigmoid", "Tanh", "Softplus", "Sigmoid", "Relu", "Tanh"], None, None),
])
def test_activations_match_onnxruntime(op: str, acts: list[str], alpha: list[float] | None,
                                       beta: list[float] | None) -> None:
    n = len(GATES) and {"RNN": 1, "GRU": 2, "LSTM": 3}[op]
    d = len(acts) // n
    attrs: dict[str, Any] = {"hidden_size": H, "activations": acts,
                             "direction": "bidirectional" if d == 2 else "forward"}
    if alpha:
        attrs["activation_alpha"] = alpha
    if beta:
        attrs["activation_beta"] = beta
    check(op, _inputs(op, d, h0=True), attrs, 14, oracle="onnxruntime", rtol=1e-5, atol=1e-6,
          n_outputs=_n_outputs(op))


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_batch_major_layout_matches_reference(op: str) -> None:
    check(op, _inputs(op, 2, h0=True, c0=True, layout=1), {"hidden_size": H, "direction": "bidirectional",
                                                          "layout": 1},
          22, oracle="reference", rtol=1e-5, atol=1e-6, n_outputs=_n_outputs(op))


def test_float16_runs_in_float32_and_matches_onnxruntime() -> None:
    ins = [None if a is None else a.astype(np.float16) for a in _inputs("LSTM", 1, h0=True)]
    check("LSTM", ins, {"hidden_size": H}, 14, oracle="onnxruntime", rtol=2e-3, atol=2e-3, n_outputs=3)


# ---- inference ------------------------------------------------------------------------------------
F32 = "float32"


def test_infer_shapes_both_layouts_and_unknown_dims() -> None:
    y, yh, yc = infer("LSTM", [((T, -1, I), F32), ((2, 4 * H, I), F32), ((2, 4 * H, H), F32)],
                      {"direction": "bidirectional", "hidden_size": H}, n_outputs=3)
    assert y.shape == (T, 2, -1, H) and yh.shape == yc.shape == (2, -1, H)
    y, yh = infer("GRU", [((B, T, I), F32), ((1, 3 * H, I), F32), ((1, 3 * H, H), F32)], {"layout": 1},
                  n_outputs=2)
    assert y.shape == (B, T, 1, H) and yh.shape == (B, 1, H)


@pytest.mark.parametrize(("op", "descs", "attrs", "match"), [
    ("LSTM", [((T, B, I), F32), ((1, 3 * H, I), F32), ((1, 4 * H, H), F32)], {}, r"W must have shape \[1, 24, 4\]"),
    ("GRU", [((T, B, I), F32), ((1, 3 * H, I), F32), ((1, 3 * H, H), F32)], {"direction": "bidirectional"},
     r"W must have shape \[2, 18, 4\]"),
    ("RNN", [((T, B, I), F32), ((1, H, I), F32), ((1, H, H), F32), ((1, 3 * H), F32)], {}, "B must have shape"),
    ("RNN", [((T, B, I), F32), ((1, H, I), F32), ((1, H, H), F32), None, ((B + 1,), "int32")], {},
     "sequence_lens must have shape"),
    ("RNN", [((T, B, I), F32), ((1, H, I), F32), ((1, H, H), F32), None, ((B,), "int64")], {}, "must be int32"),
    ("RNN", [((T, B, I), F32), ((1, H, I), F32), ((1, H, H), F32)], {"direction": "both"}, "direction 'both'"),
    ("RNN", [((T, B, I), F32), ((1, H, I), F32), ((1, H, H), F32)], {"activations": ["Swish"]}, "activation 'swish'"),
    ("GRU", [((T, B, I), F32), ((1, 3 * H, I), F32), ((1, 3 * H, H), F32)], {"activations": ["Tanh"]},
     "activations must list 2 per direction"),
    ("LSTM", [((T, B, I), "int32"), ((1, 4 * H, I), "int32"), ((1, 4 * H, H), "int32")], {}, "X must be one of"),
    ("RNN", [((T, B), F32), ((1, H, I), F32), ((1, H, H), F32)], {}, "must be 3-D"),
])
def test_shape_errors_name_the_node_and_the_expectation(op: str, descs: list[Any], attrs: dict[str, Any],
                                                         match: str) -> None:
    infer_error(op, descs, attrs, match=match)


def test_category_facts_and_cost() -> None:
    for op in ("RNN", "GRU", "LSTM"):
        opdef = REGISTRY.get(op)
        assert opdef is not None and opdef.category == Category.OPAQUE and opdef.deterministic
    node = make_node("LSTM", [True] * 3, {"direction": "bidirectional", "hidden_size": H}, n_outputs=3)
    descs = [make_desc((T, B, I), F32), make_desc((2, 4 * H, I), F32), make_desc((2, 4 * H, H), F32)]
    outs = REGISTRY.get("LSTM").infer(node, [ge_core.ops.Operand(d) for d in descs])  # type: ignore[union-attr]
    cost = REGISTRY.get("LSTM").cost(node, descs, outs)  # type: ignore[union-attr]
    gemms = T * 2 * (2 * B * I * 4 * H + 2 * B * H * 4 * H)
    assert gemms < cost.flops < gemms * 1.2
    assert cost.bytes_read == sum(d.nbytes or 0 for d in descs)


# ---- a speech-style model compiled at O3 ------------------------------------------------------------
def _speech_model(cell: str, features: int = 8, hidden: int = 16, classes: int = 5) -> onnx.ModelProto:
    """X [T, B, F] -> bidirectional cell with sequence_lens -> Transpose/Reshape to [T*B, 2H] -> Gemm."""
    g = GATES[cell]
    inits = [numpy_helper.from_array(_rand(2, g * hidden, features), "W"),
             numpy_helper.from_array(_rand(2, g * hidden, hidden), "R"),
             numpy_helper.from_array(_rand(2, 2 * g * hidden), "B"),
             numpy_helper.from_array(_rand(2 * hidden, classes), "Wo"),
             numpy_helper.from_array(_rand(classes), "Bo"),
             numpy_helper.from_array(np.array([-1, 2 * hidden], dtype=np.int64), "flat")]
    outputs = ["Y", "Y_h"] + (["Y_c"] if cell == "LSTM" else [])
    nodes = [helper.make_node(cell, ["X", "W", "R", "B", "lens"], outputs, hidden_size=hidden,
                              direction="bidirectional"),
             helper.make_node("Transpose", ["Y"], ["Yt"], perm=[0, 2, 1, 3]),  # [T, B, 2, H]
             helper.make_node("Reshape", ["Yt", "flat"], ["feat"]),
             helper.make_node("Gemm", ["feat", "Wo", "Bo"], ["logits"]),
             helper.make_node("Relu", ["logits"], ["out"])]
    graph = helper.make_graph(nodes, f"speech_{cell.lower()}", [
        helper.make_tensor_value_info("X", TensorProto.FLOAT, [7, 2, features]),
        helper.make_tensor_value_info("lens", TensorProto.INT32, [2])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_speech_model_compiled_at_o3_matches_onnxruntime(cell: str) -> None:
    model = _speech_model(cell)
    feeds = {"X": _rand(7, 2, 8, scale=1.0), "lens": np.array([7, 4], dtype=np.int32)}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = dict(zip(["out", "Y_h"], session.run(["out", "Y_h"], feeds), strict=True))
    compiled = ge_core.compile(ge_core.load_onnx(model.SerializeToString()), opt_level=3)
    got = compiled.run(feeds)
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-5, err_msg=name)
    assert any(n.op_type == cell for n in compiled.graph.nodes)


# ---- conformance -----------------------------------------------------------------------------------
@pytest.mark.parametrize("case", cases_for({"RNN", "GRU", "LSTM"}), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
